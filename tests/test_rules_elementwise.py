"""The elementwise rules of ``srcgrad/rules/elementwise.py``, tested.

Like ``test_rules.py``: each row names a primitive, a small function using it
(in ``functions_elementwise.py``) and where its inputs come from, and
:func:`rule_checks.check` compares forward mode, reverse mode and finite
differences for every differentiable argument (alone and together), checks
dtypes and that no input changes. Values stay inside each function's domain
and away from its kinks and jumps by more than finite differences reach
(``eps`` times a standard normal direction: about 4e-3 for float32).

Besides ``Domain`` from ``rule_checks``, an operand may come from ``Choices``
(elements drawn from a few exact values: divisors of ``np.mod`` and friends,
so that ``x / y`` stays away from integers) or ``Tenths`` (a domain scaled by
1/10, for ``np.round(x, 1)``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import functions_elementwise as fn
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
    row_params,
    scalar_forms,
    values,
)

import srcgrad
from srcgrad.testing import broadcastable_shapes


# -- where values come from ---------------------------------------------------------------
class Choices(NamedTuple):
    """Elements drawn from a few exact values."""

    values: tuple[float, ...]

    def ints(self) -> Any:
        return st.sampled_from([int(v) for v in self.values if v == int(v)])


class Tenths(NamedTuple):
    """A domain scaled by 1/10: ``Tenths(LOWER_FRAC)`` keeps ``10 * x`` off half-integers."""

    domain: Domain

    def ints(self) -> Any:
        return st.nothing()


#: divisors for mod/fmod/floor_divide: with x in LOWER_FRAC (fractional part in
#: [0.1, 0.4]) x / y stays at least 0.05 from an integer, 0.1 in x (and in y)
DIVISOR = Choices((-2.0, -1.0, -0.5, 0.5, 1.0, 2.0))
# clip(x, lo, hi): x, lo and hi in separate fractional bands, so no two are within 0.15
CLIP_X = Domain(frac=(0.1, 0.3))
CLIP_LO = Domain(frac=(0.45, 0.6))
CLIP_HI = Domain(frac=(0.75, 0.9))


def draw_values(data, shape, dom, dtype) -> np.ndarray:
    if isinstance(dom, Choices):
        return data.draw(hnp.arrays(dtype, shape, elements=st.sampled_from(dom.values)))
    if isinstance(dom, Tenths):
        x = data.draw(values(shape, dom.domain, dtype))
        return np.asarray(x / 10, dtype=dtype)
    return data.draw(values(shape, dom, dtype))


def draw_operand(data, shape, dom, dtype, scalars=True, python=True, ints=False) -> Any:
    """Values for ``shape``; () may come as a 0-d array, numpy scalar, Python float or int."""
    x = draw_values(data, shape, dom, dtype)
    if scalars and shape == ():
        x = data.draw(scalar_forms(x, python, None))
        if ints and data.draw(st.booleans()):
            x = data.draw(dom.ints())
    return x


# -- binary functions: both operands active, broadcasting, scalars, one int operand -----------
class Binary(NamedTuple):
    name: str
    func: Any
    xdom: Any = ANY
    ydom: Any = ANY
    ints: str = "xy"  # the operands that may be drawn as Python ints


BINARY = [
    Binary("np.true_divide", fn.true_divide, ANY, NONZERO),
    Binary("np.float_power", fn.float_power, BASE, EXPONENT),
    Binary("np.fmax", fn.fmax, LOWER_FRAC, UPPER_FRAC),
    Binary("np.fmax-swapped", fn.fmax, UPPER_FRAC, LOWER_FRAC),
    Binary("np.fmin", fn.fmin, LOWER_FRAC, UPPER_FRAC),
    Binary("np.fmin-swapped", fn.fmin, UPPER_FRAC, LOWER_FRAC),
    Binary("np.arctan2", fn.arctan2, NONZERO, ANY),  # x != 0: off the origin and the branch cut
    Binary("np.hypot", fn.hypot, NONZERO, ANY),
    Binary("np.logaddexp", fn.logaddexp),
    Binary("np.logaddexp2", fn.logaddexp2),
    Binary("np.mod", fn.mod, LOWER_FRAC, DIVISOR, ints="y"),
    Binary("np.remainder", fn.remainder, LOWER_FRAC, DIVISOR, ints="y"),
    Binary("%", fn.mod_op, LOWER_FRAC, DIVISOR, ints="y"),
    Binary("np.fmod", fn.fmod, LOWER_FRAC, DIVISOR, ints="y"),
    Binary("np.copysign", fn.copysign, AWAY_FROM_0, AWAY_FROM_0),
    # comparisons, predicates and floor division: no derivative of their own
    Binary("np.floor_divide", fn.floor_divide, LOWER_FRAC, DIVISOR, ints="y"),
    Binary("//", fn.floor_div_op, LOWER_FRAC, DIVISOR, ints="y"),
    Binary("np.greater", fn.where_greater, LOWER_FRAC, UPPER_FRAC),
    Binary("np.greater_equal", fn.where_greater_equal, UPPER_FRAC, LOWER_FRAC),
    Binary("np.less", fn.where_less, LOWER_FRAC, UPPER_FRAC),
    Binary("np.less_equal", fn.where_less_equal, UPPER_FRAC, LOWER_FRAC),
    Binary("np.equal", fn.where_equal, LOWER_FRAC, UPPER_FRAC),
    Binary("np.not_equal", fn.where_not_equal, LOWER_FRAC, UPPER_FRAC),
    Binary("np.logical_and", fn.where_logical_and, AWAY_FROM_0, AWAY_FROM_0),
    Binary("np.logical_or", fn.where_logical_or, AWAY_FROM_0, AWAY_FROM_0),
    Binary("arctan2(sin, cos) * hypot", fn.angle_between, Domain(-1.5, 1.5), NONZERO),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("row", BINARY, ids=[row.name for row in BINARY])
@given(data=st.data())
def test_binary(row, dtype, data):
    sx, sy = data.draw(broadcastable_shapes(num_shapes=2))
    scalar_side = data.draw(st.sampled_from([None, "x", "y"]))  # often make one side ()
    sx, sy = (() if scalar_side == "x" else sx), (() if scalar_side == "y" else sy)
    int_side = data.draw(st.sampled_from(["x", "y"]))  # at most one Python int operand
    x = draw_operand(data, sx, row.xdom, dtype, ints=int_side == "x" and "x" in row.ints)
    y = draw_operand(data, sy, row.ydom, dtype, ints=int_side == "y" and "y" in row.ints)
    check(row.func, (x, y))


# -- np.clip and .clip() with three active operands ----------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", [fn.clip, fn.method_clip], ids=["np.clip", ".clip()"])
@given(data=st.data())
def test_clip(func, dtype, data):
    sx, slo, shi = data.draw(broadcastable_shapes(num_shapes=3))
    # no Python float x: np.clip makes it a float64 array, so a float32 bound gives float64
    x = draw_operand(data, sx, CLIP_X, dtype, python=False)
    lo = draw_operand(data, slo, CLIP_LO, dtype)
    hi = draw_operand(data, shi, CLIP_HI, dtype)
    check(func, (x, lo, hi))


# -- one active argument: unary functions, constant operands, clip variants, rounding ---------
TENTHS = Tenths(LOWER_FRAC)

UNARY = [
    Row("np.expm1", fn.expm1),
    Row("np.exp2", fn.exp2),
    Row("np.log1p", fn.log1p, Domain(-0.5, 3.0)),
    Row("np.log2", fn.log2, POSITIVE),
    Row("np.log10", fn.log10, POSITIVE),
    Row("np.cbrt", fn.cbrt, NONZERO),
    Row("np.square", fn.square),
    Row("np.reciprocal", fn.reciprocal, NONZERO),
    Row("np.tan", fn.tan, Domain(-1.25, 1.25)),
    Row("np.arcsin", fn.arcsin, Domain(-0.875, 0.875)),
    Row("np.arccos", fn.arccos, Domain(-0.875, 0.875)),
    Row("np.arctan", fn.arctan),
    Row("np.sinh", fn.sinh),
    Row("np.cosh", fn.cosh),
    Row("np.arcsinh", fn.arcsinh),
    Row("np.arccosh", fn.arccosh, Domain(1.25, 3.0)),
    Row("np.arctanh", fn.arctanh, Domain(-0.875, 0.875)),
    Row("np.fabs", fn.fabs, AWAY_FROM_0),
    Row("np.sinc", fn.sinc),
    Row("np.deg2rad", fn.deg2rad),
    Row("np.rad2deg", fn.rad2deg),
    Row("np.radians", fn.radians),
    Row("np.degrees", fn.degrees),
    Row("softplus (log1p, exp, abs, maximum)", fn.softplus, AWAY_FROM_0),
    # binary functions with one constant operand
    Row("np.fmax(x, 0.0)", fn.fmax_const, AWAY_FROM_0),
    Row("np.fmin(1, x)", fn.fmin_const, Domain(exclude=(0.9, 1.1))),
    Row("np.arctan2(x, 2.0)", fn.arctan2_const),
    Row("np.hypot(3, x)", fn.hypot_const),
    Row("np.mod(x, 2.0)", fn.mod_const, LOWER_FRAC),
    Row("5.25 % y", fn.rmod_const, DIVISOR),
    Row("np.float_power(x, 3)", fn.float_power_const),
    Row("np.logaddexp(0.0, x)", fn.logaddexp_const),
    Row("np.copysign(x, -1.0)", fn.copysign_const, AWAY_FROM_0),
    # np.clip and .clip() with constant or missing bounds
    Row("np.clip(x, -1.0, 1.5)", fn.clip_const, LOWER_FRAC),
    Row("np.clip(x, 0, 2)", fn.clip_int_bounds, LOWER_FRAC),
    Row("np.clip(x, -0.5, None)", fn.clip_lower_only, LOWER_FRAC),
    Row("np.clip(x, None, 1.0)", fn.clip_upper_only, LOWER_FRAC),
    Row("x.clip(-1.0, 1.0)", fn.method_clip_const, LOWER_FRAC, **NOT_PYTHON),
    Row("x.clip(max=0.5)", fn.method_clip_max_keyword, LOWER_FRAC, **NOT_PYTHON),
    # rounding: no derivative of its own
    Row("np.floor", fn.times_floor, LOWER_FRAC),
    Row("np.ceil", fn.times_ceil, LOWER_FRAC),
    Row("np.rint", fn.times_rint, LOWER_FRAC),
    Row("np.trunc", fn.times_trunc, LOWER_FRAC),
    Row("np.fix", fn.times_fix, LOWER_FRAC),
    Row("np.round", fn.times_round, LOWER_FRAC),
    Row("np.round(x, 1)", fn.times_round_decimals, TENTHS),
    Row("np.around(x, decimals=0)", fn.times_around, LOWER_FRAC),
    Row("x.round()", fn.times_method_round, LOWER_FRAC, **NOT_PYTHON),
    Row("return np.floor(x)", fn.bare_floor, LOWER_FRAC),
    Row("return np.round(x)", fn.bare_round, LOWER_FRAC),
    # predicates
    Row("np.logical_not", fn.where_logical_not, AWAY_FROM_0),
    Row("np.isnan", fn.where_isnan),
    Row("np.isfinite", fn.where_isfinite),
    Row("np.isinf", fn.where_isinf),
    Row("np.signbit", fn.times_signbit, AWAY_FROM_0),
]


@pytest.mark.parametrize("row, dtype", row_params(UNARY))
@given(data=st.data())
def test_unary(row, dtype, data):
    shape = data.draw(row.shapes)
    check(row.func, (draw_operand(data, shape, row.domain, dtype, scalars=row.scalars),))


# -- one bound of a clip active, given by keyword ------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "func, bound",
    [(fn.clip_keywords, CLIP_LO), (fn.clip_min_max, CLIP_HI)],
    ids=["np.clip(x, a_min=lo, a_max=2.0)", "np.clip(x, min=-1.0, max=hi)"],
)
@given(data=st.data())
def test_clip_keywords(func, bound, dtype, data):
    sx, sb = data.draw(broadcastable_shapes(num_shapes=2))
    x = draw_operand(data, sx, CLIP_X, dtype, python=False)  # as in test_clip
    check(func, (x, draw_operand(data, sb, bound, dtype)))


# -- conventions at non-smooth points (documented in elementwise.py) ---------------------------


A = np.array
NAN, INF = np.nan, np.inf
KINKS = [
    # name, function, arguments, wrt, expected derivative
    ("fmax-tie-x", fn.fmax, (A([1.0, 1.0]), A([1.0, 0.0])), 0, [0.5, 1]),
    ("fmax-tie-y", fn.fmax, (A([1.0, 1.0]), A([1.0, 0.0])), 1, [0.5, 0]),
    ("fmin-tie-x", fn.fmin, (A([1.0, 1.0]), A([1.0, 0.0])), 0, [0.5, 0]),
    ("fmax-nan-x", fn.fmax, (A([NAN, 1.0]), A([2.0, NAN])), 0, [0, 1]),
    ("fmax-nan-y", fn.fmax, (A([NAN, 1.0]), A([2.0, NAN])), 1, [1, 0]),
    ("fmin-nan-y", fn.fmin, (A([NAN, 1.0]), A([2.0, NAN])), 1, [1, 0]),
    ("clip-at-bounds", fn.clip_const, (A([-1.0, 0.0, 1.5, -2.0, 2.0]),), 0, [0.5, 1, 0.5, 0, 0]),
    ("clip-x", fn.clip, (A([0.0, 0.5, 1.0, -1.0, 2.0]), A(0.0), A(1.0)), 0, [0.5, 1, 0.5, 0, 0]),
    ("clip-lo", fn.clip, (A(0.0), A([0.0, -1.0, 1.0]), A(2.0)), 1, [0.5, 0, 1]),
    ("clip-hi", fn.clip, (A(1.0), A(0.0), A([1.0, 2.0, 0.5])), 2, [0.5, 0, 1]),
    ("clip-all-tie-x", fn.clip, (A([1.0]), A([1.0]), A([1.0])), 0, [0.25]),
    ("clip-all-tie-lo", fn.clip, (A([1.0]), A([1.0]), A([1.0])), 1, [0.25]),
    ("clip-all-tie-hi", fn.clip, (A([1.0]), A([1.0]), A([1.0])), 2, [0.5]),
    ("clip-lo-above-hi-x", fn.clip, (A([1.5]), A([2.0]), A([1.0])), 0, [0]),
    ("clip-lo-above-hi-hi", fn.clip, (A([1.5]), A([2.0]), A([1.0])), 2, [1]),
    ("clip-lower-only", fn.clip_lower_only, (A([-0.5, -1.0, 0.0]),), 0, [0.5, 0, 1]),
    ("clip-upper-only", fn.clip_upper_only, (A([1.0, 2.0, 0.0]),), 0, [0.5, 0, 1]),
    (".clip(max=0.5)", fn.method_clip_max_keyword, (A([0.5, 1.0, 0.0]),), 0, [0.5, 0, 1]),
    ("fabs-at-0", fn.fabs, (A([0.0, -2.0, 3.0]),), 0, [0, -1, 1]),
    ("copysign-x-at-0", fn.copysign, (A([0.0, -2.0, 3.0]), A([1.0, 1.0, -1.0])), 0, [0, -1, -1]),
    ("copysign-y", fn.copysign, (A([1.0, -2.0]), A([0.0, -1.0])), 1, [0, 0]),
    ("sinc-at-0", fn.sinc, (A([0.0]),), 0, [0]),
    ("hypot-origin-x", fn.hypot, (A([0.0]), A([0.0])), 0, [0]),
    ("hypot-origin-y", fn.hypot, (A([0.0]), A([0.0])), 1, [0]),
    ("arctan2-origin", fn.arctan2, (A([0.0]), A([0.0])), 0, [NAN]),
    ("cbrt-at-0", fn.cbrt, (A([0.0]),), 0, [INF]),
    ("float_power-0-dy", fn.float_power, (A([0.0, 0.0]), A([2.0, 3.0])), 1, [0, 0]),
    ("mod-at-jump-x", fn.mod, (A([2.0, -1.0]), A([1.0, 0.5])), 0, [1, 1]),
    ("mod-at-jump-y", fn.mod, (A([2.0, -1.0]), A([1.0, 0.5])), 1, [-2, 2]),
    ("fmod-y", fn.fmod, (A([-2.5, 2.5]), A([1.0, -1.0])), 1, [2, 2]),
    ("floor-at-integer", fn.bare_floor, (A([1.0, -2.0]),), 0, [0, 0]),
    ("round-at-half", fn.bare_round, (A([0.5, 1.5]),), 0, [0, 0]),
]


@pytest.mark.parametrize(
    "func, args, wrt, expected", [pytest.param(*row[1:], id=row[0]) for row in KINKS]
)
def test_conventions_at_kinks(func, args, wrt, expected):
    with np.errstate(divide="ignore", invalid="ignore"):
        forward, reverse = derivatives(func, args, wrt)
    np.testing.assert_allclose(forward, expected)
    np.testing.assert_allclose(reverse, expected)


# -- generated code reads like the derivative ------------------------------------------------
@pytest.mark.parametrize(
    "func, text",
    [
        (fn.expm1, "* np.exp(x)"),  # (out + 1 is 0 where expm1 rounds to -1)
        (fn.arctan, "/ (1 + x * x)"),
        (fn.deg2rad, "np.deg2rad(out_bar)"),
        (fn.clip_const, "np.where((-1.0 < x) & (x < 1.5)"),
        (fn.clip_upper_only, "tie_share(out_bar, x, 1.0, out)"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_generated_code(func, text):
    assert text in srcgrad.vjp(func).source


# -- a tangent has its output's dtype, also where numpy promotes ---------------------------
@pytest.mark.parametrize("func", [fn.mixed_precision_add, fn.mixed_precision_fmax])
def test_forward_tangent_dtype_with_mixed_precision(func):
    x, y = np.array([1.0, 2.0]), np.float32(1.5)
    assert func(x, y).dtype == np.float64
    _, tangent = srcgrad.jvp(func, wrt=1)(x, y, np.float32(1.0))
    assert np.result_type(tangent) == np.float64
