"""Rules for numpy's reductions: products, moments, cumulative sums and products,
peak-to-peak, weighted and NaN-skipping averages, norms and the trace.

``np.sum``, ``np.mean``, ``np.max`` and ``np.min`` live in ``methods.py``;
the rules here share their shapes (``_REDUCTION``, ``_reduced_rank``,
``_spread``). Where ``axis`` and ``keepdims`` are literals the templates are
written out for them; where they arrive as variables a runtime helper reads
them when the derivative runs.

Conventions at points where the derivative is not defined (or where the
obvious formula divides by zero):

* ``np.prod`` and ``np.cumprod`` are exact where ``x`` has zeros, as in JAX:
  the derivative in one element is the product of the others, computed
  without dividing by ``x`` (``prod_others``; ``cumprod_jvp``/``cumprod_vjp``
  divide only by nonzero elements and treat prefixes with one zero and with
  two or more zeros on their own).
* ``np.max``, ``np.min`` (and ``amax``/``amin``), ``np.ptp`` and the inf /
  -inf norms: tied extrema share the derivative evenly (JAX's convention).
  ``np.ptp`` is ``max - min``, so where every element is equal the two
  shares cancel and its derivative is 0.
* ``np.linalg.norm`` at a zero vector (or matrix): derivative 0, the
  minimum-norm subgradient and the only choice that keeps the gradient of
  an even function odd. This matches ``np.abs`` at 0 (the norm of a
  one-element vector is its absolute value). JAX gives NaN here
  (``x / norm`` at 0 / 0, jax-ml/jax#3058, #21723); srcgrad deliberately
  does not. Likewise ord 1 and p-norms give 0 for an element that is 0.
* ``np.std`` where the variance is 0: derivative 0, for the same reason
  (``std`` is a scaled 2-norm of ``x - mean``; JAX gives NaN).
* ``np.nansum`` and ``np.nanmean``: NaN elements get derivative 0.
* The matrix norms of the singular values (``ord`` 2, -2, ``'nuc'``) come from the
  SVD: tied extreme singular values share the derivative evenly (the minimum-norm
  subgradient), singular values 0 take none (derivative 0 at a zero matrix); their
  second derivatives need distinct singular values, as ``svd``'s do.

Not differentiated: ``ord``, ``ddof``, ``axis`` and the trace's ``offset`` are
constants (no derivative flows to them); ``out=``, ``where=`` and
``initial=`` are not accepted; ``np.cumprod`` takes no ``dtype``. numpy 2
removed ``ndarray.ptp``, so only ``np.ptp`` has a rule.
"""

from __future__ import annotations

import ast

import numpy as np

from . import Context, NotStatic, Rule, linear, register
from .methods import _REDUCTION, _reduced_rank, _spread
from .runtime_rules import helper


# -- template pieces -------------------------------------------------------------------
def _kw(ctx: Context, *names: str) -> str:
    """``name=name`` keyword arguments for those of ``names`` not left at their default."""
    parts = []
    for n in names:
        node = ctx.args[n]
        default = ctx.rule.defaults.get(n)
        if isinstance(node, ast.Constant) and type(node.value) is type(default):
            if node.value == default:
                continue
        parts.append(f"{n}={n}")
    return "".join(f", {p}" for p in parts)


def _static_axis(ctx: Context) -> bool:
    return ctx.is_static("axis", "keepdims")


def _expanded(ctx: Context, g: str) -> str:
    """``g`` (shaped like the result) with the reduced axes put back as size 1, so that it
    broadcasts against ``x``."""
    if not _static_axis(ctx):
        return f"_expand({g}, x, axis, keepdims)"
    if ctx.static("keepdims") or ctx.static("axis") is None:
        return g
    return f"np.expand_dims({g}, axis)"


def _count(ctx: Context) -> str:
    """How many elements of ``x`` each result element combines."""
    try:
        axis = ctx.static("axis")
    except NotStatic:
        return "reduced_size(x, axis)"
    if axis is None:
        return "np.size(x)"
    if isinstance(axis, int):
        return "np.shape(x)[axis]"
    return "reduced_size(x, axis)"


def _divisor(ctx: Context) -> str:
    """``N - ddof``, the divisor of ``np.var`` and ``np.std``."""
    count = _count(ctx)
    node = ctx.args["ddof"]
    if isinstance(node, ast.Constant) and node.value == 0:
        return count
    return f"({count} - ddof)"


def _centered(ctx: Context) -> str:
    return f"(x - np.mean(x{_kw(ctx, 'axis')}, keepdims=True))"


def _register(keys, rule: Rule) -> None:
    for key in keys:
        register(key, rule)


# -- np.prod: the product of the others, exact at zeros -----------------------------------
def _prod_others(ctx: Context) -> str:
    return f"prod_others(x{_kw(ctx, 'axis')})"


_register(
    [np.prod, ("method", "prod")],
    Rule(
        name="np.prod",
        jvp={"x": lambda c: f"np.sum(g * {_prod_others(c)}{_kw(c, 'axis', 'dtype', 'keepdims')})"},
        vjp={"x": lambda c: f"{_expanded(c, 'g')} * {_prod_others(c)}"},
        **_REDUCTION,
    ),
)

