"""Rules for ``scipy.special``, registered only when SciPy is installed.

Rules are keyed by the function objects, so ``from scipy.special import expit``,
``import scipy.special as sp; sp.expit(x)`` and ``scipy.special.expit(x)`` find
the same rule (``psi`` is ``digamma``). Templates that need a SciPy function
the user's code may not have imported call a helper of :mod:`srcgrad.runtime`
(``digamma``, ``trigamma``) that imports SciPy when first called, so generated
modules stay standalone and srcgrad itself never needs SciPy. ``polygamma``'s
derivative calls ``polygamma`` as the user's code spells it.

Read a row as: the function, then the derivative of each differentiable
argument (``g`` the incoming tangent or adjoint, ``ans`` the result)::

    expit(x)         g * e / (1 + e)**2, e = exp(-|x|)  (ans * (1 - ans) is 0 in the tails)
    logit(x)         g / (x * (1 - x))
    erf(x), erfc(x)  +-g * exp(-x * x) * (2 / sqrt(pi))
    gammaln(x)       g * digamma(x)
    digamma(x)       g * trigamma(x)                (trigamma = polygamma(1, .))
    polygamma(n, x)  g * polygamma(n + 1, x)        (n is not differentiated)
    xlogy(x, y)      g * log(y);  g * xdivy(x, y)   (xdivy: x / y, 0 where x == 0)
    ndtr(x)          g * exp(-x * x / 2) / sqrt(2 pi)   (the normal cdf)
    log_ndtr(x)      g * exp(-x * x / 2 - ans) / sqrt(2 pi)  (stable where ndtr is 0)
    ndtri(p)         g * sqrt(2 pi) * exp(ans * ans / 2)
    erfinv(x)        g * sqrt(pi) / 2 * exp(ans * ans)   (erfcinv: its negative)
    betaln(a, b)     g * (digamma(a) - digamma(a + b)); the same in b
    logsumexp(a, b)  a: g * b * exp(a - ans), the (weighted) softmax of a, stable
                     b: g * exp(a - ans)
    softmax(x)       ans * (g - sum(g * ans, axis, keepdims=True))   (both modes)
    log_softmax(x)   forward g - sum(exp(ans) * g, ...), reverse g - exp(ans) * sum(g, ...)
    iv(v, x)         g * (iv(v - 1, x) + iv(v + 1, x)) / 2     (i0: g * iv(1, x))
    jv(v, x), yv     g * (jv(v - 1, x) - jv(v + 1, x)) / 2     (j0: -g * jv(1, x); y alike)
    kv(v, x)         -g * (kv(v - 1, x) + kv(v + 1, x)) / 2    (k0: -g * kv(1, x))
    ive(v, x)        g * ((ive(v - 1, x) + ive(v + 1, x)) / 2 - sign(x) * ans)   (i0e, i1e)

The Bessel functions (``i0 i1 i0e i1e iv ive j0 j1 jv y0 y1 yv k0 k1 kv``) are
differentiated in ``x``; their order ``v`` is not (an order that depends on the ``wrt``
inputs is an error). Their templates call srcgrad's ``bessel_iv``, ``bessel_jv``...
(SciPy's ``iv``, ``jv``... imported when called), whose own rules are the same
recurrences. ``i0e``, ``i1e`` and ``ive`` (``exp(-|x|)`` times ``iv``) have a kink at
``x == 0`` where ``sign(0) == 0`` gives the mean of the one-sided slopes.

Conventions at delicate points (JAX's, except where noted):

* ``logit`` at 0 and 1: the derivative ``1 / (x * (1 - x))`` is ``+inf``.
* ``xlogy(x, y)``: the derivative in ``x`` is ``log(y)`` everywhere, also at
  ``x == 0`` (for ``y > 0`` that is the derivative; at ``y == 0`` it is ``-inf``,
  as in JAX). The derivative in ``y`` is ``x / y`` but 0 where ``x == 0``, since
  ``xlogy(0, y) == 0`` for every ``y``; JAX gives ``nan`` at ``(0, 0)``.
* ``logsumexp``: an entry of ``-inf`` (or with weight ``b == 0``) gets derivative
  0; a reduced slice that is all ``-inf`` (``ans == -inf``) gets ``nan``, as in
  JAX. ``b`` is differentiable; ``return_sign`` must be left ``False``. SciPy
  treats a 0-d ``a`` as shape ``(1,)`` under ``keepdims=True`` or ``axis=()``;
  the adjoint is summed back to ``a``'s shape.
* ``gammaln`` is ``log|gamma(x)|``, so its derivative ``digamma(x)`` holds for
  negative non-integers too.

Dtypes: derivatives have the dtype of the result SciPy returns. SciPy keeps
float32 for all these functions of float32 arguments except ``polygamma``
(float64, and so is its derivative; ``trigamma`` casts back to the argument's
precision for ``digamma``). SciPy's two-argument ufuncs (``xlogy``) treat a
Python float as float64 (no NEP 50 weak scalars), so ``xlogy`` of a float32
array and a Python float is float64, and ``xdivy`` promotes the same way.
Reverse-mode gradients are cast to each argument's dtype by srcgrad's API.
``scipy.special`` functions run on numpy arrays only: no cupy twin is bound.
"""

