"""Issue 18, items 3-5 (3): callables other than functions. ``functools.partial`` made
inside the function and called there is the call of the function it binds (its
arguments computed where the partial is made); a partial fixing numbers, an object
whose class defines ``__call__`` and a method bound to an object, passed as a function
argument, are resolved when the derivative is made, like a function passed in (part of
the cache key), and passed on to the functions it calls. Checked against finite
differences (and autograd where it can run the same source), both modes, to second
order; a partial made inside and passed to a function of the user's is written out with
that function (see test_nested_functions.py). A method of an object compared by value
and a partial fixing an array are refused at the user's line."""

from __future__ import annotations

import functools

import autograd
import autograd.numpy as anp
import functions_everyday as fe
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

Y0 = np.array([0.5, 1.0, -0.3])
MODES = ("reverse", "forward")
HERE = r"functions_everyday.py:\d+:\n"  # (the user's file and line start each message)


def test_a_partial_made_inside_and_called():
    twin = autograd_twin(fe.partial_made_inside)
    for wrt in (0, 1):
        expected = autograd.grad(twin, wrt)(0.7, Y0)
        for mode in MODES:
            got = srcgrad.grad(fe.partial_made_inside, wrt=wrt, mode=mode)(0.7, Y0)
            np.testing.assert_allclose(got, expected, rtol=1e-10)
    hessian = autograd.hessian(twin, 1)(0.7, Y0)
    np.testing.assert_allclose(srcgrad.hessian(fe.partial_made_inside, wrt=1)(0.7, Y0), hessian)
    check_grads(fe.partial_made_inside, (0.7, Y0), wrt=(0, 1), order=2)


def test_a_partial_made_inside_and_passed_on():
    twin = autograd_twin(fe.partial_made_inside_passed_on)
    for wrt in (0, 1):
        expected = autograd.grad(twin, wrt)(0.7, Y0)
        for mode in MODES:
            got = srcgrad.grad(fe.partial_made_inside_passed_on, wrt=wrt, mode=mode)(0.7, Y0)
            np.testing.assert_allclose(got, expected, rtol=1e-10)
    hessian = autograd.hessian(twin, 0)(0.7, Y0)
    got = srcgrad.hessian(fe.partial_made_inside_passed_on)(0.7, Y0)
    np.testing.assert_allclose(got, hessian, rtol=1e-9)


def test_a_partial_of_a_function_passed_in():
    f = fe.partial_of_a_passed_function
    check_grads(f, (0.7, fe.scaled_sine, Y0), wrt=(0, 2), order=2)
    for mode in MODES:
        got = srcgrad.grad(f, wrt=0, mode=mode)(0.7, fe.scaled_sine, Y0)
        np.testing.assert_allclose(got, np.sum(np.cos(0.7 * Y0) * Y0), rtol=1e-12)


PASSED = [
    (fe.integrate, functools.partial(fe.decay, k=0.7, rate=2.0)),
    (fe.integrate, functools.partial(functools.partial(fe.decay, rate=3.0), k=0.5)),
    (fe.apply_weighted, functools.partial(np.power, 2.0)),
    (fe.apply_weighted, fe.Scaled(np.array([2.0, 1.0, 3.0]))),
    (fe.integrate, fe.Scaled(1.5)),
    (fe.apply_weighted, fe.FrozenScaled(0.5)),  # (a dataclass: a function, not a pytree)
    (fe.apply_weighted, fe.Model(np.array([2.0, 1.0, 3.0])).predict),  # (a bound method)
    (fe.integrate, fe.Model(np.array([0.5, -1.0, 2.0])).predict),
]


