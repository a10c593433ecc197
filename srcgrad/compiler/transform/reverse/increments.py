"""Increments of array items, ``y[i] += v``, whose adjoint leaves ``y_bar`` as it is.

Normalize writes ``y[i] += v`` as three statements::

    t4 = y[i]
    t7 = t4 + v
    y[i] = t7

Taken one by one, their adjoints zero ``y_bar[i]`` (the write), then add it back
(the read of the old value): ``y_bar = y_bar.copy(); y_bar[i] = 0.0`` and ``y_bar =
y_bar + index_adjoint(t7_bar, y, i)``, two whole-array operations per loop trip for a
write of one element. Seen together, the increment passes ``y_bar[i]`` through
unchanged and gives ``v`` its part, ``v_bar += y_bar[i]``: the cost of the write, not
of the array.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from ...analyze.facts import Facts, blocks_of
from ...analyze.indices import may_repeat
from ...astwalk import loaded
from ...normalize.lower import Normalized


@dataclass(frozen=True)
class Increment:
    """``y[index] = old ± addend`` where ``old = y[index]`` (the statements ``read`` and
    ``total``): ``sign`` is 1 or -1."""

    read: ast.Assign
    total: ast.Assign
    addend: ast.expr
    sign: int


def find_increments(norm: Normalized, facts: Facts) -> dict[int, Increment]:
    """Every item increment of the function, by the id of its write ``y[i] = t7``.

    Only where nothing can tell the difference: ``t4`` and ``t7`` are temporaries read
    once each, there; ``y`` is a real array; the index names each element once (a basic
    index: ``y[[0, 0]] += v`` adds once, not twice) and ``y`` and the names in the index
    keep their values from the read to the write (only assignments of other names come
    in between, in the same block)."""
    reads = Counter(loaded(norm.tree))
    found: dict[int, Increment] = {}

    def visit(block: list[ast.stmt]) -> None:
        for k, stmt in enumerate(block):
            for inner in blocks_of(stmt):
                visit(inner)
            increment = _increment(block, k, facts, reads, norm.temps)
            if increment is not None:
                found[id(stmt)] = increment

    visit(norm.tree.body)
    return found


def _increment(
    block: list[ast.stmt], k: int, facts: Facts, reads: Counter, temps: set[str]
) -> Increment | None:
    write = block[k]
    op = facts.ops.get(write)
    if op is None or op.key != "setitem" or k < 2:
        return None
    y, total_atom, index = op.target, op.args.get("v"), op.ctx.index
    if not _real_array(y, facts) or not isinstance(total_atom, ast.Name):
        return None
    total = block[k - 1]
    total_op = facts.ops.get(total)
    if (
        total_op is None
        or total_op.key not in (ast.Add, ast.Sub)
        or total_op.target != total_atom.id
        or not isinstance(total_op.args.get("x"), ast.Name)
    ):
        return None
    old, addend = total_op.args["x"].id, total_op.args.get("y")
    if not {old, total_atom.id} <= temps or reads[old] != 1 or reads[total_atom.id] != 1:
        return None
    if addend is None or (isinstance(addend, ast.Name) and addend.id in facts.complex):
        return None
    fixed = {y, *loaded(index)}
    for j in range(k - 2, -1, -1):
        stmt = block[j]
        read_op = facts.ops.get(stmt)
        if read_op is not None and read_op.target == old:
            if (
                read_op.key == "getitem"
                and _is_name(read_op.args.get("x"), y)
                and ast.dump(read_op.ctx.index) == ast.dump(index)
                and not may_repeat(index, facts)
            ):
                sign = 1 if total_op.key is ast.Add else -1
                return Increment(read=stmt, total=total, addend=addend, sign=sign)
            return None
        if not _assigns_other_names(stmt, fixed):
            return None
    return None


def _real_array(y: str, facts: Facts) -> bool:
    return y not in facts.complex and y not in facts.sequences and y not in facts.maybe_sequences


def _is_name(atom: ast.expr | None, v: str) -> bool:
    return isinstance(atom, ast.Name) and atom.id == v


def _assigns_other_names(stmt: ast.stmt, fixed: set[str]) -> bool:
    """``stmt`` only gives values to names, none of them in ``fixed``."""
    if not isinstance(stmt, ast.Assign):
        return False
    for target in stmt.targets:
        parts = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(p, ast.Name) and p.id not in fixed for p in parts):
            return False
    return True
