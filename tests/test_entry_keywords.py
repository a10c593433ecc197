"""Issue 18, leftover item 3: ``**kwargs`` on the function differentiated (``def f(x,
**opts)`` called as ``grad(f)(x, p=2)``). The keywords a call gives make one dict, passed
to the generated code as one argument and never differentiated (its keys decide the
code, as a dict argument's do); a ``wrt`` naming ``**opts`` or a keyword it collects is
refused, saying what to write. Checked against autograd (which takes the same keywords)
and finite differences, in both modes and to second order."""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

X = np.array([0.3, 0.5, 1.2])
W = np.array([0.1, -0.2])
A = np.arange(6.0).reshape(3, 2) / 5
MODES = ("reverse", "forward")


def power_sum(x, **opts):
    return np.sum(x ** opts["p"])


def scaled_loss(w, a, *, reg=0.1, **opts):
    z = np.tanh(a @ w) * opts["scale"]
    if opts["squared"]:
        return np.sum(z * z) + reg * np.sum(w * w)
    return np.sum(z) + reg * np.sum(w * w)


def power_sum_of_three(x):
    return power_sum(x, p=3)


CASES = [
    (power_sum, (X,), {"p": 2}),
    (power_sum, (X,), {"p": 3}),
    (scaled_loss, (W, A), {"scale": 2.0, "squared": True}),
    (scaled_loss, (W, A), {"scale": 0.5, "squared": False, "reg": 0.3}),
]


@pytest.mark.parametrize("f, args, keywords", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_keywords_of_the_function_differentiated(f, args, keywords):
    twin = autograd_twin(f)
    expected = autograd.grad(twin)(*args, **keywords)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(*args, **keywords), expected)
    value, gradient = srcgrad.value_and_grad(f)(*args, **keywords)
    assert value == pytest.approx(f(*args, **keywords), rel=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-12)
    cotangent = srcgrad.vjp(f)(*args, 1.0, **keywords)
    np.testing.assert_allclose(cotangent, expected, rtol=1e-12)
    direction = np.ones_like(args[0])
    _, tangent = srcgrad.jvp(f)(*args, direction, **keywords)
    assert tangent == pytest.approx(expected @ direction, rel=1e-12)
    hessian = autograd.hessian(twin)(*args, **keywords)
    np.testing.assert_allclose(srcgrad.hessian(f)(*args, **keywords), hessian, rtol=1e-10)


def test_finite_differences_through_a_caller():
    check_grads(power_sum_of_three, (X,), order=2)


def test_each_set_of_keywords_gets_its_own_result_and_the_dict_is_not_an_input():
    derivative = srcgrad.grad(power_sum)
    np.testing.assert_allclose(derivative(X, p=2), 2 * X)
    np.testing.assert_allclose(derivative(X, p=3), 3 * X**2)
    np.testing.assert_allclose(derivative(X, p=2), 2 * X)
    derivative = srcgrad.grad(scaled_loss)
    derivative(W, A, scale=2.0, squared=True)
    assert "def grad_scaled_loss(w, a, reg, opts):" in derivative.source
    assert "opts_bar" not in derivative.source


@pytest.mark.parametrize(
    "wrt, match",
    [
        ("opts", r"wrt names \*\*opts.*never differentiated; give a value"),
        (1, r"wrt names \*\*opts"),
        ("p", r"wrt='p' is not a parameter.*\*\*opts collects.*give 'p' a parameter of its own"),
    ],
)
def test_a_wrt_naming_the_keywords_is_refused(wrt, match):
    with pytest.raises(ValueError, match=match):
        srcgrad.grad(power_sum, wrt=wrt)


def test_a_derivative_taking_arguments_after_the_keywords_is_refused():
    with pytest.raises(TypeError, match=r"takes \*\*opts.*srcgrad.hessian"):
        srcgrad.jvp(srcgrad.vjp(power_sum))
    np.testing.assert_allclose(srcgrad.hessian(power_sum)(X, p=3), np.diag(6 * X))
