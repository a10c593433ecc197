"""Rules for numpy's elementwise functions (issue 4). See builders.py for the rule shapes.

``operators.py`` already has the arithmetic operators and ``np.add``,
``np.subtract``, ``np.multiply``, ``np.divide`` (= ``np.true_divide``),
``np.power``, ``np.negative``, ``np.positive``, ``np.exp``, ``np.log``,
``np.sqrt``, ``np.sin``, ``np.cos``, ``np.tanh``, ``np.abs`` (=
``np.absolute``), ``np.maximum``, ``np.minimum``, ``np.where`` and ``np.sign``;
this module adds the rest. Every rule is elementwise, so one template serves
both modes.

Conventions where a function is not differentiable: JAX's, except those marked
"(srcgrad's)", where JAX has none to follow or gives nan for no good reason.

- ``np.maximum``/``np.minimum``/``np.fmax``/``np.fmin``: tied arguments share
  the derivative evenly (1/2 each). ``fmax``/``fmin`` give the whole
  derivative to the argument they return, so the non-NaN one where the other
  is NaN (srcgrad's).
- ``np.clip(x, lo, hi)`` is JAX's ``minimum(maximum(x, lo), hi)``: the
  derivative in ``x`` is 1 strictly inside ``(lo, hi)``, 1/2 at ``x == lo``
  or ``x == hi`` (the other half goes to that bound), 0 outside; a bound gets
  the derivative where it is the result. ``lo`` and ``hi`` may be None.
- ``np.abs``/``np.fabs``: ``sign(x)``, so 0 at 0. ``np.copysign(x, y)``:
  ``sign(x) * sign(result)`` in ``x`` (0 at ``x == 0``), and no derivative in
  ``y`` (it only chooses a sign).
- ``np.sqrt``, ``np.cbrt`` at 0, ``np.arcsin``/``np.arccos`` at +-1,
  ``np.arccosh`` at 1, ``np.arctanh`` at +-1, ``np.log*`` at 0, ``x / y`` at
  ``y == 0``: the formula's value (inf), as in JAX. Where the function's own
  value is finite there (``sqrt``, ``cbrt``, ``x ** y`` for ``0 < y < 1``, the
  inverse sines and cosines, ``arccosh``, ``arctan2`` at the origin) forward
  mode keeps a zero tangent exactly 0 (``tangent_div``, ``tangent_mul``): it
  pushes tangents that are 0 almost everywhere, and ``0 * inf`` would make every
  other entry of a gradient NaN. Where the value is infinite too (``log(0)``,
  ``x / 0``, ``arctanh(1)``) a forward-mode gradient is NaN, as in JAX: guarding
  divisions and logarithms would cost about three times their own time in every
  forward-mode code. Formulas that cancel next to their singular points are
  written so they do not: ``(1 - x) * (1 + x)``, not ``1 - x * x``.
- Tails: ``tanh``'s derivative is ``1 / cosh(x)**2`` (``1 - ans**2`` is 0 where
  ``tanh`` rounds to +-1, past ``|x| = 19``; numpy warns of an overflow in
  ``cosh`` past ``|x| = 355``, where the derivative is 0 either way), ``expm1``'s
  ``exp(x)`` (not ``ans + 1``).
- ``np.sinc`` at 0: derivative 0 (its true value); next to 0 its Taylor series. ``np.hypot`` at the
  origin: 0 in both arguments (srcgrad's: a subgradient, where the formula
  ``x / hypot`` gives nan). ``np.arctan2`` at the origin: nan (the formula).
- ``x ** y``, ``np.float_power``: derivative 0 in ``y`` where ``x == 0``, and 0 in
  ``x`` where ``y == 0`` (also at ``x == 0``, where the formula is ``0 * inf``); inf
  at ``0 ** (y < 1)`` also for Python floats (``pow_dx``; Python would raise
  ZeroDivisionError).
- ``np.mod``/``np.remainder``/``%`` (``x - y * floor(x / y)``) and
  ``np.fmod`` (``x - y * trunc(x / y)``): derivative 1 in ``x`` and
  ``-floor(x / y)`` (``-trunc(x / y)`` for ``fmod``) in ``y``, also at the
  jumps.
- ``np.logaddexp``/``np.logaddexp2``: ``exp(x - result)`` (``2 ** (x - result)``)
  in ``x``, nan where ``x`` and the result are the same infinity (srcgrad's:
  no special case for infinities).
- ``np.floor``, ``np.ceil``, ``np.rint``, ``np.trunc``, ``np.fix``,
  ``np.round``/``np.around``/``.round()``, ``np.sign``, ``np.floor_divide``
  (``//``): derivative 0 everywhere (their output carries no derivative, as
  do comparisons, ``np.isnan``/``isinf``/``isfinite``/``signbit`` and the
  logical functions).
"""

