"""Rules for ``scipy.stats.norm``, the normal distribution, registered when SciPy is
installed: ``norm.cdf``, ``norm.sf``, ``norm.pdf``, ``norm.logpdf``, ``norm.logcdf``
and ``norm.logsf``, with ``loc`` and ``scale`` (all three differentiable), as
statistics and finance code call them (Black-Scholes: ``norm.cdf(d1)``).

Rules are keyed by the bound methods (``scipy.stats.norm.cdf``), which compare equal
each time they are looked up. With ``z = (x - loc) / scale`` and ``phi`` the standard
density, each row is the derivative in ``x``; in ``loc`` it is the negative, and in
``scale`` the one in ``x`` times ``-z`` (``logpdf``, ``pdf``: see the rows)::

    cdf     g * phi(z) / scale                 sf      -g * phi(z) / scale
    logcdf  g * exp(log phi(z) - ans) / scale  logsf   -g * exp(log phi(z) - ans) / scale
    pdf     -g * ans * z / scale               (scale: g * ans * (z * z - 1) / scale)
    logpdf  -g * z / scale                     (scale: g * (z * z - 1) / scale)

The templates use numpy alone, so the derivative code needs no SciPy beyond the
user's own call. Other distributions (t, gamma, beta, poisson, multivariate_normal)
have no rules yet: a call on a value srcgrad differentiates is a clear error.
"""

from __future__ import annotations

from . import Rule, register
from .builders import _max_rank

try:
    from scipy.stats import norm as _norm
except ImportError:  # srcgrad does not require SciPy: no rules then
    _norm = None

_Z = "((x - loc) / scale)"
_PHI = f"np.exp(-0.5 * {_Z} ** 2) / math.sqrt(2 * math.pi)"
_LOG_PHI = f"-0.5 * {_Z} ** 2 - 0.5 * math.log(2 * math.pi)"


def _rule(method: str, dx: str, dscale: str | None = None) -> None:
    """``norm.<method>(x, loc, scale)`` with derivative ``dx`` in ``x`` (``g`` the
    tangent or adjoint, ``ans`` the result): ``-dx`` in ``loc``, ``dscale`` (else
    ``-dx * z``) in ``scale``."""
    scale = dscale if dscale is not None else f"-({dx}) * {_Z}"
    templates = {"x": dx, "loc": f"-({dx})", "scale": scale}
    rule = Rule(
        name=f"scipy.stats.norm.{method}",
        params=("x", "loc", "scale"),
        defaults={"loc": 0.0, "scale": 1.0},
        jvp=dict(templates),
        vjp=dict(templates),
        elementwise=True,
        rank=_max_rank,
    )
    register(getattr(_norm, method), rule)


if _norm is not None:
    _rule("cdf", f"g * {_PHI} / scale")
    _rule("sf", f"-g * {_PHI} / scale")
    _rule("logcdf", f"g * np.exp({_LOG_PHI} - ans) / scale")
    _rule("logsf", f"-g * np.exp({_LOG_PHI} - ans) / scale")
    _rule("pdf", f"-g * ans * {_Z} / scale", f"g * ans * ({_Z} ** 2 - 1) / scale")
    _rule("logpdf", f"-g * {_Z} / scale", f"g * ({_Z} ** 2 - 1) / scale")
