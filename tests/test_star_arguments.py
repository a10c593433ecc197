"""Issue 18, items 3-5 (4): ``*args`` in the functions the differentiated function calls
(``def helper(*xs)``, called ``helper(a, b, c)``: the extra arguments are packed into a
tuple where the call is, and the helper's derivative takes that tuple), calls that
unpack displays (``f(*(a, b))``, ``f(**{"w": w})``), and a tuple spread into a function
with named parameters (``f(*params, x)``: its elements by index, its length checked).
Checked against autograd running the same source and finite differences, both modes,
second order."""

from __future__ import annotations

import autograd
import functions_everyday as fe
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

X = np.array([0.3, -0.5, 1.2])
Y = np.array([1.0, 0.4, -0.2])
MODES = ("reverse", "forward")
HERE = r"functions_everyday.py:\d+:\n"  # (the user's file and line start each message)


@pytest.mark.parametrize(
    "f", [fe.star_args_called, fe.star_args_passed_on], ids=lambda f: f.__name__
)
def test_star_args_as_autograd_has_them(f):
    twin = autograd_twin(f)
    expected = autograd.grad(twin, (0, 1))(X, Y)
    for mode in MODES:
        got = srcgrad.grad(f, wrt=(0, 1), mode=mode)(X, Y)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10)
    hessian = autograd.hessian(twin, 1)(X, Y)
    np.testing.assert_allclose(srcgrad.hessian(f, wrt=1)(X, Y), hessian, rtol=1e-9, atol=1e-12)
    check_grads(f, (X, Y), wrt=(0, 1), order=2)


def test_a_tuple_spread_into_a_call():
    """``f(*t)`` of a function with named parameters: ``t``'s elements by index, after a
    check of its length (Python's TypeError where it is wrong, as the call raises)."""
    f = fe.tuple_spread_into_a_call
    twin = autograd_twin(f)
    x = np.array([[1.0, 2.0], [0.3, -0.1]])
    w = np.array([0.5, -0.2])
    expected = autograd.grad(twin, (0, 1))(w, 0.3, x)
    for mode in MODES:
        got = srcgrad.grad(f, wrt=(0, 1), mode=mode)(w, 0.3, x)
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-10)
        assert got[1] == pytest.approx(expected[1], rel=1e-10)
        with pytest.raises(TypeError, match=r"_affine\(\) takes 3 arguments from \*params"):
            srcgrad.grad(fe.tuple_of_the_wrong_length, mode=mode)(w, 0.3, x)
    np.testing.assert_allclose(
        srcgrad.hessian(f)(w, 0.3, x), autograd.hessian(twin)(w, 0.3, x), rtol=1e-9
    )
    check_grads(f, (w, 0.3, x), wrt=(0, 1), order=2)


def test_star_args_through_a_loop_first_order():
    """(Second order through a helper's loop over a tuple fails as it does without
    ``*args``: the adjoint pops its record in place.)"""
    twin = autograd_twin(fe.star_args_in_a_loop)
    expected = autograd.grad(twin, (0, 1))(X, Y)
    for mode in MODES:
        got = srcgrad.grad(fe.star_args_in_a_loop, wrt=(0, 1), mode=mode)(X, Y)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10)
    check_grads(fe.star_args_in_a_loop, (X, Y), wrt=(0, 1))


def test_the_tuple_in_the_generated_code():
    derivative = srcgrad.grad(fe.star_args_called, wrt=(0, 1))
    derivative(X, Y)
    source = derivative.source
    assert "def products_fwd(xs):" in source and "def weighted_sum_bwd(w, xs, scale," in source
    assert "= products_fwd(t" in source, source  # (the tuple packed at the call)


@pytest.mark.parametrize(
    "f, error, match",
    [
        (
            fe.star_args_unknown_position,
            srcgrad.UnsupportedSyntaxError,
            HERE + r".*\*pair, x\).*\n.*pass them one by one",
        ),
        (
            fe.star_args_differentiated,
            srcgrad.UnsupportedSyntaxError,
            HERE + r".*def star_args_differentiated.*\n.*not \*args in the function differentiated",
        ),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused(f, error, match, mode):
    with pytest.raises(error, match=match):
        srcgrad.grad(f, mode=mode)(X, Y)
