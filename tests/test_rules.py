"""The rule table, tested: every rule in ``srcgrad/rules/`` ``operators.py``, ``methods.py``
and ``indexing.py``.

Each row names a primitive, a small user-style function that uses it (in
``functions_for_rules.py``) and where its inputs come from. A hypothesis test
per kind of row draws shapes (broadcasting pairs for binary rules, with
scalar ``()`` shapes, size-1 axes, Python and numpy scalars), draws values
inside the function's domain, and runs :func:`check`: forward mode, reverse
mode and central finite differences must agree (``srcgrad.testing.check_grads``)
for each differentiable argument alone and for all of them together;
derivatives have the dtype of what they belong to (float32 stays float32);
and no array the caller passed in (arguments, tangents, cotangent) changes.

Known srcgrad bugs are ``xfail(strict=True)`` with the bug in the reason, so
these tests start to fail (and the mark must go) once the bug is fixed.
"""

from __future__ import annotations

import math
from typing import Any

import functions_for_rules as fn
import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rule_checks import (
    ANY,
    AWAY_FROM_0,
    BASE,
    DTYPES,
    EXPONENT,
    LOWER_FRAC,
    NONZERO,
    NOT_PYTHON,
    POSITIVE,
    UPPER_FRAC,
    Domain,
    Row,
    check,
    derivatives,
    operand,
    row_params,
    shapes,
    values,
)

import srcgrad
from srcgrad.testing import broadcastable_shapes

