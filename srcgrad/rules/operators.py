"""Rules for Python's operators, numpy's arithmetic and first elementwise functions,
``@`` and ``np.dot``, and the math module and builtins on Python numbers.

Read a row as: the primitive, then the derivative template of each
differentiable argument. ``g`` is the incoming tangent (forward) or adjoint
(reverse), ``ans`` the primal result. Conventions at non-smooth points
follow JAX: ``abs`` has derivative ``sign(x)`` (0 at 0); ``maximum`` and
``minimum`` split the derivative evenly between tied arguments; ``x ** y``
has derivative 0 with respect to ``y`` where ``x == 0``, and with respect to
``x`` where ``y == 0`` (see elementwise.py for infinite derivatives in forward
mode and for formulas kept exact in their tails). How a row is written:
builders.py.
"""

from __future__ import annotations

import ast
import builtins
import math

import numpy as np

from . import Context, Rule, linear, register
from .builders import binary, elementwise, nondiff, pow_dx, unary

# -- arithmetic ----------------------------------------------------------------------
binary([ast.Add, np.add], "g", "g")
binary([ast.Sub, np.subtract], "g", "-g")
binary([ast.Mult, np.multiply], "g * y", "g * x")
binary([ast.Div, np.divide], "g / y", "-g * ans / y")
binary(
    [ast.Pow, np.power, builtins.pow],
    pow_dx("{x} ** ({e})", forward=False),
    "g * ans * pow_log(x)",
    jvp={"x": pow_dx("{x} ** ({e})", forward=True)},
)
unary([ast.USub, np.negative], "-g")
unary([ast.UAdd, np.positive], "g")
unary("copy", "g")
unary(builtins.float, "g")

# -- elementwise functions ---------------------------------------------------------
unary(np.exp, "g * ans")
unary(np.log, "g / x")
unary(np.sqrt, "g / (2 * ans)", jvp="tangent_div(g, 2 * ans)")
unary(np.sin, "g * np.cos(x)")
unary(np.cos, "-g * np.sin(x)")
# 1 / cosh(x)**2, not 1 - ans**2, which is 0 wherever tanh rounds to +-1 (|x| > 19)
unary(np.tanh, "g / np.cosh(x) ** 2")
unary([np.abs, builtins.abs], "g * np.sign(x)")
binary(
    np.maximum,
    "np.where(x == y, 0.5 * g, np.where(x > y, g, 0.0))",
    "np.where(x == y, 0.5 * g, np.where(y > x, g, 0.0))",
)
binary(
    np.minimum,
    "np.where(x == y, 0.5 * g, np.where(x < y, g, 0.0))",
    "np.where(x == y, 0.5 * g, np.where(y < x, g, 0.0))",
)
elementwise(
    np.where,
    ("condition", "x", "y"),
    {"x": "np.where(condition, g, 0.0)", "y": "np.where(condition, 0.0, g)"},
    zero=frozenset({"condition"}),  # it only chooses
)


# -- @ and np.dot (the rest of linear algebra: linalg.py) ------------------------------
def _matmul_rank(ctx: Context) -> int | None:
    ra, rb = ctx.rank("a"), ctx.rank("b")
    if ra is None or rb is None:
        return None
    if min(ra, rb) == 0:  # np.dot with a scalar multiplies
        return max(ra, rb)
    return max(ra, rb, 2) - (ra == 1) - (rb == 1)


def _matmul_vjp_a(ctx: Context) -> str:
    return {
        (2, 2): "g @ b.T",
        (1, 2): "b @ g",
        (2, 1): "np.outer(g, b)",
        (1, 1): "g * b",
    }.get((ctx.rank("a"), ctx.rank("b")), "matmul_vjp_a(g, a, b)")


def _matmul_vjp_b(ctx: Context) -> str:
    return {
        (2, 2): "a.T @ g",
        (1, 2): "np.outer(a, g)",
        (2, 1): "a.T @ g",
        (1, 1): "g * a",
    }.get((ctx.rank("a"), ctx.rank("b")), "matmul_vjp_b(g, a, b)")


