"""The factors the directions of a vector JVP share, computed once.

In: the tangent statements of one primal statement, one list per direction (each an
assignment ``x_dot_k = <expression>``). Out: one assignment per factor that is no
tangent, reads only primal values and appears in two directions or more, then the
directions' statements reading it::

    y_dot_a = a_dot_a * np.cos(a) * b         t3 = np.cos(a)
    y_dot_b = b_dot_b * np.cos(a) * b   ==>   y_dot_a = a_dot_a * t3 * b
                                              y_dot_b = b_dot_b * t3 * b

The factor is the same expression over the same values, so each direction computes
the numbers it computed before; it is computed once, before the directions, where
every direction would have computed it (never from inside a conditional expression).
"""

from __future__ import annotations

import ast

from ..astwalk import copy_tree
from .builder import Builder, assign, name

#: nodes whose parts may not run: nothing under them is computed ahead
_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.comprehension)


def share_factors(groups: list[list[ast.stmt]], builder: Builder) -> list[ast.stmt]:
    """The statements of ``groups`` (one list per direction), with the factors two or
    more of them compute assigned once before them."""
    flat = [stmt for group in groups for stmt in group]
    if len(groups) < 2 or not all(_plain(stmt) for stmt in flat):
        return flat
    found: dict[str, tuple[ast.expr, set[int]]] = {}
    for g, group in enumerate(groups):
        for stmt in group:
            for node in _factors(stmt.value, builder):
                key = ast.dump(node)
                found.setdefault(key, (node, set()))[1].add(g)
    shared = {key: node for key, (node, where) in found.items() if len(where) > 1}
    if not shared:
        return flat
    names = {key: builder.namer.temp() for key in shared}
    out: list[ast.stmt] = [assign(names[key], copy_tree(node)) for key, node in shared.items()]
    for stmt in flat:
        stmt.value = _replaced(stmt.value, names)
        out.append(stmt)
    return out


def _plain(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is ``name = expression``, the shape of a tangent statement."""
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    )


def _factors(expr: ast.expr, builder: Builder) -> list[ast.expr]:
    """The largest parts of ``expr`` that are operations (calls, arithmetic) reading no
    tangent, outside conditional expressions."""
    if isinstance(expr, _CONDITIONAL):
        return []
    if isinstance(expr, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript)) and not _reads_tangent(
        expr, builder
    ):
        return [] if _trivial(expr) else [expr]
    found = []
    for child in ast.iter_child_nodes(expr):
        if isinstance(child, ast.expr):
            found += _factors(child, builder)
    return found


def _reads_tangent(expr: ast.expr, builder: Builder) -> bool:
    return any(isinstance(n, ast.Name) and n.id in builder.primal_of for n in ast.walk(expr))


def _trivial(expr: ast.expr) -> bool:
    """A negated name or constant (``-x``): no cheaper as a name."""
    return isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, (ast.Name, ast.Constant))


def _replaced(expr: ast.expr, names: dict[str, str]) -> ast.expr:
    """``expr`` with each part whose dump is a key of ``names`` read from that name."""

    class Replace(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> ast.AST:
            if isinstance(node, ast.expr) and not isinstance(node, _CONDITIONAL):
                key = ast.dump(node)
                if key in names:
                    return name(names[key])
            if isinstance(node, _CONDITIONAL):
                return node
            return self.generic_visit(node)

    return Replace().visit(expr)
