"""Rules for ``scipy.stats``, registered when SciPy is installed: the continuous
distributions ``norm``, ``t``, ``gamma``, ``beta``, ``expon``, ``lognorm``, ``laplace``,
``cauchy`` and ``logistic`` (``logpdf``, ``pdf``, ``cdf``, ``sf``, ``logcdf``,
``logsf``), ``poisson`` (``logpmf``, ``pmf``, ``cdf``, ``sf``, ``logcdf``, ``logsf``)
and ``multivariate_normal`` (``logpdf``, ``pdf``), as statistics and finance code call
them (Black-Scholes: ``norm.cdf(d1)``; a likelihood: ``np.sum(t.logpdf(r, df, scale=s))``).

Rules are keyed by the bound methods (``scipy.stats.norm.cdf``), which compare equal
each time they are looked up. Frozen distributions have no rules: normalize writes
``d = norm(mu, s)`` then ``d.logpdf(x)`` as ``norm.logpdf(x, mu, s)`` where ``d`` is made
in the function and only asked for values (``srcgrad/compiler/normalize/frozen.py``); a
value srcgrad differentiates reaching any other frozen distribution is an error that
says to write ``norm.logpdf(x, mu, s)`` (see ``frozen_hint``).

**norm.** With ``z = (x - loc) / scale`` and ``phi`` the standard density, each row is
the derivative in ``x``; in ``loc`` it is the negative, and in ``scale`` the one in
``x`` times ``-z`` (``logpdf``, ``pdf``: see the rows)::

    cdf     g * phi(z) / scale                 sf      -g * phi(z) / scale
    logcdf  g * exp(log phi(z) - ans) / scale  logsf   -g * exp(log phi(z) - ans) / scale
    pdf     -g * ans * z / scale               (scale: g * ans * (z * z - 1) / scale)
    logpdf  -g * z / scale                     (scale: g * (z * z - 1) / scale)

**Loc-scale families with shape parameters** (``t(df)``, ``gamma(a)``, ``beta(a, b)``,
``lognorm(s)``, and ``expon``, ``laplace``, ``cauchy``, ``logistic``). Each is given by
its standard log density ``L(z)`` and its slope ``L'(z)`` (the rows of ``_FAMILIES``);
with ``f = exp(L(z))``::

    logpdf  x: g * L'(z) / scale      scale: -g * (z * L'(z) + 1) / scale   shape: g * dL
    pdf     the same times ans
    cdf     x: g * f / scale          scale: -g * f * z / scale             shape: see below
    logcdf  x: g * exp(L(z) - ans) / scale, and so on; sf, logsf: the negatives

and in ``loc`` the negative of the derivative in ``x``. In the shape parameters the log
density's derivative is closed (``dL``: ``t``'s df through digamma, ``gamma``'s a,
``beta``'s a and b, ``lognorm``'s s); the cdf's is closed for ``lognorm``'s s only
(``ndtr(log(z) / s)``). ``gamma.cdf`` in a, ``beta.cdf`` in a or b and ``t.cdf`` in df
(regularized incomplete gamma and beta functions differentiated in their parameters)
are not: an argument there that depends on the ``wrt`` inputs is an error saying so.
Outside the support (``gamma``, ``lognorm``: ``z <= 0``; ``expon``: ``z < 0``;
``beta``: outside ``(0, 1)``) the formulas are evaluated at a point inside it and the
derivative is 0: the density is 0 there (and its log ``-inf``), the cdf 0 or 1. On the
boundary (``z == 0``) that is the derivative from outside, for ``expon`` the one from
inside. Densities and cdf's are
SciPy's float64 whatever the arguments' dtype.

**poisson**, in ``mu`` only: ``logpmf``: ``g * (xdivy(k - loc, mu) - 1)`` (0 where the
pmf is 0), ``pmf``: ``ans`` times that, ``cdf``: ``-g * pmf(floor(k - loc), mu)`` (the
sum telescopes), ``sf`` its negative, ``logcdf``/``logsf`` those over ``exp(ans)``. The
count ``k`` and the shift ``loc`` are whole numbers: one that depends on the ``wrt``
inputs is an error.

**multivariate_normal**, in ``x``, ``mean`` and ``cov``, with ``s = inv(cov) (x - mean)``
for each point: ``logpdf``: ``-g s`` in ``x``, ``g s`` summed over the points in
``mean``, ``(s s' - inv(cov)) g / 2`` summed in ``cov``; ``pdf``: ``ans`` times those.
``cov`` may be a matrix, a vector (its diagonal) or a number (times the identity), as
SciPy reads it; ``allow_singular`` must stay ``False``. SciPy reads one triangle of a
matrix ``cov`` (``eigh``); as for ``np.linalg.cholesky`` and ``eigh`` (and JAX), the
derivative treats ``cov`` as symmetric: a tangent ``dcov`` counts as its symmetric part
``(dcov + dcov.T) / 2`` and the adjoint is symmetric, so both agree with finite
differences along symmetric directions (differentiate functions of symmetric matrices,
``cov = l @ l.T + d``, where every view agrees).

The templates use numpy and srcgrad's helpers (``digamma``, ``gammaln``, ``betaln``,
``xdivy``, which import SciPy when called; ``mvn_whiten`` and friends in
:mod:`srcgrad.rules.helpers.scipy`), so the derivative code needs no SciPy object beyond
the user's own call.
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
try:  # the classes of distributions and of frozen ones (SciPy's private modules)
    from scipy.stats._distn_infrastructure import rv_frozen as _rv_frozen
    from scipy.stats._distn_infrastructure import rv_generic as _rv_generic
    from scipy.stats._multivariate import multi_rv_frozen as _multi_rv_frozen
    from scipy.stats._multivariate import multi_rv_generic as _multi_rv_generic

    _DISTRIBUTIONS = (_rv_generic, _multi_rv_generic)
    _FROZEN = (_rv_frozen, _multi_rv_frozen)
except ImportError:
    _DISTRIBUTIONS = _FROZEN = ()

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


# -- frozen distributions: refused, with what to write instead --------------------------------
#: the methods of a frozen distribution a user may call on a value srcgrad differentiates
_FROZEN_METHODS = frozenset(
    ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "logpmf", "pmf", "ppf", "isf")
)
_FROZEN_ADVICE = (
    "srcgrad differentiates a frozen scipy.stats distribution made in the function and "
    "only asked for values there (`dist = norm(mu, s)`, then `dist.logpdf(x)`, `pdf`, "
    "`cdf`, `logcdf`, `sf`, `logsf`, `pmf`, `logpmf`; multivariate_normal's `logpdf` and "
    "`pdf`: a name bound once, not passed in, "
    "returned, stored, passed to a function or read otherwise); for any other, pass the "
    "parameters to the distribution's method instead, `norm.logpdf(x, mu, s)` (`loc` and "
    "`scale` by position or keyword; shape parameters first: `t.logpdf(x, df, loc, scale)`)"
)


def frozen_hint(callee: Any, key: Any) -> str | None:
    """What to say where a value srcgrad differentiates reaches a frozen distribution, or
    None: ``callee`` is the object called (a distribution frozen with parameters, or a method
    of a frozen one), ``key`` the rule key srcgrad looked up (``("method", "logpdf")``)."""
    if not _DISTRIBUTIONS:
        return None
    if isinstance(callee, _DISTRIBUTIONS):  # norm(mu, s) with mu or s differentiated
        return f"{_FROZEN_ADVICE}."
    if isinstance(getattr(callee, "__self__", None), _FROZEN):  # a method of a frozen one
        return f"{_FROZEN_ADVICE}."
    if isinstance(key, tuple) and key[0] == "method" and key[1] in _FROZEN_METHODS:
        return f"srcgrad has no rule for the method .{key[1]}(); if its object is a frozen " + (
            f"distribution: {_FROZEN_ADVICE}."
        )
    return None
