"""Rules for numpy's numerical routines: convolution and correlation (``np.convolve``,
``np.correlate``), the trapezoidal rule (``np.trapezoid``, and ``np.trapz`` where numpy
still has it), linear interpolation (``np.interp``), polynomials (``np.polyval``,
``np.polyder``), cross products (``np.cross``) and finite differences (``np.gradient``).

See builders.py for how a row reads. Each of these functions is linear in its main
argument (multilinear: ``np.convolve``, ``np.correlate`` and ``np.cross`` in both
operands), so forward mode applies the function itself to the tangent (``linear``);
reverse mode applies its transpose, a helper of :mod:`srcgrad.rules.helpers.numeric`
(``convolve_adjoint``, ``trapezoid_vjp_y``...), which has a rule of its own (linear in
the adjoint, and in the other operand where the function is bilinear) for derivatives of
higher order.

Conventions:

- ``np.correlate(a, v, mode)`` of real arrays (numpy conjugates a complex ``v``: a complex
  operand is refused); ``mode`` is numpy's, ``'valid'`` by default.
- ``np.interp(x, xp, fp, left, right)`` is differentiated in the query points ``x``, the
  values ``fp`` and the values ``left`` and ``right``, not in the sample points ``xp``
  (an ``xp`` that carries a derivative is refused), which must be increasing. Its
  derivative in ``x`` follows JAX: the slope of the segment ``x`` lies in, the segment
  to the right at an inner knot, the last one at ``xp[-1]``, and 0 outside
  ``[xp[0], xp[-1]]``. The result is float64, as numpy's is. With ``period=`` (not
  differentiated), numpy reduces ``x`` and ``xp`` modulo the period, sorts ``xp`` (which
  need not be increasing then) and extends it by a point at each end: the helpers
  (``interp_slope_periodic``...) read the samples the same way, and add the adjoint of
  each extended sample to the value of ``fp`` it repeats; ``left`` and ``right``, which
  numpy ignores there, are refused.
- ``np.polyval(p, x)`` takes 1-d coefficients; its derivative in ``x`` is the
  derivative polynomial at ``x`` (``polyder_coefficients``, which cupy runs too).
- ``np.cross``: vectors of 3, and of 2 (numpy 2 deprecates them; one of 2 counts as a
  3-vector with a zero third entry), along any axes (``axisa``, ``axisb``, ``axisc``,
  ``axis``), stacks broadcast.
- ``np.gradient``: default, scalar and coordinate-array spacings, ``axis`` and
  ``edge_order``; the spacings are not differentiated (an active spacing is refused).
  For an array of more than one axis (with no ``axis``, or a tuple of them) numpy returns
  a tuple: srcgrad must see the array's rank to know which.
"""

from __future__ import annotations

import ast

import numpy as np

from . import Context, NotStatic, Rule, linear, register
from .runtime_rules import _rule, helper


def _rank_of(param: str):
    return lambda ctx: ctx.rank(param)


def _one(ctx: Context) -> int:
    return 1


def _given(ctx: Context, *names: str) -> bool:
    """Whether any of ``names`` may be other than None."""
    for name in names:
        node = ctx.args[name]
        if not (isinstance(node, ast.Constant) and node.value is None):
            return True
    return False


# -- np.convolve(a, v, mode): bilinear, symmetric ---------------------------------------------
register(
    np.convolve,
    Rule(
        name="np.convolve",
        params=("a", "v", "mode"),
        defaults={"mode": "full"},
        jvp={"a": linear, "v": linear},
        vjp={"a": "convolve_adjoint(g, a, v, mode)", "v": "convolve_adjoint(g, v, a, mode)"},
        rank=_one,
    ),
)


# -- np.correlate(a, v, mode): bilinear, real operands (numpy conjugates a complex v) -----
register(
    np.correlate,
    Rule(
        name="np.correlate",
        params=("a", "v", "mode"),
        defaults={"mode": "valid"},
        jvp={"a": linear, "v": linear},
        vjp={
            "a": "correlate_adjoint(g, a, v, mode, True)",
            "v": "correlate_adjoint(g, v, a, mode, False)",
        },
        rank=_one,
    ),
)


# -- np.trapezoid(y, x=None, dx=1.0, axis=-1): linear in y, in x and in dx ------------------
def _trapezoid_rank(ctx: Context) -> int | None:
    rank = ctx.rank("y")
    return None if rank is None else max(rank - 1, 0)


def _trapezoid_dx(mode: str):
    """``dx``'s template: numpy reads it only where ``x`` is None."""

    def template(ctx: Context):
        if _given(ctx, "x"):
            if mode == "jvp":
                return "trapezoid_jvp_dx(g, y, x, axis)"
            return "trapezoid_vjp_dx(g, y, x, dx, axis)"
        return linear(ctx) if mode == "jvp" else "trapezoid_vjp_dx(g, y, None, dx, axis)"

    return template


