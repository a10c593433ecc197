"""Small user-style functions, one per rule of ``srcgrad/rules/scipy_stats.py``
beyond ``norm``. ``tests/test_rules_scipy_stats.py`` differentiates them; it skips when
SciPy is missing, before importing this file.

Every loc-scale method is called with all its parameters, positionally (the shape
parameters, then ``loc`` and ``scale``); a few rows spell them as keywords, or leave
``loc`` and ``scale`` at their defaults.
"""

import numpy as np
import scipy.stats
import scipy.stats as st
from scipy.stats import beta, cauchy, expon, gamma, laplace, logistic, lognorm, poisson, t
from scipy.stats import multivariate_normal as mvn

# -- loc-scale families: f(x, *shapes, loc, scale) ------------------------------------------


def t_logpdf(x, df, loc, scale):
    return t.logpdf(x, df, loc, scale)


def t_pdf(x, df, loc, scale):
    return t.pdf(x, df, loc, scale)


def t_cdf(x, df, loc, scale):
    return t.cdf(x, df, loc, scale)


def t_sf(x, df, loc, scale):
    return t.sf(x, df, loc, scale)


def t_logcdf(x, df, loc, scale):
    return t.logcdf(x, df, loc, scale)


def t_logsf(x, df, loc, scale):
    return t.logsf(x, df, loc, scale)


def gamma_logpdf(x, a, loc, scale):
    return gamma.logpdf(x, a, loc, scale)


def gamma_pdf(x, a, loc, scale):
    return gamma.pdf(x, a, loc, scale)


def gamma_cdf(x, a, loc, scale):
    return gamma.cdf(x, a, loc, scale)


def gamma_sf(x, a, loc, scale):
    return gamma.sf(x, a, loc, scale)


def gamma_logcdf(x, a, loc, scale):
    return gamma.logcdf(x, a, loc, scale)


def gamma_logsf(x, a, loc, scale):
    return gamma.logsf(x, a, loc, scale)


def beta_logpdf(x, a, b, loc, scale):
    return beta.logpdf(x, a, b, loc, scale)


def beta_pdf(x, a, b, loc, scale):
    return beta.pdf(x, a, b, loc, scale)


def beta_cdf(x, a, b, loc, scale):
    return beta.cdf(x, a, b, loc, scale)


def beta_sf(x, a, b, loc, scale):
    return beta.sf(x, a, b, loc, scale)


def beta_logcdf(x, a, b, loc, scale):
    return beta.logcdf(x, a, b, loc, scale)


def beta_logsf(x, a, b, loc, scale):
    return beta.logsf(x, a, b, loc, scale)


def expon_logpdf(x, loc, scale):
    return expon.logpdf(x, loc, scale)


def expon_pdf(x, loc, scale):
    return expon.pdf(x, loc, scale)


def expon_cdf(x, loc, scale):
    return expon.cdf(x, loc, scale)


def expon_sf(x, loc, scale):
    return expon.sf(x, loc, scale)


def expon_logcdf(x, loc, scale):
    return expon.logcdf(x, loc, scale)


def expon_logsf(x, loc, scale):
    return expon.logsf(x, loc, scale)


def lognorm_logpdf(x, s, loc, scale):
    return lognorm.logpdf(x, s, loc, scale)


def lognorm_pdf(x, s, loc, scale):
    return lognorm.pdf(x, s, loc, scale)


def lognorm_cdf(x, s, loc, scale):
    return lognorm.cdf(x, s, loc, scale)


def lognorm_sf(x, s, loc, scale):
    return lognorm.sf(x, s, loc, scale)


def lognorm_logcdf(x, s, loc, scale):
    return lognorm.logcdf(x, s, loc, scale)


def lognorm_logsf(x, s, loc, scale):
    return lognorm.logsf(x, s, loc, scale)


def laplace_logpdf(x, loc, scale):
    return laplace.logpdf(x, loc, scale)


