"""Pass: an adjoint's zero start moved into the branches of the ``if`` that first
gives it a value, where each branch can fold it (:mod:`.fold_first`)."""

from __future__ import annotations

import ast
import bisect

from ..astwalk import copy_tree
from .dataflow import Context, _accumulated, _is_zeros_like, blocks, reads, target, writes


def sink_zero_starts(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = zeros_like(x)`` whose next use is an ``if`` with two branches, each of
    which first accumulates into ``v`` (or assigns it afresh), moves into both branches,
    where :func:`~.fold_first.fold_first_accumulation` folds it.

    Before::                              After::

        h_bar = np.zeros_like(h)              if n % 2 == 0:
        if n % 2 == 0:                            h_bar = np.zeros_like(h)
            h_bar = h_bar + g * h                 h_bar = h_bar + g * h
        else:                                 else:
            h_bar = h_bar + g * x                 h_bar = np.zeros_like(h)
                                                  h_bar = h_bar + g * x

    (which the fold makes ``h_bar = g * h`` and ``h_bar = g * x``). Both branches must
    touch ``v`` first (one that does not keeps ``v`` as it was); not where a branch
    adds an index adjoint into ``v``, which is done in place only into zeros.
    """
    helpers = ctx.helpers or {}
    indexed = {helpers.get(h) for h in ("index_adjoint", "index_adjoint_add")} - {None}
    changed = False
    for block in list(blocks(body)):
        order = list(block)  # (the block as it was: a moved start leaves a gap)
        uses: dict[str, list[int]] | None = None
        moved = 0
        for k, stmt in enumerate(order):
            v = target(stmt)
            if v is None or not _is_zeros_like(stmt.value):
                continue
            if uses is None:
                uses = _uses(order)
            j = _next_use(uses, k, v)
            branch = order[j] if j is not None else None
            if (
                isinstance(branch, ast.If)
                and branch.orelse
                and v not in reads(branch.test)
                and _starts(branch.body, v)
                and _starts(branch.orelse, v)
                and not _indexed(branch, v, indexed)
            ):
                branch.body.insert(0, copy_tree(stmt))
                branch.orelse.insert(0, copy_tree(stmt))
                del block[k - moved]
                moved += 1
                changed = True
                for name in _touched(stmt):  # (the ``if`` now touches what the start did)
                    at = uses.setdefault(name, [])
                    if j not in at:
                        bisect.insort(at, j)
    return body, changed


def _touched(stmt: ast.stmt) -> set[str]:
    """The names ``stmt`` (with its nested blocks) reads or writes."""
    return {*reads(stmt), *writes(stmt)}


def _touches(stmt: ast.stmt, v: str) -> bool:
    return v in reads(stmt) or v in writes(stmt)


def _uses(block: list[ast.stmt]) -> dict[str, list[int]]:
    """For each name, the positions in ``block`` of the statements touching it, in
    order (one walk of the block, where asking each start's next use of every later
    statement would be quadratic)."""
    uses: dict[str, list[int]] = {}
    for j, stmt in enumerate(block):
        for name in _touched(stmt):
            uses.setdefault(name, []).append(j)
    return uses


def _next_use(uses: dict[str, list[int]], k: int, v: str) -> int | None:
    """The position of the first statement after ``k`` that touches ``v``."""
    at = uses.get(v, ())
    i = bisect.bisect_right(at, k)
    return at[i] if i < len(at) else None


def _starts(branch: list[ast.stmt], v: str) -> bool:
    """Whether the first statement of ``branch`` touching ``v`` is one of its own
    that accumulates into ``v`` (``v = v + c``) or assigns it without reading it."""
    first = next((s for s in branch if _touches(s, v)), None)
    if not isinstance(first, ast.Assign) or target(first) != v:
        return False
    return _accumulated(v, first.value) is not None or v not in reads(first.value)


def _indexed(branch: ast.If, v: str, indexed: set[str]) -> bool:
    """Whether ``branch`` adds an index adjoint into ``v`` (``v = v + index_adjoint(g,
    x, i)``), which :func:`~.in_place.accumulate_in_place` writes ``v[i] += g`` only
    into zeros it can see: such a ``v`` keeps its zero start."""
    return any(
        target(s) == v
        and isinstance(s.value, ast.BinOp)
        and isinstance(s.value.right, ast.Call)
        and isinstance(s.value.right.func, ast.Name)
        and s.value.right.func.id in indexed
        for s in ast.walk(branch)
        if isinstance(s, ast.Assign)
    )