from __future__ import annotations

import ast
import dataclasses
from collections import ChainMap

from . import Context, NotStatic, Rule, instantiate, register
from .builders import _max_rank

try:
    import scipy.special as _special
except ImportError:  # srcgrad does not require SciPy: no rules then
    _special = None


def _elementwise(func, params, templates, jvp=None, hints=None) -> Rule:
    """An elementwise function: one template serves both modes (see builders.py), or
    ``jvp`` in forward mode (``hints``: what to say of a parameter not differentiated)."""
    rule = Rule(
        name=f"scipy.special.{func.__name__}",
        params=tuple(params),
        jvp={**templates, **(jvp or {})},
        vjp=dict(templates),
        elementwise=True,
        rank=_max_rank,
        hints=hints or {},
    )
    return register(func, rule)


# -- Bessel functions, in x: the order is not differentiated ---------------------------------
#: name -> (the helper computing it at any order, the sign of the derivative recurrence:
#: d/dx C_v = (C_{v-1} + sign * C_{v+1}) / 2, times -1 for kv; whether exp(-|x|) scales it)
_BESSEL = {
    "i": ("bessel_iv", "+", 1),
    "j": ("bessel_jv", "-", 1),
    "y": ("bessel_yv", "-", 1),
    "k": ("bessel_kv", "+", -1),
}


def _bessel_slope(kind: str, order: str, scaled: bool = False) -> str:
    """The derivative in x of the Bessel function ``kind`` of ``order`` (a template)."""
    helper, sign, outer = _BESSEL[kind]
    helper = "bessel_ive" if scaled else helper
    if order == "0":  # C_{-1} is C_1 (I, K) or -C_1 (J, Y): d C_0 = +-C_1
        slope = f"{helper}(1, x)" if kind == "i" else f"-{helper}(1, x)"
    else:
        below = "v - 1" if order == "v" else f"{int(order) - 1}"
        above = "v + 1" if order == "v" else f"{int(order) + 1}"
        slope = f"({helper}({below}, x) {sign} {helper}({above}, x)) / 2"
        slope = f"-{slope}" if outer < 0 else slope
    if scaled:  # d (C(x) exp(-|x|)) = (C'(x) - sign(x) C(x)) exp(-|x|)
        slope = f"({slope} - np.sign(x) * ans)"
    return slope


_ORDER_HINT = (
    "srcgrad differentiates scipy.special.{} in x only, not in its order v (an order "
    "that depends on the arguments being differentiated has no derivative srcgrad knows)"
)


def _register_bessel(sp) -> None:
    for name, kind, order, scaled in (
        ("i0", "i", "0", False),
        ("i1", "i", "1", False),
        ("i0e", "i", "0", True),
        ("i1e", "i", "1", True),
        ("j0", "j", "0", False),
        ("j1", "j", "1", False),
        ("y0", "y", "0", False),
        ("y1", "y", "1", False),
        ("k0", "k", "0", False),
        ("k1", "k", "1", False),
    ):
        _elementwise(getattr(sp, name), ("x",), {"x": f"g * {_bessel_slope(kind, order, scaled)}"})
    for name, kind, scaled in (
        ("iv", "i", False),
        ("ive", "i", True),
        ("jv", "j", False),
        ("yv", "y", False),
        ("kv", "k", False),
    ):
        _elementwise(
            getattr(sp, name),
            ("v", "x"),
            {"x": f"g * {_bessel_slope(kind, 'v', scaled)}"},
            hints={"v": _ORDER_HINT.format(name)},
        )


