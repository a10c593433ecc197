"""Reduction rules, tested: ``srcgrad/rules/reductions.py`` and the reductions of
``methods.py`` (sum, mean, max, min) with tuple axes and keepdims.

Each row names a reduction, a small user-style function that uses it (in
``functions_reductions.py``) and where its inputs come from; :func:`check`
runs forward mode, reverse mode and central finite differences, checks dtypes
(float32 stays float32) and that nothing the caller passed in changes.
Reductions with kinks (max, min, ptp, the inf and 1 norms, std) take values
whose magnitudes are at least 0.2 apart (:func:`distinct`), so no tie is in
finite-difference reach; the conventions at ties and zeros are tested on
their own at the end.
"""

from __future__ import annotations

import math
from typing import Any

import functions_reductions as fn
import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rule_checks import (
    ANY,
    AWAY_FROM_0,
    DTYPES,
    NOT_PYTHON,
    POSITIVE,
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

RANK3 = shapes(3, 3, max_side=3)
MATRIX = shapes(2, 2)
TALL = shapes(1, min_side=2)  # ddof=1 needs two elements per reduction
# products: factors near 1 and at most 27 of them, so that with several zeros the odd
# higher-order terms of float32 central differences (h**2 * product of the others) stay small
SMALL = Domain(-1.25, 1.25)
FEW = shapes(max_side=3)


# -- where values come from ----------------------------------------------------------------
@st.composite
def distinct(draw, shape, dtype, lines: bool = False) -> np.ndarray:
    """Values of random sign whose magnitudes are at least 0.2 apart (no ties, none near 0).
    With ``lines``, every index of the last axis gets its own scale instead, so that sums of
    absolute values over the other axes are far apart (matrix 1 and inf norms)."""
    n = math.prod(shape)
    jitter = draw(values(shape, Domain(0.0, 0.1), np.float64))
    signs = draw(hnp.arrays(bool, shape))
    if lines:
        order = np.array(draw(st.permutations(range(shape[-1]))), dtype=float)
        magnitude = (1.0 + order) * (1.0 + jitter)
    else:
        order = np.array(draw(st.permutations(range(n))), dtype=float).reshape(shape)
        magnitude = 0.2 + 0.3 * order + jitter
    return np.asarray(np.where(signs, magnitude, -magnitude), dtype=dtype)


def axes(rank: int) -> Any:
    """None, an int or a tuple of distinct axes of an array of ``rank``, some negative."""
    if rank == 0:
        return st.sampled_from([None, ()])
    signed = st.sampled_from(range(rank)).flatmap(lambda a: st.sampled_from([a, a - rank]))
    tuples = st.lists(signed, max_size=rank, unique_by=lambda a: a % rank).map(tuple)
    return st.none() | signed | tuples


def reduced_size(shape: tuple, axis) -> int:
    if axis is None:
        return math.prod(shape)
    return math.prod(shape[a] for a in (axis if isinstance(axis, tuple) else (axis,)))


# -- one-argument rows with axis and keepdims in the source ---------------------------------
SMOOTH = [
    # sum and mean: tuple axes with negative entries and keepdims
    Row("np.sum(x, axis=(-1, 0), keepdims=True)", fn.sum_tuple_neg_keepdims, shapes=shapes(2)),
    Row("np.mean(x, axis=(0, -2, -1))", fn.mean_all_neg_tuple, shapes=RANK3),
    # prod
    Row("np.prod(x)", fn.prod_all, SMALL, FEW),
    Row("np.prod(x, axis=0)", fn.prod_axis0, SMALL, shapes=shapes(1, max_side=3)),
    Row(
        "np.prod(x, axis=-1, keepdims=True)",
        fn.prod_neg_axis_keepdims,
        SMALL,
        shapes(1, max_side=3),
    ),
    Row("np.prod(x, axis=(0, 2))", fn.prod_tuple, SMALL, shapes=RANK3),
    Row("x.prod()", fn.method_prod, SMALL, FEW, **NOT_PYTHON),
    Row(
        "x.prod(axis=(-1, 0), keepdims=True)",
        fn.method_prod_tuple_keepdims,
        SMALL,
        shapes(2, max_side=3),
    ),
    # var
    Row("np.var(x)", fn.var_all),
    Row("np.var(x, axis=0, ddof=1)", fn.var_axis0_ddof1, shapes=TALL),
    Row("np.var(x, axis=(0, -1), keepdims=True)", fn.var_tuple_keepdims, shapes=shapes(2)),
    Row("x.var()", fn.method_var, **NOT_PYTHON),
    Row("x.var(-1, ddof=1)", fn.method_var_neg_axis, shapes=TALL),
    # cumsum and cumprod
    Row("np.cumsum(x)", fn.cumsum_flat),
    Row("np.cumsum(x, axis=0)", fn.cumsum_axis0, shapes=shapes(1)),
    Row("np.cumsum(x, -1)", fn.cumsum_neg_axis, shapes=shapes(1)),
    Row("x.cumsum()", fn.method_cumsum, **NOT_PYTHON),
    Row("x.cumsum(axis=-1)", fn.method_cumsum_axis, shapes=shapes(1)),
    Row("np.cumprod(x)", fn.cumprod_flat, SMALL, FEW),
    Row("np.cumprod(x, axis=0)", fn.cumprod_axis0, SMALL, shapes=shapes(1, max_side=3)),
    Row("np.cumprod(x, axis=-1)", fn.cumprod_neg_axis, SMALL, shapes=shapes(1, max_side=3)),
    Row("x.cumprod()", fn.method_cumprod, SMALL, FEW, **NOT_PYTHON),
    Row("x.cumprod(1)", fn.method_cumprod_axis, SMALL, shapes=shapes(2, max_side=3)),
    # average without weights
    Row("np.average(x)", fn.average_all),
    Row("np.average(x, axis=-1, keepdims=True)", fn.average_axis_keepdims, shapes=shapes(1)),
    Row("np.average(x, axis=0, returned=True)", fn.average_returned, shapes=shapes(1)),
    # nansum and nanmean (on values without NaN; NaNs below)
    Row("np.nansum(x)", fn.nansum_all),
    Row("np.nansum(x, axis=(0, -1), keepdims=True)", fn.nansum_tuple_keepdims, shapes=shapes(2)),
    Row("np.nanmean(x)", fn.nanmean_all),
    Row("np.nanmean(x, axis=-1)", fn.nanmean_neg_axis, shapes=shapes(1)),
    # norms away from their kinks (2-norm, Frobenius, p-norms, ord 0)
    Row("np.linalg.norm(x)", fn.norm_all, AWAY_FROM_0),
    Row("norm(x, axis=-1, keepdims=True)", fn.norm_axis_keepdims, AWAY_FROM_0, shapes(1)),
    Row("norm(x, 'fro', axis=(0, -1))", fn.norm_fro_tuple, AWAY_FROM_0, shapes(2)),
    Row("norm(x, 2)", fn.norm_vector_2, AWAY_FROM_0, shapes(1, 1)),
    Row("norm(x, ord=3, axis=-1)", fn.norm_vector_3, AWAY_FROM_0, shapes(1)),
    Row("norm(x, ord=0.5, axis=0)", fn.norm_vector_half, AWAY_FROM_0, shapes(1)),
    Row("x * norm(x, ord=0, axis=-1, keepdims=True)", fn.norm_vector_0, AWAY_FROM_0, shapes(1)),
    # trace
    Row("np.trace(x)", fn.trace, shapes=shapes(2)),
    Row("np.trace(x, 1)", fn.trace_offset, shapes=shapes(2)),
    Row("np.trace(x, offset=-1, axis1=2, axis2=0)", fn.trace_axes, shapes=RANK3),
    Row("x.trace()", fn.method_trace, shapes=shapes(2)),
    Row("x.trace(0, -1, 1)", fn.method_trace_axes, shapes=RANK3),
]


@pytest.mark.parametrize("row, dtype", row_params(SMOOTH))
@given(data=st.data())
def test_reduction(row, dtype, data):
    shape = data.draw(row.shapes)
    x = operand(data, shape, row.domain, dtype, scalars=row.scalars)
    check(row.func, (x,))


# -- rows with kinks: values with distinct magnitudes ----------------------------------------
KINKED = [
    Row("np.max(x)", fn.max_all),
    Row("np.max(x, axis=0)", fn.max_axis0, shapes=shapes(1)),
    Row("np.max(x, axis=(0, -1), keepdims=True)", fn.max_tuple_keepdims, shapes=shapes(2)),
    Row("np.amax(x, axis=-1)", fn.amax_neg_axis, shapes=shapes(1)),
    Row("np.min(x, keepdims=True)", fn.min_all_keepdims),
    Row("np.min(x, axis=(-1, 0))", fn.min_tuple, shapes=shapes(2)),
    Row("np.amin(x, 1, keepdims=True)", fn.amin_axis1_keepdims, shapes=shapes(2)),
    Row("x.max(axis=-1)", fn.method_max_axis, shapes=shapes(1)),
    Row("x.min((0, 1), keepdims=True)", fn.method_min_tuple_keepdims, shapes=shapes(2)),
    Row("np.ptp(x)", fn.ptp_all),
    Row("np.ptp(x, axis=0)", fn.ptp_axis0, shapes=shapes(1)),
    Row("np.ptp(x, axis=(0, -1), keepdims=True)", fn.ptp_tuple_keepdims, shapes=shapes(2)),
    Row("np.std(x)", fn.std_all),
    Row("np.std(x, axis=-1, keepdims=True)", fn.std_neg_axis_keepdims, shapes=shapes(1)),
    Row("np.std(x, axis=(0, 2), ddof=1)", fn.std_tuple_ddof1, shapes=shapes(3, 3, min_side=2)),
    Row("x.std()", fn.method_std, **NOT_PYTHON),
    Row("x.std(axis=0, keepdims=True, ddof=1)", fn.method_std_axis_keepdims, shapes=TALL),
    Row("norm(x, ord=1, axis=0)", fn.norm_vector_1, shapes=shapes(1)),
    Row("norm(x, ord=np.inf, axis=-1)", fn.norm_vector_inf, shapes=shapes(1)),
    Row("norm(x, ord=-np.inf, axis=0, keepdims=True)", fn.norm_vector_neg_inf, shapes=shapes(1)),
]
# matrix 1 / inf norms: the sums of absolute values over one axis are far apart
MATRIX_NORMS = [
    Row("norm(x, ord=1)", fn.norm_matrix_1, shapes=MATRIX),
    Row("norm(x, ord=np.inf, axis=(-1, 0))", fn.norm_matrix_inf, shapes=shapes(2, 3)),
    Row("norm(x, ord=-1, axis=(0, 1), keepdims=True)", fn.norm_matrix_neg_1, shapes=MATRIX),
]


@pytest.mark.parametrize("row, dtype", row_params(KINKED + MATRIX_NORMS))
@given(data=st.data())
def test_reduction_with_kinks(row, dtype, data):
    shape = data.draw(row.shapes)
    x = data.draw(distinct(shape, dtype, lines=row in MATRIX_NORMS))
    if row.scalars and shape == ():
        x = data.draw(st.sampled_from([x, x.dtype.type(x), float(x)]))
    check(row.func, (x,))


# -- axis, keepdims (and ddof) as arguments: the runtime helpers -----------------------------
DYNAMIC = [
    (fn.max_dynamic, "distinct"),
    (fn.min_dynamic, "distinct"),
    (fn.method_max_dynamic, "distinct"),
    (fn.ptp_dynamic, "distinct"),
    (fn.prod_dynamic, SMALL),
    (fn.method_prod_dynamic, SMALL),
    (fn.nansum_dynamic, ANY),
    (fn.nanmean_dynamic, ANY),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func, domain", DYNAMIC, ids=[f.__name__ for f, _ in DYNAMIC])
@given(data=st.data())
def test_reduction_dynamic_axis(func, domain, dtype, data):
    shape = data.draw(FEW if domain is SMALL else shapes())
    if domain == "distinct":
        x = data.draw(distinct(shape, dtype))
    else:
        x = data.draw(values(shape, domain, dtype))
    check(func, (x, data.draw(axes(len(shape))), data.draw(st.booleans())))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "func", [fn.var_dynamic, fn.std_dynamic, fn.method_std_dynamic], ids=lambda f: f.__name__
)
@given(data=st.data())
def test_moment_dynamic_axis_and_ddof(func, dtype, data):
    shape = data.draw(shapes())
    x = data.draw(distinct(shape, dtype))
    axis = data.draw(axes(len(shape)))
    ddof = data.draw(st.sampled_from([0, 1] if reduced_size(shape, axis) > 1 else [0]))
    check(func, (x, axis, data.draw(st.booleans()), ddof))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "func, domain",
    [(fn.cumsum_dynamic, ANY), (fn.cumprod_dynamic, SMALL), (fn.method_cumprod_dynamic, SMALL)],
    ids=["cumsum", "cumprod", "method_cumprod"],
)
@given(data=st.data())
def test_cumulative_dynamic_axis(func, domain, dtype, data):
    shape = data.draw(shapes(1, max_side=3))
    x = data.draw(values(shape, domain, dtype))
    rank = len(shape)
    check(func, (x, data.draw(st.none() | st.integers(-rank, rank - 1))))


