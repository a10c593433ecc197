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

import re
from dataclasses import dataclass, field
from typing import Any

from . import Rule, register
from .builders import _max_rank

try:
    import scipy.stats as _stats
    from scipy.stats import norm as _norm
except ImportError:  # srcgrad does not require SciPy: no rules then
    _stats = _norm = None

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


# -- other continuous distributions: loc-scale families with shape parameters ---------------
@dataclass(frozen=True)
class _Family:
    """A loc-scale family: its standard log density ``log_density`` (of ``z``, the
    standardized ``(x - loc) / scale``) and its derivative ``slope`` in ``z``; the
    derivatives of the log density in each shape parameter (``shapes``); those of the cdf
    where they have a closed form (``cdf_shapes``); the support as a condition on ``z``
    and a point inside it (formulas are evaluated there outside the support)."""

    name: str
    shape_names: tuple[str, ...]
    log_density: str
    slope: str
    shapes: dict[str, str] = field(default_factory=dict)
    cdf_shapes: dict[str, str] = field(default_factory=dict)
    support: str | None = None
    inside: float = 1.0


_FAMILIES = [
    _Family(
        "t",
        ("df",),
        "-(df + 1) / 2 * np.log1p(z ** 2 / df) - 0.5 * np.log(df) - betaln(0.5, df / 2)",
        "-(df + 1) * z / (df + z ** 2)",
        shapes={
            "df": "0.5 * (digamma((df + 1) / 2) - digamma(df / 2) - 1 / df - np.log1p(z ** 2 / df))"
            " + (df + 1) * z ** 2 / (2 * df * (df + z ** 2))"
        },
    ),
    _Family(
        "gamma",
        ("a",),
        "(a - 1) * np.log(z) - z - gammaln(a)",
        "(a - 1) / z - 1",
        shapes={"a": "np.log(z) - digamma(a)"},
        support="z > 0",
    ),
    _Family(
        "beta",
        ("a", "b"),
        "(a - 1) * np.log(z) + (b - 1) * np.log1p(-z) - betaln(a, b)",
        "(a - 1) / z - (b - 1) / (1 - z)",
        shapes={
            "a": "np.log(z) - digamma(a) + digamma(a + b)",
            "b": "np.log1p(-z) - digamma(b) + digamma(a + b)",
        },
        support="(z > 0) & (z < 1)",
        inside=0.5,
    ),
    _Family("expon", (), "-z", "-1", support="z >= 0"),
    _Family(
        "lognorm",
        ("s",),
        "-np.log(s * z) - np.log(z) ** 2 / (2 * s * s) - 0.5 * math.log(2 * math.pi)",
        "-(1 + np.log(z) / (s * s)) / z",
        shapes={"s": "(np.log(z) ** 2 / (s * s) - 1) / s"},
        # cdf = ndtr(log(z) / s)
        cdf_shapes={
            "s": "-np.exp(-0.5 * (np.log(z) / s) ** 2) * np.log(z)"
            " / (math.sqrt(2 * math.pi) * s * s)"
        },
        support="z > 0",
    ),
    _Family("laplace", (), "-np.abs(z) - math.log(2)", "-np.sign(z)"),
    _Family("cauchy", (), "-np.log1p(z ** 2) - math.log(math.pi)", "-2 * z / (1 + z ** 2)"),
    _Family("logistic", (), "-np.abs(z) - 2 * np.log1p(np.exp(-np.abs(z)))", "-np.tanh(z / 2)"),
]


def _in_z(template: str, z: str) -> str:
    """``template`` with ``z`` standing for the standardized variable ``z``."""
    return re.sub(r"\bz\b", z, template)


def _family_rules(dist: Any, family: _Family) -> None:
    """The rules of ``dist.logpdf``, ``pdf``, ``cdf``, ``sf``, ``logcdf``, ``logsf``."""
    z = _Z
    if family.support is not None:  # formulas at a point inside the support elsewhere
        inside = _in_z(family.support, _Z)
        z = f"np.where({inside}, {_Z}, {family.inside})"

    def on(template: str) -> str:
        return f"({_in_z(template, z)})"

    def masked(template: str) -> str:  # 0 outside the support
        if family.support is None:
            return on(template)
        return f"np.where({inside}, {_in_z(template, z)}, 0)"

    slope, log_density = family.slope, family.log_density
    methods: dict[str, dict[str, str]] = {
        "logpdf": {
            "x": f"g * {masked(slope)} / scale",
            "scale": f"-g * {masked(f'z * ({slope}) + 1')} / scale",
            **{s: f"g * {masked(d)}" for s, d in family.shapes.items()},
        },
        "pdf": {
            "x": f"g * ans * {on(slope)} / scale",
            "scale": f"-g * ans * {on(f'z * ({slope}) + 1')} / scale",
            **{s: f"g * ans * {on(d)}" for s, d in family.shapes.items()},
        },
    }
    density = masked(f"np.exp({log_density})")
    relative = masked(f"np.exp({log_density} - ans)")  # the density over ans (log forms)
    for method, g, dens, extra in (
        ("cdf", "g", density, ""),
        ("sf", "-g", density, ""),
        ("logcdf", "g", relative, " * np.exp(-ans)"),
        ("logsf", "-g", relative, " * np.exp(-ans)"),
    ):
        methods[method] = {
            "x": f"{g} * {dens} / scale",
            "scale": f"-{g} * {dens} * {on('z')} / scale".replace("--g", "g"),
            **{s: f"{g} * {masked(d)}{extra}" for s, d in family.cdf_shapes.items()},
        }
    for method, templates in methods.items():
        templates["loc"] = f"-({templates['x']})"
        hints = {
            s: f"srcgrad differentiates scipy.stats.{family.name}.{method} in x, loc and scale "
            f"but not in its shape parameter {s!r}: that derivative has no closed form"
            for s in family.shape_names
            if s not in templates
        }
        rule = Rule(
            name=f"scipy.stats.{family.name}.{method}",
            params=("x", *family.shape_names, "loc", "scale"),
            defaults={"loc": 0.0, "scale": 1.0},
            jvp=dict(templates),
            vjp=dict(templates),
            elementwise=True,
            rank=_max_rank,
            hints=hints,
        )
        register(getattr(dist, method), rule)


