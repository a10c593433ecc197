"""Rules for indexing (``x[i]``) and assignment into an array (``y[i] = v``), and for
lists of arrays: ``np.stack``, ``np.concatenate``, ``np.array`` of a list, ``sum``,
``list.append`` and ``.pop()``. How a row is written: builders.py.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses

import numpy as np

from . import SEQUENCE_RULES, Context, Rule, linear, primal_with, register
from .builders import _same_rank


# -- indexing ----------------------------------------------------------------------------
def _getitem_rank(ctx: Context) -> int | None:
    rank = ctx.rank("x")
    index = ctx.index
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    if rank is None:
        return None
    out = rank
    for part in parts:
        if isinstance(part, ast.Slice):
            continue
        if isinstance(part, ast.Constant) and part.value is None:
            out += 1
        elif isinstance(part, ast.Constant) and isinstance(part.value, int):
            out -= 1
        elif isinstance(part, ast.Name) and ctx.ranks.get(f"index:{part.id}") == 0:
            out -= 1  # an integer (or 0-d) index
        else:
            return None
    if any(isinstance(p, ast.Constant) and p.value is Ellipsis for p in parts):
        return None
    return out


def _index_value(node: ast.expr) -> ast.expr:
    """An index as an ordinary value: ``1:n`` becomes ``slice(1, n)``."""
    if isinstance(node, ast.Slice):
        parts = [
            p if p is not None else ast.Constant(None) for p in (node.lower, node.upper, node.step)
        ]
        if node.step is None:  # slice(a, b) means step None; slice(a) would mean slice(None, a)
            parts.pop()
        return ast.Call(func=ast.Name(id="slice", ctx=ast.Load()), args=parts, keywords=[])
    if isinstance(node, ast.Tuple):
        return ast.Tuple(elts=[_index_value(e) for e in node.elts], ctx=ast.Load())
    return node


def _getitem_vjp(ctx: Context) -> ast.expr:
    index = ctx.index
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    basic = all(
        isinstance(p, ast.Slice)
        or (
            isinstance(p, ast.Constant)
            and (p.value is None or p.value is Ellipsis or isinstance(p.value, (int, str)))
        )
        or (isinstance(p, ast.Name) and ctx.ranks.get(f"index:{p.id}") == 0)
        for p in parts
    )
    helper = ctx.symbols["index_adjoint" if basic else "index_adjoint_add"]
    call = ast.Call(
        func=helper, args=[ctx.symbols["g"], ctx.args["x"], _index_value(index)], keywords=[]
    )
    return call


register(
    "getitem",
    Rule(
        name="indexing",
        params=("x",),
        jvp={"x": linear},
        vjp={"x": _getitem_vjp},
        rank=_getitem_rank,
    ),
)

# -- y[index] = v: the transforms write these statements themselves -----------------------
register(
    "setitem",
    Rule(
        name="assignment into an array",
        params=("x", "v"),
        jvp={"x": None, "v": None},
        vjp={"x": None, "v": None},
        rank=_same_rank,
    ),
)

SEQUENCE_RULES["append"] = Rule(
    name="list.append", params=("x", "v"), jvp={"x": None, "v": None}, vjp={"x": None, "v": None}
)

# -- lists of arrays -------------------------------------------------------------------------
register(
    np.stack,
    Rule(
        name="np.stack",
        params=("arrays", "axis", "out"),
        defaults={"axis": 0, "out": None},
        fixed={"out": None},
        jvp={"arrays": linear},
        vjp={"arrays": "unstack(g, axis)"},
    ),
)
register(
    np.concatenate,
    Rule(
        name="np.concatenate",
        params=("arrays", "axis", "out", "dtype"),
        defaults={"axis": 0, "out": None, "dtype": None},
        fixed={"out": None},
        jvp={"arrays": linear},
        vjp={"arrays": "split_like(g, arrays, axis)"},
    ),
)
register(
    np.array,
    Rule(
        name="np.array",
        params=("x", "dtype"),
        defaults={"dtype": None},
        jvp={"x": linear},
        vjp={"x": "unstack_like(g, x)"},
    ),
)


def _sum_jvp_x(ctx: Context) -> ast.expr:
    """``sum(g)``, as the user's code calls ``sum``, without the start value (which has a
    tangent of its own)."""
    call = linear(ctx)
    if "start" not in ctx.supplied:
        return call
    return primal_with(dataclasses.replace(ctx, node=call), "start", ast.Constant(0))


register(
    builtins.sum,
    Rule(
        name="sum",
        params=("x", "start"),
        defaults={"start": 0},
        jvp={"x": _sum_jvp_x, "start": "broadcast_like(g, ans)"},
        vjp={"x": "spread(g, x)", "start": "unbroadcast(g, start)"},
    ),
)

# -- xs.pop(): generated reverse-mode code pops its tape; forward mode pops the tangents too --
register(("method", "pop"), Rule(name=".pop()", params=("x",), jvp={"x": linear}))