# ints: a Python float ord would be differentiated too (the rule treats ord as constant)
VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 3, 0]
MATRIX_ORDS = [None, "fro", 1, -1, np.inf, -np.inf]


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_norm_dynamic(dtype, data):
    shape = data.draw(shapes(1))
    rank = len(shape)
    kind = data.draw(st.sampled_from(["flat", "vector", "matrix"] if rank > 1 else ["vector"]))
    if kind == "flat":  # axis None of any rank: the 2-norm of all elements
        ord, axis, x = None, None, data.draw(distinct(shape, dtype))
    elif kind == "vector":
        ord = data.draw(st.sampled_from(VECTOR_ORDS))
        axis = data.draw(st.integers(-rank, rank - 1) | st.just(None if rank == 1 else -1))
        x = data.draw(distinct(shape, dtype))
    else:  # matrix norms; 1 and inf take the extremum over the last axis (see distinct)
        ord = data.draw(st.sampled_from(MATRIX_ORDS))
        first = data.draw(st.integers(0, rank - 2))
        axis = (first, -1) if ord in (1, -1, None, "fro") else (-1, first)
        x = data.draw(distinct(shape, dtype, lines=True))
    check(fn.norm_dynamic_boxed, (x, (ord,), axis, data.draw(st.booleans())))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_trace_dynamic(dtype, data):
    shape = data.draw(shapes(2, 3))
    x = data.draw(values(shape, ANY, dtype))
    rank = len(shape)
    axis1, axis2 = data.draw(st.permutations(range(rank)))[:2]
    axis1 -= data.draw(st.sampled_from([0, rank]))  # sometimes negative
    offset = data.draw(st.integers(-2, 2))
    check(fn.trace_dynamic, (x, offset, axis1, axis2))


