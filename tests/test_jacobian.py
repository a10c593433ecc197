"""``srcgrad.jacobian``: shape ``out.shape + arg.shape``; forward and reverse agree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import srcgrad
from srcgrad.testing import arrays


def elementwise(x):
    return np.sin(x) * x[0]


def two_inputs(x, y):
    return x[:, None] * np.tanh(y)


def matrix_map(a, v):
    return np.tanh(a @ v)


def scalar_out(x):
    return np.sum(x**3)


def scalar_in(s, x):
    return s * np.exp(x)


def finite_difference_jacobian(f, args, k, eps=1e-6):
    args = [np.asarray(a, dtype=float) for a in args]
    out = np.asarray(f(*args))
    x = args[k]
    jac = np.zeros(out.shape + x.shape)
    for index in np.ndindex(x.shape):
        plus, minus = [a.copy() for a in args], [a.copy() for a in args]
        plus[k][index] += eps
        minus[k][index] -= eps
        jac[(Ellipsis, *index)] = (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps)
    return jac


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@given(x=arrays(shape=st.integers(1, 4).map(lambda n: (n,)), low=-2, high=2))
def test_jacobian_matches_finite_differences(mode, x):
    jac = srcgrad.jacobian(elementwise, mode=mode)(x)
    assert jac.shape == x.shape + x.shape
    np.testing.assert_allclose(jac, finite_difference_jacobian(elementwise, [x], 0), atol=1e-6)


@given(
    a=arrays(shape=st.just((3, 2)), low=-1, high=1),
    v=arrays(shape=st.just((2,)), low=-1, high=1),
)
def test_forward_and_reverse_agree_for_several_wrt(a, v):
    rev = srcgrad.jacobian(matrix_map, wrt=(0, 1))(a, v)
    fwd = srcgrad.jacobian(matrix_map, wrt=(0, 1), mode="forward")(a, v)
    assert rev[0].shape == (3, 3, 2) and rev[1].shape == (3, 2)
    for r, f, k in zip(rev, fwd, (0, 1)):
        np.testing.assert_allclose(r, f, atol=1e-12)
        np.testing.assert_allclose(r, finite_difference_jacobian(matrix_map, [a, v], k), atol=1e-6)


def test_jacobian_of_two_inputs_with_different_shapes():
    x, y = np.array([0.5, -1.0]), np.array([0.1, 0.2, 0.3])
    jx, jy = srcgrad.jacobian(two_inputs, wrt=("x", "y"))(x, y)
    assert jx.shape == (2, 3, 2) and jy.shape == (2, 3, 3)
    np.testing.assert_allclose(jy, finite_difference_jacobian(two_inputs, [x, y], 1), atol=1e-6)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_a_scalar_output_is_the_gradient(mode):
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(srcgrad.jacobian(scalar_out, mode=mode)(x), 3 * x**2)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_with_respect_to_a_python_float(mode):
    x = np.array([0.5, -1.0])
    jac = srcgrad.jacobian(scalar_in, mode=mode)(1.5, x)
    assert jac.shape == (2,)
    np.testing.assert_allclose(jac, np.exp(x))


def test_jacobian_repr_source_and_decorator_forms():
    jac = srcgrad.jacobian(elementwise)
    assert repr(jac) == "<srcgrad.jacobian of elementwise, wrt='x', mode='reverse'>"
    jac(np.array([1.0, 2.0]))
    assert "def vjp_elementwise(" in jac.source
    assert jac.__wrapped__ is elementwise

    @srcgrad.jacobian(mode="forward")
    def f(x):
        return 2.0 * x

    np.testing.assert_allclose(f(np.ones(2)), 2.0 * np.eye(2))
    assert "def jvp_f(" in f.source
