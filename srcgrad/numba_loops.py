"""The loops of the numba profile's elementwise fusion (:mod:`srcgrad.numba_fusion`): a
run of statements, read by :class:`~srcgrad.numba_fusion._Fuser` into a :class:`Run`,
written as one loop with its checks (:func:`emit`), and the arrays it only adds to
stored once per element (:func:`carry`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from .compiler.astwalk import copy_tree
from .compiler.transform.builder import Builder

#: the operators of additions to an array (which commute: written at any offset)
ADDS = (ast.Add, ast.Sub)


def name(id_: str, ctx: ast.expr_context | None = None) -> ast.Name:
    return ast.Name(id=id_, ctx=ctx or ast.Load())


@dataclass
class Access:
    """An array read or written in a run: its name, the offset its element ``k`` is at,
    and for a write, its operator (None: ``=``)."""

    base: str
    offset: int
    write: bool
    op: type | None = None


@dataclass
class Run:
    """A run of statements being fused: the loop's body, what runs before and after it,
    the lengths of the operands, the accesses to arrays."""

    stmts: list[ast.stmt]
    body: list[ast.stmt] = field(default_factory=list)
    before: list[ast.stmt] = field(default_factory=list)
    after: list[ast.stmt] = field(default_factory=list)
    lengths: list[ast.expr] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)
    #: names assigned in the run: their number name in the loop (local) or None (array)
    local: dict[str, str | None] = field(default_factory=dict)
    #: the arrays the run allocates with the loop's length
    sized: set[str] = field(default_factory=set)
    #: the numbers read in the run, and the sums it accumulates (read by no statement of it)
    numbers: set[str] = field(default_factory=set)
    totals: set[str] = field(default_factory=set)
    #: the arrays the run allocates as zeros like another array (``index_adjoint``)
    like: dict[str, str] = field(default_factory=dict)
    #: more checks: pairs of arrays of one length (``B += index_adjoint(E, X, ...)``)
    same: list[tuple[str, str]] = field(default_factory=list)

    def check(self, length: ast.expr) -> None:
        """Check ``length`` against the loop's (once; an array the run allocates like
        another measured by that one, which exists before the run)."""
        for node in ast.walk(length):
            if isinstance(node, ast.Name) and node.id in self.like:
                node.id = self.like[node.id]
        if all(ast.dump(length) != ast.dump(other) for other in self.lengths):
            self.lengths.append(length)

    dtype: ast.expr | None = None
    ops: int = 0
    #: the array operands read (elements of arrays, and the run's numbers standing for them)
    arrays: int = 0


def carry(run: Run, k_name: str, n_name: str, fresh: Callable[[str], str], xp: Builder) -> None:
    """Each array the run allocates as zeros (``index_adjoint``) and only adds to, at
    one or more offsets, written once per element: the loop adds each trip's terms in
    numbers, one per offset, and stores element ``k + low`` (the lowest offset), whose
    terms from earlier trips it carries in numbers too; the elements no trip reaches
    are set to zero. (A store in place of an addition to memory: no zeros written
    first, no trip waiting on the memory the trip before wrote.)"""
    k, n = name(k_name), name(n_name)
    for v, like in run.like.items():
        accesses = [a for a in run.accesses if a.base == v]
        if not accesses or any(not a.write or a.op not in ADDS for a in accesses):
            continue
        offsets = sorted({a.offset for a in accesses})
        low, high = offsets[0], offsets[-1]
        terms = {o: fresh(f"{v}_at_{o}") for o in offsets}
        carried = [fresh(f"{v}_next_{d}") for d in range(1, high - low + 1)]
        body: list[ast.stmt] = [zero(terms[o]) for o in offsets]
        for stmt in run.body:
            o = _offset_written(stmt, v, k_name)
            if o is None:
                body.append(stmt)
            else:
                assert isinstance(stmt, ast.AugAssign)
                body.append(ast.AugAssign(target=name(terms[o]), op=stmt.op, value=stmt.value))
        first = _plus(name(carried[0]) if carried else None, _term(terms, low))
        body.append(ast.Assign(targets=[at(v, low, k)], value=first))
        for d in range(1, len(carried) + 1):
            later = name(carried[d]) if d < len(carried) else None
            value = _plus(later, _term(terms, low + d))
            body.append(ast.Assign(targets=[name(carried[d - 1])], value=value))
        run.body = body
        for stmt in run.before:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                if stmt.targets[0].id == v:
                    stmt.value = xp.xp_call("empty_like", name(like))
        run.before.extend(zero(c) for c in carried)
        if low:
            head = ast.Subscript(
                value=name(v), slice=ast.Slice(upper=ast.Constant(low)), ctx=ast.Load()
            )
            run.before.append(ast.Assign(targets=[head], value=ast.Constant(0.0)))
        for d, c in enumerate(carried):
            store = at(v, low + d, n)
            run.after.append(ast.Assign(targets=[store], value=name(c)))
        end = at(v, high, n).slice
        tail = ast.Subscript(value=name(v), slice=ast.Slice(lower=end), ctx=ast.Load())
        run.after.append(ast.Assign(targets=[tail], value=ast.Constant(0.0)))


def emit(
    run: Run, k_name: str, n_name: str, fresh: Callable[[str], str], xp: Builder
) -> list[ast.stmt]:
    """The statements of ``run`` as one loop over ``k_name`` in ``range(n_name)``, run where
    the operands' lengths are the loop's (else the statements as they were)."""
    carry(run, k_name, n_name, fresh, xp)
    first, *rest = run.lengths
    checks: list[ast.expr] = [
        ast.Compare(left=length, ops=[ast.Eq()], comparators=[name(n_name)]) for length in rest
    ]
    for a, b in run.same:
        a_len, b_len = (ast.Call(func=name("len"), args=[name(v)], keywords=[]) for v in (a, b))
        checks.append(ast.Compare(left=a_len, ops=[ast.Eq()], comparators=[b_len]))
    loop = ast.For(
        target=name(k_name, ast.Store()),
        iter=ast.Call(func=name("range"), args=[name(n_name)], keywords=[]),
        body=run.body,
        orelse=[],
    )
    fused = [*run.before, loop, *run.after]
    test = ast.BoolOp(op=ast.And(), values=checks) if len(checks) > 1 else None
    if test is None:
        test = checks[0] if checks else ast.Constant(True)
    return [
        ast.Assign(targets=[name(n_name, ast.Store())], value=first),
        ast.If(test=test, body=fused, orelse=run.stmts),
    ]


def at(base: str, offset: int, k: ast.expr) -> ast.Subscript:
    index: ast.expr = copy_tree(k)
    if offset:
        index = ast.BinOp(left=index, op=ast.Add(), right=ast.Constant(offset))
    return ast.Subscript(value=name(base), slice=index, ctx=ast.Load())


def _term(terms: dict[int, str], offset: int) -> ast.expr | None:
    return name(terms[offset]) if offset in terms else None


def _plus(a: ast.expr | None, b: ast.expr | None) -> ast.expr:
    if a is None or b is None:
        return a or b or ast.Constant(0.0)
    return ast.BinOp(left=a, op=ast.Add(), right=b)


def zero(v: str) -> ast.Assign:
    return ast.Assign(targets=[name(v)], value=ast.Constant(0.0))


def _offset_written(stmt: ast.stmt, v: str, k: str) -> int | None:
    """The offset of the element of ``v`` the loop's statement ``stmt`` adds to
    (``v[k + 1] += ...``), or None."""
    if not (
        isinstance(stmt, ast.AugAssign)
        and isinstance(stmt.target, ast.Subscript)
        and isinstance(stmt.target.value, ast.Name)
        and stmt.target.value.id == v
    ):
        return None
    index = stmt.target.slice
    if isinstance(index, ast.Name) and index.id == k:
        return 0
    assert isinstance(index, ast.BinOp) and isinstance(index.right, ast.Constant)
    return int(index.right.value)