# -- np.average with weights: x and weights both differentiated -------------------------------
WEIGHTED = [
    # function, (x shape, weights shape) from a drawn shape of rank >= 2
    (fn.average_weighted, lambda s: (s, s)),
    (fn.average_weighted_axis, lambda s: (s, s[:1])),  # 1-D weights along axis 0
    (fn.average_weighted_axis, lambda s: (s, s)),
    (fn.average_weighted_tuple, lambda s: (s, (s[-1], s[0]))),  # weights in axis order
    (fn.average_weighted_keepdims, lambda s: (s, s[1:2])),
    # returned=True: (average, sum of the weights)
    (fn.average_returned_weighted, lambda s: (s, s[:1])),
    (fn.average_returned_weighted, lambda s: (s, s)),
    (fn.average_returned_tuple_keepdims, lambda s: (s, (s[-1], s[0]))),
    (fn.average_returned_total, lambda s: (s, s)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_average_weighted(dtype, data):
    func, layout = data.draw(st.sampled_from(WEIGHTED))
    sx, sw = layout(data.draw(shapes(2)))
    x = data.draw(values(sx, ANY, dtype))
    w = data.draw(values(sw, POSITIVE, dtype))
    check(func, (x, w))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_average_weighted_dynamic(dtype, data):
    shape = data.draw(shapes(1))
    rank = len(shape)
    axis = data.draw(st.none() | st.integers(-rank, rank - 1) | axes(rank))
    sw = shape
    if axis is not None and data.draw(st.booleans()):  # weights along the reduced axes only
        sw = tuple(shape[a] for a in (axis if isinstance(axis, tuple) else (axis,)))
    x = data.draw(values(shape, ANY, dtype))
    w = data.draw(values(sw, POSITIVE, dtype))
    check(fn.average_dynamic, (x, w, axis, data.draw(st.booleans())))


# -- NaN-skipping reductions on arrays with NaNs (made inside the function) -------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "func", [fn.nansum_of_masked, fn.nanmean_of_masked], ids=lambda f: f.__name__
)
@given(data=st.data())
def test_nan_reductions_skip_nans(func, dtype, data):
    x = data.draw(values(data.draw(shapes(1)), AWAY_FROM_0, dtype))
    x[0] = np.abs(x[0])  # every slice keeps a value that is not NaN
    check(func, (x,))


# -- np.prod and np.cumprod with exact zeros: multilinear, so finite differences are exact ----
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "func",
    [fn.prod_axis0, fn.prod_all, fn.cumprod_axis0, fn.cumprod_flat],
    ids=lambda f: f.__name__,
)
@given(data=st.data())
def test_products_with_zeros(func, dtype, data):
    shape = data.draw(shapes(1, max_side=3))
    x = data.draw(values(shape, SMALL, dtype))
    x = np.where(data.draw(hnp.arrays(bool, shape)), 0, x).astype(dtype)
    check(func, (x,))


