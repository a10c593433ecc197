"""The derivative function around reverse mode's two sweeps: the names bound before the
primal runs (in the numba profile, to values of the type each will hold), the value's
checks after it, and what each kind of derivative returns."""

from __future__ import annotations

import ast

from ...analyze.checks import check_real_output
from ...analyze.dtypes import INTEGER
from ...astwalk import copy_tree
from ..builder import assign, marker, name
from .recompute import recomputed


class DerivativeFunction:
    """The function: presets, the sweeps, checks, the seed and the result.

    The methods of this class are part of ``_Reverse`` (:mod:`.sweeps`), whose state
    they read: ``facts``, ``norm``, ``builder``, ``plan`` (the :class:`TapePlan`),
    ``active``, ``wrt``, ``params``, and the emitter's own tables."""

    def function(self, kind: str) -> ast.FunctionDef:
        """The derivative function: presets, the primal sweep, the value's checks, the
        adjoints' starts and the seed, the adjoint sweep, and what ``kind`` returns."""
        facts, builder, norm = self.facts, self.builder, self.norm
        self.last_origin = None
        self.uniform = {}
        primal = self._primal(self.core, 0)
        out = facts.returned
        out_active = isinstance(out, ast.Name) and out.id in self.active
        if isinstance(out, ast.Name):
            seed_name = builder.adjoint(out.id)
        else:
            seed_name = builder.namer.fresh("out_bar")
        body: list[ast.stmt] = []
        unbound = self._presets(body)
        body.extend(primal)
        out = self._value_checks(kind, out, seed_name, body)
        after_primal = len(body)
        top = norm.tree.body
        for v in self.wrt + sorted(self.active - set(self.wrt)):
            if self.plan.home.get(v) == id(top) and v != getattr(facts.returned, "id", None):
                body.append(self._zero(v, maybe_unbound=v in unbound))
        if kind in ("grad", "value_and_grad") and out_active:
            body.append(assign(seed_name, ast.Constant(1.0)))
        adjoint, _ = self._adjoint(self.core, top, 0)
        if kind == "value_and_grad" and _restores(adjoint, out):
            # (a parameter given a new value in a loop, `s = -s / d`, is popped back to
            # the caller's argument by the adjoint: its value is kept before that)
            value = builder.namer.fresh(f"{out.id}_value")
            body.insert(after_primal, assign(value, name(out.id)))
            out = name(value)
        if kind == "split":  # (what the record need not hold)
            adjoint = recomputed(adjoint, norm, facts)
        body.extend(adjoint)
        for tape in sorted(set(self.tapes.values()) - self.indexed_tapes, reverse=True):
            body.insert(0, assign(tape, ast.List(elts=[], ctx=ast.Load())))
        if self.tape:
            body.insert(0, assign(self.tape, ast.List(elts=[], ctx=ast.Load())))
        body.append(ast.Return(value=self._result(kind, out, out_active, body, adjoint)))
        extra = [seed_name] if kind in ("vjp", "split") else []
        return builder.function(f"{kind}_{norm.tree.name}", self.params + extra, body)

    def _presets(self, body: list[ast.stmt]) -> list[str]:
        """Names the sweeps need bound before the primal runs (saved where they may be
        unbound, trip counters pushed in loops, adjoints of names some paths never
        assign): bound in ``body``. Returns those last names."""
        body.extend(assign(v, self._preset(v)) for v in self.plan.preset)
        body.extend(assign(c, ast.Constant(0)) for c in sorted(self.counter_presets))
        top = self.norm.tree.body
        unbound = [
            v
            for v in sorted(self.active - set(self.params) - self.plan.definite)
            if self.plan.home.get(v) == id(top) and v not in self.plan.preset
        ]
        body.extend(assign(v, self._preset(v)) for v in unbound)
        return unbound

    def _preset(self, v: str) -> ast.expr:
        """What ``v`` is bound to before the primal runs: None; in the numba profile, a
        value of the type ``v`` will hold (numba types each name once, and a None beside
        a float is an optional that arithmetic and tapes refuse): ``0.0`` for a float,
        ``0`` for an integer, an empty float array of ``v``'s rank; None where the
        analysis cannot tell (numba then refuses the code, at the user's line)."""
        if self.builder.profile != "numba":
            return ast.Constant(None)
        rank = self.facts.shape(name(v)).rank
        kind = self.facts.dtype_kinds.get(v)
        if rank == 0 and v in self.facts.proven_floats:
            return ast.Constant(0.0)
        if (rank == 0 and kind == INTEGER) or self._range_item(v):
            return ast.Constant(0)
        if self._boolean(v):  # (a branch's direction)
            return ast.Constant(False)
        if rank and (v in self.facts.proven_floats or self._mask(v)):
            zeros = ast.Tuple(elts=[ast.Constant(0)] * rank, ctx=ast.Load())
            empty = self.builder.xp_call("empty", zeros)
            if v not in self.facts.proven_floats:  # (a mask: an empty bool array)
                bool_ = ast.Attribute(value=name(self.builder.xp), attr="bool_", ctx=ast.Load())
                empty.keywords.append(ast.keyword(arg="dtype", value=bool_))
            return empty
        return ast.Constant(None)

    def _mask(self, v: str) -> bool:
        """Whether every definition of ``v`` is a comparison (``x > 0``): a bool array
        where ``v`` has a rank (the numba profile presets it to an empty bool array)."""
        defs = self.facts.definitions.get(v, [])
        return bool(defs) and all(
            isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Compare) for stmt, _ in defs
        )

    def _range_item(self, v: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether every definition of ``v`` is an item of a range (``t4 = t1[i_1]``, as
        normalize writes ``for i, x in enumerate(xs)``) or a copy of one (``i = t4``)."""
        defs = self.facts.definitions.get(v, [])

        def item(stmt: ast.stmt) -> bool:
            if not isinstance(stmt, ast.Assign):
                return False
            value = stmt.value
            if isinstance(value, ast.Name):
                return value.id not in seen and self._range_item(value.id, seen | {v})
            return (
                isinstance(value, ast.Subscript)
                and not isinstance(value.slice, ast.Slice)
                and self._plain_range(value.value, any_range=True)
            )

        return bool(defs) and all(item(stmt) for stmt, _ in defs)

    def _boolean(self, v: str) -> bool:
        """Whether every definition of ``v`` gives a Python bool (``not a``, ``a < b`` of
        numbers, ``True``)."""
        defs = self.facts.definitions.get(v, [])

        def gives_bool(stmt: ast.stmt) -> bool:
            if not isinstance(stmt, ast.Assign):
                return False
            value = stmt.value
            if isinstance(value, ast.Constant):
                return isinstance(value.value, bool)
            if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
                return True
            return isinstance(value, ast.Compare) and all(
                self.facts.shape(a).rank == 0 for a in (value.left, *value.comparators)
            )

        return bool(defs) and all(gives_bool(stmt) for stmt, _ in defs)

    def _value_checks(
        self, kind: str, out: ast.expr, seed_name: str, body: list[ast.stmt]
    ) -> ast.expr:
        """After the primal sweep: the value kept where the adjoint would change it, and
        the checks of ``kind`` (a scalar for a gradient, a cotangent like the value for
        a vjp). Returns the value to return."""
        facts, builder = self.facts, self.builder
        if kind != "split":
            check_real_output(self.norm, facts, out, kind)
        if (
            kind == "value_and_grad"
            and isinstance(out, ast.Name)
            and len(facts.definitions.get(out.id, [])) > 1
        ):  # before the adjoint restores older values
            value = builder.namer.fresh(f"{out.id}_value")
            body.append(assign(value, name(out.id)))
            out = name(value)
        if kind in ("grad", "value_and_grad") and facts.shape(out).rank is None:
            body.append(ast.Expr(value=builder.call("check_scalar", copy_tree(out))))
        if kind == "vjp":
            check = builder.call("check_cotangent", name(seed_name), copy_tree(out))
            body.append(ast.Expr(value=check))
        if kind == "split":  # the value the caller gets: not changed by the adjoint's restores
            body.append(marker(self._kept(copy_tree(out), body)))
        return out

    def _result(
        self,
        kind: str,
        out: ast.expr,
        out_active: bool,
        body: list[ast.stmt],
        adjoint: list[ast.stmt],
    ) -> ast.expr:
        """What the function returns: the gradients (zeros for an inactive ``wrt``), with
        the value and ``has_aux``'s auxiliary value as ``kind`` asks."""
        builder = self.builder
        grads: list[ast.expr] = []
        for w in self.wrt:
            if w in self.active or (out_active and w == out.id):
                grads.append(name(builder.adjoint(w)))
            else:
                grads.append(builder.xp_call("zeros_like", name(w)))
        result: ast.expr = grads[0] if len(grads) == 1 else ast.Tuple(elts=grads, ctx=ast.Load())
        value: ast.expr = copy_tree(out)
        if self.norm.aux is not None:  # has_aux: (value, aux) and (gradient, aux)
            aux = self._kept(name(self.norm.aux), body, before=adjoint)
            value = ast.Tuple(elts=[value, aux], ctx=ast.Load())
            if kind == "grad":
                result = ast.Tuple(elts=[result, copy_tree(aux)], ctx=ast.Load())
        if kind == "value_and_grad":
            result = ast.Tuple(elts=[value, result], ctx=ast.Load())
        return result


def _restores(adjoint: list[ast.stmt], out: ast.expr) -> bool:
    """Whether the adjoint sweep gives the returned name ``out`` a value (restores it)."""
    if not isinstance(out, ast.Name):
        return False
    return any(
        isinstance(node, ast.Name) and node.id == out.id and isinstance(node.ctx, ast.Store)
        for stmt in adjoint
        for node in ast.walk(stmt)
    )