# -- reductions over ``axis`` ---------------------------------------------------------------
def _with_axis(ctx: Context, call: str, expr: str, keepdims: str | None = None) -> str:
    """``call(expr, axis=axis, keepdims=...)``, leaving out arguments at their defaults."""
    parts = [expr]
    if not (ctx.is_static("axis") and ctx.static("axis") is None):
        parts.append("axis=axis")
    if keepdims is not None:
        parts.append(f"keepdims={keepdims}")
    return f"{call}({', '.join(parts)})"


def _put_back(ctx: Context, value: str) -> str:
    """A reduced ``value`` with the reduced axes put back (size 1), broadcasting against ``a``."""
    if not ctx.is_static("axis", "keepdims"):
        return f"_expand({value}, a, axis, keepdims)"
    if ctx.static("keepdims") or ctx.static("axis") is None:
        return value  # already broadcasts: keepdims, or a scalar
    return f"np.expand_dims({value}, axis)"


def _lse_keepdims(ctx: Context) -> str | None:
    return None if ctx.is_static("keepdims") and ctx.static("keepdims") is False else "keepdims"


def _has_b(ctx: Context) -> bool:
    return not (ctx.is_static("b") and ctx.static("b") is None)


def _lse_weights(ctx: Context) -> str:
    """``d ans / d a``: ``b * exp(a - ans)``, the (weighted) softmax of ``a``."""
    weights = f"np.exp(a - {_put_back(ctx, 'ans')})"
    if not _has_b(ctx):
        return weights
    if ctx.is_static("b") or ctx.rank("b") is not None:  # a number or an array
        return f"b * {weights}"
    return f"({weights} if b is None else b * {weights})"  # b may be None at run time


def _lse_jvp_a(ctx: Context) -> str:
    return _with_axis(ctx, "np.sum", f"g * {_lse_weights(ctx)}", _lse_keepdims(ctx))


def _lse_vjp_a(ctx: Context) -> str:
    grad = f"{_put_back(ctx, 'g')} * {_lse_weights(ctx)}"
    # summed back to the shape of a where it broadcast against b, or where SciPy
    # treated a 0-d a as shape (1,) (keepdims=True or axis=())
    simple = not _has_b(ctx) and ctx.rank("a") not in (0, None)
    return grad if simple else f"unbroadcast({grad}, a)"


def _lse_jvp_b(ctx: Context) -> str:
    return _with_axis(ctx, "np.sum", f"g * np.exp(a - {_put_back(ctx, 'ans')})", _lse_keepdims(ctx))


def _lse_vjp_b(ctx: Context) -> str:
    return f"sum_like({_put_back(ctx, 'g')} * np.exp(a - {_put_back(ctx, 'ans')}), b)"


def _lse_rank(ctx: Context) -> int | None:
    ranks = [ctx.rank("a")] + ([ctx.rank("b")] if _has_b(ctx) else [])
    try:
        axis, keepdims = ctx.static("axis"), ctx.static("keepdims")
    except NotStatic:
        return None
    if axis is None and not keepdims:
        return 0
    if None in ranks or max(ranks) == 0:  # SciPy may treat a 0-d a as shape (1,)
        return None
    if keepdims:
        return max(ranks)
    return max(ranks) - (len(axis) if isinstance(axis, tuple) else 1)


def _softmax_template(ctx: Context) -> str:
    # the Jacobian diag(s) - s s^T is symmetric: one map serves both modes
    return f"ans * (g - {_with_axis(ctx, 'np.sum', 'g * ans', 'True')})"


def _log_softmax_jvp(ctx: Context) -> str:
    return f"g - {_with_axis(ctx, 'np.sum', 'np.exp(ans) * g', 'True')}"


def _log_softmax_vjp(ctx: Context) -> str:
    return f"g - np.exp(ans) * {_with_axis(ctx, 'np.sum', 'g', 'True')}"