# -- conventions at ties and zeros (documented in reductions.py) ------------------------------


def a(*v):
    return np.array(v, dtype=float)


CONVENTIONS = [
    # products: exact with zeros, no division by x
    ("prod-one-zero", fn.prod_all, a(2, 0, 3), [0, 6, 0]),
    ("prod-two-zeros", fn.prod_all, a(0, 2, 0), [0, 0, 0]),
    ("prod-axis-zero", fn.prod_axis0, a([2, 0], [0, 3]), [[0, 3], [2, 0]]),
    ("cumprod-one-zero", fn.cumprod_flat, a(2, 0, 3, 4), [1, 32, 0, 0]),
    ("cumprod-two-zeros", fn.cumprod_flat, a(2, 0, 3, 0), [1, 8, 0, 0]),
    ("cumprod-leading-zero", fn.cumprod_axis0, a(0, 5, 2), [16, 0, 0]),
    # ties share evenly
    ("max-tie", fn.max_all, a(1, 3, 3), [0, 0.5, 0.5]),
    ("min-tie-axis", fn.min_tuple, a([1, 1], [2, 1]), [[1 / 3, 1 / 3], [0, 1 / 3]]),
    ("ptp-tie", fn.ptp_all, a(1, 3, 3), [-1, 0.5, 0.5]),
    ("ptp-all-equal", fn.ptp_all, a(2, 2, 2), [0, 0, 0]),
    ("norm-inf-tie", fn.norm_vector_inf, a(-3, 3, 1), [-0.5, 0.5, 0]),
    ("norm-neg-inf-tie", fn.norm_vector_neg_inf, a(-1, 1, 3), [-0.5, 0.5, 0]),
    ("matrix-norm-1-tie", fn.norm_matrix_1, a([1, -2], [1, 0]), [[0.5, -0.5], [0.5, 0]]),
    # zero norms and zero variance: derivative 0
    ("norm-at-0", fn.norm_all, a(0, 0, 0), [0, 0, 0]),
    ("norm-2-at-0", fn.norm_vector_2, a(0, 0), [0, 0]),
    ("norm-1-at-0", fn.norm_vector_1, a(0, -2, 3), [0, -1, 1]),
    ("norm-3-at-0", fn.norm_vector_3, a(0, 0), [0, 0]),
    ("norm-half-with-0", fn.norm_vector_half, a(0, 4), [0, 1]),
    ("norm-inf-at-0", fn.norm_vector_inf, a(0, 0), [0, 0]),
    ("fro-at-0", fn.norm_fro_tuple, np.zeros((2, 2)), np.zeros((2, 2))),
    ("std-zero-variance", fn.std_all, a(2, 2, 2), [0, 0, 0]),
    ("std-zero-variance-axis", fn.std_neg_axis_keepdims, a([1, 1], [1, 3]), [[0, 0], [-0.5, 0.5]]),
]