# -- elementwise binary rules: both operands active, broadcasting, scalars --------------------
BINARY = [
    # primitive        function            x domain     y domain
    ("+", fn.add, ANY, ANY),
    ("np.add", fn.np_add, ANY, ANY),
    ("-", fn.sub, ANY, ANY),
    ("np.subtract", fn.np_subtract, ANY, ANY),
    ("*", fn.mul, ANY, ANY),
    ("np.multiply", fn.np_multiply, ANY, ANY),
    ("/", fn.div, ANY, NONZERO),
    ("np.divide", fn.np_divide, ANY, NONZERO),
    ("**", fn.pow_op, BASE, EXPONENT),
    ("np.power", fn.np_power, BASE, EXPONENT),
    ("pow", fn.builtin_pow, BASE, EXPONENT),
    ("np.maximum", fn.np_maximum, LOWER_FRAC, UPPER_FRAC),
    ("np.maximum-swapped", fn.np_maximum, UPPER_FRAC, LOWER_FRAC),
    ("np.minimum", fn.np_minimum, LOWER_FRAC, UPPER_FRAC),
    ("np.minimum-swapped", fn.np_minimum, UPPER_FRAC, LOWER_FRAC),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, func, xdom, ydom", BINARY, ids=[row[0] for row in BINARY])
@given(data=st.data())
def test_binary(name, func, xdom, ydom, dtype, data):
    sx, sy = data.draw(broadcastable_shapes(num_shapes=2))
    scalar_side = data.draw(st.sampled_from([None, "x", "y"]))  # often make one side ()
    sx, sy = (() if scalar_side == "x" else sx), (() if scalar_side == "y" else sy)
    int_side = data.draw(st.sampled_from(["x", "y"]))  # at most one Python int operand
    x = operand(data, sx, xdom, dtype, python=True, ints=int_side == "x")
    y = operand(data, sy, ydom, dtype, ints=int_side == "y")
    check(func, (x, y))


# -- np.where: three-way broadcasting, the condition is not differentiated -------------------
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_where(dtype, data):
    sc, sx, sy = data.draw(broadcastable_shapes(num_shapes=3))
    c = data.draw(hnp.arrays(bool, sc))
    x = operand(data, sx, ANY, dtype, ints=True)
    y = operand(data, sy, ANY, dtype)
    check(fn.np_where, (c, x, y))


# -- one-argument rows: unary rules, constants, reductions, shapes, indexing, nondiff --------
RANK3 = shapes(3, 4, max_side=3)
FIXED = st.just((2, 3, 4))  # reshape rows name target shapes of 24 elements
TALL = shapes(1, 3, min_side=3)  # x[1:3] and friends
MATRIX = shapes(2, 3, min_side=2)

UNARY = [
    # unary operators and numpy functions
    Row("unary -", fn.neg),
    Row("np.negative", fn.np_negative),
    Row("unary +", fn.pos),
    Row("np.positive", fn.np_positive),
    Row("assignment", fn.assign),
    Row("float", fn.builtin_float, shapes=st.just(())),
    Row("np.exp", fn.exp),
    Row("np.log", fn.log, POSITIVE),
    Row("np.sqrt", fn.sqrt, POSITIVE),
    Row("np.sin", fn.sin),
    Row("np.cos", fn.cos),
    Row("np.tanh", fn.tanh),
    Row("np.abs", fn.np_abs, AWAY_FROM_0),
    Row("np.absolute", fn.np_absolute, AWAY_FROM_0),
    Row("abs", fn.builtin_abs, AWAY_FROM_0),
    # binary rules with one constant operand (Python int or float in the source)
    Row("x + 1", fn.add_const),
    Row("2.5 + x", fn.radd_const),
    Row("x - 0.5", fn.sub_const),
    Row("1 - x", fn.rsub_const),
    Row("x * 3", fn.mul_const),
    Row("-2.0 * x", fn.rmul_const),
    Row("x / 4.0", fn.div_const),
    Row("1.0 / x", fn.rdiv_const, NONZERO),
    Row("x ** 2", fn.square),
    Row("x ** 3.0", fn.cube_float),
    Row("x ** 0.5", fn.pow_half, POSITIVE),
    Row("2.0 ** x", fn.rpow_const, **NOT_PYTHON),
    Row("pow(x, 2)", fn.builtin_pow_const),
    Row("np.maximum(x, 0.0)", fn.maximum_const, AWAY_FROM_0),
    Row("np.minimum(1.0, x)", fn.minimum_const, Domain(exclude=(0.9, 1.1))),
    Row("np.where(x > 0, x, 0.0)", fn.relu_where, AWAY_FROM_0),
    # one argument used several times: adjoints add up
    Row("x * x", fn.square_by_mul),
    Row("x + x", fn.twice),
    Row("np.sin(x) * x", fn.sin_times_x),
    Row("y = x; y * x + y", fn.reuse_after_assign),
    # np.sum / np.mean / .sum() / .mean(): axis None, int, negative, tuple; keepdims
    Row("np.sum(x)", fn.sum_all),
    Row("np.sum(x, axis=0)", fn.sum_axis0, shapes=shapes(1)),
    Row("np.sum(x, axis=-1)", fn.sum_axis_neg1, shapes=shapes(1)),
    Row("np.sum(x, axis=(0, 2))", fn.sum_axis_tuple, shapes=RANK3),
    Row("np.sum(x, axis=(-1, 0))", fn.sum_axis_neg_tuple, shapes=shapes(2)),
    Row("np.sum(x, keepdims=True)", fn.sum_keepdims),
    Row("np.sum(x, axis=1, keepdims=True)", fn.sum_axis1_keepdims, shapes=shapes(2)),
    Row("np.sum(x, axis=(0, -1), keepdims=True)", fn.sum_tuple_keepdims, shapes=shapes(2)),
    Row("np.sum(x, -2)", fn.sum_positional_axis, shapes=shapes(2)),
    Row("x.sum()", fn.method_sum, **NOT_PYTHON),
    Row("x.sum(axis=-1)", fn.method_sum_axis, shapes=shapes(1)),
    Row("x.sum(0, keepdims=True)", fn.method_sum_positional_keepdims, shapes=shapes(1)),
    Row("np.mean(x)", fn.mean_all),
    Row("np.mean(x, axis=0)", fn.mean_axis0, shapes=shapes(1)),
    Row("np.mean(x, axis=-1)", fn.mean_axis_neg1, shapes=shapes(1)),
    Row("np.mean(x, axis=(0, 2))", fn.mean_axis_tuple, shapes=RANK3),
    Row("np.mean(x, keepdims=True)", fn.mean_keepdims),
    Row("np.mean(x, axis=-2, keepdims=True)", fn.mean_axis_neg2_keepdims, shapes=shapes(2)),
    Row("np.mean(x, axis=(1, -1), keepdims=True)", fn.mean_tuple_keepdims, shapes=RANK3),
    Row("x.mean()", fn.method_mean, **NOT_PYTHON),
    Row("x.mean(axis=(0, 1))", fn.method_mean_axis, shapes=shapes(2)),
    Row("x.mean(-1, keepdims=True)", fn.method_mean_positional_keepdims, shapes=shapes(1)),
    # np.transpose / .transpose() / .T
    Row("np.transpose(x)", fn.transpose),
    Row("np.transpose(x, (1, 0, 2))", fn.transpose_axes, shapes=shapes(3, 3)),
    Row("np.transpose(x, axes=(2, 0, 1))", fn.transpose_axes_keyword, shapes=shapes(3, 3)),
    Row("x.transpose()", fn.method_transpose, **NOT_PYTHON),
    Row("x.transpose(1, 0)", fn.method_transpose_varargs, shapes=shapes(2, 2)),
    Row("x.transpose((2, 0, 1))", fn.method_transpose_tuple, shapes=shapes(3, 3)),
    Row("x.T", fn.attr_T, **NOT_PYTHON),
    # np.reshape / .reshape(): tuple, -1, int, varargs
    Row("np.reshape(x, (6, 4))", fn.reshape_tuple, shapes=FIXED),
    Row("np.reshape(x, (4, -1))", fn.reshape_minus_one, shapes=FIXED),
    Row("np.reshape(x, -1)", fn.reshape_flat),
    Row("np.reshape(x, 24)", fn.reshape_int, shapes=FIXED),
    Row("x.reshape(3, 8)", fn.method_reshape_varargs, shapes=FIXED),
    Row("x.reshape((2, -1))", fn.method_reshape_tuple, shapes=FIXED),
    Row("x.reshape(-1)", fn.method_reshape_minus_one, **NOT_PYTHON),
    Row("x.reshape(1, 24, 1)", fn.method_reshape_new_axes, shapes=FIXED),
    # indexing with constants, slices, None and Ellipsis
    Row("x[0]", fn.index_int, shapes=shapes(1)),
    Row("x[-1]", fn.index_negative_int, shapes=shapes(1)),
    Row("x[1:3]", fn.index_slice, shapes=TALL),
    Row("x[1:]", fn.index_open_slice, shapes=shapes(1)),
    Row("x[::-1]", fn.index_reversed, shapes=shapes(1)),
    Row("x[::2]", fn.index_step, shapes=shapes(1)),
    Row("x[:, 0]", fn.index_column, shapes=shapes(2)),
    Row("x[0, 1]", fn.index_two_ints, shapes=MATRIX),
    Row("x[None]", fn.index_new_axis, **NOT_PYTHON),
    Row("x[..., 0]", fn.index_ellipsis, shapes=shapes(1)),
    Row("x[..., None]", fn.index_ellipsis_new_axis, **NOT_PYTHON),
    Row("x[1:, None, ::-2]", fn.index_mixed, shapes=MATRIX),
    Row("x[-2:, ..., 1]", fn.index_ellipsis_slice, shapes=MATRIX),
    Row("x[0] + x[1]", fn.index_twice, shapes=shapes(1, min_side=2)),
    Row("x[0:2] * x[1:3]", fn.index_overlapping, shapes=TALL),
    Row("x[np.array([0, 1, 1, 0])]", fn.index_fancy, shapes=shapes(1, min_side=2)),
    # rules with no derivative: shapes, sizes, masks
    Row("np.size", fn.times_size),
    Row("np.ndim", fn.times_ndim),
    Row("np.shape", fn.reshape_to_shape),
    Row("len", fn.over_len, shapes=shapes(1)),
    Row("np.zeros_like", fn.plus_zeros_like),
    Row("np.ones_like(x, dtype=x.dtype)", fn.times_ones_like, **NOT_PYTHON),
    Row("np.empty_like", fn.plus_size_of_empty_like),
    Row("np.sign", fn.times_sign, AWAY_FROM_0),
    Row(".shape", fn.attr_shape, **NOT_PYTHON),
    Row(".dtype", fn.attr_dtype, **NOT_PYTHON),
    Row("x * x.shape[0]", fn.times_attr_shape0, shapes=shapes(1)),
    Row("x * x.ndim", fn.attr_ndim, **NOT_PYTHON),
    Row("np.sum(x) / x.size", fn.mean_by_attr_size, **NOT_PYTHON),
]


@pytest.mark.parametrize("row, dtype", row_params(UNARY))
@given(data=st.data())
def test_unary(row, dtype, data):
    shape = data.draw(row.shapes)
    x = operand(data, shape, row.domain, dtype, scalars=row.scalars)
    check(row.func, (x,))


# -- reductions whose axis and keepdims arrive as arguments (not known statically) ------------
def axes(rank: int) -> Any:
    """None, an int or a tuple of distinct axes of an array of ``rank``, some negative."""
    if rank == 0:
        return st.sampled_from([None, ()])
    signed = st.sampled_from(range(rank)).flatmap(lambda a: st.sampled_from([a, a - rank]))
    tuples = st.lists(signed, max_size=rank, unique_by=lambda a: a % rank).map(tuple)
    return st.none() | signed | tuples


REDUCTIONS = [fn.sum_dynamic, fn.mean_dynamic, fn.method_sum_dynamic, fn.method_mean_dynamic]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", REDUCTIONS, ids=lambda f: f.__name__)
@given(data=st.data())
def test_reduction_dynamic_axis(func, dtype, data):
    shape = data.draw(shapes())
    x = data.draw(values(shape, ANY, dtype))
    axis = data.draw(axes(len(shape)))
    check(func, (x, axis, data.draw(st.booleans())))


# -- @, np.matmul, np.dot, .dot(): 1-D and 2-D in all four combinations, batched -------------
MATMUL_RANKS = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 2), (2, 3), (3, 3), (3, 1), (1, 3)]
DOT_RANKS = [
    (1, 1),
    (1, 2),
    (2, 1),
    (2, 2),
    (3, 2),
    (3, 1),
    (0, 0),
    (0, 1),
    (2, 0),
]
MATMULS = [
    ("@", fn.matmul_op, r) for r in MATMUL_RANKS
] + [
    ("np.matmul", fn.np_matmul, r) for r in MATMUL_RANKS
] + [
    ("np.dot", fn.np_dot, r) for r in DOT_RANKS
] + [
    (".dot()", fn.method_dot, r) for r in DOT_RANKS if 0 not in getattr(r, "values", [r])[0]
]  # fmt: skip


