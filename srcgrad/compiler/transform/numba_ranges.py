"""The numba profile's ranges: items and reversals of a range written as index arithmetic.

In:  a generated function (optimized) whose loops run over names bound to ranges, as
normalize writes them (``for i, row in enumerate(X)`` iterates ``t1 = range(len(X))`` and
reads ``t1[i_1]``; ``reversed(range(n))`` is ``range(n)[::-1]``).
Out: the same function with no item or slice of a range, which numba does not have::

    t1 = range(len(X))                 t1 = range(len(X))
    i = t1[i_1]               ->       i = t1.start + i_1 * t1.step

    t2 = range(a, b, s)[::-1]          t3 = range(a, b, s)
                              ->       t2 = range(t3.start + (len(t3) - 1) * t3.step,
                                                  t3.start - t3.step, -t3.step)

Only names bound once in the function, to ``range(...)`` or to such a reversal, are
rewritten; the plain profile never runs this.
"""

from __future__ import annotations

import ast

from ..astwalk import copy_tree
from .builder import Builder, assign, name


def numba_ranges(func: ast.FunctionDef, builder: Builder) -> ast.FunctionDef:
    """``func`` with every item ``t[i]`` and reversal ``t[::-1]`` of a range ``t``
    written with ``t.start``, ``t.step`` and ``len(t)`` (in place; returned)."""
    bound: dict[str, int] = {}
    for node in ast.walk(func):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, (ast.For, ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for n in ast.walk(target):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    bound[n.id] = bound.get(n.id, 0) + 1
    once = [
        node
        for node in ast.walk(func)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and bound.get(node.targets[0].id) == 1
    ]
    ranges = {node.targets[0].id for node in once if _is_range_call(node.value)}
    while True:  # (a reversal of a reversal, of a name bound to a range...)
        more = {n.targets[0].id for n in once if _reversal_of(n.value, ranges) is not None}
        if more <= ranges:
            break
        ranges |= more
    _Ranges(ranges, builder).visit(func)
    return func


def _is_range_call(value: ast.expr) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "range"
        and not value.keywords
    )


def _reversal_of(value: ast.expr, ranges: set[str]) -> ast.expr | None:
    """The range ``value`` reverses (``r[::-1]`` of a range name or call), or None."""
    if not isinstance(value, ast.Subscript) or not isinstance(value.slice, ast.Slice):
        return None
    piece = value.slice
    step = piece.step
    if piece.lower is not None or piece.upper is not None:
        return None
    if not (
        isinstance(step, ast.UnaryOp)
        and isinstance(step.op, ast.USub)
        and isinstance(step.operand, ast.Constant)
        and step.operand.value == 1
    ) and not (isinstance(step, ast.Constant) and step.value == -1):
        return None
    inner = value.value
    if _is_range_call(inner) or (isinstance(inner, ast.Name) and inner.id in ranges):
        return inner
    return None


def _attr(r: str, field: str) -> ast.expr:
    return ast.Attribute(value=name(r), attr=field, ctx=ast.Load())


def backwards(r: str, count: ast.expr) -> ast.Call:
    """``range(r.start + (count - 1) * r.step, r.start - r.step, -r.step)``: the first
    ``count`` items of the range ``r``, last first."""
    last = ast.BinOp(left=count, op=ast.Sub(), right=ast.Constant(1))
    first = ast.BinOp(
        left=_attr(r, "start"),
        op=ast.Add(),
        right=ast.BinOp(left=last, op=ast.Mult(), right=_attr(r, "step")),
    )
    stop = ast.BinOp(left=_attr(r, "start"), op=ast.Sub(), right=_attr(r, "step"))
    back = ast.UnaryOp(op=ast.USub(), operand=_attr(r, "step"))
    return ast.Call(func=name("range"), args=[first, stop, back], keywords=[])


class _Ranges(ast.NodeTransformer):
    def __init__(self, ranges: set[str], builder: Builder) -> None:
        self.ranges = ranges
        self.builder = builder

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse"):  # (a reversal needs a statement before it)
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, field, self._block(block))
        return super().generic_visit(node)

    def _block(self, block: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in block:
            inner = _reversal_of(stmt.value, self.ranges) if isinstance(stmt, ast.Assign) else None
            if inner is not None and stmt.targets[0].id in self.ranges:
                if not isinstance(inner, ast.Name):
                    held = self.builder.namer.fresh("forwards")
                    out.append(assign(held, inner))
                    inner = name(held)
                count = ast.Call(func=name("len"), args=[copy_tree(inner)], keywords=[])
                stmt = assign(stmt.targets[0].id, backwards(inner.id, count))
            out.append(stmt)
        return out

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        value = node.value
        if (
            isinstance(node.ctx, ast.Load)
            and isinstance(value, ast.Name)
            and value.id in self.ranges
            and not isinstance(node.slice, ast.Slice)
        ):
            step = ast.BinOp(left=node.slice, op=ast.Mult(), right=_attr(value.id, "step"))
            return ast.BinOp(left=_attr(value.id, "start"), op=ast.Add(), right=step)
        return node