@pytest.mark.parametrize(
    "func, x, expected", [c[1:] for c in CONVENTIONS], ids=[c[0] for c in CONVENTIONS]
)
def test_conventions(func, x, expected):
    forward, reverse = derivatives(func, (x,))
    np.testing.assert_allclose(forward, expected, atol=1e-12)
    np.testing.assert_allclose(reverse, expected, atol=1e-12)


def test_nan_elements_get_zero_derivative():
    x = a(1, -1, 3)  # the -1 becomes NaN inside
    for func, expected in [(fn.nanmean_of_masked, [0.5, 0, 0.5])]:
        forward, reverse = derivatives(func, (x,))
        np.testing.assert_allclose(forward, expected)
        np.testing.assert_allclose(reverse, expected)


def test_ndarray_ptp_is_gone():
    """numpy 2 removed ``ndarray.ptp``, so srcgrad has no rule for it (np.ptp has one)."""
    assert not hasattr(np.ndarray, "ptp")


def test_average_returned_must_be_a_literal():
    with pytest.raises(srcgrad.errors.NoDerivativeError, match="returned given as a literal"):
        srcgrad.grad(fn.average_returned_variable)(a(1, 2, 3), False)


@pytest.mark.parametrize(
    "ord, at_eye", [(2, 0.5), (-2, 0.5), ("nuc", 1.0)], ids=["ord-2", "ord--2", "nuc"]
)
def test_singular_value_norms_share_ties_and_are_0_at_0(ord, at_eye):
    """Tied extreme singular values share the derivative evenly (the minimum-norm
    subgradient); singular values 0 take none, so the derivative at 0 is 0."""
    for x, expected in ((np.eye(2), at_eye * np.eye(2)), (np.zeros((2, 3)), np.zeros((2, 3)))):
        forward, reverse = derivatives(fn.norm_dynamic, (x, ord, None, False))
        np.testing.assert_allclose(forward, expected, atol=1e-12)
        np.testing.assert_allclose(reverse, expected, atol=1e-12)


# -- a keyword the rule does not know is an error, never a silent zero ----------------------
@pytest.mark.parametrize("func", [fn.sum_where, fn.max_initial], ids=lambda f: f.__name__)
def test_unsupported_keyword_raises(func):
    with pytest.raises(srcgrad.errors.NoDerivativeError, match="keyword"):
        srcgrad.grad(func)(a(-1, 2, 3))


def test_cumprod_of_tiny_float32_values_has_finite_derivatives():
    # found by hypothesis: products of the smallest normal float32 numbers underflow while
    # the tangents divided by them add up to inf, and 0 * inf was nan
    x = np.full((2, 3), np.finfo(np.float32).tiny, dtype=np.float32)
    check(fn.method_cumprod, (x,))
