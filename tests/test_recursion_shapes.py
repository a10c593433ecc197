"""The shape of a recursive call's value (issue 19): where a fixed point proves it (every
return has the key of the base case, ``np.ones_like(x)``'s, when the recursive calls'
values have it and are given ``x``), the adjoints of ``power`` (repeated squaring) are
plain products, with no ``unbroadcast``; where it does not (a return broadcasts ``x``
against another argument, a call given a part of ``x``), the shape stays unknown and
the adjoint sums as before. Values against autograd running the same source and
against central differences, to second order (hessian, hvp)."""

from __future__ import annotations

import ast

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads


def power(x, n):
    if n == 0:
        return np.ones_like(x)
    h = power(x, n // 2)
    if n % 2 == 0:
        return h * h
    return x * h * h


def power_loss(x, n):
    return np.sum(power(x, n))


def swapped(x, y, n):
    """Arguments exchanged at each call: the value has the shape of ``x`` and ``y``
    broadcast, which the fixed point proves (the key {x, y} either way round; ``y`` of
    one element, so ``x`` and ``y`` are still summed into)."""
    if n == 0:
        return x * y
    return swapped(y, x, n - 1) * x


def swapped_loss(x, y, n):
    return np.sum(swapped(x, y, n))


def grow(x, y, n):
    """Each level broadcasts against ``y``: not ``x``'s shape, no key proven."""
    if n == 0:
        return np.ones_like(x)
    return grow(x, y, n - 1) * y


def grow_loss(x, y, n):
    return np.sum(grow(x, y, n))


def spread(x, n):
    """Every return has ``x``'s key if the call's value is assumed to, but the call is
    given ``x[:1]``: its value has one element, so no key is proven."""
    if n == 0:
        return np.cos(x)
    h = spread(x[:1], n - 1)
    return h * x


def spread_loss(x, n):
    return np.sum(spread(x, n))


def crossed(x, y, n):
    """The base case has ``y``'s key, but each call gives ``x`` where ``y`` was: the
    value's shape alternates, so no key is proven."""
    if n == 0:
        return np.ones_like(y)
    h = crossed(y, x, n - 1)
    return h * y


def crossed_loss(x, y, n):
    return np.sum(crossed(x, y, n))


def _function(source: str, name: str) -> str:
    tree = ast.parse(source)
    (found,) = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name]
    return ast.unparse(found)


X = {
    0: 1.1,
    1: np.array([0.9, 1.05, 1.2, 0.8]),
    2: np.array([[0.9, 1.05, 1.2], [0.8, 1.1, 0.95]]),
}


@pytest.mark.parametrize("rank", [1, 2])
def test_power_adjoint_has_no_unbroadcast(rank):
    d = srcgrad.grad(power_loss)
    d(X[rank], 5)
    bwd = _function(d.source, "power_bwd")
    assert "unbroadcast" not in bwd
    assert "x_bar += t5_bar * h" in bwd


@pytest.mark.parametrize("rank", [0, 1, 2])
@pytest.mark.parametrize("n", [0, 1, 4, 5, 6, 7])
def test_power_gradient_agrees_with_autograd(rank, n):
    x = X[rank]
    expected = autograd.grad(autograd_twin(power_loss))(x, n)
    for mode in ("reverse", "forward"):
        got = srcgrad.grad(power_loss, mode=mode)(x, n)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    value, gradient = srcgrad.value_and_grad(power_loss)(x, n)
    np.testing.assert_allclose(value, power_loss(x, n), rtol=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("rank", [0, 1, 2])
@pytest.mark.parametrize("n", [3, 4])
def test_power_second_order_agrees_with_autograd(rank, n):
    x = X[rank]
    twin = autograd_twin(power_loss)
    expected = autograd.hessian(twin)(x, n)
    np.testing.assert_allclose(srcgrad.hessian(power_loss)(x, n), expected, rtol=1e-9)
    v = np.cos(np.arange(np.size(x)) + 1.0).reshape(np.shape(x))
    hv = autograd.grad(lambda y: np.sum(autograd.grad(twin)(y, n) * v))(x)
    np.testing.assert_allclose(srcgrad.hvp(power_loss)(x, n, v), hv, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("rank", [0, 1, 2])
@pytest.mark.parametrize("n", [2, 3])
def test_power_finite_differences(rank, n):
    check_grads(power_loss, (X[rank], n), order=2)


CASES = [
    (swapped_loss, (np.array([0.3, -0.8, 1.1]), np.array([1.2]), 3), "any"),
    (grow_loss, (np.array([0.3, -0.8, 1.1]), np.array([[0.5], [1.2]]), 3), "unknown"),
    (spread_loss, (np.array([0.3, -0.8, 1.1]), 2), "unknown"),
    (crossed_loss, (np.array([0.3, -0.8, 1.1]), np.array([0.7]), 3), "unknown"),
]


@pytest.mark.parametrize("func, args, shape", CASES, ids=[c[0].__name__ for c in CASES])
def test_shape_kept_unknown_where_not_proven(func, args, shape):
    expected = autograd.grad(autograd_twin(func))(*args)
    d = srcgrad.grad(func)
    np.testing.assert_allclose(d(*args), expected, rtol=1e-10)
    callee = func.__name__.removesuffix("_loss")
    bwd = _function(d.source, f"{callee}_bwd")
    if shape == "unknown":
        assert "unbroadcast" in bwd
    check_grads(func, args, order=2)
