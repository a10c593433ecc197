"""Issue 18, item 1: functions passed as arguments. A call through a parameter is a call
of the function the argument is (a Python function, a lambda, a builtin or a numpy
ufunc): srcgrad makes the derivative for that very function, keyed by it, both where
the differentiated function is given one (``grad(apply, wrt=1)(np.sin, x)``) and where
it passes one on (``rk4(decay, y, theta, dt)``). Checked against autograd running the
same source, in both modes and to second order."""

from __future__ import annotations

import functools

import autograd
import functions_passed as fp
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad

Y0 = np.array([1.0, 0.5, -0.3])
X = np.array([0.3, 1.2, -0.7])
MODES = ("reverse", "forward")


@pytest.mark.parametrize("f", [fp.fit_decay, fp.fit_both], ids=lambda f: f.__name__)
def test_an_ode_fit_through_rk4(f):
    twin = autograd_twin(f)
    for wrt in (0, 1):
        expected = autograd.grad(twin, wrt)(0.7, Y0)
        for mode in MODES:
            got = srcgrad.grad(f, wrt=wrt, mode=mode)(0.7, Y0)
            np.testing.assert_allclose(got, expected, rtol=1e-10)
    np.testing.assert_allclose(
        srcgrad.hessian(f)(0.7, Y0), autograd.hessian(twin)(0.7, Y0), rtol=1e-9
    )


PASSED = [np.sin, np.tanh, np.exp, abs, fp.square, fp.triple]


@pytest.mark.parametrize("g", PASSED, ids=lambda g: getattr(g, "__name__", "lambda"))
@pytest.mark.parametrize("f", [fp.apply, fp.twice], ids=lambda f: f.__name__)
def test_the_function_passed_to_the_function_differentiated(f, g):
    twin = autograd_twin(f)
    ag = {np.sin: autograd.numpy.sin, np.tanh: autograd.numpy.tanh, np.exp: autograd.numpy.exp}
    expected = autograd.grad(twin, 1)(ag.get(g, g), X)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(f, wrt=1, mode=mode)(g, X), expected, rtol=1e-10)
    hessian = autograd.hessian(twin, 1)(ag.get(g, g), X)
    np.testing.assert_allclose(srcgrad.hessian(f, wrt=1)(g, X), hessian, rtol=1e-9, atol=1e-12)


def test_each_function_gets_its_own_derivative():
    """The function is part of the cache key: one derivative object, called with one
    function and then another, differentiates each."""
    derivative = srcgrad.grad(fp.apply, wrt=1)
    for g, expected in [
        (np.sin, np.sin(X) + X * np.cos(X)),
        (fp.square, 3.0 * X**2),
        (np.sin, np.sin(X) + X * np.cos(X)),
        (fp.triple, 6.0 * X),
    ]:
        np.testing.assert_allclose(derivative(g, X), expected, rtol=1e-12)


def test_the_generated_code_calls_the_functions_derivative():
    derivative = srcgrad.grad(fp.fit_decay)
    derivative(0.7, Y0)
    source = derivative.source
    assert "rk4_fwd(decay, y, theta, 0.1)" in source, source
    assert "decay_fwd(y, theta)" in source and "decay_bwd(" in source, source


def test_a_callable_that_is_not_a_function_where_nothing_is_differentiated():
    scale = functools.partial(np.multiply, 1.5)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(fp.constant_from, wrt=1, mode=mode)(scale, X), 3.0)


class Squarer:
    def __call__(self, v):
        return v * v

    def __eq__(self, other):  # (compared by value: its bound methods cannot key code)
        return isinstance(other, Squarer)

    def __hash__(self):
        return 0


@pytest.mark.parametrize(
    "g",
    [functools.partial(np.multiply, np.ones(3)), Squarer().__call__, 3.0],
    ids=["partial-fixing-an-array", "bound-method-of-an-object-compared-by-value", "number"],
)
def test_a_callable_srcgrad_cannot_read_is_refused_at_the_call(g):
    for mode in MODES:
        with pytest.raises(srcgrad.NoDerivativeError, match="is the argument `f`") as info:
            srcgrad.grad(fp.apply, wrt=1, mode=mode)(g, X)
        assert "functions_passed.py" in str(info.value)
