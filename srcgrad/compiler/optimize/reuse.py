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
    known: dict[tuple, str] = {}  # the key of a call (_key) -> the name holding its value
    changed = False
    names: set[str] = set()  # the functions of the calls in `known`
    for stmt in body:
        if known and _calls_any(stmt, xp, names):
            _forget(stmt)
            changed = _read_known(stmt, known, xp) or changed
        v = target(stmt)
        if v is None or stores[v] != 1:
            continue
        steady.add(v)
        value = stmt.value
        key = _key(value, xp)
        if key is not None and all(a[0] != "name" or a[1] in steady for a in key[1]):
            known.setdefault(key, v)
            names.add(value.func.attr)
    return body, changed


def _key(call: ast.expr, xp: str) -> tuple | None:
    """``(f, operands)`` for ``xp.f(a, b, ...)`` with ``f`` a ufunc the rules know, no
    keywords and names or constants for operands (the calls the pass may read from a
    name, and two of them compute the same value where their keys are equal); else None."""
    if type(call) is not ast.Call or call.keywords:
        return None
    func = call.func
    if not (
        type(func) is ast.Attribute
        and type(func.value) is ast.Name
        and func.value.id == xp
        and func.attr in _PURE_CALLS
    ):
        return None
    operands = []
    for a in call.args:
        if type(a) is ast.Name:
            operands.append(("name", a.id))
        elif type(a) is ast.Constant:
            operands.append((type(a.value).__name__, repr(a.value)))
        else:
            return None
    return func.attr, tuple(operands)


def _read_known(node: ast.AST, known: dict[tuple, str], xp: str) -> bool:
    """Replace, under ``node``, each call whose key is in ``known`` by the name holding its
    value, inner calls first (``np.cos(np.sin(x))`` may become ``np.cos(a)``, then ``b``).
    Whether any was."""
    changed = False
    for field in node._fields:
        value = getattr(node, field, None)
        items = value if type(value) is list else [value]
        for k, child in enumerate(items):
            if not isinstance(child, ast.AST):
                continue
            changed = _read_known(child, known, xp) or changed
            key = _key(child, xp) if type(child) is ast.Call else None
            held = known.get(key) if key is not None else None
            if held is None:
                continue
            changed = True
            if type(value) is list:
                value[k] = ast.Name(id=held, ctx=ast.Load())
            else:
                setattr(node, field, ast.Name(id=held, ctx=ast.Load()))
    return changed


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