# -- np.var and np.std, with ddof --------------------------------------------------------
_MOMENT = dict(
    params=("x", "axis", "dtype", "out", "ddof", "keepdims"),
    defaults={"axis": None, "dtype": None, "out": None, "ddof": 0, "keepdims": False},
    fixed={"out": None},
    rank=_reduced_rank,
)


def _var_jvp(ctx: Context) -> str:
    total = f"np.sum({_centered(ctx)} * g{_kw(ctx, 'axis', 'dtype', 'keepdims')})"
    return f"2 * {total} / {_divisor(ctx)}"


def _var_vjp(ctx: Context) -> str:
    return f"2 * {_centered(ctx)} * {_expanded(ctx, 'g')} / {_divisor(ctx)}"


def _std_jvp(ctx: Context) -> str:
    total = f"np.sum({_centered(ctx)} * g{_kw(ctx, 'axis', 'dtype', 'keepdims')})"
    return f"{total} / ({_divisor(ctx)} * safe_divisor(ans))"


def _std_vjp(ctx: Context) -> str:
    return f"{_centered(ctx)} * {_expanded(ctx, 'g / safe_divisor(ans)')} / {_divisor(ctx)}"


_register(
    [np.var, ("method", "var")],
    Rule(name="np.var", jvp={"x": _var_jvp}, vjp={"x": _var_vjp}, **_MOMENT),
)
_register(
    [np.std, ("method", "std")],
    Rule(name="np.std", jvp={"x": _std_jvp}, vjp={"x": _std_vjp}, **_MOMENT),
)


# -- np.cumsum and np.cumprod --------------------------------------------------------------
def _cumulative_rank(ctx: Context) -> int | None:
    try:
        axis = ctx.static("axis")
    except NotStatic:
        return None
    return 1 if axis is None else ctx.rank("x")


def _cumsum_vjp(ctx: Context) -> str:
    try:
        axis = ctx.static("axis")
    except NotStatic:
        return "cumsum_vjp(g, x, axis)"
    if axis is None:
        return "np.reshape(np.flip(np.cumsum(np.flip(g))), np.shape(x))"
    return "np.flip(np.cumsum(np.flip(g, axis), axis), axis)"


_CUMULATIVE = dict(
    params=("x", "axis", "dtype", "out"),
    defaults={"axis": None, "dtype": None, "out": None},
    rank=_cumulative_rank,
)
_register(
    [np.cumsum, ("method", "cumsum")],
    Rule(
        name="np.cumsum",
        jvp={"x": linear},
        vjp={"x": _cumsum_vjp},
        fixed={"out": None},
        **_CUMULATIVE,
    ),
)
_register(
    [np.cumprod, ("method", "cumprod")],
    Rule(
        name="np.cumprod",
        jvp={"x": "cumprod_jvp(g, x, axis)"},
        vjp={"x": "cumprod_vjp(g, x, axis)"},
        fixed={"out": None, "dtype": None},
        **_CUMULATIVE,
    ),
)


# -- np.ptp: max - min, ties shared ---------------------------------------------------------
def _ptp(helper: str):
    def template(ctx: Context) -> str:
        kw = _kw(ctx, "axis", "keepdims")
        top, bottom = f"np.max(x{kw})", f"np.min(x{kw})"
        return f"{helper}(g, x, {top}{kw}) - {helper}(g, x, {bottom}{kw})"

    return template


_register(
    [np.ptp],
    Rule(
        name="np.ptp",
        params=("x", "axis", "out", "keepdims"),
        defaults={"axis": None, "out": None, "keepdims": False},
        fixed={"out": None},
        jvp={"x": _ptp("extremum_jvp")},
        vjp={"x": _ptp("extremum_vjp")},
        rank=_reduced_rank,
    ),
)


# -- np.average, with differentiable weights -------------------------------------------
def _unweighted(ctx: Context) -> bool:
    node = ctx.args["weights"]
    return isinstance(node, ast.Constant) and node.value is None


def _returned(ctx: Context) -> bool:
    """Whether ``np.average`` returns ``(average, sum of weights)``: ``returned=True``."""
    return ctx.is_static("returned") and bool(ctx.static("returned"))


def _average_refuse(ctx: Context) -> str | None:
    if not ctx.is_static("returned"):
        return (
            "srcgrad differentiates np.average with returned given as a literal (True or "
            "False), which says whether it returns one array or a pair"
        )
    return None


def _average_jvp_x(ctx: Context):
    if not _returned(ctx):
        return linear(ctx)
    # the sum of the weights does not depend on x
    return "(np.average(g, axis, weights, keepdims=keepdims), np.zeros_like(ans[1]))"


def _average_jvp_weights(ctx: Context) -> str:
    if not _returned(ctx):
        return "average_jvp_weights(g, x, ans, axis, weights, keepdims)"
    return (
        "(average_jvp_weights(g, x, ans[0], axis, weights, keepdims), "
        "average_scale_jvp(g, x, ans[0], axis, keepdims))"
    )


