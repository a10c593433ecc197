"""Part of normalize: containers built by builtins and list arithmetic, as displays.

In:  the statements of a user function (plain Python AST) and its free names resolved.
Out: the same statements, where an expression that builds a container of a known
number of elements is written as the display it makes (which the rest of srcgrad
differentiates element by element)::

    list((a, b)), tuple([a, b]) ==>  [a, b], (a, b)
    [a, b] + [c]                ==>  [a, b, c]
    [x[0], x[1]] * 2            ==>  [x[0], x[1], x[0], x[1]]

Only where the result is exactly that display: ``list`` and ``tuple`` of a display,
``+`` of two displays of the same kind, ``*`` of a display by an integer constant
whose elements are names, constants or their indices and attributes (each evaluated
again: they must be cheap and without effects). Anything else is left as it is (and
refused later with what to write instead, where it carries a derivative).
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

from ..astwalk import copy_tree, nodes

_BUILDERS = {"list": builtins.list, "tuple": builtins.tuple}
#: the longest display repetition writes out
_MAX_REPEATED = 64


def lower_containers(body: list[ast.stmt], env: dict[str, Any], local: set[str]) -> list[ast.stmt]:
    """``body`` with its container builders written as displays (copied first where
    there is one: the user's statements are left as they are)."""
    lowering = _Displays(env, local)
    if not any(lowering.candidate(n) for s in body for n in nodes(s)):
        return body
    return [lowering.visit(s) for s in copy_tree(body)]


class _Displays(ast.NodeTransformer):
    def __init__(self, env: dict[str, Any], local: set[str]) -> None:
        self.env = env
        self.local = local

    def builtin(self, node: ast.expr) -> str | None:
        """``list``/``tuple`` where ``node`` calls the builtin (not shadowed)."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return None
        name = node.func.id
        if name not in _BUILDERS or name in self.local:
            return None
        return name if self.env.get(name, _BUILDERS[name]) is _BUILDERS[name] else None

    def candidate(self, node: ast.AST) -> bool:
        return (isinstance(node, ast.expr) and self.builtin(node) is not None) or (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, (ast.Add, ast.Mult))
            and isinstance(node.left, (ast.List, ast.Tuple))
        )

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        name = self.builtin(node)
        if (
            name in ("list", "tuple")
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], (ast.List, ast.Tuple))
            and not _starred(node.args[0])
        ):
            kind = ast.List if name == "list" else ast.Tuple
            return ast.copy_location(kind(elts=node.args[0].elts, ctx=ast.Load()), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        left, right = node.left, node.right
        if not isinstance(left, (ast.List, ast.Tuple)) or _starred(left):
            return node
        kind = type(left)
        if isinstance(node.op, ast.Add) and type(right) is kind and not _starred(right):
            elts = [*left.elts, *right.elts]
        elif (
            isinstance(node.op, ast.Mult)
            and isinstance(right, ast.Constant)
            and type(right.value) is int
            and 0 <= right.value * len(left.elts) <= _MAX_REPEATED
            and all(_cheap(e) for e in left.elts)
        ):
            elts = [copy_tree(e) for _ in range(right.value) for e in left.elts]
        else:
            return node
        return ast.copy_location(kind(elts=elts, ctx=ast.Load()), node)


def _starred(display: ast.List | ast.Tuple) -> bool:
    return any(isinstance(e, ast.Starred) for e in display.elts)


def _cheap(node: ast.expr) -> bool:
    """A name, a constant, or an index or attribute of one (by a name or a constant)."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _cheap(node.value)
    if isinstance(node, ast.Subscript):
        return _cheap(node.value) and isinstance(node.slice, (ast.Name, ast.Constant))
    return False
