"""Small user-style functions, one per reduction rule (or variant of one) in
``srcgrad/rules/reductions.py`` and the reductions of ``methods.py``.
``tests/test_rules_reductions.py`` differentiates them.

srcgrad reads the source of what it differentiates, so these live at module
level in a real file. Keep each one a single use of the primitive it names.
"""

import numpy as np

# -- np.max / np.min / np.amax / np.amin / .max() / .min() -----------------------------


def max_all(x):
    return np.max(x)


def max_axis0(x):
    return np.max(x, axis=0)


def max_tuple_keepdims(x):
    return np.max(x, axis=(0, -1), keepdims=True)


def amax_neg_axis(x):
    return np.amax(x, axis=-1)


def min_all_keepdims(x):
    return np.min(x, keepdims=True)


def min_tuple(x):
    return np.min(x, axis=(-1, 0))


def amin_axis1_keepdims(x):
    return np.amin(x, 1, keepdims=True)


def method_max_axis(x):
    return x.max(axis=-1)


def method_min_tuple_keepdims(x):
    return x.min((0, 1), keepdims=True)


def max_dynamic(x, axis, keepdims):
    return np.max(x, axis=axis, keepdims=keepdims)


def min_dynamic(x, axis, keepdims):
    return np.min(x, axis=axis, keepdims=keepdims)


def method_max_dynamic(x, axis, keepdims):
    return x.max(axis, keepdims=keepdims)


# -- np.sum / np.mean with tuple axes and keepdims together -----------------------------


def sum_tuple_neg_keepdims(x):
    return np.sum(x, axis=(-1, 0), keepdims=True)


def mean_all_neg_tuple(x):
    return np.mean(x, axis=(0, -2, -1))


# -- np.prod / .prod() --------------------------------------------------------------


def prod_all(x):
    return np.prod(x)


def prod_axis0(x):
    return np.prod(x, axis=0)


def prod_neg_axis_keepdims(x):
    return np.prod(x, axis=-1, keepdims=True)


def prod_tuple(x):
    return np.prod(x, axis=(0, 2))


def method_prod(x):
    return x.prod()


def method_prod_tuple_keepdims(x):
    return x.prod(axis=(-1, 0), keepdims=True)


def prod_dynamic(x, axis, keepdims):
    return np.prod(x, axis=axis, keepdims=keepdims)


def method_prod_dynamic(x, axis, keepdims):
    return x.prod(axis, keepdims=keepdims)


# -- np.var / np.std / .var() / .std(), with ddof -----------------------------------------


def var_all(x):
    return np.var(x)


def var_axis0_ddof1(x):
    return np.var(x, axis=0, ddof=1)


def var_tuple_keepdims(x):
    return np.var(x, axis=(0, -1), keepdims=True)


def method_var(x):
    return x.var()


def method_var_neg_axis(x):
    return x.var(-1, ddof=1)


def std_all(x):
    return np.std(x)


def std_neg_axis_keepdims(x):
    return np.std(x, axis=-1, keepdims=True)


def std_tuple_ddof1(x):
    return np.std(x, axis=(0, 2), ddof=1)


def method_std(x):
    return x.std()


def method_std_axis_keepdims(x):
    return x.std(axis=0, keepdims=True, ddof=1)


def var_dynamic(x, axis, keepdims, ddof):
    return np.var(x, axis=axis, keepdims=keepdims, ddof=ddof)


def std_dynamic(x, axis, keepdims, ddof):
    return np.std(x, axis=axis, keepdims=keepdims, ddof=ddof)


def method_std_dynamic(x, axis, keepdims, ddof):
    return x.std(axis, ddof=ddof, keepdims=keepdims)


# -- np.cumsum / np.cumprod / .cumsum() / .cumprod() ---------------------------------------


def cumsum_flat(x):
    return np.cumsum(x)


def cumsum_axis0(x):
    return np.cumsum(x, axis=0)


def cumsum_neg_axis(x):
    return np.cumsum(x, -1)


def method_cumsum(x):
    return x.cumsum()


def method_cumsum_axis(x):
    return x.cumsum(axis=-1)


def cumprod_flat(x):
    return np.cumprod(x)


def cumprod_axis0(x):
    return np.cumprod(x, axis=0)


def cumprod_neg_axis(x):
    return np.cumprod(x, axis=-1)


def method_cumprod(x):
    return x.cumprod()


def method_cumprod_axis(x):
    return x.cumprod(1)


def cumsum_dynamic(x, axis):
    return np.cumsum(x, axis=axis)


def cumprod_dynamic(x, axis):
    return np.cumprod(x, axis=axis)


def method_cumprod_dynamic(x, axis):
    return x.cumprod(axis)


# -- np.ptp -------------------------------------------------------------------------------


def ptp_all(x):
    return np.ptp(x)