def _matmul_id(row) -> str:
    name, _, ranks = row
    ranks = ranks.values[0] if hasattr(ranks, "values") else ranks
    return f"{name}-{ranks[0]}d-{ranks[1]}d"


def _param(row):
    name, func, ranks = row
    if hasattr(ranks, "values"):  # a pytest.param carrying an xfail mark
        return pytest.param(name, func, ranks.values[0], marks=ranks.marks, id=_matmul_id(row))
    return pytest.param(name, func, ranks, id=_matmul_id(row))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, func, ranks", [_param(row) for row in MATMULS])
@given(data=st.data())
def test_matmul(name, func, ranks, dtype, data):
    n, k, m = (data.draw(st.integers(1, 4)) for _ in range(3))
    batch = data.draw(st.integers(1, 3))
    ra, rb = ranks
    sa = {0: (), 1: (k,), 2: (n, k), 3: (data.draw(st.sampled_from([1, batch])), n, k)}[ra]
    sb = {0: (), 1: (k,), 2: (k, m), 3: (data.draw(st.sampled_from([1, batch])), k, m)}[rb]
    a = operand(data, sa, ANY, dtype, scalars=name == "np.dot")
    b = operand(data, sb, ANY, dtype, scalars=name == "np.dot")
    check(func, (a, b))


