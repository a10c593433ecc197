"""Small user-style functions, one per rule (or variant of a rule) in
``srcgrad/rules/elementwise.py``. ``tests/test_rules_elementwise.py`` differentiates them.

srcgrad reads the source of what it differentiates, so these live at module
level in a real file. Keep each one a single use of the primitive it names.
"""

import numpy as np

# -- unary functions ------------------------------------------------------------------


def expm1(x):
    return np.expm1(x)


def exp2(x):
    return np.exp2(x)


def log1p(x):
    return np.log1p(x)


def log2(x):
    return np.log2(x)


def log10(x):
    return np.log10(x)


def cbrt(x):
    return np.cbrt(x)


def square(x):
    return np.square(x)


def reciprocal(x):
    return np.reciprocal(x)


def tan(x):
    return np.tan(x)


def arcsin(x):
    return np.arcsin(x)


def arccos(x):
    return np.arccos(x)


def arctan(x):
    return np.arctan(x)


def sinh(x):
    return np.sinh(x)


def cosh(x):
    return np.cosh(x)


def arcsinh(x):
    return np.arcsinh(x)


def arccosh(x):
    return np.arccosh(x)


def arctanh(x):
    return np.arctanh(x)


def fabs(x):
    return np.fabs(x)


def sinc(x):
    return np.sinc(x)


def deg2rad(x):
    return np.deg2rad(x)


def rad2deg(x):
    return np.rad2deg(x)


def radians(x):
    return np.radians(x)


def degrees(x):
    return np.degrees(x)


# -- binary functions, both operands as arguments -----------------------------------


def float_power(x, y):
    return np.float_power(x, y)


def fmax(x, y):
    return np.fmax(x, y)


def fmin(x, y):
    return np.fmin(x, y)


def arctan2(x, y):
    return np.arctan2(x, y)


def hypot(x, y):
    return np.hypot(x, y)


def logaddexp(x, y):
    return np.logaddexp(x, y)


def logaddexp2(x, y):
    return np.logaddexp2(x, y)


def mod(x, y):
    return np.mod(x, y)


def remainder(x, y):
    return np.remainder(x, y)


def fmod(x, y):
    return np.fmod(x, y)


def copysign(x, y):
    return np.copysign(x, y)


def true_divide(x, y):
    return np.true_divide(x, y)


def mod_op(x, y):
    return x % y


# -- binary functions with a constant operand ------------------------------------------


def fmax_const(x):
    return np.fmax(x, 0.0)


def fmin_const(x):
    return np.fmin(1, x)


def arctan2_const(x):
    return np.arctan2(x, 2.0)


def hypot_const(x):
    return np.hypot(3, x)


def mod_const(x):
    return np.mod(x, 2.0)


def rmod_const(y):
    return 5.25 % y


def float_power_const(x):
    return np.float_power(x, 3)


def logaddexp_const(x):
    return np.logaddexp(0.0, x)


def copysign_const(x):
    return np.copysign(x, -1.0)


# -- np.clip and .clip() -----------------------------------------------------------------


def clip(x, lo, hi):
    return np.clip(x, lo, hi)


def clip_const(x):
    return np.clip(x, -1.0, 1.5)


def clip_int_bounds(x):
    return np.clip(x, 0, 2)


def clip_lower_only(x):
    return np.clip(x, -0.5, None)


def clip_upper_only(x):
    return np.clip(x, None, 1.0)


def clip_keywords(x, lo):
    return np.clip(x, a_min=lo, a_max=2.0)


def clip_min_max(x, hi):
    return np.clip(x, min=-1.0, max=hi)


def method_clip(x, lo, hi):
    return x.clip(lo, hi)


def method_clip_const(x):
    return x.clip(-1.0, 1.0)


def method_clip_max_keyword(x):
    return x.clip(max=0.5)


# -- no derivative: the result times x, so the derivative is the rounded value -----------


def times_floor(x):
    return x * np.floor(x)


def times_ceil(x):
    return x * np.ceil(x)


def times_rint(x):
    return x * np.rint(x)


def times_trunc(x):
    return x * np.trunc(x)


def times_fix(x):
    return x * np.fix(x)


def times_round(x):
    return x * np.round(x)


def times_round_decimals(x):
    return x * np.round(x, 1)


def times_around(x):
    return x * np.around(x, decimals=0)


def times_method_round(x):
    return x * x.round()


def bare_floor(x):
    return np.floor(x)


def bare_round(x):
    return np.round(x)


def floor_divide(x, y):
    return np.floor_divide(x, y) * x


def floor_div_op(x, y):
    return (x // y) * y


def where_greater(x, y):
    return np.where(np.greater(x, y), x, y)


def where_greater_equal(x, y):
    return np.where(np.greater_equal(x, y), x, 2 * y)


def where_less(x, y):
    return np.where(np.less(x, y), x * y, y)


def where_less_equal(x, y):
    return np.where(np.less_equal(x, y), x, y * y)


def where_equal(x, y):
    return np.where(np.equal(x, y), y, x * y)


def where_not_equal(x, y):
    return np.where(np.not_equal(x, y), x * y, x)


def where_logical_and(x, y):
    return np.where(np.logical_and(x > 0, y > 0), x * y, x)


def where_logical_or(x, y):
    return np.where(np.logical_or(x > 0, y > 0), x + y, y)


def where_logical_not(x):
    return np.where(np.logical_not(x > 0), x, 2 * x)


def where_isnan(x):
    return np.where(np.isnan(x), 0.0, x * x)


def where_isfinite(x):
    return np.where(np.isfinite(x), x, 0.0)


def where_isinf(x):
    return np.where(np.isinf(x), 1.0, np.sin(x))


def times_signbit(x):
    return x * np.signbit(x)


# -- combinations ------------------------------------------------------------------------


def softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


def angle_between(x, y):
    return np.arctan2(np.sin(x), np.cos(x)) * np.hypot(x, y)


# -- reproductions of bugs ---------------------------------------------------------------


def mixed_precision_add(x, y):
    return np.add(x, y)


def mixed_precision_fmax(x, y):
    return np.fmax(x, y)
