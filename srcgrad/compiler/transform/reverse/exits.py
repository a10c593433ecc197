"""Part of the tape plan: what loops with a ``break`` and integer counters let the
adjoint sweep do without a tape.

**Stepped counters.** A name given only integer constants and steps of itself by an
integer constant (``i = 0`` ... ``i = i + 1``) holds a Python int, and integer arithmetic
is exact: the value a step overwrites is the new value less the step, so the adjoint
restores it with ``i = i - 1`` instead of recording it (:func:`stepped_counters`)::

    i = 0                          for _ in range(trips):
    while i < n:          ==>          i = i - 1
        ...                            ...
        i = i + 1

**Break guards.** ``normalize.exits`` turns ``if c: break`` into a flag, and what follows
it into ``if not broke:`` (a guard). The guard fails on one trip only, the loop's last,
and only where it ended by the break. Where nothing before the guard has an adjoint (no
active value, nothing recorded: the break comes first in the body), the loop counts only
the trips that pass the guard, and the adjoint of each of those runs the guard's body
with no test: no flag recorded per trip (:func:`break_guards`)::

    trips = 0                             trips = 0
    while t1:                             while t1:
        if x[i] > t:                          if x[i] > t:
            broke = True                          broke = True
        t6 = not broke          ==>           t6 = not broke
        tape.append(t6)                       if t6:
        if t6:                                    trips = trips + 1
            ...                                   ...
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ...analyze.facts import Facts, assigned_name, walk_block
from ...astwalk import loaded, nodes

if TYPE_CHECKING:
    from .tape_plan import TapePlan


def stepped_counters(core: list[ast.stmt], facts: Facts, params: list[str]) -> dict[int, ast.expr]:
    """For each step ``i = t`` (``t = i + c`` just before it, ``c`` an integer constant)
    of a counter (a name every definition of which is an integer constant or such a
    step), the value that gives back what the step overwrote (``i - c``), by the
    step's id."""
    out: dict[int, ast.expr] = {}
    before: dict[int, ast.stmt] = {}  # each statement's predecessor in its block

    def visit(block: list[ast.stmt]) -> None:
        for k, stmt in enumerate(block):
            if k:
                before[id(stmt)] = block[k - 1]
            for inner in (getattr(stmt, "body", []), getattr(stmt, "orelse", [])):
                visit(inner)

    visit(core)
    for v, defs in facts.definitions.items():
        if v in params or v in facts.loop_indices:
            continue
        steps: dict[int, ast.expr] = {}
        for stmt, _ in defs:
            step = _step(v, stmt, before.get(id(stmt)), facts)
            if step is not None:
                steps[id(stmt)] = step
            elif not (
                isinstance(stmt, ast.Assign)
                and isinstance(stmt.value, ast.Constant)
                and type(stmt.value.value) is int
            ):
                break
        else:
            out.update(steps)
    return out


def _step(v: str, stmt: ast.stmt, prior: ast.stmt | None, facts: Facts) -> ast.expr | None:
    """``v - c`` where ``stmt`` is ``v = t`` and ``prior`` is ``t = v + c`` (``+ -``, ``c``
    an integer constant, ``t`` defined there alone); else None."""
    if not (
        isinstance(stmt, ast.Assign)
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Name)
        and isinstance(prior, ast.Assign)
        and isinstance(prior.targets[0], ast.Name)
        and prior.targets[0].id == stmt.value.id
        and len(facts.definitions.get(stmt.value.id, [])) == 1
    ):
        return None
    value = prior.value
    if not (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, (ast.Add, ast.Sub))
        and isinstance(value.left, ast.Name)
        and value.left.id == v
        and isinstance(value.right, ast.Constant)
        and type(value.right.value) is int
    ):
        return None
    back = ast.Sub() if isinstance(value.op, ast.Add) else ast.Add()
    return ast.BinOp(
        left=ast.Name(id=v, ctx=ast.Load()), op=back, right=ast.Constant(value.right.value)
    )


def scalar_of_views(
    v: str, stmt: ast.Assign, views: dict[str, ast.expr], facts: Facts, temps: set[str]
) -> bool:
    """Whether ``stmt`` computes a number (``v`` a temporary of rank 0) by an elementwise
    primitive of views the adjoint computes again (``np.sin(x[i])``), or compares such
    numbers (a loop's ``if`` test, ``x[i] * w > 0.0``): as cheap to compute again as to
    record."""
    op = facts.ops.get(stmt)
    if op is None or op.rule is None or op.call_args is not None or v not in temps:
        return False
    value = stmt.value
    if not any(n in views for n in loaded(value)):
        return False
    if isinstance(value, ast.Compare):
        return (
            len(value.ops) == 1
            and isinstance(value.ops[0], _ORDER)
            and all(_number(a, facts) for a in (value.left, value.comparators[0]))
        )
    return op.rule.elementwise and facts.shape(ast.Name(id=v, ctx=ast.Load())).rank == 0


_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def _number(atom: ast.expr, facts: Facts) -> bool:
    """A rank-0 operand: a number written out, or a name of rank 0."""
    if isinstance(atom, ast.Constant):
        return type(atom.value) in (int, float, bool)
    return isinstance(atom, ast.Name) and facts.shape(atom).rank == 0