# -- transpose and reshape with axes / shape as arguments ------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_transpose_dynamic_axes(dtype, data):
    shape = data.draw(shapes())
    x = data.draw(values(shape, ANY, dtype))
    axes = data.draw(st.permutations(range(len(shape))).map(tuple))  # None: see xfail below
    check(fn.transpose_dynamic, (x, axes))


def target_shapes(shape: tuple) -> Any:
    """Shapes with as many elements as ``shape``: tuples, -1, a bare int."""
    n = math.prod(shape)
    choices = [(n,), (-1,), (1, n), (n, 1), (1, -1), n, -1, tuple(reversed(shape))]
    choices += [shape[:i] + (-1,) + shape[i + 1 :] for i in range(len(shape))]
    return st.sampled_from(choices)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "func", [fn.reshape_dynamic, fn.method_reshape_dynamic], ids=lambda f: f.__name__
)
@given(data=st.data())
def test_reshape_dynamic_shape(func, dtype, data):
    shape = data.draw(shapes())
    x = data.draw(values(shape, ANY, dtype))
    check(func, (x, data.draw(target_shapes(shape))))


# -- an index that arrives as an argument -----------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_index_dynamic(dtype, data):
    shape = data.draw(shapes(1))
    x = data.draw(values(shape, ANY, dtype))
    i = data.draw(st.integers(-shape[0], shape[0] - 1))
    i = data.draw(
        st.sampled_from(
            [i, np.int64(i), slice(i, None), slice(None, None, -1), (Ellipsis, 0), (None, i)]
        )
    )
    check(fn.index_dynamic, (x, i))