if _stats is not None:
    for _family in _FAMILIES:
        _family_rules(getattr(_stats, _family.name), _family)


# -- the helpers the templates call (gammaln, betaln) differentiated again ------------------
register(
    ("helper", "gammaln"),
    Rule(name="srcgrad's gammaln", params=("x",), jvp={"x": "g * digamma(x)"}),
)
register(
    ("helper", "betaln"),
    Rule(
        name="srcgrad's betaln",
        params=("a", "b"),
        jvp={"a": "g * (digamma(a) - digamma(a + b))", "b": "g * (digamma(b) - digamma(a + b))"},
    ),
)


# -- the Poisson distribution: in mu; the count k and the shift loc are integers ------------
_COUNT = "np.maximum(np.floor(k - loc), 0)"  # the count up to k, where it is one
_PMF_AT_COUNT = f"np.exp({_COUNT} * np.log(mu) - mu - gammaln({_COUNT} + 1))"


def _poisson_rules(poisson: Any) -> None:
    """``poisson.logpmf(k, mu, loc)`` and friends, differentiated in ``mu``. The cdf is a
    sum of pmf's, and its derivative telescopes to ``-pmf(floor(k - loc), mu)``."""
    below = "np.floor(k - loc) < 0"  # the cdf is 0 there, the sf 1
    at_count = f"np.where({below}, 0, {_PMF_AT_COUNT})"
    relative = (
        f"np.where({below}, 0, np.exp({_COUNT} * np.log(mu) - mu - gammaln({_COUNT} + 1) - ans))"
    )
    templates = {
        # 0 where the pmf is 0 (k - loc negative or not a whole number)
        "logpmf": "g * np.where(ans > -np.inf, xdivy(k - loc, mu) - 1, 0)",
        "pmf": "g * ans * (xdivy(k - loc, mu) - 1)",
        "cdf": f"-g * {at_count}",
        "sf": f"g * {at_count}",
        "logcdf": f"-g * {relative}",
        "logsf": f"g * {relative}",
    }
    hint = (
        "srcgrad differentiates scipy.stats.poisson.{} in mu only: k (a count) and loc "
        "(its shift) are whole numbers, in which the distribution has no derivative"
    )
    for method, template in templates.items():
        rule = Rule(
            name=f"scipy.stats.poisson.{method}",
            params=("k", "mu", "loc"),
            defaults={"loc": 0},
            jvp={"mu": template},
            vjp={"mu": template},
            elementwise=True,
            rank=_max_rank,
            hints=dict.fromkeys(("k", "loc"), hint.format(method)),
        )
        register(getattr(poisson, method), rule)


if _stats is not None:
    _poisson_rules(_stats.poisson)


# -- the multivariate normal distribution: in x, mean and cov ---------------------------------
_WHITE = "mvn_whiten(x, mean, cov)"  # inv(cov) @ (x - mean), one row per point
_PER_POINT = "np.reshape(g, (-1, 1))"  # the adjoint, one row per point
_POINTS = f"np.reshape(g, np.shape({_WHITE}))"  # the tangent of x, one row per point
_LOGPDF_JVP = {
    "x": f"np.reshape(-np.sum({_POINTS} * {_WHITE}, axis=-1), np.shape(ans))",
    "mean": f"np.reshape(np.sum(g * {_WHITE}, axis=-1), np.shape(ans))",
    "cov": f"np.reshape(mvn_cov_jvp(g, {_WHITE}, cov, mean), np.shape(ans))",
}
_LOGPDF_VJP = {
    "x": f"np.reshape(-{_PER_POINT} * {_WHITE}, np.shape(x))",
    "mean": f"unbroadcast(np.sum({_PER_POINT} * {_WHITE}, axis=0), mean)",
    "cov": f"mvn_cov_vjp(g, {_WHITE}, cov, mean)",
}


def _unknown_rank(ctx: Any) -> None:
    return None  # SciPy squeezes the result


def _mvn_rules(mvn: Any) -> None:
    """``multivariate_normal.logpdf(x, mean, cov)`` and ``pdf`` (``ans`` times the
    derivatives of ``logpdf``)."""
    pdf_jvp = {p: f"ans * {t}" for p, t in _LOGPDF_JVP.items()}
    pdf_vjp = {p: re.sub(r"\bg\b", "(g * ans)", t) for p, t in _LOGPDF_VJP.items()}
    for method, jvp, vjp in (("logpdf", _LOGPDF_JVP, _LOGPDF_VJP), ("pdf", pdf_jvp, pdf_vjp)):
        rule = Rule(
            name=f"scipy.stats.multivariate_normal.{method}",
            params=("x", "mean", "cov", "allow_singular"),
            defaults={"mean": None, "cov": 1, "allow_singular": False},
            fixed={"allow_singular": False},
            jvp=dict(jvp),
            vjp=dict(vjp),
            rank=_unknown_rank,
        )
        register(getattr(mvn, method), rule)


if _stats is not None:
    _mvn_rules(_stats.multivariate_normal)
