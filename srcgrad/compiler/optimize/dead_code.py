"""Pass: assignments nobody reads go."""

from __future__ import annotations

import ast

from ..analyze.facts import popped
from ..transform.builder import is_comment
from .dataflow import (
    Context,
    _forget,
    _meaningful,
    _pure,
    _pushed,
    _statements,
    blocks,
    own_reads,
    reads,
    target,
)


def eliminate_dead_code(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """Drop assignments whose value is never read (by liveness, loops included),
    and comments left heading nothing.

    Before::                      After::

        t = np.sin(x)                 y = x * 2.0
        y = x * 2.0                   return y
        return y
    """
    liveness = _Liveness()
    liveness.live_in(body, set(), True)
    dropped = _drop_dead_records(body, liveness.dead_pops)
    return body, liveness.changed or dropped


class _Liveness:
    """Which names are live where, found backwards through each block; with ``prune``,
    the statements that compute nothing live go (``changed`` says whether any did), and
    the values restored from a tape only to be dropped are collected in ``dead_pops``
    (as ``(tape, name)``)."""

    def __init__(self) -> None:
        self.changed = False
        self.dead_pops: set[tuple[str, str]] = set()

    def live_in(self, block: list[ast.stmt], live: set[str], prune: bool) -> set[str]:
        """The names live before ``block``, given those live after it."""
        live = set(live)
        kept: list[ast.stmt] = []
        for stmt in reversed(block):
            t = target(stmt)
            if t is not None:  # (the common case, kept inline)
                if t not in live and _pure(stmt.value):
                    keep = False  # dead, and computing it does nothing else
                else:
                    if prune and t not in live and popped(stmt, last=True) is not None:
                        self.dead_pops.add((popped(stmt, last=True), t))
                    live.discard(t)
                    live.update(reads(stmt))
                    keep = True
            elif isinstance(stmt, ast.If):
                live, keep = self._branch(stmt, live, prune)
            elif isinstance(stmt, (ast.For, ast.While)):
                live, keep = self._loop(stmt, len(block), live, prune)
            elif is_comment(stmt):  # heading nothing: another comment, a return or the end
                keep = not (
                    prune and (not kept or is_comment(kept[-1]) or isinstance(kept[-1], ast.Return))
                )
            else:
                live.update(reads(stmt))
                keep = True
            if not keep:
                if prune:
                    self.changed = True
                continue
            kept.append(stmt)
        if prune:
            kept.reverse()
            block[:] = kept
        return live

    def _branch(self, stmt: ast.If, live: set[str], prune: bool) -> tuple[set[str], bool]:
        """The names live before an ``if``, and whether it stays (not with both branches
        left empty)."""
        body_in = self.live_in(stmt.body, live, prune)
        else_in = self.live_in(stmt.orelse, live, prune)
        if prune and not _meaningful(stmt.body) and not _meaningful(stmt.orelse):
            return live, False
        if prune and not _meaningful(stmt.body) and stmt.orelse:  # `if not t:` the else
            stmt.test = _negated(stmt.test)
            stmt.body, stmt.orelse = stmt.orelse, []
            _forget(stmt)
            self.changed = True
        if prune and not stmt.body:
            stmt.body = [ast.Pass()]
        return body_in | else_in | set(reads(stmt.test)), True

    def _loop(
        self, stmt: ast.For | ast.While, size: int, live: set[str], prune: bool
    ) -> tuple[set[str], bool]:
        """The names live before a loop (to a fixed point over its body; ``size``, that of
        the enclosing block, bounds the iterations), and whether it stays (not a ``for``
        whose body is left empty and whose index is not read after it)."""
        header = set(own_reads(stmt))
        # (a for loop gives its index a value before each trip: the body's reads of it are
        # of that value, not of one from before the loop)
        index = (
            {stmt.target.id}
            if isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name)
            else set()
        )
        loop_live = live | header
        for _ in range(size + 50):
            again = live | header | (self.live_in(stmt.body, loop_live, False) - index)
            if again == loop_live:
                break
            loop_live = again
        self.live_in(stmt.body, loop_live, prune)
        if (
            prune
            and isinstance(stmt, ast.For)
            and not _meaningful(stmt.body)
            and stmt.target.id not in live  # its index is read after it
        ):
            return live, False
        if prune and not stmt.body:
            stmt.body = [ast.Pass()]
        return loop_live, True


_OPPOSITES = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def _negated(test: ast.expr) -> ast.expr:
    """``not test``: ``t`` for ``not t``, ``a != b`` for ``a == b`` (the opposites that hold
    for every value, NaN too), else ``not test``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPPOSITES:
        return ast.Compare(
            left=test.left, ops=[_OPPOSITES[type(test.ops[0])]()], comparators=test.comparators
        )
    return ast.UnaryOp(op=ast.Not(), operand=test)


def _drop_dead_records(body: list[ast.stmt], dead_pops: set[tuple[str, str]]) -> bool:
    """A value restored only to be dropped: nor is it recorded. Its one push and one pop
    go; whether any did."""
    changed = False
    for tape, t in dead_pops:
        pushes = [s for s in _statements(body) if _pushed(s) == (tape, t)]
        pops = [s for s in _statements(body) if target(s) == t and popped(s, last=True) == tape]
        if len(pushes) == len(pops) == 1:
            for block in blocks(body):
                block[:] = [s for s in block if s is not pushes[0] and s is not pops[0]]
            changed = True
    return changed
