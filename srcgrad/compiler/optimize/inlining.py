"""Pass (last, once): a temporary read once is written into the expression reading it."""

from __future__ import annotations

import ast
import copy
from collections import Counter

from ..astwalk import copy_tree, unparse
from .dataflow import (
    Context,
    _pure,
    _statements,
    _written_into,
    blocks,
    own_reads,
    own_writes,
    reads,
    target,
    writes,
    written_in_place,
)

#: the longest statement (without indentation) inlining may produce
LINE_LIMIT = 80


def inline_temporaries(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """Write each temporary read exactly once into the statement that reads it.

    Before::                  After::

        t1 = x @ w                t2 = np.exp(-(x @ w))
        t2 = np.exp(-t1)          if n == 0:
        t3 = n == 0                   t2 = t2 * 2.0
        if t3:
            t2 = t2 * 2.0

    Only names in ``temporaries`` (made by the compiler, never the user's),
    defined once and read in a later simple statement of the same block (or an
    ``if``'s test),
    where no operand changes in between (is reassigned or written into, itself or
    through a name sharing its memory: ``t2 = x[::2]; x[::2] = v`` changes ``t2``) and
    the merged statement stays within ``LINE_LIMIT``.
    """
    temporaries, params = ctx.temporaries, ctx.params
    hazards = written_in_place(body, params)
    # counts kept in step with each inlining (which moves the reads of the value into
    # the reader, and removes the one read and the one write of the name inlined)
    all_reads = Counter(n for s in _statements(body) for n in own_reads(s))
    assigned = Counter(n for s in _statements(body) for n in own_writes(s))
    summaries: dict[int, tuple[ast.stmt, _Summary]] = {}  # by id, kept with the statement
    changed = True
    inlined = False
    while changed:  # (one pass finds nearly all: an inlining only lengthens other merges)
        changed = False
        for block in list(blocks(body)):
            # each statement's reads and writes, kept in step with the block: the scan goes
            # on after an inlining (whose counts change only for the name inlined), so a
            # block of n statements costs O(n^2) set lookups, not O(n^3) tree walks
            facts = [_summary_of(s, summaries) for s in block]
            i = 0
            while i < len(block):
                stmt = block[i]
                a = target(stmt)
                j = _inline_into(block, facts, i, a, temporaries, all_reads, assigned, hazards)
                if j is None:
                    i += 1
                    continue
                if isinstance(block[j], ast.If):  # its test (`if n == 0:`)
                    merged = copy.copy(block[j])
                    merged.test = copy_tree(block[j].test, {a: stmt.value})
                else:
                    merged = copy_tree(block[j], {a: stmt.value})
                size = _merged_size(facts[j], facts[i], a, merged)
                if size[0] > LINE_LIMIT:
                    i += 1
                    continue
                block[j], facts[j] = merged, _summary_of(merged, summaries)
                facts[j].size = size
                del block[i], facts[i]
                all_reads[a] -= 1
                assigned[a] -= 1
                changed = inlined = True
    return body, inlined


def _summary_of(stmt: ast.stmt, summaries: dict[int, tuple[ast.stmt, _Summary]]) -> _Summary:
    hit = summaries.get(id(stmt))
    if hit is None or hit[0] is not stmt:
        hit = summaries[id(stmt)] = (stmt, _Summary(stmt))
    return hit[1]


class _Summary:
    """What one statement reads, assigns, writes into and whether it has effects (a tape
    pop), computed once per statement by the passes that scan a block many times; and,
    for inlining, bounds on the length of its line (see :func:`_merged_size`)."""

    __slots__ = ("reads", "written", "into", "pure", "stmt", "size")

    def __init__(self, stmt: ast.stmt) -> None:
        self.reads = set(reads(stmt))
        self.into = _written_into(stmt)
        self.written = set(writes(stmt)) | self.into
        self.pure = _pure(getattr(stmt, "value", ast.Constant(0)))
        self.stmt = stmt
        self.size: tuple[int, int] | None = None  # (at least, at most) characters

    def bounds(self) -> tuple[int, int]:
        """Bounds on the length of the statement's line (``if <test>:`` for an ``if``)."""
        if self.size is None:
            n = len(_line(self.stmt))
            self.size = (n, n)
        return self.size


def _line(stmt: ast.stmt) -> str:
    return f"if {unparse(stmt.test)}:" if isinstance(stmt, ast.If) else unparse(stmt)


#: how much an expression's text may change where it replaces a name: parentheses
#: added for precedence (``-(x @ w)``) or dropped (a tuple in a subscript)
_SLACK = 2


def _merged_size(reader: _Summary, value: _Summary, a: str, merged: ast.stmt) -> tuple[int, int]:
    """Bounds on the line length of ``merged``: the reader's statement with the value
    of ``value``'s statement (``a = <value>``) written where it read ``a``. The text of
    the merge is the reader's with ``a`` replaced by the value's text, give or take
    parentheses; it is rendered only where the bounds straddle ``LINE_LIMIT``."""
    low_r, high_r = reader.bounds()
    low_v, high_v = value.bounds()
    prefix = len(a) + 3  # (`a = `, before the value's text)
    low = low_r - len(a) + low_v - prefix - _SLACK
    high = high_r - len(a) + high_v - prefix + _SLACK
    if low > LINE_LIMIT or high <= LINE_LIMIT:
        return low, high
    n = len(_line(merged))
    return n, n


def _inline_into(
    block: list[ast.stmt],
    facts: list[_Summary],
    i: int,
    a: str | None,
    temporaries: set[str],
    all_reads: Counter,
    assigned: Counter,
    hazards: set[str] = frozenset(),
) -> int | None:
    """For :func:`inline_temporaries`: the position of the one statement that
    ``block[i]`` (which assigns ``a``) may be written into, or None."""
    stmt = block[i]
    if a is None or a not in temporaries or all_reads[a] != 1 or assigned[a] != 1:
        return None
    if not facts[i].pure:
        return None
    j = next((k for k in range(i + 1, len(block)) if a in facts[k].reads), None)
    if j is None:
        return None
    if not isinstance(block[j], (ast.Assign, ast.AugAssign, ast.Expr, ast.Return)) and not (
        isinstance(block[j], ast.If) and a in own_reads(block[j])
    ):
        return None
    operands = set(reads(stmt.value))
    between = facts[i + 1 : j]
    if any(operands & f.written for f in between):
        return None
    if operands & hazards and any(f.into for f in between):
        return None  # (an operand may share memory with the array written into)
    if not all(f.pure for f in between):
        return None  # keep the order of tape pops
    return j
