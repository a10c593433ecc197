"""Issue 16, the rule and activity families: every row is either the right number (from
an oracle that is not srcgrad: autograd running the same source, finite differences, or
a closed form) or a clear error naming this file and the offending line.

Families: 4 (dtype casts), 5 (an active value reaching something srcgrad does not
model), 7 (complex numbers), 10 (numerics at infinite derivatives, ``x ** y`` at 0,
``tanh`` in its tails), 16 (``np.mean`` of an empty array, ``det`` of a singular
matrix), 8/16 (arithmetic on lists).
"""

from __future__ import annotations

import inspect
import math
import types
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import srcgrad

MODES = ("reverse", "forward")
X = np.array([1.2, 1.5, 2.3])  # no integers: casts to int are locally constant here
Y = np.array([0.5, 2.0, 3.0])


# -- oracles and checks --------------------------------------------------------------------
def finite_differences(f, args, wrt=0, eps=1e-6):
    """Central differences of a scalar ``f`` in argument ``wrt``."""
    x = np.array(args[wrt], dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        plus = f(*args[:wrt], up if x.ndim else float(up), *args[wrt + 1 :])
        minus = f(*args[:wrt], down if x.ndim else float(down), *args[wrt + 1 :])
        out[i] = (plus - minus) / (2 * eps)
    return out if x.ndim else float(out)


def with_autograd(f):
    """``f``'s own code with ``np`` bound to ``autograd.numpy``."""
    return types.FunctionType(f.__code__, {**f.__globals__, "np": anp}, f.__name__)


def both_modes(f, args, wrt=0):
    return {mode: srcgrad.grad(f, wrt, mode=mode)(*args) for mode in MODES}


def assert_gradient(f, args, expected, wrt=0, rtol=1e-6, atol=1e-9):
    for mode, got in both_modes(f, args, wrt).items():
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=mode)


def line_of(func, fragment: str) -> int:
    """The line of this file holding ``fragment`` inside ``func``."""
    lines, first = inspect.getsourcelines(func)
    for offset, text in enumerate(lines):
        if fragment in text and not text.lstrip().startswith("def "):
            return first + offset
    raise AssertionError(f"{fragment!r} not in {func.__name__}")


def assert_refused(f, args, error, message: str, at: str, wrt=0, modes=MODES):
    """Both modes raise ``error`` naming this file, the line holding ``at`` and saying
    ``message``, and never a srcgrad temporary."""
    for mode in modes:
        with pytest.raises(error) as info:
            srcgrad.grad(f, wrt, mode=mode)(*args)
        text = str(info.value)
        assert f"{__file__}:{line_of(f, at)}" in text, text
        assert message in text, text


# == family 4: casts ==========================================================================
def astype_int(x):
    return np.sum(x.astype(int) * x)


def astype_bool(x):
    return np.sum(x.astype(bool) * x)


def astype_int_string(x):
    return np.sum(x.astype("i8") * x)


def astype_uint8(x):
    return np.sum(x.astype(np.uint8) * x)


def sum_dtype_int(x):
    return np.sum(x, dtype=int) * x[0]


def method_sum_dtype_int(x):
    return x.sum(dtype=np.int64) * x[0]


def mean_dtype_int(x):
    return np.mean(x * 3.0, dtype=int) * x[1]


def prod_dtype_int(x):
    return np.prod(x, dtype=int) * x[2]


def cumsum_dtype_int(x):
    return np.sum(np.cumsum(x, dtype=int) * x)


def array_dtype_int(x):
    return np.sum(np.array(x, dtype=int) * x)


def asarray_int32(x):
    return np.sum(np.asarray(x, dtype=np.int32) * x)


def full_like_int(x):
    return np.sum(np.full_like(x, x[0], dtype=int) * x)


def full_int(x):
    return np.sum(np.full(3, x[1], dtype=int) * x)


def linspace_int(x):
    return np.sum(np.linspace(x[0], x[2] * 4.0, 3, dtype=int) * x)


def int32_call(x):
    return np.sum(np.int32(x) * x)


def bool_call(x):
    return x[1] * bool(x[0])


def trace_dtype_int(x):
    return np.trace(np.outer(x, x), dtype=int) * x[0]


def astype_float32(x):
    return np.sum(x.astype(np.float32) ** 2)


def astype_float_name(x):
    return np.sum(x.astype(float) * x)


def astype_float_string(x):
    return np.sum(x.astype("float32") * x)


def sum_dtype_float32(x):
    return np.sum(x**2, dtype=np.float32)


def mean_dtype_float(x):
    return np.mean(x**2, dtype=float)


def asarray_float(x):
    return np.sum(np.asarray(x, dtype=np.float64) ** 3)


def float32_call(x):
    return np.sum(np.float32(x[0]) * x)


def cast_to_dtype_of(x):
    return np.sum(x.astype(x.dtype) * x)


def cast_to_result_type(x):
    return np.sum(np.asarray(x * x, dtype=np.result_type(x)))


def cast_to_dtype_of_inactive(x, c):
    return np.sum(x.astype(c.dtype) * x)


CAST_ROWS = [
    astype_int,
    astype_bool,
    astype_int_string,
    astype_uint8,
    sum_dtype_int,
    method_sum_dtype_int,
    mean_dtype_int,
    prod_dtype_int,
    cumsum_dtype_int,
    array_dtype_int,
    asarray_int32,
    full_like_int,
    full_int,
    linspace_int,
    int32_call,
    bool_call,
    trace_dtype_int,
    astype_float32,
    astype_float_name,
    astype_float_string,
    sum_dtype_float32,
    mean_dtype_float,
    asarray_float,
    float32_call,
    cast_to_dtype_of,
    cast_to_result_type,
]


