"""Calls to the user's functions in reverse mode: ``r = f(a)`` becomes ``r, r_rec =
f_fwd(a)`` in the primal sweep and ``a_bar += f_bwd(a, r_rec, r_bar)`` in the adjoint
sweep; and the value a function returns, kept apart from what the adjoint restores."""

from __future__ import annotations

import ast

from ....errors import UnsupportedSyntaxError
from ...analyze.facts import is_setitem, walk_block
from ...astwalk import copy_tree
from ..builder import assign, name
from ..forward import call_signature


class CallAdjoints:
    """Calls to user functions, and values returned to a caller.

    The methods of this class are part of ``_Reverse`` (:mod:`.sweeps`), whose state
    they read: ``facts``, ``norm``, ``builder``, ``plan`` (the :class:`TapePlan`),
    ``active``, and the emitter's own tables."""

    def _callee(self, stmt: ast.Assign) -> tuple[str, str, list[ast.Name]]:
        op = self.facts.ops[stmt]
        wrt, ranks, floats, active, statics = call_signature(op, self.facts)
        fwd, bwd = self.builder.callees.request(op.callee, "split", wrt, ranks, floats, statics)
        return fwd, bwd, active

    def _record(self, stmt: ast.Assign) -> str:
        if id(stmt) not in self.records:
            self.records[id(stmt)] = self.builder.namer.fresh(f"{stmt.targets[0].id}_rec")
        return self.records[id(stmt)]

    def _call_primal(self, stmt: ast.Assign, depth: int) -> list[ast.stmt]:
        """``r = f(a)`` becomes ``r, r_rec = f_fwd(a)``: value and the callee's record."""
        op = self.facts.ops[stmt]
        fwd, _, _ = self._callee(stmt)
        rec = self._record(stmt)
        targets = ast.Tuple(
            elts=[ast.Name(id=op.target, ctx=ast.Store()), ast.Name(id=rec, ctx=ast.Store())],
            ctx=ast.Store(),
        )
        call = ast.Call(func=name(fwd), args=[copy_tree(a) for a in op.call_args], keywords=[])
        out: list[ast.stmt] = [ast.Assign(targets=[targets], value=call)]
        if depth > 0:  # the record of each pass through the loop
            out.append(self._push(rec))
        return out

    def _call_adjoint(self, stmt: ast.Assign) -> list[ast.stmt]:
        """Adjoint of ``r = f(a, b)``: ``a_bar += f_bwd(a, b, r_rec, r_bar)``."""
        op = self.facts.ops[stmt]
        _, bwd, active = self._callee(stmt)
        rec = self._record(stmt)
        out: list[ast.stmt] = []
        if self.plan.depth[id(stmt)] > 0:
            out.append(self._pop(rec))
        args = [copy_tree(a) for a in op.call_args]
        call = ast.Call(
            func=name(bwd),
            args=[*args, name(rec), name(self.builder.adjoint(op.target))],
            keywords=[],
        )
        if len(active) == 1:
            out.append(self._accumulate(active[0].id, call))
            return out
        parts = [self.builder.namer.fresh(f"{a.id}_part") for a in active]
        unpack = ast.Tuple(elts=[ast.Name(id=p, ctx=ast.Store()) for p in parts], ctx=ast.Store())
        out.append(ast.Assign(targets=[unpack], value=call))
        for a, part in zip(active, parts):
            out.append(self._accumulate(a.id, name(part)))
        return out

    def _kept(
        self, value: ast.expr, body: list[ast.stmt], before: list[ast.stmt] | None = None
    ) -> ast.expr:
        """``value`` (a name the function returns to its caller), or a copy of it where
        the backward sweep restores, in place, memory it may share (``y[0] = y_old``
        would change it): the copy is taken in ``body`` before the adjoint statements
        ``before`` (or at its end)."""
        writes = [
            s for s, _ in walk_block(self.core) if is_setitem(s) and id(s) in self.plan.pushed
        ]
        aliases = self.facts.aliases
        if not (
            isinstance(value, ast.Name) and writes and aliases and aliases.ends_in(value.id, writes)
        ):
            return value
        if value.id in self.facts.sequences or self.facts.shape(value).rank is None:
            raise self.norm.parsed.locator.error(
                UnsupportedSyntaxError,
                self.norm.origin.get(self.norm.tree.body[-1], self.norm.tree.body[-1]),
                "srcgrad's reverse mode changes, in place, an array this function returns "
                "inside a list, tuple or dict (it restores what later lines overwrote); "
                "return a copy of that array (`y.copy()`) instead.",
            )
        kept = self.builder.namer.fresh(f"{value.id}_kept")
        where = body.index(before[0]) if before and before[0] in body else len(body)
        body.insert(where, assign(kept, self.builder.xp_call("copy", copy_tree(value))))
        return name(kept)
