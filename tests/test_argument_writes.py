"""Issue 18, item 4: a function that writes into its argument (``x[0] = a * b``, as
Tangent's own corpus does) is differentiated on its own copy of the argument
(``normalize/arguments.py``): the derivative is numpy's on a copy, and the caller's
arrays never change. Writes that a copy of the argument cannot make the function's own
(into an array a dict argument holds, through a view, from a helper the function
calls, into a number) stay refused at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import srcgrad

X = np.array([0.5, 0.9, 1.5, 2.0])
Y = np.array([0.3, -0.2, 0.7, 1.1])
MODES = ("reverse", "forward")


def numpy_gradient(f, args, wrt, h=1e-6):
    """Central differences, each evaluation on fresh copies (the function writes)."""
    out = np.zeros_like(args[wrt])
    for i in np.ndindex(np.shape(args[wrt])):
        values = []
        for sign in (1.0, -1.0):
            moved = [np.array(a, dtype=float) for a in args]
            moved[wrt][i] += sign * h
            values.append(f(*moved))
        out[i] = (values[0] - values[1]) / (2 * h)
    return out


def write_one_element(x, y):
    x[0] = x[1] * y[2]
    return np.sum(np.sin(x) * y)


def update_a_slice(x, y):
    x[1:] += x[:-1] * y[1:]
    return np.sum(x * x)


def write_in_a_loop(x, y):
    for i in range(1, 4):
        x[i] = x[i - 1] * 0.5 + y[i]
    return np.sum(np.tanh(x))


def write_under_a_mask(x, y):
    x[x > 1.0] = y[x > 1.0] * 2.0
    return np.sum(x * y)


FUNCTIONS = [write_one_element, update_a_slice, write_in_a_loop, write_under_a_mask]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_writes_into_an_argument_are_differentiated_on_a_copy(f, mode):
    x, y = X.copy(), Y.copy()
    gx, gy = srcgrad.grad(f, wrt=(0, 1), mode=mode)(x, y)
    np.testing.assert_allclose(gx, numpy_gradient(f, (X, Y), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, numpy_gradient(f, (X, Y), 1), rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(x, X)  # the caller's arrays, untouched
    np.testing.assert_array_equal(y, Y)
    value, _ = srcgrad.value_and_grad(f, mode=mode)(x, y)
    assert value == pytest.approx(f(X.copy(), Y.copy()))
    np.testing.assert_array_equal(x, X)


#: second order refused with a clear error, as for a copy the function makes itself
#: (``z = x.copy(); z[1:] += z[:-1] * y[1:]``): the first-order code reads ``x[1:]``
#: after writing into ``x[1:]``, which the alias analysis of generated code refuses
SECOND_ORDER_REFUSED = {update_a_slice}


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_second_order_through_a_write_into_an_argument(f):
    x = X.copy()
    if f in SECOND_ORDER_REFUSED:
        with pytest.raises(srcgrad.UnsupportedSyntaxError, match="shares that memory"):
            srcgrad.hessian(f)(x, Y)
        np.testing.assert_array_equal(x, X)
        return
    hessian = srcgrad.hessian(f)(x, Y)
    gradient = srcgrad.grad(f)
    columns = [(gradient(X + 1e-6 * e, Y) - gradient(X - 1e-6 * e, Y)) / 2e-6 for e in np.eye(4)]
    np.testing.assert_allclose(hessian, np.stack(columns, 1), atol=1e-5)
    np.testing.assert_array_equal(x, X)


def test_the_copy_is_in_the_generated_code():
    derivative = srcgrad.grad(write_one_element, mode="forward")
    derivative(X, Y)
    assert "x.copy()" in derivative.source


def writes_into_its_argument(u):
    u[0] = 0.0
    return u[1] * 2.0


def calls_a_helper_that_writes(x):
    y = x * 1.0
    z = writes_into_its_argument(y)  # (numpy changes y here: the caller sees it)
    return np.sum(y * x) + z


def into_an_array_a_dict_holds(p):
    p["w"][0] = p["b"] * 2.0
    return np.sum(p["w"] ** 2)


def through_a_view(x):
    v = x[0:2]
    v[0] = 1.0
    return np.sum(x * x)


def into_a_number(x, s):
    s[0] = x[0]
    return np.sum(x)


@pytest.mark.parametrize(
    "f, args, message",
    [
        (calls_a_helper_that_writes, (X,), "changes its argument `u`"),
        (into_an_array_a_dict_holds, ({"w": X, "b": 0.5},), 'p["w"][0]'),
        (through_a_view, (X,), "v[0] = 1.0"),
        (into_a_number, (X, 1.5), "number here"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_writes_a_copy_cannot_make_the_functions_own_are_refused(f, args, message):
    for mode in MODES:
        with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
            srcgrad.grad(f, mode=mode)(*args)
        assert message in str(info.value), str(info.value)
        assert __file__ in str(info.value)
    np.testing.assert_array_equal(X, [0.5, 0.9, 1.5, 2.0])


@pytest.mark.parametrize("mode", MODES)
def test_an_argument_written_into_may_not_share_memory_with_another(mode):
    """(found reviewing the change) with the same array for ``x`` and ``y``, numpy's write
    into ``x`` is seen through ``y``; the derivative, working on its own copy of ``x``,
    would differentiate another function: refused, for the same array and for a view."""
    x = X.copy()
    for y in (x, x[:]):
        with pytest.raises(ValueError, match="shares its memory"):
            srcgrad.grad(write_one_element, wrt=(0, 1), mode=mode)(x, y)
        with pytest.raises(ValueError, match="shares its memory"):
            srcgrad.value_and_grad(write_one_element, mode=mode)(x, y)
    np.testing.assert_array_equal(x, X)
    gx, gy = srcgrad.grad(write_one_element, wrt=(0, 1), mode=mode)(x, x.copy())
    np.testing.assert_allclose(gx, numpy_gradient(write_one_element, (X, X), 0), rtol=1e-6)
