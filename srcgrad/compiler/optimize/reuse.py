"""Pass: an adjoint reads a value the primal computed instead of computing it again."""

from __future__ import annotations

import ast
from collections import Counter

import numpy as np

from ...rules import RULES
from ..astwalk import nodes
from .dataflow import Context, _forget, _statements, _written_into, own_writes, target

#: the names numpy gives the ufuncs the rule table has rules for: a ufunc's value depends
#: on its arguments alone (no state; a call with keywords, ``out=`` among them, is left
#: alone), so a call of one may be read from a name that holds the same call's value
_PURE_CALLS = frozenset(
    n for n in dir(np) if isinstance(getattr(np, n, None), np.ufunc) and getattr(np, n) in RULES
)


def reuse_computed_values(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """A call the code has already made, into a name that still holds its value, is
    read from that name: rules recompute what the user often has (``sin``'s derivative
    is ``np.cos(x)``). Only top-level definitions of names given one value, from
    arguments never reassigned or names given one value before; and not at all where
    the code writes into an array (a value could change under its name).

    Before::                         After::

        a = np.sin(x)                    a = np.sin(x)
        b = np.cos(x)                    b = np.cos(x)
        x_bar = a_bar * np.cos(x)        x_bar = a_bar * b
    """
    arguments, xp = ctx.arguments, ctx.xp
    if xp is None:
        return body, False
    if any(_written_into(stmt) for stmt in body):
        return body, False
    statements = list(_statements(body))
    stores = Counter(n for s in statements for n in own_writes(s))
    steady = {a for a in arguments if stores[a] == 0}  # names holding one value throughout
    known: dict[str, str] = {}  # ast.dump of a call -> the name holding its value
    changed = False

    class Reuse(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.expr:
            self.generic_visit(node)
            held = known.get(ast.dump(node))
            if held is None:
                return node
            nonlocal changed
            changed = True
            return ast.Name(id=held, ctx=ast.Load())

    names: set[str] = set()  # the functions of the calls in `known`
    for k, stmt in enumerate(body):
        if known and _calls_any(stmt, xp, names):
            _forget(stmt)
            body[k] = stmt = Reuse().visit(stmt)
        v = target(stmt)
        if v is None or stores[v] != 1:
            continue
        steady.add(v)
        value = stmt.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id == xp
            and value.func.attr in _PURE_CALLS
            and not value.keywords
            and all(
                isinstance(a, ast.Constant) or isinstance(a, ast.Name) and a.id in steady
                for a in value.args
            )
        ):
            known.setdefault(ast.dump(value), v)
            names.add(value.func.attr)
    return body, changed


def _calls_any(stmt: ast.stmt, xp: str, names: set[str]) -> bool:
    """Whether ``stmt`` calls ``xp.f`` for an ``f`` in ``names`` (a call the pass may
    read from a name; without one, it leaves the statement as it is)."""
    return any(
        type(n) is ast.Call
        and type(n.func) is ast.Attribute
        and n.func.attr in names
        and type(n.func.value) is ast.Name
        and n.func.value.id == xp
        for n in nodes(stmt)
    )
