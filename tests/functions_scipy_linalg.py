"""Small user-style functions, one per rule (or variant of a rule) in
``srcgrad/rules/scipy_linalg.py``. ``tests/test_rules_scipy_linalg.py`` differentiates
them; it skips when SciPy is missing, before importing this file.
"""

import numpy as np
import scipy.linalg
import scipy.linalg as sl
from scipy.linalg import cho_factor, cho_solve, expm, lu_factor, lu_solve, solve_triangular

# -- solve_triangular: every trans, lower and unit_diagonal, literal or passed in -------------


def tri_upper(a, b):
    return solve_triangular(a, b)


def tri_lower(a, b):
    return solve_triangular(a, b, lower=True)


def tri_lower_t(a, b):
    return sl.solve_triangular(a, b, trans="T", lower=True)


def tri_upper_t_unit(a, b):
    return solve_triangular(a, b, 1, False, True)


def tri_lower_c_unit(a, b):
    return scipy.linalg.solve_triangular(a, b, trans=2, lower=True, unit_diagonal=True)


def tri_options(a, b, trans, lower, unit_diagonal):
    return solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def cholesky_solve(a, b):
    """``inv(a) @ b`` through the Cholesky factor: two triangular solves."""
    low = sl.cholesky(a @ a.T + np.eye(a.shape[0]), lower=True)
    return solve_triangular(low, solve_triangular(low, b, lower=True), lower=True, trans=1)


# -- expm ------------------------------------------------------------------------------------


def expm_of(a):
    return expm(a)


def expm_rotation(theta):
    """The exponential of a generator: a rotation by theta."""
    return sl.expm(theta * np.array([[0.0, -1.0], [1.0, 0.0]]))


# -- numpy.linalg's twins ------------------------------------------------------------------------


def inv_of(a):
    return sl.inv(a)


def det_of(a):
    return scipy.linalg.det(a)


def solve_of(a, b):
    return sl.solve(a, b)


def cholesky_upper(a):
    return sl.cholesky(a @ a.T + np.eye(a.shape[0]))


def cholesky_lower(a):
    return sl.cholesky(a @ a.T + np.eye(a.shape[0]), lower=True)


def cholesky_passed(a, lower):
    return sl.cholesky(a @ a.T + np.eye(a.shape[0]), lower)


# -- cho_factor and cho_solve -------------------------------------------------------------------


def cho_pair(m, b):
    """The pair unpacked, then rebuilt: the usual spelling."""
    c, low = cho_factor(m @ m.T + np.eye(m.shape[0]))
    return cho_solve((c, low), b)


def cho_nested(m, b):
    return sl.cho_solve(sl.cho_factor(m @ m.T + np.eye(m.shape[0]), lower=True), b)


def cho_factor_alone(m, lower):
    c, low = cho_factor(m @ m.T + np.eye(m.shape[0]), lower=lower)
    return c


def cho_with_own_factor(low, b):
    """A lower factor made elsewhere, passed with its flag."""
    return cho_solve((low, True), b)


def gaussian_loglik(m, y):
    """A Gaussian log-likelihood through cho_factor: quadratic form and log-determinant."""
    c, low = cho_factor(m @ m.T + np.eye(m.shape[0]))
    return -0.5 * (y @ cho_solve((c, low), y)) - np.sum(np.log(np.diag(c)))


# -- lu_factor and lu_solve ----------------------------------------------------------------------


def lu_pair(a, b):
    lu, piv = lu_factor(a)
    return lu_solve((lu, piv), b)


def lu_nested_t(a, b):
    return sl.lu_solve(sl.lu_factor(a), b, trans=1)


def lu_trans_passed(a, b, trans):
    return lu_solve(lu_factor(a), b, trans)


def lu_factor_alone(a):
    lu, piv = lu_factor(a)
    return lu


# -- refused ---------------------------------------------------------------------------------


def solve_overwrite(a, b):
    return np.sum(sl.solve(a, b, overwrite_a=True))


def solve_positive(a, b):
    return np.sum(sl.solve(a, b, assume_a="pos"))


def cho_solve_of(m, b):
    return sl.cho_solve(sl.cho_factor(m @ m.T + np.eye(m.shape[0])), b)


def lu_solve_of(a, b, trans):
    return sl.lu_solve(sl.lu_factor(a), b, trans=trans)
