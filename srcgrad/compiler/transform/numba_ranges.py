"""The numba profile's ranges: items and reversals of a range written as index arithmetic.

In:  a generated function (optimized) whose loops run over names bound to ranges, as
normalize writes them (``for i, row in enumerate(X)`` iterates ``t1 = range(len(X))`` and
reads ``t1[i_1]``; ``reversed(range(n))`` is ``range(n)[::-1]``).
Out: the same function with no item or slice of a range, which numba does not have::

    t1 = range(len(X))                 t1 = range(len(X))
    i = t1[i_1]               ->       i = t1.start + i_1 * t1.step
    j = t1[::-1][i_1]         ->       j = t1.start + (len(t1) - 1 - i_1) * t1.step

    t2 = range(a, b, s)[::-1]          t3 = range(a, b, s)
                              ->       t2 = range(t3.start + (len(t3) - 1) * t3.step,
                                                  t3.start - t3.step, -t3.step)

Only names bound once in the function, to ``range(...)`` or to such a reversal, are
rewritten, and an item only at the index of a loop over the positions of a range (a
negative index would read another item); the plain profile never runs this.
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
    plain = {n.targets[0].id for n in once if _is_range_call(n.value) and len(n.value.args) == 1}
    positions = _positions(func, plain)
    _Ranges(ranges, positions, builder).visit(func)
    return func


def _positions(func: ast.FunctionDef, plain: set[str]) -> set[str]:
    """The names bound only as the index of ``for`` loops over ``range(n)`` (a name in
    ``plain``) or over ``range(m - 1, -1, -1)`` (a backward loop srcgrad wrote): their
    values are positions 0, 1, ... of a range, which ``t.start + i * t.step`` reads as
    ``t[i]`` does (a negative index would not be read the same)."""
    loops: dict[str, bool] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            forwards = isinstance(node.iter, ast.Name) and node.iter.id in plain
            loops[node.target.id] = loops.get(node.target.id, True) and (
                forwards or _counting_down(node.iter)
            )
    others = {
        n.id
        for node in ast.walk(func)
        if not isinstance(node, ast.For)
        for target in getattr(node, "targets", [getattr(node, "target", None)])
        if target is not None
        for n in ast.walk(target)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    return {v for v, ok in loops.items() if ok and v not in others}


def _counting_down(it: ast.expr) -> bool:
    """Whether ``it`` is ``range(m - 1, -1, -1)``."""
    return (
        _is_range_call(it)
        and len(it.args) == 3
        and isinstance(it.args[0], ast.BinOp)
        and isinstance(it.args[0].op, ast.Sub)
        and isinstance(it.args[0].right, ast.Constant)
        and it.args[0].right.value == 1
        and all(_minus_one(a) for a in it.args[1:])
    )


def _minus_one(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value == -1
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and node.operand.value == 1
    )


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
    def __init__(self, ranges: set[str], positions: set[str], builder: Builder) -> None:
        self.ranges = ranges
        self.positions = positions
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
            and isinstance(node.slice, ast.Name)
            and node.slice.id in self.positions
        ):
            step = ast.BinOp(left=node.slice, op=ast.Mult(), right=_attr(value.id, "step"))
            return ast.BinOp(left=_attr(value.id, "start"), op=ast.Add(), right=step)
        reversed_ = _reversal_of(value, self.ranges)
        if (
            isinstance(node.ctx, ast.Load)
            and isinstance(reversed_, ast.Name)
            and isinstance(node.slice, ast.Name)
            and node.slice.id in self.positions
        ):  # r[::-1][i]: r.start + (len(r) - 1 - i) * r.step
            r = reversed_.id
            last = ast.BinOp(
                left=ast.Call(func=name("len"), args=[name(r)], keywords=[]),
                op=ast.Sub(),
                right=ast.Constant(1),
            )
            back = ast.BinOp(left=last, op=ast.Sub(), right=node.slice)
            step = ast.BinOp(left=back, op=ast.Mult(), right=_attr(r, "step"))
            return ast.BinOp(left=_attr(r, "start"), op=ast.Add(), right=step)
        return node
