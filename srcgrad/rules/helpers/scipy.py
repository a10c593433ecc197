"""Runtime helpers of the SciPy rules (``srcgrad/rules/scipy_stats.py``,
``scipy_special.py``, ``scipy_linalg.py``).

Like :func:`srcgrad.runtime.digamma`, a helper that calls SciPy imports it when first
called, so srcgrad and the modules it generates import without SciPy. Each is copied as
source into the generated modules that call it."""


def gammaln(x):
    """``scipy.special.gammaln(x)``, the log of the gamma function (the normalising
    constants of the t and gamma densities)."""
    from scipy.special import gammaln as log_gamma

    return log_gamma(x)


def betaln(a, b):
    """``scipy.special.betaln(a, b)``, the log of the beta function (the beta density)."""
    from scipy.special import betaln as log_beta

    return log_beta(a, b)