def _polygamma_derivative(ctx: Context) -> ast.expr:
    """``g * polygamma(n + 1, x)``, calling polygamma as the user's code names it (so the
    generated module has it imported), in float64 like SciPy's polygamma itself."""
    order = f"{ctx.static('n') + 1}" if ctx.is_static("n") else "n + 1"
    symbols = ChainMap({"polygamma": ctx.node.func}, ctx.symbols)
    return instantiate(f"g * polygamma({order}, x)", dataclasses.replace(ctx, symbols=symbols))


def _same_rank(ctx: Context) -> int | None:
    return ctx.rank("x")


def _register() -> None:
    sp = _special
    # e / (1 + e)**2 with e = exp(-|x|): exact in the tails, where ans * (1 - ans) is 0
    _elementwise(sp.expit, ("x",), {"x": "g * np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))) ** 2"})
    _elementwise(sp.logit, ("x",), {"x": "g / (x * (1 - x))"})
    _elementwise(sp.erf, ("x",), {"x": "g * np.exp(-x * x) * (2 / math.sqrt(math.pi))"})
    _elementwise(sp.erfc, ("x",), {"x": "-g * np.exp(-x * x) * (2 / math.sqrt(math.pi))"})
    _elementwise(sp.gammaln, ("x",), {"x": "g * digamma(x)"})
    _elementwise(sp.digamma, ("x",), {"x": "g * trigamma(x)"})  # also sp.psi: one object
    _elementwise(sp.polygamma, ("n", "x"), {"x": _polygamma_derivative})
    _elementwise(sp.xlogy, ("x", "y"), {"x": "g * np.log(y)", "y": "g * xdivy(x, y)"})
    # the normal distribution's cdf and its inverse, as statistics code calls them
    _elementwise(sp.ndtr, ("x",), {"x": "g * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)"})
    _elementwise(
        sp.log_ndtr, ("x",), {"x": "g * np.exp(-0.5 * x * x - ans) / math.sqrt(2 * math.pi)"}
    )
    _elementwise(sp.ndtri, ("x",), {"x": "g * math.sqrt(2 * math.pi) * np.exp(0.5 * ans * ans)"})
    _elementwise(sp.erfinv, ("x",), {"x": "g * (math.sqrt(math.pi) / 2) * np.exp(ans * ans)"})
    _elementwise(sp.erfcinv, ("x",), {"x": "-g * (math.sqrt(math.pi) / 2) * np.exp(ans * ans)"})
    _elementwise(
        sp.betaln,
        ("a", "b"),
        {"a": "g * (digamma(a) - digamma(a + b))", "b": "g * (digamma(b) - digamma(a + b))"},
    )
    register(
        sp.logsumexp,
        Rule(
            name="scipy.special.logsumexp",
            params=("a", "axis", "b", "keepdims", "return_sign"),
            defaults={"axis": None, "b": None, "keepdims": False, "return_sign": False},
            fixed={"return_sign": False},
            jvp={"a": _lse_jvp_a, "b": _lse_jvp_b},
            vjp={"a": _lse_vjp_a, "b": _lse_vjp_b},
            rank=_lse_rank,
        ),
    )
    register(
        sp.softmax,
        Rule(
            name="scipy.special.softmax",
            params=("x", "axis"),
            defaults={"axis": None},
            jvp={"x": _softmax_template},
            vjp={"x": _softmax_template},
            rank=_same_rank,
        ),
    )
    register(
        sp.log_softmax,
        Rule(
            name="scipy.special.log_softmax",
            params=("x", "axis"),
            defaults={"axis": None},
            jvp={"x": _log_softmax_jvp},
            vjp={"x": _log_softmax_vjp},
            rank=_same_rank,
        ),
    )


if _special is not None:
    _register()
    _register_bessel(_special)


# the helpers the Bessel templates call, differentiated again: the same recurrences
for _kind, (_helper, _sign, _outer) in _BESSEL.items():
    register(
        ("helper", _helper),
        Rule(
            name=f"srcgrad's {_helper}",
            params=("v", "x"),
            jvp={"x": f"g * {_bessel_slope(_kind, 'v')}"},
        ),
    )
register(
    ("helper", "bessel_ive"),
    Rule(
        name="srcgrad's bessel_ive",
        params=("v", "x"),
        jvp={"x": f"g * {_bessel_slope('i', 'v', True)}"},
    ),
)
