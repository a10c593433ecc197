"""Reverse mode's taping decision, as a plan: what the primal sweep records, what the
adjoint sweep recomputes instead, which loops keep a trip count, and where each adjoint
lives. :mod:`.reverse` only emits code from a :class:`TapePlan`.

What the adjoint sweep reads must hold, when it is read, the value it had when the
primal statement ran. The primal sweep keeps that true by saving a name's old value (on
a tape in loops, in a variable outside them) just before an assignment destroys it, for
names the adjoint reads; the adjoint sweep restores it right after that assignment's
adjoint. Names with one definition outside loops are never saved; loop indices are
restored by the reversed loop; cheap views (``xs[t]``) are recomputed rather than
recorded; values every trip of a loop computes alike are not recorded. Loop trip counts
are kept where a loop may stop early (``break``) or has no range (``while``); where the
``break`` comes before anything the adjoint undoes, only the trips that ran the rest are
counted and no flag is recorded per trip, and integer counters are stepped back by
arithmetic, not recorded (:mod:`.exits`); numbers computed from recomputed views by
elementwise primitives (``np.sin(x[i])``) are computed again too.

What the adjoint reads depends on what is recorded (a branch replayed only to restore a
value reads its test), so the planner asks the emitter for the names its adjoint
reads under the plan so far, and goes round to a fixed point
(:meth:`TapePlanner.settle` says why it ends).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from ...analyze.facts import Facts, assigned_name, is_setitem, walk_block
from ...astwalk import nodes
from ...normalize.lower import Normalized
from .exits import (
    break_guards,
    passed_guards,
    stepped_counters,
)
from .reads import uses
from .rematerialize import Rematerializing


@dataclass
class TapePlan:
    """The taping decision for one function (statements and blocks by ``id``)."""

    #: each block (a statement list) by id, the loop each loop body belongs to, and the
    #: block each statement is in
    blocks: dict[int, list[ast.stmt]] = field(default_factory=dict)
    loop_of: dict[int, ast.stmt] = field(default_factory=dict)
    blocks_of: dict[int, int] = field(default_factory=dict)
    #: each statement's position in program order and its loop depth
    position: dict[int, int] = field(default_factory=dict)
    depth: dict[int, int] = field(default_factory=dict)
    #: for every assignment, the indices of the for loops around it
    loops_around: dict[int, list[str]] = field(default_factory=dict)
    #: each active name's adjoint lives in the innermost block holding all its definitions
    #: and uses (by id); ``simple``: those whose adjoint starts at zero there, no reset
    home: dict[str, int] = field(default_factory=dict)
    simple: set[str] = field(default_factory=set)
    #: views the adjoint recomputes instead of recording (``t2 = xs[t]``): their values
    recompute: dict[str, ast.expr] = field(default_factory=dict)
    #: containers read out of a container whose adjoint is the element's part of the
    #: outer one (``layer_bar = layers_bar[i]``), and put back: (outer name, index)
    borrowed: dict[str, tuple[str, ast.expr]] = field(default_factory=dict)
    #: names every trip of their loop gives the same value: never recorded
    invariant: set[str] = field(default_factory=set)
    #: writes into memory another name refers to at some time: undone even where their
    #: own name is not read (a value recorded may be that memory)
    shared_writes: set[int] = field(default_factory=set)
    #: for each of those: the other names that may refer to that memory
    shared_with: dict[int, set[str]] = field(default_factory=dict)
    #: loops that keep a trip count (``while``; ``for`` with a ``break``)
    counted: set[int] = field(default_factory=set)
    #: guards ``if not broke:`` the adjoint runs untested, their loop counting only the
    #: trips that pass them (see :mod:`.exits`): the loop by the guard's id
    elided: dict[int, ast.stmt] = field(default_factory=dict)
    #: steps of integer counters (``i = i + 1``) the adjoint undoes by arithmetic
    #: (``i = i - 1``) where it restores them, and break guards' tests ``t = not broke``
    #: it restores to ``True`` (:func:`.exits.passed_guards`), by id; the counters
    stepped: dict[int, ast.expr] = field(default_factory=dict)
    counters: set[str] = field(default_factory=set)
    #: the names the adjoint sweep reads (found by the fixed point)
    needed: set[str] = field(default_factory=set)
    #: of those, where the name's value is read: the statements whose adjoints (or, for
    #: an if or a loop, whose test or iterable in the adjoint) read it; ``None``: read
    #: anywhere. ``shape_at``: where only its shape and dtype are read
    read_at: dict[str, set[int] | None] = field(default_factory=dict)
    shape_at: dict[str, set[int]] = field(default_factory=dict)
    #: the loops (by id) around each statement
    loops_of: dict[int, frozenset[int]] = field(default_factory=dict)
    #: assignments that save the value they overwrite, and the names bound to None first
    #: (saved where they may be unbound); ``definite``: names bound on every path
    pushed: set[int] = field(default_factory=set)
    preset: list[str] = field(default_factory=list)
    definite: set[str] = field(default_factory=set)


class TapePlanner(Rematerializing):
    """Makes the plan for ``norm``: ``.plan`` holds the parts fixed by the code alone
    from the start; :meth:`settle` finds the rest."""

    def __init__(self, norm: Normalized, facts: Facts, wrt: list[str]) -> None:
        self.norm, self.facts, self.wrt = norm, facts, wrt
        self.params = [a.arg for a in norm.tree.args.args]
        self.core = norm.tree.body[:-1]
        self.plan = plan = TapePlan()
        self._top_index: dict[int, dict[int, int]] = {}  # (see _read_in_its_trip)
        self._scopes()
        for block in plan.blocks.values():
            for stmt in block:
                plan.blocks_of[id(stmt)] = id(block)
        self._loops(self.core, frozenset())
        for k, (stmt, depth) in enumerate(walk_block(self.core)):
            plan.position[id(stmt)] = k
            plan.depth[id(stmt)] = depth
            if isinstance(stmt, ast.While) or (isinstance(stmt, ast.For) and _has_break(stmt.body)):
                plan.counted.add(id(stmt))
        plan.shared_writes = facts.aliases.shared_writes if facts.aliases else set()
        plan.shared_with = facts.aliases.shared_with if facts.aliases else {}
        self._passed = {  # names passed to calls of the user's functions
            a.id
            for op in facts.ops.values()
            if op.call_args is not None
            for a in op.call_args
            if isinstance(a, ast.Name)
        }
        plan.stepped = stepped_counters(self.core, facts, self.params)
        steps = {id(s): s for s, _ in walk_block(self.core)}
        plan.counters = {assigned_name(steps[k]) for k in plan.stepped}
        plan.stepped.update(passed_guards(self.core, facts, plan.loops_of))  # (t = True)
        self.guards = break_guards(self.core, facts)
        plan.elided = {id(g.guard): g.loop for g in self.guards}
        plan.loops_around = self._enclosing_loops()
        plan.recompute = self._rematerializable()
        plan.borrowed = self._borrowed()
        plan.invariant = self._invariant()

    def settle(self, adjoint_reads: Callable[[TapePlan], set[str]]) -> TapePlan:
        """The whole plan. ``adjoint_reads(plan)``: the names the adjoint sweep the
        emitter makes under ``plan`` reads (of those, the function's own names count: the
        sweep's own temporaries are never recorded).

        This goes round to a fixed point, and it ends: ``needed`` only grows (each
        round adds what the adjoint reads to it), within the function's finitely many
        names, and ``pushed`` is a function of ``needed`` (and of facts fixed here); so
        a round that adds no name and saves no other statement changes nothing more and
        ends the loop: at most one round per name, and one more. (``elided`` only
        shrinks, as ``pushed`` grows.) The bound is checked, never assumed."""
        plan = self.plan
        names = set(self.params) | set(self.facts.definitions) | self.facts.loop_indices
        # (each round that goes on adds a name to ``needed`` or a place to ``read_at``:
        # both only grow, and ``pushed`` grows with them)
        for _ in range((len(names) + 1) * (len(plan.position) + 2)):
            places = _copied(plan.read_at), _copied(plan.shape_at)
            needed = (adjoint_reads(plan) & names) | plan.needed
            pushed = self.pushes(needed)
            elided = self._elided(pushed)
            if (
                pushed == plan.pushed
                and needed == plan.needed
                and places == (plan.read_at, plan.shape_at)
                and elided.keys() == plan.elided.keys()
            ):
                return plan
            plan.needed, plan.pushed, plan.elided = needed, pushed, elided
        raise AssertionError("srcgrad: what reverse mode records did not settle")

    def _elided(self, pushed: set[int]) -> dict[int, ast.stmt]:
        """The break guards the adjoint may leave untested: those of the plan so far
        before which nothing is recorded (a trip that breaks has no adjoint then). Only
        shrinks as ``pushed`` grows."""
        return {
            id(g.guard): g.loop
            for g in self.guards
            if id(g.guard) in self.plan.elided
            and not any(id(s) in pushed for s, _ in walk_block(g.before))
        }

    def _loops(self, block: list[ast.stmt], around: frozenset[int]) -> None:
        for stmt in block:
            self.plan.loops_of[id(stmt)] = around
            if isinstance(stmt, ast.If):
                self._loops(stmt.body, around)
                self._loops(stmt.orelse, around)
            elif isinstance(stmt, (ast.For, ast.While)):
                self._loops(stmt.body, around | {id(stmt)})

    def _read_later(self, v: str, stmt: ast.stmt) -> bool:
        """Whether the adjoint sweep may read ``v`` after the adjoint of ``stmt`` (an
        assignment to it) has run: where an adjoint of a statement before it reads ``v``,
        or one in a loop around it (another trip), or where ``v`` is read anywhere."""
        plan = self.plan
        if v not in plan.read_at or plan.read_at[v] is None:
            return True
        where = set(plan.read_at[v])
        facts = self.facts
        if not (  # a write into an array's items keeps its shape and dtype
            is_setitem(stmt) and v not in facts.sequences and v not in facts.maybe_sequences
        ):
            where |= plan.shape_at.get(v, set())
        k, loops = plan.position[id(stmt)], plan.loops_of[id(stmt)]
        if id(stmt) in plan.shape_at.get(v, ()) and not is_setitem(stmt):
            return True  # (its own adjoint starts the older value's adjoint: zeros like it)
        return any(plan.position[r] < k or plan.loops_of[r] & loops for r in where)

    def _scopes(self) -> None:
        """For every active name, the block its adjoint lives in and how it starts.

        ``home[v]`` is the innermost block holding every definition and use of ``v``;
        ``simple`` holds the names with one definition, a statement of that block,
        before any use: their adjoint starts at zero at the reversed block's start and
        needs no reset.
        """
        plan = self.plan
        uses_of: dict[str, list[list[ast.stmt]]] = {}
        defs: dict[str, list[list[ast.stmt]]] = {}
        order: dict[str, list[tuple[int, str]]] = {}  # block id -> first def/use positions
        chain: dict[int, list[int]] = {}  # block id -> ids of blocks enclosing it (outer first)

        def visit(block: list[ast.stmt], parents: list[int]) -> None:
            bid = id(block)
            plan.blocks[bid] = block
            chain[bid] = parents + [bid]
            for stmt in block:
                for n in uses(stmt):
                    uses_of.setdefault(n, []).append(block)
                    order.setdefault(n, []).append((bid, "use"))
                if isinstance(stmt, ast.Assign) or stmt in self.facts.ops:
                    t = assigned_name(stmt)
                    defs.setdefault(t, []).append(block)
                    order.setdefault(t, []).append((bid, "def"))
                if isinstance(stmt, ast.If):
                    visit(stmt.body, chain[bid])
                    visit(stmt.orelse, chain[bid])
                elif isinstance(stmt, (ast.For, ast.While)):
                    plan.loop_of[id(stmt.body)] = stmt
                    visit(stmt.body, chain[bid])

        top = self.norm.tree.body
        visit(top, [])
        for v in self.facts.active | set(self.wrt):
            if v in self.params or v in self.facts.loop_indices:
                plan.home[v] = id(top)
                continue
            blocks = [chain[id(b)] for b in defs.get(v, []) + uses_of.get(v, [])]
            common = blocks[0] if blocks else [id(top)]
            for c in blocks[1:]:
                k = 0
                while k < min(len(common), len(c)) and common[k] == c[k]:
                    k += 1
                common = common[:k]
            home = common[-1] if common else id(top)
            plan.home[v] = home
            events = [kind for bid, kind in order.get(v, []) if bid == home or kind == "use"]
            # one definition: with two, the later one's adjoint must reset v's
            direct = [id(b) for b in defs.get(v, [])] == [home]
            if direct and events and events[0] == "def":
                plan.simple.add(v)

    def _enclosing_loops(self) -> dict[int, list[str]]:
        """For every assignment, the indices of the for loops around it."""
        found: dict[int, list[str]] = {}

        def visit(block: list[ast.stmt], indices: list[str]) -> None:
            for stmt in block:
                if isinstance(stmt, ast.Assign):
                    found[id(stmt)] = indices
                elif isinstance(stmt, ast.If):
                    visit(stmt.body, indices)
                    visit(stmt.orelse, indices)
                elif isinstance(stmt, ast.For):
                    visit(stmt.body, indices + [stmt.target.id])
                elif isinstance(stmt, ast.While):
                    visit(stmt.body, indices)

        visit(self.core, [])
        return found

    def _undone_for_others(self, stmt: ast.stmt, needed: set[str]) -> bool:
        """Whether a write into memory other names share (``t3 = u[2:]``, then
        ``u[1:-1] = v``) must be undone for them: where the adjoint reads the value of one
        of them (a value it recorded, or holds, may be that memory). A name whose shape
        alone the adjoint reads needs nothing: a write into items keeps the shape and
        dtype of every view of them. Grows with ``needed`` and ``read_at``."""
        plan = self.plan
        if id(stmt) not in plan.shared_writes:
            return False
        others = plan.shared_with.get(id(stmt))
        if others is None or others & self._passed:  # (a callee's record may hold it)
            return True
        return any(
            n in needed and (n not in plan.read_at or plan.read_at[n] is None or plan.read_at[n])
            for n in others
        )

    def pushes(self, needed: set[str]) -> set[int]:
        """The assignments that must save the value they overwrite: those to a name the
        adjoint reads (``needed``) that may already hold a value there. A name saved
        where it may be unbound is bound to None at the start (``plan.preset``)."""
        plan = self.plan
        pushed: set[int] = set()
        preset: set[str] = set()

        def walk(block: list[ast.stmt], maybe: set[str], sure: set[str]) -> tuple[set, set]:
            maybe, sure = set(maybe), set(sure)  # (the caller's stay as they are)
            for stmt in block:
                if isinstance(stmt, ast.Assign):
                    v = assigned_name(stmt)
                    if (
                        (
                            (v in needed and self._read_later(v, stmt))
                            or self._undone_for_others(stmt, needed)
                        )
                        and v in maybe
                        and v not in self.facts.loop_indices
                        and v not in plan.invariant
                    ):
                        pushed.add(id(stmt))
                        if v not in sure:
                            preset.add(v)
                    maybe.add(v)
                    sure.add(v)
                elif isinstance(stmt, ast.If):
                    m1, s1 = walk(stmt.body, maybe, sure)
                    m2, s2 = walk(stmt.orelse, maybe, sure)
                    maybe, sure = m1 | m2, s1 & s2
                elif isinstance(stmt, (ast.For, ast.While)):
                    names = set(_assigned(stmt.body))
                    if isinstance(stmt, ast.For):
                        names.add(stmt.target.id)
                    inner = maybe | names  # what earlier iterations may have left
                    walk(stmt.body, inner, sure)
                    maybe = inner
            return maybe, sure

        params = set(self.params)
        _, plan.definite = walk(self.core, params, params)
        plan.preset = sorted(preset - params)
        return pushed


def _copied(places: dict[str, set[int] | None]) -> dict[str, set[int] | None]:
    return {v: None if w is None else set(w) for v, w in places.items()}


def _assigned(block: list[ast.stmt]) -> list[str]:
    return [
        n.id
        for stmt in block
        for n in nodes(stmt)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]


def _has_break(body: list[ast.stmt]) -> bool:
    return any(isinstance(s, ast.Break) for s in _same_loop(body))


def _same_loop(body: list[ast.stmt]):
    """The statements of a loop's body outside loops nested in it."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from _same_loop(stmt.body)
            yield from _same_loop(stmt.orelse)