@pytest.mark.parametrize("f", CAST_ROWS, ids=lambda f: f.__name__)
def test_casts_match_finite_differences(f):
    """A cast to an integer or bool dtype is piecewise constant (derivative zero), one to a
    float dtype the identity; finite differences away from integers agree."""
    single = "32" in inspect.getsource(f)  # (float32 values: wider steps)
    expected = finite_differences(f, (X,), eps=1e-2 if single else 1e-6)
    assert_gradient(f, (X,), expected, rtol=1e-3 if single else 1e-6, atol=1e-4)


def int_on_one_path(x, y, n):
    # (found by the thorough random programs; unused lines taken out) on the path taken, `b` is
    # an integer array; the gradient's seed read its dtype as a shape witness: a
    # cotangent of 0.7 became 0
    b = np.tanh(np.sum(x + x))
    c = np.tanh(np.sum((y + np.mean(y, axis=0)), axis=-2))
    if n > 0:
        if np.mean(b / (1.0 + b * b)) <= 0.25:
            return np.sum(1.5 if (n > 1) else np.sum(c))
        return np.mean((1.0 + c * c) ** 0.5 if (np.array(b, dtype=np.float64) > 0.5) else c)
    if -1.0 < np.mean(b * b) < 1.0:
        b = np.asarray(np.mean(c), dtype=int)
    else:
        c = np.mean((0.5 * x), axis=-2)
    x = np.sin((-x) if (np.sum(c * c) <= -0.5) else (x / (1.0 + y * y)))
    return np.sum(np.tanh(c @ c) + (1.0 + b * b) ** -1.0)


@pytest.mark.parametrize("cotangent", [0.7, 1.0, -2.5])
def test_dtype_read_only_off_names_of_floats(cotangent):
    """``np.full_like(w, g)`` reads ``w``'s dtype as well as its shape: srcgrad picks ``w``
    among names of the same shape only where every definition of ``w`` gives floats."""
    x = np.array([[-1.4962610163174745, -0.12585703060336595, 1.990117918717877]])
    y = np.array([[1.2808319796133616, -1.9494063391407255, 0.29014366977766404]])
    expected = cotangent * finite_differences(int_on_one_path, (x, y, 0), wrt=1)
    x_bar, y_bar = srcgrad.vjp(int_on_one_path, wrt=(0, 1))(x, y, 0, cotangent)
    np.testing.assert_allclose(y_bar, expected, rtol=1e-6, atol=1e-9)
    assert not np.any(x_bar)


def test_casts_to_integers_are_not_the_identity():
    """The reproducer: ``x.astype(int)`` was treated as ``x`` (gradient ``2x``)."""
    assert_gradient(astype_int, (X,), X.astype(int))
    assert_gradient(sum_dtype_int, (X,), [4.0, 0.0, 0.0])


def cast_to_variable_dtype(x, dtype):
    return np.sum(x.astype(dtype) * x)


def asarray_variable_dtype(x, dtype):
    return np.sum(np.asarray(x, dtype=dtype))


def cast_to_complex(x):
    return np.sum(np.abs(x.astype(complex)))


def cast_to_object(x):
    return np.sum(x.astype(object) * x)


def complex128_call(x):
    return np.sum(np.abs(np.complex128(x)))