from __future__ import annotations

import ast

import numpy as np

from . import Context, NotStatic
from .builders import _max_rank, binary, elementwise, nondiff, pow_dx, unary

# -- exponentials and logarithms --------------------------------------------------------
unary(np.expm1, "g * np.exp(x)")  # (ans + 1 is 0 where expm1 rounds to -1)
unary(np.exp2, "g * ans * math.log(2)")
unary(np.log1p, "g / (1 + x)")
unary(np.log2, "g / (x * math.log(2))")
unary(np.log10, "g / (x * math.log(10))")
binary(np.logaddexp, "g * np.exp(x - ans)", "g * np.exp(y - ans)")
binary(np.logaddexp2, "g * np.exp2(x - ans)", "g * np.exp2(y - ans)")

# -- powers and roots -------------------------------------------------------------------
unary(np.cbrt, "g / (3 * ans * ans)", jvp="tangent_div(g, 3 * ans * ans)")
unary(np.square, "g * 2 * x")
unary(np.reciprocal, "-g * ans * ans")
binary(
    np.float_power,
    pow_dx("np.float_power({x}, {e})", forward=False),
    "g * ans * pow_log(x)",
    jvp={"x": pow_dx("np.float_power({x}, {e})", forward=True)},
)
binary(np.hypot, "g * safe_div(x, ans)", "g * safe_div(y, ans)")

# -- trigonometric and hyperbolic functions ---------------------------------------------
unary(np.tan, "g * (1 + ans * ans)")
# (1 - x) * (1 + x): exact where 1 - x * x cancels, next to +-1
unary(
    np.arcsin,
    "g / np.sqrt((1 - x) * (1 + x))",
    jvp="tangent_div(g, np.sqrt((1 - x) * (1 + x)))",
)
unary(
    np.arccos,
    "-g / np.sqrt((1 - x) * (1 + x))",
    jvp="-tangent_div(g, np.sqrt((1 - x) * (1 + x)))",
)
unary(np.arctan, "g / (1 + x * x)")
binary(
    np.arctan2,
    "g * y / (x * x + y * y)",
    "-g * x / (x * x + y * y)",
    jvp={"x": "tangent_mul(g, y / (x * x + y * y))", "y": "-tangent_mul(g, x / (x * x + y * y))"},
)
unary(np.sinh, "g * np.cosh(x)")
unary(np.cosh, "g * np.sinh(x)")
unary(np.arcsinh, "g / np.sqrt(x * x + 1)")
unary(
    np.arccosh, "g / np.sqrt((x - 1) * (x + 1))", jvp="tangent_div(g, np.sqrt((x - 1) * (x + 1)))"
)
unary(np.arctanh, "g / ((1 - x) * (1 + x))")
# (cos(pi x) - sinc(x)) / x cancels next to 0: there its Taylor series (which also gives
# the second derivative, -pi^2 / 3 at 0)
unary(
    np.sinc,
    "g * np.where(np.abs(x) < 0.01, np.pi**2 / 3 * x * ((np.pi * x) ** 2 / 10 - 1), "
    "safe_div(np.cos(np.pi * x) - ans, x))",
)
unary([np.deg2rad, np.radians], "np.deg2rad(g)")  # linear: the function applied to g
unary([np.rad2deg, np.degrees], "np.rad2deg(g)")