@pytest.mark.parametrize("f, g", PASSED, ids=lambda v: getattr(v, "__name__", type(v).__name__))
def test_a_callable_passed_in(f, g):
    check_grads(f, (g, Y0), wrt=1, order=2)
    results = [srcgrad.grad(f, wrt=1, mode=mode)(g, Y0) for mode in MODES]
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_a_partial_passed_in_against_autograd():
    """autograd calls the same partial (of autograd's power): the same numbers."""
    twin = autograd_twin(fe.apply_weighted)
    expected = autograd.grad(twin, 1)(functools.partial(anp.power, 2.0), Y0)
    for mode in MODES:
        got = srcgrad.grad(fe.apply_weighted, wrt=1, mode=mode)(
            functools.partial(np.power, 2.0), Y0
        )
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    hessian = autograd.hessian(twin, 1)(functools.partial(anp.power, 2.0), Y0)
    got = srcgrad.hessian(fe.apply_weighted, wrt=1)(functools.partial(np.power, 2.0), Y0)
    np.testing.assert_allclose(got, hessian, rtol=1e-10)


def test_each_callable_gets_its_own_derivative():
    """The fixed numbers and the object are part of the cache key: one derivative
    object, called with one and then another, differentiates each."""
    derivative = srcgrad.grad(fe.apply_weighted, wrt=1)
    for g, expected in [
        (functools.partial(fe.scaled_sine, 2.0), np.sin(2 * Y0) + 2 * Y0 * np.cos(2 * Y0)),
        (functools.partial(fe.scaled_sine, 3.0), np.sin(3 * Y0) + 3 * Y0 * np.cos(3 * Y0)),
        (fe.Scaled(2.0), 2 * (np.sin(Y0) + Y0 * np.cos(Y0))),
        (fe.Scaled(0.5), 0.5 * (np.sin(Y0) + Y0 * np.cos(Y0))),
    ]:
        np.testing.assert_allclose(derivative(g, Y0), expected, rtol=1e-12)


def test_a_bound_method_reads_its_object_when_called():
    """The object is the method's first argument: a change of its attributes is seen by
    the next call, which reuses the code made for it."""
    model = fe.Model(np.array([2.0, 1.0, 3.0]))
    derivative = srcgrad.grad(fe.apply_weighted, wrt=1)
    for w in (np.array([2.0, 1.0, 3.0]), np.array([0.5, 0.5, -1.0])):
        model.w = w
        expected = np.sin(w * Y0) + Y0 * w * np.cos(w * Y0)
        for mode in MODES:
            got = srcgrad.grad(fe.apply_weighted, wrt=1, mode=mode)(model.predict, Y0)
            np.testing.assert_allclose(got, expected, rtol=1e-12)
        np.testing.assert_allclose(derivative(model.predict, Y0), expected, rtol=1e-12)


def test_the_call_method_in_the_generated_code():
    derivative = srcgrad.grad(fe.apply_weighted, wrt=1)
    derivative(fe.Scaled(2.0), Y0)
    assert "def Scaled_call_fwd(self, x):" in derivative.source, derivative.source
    assert "Scaled_call_bwd(f, x, " in derivative.source, derivative.source


@pytest.mark.parametrize(
    "f, args, error, match",
    [
        (
            fe.apply_weighted,
            (fe.Record(np.ones(3)).predict, Y0),
            srcgrad.NoDerivativeError,
            HERE + r".*f\(x\).*\n.*or a method of one.*`Model.predict\(model, x\)`",
        ),
        (
            fe.apply_weighted,
            (functools.partial(fe.scaled_sine, np.ones(3)), Y0),
            srcgrad.NoDerivativeError,
            HERE + r".*f\(x\).*\n.*a partial fixing an array",
        ),
        (
            fe.apply_weighted,
            (fe.ScaledRecord(2.0), Y0),
            srcgrad.NoDerivativeError,
            HERE + r".*f\(x\).*\n.*compared by value such as a dataclass with eq=True",
        ),
        (
            fe.partial_of_a_variable,
            (0.7, Y0),
            srcgrad.UnsupportedSyntaxError,
            HERE + r".*partial\(g, y0\)\n.*`g` is a variable here",
        ),
    ],
    ids=[
        "method-of-an-object-compared-by-value",
        "partial-fixing-an-array",
        "unhashable-callable",
        "partial-of-a-variable",
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused(f, args, error, match, mode):
    wrt = len(args) - 1 if f is fe.apply_weighted else 0
    with pytest.raises(error, match=match):
        srcgrad.grad(f, wrt=wrt, mode=mode)(*args)