def ptp_axis0(x):
    return np.ptp(x, axis=0)


def ptp_tuple_keepdims(x):
    return np.ptp(x, axis=(0, -1), keepdims=True)


def ptp_dynamic(x, axis, keepdims):
    return np.ptp(x, axis=axis, keepdims=keepdims)


# -- np.average -------------------------------------------------------------------------------


def average_all(x):
    return np.average(x)


def average_axis_keepdims(x):
    return np.average(x, axis=-1, keepdims=True)


def average_weighted(x, w):
    return np.average(x, weights=w)


def average_weighted_axis(x, w):
    return np.average(x, axis=0, weights=w)


def average_weighted_tuple(x, w):
    return np.average(x, axis=(-1, 0), weights=w)


def average_weighted_keepdims(x, w):
    return np.average(x, axis=1, weights=w, keepdims=True)


def average_dynamic(x, w, axis, keepdims):
    return np.average(x, axis=axis, weights=w, keepdims=keepdims)


def average_returned(x):
    avg, count = np.average(x, axis=0, returned=True)
    return avg * count


def average_returned_weighted(x, w):
    avg, total = np.average(x, axis=0, weights=w, returned=True)
    return avg * total**2


def average_returned_tuple_keepdims(x, w):
    result = np.average(x, axis=(-1, 0), weights=w, returned=True, keepdims=True)
    return result[0] + np.sin(result[1]) * x


def average_returned_total(x, w):
    _, total = np.average(x, weights=w, returned=True)
    return total * x


def average_returned_variable(x, returned):
    return np.average(x, returned=returned)


# -- np.nansum / np.nanmean -----------------------------------------------------------------


def nansum_all(x):
    return np.nansum(x)


def nansum_tuple_keepdims(x):
    return np.nansum(x, axis=(0, -1), keepdims=True)


def nanmean_all(x):
    return np.nanmean(x)


def nanmean_neg_axis(x):
    return np.nanmean(x, axis=-1)


def nansum_dynamic(x, axis, keepdims):
    return np.nansum(x, axis=axis, keepdims=keepdims)


def nanmean_dynamic(x, axis, keepdims):
    return np.nanmean(x, axis=axis, keepdims=keepdims)


def nansum_of_masked(x):
    y = np.where(x > 0, x, np.nan)
    return np.nansum(y, axis=0)


def nanmean_of_masked(x):
    y = np.where(x > 0, x, np.nan)
    return np.nanmean(y)


# -- np.linalg.norm ----------------------------------------------------------------------------


def norm_all(x):
    return np.linalg.norm(x)


def norm_axis_keepdims(x):
    return np.linalg.norm(x, axis=-1, keepdims=True)


def norm_fro_tuple(x):
    return np.linalg.norm(x, ord="fro", axis=(0, -1))


def norm_vector_2(x):
    return np.linalg.norm(x, 2)


def norm_vector_1(x):
    return np.linalg.norm(x, ord=1, axis=0)


def norm_vector_inf(x):
    return np.linalg.norm(x, ord=np.inf, axis=-1)


def norm_vector_neg_inf(x):
    return np.linalg.norm(x, ord=-np.inf, axis=0, keepdims=True)


def norm_vector_3(x):
    return np.linalg.norm(x, ord=3, axis=-1)


def norm_vector_half(x):
    return np.linalg.norm(x, ord=0.5, axis=0)


def norm_vector_0(x):
    return x * np.linalg.norm(x, ord=0, axis=-1, keepdims=True)


def norm_matrix_1(x):
    return np.linalg.norm(x, ord=1)


def norm_matrix_inf(x):
    return np.linalg.norm(x, ord=np.inf, axis=(-1, 0))


def norm_matrix_neg_1(x):
    return np.linalg.norm(x, ord=-1, axis=(0, 1), keepdims=True)


def norm_dynamic(x, ord, axis, keepdims):
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def norm_dynamic_boxed(x, ords, axis, keepdims):
    """``norm_dynamic`` with ``ord`` in a tuple: a float order (inf) is not differentiated
    (srcgrad refuses a derivative with respect to the order)."""
    return np.linalg.norm(x, ord=ords[0], axis=axis, keepdims=keepdims)


# -- np.trace / .trace() --------------------------------------------------------------------


def trace(x):
    return np.trace(x)


def trace_offset(x):
    return np.trace(x, 1)


def trace_axes(x):
    return np.trace(x, offset=-1, axis1=2, axis2=0)


def method_trace(x):
    return x.trace()


def method_trace_axes(x):
    return x.trace(0, -1, 1)


def trace_dynamic(x, offset, axis1, axis2):
    return np.trace(x, offset, axis1, axis2)


# -- keywords srcgrad's rules do not take ---------------------------------------------------


def sum_where(x):
    return np.sum(x, where=x > 0)


def max_initial(x):
    return np.max(x, initial=0.0)