def before_steps(
    v: str,
    stmt: ast.stmt,
    counters: set[str],
    readers: dict[str, list[ast.stmt]],
    plan: TapePlan,
) -> bool:
    """Whether every read of ``v`` comes after its one definition ``stmt`` in the same
    block with no step of ``counters`` between them: the counters hold there, and where
    the adjoint restores them, the values ``stmt`` read (a view ``x[i]`` may be taken
    again there)."""
    bid = plan.blocks_of.get(id(stmt))
    if bid is None:
        return False
    block = plan.blocks[bid]
    tops = {id(s): k for k, top in enumerate(block) for s, _ in walk_block([top])}
    k = tops[id(stmt)]
    ends = [tops.get(id(r), -1) for r in readers.get(v, [])]
    if any(j <= k for j in ends):
        return False
    between = [s for top in block[k + 1 : max(ends, default=k) + 1] for s, _ in walk_block([top])]
    return not any(
        (isinstance(s, ast.Assign) and assigned_name(s) in counters)
        or (isinstance(s, ast.For) and isinstance(s.target, ast.Name) and s.target.id in counters)
        for s in between
    )


class BreakGuard:
    """A loop's guard ``if not broke:`` (by the name its test reads) and what runs
    before it in the body."""

    def __init__(self, loop: ast.stmt, guard: ast.If, before: list[ast.stmt]) -> None:
        self.loop, self.guard, self.before = loop, guard, before


def break_guards(core: list[ast.stmt], facts: Facts) -> list[BreakGuard]:
    """The loops whose ``break`` flag ``broke`` is set in one place, whose body is
    ``[before..., t = not broke, if t: [...], if broke: break, after...]`` and whose
    ``before`` gives no active name a value and has no loop: their guards, which
    :class:`~.tape_plan.TapePlanner` may leave untested in the adjoint."""
    out: list[BreakGuard] = []
    for stmt in _statements(core):
        if isinstance(stmt, (ast.For, ast.While)):
            found = _guard(stmt, facts)
            if found is not None:
                out.append(found)
    return out


def _guard(loop: ast.For | ast.While, facts: Facts) -> BreakGuard | None:
    found = _guard_parts(loop)
    if found is None:
        return None
    guard, _, before = found
    for s in _statements(before):
        if isinstance(s, (ast.For, ast.While, ast.Return)):
            return None
        if isinstance(s, (ast.Assign, ast.Expr)) and s in facts.ops:
            if facts.ops[s].target in facts.active:
                return None
        elif isinstance(s, ast.Assign) and any(
            isinstance(n, ast.Name) and n.id in facts.active for n in nodes(s)
        ):
            return None
    return BreakGuard(loop, guard, before)


def _guard_parts(loop: ast.For | ast.While) -> tuple[ast.If, ast.Assign, list[ast.stmt]] | None:
    """The guard ``if t:``, its test ``t = not broke`` and what runs before them, of a
    loop whose body is ``[before..., t = not broke, if t: [...], if broke: break, ...]``
    and whose flag ``broke`` is set in one place, in ``before``."""
    body = loop.body
    exits = [
        k
        for k, s in enumerate(body)
        if isinstance(s, ast.If)
        and isinstance(s.test, ast.Name)
        and s.body
        and isinstance(s.body[0], ast.Break)
    ]
    if len(exits) != 1 or exits[0] < 2:
        return None
    k = exits[0]
    broke = body[k].test.id
    guard, test = body[k - 1], body[k - 2]
    if not (
        isinstance(guard, ast.If)
        and not guard.orelse
        and isinstance(guard.test, ast.Name)
        and isinstance(test, ast.Assign)
        and isinstance(test.targets[0], ast.Name)
        and test.targets[0].id == guard.test.id
        and isinstance(test.value, ast.UnaryOp)
        and isinstance(test.value.op, ast.Not)
        and isinstance(test.value.operand, ast.Name)
        and test.value.operand.id == broke
    ):
        return None
    before = body[: k - 2]
    sets = [
        s
        for s in _statements(body)
        if isinstance(s, ast.Assign)
        and isinstance(s.targets[0], ast.Name)
        and s.targets[0].id == broke
    ]
    if len(sets) != 1 or sets[0] not in list(_statements(before)):
        return None
    return guard, test, before


def passed_guards(
    core: list[ast.stmt], facts: Facts, loops_of: dict[int, frozenset[int]]
) -> dict[int, ast.expr]:
    """For the test ``t = not broke`` of a break guard (the loops of
    :func:`_guard_parts`, whatever runs before the guard) in a loop inside no other
    loop, ``t`` its one definition: ``True``, the value the test overwrites on every
    trip but the first, by the test's id.

    A trip that sets ``broke`` ends the loop at ``if broke: break``, and nothing else
    sets it: so every trip but the last ends with ``t`` true. The adjoint sweep runs the
    trips backwards: the last one's ``t`` is the value ``t`` holds after the loop, and
    restoring ``t`` after each trip's adjoint gives the trip before it its ``t``, true.
    (After the first trip's, ``t`` holds True, not what it held before the loop: no
    adjoint reads that, ``t`` being defined in the loop alone; inside another loop the
    next outer trip's adjoint would.) No flag recorded per trip::

        while i < n:                         for _ in range(trips):
            s = s + x[i] * c                     if t9:
            if s > 4.0:                              i = i - 1
                broke = True         ==>         t9 = True
            t9 = not broke                       c_bar += s_bar * x[i]
            if t9:                               ...
                i = i + 1
            if broke:
                break
    """
    out: dict[int, ast.expr] = {}
    for loop in _statements(core):
        if not isinstance(loop, (ast.For, ast.While)) or loops_of.get(id(loop)):
            continue
        found = _guard_parts(loop)
        if found is None:
            continue
        _, test, _ = found
        if len(facts.definitions.get(test.targets[0].id, [])) == 1:
            out[id(test)] = ast.Constant(True)
    return out


def _statements(block: list[ast.stmt]):
    """Every statement of ``block``, nested ones too (loops' bodies included)."""
    for stmt in block:
        yield stmt
        for inner in (getattr(stmt, "body", []), getattr(stmt, "orelse", [])):
            if isinstance(inner, list):
                yield from _statements(inner)
