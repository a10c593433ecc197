"""Issue 18, item 6: reverse mode over a gradient or a vjp (JAX's ``jacrev(grad(f))``,
Tangent's reverse-over-reverse): ``srcgrad.vjp(srcgrad.grad(f))``,
``srcgrad.vjp(srcgrad.vjp(f))`` and ``srcgrad.jacobian(..., mode="reverse")`` of them.

srcgrad computes them as reverse mode over the function's forward-mode code: the
cotangent ``u`` of ``grad f`` gives ``u . d(grad f)/d(args) = grad_args <grad f, u>``,
the gradient of a jvp's tangent output, exact with no symmetry assumed (a gradient with
respect to some arguments, differentiated with respect to others, is no Hessian).
A vjp's cotangent ``u``: ``<J' dout, u> = <dout, J u>``, the vjp of the jvp's tangent
output. Checked against autograd's reverse over reverse on the same source, for
functions with loops, branches and calls, with respect to every argument.
"""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import srcgrad


def layer(h, w):
    return np.tanh(h * w + 0.1)


def recurrent(x, w):
    h = np.zeros_like(x[0])
    for t in range(x.shape[0]):
        h = layer(h, w) + x[t]
    return np.sum(h * h)


def branchy(x, w):
    if np.sum(x) > 0:
        y = np.sin(x) * w
    else:
        y = np.exp(x * w)
    return np.sum(y * y) + np.sum(w**3)


def finite(shape):
    return arrays(np.float64, shape, elements=st.floats(-1.5, 1.5, allow_subnormal=False))


ROWS = {recurrent: ((3, 2), (2,)), branchy: ((3,), (3,))}


@pytest.mark.parametrize("f", list(ROWS), ids=lambda f: f.__name__)
@pytest.mark.parametrize("gradient_wrt, vjp_wrt", [(0, 0), (0, 1), (1, (0, 1)), ((0, 1), 1)])
@given(data=st.data())
def test_vjp_of_grad_is_autograds_reverse_over_reverse(f, gradient_wrt, vjp_wrt, data):
    x = data.draw(finite(ROWS[f][0]))
    w = data.draw(finite(ROWS[f][1]))
    args = (x, w)
    gradient = srcgrad.grad(f, wrt=gradient_wrt)
    parts = gradient_wrt if isinstance(gradient_wrt, tuple) else (gradient_wrt,)
    u = tuple(data.draw(finite(np.shape(args[k]))) for k in parts)
    dout = u if isinstance(gradient_wrt, tuple) else u[0]
    got = srcgrad.vjp(gradient, wrt=vjp_wrt)(*args, dout)

    twin = autograd.grad(autograd_twin(f), gradient_wrt)

    def inner(*a):
        return twin(*a) if isinstance(gradient_wrt, int) else autograd.builtins.tuple(twin(*a))

    want = autograd.make_vjp(inner, vjp_wrt)(*args)[0](dout)
    got = got if isinstance(vjp_wrt, tuple) else (got,)
    want = want if isinstance(vjp_wrt, tuple) else (want,)
    for g, expected in zip(got, want):
        np.testing.assert_allclose(g, expected, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("f", list(ROWS), ids=lambda f: f.__name__)
def test_jacobian_of_a_gradient_in_reverse_mode_is_the_hessian(f):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(ROWS[f][0]), rng.standard_normal(ROWS[f][1])
    by_rows = srcgrad.jacobian(srcgrad.grad(f, wrt=1), wrt=1, mode="reverse")(x, w)
    np.testing.assert_allclose(by_rows, srcgrad.hessian(f, wrt=1)(x, w), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        by_rows, autograd.hessian(autograd_twin(f), 1)(x, w), rtol=1e-10, atol=1e-12
    )


def test_the_code_is_reverse_mode_over_forward_mode_code():
    over = srcgrad.vjp(srcgrad.grad(branchy), wrt=(0, 1))
    x, w = np.array([0.3, 0.2, -0.1]), np.array([1.0, 0.5, -0.5])
    over(x, w, np.ones(3))
    assert "def grad_jvp_branchy(" in over.source
    assert "# grad of:" in over.source


def mixed(x, w):
    return np.tanh(x * w) * np.sum(w**2) + layer(x, w)


@pytest.mark.parametrize("inner_wrt, outer_wrt", [(0, 0), (0, (0, 1)), ((0, 1), 1)])
@given(data=st.data())
def test_vjp_of_vjp_is_autograds_reverse_over_reverse(inner_wrt, outer_wrt, data):
    x, w, dout = (data.draw(finite((3,))) for _ in range(3))
    parts = inner_wrt if isinstance(inner_wrt, tuple) else (inner_wrt,)
    u = tuple(data.draw(finite((3,))) for _ in parts)
    cotangent = u if isinstance(inner_wrt, tuple) else u[0]
    got = srcgrad.vjp(srcgrad.vjp(mixed, wrt=inner_wrt), wrt=outer_wrt)(x, w, dout, cotangent)

    twin = autograd_twin(mixed)

    def inner(x, w):
        result = autograd.make_vjp(twin, inner_wrt)(x, w)[0](dout)
        return autograd.builtins.tuple(result) if isinstance(inner_wrt, tuple) else result

    want = autograd.make_vjp(inner, outer_wrt)(x, w)[0](cotangent)
    got = got if isinstance(outer_wrt, tuple) else (got,)
    want = want if isinstance(outer_wrt, tuple) else (want,)
    for g, expected in zip(got, want):
        np.testing.assert_allclose(g, expected, rtol=1e-9, atol=1e-11)
