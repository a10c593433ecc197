"""Pass: copies ``a = b`` and ``a = <number>`` substituted away."""

from __future__ import annotations

import ast
import bisect
import heapq
from collections import Counter

from .dataflow import (
    Context,
    _forget,
    _pure,
    _Replace,
    _statements,
    blocks,
    own_reads,
    own_writes,
    reads,
    target,
    writes,
)


def propagate_copies(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """Remove ``a = b`` and ``a = <number>`` by substitution or renaming.

    Before::                              After::

        y_bar = 1.0                           x_bar = 2.0 * 1.0 * np.cos(x)
        t_bar = y_bar
        x_bar = 2.0 * t_bar * np.cos(x)

    (and :func:`~srcgrad.optimize.folding.simplify` makes it ``2.0 * np.cos(x)``).

    Only where ``a`` has this one definition and every read of it follows in
    the same block, and ``b`` does not change before those reads.
    """
    params = ctx.params
    copies = _Copies(body, params)
    assigned = copies.assigned
    changed = False
    for block in list(blocks(body)):
        # one scan of the block: each question about a name (read later? written
        # between two statements?) is answered from where the name occurs, kept in
        # step with each rewrite, so the pass costs the size of the block, not its square
        ix = _BlockIndex(block)
        for i in range(len(block)):
            stmt = block[i]
            a = target(stmt) if stmt is not None else None
            if a is None or a in params or assigned[a] != 1:
                continue
            if isinstance(stmt.value, (ast.Name, ast.Constant)) and copies.remove(ix, i, a):
                changed = True
        block[:] = [s for s in block if s is not None]
    return body, changed


class _Copies:
    """Removes copies one at a time, keeping count over the whole body of each name's
    definitions (``assigned``) and reads (``uses``) in step with each rewrite."""

    def __init__(self, body: list[ast.stmt], params: frozenset[str]) -> None:
        self.params = params
        self.assigned = Counter(n for s in _statements(body) for n in own_writes(s))
        self.uses = Counter(n for s in _statements(body) for n in own_reads(s))

    def remove(self, ix: _BlockIndex, i: int, a: str) -> bool:
        """Whether statement ``i`` of the block, ``a = b`` or ``a = <number>`` (``a`` not a
        parameter, and defined only there), went (with whatever it took: its reads
        substituted, or ``b``'s definition renamed)."""
        block, uses = ix.block, self.uses
        value = block[i].value
        if ix.reads_after(a, i) != uses[a]:
            return False  # read before its definition, or in another block
        if isinstance(value, ast.Name) and uses[a] == 1 and self._round_trip(ix, i, a, value.id):
            return True
        if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
            self._substitute(ix, i, a, value, len(block))
            return True
        if isinstance(value, ast.Name) and not ix.written_between(value.id, i, len(block)):
            if not self._rename_definition(ix, i, a, value.id):
                self._substitute(ix, i, a, value, len(block))
            return True
        if isinstance(value, ast.Name) and (last := _last_equal(ix, i, a, value.id)):
            # b changes later, but every read of a comes while b still equals a
            self._substitute(ix, i, a, ast.Name(id=value.id, ctx=ast.Load()), last)
            return True
        return False

    def _round_trip(self, ix: _BlockIndex, i: int, a: str, b: str) -> bool:
        """``a = b; ...; b = a`` (``a`` read once) changes nothing: both go."""
        back = ix.first_read_after(a, i)
        later = ix.block[back]
        if (
            target(later) == b
            and isinstance(later.value, ast.Name)
            and later.value.id == a
            and not ix.written_between(b, i, back)
        ):
            ix.delete(back)
            ix.delete(i)
            self.uses[a] -= 1
            self.uses[b] -= 1
            self.assigned[a] -= 1
            self.assigned[b] -= 1
            return True
        return False

    def _rename_definition(self, ix: _BlockIndex, i: int, a: str, b: str) -> bool:
        """``b = e; ...; a = b`` where ``b`` was made only to be copied into ``a`` (``e``
        pure, ``a`` neither read nor written between): ``a = e``."""
        block, assigned, uses = ix.block, self.assigned, self.uses
        # b's one definition (looked for only where it has one), nearest first
        definition = None
        if assigned[b] == 1 and uses[b] == 1 and b not in self.params:
            definition = ix.last_write_before(b, i)
            if definition is not None and target(block[definition]) != b:
                definition = None
        if (
            definition is None
            or not _pure(block[definition].value)
            or ix.read_between(a, definition, i)
            or ix.written_between(a, definition, i)
        ):
            return False
        ix.replace(
            definition,
            ast.Assign(
                targets=[ast.Name(id=a, ctx=ast.Store())],
                value=block[definition].value,
            ),
        )
        ix.delete(i)
        uses[b] = assigned[b] = 0
        return True

    def _substitute(self, ix: _BlockIndex, i: int, a: str, new: ast.expr, last: int) -> None:
        """``a = new`` at ``i`` goes, ``new`` written where ``a`` is read up to ``last``."""
        block, uses = ix.block, self.uses
        b = new.id if isinstance(new, ast.Name) else None
        replace = _Replace(a, new)
        for k in ix.reads_within(a, i, last):  # (those reading a)
            _forget(block[k])
            block[k] = replace.visit(block[k])
            ix.rename_read(k, a, b)
        ix.delete(i)
        if b is not None:  # b is read where a was; a = b is gone
            uses[b] += uses[a] - 1
        uses[a] = 0
        self.assigned[a] -= 1


class _BlockIndex:
    """Where each name is read (with counts) and written in one block, by position,
    kept in step with rewrites: for each name, the positions in order, so that each
    question (read after ``k``? written between two statements?) is a bisection, not a
    scan of every place a name busy in the whole block occurs. A deleted statement
    leaves ``None`` (positions stay put; the caller drops the holes at the end)."""

    def __init__(self, block: list[ast.stmt]) -> None:
        self.block = block
        self.read: list[Counter] = []
        self.written: list[set[str]] = []
        self.reads_at: dict[str, list[int]] = {}  # in order
        self.writes_at: dict[str, list[int]] = {}  # in order
        for k, stmt in enumerate(block):
            self.read.append(Counter(reads(stmt)))
            self.written.append(set(writes(stmt)))
            for n in self.read[k]:  # (k grows: appending keeps each list in order)
                self.reads_at.setdefault(n, []).append(k)
            for n in self.written[k]:
                self.writes_at.setdefault(n, []).append(k)

    def _enter(self, k: int) -> None:
        for n in self.read[k]:
            _insert(self.reads_at.setdefault(n, []), k)
        for n in self.written[k]:
            _insert(self.writes_at.setdefault(n, []), k)

    def _leave(self, k: int) -> None:
        for n in self.read[k]:
            _remove(self.reads_at[n], k)
        for n in self.written[k]:
            _remove(self.writes_at[n], k)

    def delete(self, k: int) -> None:
        self._leave(k)
        self.block[k] = None  # type: ignore[call-overload]
        self.read[k], self.written[k] = Counter(), set()

    def replace(self, k: int, stmt: ast.stmt) -> None:
        self._leave(k)
        self.block[k] = stmt
        self.read[k], self.written[k] = Counter(reads(stmt)), set(writes(stmt))
        self._enter(k)

    def rename_read(self, k: int, old: str, new: str | None) -> None:
        """Statement ``k`` reads ``new`` (or nothing, for a number) where it read ``old``."""
        count = self.read[k].pop(old)
        _remove(self.reads_at[old], k)
        if new is not None:
            if new not in self.read[k]:
                _insert(self.reads_at.setdefault(new, []), k)
            self.read[k][new] += count

    def reads_after(self, name: str, k: int) -> int:
        """How many times the statements after ``k`` read ``name``."""
        at = self.reads_at.get(name, [])
        read = self.read
        return sum(read[p][name] for p in at[bisect.bisect_right(at, k) :])

    def first_read_after(self, name: str, k: int) -> int:
        """The position of the first statement after ``k`` reading ``name`` (there is one)."""
        at = self.reads_at[name]
        return at[bisect.bisect_right(at, k)]

    def reads_within(self, name: str, lo: int, hi: int) -> list[int]:
        """The positions after ``lo`` and up to ``hi`` of the statements reading ``name``."""
        at = self.reads_at.get(name, [])
        return at[bisect.bisect_right(at, lo) : bisect.bisect_right(at, hi)]

    def last_write_before(self, name: str, k: int) -> int | None:
        """The position of the last statement before ``k`` writing ``name``."""
        at = self.writes_at.get(name, [])
        j = bisect.bisect_left(at, k)
        return at[j - 1] if j else None

    def writes_after(self, name: str, k: int) -> list[int]:
        """The positions after ``k`` of the statements writing ``name``."""
        at = self.writes_at.get(name, [])
        return at[bisect.bisect_right(at, k) :]

    def read_between(self, name: str, lo: int, hi: int) -> bool:
        return _between(self.reads_at.get(name, []), lo, hi)

    def written_between(self, name: str, lo: int, hi: int) -> bool:
        return _between(self.writes_at.get(name, []), lo, hi)


def _insert(at: list[int], k: int) -> None:
    bisect.insort(at, k)


def _remove(at: list[int], k: int) -> None:
    del at[bisect.bisect_left(at, k)]


def _between(at: list[int], lo: int, hi: int) -> bool:
    """Whether the ordered positions ``at`` hold one after ``lo`` and before ``hi``."""
    j = bisect.bisect_right(at, lo)
    return j < len(at) and at[j] < hi


def _last_equal(ix: _BlockIndex, i: int, a: str, b: str) -> int | None:
    """After ``a = b`` at ``i``: the position of the statement that first gives ``b`` a
    value other than ``a``'s, if every read of ``a`` comes no later than that statement's
    own right-hand side (``b = a`` keeps them equal)."""
    seen = -1
    for p in heapq.merge(ix.writes_after(a, i), ix.writes_after(b, i)):
        if p == seen:
            continue  # (a statement writing both)
        seen = p
        s = ix.block[p]
        if isinstance(s, ast.Assign) and target(s) == b:
            if isinstance(s.value, ast.Name) and s.value.id == a:
                continue  # b = a: still equal
            if ix.reads_after(a, p) or a in ix.written[p]:
                return None
            return p
        return None  # a compound statement, or a written again
    return None