def _dot_vjp(side: str):
    def template(ctx: Context) -> str:
        ra, rb = ctx.rank("a"), ctx.rank("b")
        if ra == 0 or rb == 0:  # np.dot with a scalar is multiplication
            mine, other = (ra, "b") if side == "a" else (rb, "a")
            product = f"g * {other}"
            return product if mine != 0 or (ra == 0 and rb == 0) else f"np.sum({product})"
        if ra is not None and rb is not None and max(ra, rb) <= 2:
            return (_matmul_vjp_a if side == "a" else _matmul_vjp_b)(ctx)
        return f"dot_vjp_{side}(g, a, b)"

    return template


_MATMUL = dict(params=("a", "b"), jvp={"a": linear, "b": linear}, rank=_matmul_rank)
for _key in (ast.MatMult, np.matmul):
    register(
        _key, Rule(name="the @ operator", vjp={"a": _matmul_vjp_a, "b": _matmul_vjp_b}, **_MATMUL)
    )
for _key in (np.dot, ("method", "dot")):
    register(_key, Rule(name="np.dot", vjp={"a": _dot_vjp("a"), "b": _dot_vjp("b")}, **_MATMUL))

# -- Python scalars: the math module and builtins ------------------------------------------
unary(math.sin, "g * math.cos(x)")
unary(math.cos, "-g * math.sin(x)")
unary(math.tan, "g / math.cos(x) ** 2")
unary(math.exp, "g * ans")
unary(math.expm1, "g * math.exp(x)")  # (ans + 1 is 0 where expm1 rounds to -1)
unary(math.sqrt, "g / (2 * ans)", jvp="tangent_div(g, 2 * ans)")
# sech(x)**2 from exp(-|x|): exact in the tails, no overflow (math.cosh raises there)
unary(math.tanh, "g * (2 * math.exp(-abs(x)) / (1 + math.exp(-2 * abs(x)))) ** 2")
unary(math.sinh, "g * math.cosh(x)")
unary(math.cosh, "g * math.sinh(x)")
unary(math.atan, "g / (1 + x * x)")
unary(
    math.asin,
    "g / math.sqrt((1 - x) * (1 + x))",
    jvp="tangent_div(g, math.sqrt((1 - x) * (1 + x)))",
)
unary(
    math.acos,
    "-g / math.sqrt((1 - x) * (1 + x))",
    jvp="-tangent_div(g, math.sqrt((1 - x) * (1 + x)))",
)
unary(math.log1p, "g / (1 + x)")
unary(math.log2, "g / (x * math.log(2))")
unary(math.log10, "g / (x * math.log(10))")
unary(math.fabs, "g * ((x > 0) - (x < 0))")
elementwise(math.log, ("x",), {"x": "g / x"})
binary(
    math.pow,
    pow_dx("{x} ** ({e})", forward=False),
    "g * ans * pow_log(x)",
    jvp={"x": pow_dx("{x} ** ({e})", forward=True)},
)
binary(math.atan2, "g * y / (x * x + y * y)", "-g * x / (x * x + y * y)")
binary(math.hypot, "g * x / ans", "g * y / ans")
binary(builtins.max, "g * ((x > y) + 0.5 * (x == y))", "g * ((y > x) + 0.5 * (x == y))")
binary(builtins.min, "g * ((x < y) + 0.5 * (x == y))", "g * ((y < x) + 0.5 * (x == y))")
nondiff([math.floor, math.ceil, math.trunc, builtins.int, builtins.bool])
nondiff(  # (numbers in a row, as np.shape reads it)
    builtins.range, params=("a", "b", "c"), defaults={"b": None, "c": None}, rank=lambda c: 1
)
nondiff(builtins.round, params=("x", "ndigits"), defaults={"ndigits": None})