@pytest.mark.parametrize(
    "f, args, error, message, at",
    [
        (cast_to_variable_dtype, (X, np.int64), srcgrad.NoDerivativeError, "dtype", "astype"),
        (cast_to_dtype_of_inactive, (X, X), srcgrad.NoDerivativeError, "write the", "astype"),
        (asarray_variable_dtype, (X, float), srcgrad.NoDerivativeError, "dtype", "asarray"),
        (cast_to_complex, (X,), srcgrad.UnsupportedSyntaxError, "complex", "astype"),
        (cast_to_object, (X,), srcgrad.NoDerivativeError, "only to a float dtype", "astype"),
        (complex128_call, (X,), srcgrad.UnsupportedSyntaxError, "complex128", "complex128"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_casts_srcgrad_cannot_see_are_refused(f, args, error, message, at):
    assert_refused(f, args, error, message, at)


def cast_inactive_to_variable_dtype(x, c, dtype):
    return np.sum(x * np.asarray(c, dtype=dtype))


def test_a_cast_of_an_inactive_value_needs_no_static_dtype():
    c = np.array([1.0, 2.0, 3.0])
    assert_gradient(cast_inactive_to_variable_dtype, (X, c, np.float32), c)


# -- 4b: implicit casts: a write rounds to the array's dtype ---------------------------------
def write_into_int_zeros(x):
    y = np.zeros(3, dtype=int)
    y[0] = x[0] * 2.0
    return np.sum(y * x)


def write_into_arange(x):
    y = np.arange(3)
    y[1] = x[1]
    return np.sum(y * x)


def write_into_int_cast(x):
    y = np.asarray(x * 3.0, dtype=int)
    y[1:] = x[1:]
    return np.sum(y * x)


def write_into_full_of_int(x):
    y = np.full(3, 0)
    y[2] = x[2]
    return np.sum(y * x)


def write_into_int_display(x):
    y = np.array([0, 0, 0])
    y[:] = x
    return np.sum(y * x)


def write_into_bool_mask(x):
    y = x > 0.0
    y[0] = x[0]
    return np.sum(y * x)


def write_into_like_of_int_argument(x, idx):
    y = np.zeros_like(idx)
    y[0] = x[0]
    return np.sum(y * x)


def write_into_copy_of_argument(x, b):
    y = b.copy()
    y[0] = x[0]
    return np.sum(y * x)


def int_buffer(n):
    return np.zeros(n, dtype=np.int32)


def write_into_helper_result(x):
    y = int_buffer(3)
    y[0] = x[0]
    return np.sum(y * x)


def write_into_abs_of_int(x):
    y = np.abs(np.arange(3))  # (an integer array still: abs keeps the dtype)
    y[0] = x[0]
    return np.sum(y * x)


def add_in_place_to_int(x):
    a = np.asarray(x * 2.0, dtype=int)
    a -= 0.5 * (a - np.tanh(x))
    return np.sum(a * x)


@pytest.mark.parametrize(
    "f, args, message, at",
    [
        (write_into_int_zeros, (X,), "(it is made by `y = np.zeros(3, dtype=int)`)", "y[0] ="),
        (write_into_arange, (X,), "is an integer or bool array", "y[1] ="),
        (write_into_int_cast, (X,), "is an integer or bool array", "y[1:] ="),
        (write_into_full_of_int, (X,), "is an integer or bool array", "y[2] ="),
        (write_into_int_display, (X,), "is an integer or bool array", "y[:] ="),
        (write_into_bool_mask, (X,), "is an integer or bool array", "y[0] ="),
        (write_into_like_of_int_argument, (X, np.arange(3)), "zeros_like(idx)", "y[0] ="),
        (write_into_copy_of_argument, (X, np.arange(3)), "cannot tell its dtype", "y[0] ="),
        (write_into_helper_result, (X,), "is an integer or bool array", "y[0] ="),
        (write_into_abs_of_int, (X,), "cannot tell its dtype", "y[0] ="),
        (add_in_place_to_int, (X,), "numpy refuses to write floats", "a -="),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_a_write_into_an_integer_array_is_refused(f, args, message, at):
    """numpy rounds a value written into an integer or bool array (its derivative is then
    zero), and refuses a float added in place to one: srcgrad's code, which follows the
    value's derivative and spells ``a -= v`` as a new array, would be wrong; it refuses."""
    assert_refused(f, args, srcgrad.UnsupportedSyntaxError, message, at)
    assert_refused(f, args, srcgrad.UnsupportedSyntaxError, "Make", at)


def float_buffer(n):
    return np.zeros(n) + 0.5


def into_float_buffers(x, b):
    total = 0.0
    for k in range(4):
        y = [np.zeros(3), np.zeros_like(x), np.full(3, 0.0), np.array([0.0, 0.0, 0.0])][k]
        y[0] = x[0] * x[1]
        total = total + np.sum(y * x)
    z = b.copy()  # a float argument
    z[1] = np.sin(x[1])
    w = float_buffer(3)  # a helper's float result
    w[2] = x[2] ** 2
    v = np.asarray(x * 3.0, dtype=int).astype(float)  # made a float again
    v[0] = x[0]
    h = np.zeros(3, dtype=np.float32)
    for k in range(3):  # a loop-carried float
        h = 0.5 * h + x
        h[k] = x[k] * 2.0
    u = np.tanh(np.asarray(x * 3.0, dtype=int))  # a float function of an integer array
    u[1] = x[1] * x[0]
    return total + np.sum(z * x) + np.sum(w * x) + np.sum(v * x) + np.sum(h) + np.sum(u * x)


def test_writes_into_float_arrays_are_differentiated():
    args = (X, np.array([0.5, -1.0, 2.0]))
    assert_gradient(into_float_buffers, args, finite_differences(into_float_buffers, args))
    assert_gradient(
        into_float_buffers, args, finite_differences(into_float_buffers, args, 1), wrt=1
    )


def buffer_like(u, v):
    w = np.zeros_like(u)  # a float buffer where the caller passes floats
    w[::2] = 0.5 * np.sum(v)
    return np.sum(w * w)


def into_a_callees_buffer(x, y):
    return buffer_like(x, y) + buffer_like(x * 2.0, 1.5) * np.sum(y)


@pytest.mark.parametrize("wrt", [0, 1])
def test_a_callee_knows_its_float_arguments(wrt):
    """(found by the thorough random programs) a callee's ``np.zeros_like(u)`` is a float
    buffer where the caller's argument for ``u`` is a float, active or not: the callee's
    derivative is made knowing which of its parameters get floats."""
    args = (X, np.array([0.5, -1.0, 2.0]))
    expected = finite_differences(into_a_callees_buffer, args, wrt)
    assert_gradient(into_a_callees_buffer, args, expected, wrt=wrt)


def cast_on_one_path(u):
    if np.sum(u) > 0.0:
        return np.asarray(u * 2.0, dtype=int)
    return u * 2.0


def update_of_a_helper_result(x):
    a = cast_on_one_path(x)
    a += x * x
    return np.sum(a * x)


def update_of_a_copy_of_an_argument(x, k):
    a = np.array(k)
    a -= np.sin(x)
    return np.sum(a * x)


def update_of_arithmetic_on_an_argument(x, k):
    a = k * 2
    a *= x
    return np.sum(a * x)


def dead_update_in_a_loop(x, k):
    a = cast_on_one_path(x)
    for _ in range(2):
        a += 0.5 * (np.sin(x * a) - a)  # (nothing returned reads a)
    return np.sum(x * x) + k


def dead_item_update_in_a_loop(x, k):
    a = cast_on_one_path(x)
    for _ in range(2):
        a[::2] += 0.5 * (np.sin(np.tanh(np.sum(x))) - a[::2])  # (nothing returned reads a)
    return np.sum(x * x) + k


def item_update_of_a_copy_of_an_argument(x, k):
    a = np.array(k)
    a[1:] += 0.5
    return np.sum(a * x)


UPDATE_ROWS = [
    (dead_item_update_in_a_loop, (X, 1), (-X, 1)),
    (item_update_of_a_copy_of_an_argument, (X, np.arange(3)), (X, np.arange(3.0))),
    (update_of_a_helper_result, (X,), (-X,)),
    (update_of_a_copy_of_an_argument, (X, np.arange(3)), (X, np.arange(3.0))),
    (update_of_arithmetic_on_an_argument, (X, np.arange(3)), (X, np.arange(3.0))),
    (dead_update_in_a_loop, (X, 1), (-X, 1)),
]


@pytest.mark.parametrize("f, raising, fine", UPDATE_ROWS, ids=lambda v: getattr(v, "__name__", ""))
def test_an_update_srcgrad_cannot_type_is_checked_when_it_runs(f, raising, fine):
    """(findings of the thorough random programs) ``a += v`` or ``a[i] += v`` with a
    float ``v`` raises in numpy where ``a`` is an integer array; srcgrad spells it ``a = a + v``, so
    where it cannot tell ``a``'s dtype before the code runs (a helper that casts on one
    path, an argument of unknown dtype) its code asks first: the same error as numpy's,
    in both modes and to second order, and the right derivative where ``a`` is a float."""
    with pytest.raises(TypeError, match="same_kind"):
        f(*raising)
    derivatives = [srcgrad.grad(f, mode=mode) for mode in MODES] + [srcgrad.hessian(f)]
    for derivative in derivatives:
        with pytest.raises(TypeError, match=r"`a` is an array of dtype int\d+.*numpy refuses"):
            derivative(*raising)
    assert_gradient(f, fine, finite_differences(f, fine))
    gradient = srcgrad.grad(f)
    columns = [
        (gradient(fine[0] + 1e-6 * e, *fine[1:]) - gradient(fine[0] - 1e-6 * e, *fine[1:])) / 2e-6
        for e in np.eye(len(fine[0]))
    ]
    np.testing.assert_allclose(srcgrad.hessian(f)(*fine), np.stack(columns, 1), atol=1e-5)


def number_items_updated(x, k):
    a = np.array(k)  # an integer array: its items are numbers, rebound then cast back
    a[1] /= 2
    b = np.arange(3) > 1
    b[0] -= 1.0  # (True, as numpy writes -1.0 into a bool array)
    a[2] *= x[0] > 0.0
    return np.sum(a * x) + np.sum(b * x)


def test_an_update_of_a_number_item_is_not_refused():
    """``a[1] /= 2`` on an integer array is ``a[1] = a[1] / 2`` in numpy too (the item is a
    number: no in-place cast to refuse): the check of ``a[1:] += v`` must not fire."""
    args = (X, np.arange(3))
    f = number_items_updated
    assert f(*args) == pytest.approx(np.sum(np.array([0, 0, 2]) * X) + np.sum([1, 0, 1] * X))
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(*args), [1.0, 0.0, 3.0])
    assert_gradient(f, args, finite_differences(f, args))


def updates_srcgrad_can_type(x, n):
    total = 0  # a Python int, rebound by a float: numpy agrees
    k = 0
    h = np.zeros_like(x)
    acc = x[0]
    for i in range(n):
        total += x[i] * 2.0
        k += 1
        h += np.tanh(x) * k
        acc *= x[i]
    m = len(x)
    m += 0.5
    return total + np.sum(h) + acc * m


def test_updates_srcgrad_can_type_are_not_checked():
    """No check where the analysis proves the update agrees with numpy: the name holds
    floats, or Python numbers (rebound, never written in place), or the value is an
    integer."""
    for mode in MODES:
        derivative = srcgrad.grad(updates_srcgrad_can_type, mode=mode)
        args = (X, 3)
        derivative(*args)
        assert "check_in_place" not in derivative.source, derivative.source
    expected = finite_differences(updates_srcgrad_can_type, args)
    assert_gradient(updates_srcgrad_can_type, args, expected)


def early_return(u, flag):
    if flag > 0.0:
        return np.tanh(u * 3.0)
    return -u


def writes_into_a_copy_of_a_helper_result(x):
    w = early_return(x, 1.0).copy()
    w[-1] += 0.5 * (np.sin(x[0]) - w[-1])
    return np.sum(w * x)


def test_a_helper_with_an_early_return_gives_floats():
    """(found by the thorough random programs) a helper with an early return is lowered
    with ``result = None`` before its paths set it; that placeholder made its result's
    dtype unknown, so a write into a copy of it was refused. ``None`` makes no kind."""
    args = (X,)
    expected = finite_differences(writes_into_a_copy_of_a_helper_result, args)
    assert_gradient(writes_into_a_copy_of_a_helper_result, args, expected)


# == family 5: nothing unknown becomes a constant ============================================
def r_of_arguments(x, y):
    return np.sum(np.r_[x, y] ** 2)


def c_of_arguments(x, y):
    return np.sum(np.c_[x, y] ** 2)


def einsum_sublists(a, b):
    return np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2]))


def einsum_sublists_inactive_first(x):
    return np.sum(np.einsum(A22, [0, 1], x, [1]) ** 2)


def einsum_sublists_with_output(x):
    return np.sum(np.einsum(A22, [0, 1], x, [1], [0]) ** 2)


A22 = np.array([[1.0, 2.0], [3.0, 4.0]])


def module_as_parameter(x, np=np):
    return np.sum(x * x)


def module_as_parameter_exp(x, np=np):
    return np.sum(np.exp(x))


def axis_from_value(x):
    return np.sum(np.sum(np.outer(x, x), axis=x[0]))


def shape_from_value(x):
    return np.sum(np.reshape(x, x[:1]))


def repeats_from_value(x):
    return np.sum(np.repeat(x, x))


def index_from_value(x):
    i = x[0] * 0.0
    return np.sum(x[i])


def norm_order(x, order):
    return np.linalg.norm(x, ord=order)


def interp_values(x):
    return np.interp(1.2, np.array([1.0, 2.0]), x[:2])


def interp_sample_points(x):
    return np.interp(1.2, x[:2] * np.array([1.0, 3.0]), np.array([1.0, 2.0]))


def rng_method(x):
    return np.sum(RNG.normal(x, 1.0))


RNG = np.random.default_rng(0)


def list_method(x):
    xs = [x[0], x[1]]
    return xs.index(x[0]) * x[2]


@pytest.mark.parametrize(
    "f, args, message, at",
    [
        (einsum_sublists, (np.eye(2) + 1, np.ones((2, 2))), "subscripts as a string", "einsum"),
        (einsum_sublists_inactive_first, (X[:2],), "as a string", "einsum"),
        (einsum_sublists_with_output, (X[:2],), "as a string", "einsum"),
        (module_as_parameter, (X,), "module's global name", "np.sum"),
        (module_as_parameter_exp, (X,), "derivative", "np.exp"),
        (axis_from_value, (X,), "'axis'", "axis="),
        (shape_from_value, (X,), "'shape'", "reshape"),
        (repeats_from_value, (X,), "'repeats'", "repeat"),
        (index_from_value, (X,), "index", "x[i]"),
        (interp_sample_points, (X,), "not in the sample points xp", "interp"),
        (rng_method, (X,), "normal", "normal"),
        (list_method, (X,), "index", "xs.index"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_unmodeled_uses_of_active_values_are_refused(f, args, message, at):
    """The reproducers gave zero gradients: the active value reached a parameter srcgrad
    does not differentiate (einsum's subscripts, sum's axis under a module passed as a
    parameter) or an index (np.r_), and was taken as a constant."""
    error = (srcgrad.NoDerivativeError, srcgrad.UnsupportedSyntaxError)
    assert_refused(f, args, error, message, at)


@pytest.mark.parametrize(
    "f, args", [(r_of_arguments, (X, Y)), (c_of_arguments, (X, Y)), (interp_values, (X,))]
)
def test_once_refused_now_differentiated(f, args):
    """np.r_ / np.c_ of active values (lowered to np.concatenate) and np.interp in its
    values fp were refused, rather than given a zero gradient; now srcgrad differentiates
    them: both modes agree with finite differences."""
    assert_gradient(f, args, finite_differences(f, args), rtol=1e-5, atol=1e-7)


def where_condition(x):
    return np.sum(np.where(x, x * 2.0, 0.0))


def copysign_sign(x):
    return np.sum(np.copysign(x, x - 1.8))


def full_like_template(x):
    return np.sum(np.full_like(x, 2.0) * x)


def arange_stop(x):
    return np.sum(np.arange(0.0, x[2], 0.5) * x[0])


def builtin_sum_start(x):
    return np.sum(sum([x, 2.0 * x], x * x))


def builtin_sum_constant_start(x):
    return np.sum(sum([x, x], 1.0))


def index_read_from_a_tape(x):
    steps = [0, 2]
    acc = [x[0], 1]
    return x[steps[acc[1]]] * acc[0]


@pytest.mark.parametrize(
    "f",
    [
        where_condition,
        copysign_sign,
        full_like_template,
        arange_stop,
        builtin_sum_start,
        builtin_sum_constant_start,
        index_read_from_a_tape,
    ],
    ids=lambda f: f.__name__,
)
def test_parameters_with_derivative_zero_stay_accepted(f):
    """Parameters whose derivative really is zero (where's condition, copysign's sign,
    full_like's template, arange's stop) are declared so and still differentiate, checked
    against autograd where it runs and finite differences."""
    expected = finite_differences(f, (X,))
    assert_gradient(f, (X,), expected, rtol=1e-5, atol=1e-7)
    if f in (where_condition, full_like_template, builtin_sum_start):
        np.testing.assert_allclose(autograd.grad(with_autograd(f))(X), expected, rtol=1e-5)


def test_builtin_sum_start_tangent_is_not_its_value():
    """Forward mode added ``start`` itself to the tangent of ``sum(xs, start)``."""
    assert_gradient(builtin_sum_constant_start, (X,), 2.0 * np.ones(3))


def test_every_parameter_of_every_rule_is_differentiated_zero_or_refused():
    """The table says, for every parameter of every rule, whether a derivative flows
    through it, is known to be zero, or cannot reach it (then analysis refuses it)."""
    from srcgrad.rules import RULES, load_scipy_stats_rules

    load_scipy_stats_rules(import_scipy=True)
    for rule in {id(r): r for r in RULES.values()}.values():
        for param in rule.params:
            modeled = param in rule.diff_params or param in rule.zero or rule.nondiff
            assert modeled or rule.unmodeled(param), (rule.name, param)
        assert rule.zero <= set(rule.params), rule.name


# == family 7: complex numbers ================================================================
C = np.array([1 + 2j, 3j, 1.0])
C0 = 2j


def complex_constant(x):
    return np.sum(np.abs(x * (1 + 2j)) ** 2)


def complex_global(x):
    return np.sum(np.abs(x * C) ** 2)


def complex_scalar_global(x):
    return np.sum(np.abs(x + C0))


def complex_local(x):
    c = 1j
    y = x * c
    return np.sum(np.abs(y))


def complex_builtin(x):
    return np.sum(np.abs(x * complex(1, 2)))


def complex_fft(x):
    return np.sum(np.abs(np.fft.fft(x)))


def complex_fft_of_constant(x):
    return np.sum(np.abs(np.fft.fft(C) * x))


def complex_emath(x):
    return np.sum(np.abs(np.emath.sqrt(-x)))


def complex_eigvals(x):
    w = np.linalg.eigvals(np.array([[0.0, 1.0], [-1.0, 0.0]]))
    return np.sum(np.abs(x[:2] * w))


def complex_asarray(x):
    return np.sum(np.abs(np.asarray(x, dtype=complex)))


def make_complex_closure():
    c = 1 - 1j

    def complex_closure(x):
        return np.sum(np.abs(x * c))

    return complex_closure


complex_closure = make_complex_closure()


@pytest.mark.parametrize(
    "f",
    [
        complex_constant,
        complex_global,
        complex_scalar_global,
        complex_local,
        complex_builtin,
        complex_fft,
        complex_fft_of_constant,
        complex_eigvals,
        complex_closure,
    ],
    ids=lambda f: f.__name__,
)
def test_complex_intermediates_are_differentiated(f):
    """Complex values from constants, globals, closures, ``complex(...)``, ``np.fft`` and
    ``eigvals``, taken back to real numbers by ``np.abs``. The reproducer (before srcgrad
    knew complex numbers) gave ``-3x`` for ``10x`` in both modes: ``np.abs``'s rule for
    real numbers, ``sign(z)``, where ``conj(z) / |z|`` belongs."""
    assert_gradient(f, (X,), finite_differences(f, (X,)), rtol=1e-6)
    if f is complex_constant:
        assert_gradient(f, (X,), 10 * X)


@pytest.mark.parametrize(
    "f, at, message",
    [
        (complex_emath, "emath", "making of complex numbers"),
        (complex_asarray, "asarray", "cast to a complex dtype"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_complex_values_without_a_rule_are_refused(f, at, message):
    assert_refused(f, (X,), srcgrad.UnsupportedSyntaxError, message, at)


def real_part_of_a_constant(x):
    return np.sum(x * np.abs(C))


def real_fft_helpers(x):
    return np.sum(x * np.fft.fftshift(np.fft.fftfreq(3)) + np.fft.irfft(np.fft.rfft(x), 3))


def test_real_values_of_complex_constants_are_fine():
    assert_gradient(real_part_of_a_constant, (X,), np.abs(C))


def test_real_results_of_fft_helpers_are_fine():
    """fftfreq and fftshift of real numbers are real; irfft of rfft of an active value is
    complex in between (n=3, an odd length: the sum of its values is the first coefficient,
    sum(x)), and with the default length the identity on an even-length input."""
    freqs = np.fft.fftshift(np.fft.fftfreq(3))
    assert_gradient(real_fft_helpers, (X,), freqs + 1.0)
    assert_gradient(real_fft_times_frequencies, (X,), freqs)
    even = np.array([0.3, -1.2, 2.0, 0.7])
    assert_gradient(round_trip, (even,), 2 * even)


def round_trip(x):
    return np.sum(np.fft.irfft(np.fft.rfft(x)) ** 2)


def real_fft_times_frequencies(x):
    return np.sum(x * np.fft.fftshift(np.fft.fftfreq(3)))


def complex_argument(x, c):
    return np.sum(np.abs(x * c) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_a_complex_argument_is_seen_by_the_analysis(mode):
    """A complex argument (once refused when its gradient came out complex): the analysis
    is told which parameters hold complex values, so ``np.abs`` takes the rule for
    complex numbers; no ComplexWarning (a real part taken silently)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = srcgrad.grad(complex_argument, mode=mode)(X, C)
        np.testing.assert_allclose(got, 2 * X * np.abs(C) ** 2, rtol=1e-12)
        assert srcgrad.grad(complex_argument, mode=mode)(1.5, 1j) == pytest.approx(3.0)


# == family 10: numerics ======================================================================
def sum_sqrt(x):
    return np.sum(np.sqrt(x))


def sum_half_power(x):
    return np.sum(x**0.5)


def sum_cbrt(x):
    return np.sum(np.cbrt(x))


def sum_arcsin(x):
    return np.sum(np.arcsin(x))


def sum_arccos(x):
    return np.sum(np.arccos(x))


def sum_arccosh(x):
    return np.sum(np.arccosh(x))


def sum_pow_array(x, y):
    return np.sum(x**y)


def sum_float_power(x):
    return np.sum(np.float_power(x, 0.5))


SPECIAL = pytest.importorskip("scipy.special")
INF = np.inf


@pytest.mark.parametrize(
    "f, args, wrt, expected",
    [
        (sum_sqrt, (np.array([0.0, 4.0]),), 0, [INF, 0.25]),
        (sum_half_power, (np.array([0.0, 4.0]),), 0, [INF, 0.25]),
        (sum_cbrt, (np.array([0.0, 8.0]),), 0, [INF, 1 / 12]),
        (sum_arcsin, (np.array([1.0, 0.6]),), 0, [INF, 1.25]),
        (sum_arccos, (np.array([-1.0, 0.6]),), 0, [-INF, -1.25]),
        (sum_arccosh, (np.array([1.0, 1.25]),), 0, [INF, 1 / 0.75]),
        (sum_pow_array, (np.array([0.0, 4.0]), np.array([0.5, 0.5])), 0, [INF, 0.25]),
        (sum_float_power, (np.array([0.0, 4.0]),), 0, [INF, 0.25]),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_a_zero_tangent_stays_zero_where_another_entry_is_infinite(f, args, wrt, expected):
    """Forward mode pushes one-hot tangents: a zero tangent times an infinite derivative
    was NaN, so every entry of the gradient but the infinite one became NaN (``sqrt`` at
    ``[0, 4]`` gave ``[inf, nan]``). Both modes give the infinity and the finite entry.
    (Where the function's own value is infinite, ``log(0)``, ``x / 0``, forward mode
    gives NaN as JAX does: a guard on every division would triple its cost.)"""
    with np.errstate(divide="ignore", invalid="ignore"):
        for mode, got in both_modes(f, args, wrt).items():
            np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=mode)


def arctan2_at_origin(x):
    return np.sum(np.arctan2(x, np.array([0.0, 1.0])))


def test_arctan2_at_the_origin_does_not_poison_the_other_entries():
    with np.errstate(divide="ignore", invalid="ignore"):
        got = srcgrad.grad(arctan2_at_origin, mode="forward")(np.array([0.0, 1.0]))
    assert got[1] == pytest.approx(0.5)


def power(x, y):
    return x**y


def math_power(x, y):
    return math.pow(x, y)


def power_zero(x):
    return x**0.0


@pytest.mark.parametrize("f", [power, math_power], ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1])
def test_power_at_zero_to_the_zero(f, wrt):
    """``x ** y`` at ``x = y = 0`` raised ZeroDivisionError (Python floats) or gave nan
    (arrays); ``x ** 0`` is 1 for every ``x`` (derivative 0 in ``x``) and the derivative
    in ``y`` is 0 at ``x == 0`` (JAX's convention)."""
    for mode, got in both_modes(f, (0.0, 0.0), wrt).items():
        assert got == 0.0, mode
    arrays = (np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.5, 0.0]))
    if f is power:
        for mode in MODES:
            got = srcgrad.grad(sum_pow_array, wrt, mode=mode)(*arrays)
            expected = [0.0, 0.0, 0.0] if wrt == 0 else [0.0, 0.0, math.log(2.0)]
            np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=mode)


def test_a_literal_exponent_zero():
    assert_gradient(power_zero, (0.0,), 0.0)
    assert_gradient(power_zero, (3.0,), 0.0)


def test_power_below_one_at_zero_for_python_floats():
    """Python's ``0.0 ** -0.5`` raises ZeroDivisionError; numpy's derivative is inf."""
    with np.errstate(divide="ignore"):
        for mode, got in both_modes(power, (0.0, 0.5)).items():
            assert got == math.inf, mode


def sum_tanh(x):
    return np.sum(np.tanh(x))


def scalar_tanh(x):
    return math.tanh(x)


def sum_expit(x):
    return np.sum(SPECIAL.expit(x))


def sum_expm1(x):
    return np.sum(np.expm1(x))


def scalar_expm1(x):
    return math.expm1(x)


def sech2(x: float) -> float:
    """1 / cosh(x)**2 without overflow."""
    e = math.exp(-2 * abs(x))
    return 4 * e / (1 + e) ** 2


TAILS = np.array([30.0, -30.0, 19.5, 0.3, -800.0])


def test_tanh_in_its_tails():
    """``tanh`` at 30 gave exactly 0 (``1 - ans**2`` with ``ans`` rounded to 1); the
    right value is 3.5e-26. autograd (``1 / cosh(x)**2``) is the oracle."""
    expected = [sech2(v) for v in TAILS]
    assert expected[0] == pytest.approx(3.5e-26, rel=0.01)
    with np.errstate(over="ignore"):
        for mode, got in both_modes(sum_tanh, (TAILS,)).items():
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, err_msg=mode)
        oracle = autograd.grad(with_autograd(sum_tanh))(TAILS[:4])
    np.testing.assert_allclose(oracle, expected[:4], rtol=1e-12, atol=0)
    for v in TAILS:
        for mode, got in both_modes(scalar_tanh, (float(v),)).items():
            assert got == pytest.approx(sech2(v), rel=1e-12, abs=0), (v, mode)


def test_expit_and_expm1_in_their_tails():
    """``expit``'s ``ans * (1 - ans)`` and ``expm1``'s ``ans + 1`` were 0 where the result
    rounds to 1 or -1."""
    x = np.array([40.0, -40.0, 0.5, -800.0, 800.0])
    expected = [math.exp(-abs(v)) / (1 + math.exp(-abs(v))) ** 2 for v in x]
    for mode, got in both_modes(sum_expit, (x,)).items():
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, err_msg=mode)
    x = np.array([-40.0, 0.5, -800.0])
    for mode, got in both_modes(sum_expm1, (x,)).items():
        np.testing.assert_allclose(got, np.exp(x), rtol=1e-12, atol=0, err_msg=mode)
    for mode, got in both_modes(scalar_expm1, (-40.0,)).items():
        assert got == pytest.approx(math.exp(-40.0), rel=1e-12), mode


def test_arcsin_next_to_one_is_accurate():
    """``1 - x * x`` cancels next to 1; ``(1 - x) * (1 + x)`` does not. The oracle is
    the same formula in 50-digit decimal arithmetic."""
    from decimal import Decimal, getcontext

    getcontext().prec = 50
    x = 1 - 2.0**-30
    exact = float(1 / (1 - Decimal(x) ** 2).sqrt())
    for mode, got in both_modes(sum_arcsin, (np.array([x]),)).items():
        assert got[0] == pytest.approx(exact, rel=1e-12), mode


# == family 16: np.mean of nothing, det of a singular matrix =================================
def mean_all(x):
    return np.mean(x * x)


def mean_rows(x):
    return np.sum(np.mean(x * x, axis=1))


def mean_axis_variable(x, axis):
    return np.sum(np.mean(x * x, axis=axis))


def average_all(x):
    return np.average(x)


@pytest.mark.parametrize(
    "f, args",
    [
        (mean_all, (np.zeros(0),)),
        (mean_all, (np.zeros((0, 3)),)),
        (mean_rows, (np.zeros((0, 3)),)),
        (mean_rows, (np.zeros((3, 0)),)),
        (mean_axis_variable, (np.zeros((0, 3)), 1)),
        (mean_axis_variable, (np.zeros((3, 0)), 1)),
        (average_all, (np.zeros(0),)),
    ],
    ids=lambda v: getattr(v, "__name__", None) or str(np.shape(v[0])),
)
def test_the_gradient_of_an_empty_mean_is_empty(f, args):
    """``np.mean`` of an empty array is nan (numpy warns); its gradient is an empty array,
    not a ZeroDivisionError inside generated code."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's own "Mean of empty slice"
        for mode, got in both_modes(f, args).items():
            assert isinstance(got, np.ndarray) and got.shape == args[0].shape, mode


def cofactors_transposed(a: np.ndarray) -> np.ndarray:
    """The derivative of det by its definition: each entry's signed minor."""
    n = a.shape[-1]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, axis=-2), j, axis=-1)
            out[..., i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return out


def det(a):
    return np.linalg.det(a)


def det_squared_batch(a):
    return np.sum(np.linalg.det(a) ** 2)


SINGULAR = [
    np.array([[1.0, 2.0], [2.0, 4.0]]),
    np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]),
    np.zeros((3, 3)),
    np.diag([1.0, 0.0, 2.0]),
    np.array([[0.0]]),
    np.random.default_rng(1).standard_normal((4, 4)),  # (invertible)
]


@pytest.mark.parametrize("a", SINGULAR, ids=lambda a: f"{a.shape}-rank{np.linalg.matrix_rank(a)}")
def test_det_of_a_singular_matrix_has_the_adjugate_as_derivative(a):
    """``np.linalg.det`` of a singular matrix raised LinAlgError (its rule used inv)."""
    expected = cofactors_transposed(a)
    assert_gradient(det, (a,), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(finite_differences(det, (a,)), expected, atol=1e-6)


def test_det_of_a_batch_with_singular_matrices():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3, 3))
    a[1] = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0])
    a[3] = 0.0
    expected = 2 * np.linalg.det(a)[:, None, None] * cofactors_transposed(a)
    assert_gradient(det_squared_batch, (a,), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(expected, finite_differences(det_squared_batch, (a,)), atol=1e-6)


@pytest.mark.parametrize("a", SINGULAR[:4], ids=lambda a: f"{a.shape}")
def test_det_hessian_at_a_singular_matrix(a):
    """The adjugate has its own tangent (``adjugate_jvp``), so the Hessian of det holds
    at singular matrices too: finite differences of the cofactor gradient."""
    got = srcgrad.hessian(det)(a)
    n = a.size
    expected = np.empty((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = 1e-6
        step = e.reshape(a.shape)
        expected[:, k] = (
            cofactors_transposed(a + step) - cofactors_transposed(a - step)
        ).ravel() / 2e-6
    np.testing.assert_allclose(got.reshape(n, n), expected, atol=1e-6)


# == families 8 and 16: arithmetic on lists ==================================================
def list_repetition(x):
    xs = [x, x * 2.0]
    ys = xs * 2
    return np.sum(ys[3])


def list_repetition_left(x):
    xs = [x]
    ys = 3 * xs
    return np.sum(ys[2])


def list_concatenation(x):
    xs = [x, x]
    ys = xs + [x * 3.0]
    return np.sum(ys[2])


def list_augmented(x):
    xs = [x]
    xs += [x * 2.0]
    return np.sum(xs[1])


def tuple_concatenation(x):
    t = (x, x)
    u = t + (x * 2.0,)
    return np.sum(u[2])


@pytest.mark.parametrize(
    "f, at",
    [
        (list_repetition, "xs * 2"),
        (list_repetition_left, "3 * xs"),
        (list_concatenation, "xs + [x * 3.0]"),
        (list_augmented, "xs += "),
        (tuple_concatenation, "t + (x * 2.0,)"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_list_arithmetic_is_refused(f, at):
    """``xs * 2`` and ``xs + [y]`` were computed as array arithmetic (a wrong gradient) or
    crashed in srcgrad's own structure check."""
    assert_refused(f, (X,), srcgrad.UnsupportedSyntaxError, "lists or tuples", at)


def array_times_list(x):
    return np.sum(x * [1.0, 2.0, 3.0])


def array_plus_list(x):
    return np.sum((x + [1.0, 2.0, 3.0]) ** 2)


def shape_arithmetic(x):
    shape = (1, 3)
    return np.sum(np.reshape(x, shape + (1,)) ** 2)


@pytest.mark.parametrize(
    "f", [array_times_list, array_plus_list, shape_arithmetic], ids=lambda f: f.__name__
)
def test_numpy_arithmetic_with_lists_stays_accepted(f):
    expected = autograd.grad(with_autograd(f))(X)
    np.testing.assert_allclose(expected, finite_differences(f, (X,)), rtol=1e-6)
    assert_gradient(f, (X,), expected)


def test_a_derivative_with_respect_to_a_norm_order_is_refused():
    """The order of a p-norm changes its value, and no rule differentiates it: it was a
    silent zero."""
    error = srcgrad.NoDerivativeError
    assert_refused(norm_order, (X, 3.0), error, "'ord'", "np.linalg.norm", wrt=1)
    assert_gradient(norm_order, (X, 3.0), finite_differences(norm_order, (X, 3.0)), rtol=1e-6)
