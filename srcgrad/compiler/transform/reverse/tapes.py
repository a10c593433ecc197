"""Reverse mode's tape: what the primal sweep saves for the adjoint (on a tape in loops,
in a variable outside them; in the numba profile, one tape per key, or an array indexed by
the loop's index), where the adjoint gets it back, and the loops' trip counters."""

from __future__ import annotations

import ast

from ...analyze.facts import assigned_name
from ...astwalk import copy_tree
from ..builder import assign, name


class TapeSaves:
    """Saves and restores, tapes and trip counters.

    The methods of this class are part of ``_Reverse`` (:mod:`.sweeps`), whose state
    they read: ``facts``, ``builder``, ``plan`` (the :class:`TapePlan`), ``tape``,
    ``tapes``, ``indexed_tapes``, ``allocations``, ``saves``, ``counters`` and
    ``loops_around``."""

    def _push(self, v: str) -> ast.stmt:
        return self._push_value(name(v), v)

    def _save(self, stmt: ast.stmt, value: ast.expr, depth: int) -> ast.stmt:
        """Keep ``value`` for the adjoint: on the tape inside loops, where the
        statement runs many times; in a variable of its own outside them."""
        loop = self._indexed(stmt)
        if depth > 0 and loop is not None:  # (numba profile: tape[i] = x)
            tape = self._tape(id(stmt))
            self.indexed_tapes.add(tape)
            size = _call("len", copy_tree(loop.iter))
            allocated = self.allocations.setdefault(id(loop), [])
            if all(a.targets[0].id != tape for a in allocated):  # type: ignore[attr-defined]
                allocated.append(assign(tape, self.builder.xp_call("empty", size)))
            where = ast.Subscript(value=name(tape), slice=copy_tree(loop.target), ctx=ast.Store())
            return ast.Assign(targets=[where], value=value)
        if depth > 0:
            return self._push_value(value, id(stmt))
        return assign(self._save_name(stmt), value)

    def _indexed(self, stmt: ast.stmt) -> ast.For | None:
        """In the numba profile, for a float that ``stmt`` overwrites in a loop run
        once, over ``range(n)``, with an index nothing else assigns: the loop, and an array
        tape (allocated before the loop, ``np.empty(len(t1))``) written and read at the
        loop's index, so that the backward loop, over the same indices, reads the value
        of its own trip: the loop, or None (a list tape)."""
        if self.builder.profile != "numba" or not isinstance(stmt, ast.Assign):
            return None
        around = self.loops_around.get(id(stmt), [])
        target = stmt.targets[0]
        if len(around) != 1 or not isinstance(target, ast.Name):
            return None
        loop = around[0]
        if not (
            isinstance(loop, ast.For)
            and isinstance(loop.target, ast.Name)
            and self._plain_range(loop.iter)
            and all(d is loop for d, _ in self.facts.definitions.get(loop.target.id, []))
            and self.facts.shape(target).rank == 0
            and target.id in self.facts.proven_floats
        ):
            return None
        return loop

    def _save_name(self, stmt: ast.stmt) -> str:
        if id(stmt) not in self.saves:
            self.saves[id(stmt)] = self.builder.namer.fresh(f"{assigned_name(stmt)}_old")
        return self.saves[id(stmt)]

    def _restored(self, stmt: ast.stmt) -> ast.expr:
        """Where the adjoint gets back what ``_save`` kept for ``stmt`` (or, for a step
        of a counter, which saves nothing, the step undone: ``i - 1``)."""
        if id(stmt) in self.plan.stepped:
            return copy_tree(self.plan.stepped[id(stmt)])
        loop = self._indexed(stmt)
        if self.plan.depth[id(stmt)] > 0 and loop is not None:
            tape = self._tape(id(stmt))
            self.indexed_tapes.add(tape)
            return ast.Subscript(value=name(tape), slice=copy_tree(loop.target), ctx=ast.Load())
        if self.plan.depth[id(stmt)] > 0:
            pop = ast.Attribute(value=name(self._tape(id(stmt))), attr="pop", ctx=ast.Load())
            return ast.Call(func=pop, args=[], keywords=[])
        return name(self._save_name(stmt))

    def _push_value(self, value: ast.expr, key: str | int) -> ast.stmt:
        push = ast.Attribute(value=name(self._tape(key)), attr="append", ctx=ast.Load())
        return ast.Expr(value=ast.Call(func=push, args=[value], keywords=[]))

    def _pop(self, v: str) -> ast.stmt:
        pop = ast.Attribute(value=name(self._tape(v)), attr="pop", ctx=ast.Load())
        return assign(v, ast.Call(func=pop, args=[], keywords=[]))

    def _tape(self, key: str | int) -> str:
        """The tape the values of ``key`` go on (a name pushed, or the id of a statement
        whose value is saved): one tape for all; in the numba profile, one for each key,
        whose values have one type (numba types a list by its first append)."""
        if self.builder.profile != "numba":
            if not self.tape:
                self.tape = self.builder.namer.fresh("tape")
            return self.tape
        if key not in self.tapes:
            label = key if isinstance(key, str) else self._saved_name(key)
            self.tapes[key] = self.builder.namer.fresh(f"{label}_tape")
        return self.tapes[key]

    def _saved_name(self, key: int) -> str:
        """The name the statement of id ``key`` assigns or writes into, for its tape."""
        for stmt in self.facts.ops:
            if id(stmt) == key:
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) else None
                while isinstance(target, ast.Subscript):
                    target = target.value
                if isinstance(target, ast.Name):
                    return target.id
        return "saved"

    def _counter(self, loop: ast.stmt) -> str | None:
        if id(loop) in self.plan.counted:
            if id(loop) not in self.counters:
                self.counters[id(loop)] = self.builder.namer.fresh("trips")
            return self.counters[id(loop)]
        return None


def _call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=name(func), args=list(args), keywords=[])
