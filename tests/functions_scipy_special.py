"""Small user-style functions, one per rule (or variant of a rule) in
``srcgrad/rules/scipy_special.py``. ``tests/test_rules_scipy_special.py``
differentiates them; it skips when SciPy is missing, before importing this file.

Both spellings users write appear: ``import scipy.special as sp; sp.expit(x)``
and ``from scipy.special import logsumexp``.
"""

import numpy as np
import scipy.special
import scipy.special as sp
from scipy.special import (
    digamma,
    erf,
    erfc,
    expit,
    gammaln,
    log_softmax,
    logit,
    logsumexp,
    polygamma,
    psi,
    softmax,
    xlogy,
)

# -- elementwise, one argument ----------------------------------------------------------


def sp_expit(x):
    return sp.expit(x)


def expit_imported(x):
    return expit(x)


def logit_imported(x):
    return logit(x)


def erf_imported(x):
    return erf(x)


def erfc_imported(x):
    return erfc(x)


def gammaln_imported(x):
    return gammaln(x)


def sp_gammaln(x):
    return sp.gammaln(x)


def digamma_imported(x):
    return digamma(x)


def psi_imported(x):
    return psi(x)


def dotted_digamma(x):
    return scipy.special.digamma(x)


def polygamma_2(x):
    return polygamma(2, x)


def sp_polygamma_dynamic(n, x):
    return sp.polygamma(n, x)


def logistic_loss(x):
    """log(1 + exp(-x)) written with expit: a chain of rules."""
    return -np.log(expit(x))


# -- xlogy: two arguments, broadcasting ---------------------------------------------------


def xlogy_imported(x, y):
    return xlogy(x, y)


def sp_xlogy(x, y):
    return sp.xlogy(x, y)


def xlogy_const_y(x):
    return xlogy(x, 2.5)


def entropy(p):
    return -np.sum(xlogy(p, p))


# -- logsumexp: axis, keepdims, b ---------------------------------------------------------


def logsumexp_all(a):
    return logsumexp(a)


def sp_logsumexp_axis0(a):
    return sp.logsumexp(a, axis=0)


def logsumexp_axis_neg1(a):
    return logsumexp(a, axis=-1)


def logsumexp_positional_axis(a):
    return logsumexp(a, 1)


def logsumexp_tuple_axis(a):
    return logsumexp(a, axis=(0, 2))


def logsumexp_keepdims(a):
    return logsumexp(a, keepdims=True)


def logsumexp_axis_keepdims(a):
    return logsumexp(a, axis=-1, keepdims=True)


def logsumexp_dynamic(a, axis, keepdims):
    return logsumexp(a, axis=axis, keepdims=keepdims)


def logsumexp_b(a, b):
    return logsumexp(a, b=b)


def logsumexp_b_axis(a, b):
    return logsumexp(a, axis=0, b=b)


def logsumexp_b_dynamic(a, b, axis, keepdims):
    return logsumexp(a, axis=axis, b=b, keepdims=keepdims)


def logsumexp_b_const(a):
    return logsumexp(a, b=0.5)


def logsumexp_b_maybe_none(a, b=None):
    return logsumexp(a, axis=-1, b=b)


# -- softmax and log_softmax ----------------------------------------------------------------


def softmax_all(x):
    return softmax(x)


def sp_softmax_last(x):
    return sp.softmax(x, axis=-1)


def softmax_positional_axis(x):
    return softmax(x, 0)


def softmax_tuple_axis(x):
    return softmax(x, axis=(0, 1))


def softmax_dynamic(x, axis):
    return softmax(x, axis=axis)


def log_softmax_all(x):
    return log_softmax(x)


def sp_log_softmax_last(x):
    return sp.log_softmax(x, axis=-1)


def log_softmax_tuple_axis(x):
    return log_softmax(x, axis=(0, -1))


def log_softmax_dynamic(x, axis):
    return log_softmax(x, axis=axis)


def cross_entropy(logits, labels):
    """A classifier's loss: labels weight the log-probabilities over the last axis."""
    return -np.mean(np.sum(labels * log_softmax(logits, axis=-1), axis=-1))


# -- Bessel functions ------------------------------------------------------------------------


def bessel_i(x):
    return sp.i0(x) + 2.0 * sp.i1(x)


def bessel_i_scaled(x):
    return sp.i0e(x) - sp.i1e(x)


def bessel_j(x):
    return sp.j0(x) * scipy.special.j1(x)


def bessel_y(x):
    return sp.y0(x) + sp.y1(x) ** 2


def bessel_k(x):
    return sp.k0(x) - 3.0 * sp.k1(x)


def iv_order(v, x):
    return sp.iv(v, x)


def ive_order(v, x):
    return sp.ive(v, x)


def jv_order(v, x):
    return sp.jv(v, x)


def yv_order(v, x):
    return sp.yv(v, x)


def kv_order(v, x):
    return sp.kv(v, x)


def iv_in_order(v, x):
    return np.sum(sp.iv(v * 2.0, x))


def von_mises_loglik(kappa, x):
    """The von Mises log-likelihood, with its normaliser log(2 pi i0(kappa)) written stably."""
    return np.sum(kappa * np.cos(x)) - np.size(x) * (np.log(sp.i0e(kappa)) + kappa)