def _average_vjp_x(ctx: Context) -> str:
    g = "g[0]" if _returned(ctx) else "g"
    if _unweighted(ctx):  # (`or 1`: see np.mean's rule)
        return _spread(ctx, f"{g} / ({_count(ctx)} or 1)")
    return f"average_vjp_x({g}, x, axis, weights, keepdims)"


def _average_vjp_weights(ctx: Context) -> str:
    if not _returned(ctx):
        return "average_vjp_weights(g, x, ans, axis, weights, keepdims)"
    return (
        "average_vjp_weights(g[0], x, ans[0], axis, weights, keepdims) "
        "+ average_scale_vjp(g[1], x, axis, weights, keepdims)"
    )


register(
    np.average,
    Rule(
        name="np.average",
        params=("x", "axis", "weights", "returned", "keepdims"),
        defaults={"axis": None, "weights": None, "returned": False, "keepdims": False},
        jvp={"x": _average_jvp_x, "weights": _average_jvp_weights},
        vjp={"x": _average_vjp_x, "weights": _average_vjp_weights},
        rank=lambda c: None if _returned(c) else _reduced_rank(c),
        tuple_result=_returned,
        refuse=_average_refuse,
    ),
)
# (rules of the helpers, for derivatives of higher order: the sum of the weights is linear)
helper(
    "average_scale_jvp", ("d", "x", "avg", "axis", "keepdims"), ("d",), defaults={"keepdims": False}
)
helper(
    "average_scale_vjp",
    ("d", "x", "axis", "weights", "keepdims"),
    ("d",),
    defaults={"keepdims": False},
)

# -- np.nansum and np.nanmean: NaNs get derivative 0 ----------------------------------------
_register(
    [np.nansum],
    Rule(
        name="np.nansum",
        jvp={
            "x": lambda c: (
                f"np.sum(np.where(np.isnan(x), 0.0, g){_kw(c, 'axis', 'dtype', 'keepdims')})"
            )
        },
        vjp={"x": lambda c: f"np.where(np.isnan(x), 0.0, {_spread(c, 'g')})"},
        **_REDUCTION,
    ),
)


def _nanmean_vjp(ctx: Context) -> str:
    count = f"count_valid(x{_kw(ctx, 'axis', 'keepdims')})"
    return f"np.where(np.isnan(x), 0.0, {_spread(ctx, f'g / {count}')})"


_register(
    [np.nanmean],
    Rule(
        name="np.nanmean",
        jvp={
            "x": lambda c: (
                f"np.nanmean(np.where(np.isnan(x), np.nan, g){_kw(c, 'axis', 'dtype', 'keepdims')})"
            )
        },
        vjp={"x": _nanmean_vjp},
        **_REDUCTION,
    ),
)


# -- np.linalg.norm --------------------------------------------------------------------------
def _two_norm(ctx: Context) -> bool:
    """Whether this call is a 2-norm (vector) or Frobenius norm, known statically."""
    try:
        ord_, axis = ctx.static("ord"), ctx.static("axis")
    except NotStatic:
        return False
    if ord_ is None or ord_ == "fro":
        return True
    return ord_ == 2 and (isinstance(axis, int) or (axis is None and ctx.rank("x") == 1))


def _norm_jvp(ctx: Context) -> str:
    kw = _kw(ctx, "axis", "keepdims")
    if _two_norm(ctx):
        return f"np.sum(x * g{kw}) / safe_divisor(ans)"
    return f"np.sum(g * norm_grad(x, ans, ord, axis, keepdims){kw})"


def _norm_vjp(ctx: Context) -> str:
    if _two_norm(ctx):
        return f"x * {_expanded(ctx, 'g / safe_divisor(ans)')}"
    return f"{_expanded(ctx, 'g')} * norm_grad(x, ans, ord, axis, keepdims)"


register(
    np.linalg.norm,
    Rule(
        name="np.linalg.norm",
        params=("x", "ord", "axis", "keepdims"),
        defaults={"ord": None, "axis": None, "keepdims": False},
        jvp={"x": _norm_jvp},
        vjp={"x": _norm_vjp},
        rank=_reduced_rank,
    ),
)


# -- np.trace ---------------------------------------------------------------------------------
def _trace_rank(ctx: Context) -> int | None:
    rank = ctx.rank("x")
    return None if rank is None else rank - 2


def _trace_vjp(ctx: Context) -> str:
    extra = _kw(ctx, "offset", "axis1", "axis2").replace(", ", "", 1)
    return f"trace_vjp(g, x, {extra})" if extra else "trace_vjp(g, x)"


_register(
    [np.trace, ("method", "trace")],
    Rule(
        name="np.trace",
        params=("x", "offset", "axis1", "axis2", "dtype", "out"),
        defaults={"offset": 0, "axis1": 0, "axis2": 1, "dtype": None, "out": None},
        fixed={"out": None},
        jvp={"x": linear},
        vjp={"x": _trace_vjp},
        rank=_trace_rank,
    ),
)
