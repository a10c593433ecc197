"""What the tape plan never records: cheap views (``xs[t]``) and index arithmetic
(``i - 1``) the adjoint computes again, containers whose adjoint is borrowed from the outer
one's (``layer_bar = layers_bar[i]``), and names every trip of their loop computes
alike."""

from __future__ import annotations

import ast

from ...analyze.facts import is_setitem, walk_block
from ...astwalk import copy_tree
from .exits import before_steps, scalar_of_views
from .reads import loads, uses


class Rematerializing:
    """Values recomputed, borrowed or invariant instead of recorded.

    The methods of this class are part of :class:`~.tape_plan.TapePlanner`, whose state
    they read: ``norm``, ``facts``, ``params``, ``core``, ``plan`` (the parts of the
    :class:`~.tape_plan.TapePlan` fixed before them) and ``_top_index``."""

    def _rematerializable(self) -> dict[str, ast.expr]:
        """Temporaries that are cheap views of values that do not change before
        their adjoint runs (``t2 = xs[t]`` in a loop over ``t``): the adjoint
        recomputes them instead of recording them."""
        loops = self.plan.loops_around
        out: dict[str, ast.expr] = {}
        readers: dict[str, list[ast.stmt]] = {}
        for stmt, _ in walk_block(self.core):
            for n in uses(stmt):
                readers.setdefault(n, []).append(stmt)
        returned = set(uses(self.norm.tree.body[-1]))
        for v, defs in self.facts.definitions.items():  # in program order
            if len(defs) != 1:
                continue
            stmt = defs[0][0]
            if not isinstance(stmt, ast.Assign) or not isinstance(stmt.targets[0], ast.Name):
                continue
            if v not in self.norm.temps and not self._read_in_its_trip(v, stmt, readers, returned):
                continue
            value = stmt.value
            if not (
                isinstance(value, ast.Subscript)
                or (isinstance(value, ast.Attribute) and value.attr == "T")
                or self._index_arithmetic(value)
                or scalar_of_views(v, stmt, out, self.facts, self.norm.temps)
            ):
                continue
            if self._stable(value, stmt, loops, out) and (
                self.plan.home.get(v, id(self.norm.tree.body)) is not None
            ):
                whole = copy_tree(value, out)  # (with the views it reads substituted)
                steps = loads([whole]) & self.plan.counters
                if steps and not before_steps(v, stmt, steps, readers, self.plan):
                    continue
                written = {
                    n for n in loads([value]) if self._items_written(n, value, stmt)
                }  # (read where nothing writes into them between: see _items_written)
                if written and not before_steps(v, stmt, written, readers, self.plan):
                    continue
                out[v] = whole
        return out

    def _index_arithmetic(self, value: ast.expr) -> bool:
        """Whether ``value`` is integer arithmetic (``+ - * // %``) on numbers, loop
        indices that are numbers and counters (``i - 1``): cheaper to compute again than
        to record."""
        if isinstance(value, ast.BinOp):
            return isinstance(value.op, _INDEX_OPS) and all(
                self._index_arithmetic(v) for v in (value.left, value.right)
            )
        if isinstance(value, ast.Constant):
            return type(value.value) is int
        return isinstance(value, ast.Name) and (
            (value.id in self.facts.loop_indices and self.facts.shape(value).rank == 0)
            or value.id in self.plan.counters  # (see exits.before_steps)
        )

    def _stable(
        self, value: ast.expr, stmt: ast.stmt, loops: dict[int, list[str]], views: dict
    ) -> bool:
        """Whether every name ``value`` reads holds, when the adjoint of ``stmt`` runs,
        the value it had when ``stmt`` ran."""
        stable = True
        for n in loads([value]):
            n_defs = self.facts.definitions.get(n, [])
            if n in self.facts.loop_indices:
                stable = stable and n in loops.get(id(stmt), [])
            elif n in views:  # a view of a view (layers[i]["W"])
                continue
            elif n in self.plan.counters:  # (see exits.before_steps)
                continue
            elif self._items_written(n, value, stmt):
                continue
            elif len(n_defs) > 1 or any(depth > 0 for _, depth in n_defs):
                stable = False
        return stable

    def _items_written(self, n: str, value: ast.expr, stmt: ast.stmt) -> bool:
        """Whether ``value`` is a view ``n[...]`` of an array given one value before
        ``stmt`` (outside loops) and afterwards only writes into its items (``u[1:-1] =
        v``, the stencil's). Where every read of the view comes after ``stmt`` in its
        block with no write into ``n`` between (the caller checks: ``before_steps``),
        ``n[...]`` read again where the adjoint reads the view is a read of ``n``'s
        value there, which the tape plan keeps right as it keeps every read's: a write
        after it is undone before that adjoint runs. So the view is taken again, never
        recorded (a view recorded would see later writes into ``n``, and code holding
        it could not be differentiated again)."""
        facts = self.facts
        if not (
            isinstance(value, ast.Subscript)
            and isinstance(value.value, ast.Name)
            and value.value.id == n
            and n not in facts.sequences
            and n not in facts.maybe_sequences
            and n not in loads([value.slice])
        ):
            return False
        parts = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
        rank = facts.shape(value.value).rank
        if not any(isinstance(p, ast.Slice) for p in parts) and not (
            rank is not None and rank > len(parts)
        ):
            return False  # an element (a number, a copy): recorded as cheaply
        defs = facts.definitions.get(n, [])
        bound = [(s, depth) for s, depth in defs if not is_setitem(s)]
        if n in self.params:
            return False  # (never written into: srcgrad refuses writes into arguments)
        return (
            len(bound) == 1
            and len(defs) > 1
            and bound[0][1] == 0
            and self.plan.position[id(bound[0][0])] < self.plan.position[id(stmt)]
        )

    def _borrowed(self) -> dict[str, tuple[str, ast.expr]]:
        """Containers read out of a container (``layer = layers[i]``, a view read again
        in the backward loop) whose adjoint may start as the element's adjoint in the
        outer one (``layer_bar = layers_bar[i]``) and be put back (``set_at``) instead of
        starting at zeros and being added: nothing else gives ``layers`` an adjoint."""
        out: dict[str, tuple[str, ast.expr]] = {}
        active = self.facts.active
        for v in self.plan.recompute:
            (stmt, _), *rest = self.facts.definitions[v]
            value = stmt.value
            if (
                rest
                or not isinstance(value, ast.Subscript)
                or not isinstance(value.value, ast.Name)
            ):
                continue
            root = value.value.id
            if not {v, root} <= active & self.facts.sequences:
                continue
            if self.plan.home.get(v) != self.plan.blocks_of.get(id(stmt)):
                continue
            others = [
                op
                for s, op in self.facts.ops.items()
                if s is not stmt
                and any(isinstance(a, ast.Name) and a.id == root for _, a in op.diff_args)
            ]
            if not others:
                out[v] = (root, value.slice)
        return out

    def _read_in_its_trip(
        self, v: str, stmt: ast.stmt, readers: dict[str, list[ast.stmt]], returned: set[str]
    ) -> bool:
        """Whether every read of ``v`` (a user's variable) comes after its one definition
        ``stmt`` in the same block: its value is then the one that definition gave in
        the same trip of the loops around it, so a view may be taken again there."""
        if v in returned or v in self.params:
            return False
        if id(stmt) not in self.plan.blocks_of:
            return False
        bid = self.plan.blocks_of[id(stmt)]
        if bid not in self._top_index:  # each statement in the block's tree: its top's index
            block = self.plan.blocks[bid]
            self._top_index[bid] = {
                id(s): k for k, top in enumerate(block) for s, _ in walk_block([top])
            }
        where = self._top_index[bid]
        k = where[id(stmt)]
        return all(where.get(id(r), -1) > k for r in readers.get(v, []))

    def _invariant(self) -> set[str]:
        """Names (not parameters) defined once, inside a loop, by a primitive (a
        rule-backed operation) of values no loop changes (``t = -k``): every trip
        computes the same value, so the value the loop leaves is the one each adjoint
        trip needs, and nothing is recorded."""
        defs = self.facts.definitions
        out: set[str] = set()

        def stable(n: str) -> bool:  # (given its value outside every loop, or invariant)
            if n in out:
                return True
            return n not in self.facts.loop_indices and all(d == 0 for _, d in defs.get(n, []))

        for v, v_defs in defs.items():  # (in program order: an operand's before its use)
            if len(v_defs) != 1 or v_defs[0][1] == 0 or not isinstance(v_defs[0][0], ast.Assign):
                continue
            if v in self.params:  # its value before the loop (the argument) may be read
                continue
            stmt = v_defs[0][0]
            op = self.facts.ops.get(stmt)
            if op is None or op.rule is None or op.key == "setitem" or op.ctx is None:
                continue
            if all(stable(n) and len(defs.get(n, [])) <= 1 for n in loads([stmt.value])):
                out.add(v)
        return out


_INDEX_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