_TRAPEZOID = dict(
    params=("y", "x", "dx", "axis"),
    defaults={"x": None, "dx": 1.0, "axis": -1},
    jvp={"y": linear, "x": linear, "dx": _trapezoid_dx("jvp")},
    vjp={
        "y": "trapezoid_vjp_y(g, y, x, dx, axis)",
        "x": "trapezoid_vjp_x(g, y, x, axis)",
        "dx": _trapezoid_dx("vjp"),
    },
    rank=_trapezoid_rank,
)
for _name in ("trapezoid", "trapz"):  # (numpy 2.4 removed trapz)
    if hasattr(np, _name):
        register(getattr(np, _name), Rule(name=f"np.{_name}", **_TRAPEZOID))


# -- np.interp(x, xp, fp, left=None, right=None, period=None) ---------------------------------
def _periodic(ctx: Context) -> bool:
    """Whether ``period`` may be given (not the literal None)."""
    return _given(ctx, "period")


def _interp_x(ctx: Context) -> str:
    if _periodic(ctx):
        return "g * interp_slope_periodic(x, xp, fp, period)"
    return "g * interp_slope(x, xp, fp)"


def _interp_jvp_fp(ctx: Context) -> str:
    if _periodic(ctx):
        return linear(ctx)  # (np.interp of the tangent, with the period)
    if _given(ctx, "left", "right"):
        return "interp_jvp_fp(g, x, xp, left, right)"
    return "np.interp(x, xp, g)"


def _interp_vjp_fp(ctx: Context) -> str:
    if _periodic(ctx):
        return "interp_vjp_fp_periodic(g, x, xp, period)"
    return "interp_vjp_fp(g, x, xp, left, right)"


def _interp_refuse(ctx: Context) -> str | None:
    if _periodic(ctx) and ctx.supplied & {"left", "right"}:
        return (
            "numpy ignores left and right where np.interp is given a period, and srcgrad "
            "does not differentiate them there: leave out left= and right= (or period=)"
        )
    return None


register(
    np.interp,
    Rule(
        name="np.interp",
        params=("x", "xp", "fp", "left", "right", "period"),
        defaults={"left": None, "right": None, "period": None},
        jvp={
            "x": _interp_x,
            "fp": _interp_jvp_fp,
            "left": "interp_jvp_end(g, x, xp, 0)",
            "right": "interp_jvp_end(g, x, xp, 1)",
        },
        vjp={
            "x": _interp_x,
            "fp": _interp_vjp_fp,
            "left": "interp_vjp_end(g, x, xp, 0)",
            "right": "interp_vjp_end(g, x, xp, 1)",
        },
        rank=_rank_of("x"),
        refuse=_interp_refuse,
        hints={
            "xp": "srcgrad differentiates np.interp(x, xp, fp) in the query points x and the "
            "values fp (and left and right), not in the sample points xp",
            "period": "srcgrad differentiates np.interp(x, xp, fp, period=period) in the query "
            "points x and the values fp, not in the period",
        },
    ),
)

# -- polynomials -------------------------------------------------------------------------------
register(
    np.polyval,
    Rule(
        name="np.polyval",
        params=("p", "x"),
        jvp={"p": linear, "x": "g * np.polyval(polyder_coefficients(p), x)"},
        vjp={"p": "polyval_vjp_p(g, p, x)", "x": "g * np.polyval(polyder_coefficients(p), x)"},
        rank=_rank_of("x"),
    ),
)
register(
    np.polyder,
    Rule(
        name="np.polyder",
        params=("p", "m"),
        defaults={"m": 1},
        jvp={"p": linear},
        vjp={"p": "polyder_adjoint(g, p, m)"},
        rank=_one,
    ),
)


# -- np.cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None): bilinear -----------------------
def _cross_vjp(param: str):
    x, other, first = ("a", "b", "True") if param == "a" else ("b", "a", "False")

    def template(ctx: Context) -> str:
        if not ctx.supplied & {"axisa", "axisb", "axisc", "axis"}:
            return f"cross_adjoint(g, {x}, {other}, {first})"
        return f"cross_adjoint(g, {x}, {other}, {first}, axis{x}, axis{other}, axisc, axis)"

    return template


register(
    np.cross,
    Rule(
        name="np.cross",
        params=("a", "b", "axisa", "axisb", "axisc", "axis"),
        defaults={"axisa": -1, "axisb": -1, "axisc": -1, "axis": None},
        jvp={"a": linear, "b": linear},
        vjp={"a": _cross_vjp("a"), "b": _cross_vjp("b")},
    ),
)


# -- np.gradient(f, *varargs, axis=None, edge_order=1): linear in f ----------------------------
def _gradient_axes(ctx: Context) -> int | None:
    """How many axes ``np.gradient`` differentiates along (None where not known)."""
    if ctx.rank("f") == 1:
        return 1
    try:
        axis = ctx.static("axis")
    except NotStatic:
        return None
    if isinstance(axis, int):
        return 1
    if isinstance(axis, tuple):
        return len(axis)
    return ctx.rank("f")


