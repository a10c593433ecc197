"""How rules are written, and how messages name them.

``elementwise``, ``unary`` and ``binary`` register an elementwise function (one
derivative template for both modes), ``nondiff`` one whose output carries no
derivative, ``pow_dx`` the template of ``d (x ** y) / dx``; ``_max_rank`` and
``_same_rank`` give a result's rank. ``operation_name`` is how a message names the
operation with a rule key. The rule modules of this package (``operators``,
``methods``, ``indexing``, ``elementwise``...) are written with them.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from . import Context, NotStatic, Rule, register


# -- shapes of rule --------------------------------------------------------------
def _max_rank(ctx: Context) -> int | None:
    ranks = [ctx.rank(p) for p in ctx.rule.params]
    return None if None in ranks else max(ranks, default=0)


def _same_rank(ctx: Context) -> int | None:
    return ctx.rank("x")


def elementwise(keys, params, templates, jvp=None, **extra) -> Rule:
    """An elementwise function: one derivative template serves both modes (``jvp``:
    forward templates that differ, where a zero tangent must stay exactly 0 at a point
    where the derivative is infinite, see ``tangent_div``)."""
    keys = keys if isinstance(keys, list) else [keys]
    name = _name(keys[0])
    rule = Rule(
        name=name,
        params=tuple(params),
        jvp={**templates, **(jvp or {})},
        vjp=dict(templates),
        elementwise=True,
        rank=_max_rank,
        **extra,
    )
    for key in keys:
        register(key, rule)
    return rule


def unary(keys, template: str, jvp: str | None = None) -> Rule:
    return elementwise(keys, ("x",), {"x": template}, jvp={"x": jvp} if jvp else None)


def binary(keys, dx, dy, jvp: dict | None = None) -> Rule:
    return elementwise(keys, ("x", "y"), {"x": dx, "y": dy}, jvp=jvp)


def pow_dx(power: str, forward: bool):
    """The template of ``d (x ** y) / dx`` (``power``: how ``x ** e`` is spelled): the
    plain formula for a literal exponent of at least 1 (finite everywhere), 0 for the
    exponent 0, numpy's power for another literal (inf, not ZeroDivisionError, at
    ``0 ** negative``), else ``pow_dx``, which is also 0 where ``y == 0`` (even at
    ``x == 0``); forward mode keeps a zero tangent 0 where the derivative is infinite."""
    numpy_power = power if power.startswith("np.") else "np.power({x}, {e})"

    def template(ctx: Context) -> str:
        try:
            y = ctx.static("y")
        except NotStatic:
            y = None
        if isinstance(y, (int, float)) and not isinstance(y, bool):
            if y == 0:
                return "0 * g"
            if y >= 1:
                return f"g * y * {power.format(x='x', e='y - 1')}"
            derivative = f"y * {numpy_power.format(x='x', e='y - 1')}"
        else:
            base = "x" if power.startswith("{x}") else power.format(x="x", e="1")
            derivative = f"pow_dx({base}, y)"
        return f"tangent_mul(g, {derivative})" if forward else f"g * {derivative}"

    return template


def nondiff(keys, params=("x",), **extra) -> Rule:
    """A function whose output carries no derivative (shapes, comparisons, masks)."""
    keys = keys if isinstance(keys, list) else [keys]
    rule = Rule(name=_name(keys[0]), params=tuple(params), nondiff=True, **extra)
    for key in keys:
        register(key, rule)
    return rule


def operation_name(key: Any) -> str:
    """How a message names the operation with rule key ``key``, in the user's terms:
    ``np.exp``, ``the @ operator``, ``.sum()`` (a method), ``.T`` (an attribute)."""
    return _name(key)


def _name(key) -> str:
    if isinstance(key, type) and issubclass(key, ast.AST):
        return f"the {_OPERATOR_TEXT.get(key, key.__name__)} operator"
    if isinstance(key, tuple):
        kind, attr = key
        return f".{attr}()" if kind == "method" else f".{attr}"
    if key == "getitem":
        return "indexing"
    if key == "copy":
        return "assignment"
    module = getattr(key, "__module__", None) or "numpy"
    prefix = "np" if module.startswith("numpy") or isinstance(key, np.ufunc) else module
    return f"{prefix}.{getattr(key, '__name__', key)}" if prefix != "builtins" else key.__name__


_OPERATOR_TEXT = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.USub: "unary -",
    ast.UAdd: "unary +",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.Invert: "~",
    ast.Not: "not",
}