# -- Python scalars through builtins ----------------------------------------------------------
@given(
    x=st.floats(0.1, 3.0) | st.floats(-3.0, -0.1),
    y=st.floats(-3.0, 3.0),
)
def test_builtins_on_python_floats(x, y):
    check(fn.builtin_scalars, (x, y))


# -- conventions at non-smooth points (documented in srcgrad/rules/operators.py) ----------


@pytest.mark.parametrize(
    "func, args, wrt, expected",
    [
        pytest.param(fn.np_abs, (np.array([0.0, -2.0, 3.0]),), 0, [0, -1, 1], id="abs-at-0"),
        pytest.param(fn.builtin_abs, (np.array([0.0, 2.0]),), 0, [0, 1], id="builtin-abs-at-0"),
        pytest.param(fn.np_maximum, (np.ones(2), np.array([1.0, 0.0])), 0, [0.5, 1], id="max-x"),
        pytest.param(fn.np_maximum, (np.ones(2), np.array([1.0, 0.0])), 1, [0.5, 0], id="max-y"),
        pytest.param(fn.np_minimum, (np.ones(2), np.array([1.0, 0.0])), 0, [0.5, 0], id="min-x"),
        pytest.param(fn.np_minimum, (np.ones(2), np.array([1.0, 2.0])), 1, [0.5, 0], id="min-y"),
        pytest.param(fn.pow_op, (np.zeros(2), np.array([2.0, 3.0])), 1, [0, 0], id="0**y-dy"),
        pytest.param(fn.pow_op, (np.zeros(2), np.array([2.0, 1.0])), 0, [0, 1], id="0**y-dx"),
    ],
)
def test_conventions_at_kinks(func, args, wrt, expected):
    forward, reverse = derivatives(func, args, wrt)
    np.testing.assert_allclose(forward, expected)
    np.testing.assert_allclose(reverse, expected)


# -- reproductions of fixed bugs -------------------------------------------------------
@pytest.mark.parametrize("static", [True, False], ids=["static-axes", "dynamic-axes"])
def test_transpose_negative_axes(static):
    x = np.arange(24.0).reshape(2, 3, 4)
    if static:
        check(fn.transpose_negative_axes, (x,))
    else:
        check(fn.transpose_dynamic, (x, (-1, 0, 1)))


def test_transpose_axes_none_as_argument():
    check(fn.transpose_dynamic, (np.arange(6.0).reshape(2, 3), None))


@pytest.mark.parametrize(
    "func",
    [
        fn.method_sum,
        fn.method_mean,
        fn.method_transpose,
        fn.attr_T,
        fn.method_reshape_minus_one,
        fn.index_new_axis,
        fn.index_ellipsis_new_axis,
        fn.attr_shape,
    ],
    ids=lambda f: f.__name__,
)
def test_forward_mode_with_python_float_tangent_of_0d_array(func):
    x = np.array(1.5)
    _, expected = srcgrad.jvp(func)(x, np.array(1.0))  # a 0-d array tangent works
    _, tangent = srcgrad.jvp(func)(x, 1.0)
    np.testing.assert_allclose(tangent, expected)


def test_power_python_base_keeps_float32():
    y = np.linspace(-1, 1, 3, dtype=np.float32)
    _, tangent = srcgrad.jvp(fn.pow_op, wrt=1)(2.0, y, np.ones_like(y))
    assert tangent.dtype == np.float32