def laplace_pdf(x, loc, scale):
    return laplace.pdf(x, loc, scale)


def laplace_cdf(x, loc, scale):
    return laplace.cdf(x, loc, scale)


def laplace_sf(x, loc, scale):
    return laplace.sf(x, loc, scale)


def laplace_logcdf(x, loc, scale):
    return laplace.logcdf(x, loc, scale)


def laplace_logsf(x, loc, scale):
    return laplace.logsf(x, loc, scale)


def cauchy_logpdf(x, loc, scale):
    return cauchy.logpdf(x, loc, scale)


def cauchy_pdf(x, loc, scale):
    return cauchy.pdf(x, loc, scale)


def cauchy_cdf(x, loc, scale):
    return cauchy.cdf(x, loc, scale)


def cauchy_sf(x, loc, scale):
    return cauchy.sf(x, loc, scale)


def cauchy_logcdf(x, loc, scale):
    return cauchy.logcdf(x, loc, scale)


def cauchy_logsf(x, loc, scale):
    return cauchy.logsf(x, loc, scale)


def logistic_logpdf(x, loc, scale):
    return logistic.logpdf(x, loc, scale)


def logistic_pdf(x, loc, scale):
    return logistic.pdf(x, loc, scale)


def logistic_cdf(x, loc, scale):
    return logistic.cdf(x, loc, scale)


def logistic_sf(x, loc, scale):
    return logistic.sf(x, loc, scale)


def logistic_logcdf(x, loc, scale):
    return logistic.logcdf(x, loc, scale)


def logistic_logsf(x, loc, scale):
    return logistic.logsf(x, loc, scale)


# -- other spellings --------------------------------------------------------------------


def t_logpdf_keywords(x, df, scale):
    return st.t.logpdf(x, df=df, scale=scale)


def gamma_logpdf_defaults(x, a):
    return scipy.stats.gamma.logpdf(x, a)


def beta_cdf_keywords(x, loc):
    return beta.cdf(x, a=2.5, b=1.5, loc=loc)


def lognorm_fit(s, mu):
    """The log-likelihood of a log-normal sample in its shape and log-scale."""
    data = np.array([0.5, 1.2, 2.0, 3.7])
    return np.sum(lognorm.logpdf(data, s, scale=np.exp(mu)))


def student_t_loss(residuals, df):
    """A robust regression loss: the negative t log-likelihood of residuals."""
    return -np.sum(t.logpdf(residuals, df, scale=0.5))


# -- shape parameters a cdf is not differentiated in -------------------------------------------


def gamma_cdf_in_a(x, a):
    return np.sum(gamma.cdf(x, a))


def beta_sf_in_b(x, b):
    return np.sum(beta.sf(x, 2.0, b))


def t_cdf_in_df(x, df):
    return np.sum(t.cdf(x, df))


# -- poisson: f(mu, k) ----------------------------------------------------------------------


def poisson_logpmf(mu, k):
    return poisson.logpmf(k, mu)


def poisson_pmf(mu, k):
    return poisson.pmf(k, mu)


def poisson_cdf(mu, k):
    return poisson.cdf(k, mu)


def poisson_sf(mu, k):
    return poisson.sf(k, mu)


def poisson_logcdf(mu, k):
    return poisson.logcdf(k, mu)


def poisson_logsf(mu, k):
    return poisson.logsf(k, mu)


def poisson_logpmf_loc(mu, k):
    return poisson.logpmf(k, mu, loc=1)


def poisson_cdf_loc(mu, k):
    return poisson.cdf(k, mu, 1)


def poisson_in_k(k, mu):
    return np.sum(poisson.logpmf(k, mu))


def poisson_regression(w, features, counts):
    """The Poisson log-likelihood of a log-linear model (a GLM)."""
    return np.sum(poisson.logpmf(counts, np.exp(features @ w)))


# -- multivariate normal: cov built symmetric positive definite from a factor ----------------


