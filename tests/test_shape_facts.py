"""Shapes the generated code relies on, and the code they allow.

Three facts let reverse mode skip work a careful person would skip:

- an argument with no axis of length 1 is never stretched by broadcasting, so an
  operand of the result's rank built from such arguments has the result's shape
  (``h @ Wh + xs[t] @ Wx`` in an RNN step needs no ``unbroadcast``); the code is
  made per kind of argument, so a call with a length-1 axis gets code of its own;
- slices ``x[1:]`` and ``x[:-1]`` have one shape, whatever ``x``'s length;
- the adjoint of ``np.sum(t)`` (or ``np.mean``) is one number in every element: it stays
  a scalar through elementwise operations until something needs it as an array.

Each test checks the gradient against finite differences on hypothesis-drawn shapes
(length-1 axes included) and reads the generated code for what the facts remove.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import srcgrad
from srcgrad.testing import arrays, broadcastable_shapes, check_grads


def rnn(Wh, Wx, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx)
    return np.sum(h * h)


def affine(x, W, b):
    return np.sum(np.tanh(x @ W + b))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def mixed(a, b, c):
    return np.mean(np.sin(a) * b + c**2) + np.sum(a * c)


def inner(a, b):
    return np.sum(a * b)


def square(x):
    return np.sum(x * x)


def generated(f, *args, **kwargs):
    d = srcgrad.grad(f, **kwargs)
    d(*args)
    return d.source[d.source.index(f"def grad_{f.__name__}") :]


side = st.integers(1, 4)


@settings(max_examples=10, deadline=None)
@given(steps=st.integers(1, 3), batch=side, hidden=side, inputs=side, data=st.data())
def test_rnn_gradient_for_every_kind_of_shape(steps, batch, hidden, inputs, data):
    Wh = data.draw(arrays((hidden, hidden), low=-0.5, high=0.5))
    Wx = data.draw(arrays((inputs, hidden), low=-0.5, high=0.5))
    xs = data.draw(arrays((steps, batch, inputs)))
    h0 = data.draw(arrays((batch, hidden), low=-0.5, high=0.5))
    check_grads(rnn, (Wh, Wx, xs, h0), wrt=(0, 1, 3))


def test_rnn_step_has_no_unbroadcast_when_no_axis_has_length_one():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(4, 4)), rng.normal(size=(3, 4)), rng.normal(size=(5, 2, 3)))
    source = generated(rnn, *args, 0.1 * rng.normal(size=(2, 4)), wrt=(0, 1))
    assert "unbroadcast" not in source and "matmul_shape" not in source
    # a batch of one: the step's two products may differ in shape, and the code says so
    source = generated(rnn, *args[:2], args[2][:, :1], 0.1 * rng.normal(size=(1, 4)), wrt=(0, 1))
    assert "unbroadcast" in source


@settings(max_examples=15, deadline=None)
@given(rows=side, inputs=side, outputs=side, bias=st.sampled_from(["vector", "row", "full"]))
def test_affine_gradient_with_and_without_length_one_axes(rows, inputs, outputs, bias):
    rng = np.random.default_rng(rows * 100 + inputs * 10 + outputs)
    x = rng.normal(size=(rows, inputs))
    W = rng.normal(size=(inputs, outputs))
    b = rng.normal(size={"vector": (outputs,), "row": (1, outputs), "full": (rows, outputs)}[bias])
    check_grads(affine, (x, W, b), wrt=(0, 1, 2))


def test_code_is_made_again_for_an_argument_with_a_length_one_axis():
    d = srcgrad.grad(affine, wrt=(1, 2))
    x, W = np.ones((3, 2)), np.full((2, 4), 0.1)
    wide = d(x, W, np.zeros((3, 4)))
    assert "unbroadcast" not in d.source
    narrow = d(x, W, np.zeros((1, 4)))  # b is stretched over the rows: its gradient sums them
    assert "unbroadcast" in d.source
    np.testing.assert_allclose(narrow[1], wide[1].sum(axis=0, keepdims=True))


@settings(max_examples=10, deadline=None)
@given(x=arrays(st.integers(1, 8).map(lambda n: (n,)), low=-1.5, high=1.5))
def test_rosenbrock_gradient_for_every_length(x):
    check_grads(rosenbrock, (x,))


def test_slices_of_one_array_need_no_unbroadcast_and_the_sum_no_seed():
    source = generated(rosenbrock, np.linspace(-1.0, 1.0, 7))
    assert "unbroadcast" not in source
    assert "full_like" not in source  # the sum's adjoint stays the number 1.0
    assert "broadcast_shapes" not in source


@settings(max_examples=25, deadline=None)
@given(shapes=broadcastable_shapes(3), data=st.data())
def test_uniform_adjoints_on_broadcast_shapes(shapes, data):
    a, b, c = (data.draw(arrays(s)) for s in shapes)
    check_grads(mixed, (a, b, c), wrt=(0, 1, 2))


@settings(max_examples=10, deadline=None)
@given(shapes=broadcastable_shapes(2), data=st.data())
def test_a_sums_adjoint_reaches_a_smaller_operand_summed(shapes, data):
    a, b = (data.draw(arrays(s)) for s in shapes)
    got = srcgrad.grad(inner, wrt=(0, 1))(a, b)
    full = np.broadcast_shapes(a.shape, b.shape)
    want_a = np.sum(np.broadcast_to(b, full), axis=tuple(range(len(full) - a.ndim)))
    want_a = np.sum(want_a, axis=tuple(i for i, n in enumerate(a.shape) if n == 1), keepdims=True)
    np.testing.assert_allclose(got[0], np.broadcast_to(want_a, a.shape))


def test_a_product_of_a_value_with_itself_doubles_one_term():
    source = generated(square, np.arange(1.0, 4.0))
    assert "x * 2" in source and "full_like" not in source
    np.testing.assert_allclose(srcgrad.grad(square)(np.arange(1.0, 4.0)), [2.0, 4.0, 6.0])


def single_feature(x, W, c):
    return np.sum(np.tanh(x @ W + c))


def test_axes_are_known_one_by_one():
    # x (3, 1) and W (1, 4) have length-1 axes, but x @ W's axes (3 and 4) do not
    x, W = np.linspace(-1.0, 1.0, 3)[:, None], np.linspace(0.5, 1.0, 4)[None, :]
    check_grads(single_feature, (x, W, np.ones((3, 4))), wrt=(0, 1, 2))
    source = generated(single_feature, x, W, np.ones((3, 4)), wrt=(0, 1))
    assert "unbroadcast" not in source and "matmul_shape" not in source
    source = generated(single_feature, x, W, np.ones(4), wrt=(0, 1, 2))
    assert "unbroadcast" in source  # c (4,) is stretched over x @ W's rows
    check_grads(single_feature, (x, W, np.ones(4)), wrt=(0, 1, 2))


def hidden_state(x, W):
    h = np.zeros((x.shape[0], W.shape[1]))
    for _ in range(3):
        h = np.tanh(h @ W.T @ W + x @ W)
    return np.sum(h)


def test_zeros_of_a_tuple_of_names_has_that_many_axes():
    x, W = np.linspace(-1.0, 1.0, 6).reshape(2, 3), np.linspace(0.1, 0.4, 12).reshape(3, 4)
    check_grads(hidden_state, (x, W), wrt=(0, 1))
    source = generated(hidden_state, x, W, wrt=(0, 1))
    assert "matmul_vjp" not in source and "dot_vjp" not in source  # h's rank is known: 2