def _gradient_refuse(ctx: Context) -> str | None:
    if _gradient_axes(ctx) is None:
        return (
            "srcgrad differentiates np.gradient where it can tell, before the code runs, "
            "whether it returns one array or a tuple of them: pass axis as a literal (an "
            "int or a tuple), or an array whose number of dimensions srcgrad can see"
        )
    return None


def _gradient_vjp(ctx: Context) -> str:
    count = len(ctx.node.args) - 1  # the spacings given by position
    spacing = "()" if count == 0 else "(spacing,)" if count == 1 else "spacing"
    return f"gradient_adjoint(g, f, {spacing}, axis, edge_order)"


register(
    np.gradient,
    Rule(
        name="np.gradient",
        params=("f", "axis", "edge_order", "spacing"),
        kwonly=frozenset({"axis", "edge_order"}),
        varargs=True,
        defaults={"spacing": (), "axis": None, "edge_order": 1},
        jvp={"f": linear},
        vjp={"f": _gradient_vjp},
        rank=lambda c: c.rank("f") if _gradient_axes(c) == 1 else None,
        tuple_result=lambda c: (_gradient_axes(c) or 1) > 1,
        refuse=_gradient_refuse,
        hints={
            "spacing": "srcgrad differentiates np.gradient in the array f, not in its "
            "spacings (numbers or coordinates)"
        },
    ),
)

# -- rules of the helpers, for derivatives of higher order -------------------------------------

helper("convolve_adjoint", ("d", "x", "other", "mode"), ("d", "other"))
helper("correlate_adjoint", ("d", "x", "other", "mode", "first"), ("d", "other"))
# linear in the widths of the intervals: in x, or in dx where x is None
_rule(
    "trapezoid_vjp_y",
    params=("d", "y", "x", "dx", "axis"),
    jvp={
        "d": linear,
        "x": linear,
        "dx": "trapezoid_vjp_y(d, y, None, trapezoid_dx_tangent(g, x), axis)",
    },
    zero=frozenset({"y", "axis"}),
)
helper("trapezoid_dx_tangent", ("d", "x"), ("d",))
helper("trapezoid_vjp_x", ("d", "y", "x", "axis"), ("d", "y"))
helper("trapezoid_jvp_dx", ("d", "y", "x", "axis"), ("d", "y"))
helper("trapezoid_vjp_dx", ("d", "y", "x", "dx", "axis"), ("d", "y"))
helper("interp_slope", ("x", "xp", "fp"), ("fp",))
# (the weights of fp move with x: smoothly, between the sample points)
_rule(
    "interp_jvp_fp",
    params=("d", "x", "xp", "left", "right"),
    jvp={"d": linear, "x": "g * interp_slope(x, xp, d)"},
    zero=frozenset({"xp", "left", "right"}),
)
_rule(
    "interp_vjp_fp",
    params=("d", "x", "xp", "left", "right"),
    jvp={"d": linear, "x": "interp_vjp_fp_dx(d, g, x, xp)"},
    zero=frozenset({"xp", "left", "right"}),
)
helper("interp_vjp_fp_dx", ("d", "dx", "x", "xp"), ("d", "dx"))
helper("interp_slope_periodic", ("x", "xp", "fp", "period"), ("fp",))
_rule(
    "interp_vjp_fp_periodic",
    params=("d", "x", "xp", "period"),
    jvp={"d": linear, "x": "interp_vjp_fp_periodic_dx(d, g, x, xp, period)"},
    zero=frozenset({"xp", "period"}),
)
helper("interp_vjp_fp_periodic_dx", ("d", "dx", "x", "xp", "period"), ("d", "dx"))
helper("interp_jvp_end", ("d", "x", "xp", "side"), ("d",))
helper("interp_vjp_end", ("d", "x", "xp", "side"), ("d",))
helper("polyder_adjoint", ("d", "p", "m"), ("d",))
_rule(
    "polyder_coefficients",
    params=("p",),
    jvp={"p": "polyder_coefficients(g)"},
)
# d/dx sum(d * x ** j) = sum(d * j * x ** (j - 1)): polyder's adjoint of the sums one power lower
_rule(
    "polyval_vjp_p",
    params=("d", "p", "x"),
    jvp={"d": linear, "x": "polyder_adjoint(polyval_vjp_p(d * g, p[1:], x), p, 1)"},
    zero=frozenset({"p"}),
)
helper(
    "cross_adjoint",
    ("d", "x", "other", "first", "axisx", "axiso", "axisc", "axis"),
    ("d", "other"),
    defaults={"first": True, "axisx": -1, "axiso": -1, "axisc": -1, "axis": None},
)
helper("gradient_adjoint", ("d", "f", "spacing", "axis", "edge_order"), ("d",))