# -- signs, extrema, remainders ---------------------------------------------------------
unary(np.fabs, "g * np.sign(x)")
elementwise(  # y only chooses a sign
    np.copysign, ("x", "y"), {"x": "g * np.sign(x) * np.sign(ans)"}, zero=frozenset({"y"})
)
binary(np.fmax, "tie_share(g, x, y, ans)", "tie_share(g, y, x, ans)")
binary(np.fmin, "tie_share(g, x, y, ans)", "tie_share(g, y, x, ans)")
binary(np.remainder, "g", "-g * (x // y)")  # np.mod is np.remainder
binary(ast.Mod, "g", "-g * (x // y)").name = "the % operator"
binary(np.fmod, "g", "-g * np.trunc(x / y)")


# -- np.clip(a, a_min, a_max) and x.clip(min, max) ---------------------------------------
def _bound(ctx: Context, names: tuple[str, ...]) -> str | None:
    """The parameter holding one bound of a clip, or None where that bound is absent."""
    for name in names:
        if name in ctx.supplied:
            try:
                return None if ctx.static(name) is None else name
            except NotStatic:
                return name
    return None


def _clip_template(part: int):
    def template(ctx: Context) -> str:
        lo = _bound(ctx, ("a_min", "min"))
        hi = _bound(ctx, ("a_max", "max"))
        if part == 0 and (lo is None) != (hi is None):  # one bound: a maximum or a minimum
            return f"tie_share(g, a, {lo or hi}, ans)"
        if part == 0 and lo and hi and ctx.is_static(lo, hi) and ctx.static(lo) < ctx.static(hi):
            return (
                f"np.where(({lo} < a) & (a < {hi}), g, "
                f"np.where((a == {lo}) | (a == {hi}), 0.5 * g, 0.0))"
            )
        return f"clip_parts(g, a, {lo}, {hi}, ans)[{part}]"

    return template


elementwise(
    np.clip,
    ("a", "a_min", "a_max", "out", "min", "max"),
    {
        "a": _clip_template(0),
        "a_min": _clip_template(1),
        "a_max": _clip_template(2),
        "min": _clip_template(1),
        "max": _clip_template(2),
    },
    defaults={"a_min": None, "a_max": None, "out": None, "min": None, "max": None},
    fixed={"out": None},
)
elementwise(
    ("method", "clip"),
    ("a", "min", "max", "out"),
    {"a": _clip_template(0), "min": _clip_template(1), "max": _clip_template(2)},
    defaults={"min": None, "max": None, "out": None},
    fixed={"out": None},
)

# -- no derivative: rounding, comparisons, predicates, logic -----------------------------
# one rule per function, so that an error message names the function it is about
_ELEMENTWISE = dict(elementwise=True, rank=_max_rank)
for _key in (np.floor, np.ceil, np.rint, np.trunc, np.signbit):
    nondiff(_key, **_ELEMENTWISE)
nondiff(np.fix, params=("x", "out"), defaults={"out": None}, **_ELEMENTWISE)
for _key in (np.round, np.around, ("method", "round")):
    nondiff(
        _key,
        params=("a", "decimals", "out"),
        defaults={"decimals": 0, "out": None},
        **_ELEMENTWISE,
    )
for _key in (np.isnan, np.isinf, np.isfinite, np.logical_not):
    nondiff(_key, **_ELEMENTWISE)
for _key in (
    np.greater,
    np.greater_equal,
    np.less,
    np.less_equal,
    np.equal,
    np.not_equal,
    np.floor_divide,
    np.logical_and,
    np.logical_or,
    np.logical_xor,
):
    nondiff(_key, params=("x", "y"), **_ELEMENTWISE)
nondiff(ast.FloorDiv, params=("x", "y"), **_ELEMENTWISE).name = "the // operator"