def mvn_logpdf(x, mean, factor):
    cov = factor @ factor.T + np.eye(factor.shape[0])
    return mvn.logpdf(x, mean, cov)


def mvn_pdf(x, mean, factor):
    cov = factor @ factor.T + np.eye(factor.shape[0])
    return st.multivariate_normal.pdf(x, mean=mean, cov=cov)


def mvn_logpdf_cov(x, mean, cov):
    return mvn.logpdf(x, mean, cov)


def mvn_pdf_cov(x, mean, cov):
    return mvn.pdf(x, mean, cov)


def mvn_logpdf_no_mean(x, factor):
    return mvn.logpdf(x, cov=factor @ factor.T + np.eye(factor.shape[0]))


def mvn_logpdf_standard(x):
    return mvn.logpdf(x)


# -- frozen distributions made in the function: calls of the distribution ----------------------


def frozen_norm(x, mu, s):
    dist = scipy.stats.norm(loc=mu, scale=s)
    return dist.logpdf(x) + dist.cdf(x) * dist.pdf(x) + dist.logcdf(x) - dist.sf(x) + dist.logsf(x)


def frozen_logpdf(x, mu, s):
    d = st.norm(mu, scale=s)
    return d.logpdf(x)


def frozen_inline(x, mu, s):
    return st.norm(loc=mu, scale=np.exp(s)).logpdf(np.sin(x)) + st.norm(mu).cdf(x=x * s)


def frozen_t(x, df, loc, s):
    d = t(df, loc, s)
    return d.logpdf(x) * 0.5 + d.pdf(x)


def frozen_gamma(x, loc, s):
    d = gamma(2, loc=loc, scale=s)  # (the cdf in a has no closed form: a constant here)
    return d.cdf(x) + d.logsf(x) + d.logpdf(x)


def frozen_poisson(mu, k):
    d = poisson(mu)
    return d.logpmf(k) + d.cdf(k)


def frozen_in_loop(x, mu):
    total = 0.0
    for i in range(3):
        d = st.norm(mu * i, 1.0 + i)
        mu = mu * 1.5  # (after the distribution is made: it keeps the value it got)
        total = total + d.pdf(x) * d.logcdf(x)
    return total


def frozen_mvn(x, mean, factor):
    d = mvn(mean, factor @ factor.T + 0.5 * np.eye(3), allow_singular=False, seed=3)
    return np.sum(d.logpdf(x)) + np.sum(d.pdf(x)) * 10.0


def frozen_mvn_inline(mean):
    return mvn(mean).logpdf(np.zeros(2))


def frozen_on_parameters(mu):
    dist = scipy.stats.norm(mu, 2.0)
    return np.sum(dist.cdf(1.0))


# -- frozen distributions srcgrad does not follow: refused, with what to write instead ---------
FROZEN = scipy.stats.norm(0.0, 2.0)


def frozen_global(x):
    return np.sum(FROZEN.logpdf(x))


def frozen_mvn_cdf(mean):
    d = mvn(mean)  # (its cdf has no rule: the distribution is read otherwise than by logpdf)
    return d.logpdf(np.zeros(2)) + d.cdf(np.zeros(2))


def _mean_of(d):
    return d.mean()


def frozen_passed(mu):
    d = st.norm(mu, 2.0)
    return np.sum(d.logpdf(np.zeros(2))) + _mean_of(d)


def frozen_stored(mu):
    d = st.norm(mu, 2.0)
    dists = [d]
    return np.sum(dists[0].logpdf(np.zeros(2)))


def frozen_mean(mu):
    d = st.norm(mu, 2.0)
    return np.sum(d.logpdf(np.zeros(2))) + d.mean()


def frozen_made_twice(mu):
    d = st.norm(mu, 2.0)
    d = st.norm(mu, 3.0)
    return np.sum(d.logpdf(np.zeros(2)))


def frozen_inline_both_call(mu):
    return np.sum(st.norm(np.cumsum(mu)).logpdf(np.cumsum(mu)))
