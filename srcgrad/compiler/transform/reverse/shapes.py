"""Shapes the adjoint computes instead of recording the values they belong to:
``unbroadcast(g, u)`` and ``np.full_like(t, g)`` read only ``u``'s or ``t``'s shape."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

import numpy as np

from ...analyze.dtypes import INTEGER
from ...analyze.facts import is_setitem
from ...astwalk import copy_tree, loaded, nodes
from ..builder import assign, name


def plain_full_like(node: ast.AST) -> bool:
    """Whether ``node`` is ``np.full_like(x, value)``, with no shape or dtype given."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "full_like"
        and len(node.args) == 2
        and not node.keywords
    )


_MATMULS = (ast.MatMult, np.matmul)


def _number(node: ast.expr) -> bool:
    """An integer written as a number (``1``, ``-1``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


class _DefinedBefore:
    """The witness names defined before a position, produced as they are read (a
    witness is looked for only where a shape-only call needs one, and the first that
    fits ends the search: a list per statement made the pass quadratic)."""

    def __init__(self, table: list[tuple[str, int, bool]], position: int) -> None:
        self.table, self.position = table, position

    def __iter__(self) -> Iterator[str]:
        position = self.position
        return (n for n, last, _ in self.table if last < position)


class AdjointShapes:
    """Shape reads resolved from operands the adjoint has anyway.

    The methods of this class are part of ``_Reverse`` (:mod:`.sweeps`), whose state
    they read: ``facts``, ``norm``, ``builder``, ``plan`` (the :class:`TapePlan`),
    ``active``, and the emitter's own tables."""

    def _shape_only_seed(self, expr: ast.expr, stmt: ast.Assign) -> tuple[ast.expr, list[ast.stmt]]:
        """``np.full_like(t, g)`` (and ``np.size(t)``) read only the shape and dtype of a
        temporary: where that shape can be computed from operands the adjoint has anyway,
        read it off them, so the primal need not compute ``t`` (the value of
        ``np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + ...)`` is never needed for its
        gradient). The dtype comes from an active operand, as for other witnesses."""
        builder = self.builder
        before: list[ast.stmt] = []
        for node in nodes(expr):
            if not (
                plain_full_like(node)
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in self.norm.temps
                and node.args[0].id not in self.facts.complex  # (a float's dtype is not its)
            ):
                continue
            u = node.args[0].id
            shape = self._shape_of(u, stmt, depth=0, deep=True)
            if shape is None:
                continue
            leaves = [
                n.args[0].id
                for n in ast.walk(shape)  # (in order: the first leaf gives the dtype)
                if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "shape"
                and isinstance(n.args[0], ast.Name)
            ]
            active = [n for n in leaves if n in self.facts.proven_floats]  # (the dtype)
            if not active:
                continue
            sizes = [  # np.size(t): the product of that shape
                other
                for other in nodes(expr)
                if isinstance(other, ast.Call)
                and isinstance(other.func, ast.Attribute)
                and other.func.attr == "size"
                and len(other.args) == 1
                and isinstance(other.args[0], ast.Name)
                and other.args[0].id == u
            ]
            plain = (
                isinstance(shape, ast.Call)
                and isinstance(shape.func, ast.Attribute)
                and shape.func.attr == "shape"
            )
            if sizes and not plain:
                named = builder.namer.fresh("shape")  # computed once, read twice
                before.append(assign(named, shape))
                shape = name(named)
            node.args[0] = name(active[0])
            node.keywords = [ast.keyword(arg="shape", value=shape)]
            if builder.profile == "numba" and _shape_of_name(shape) == active[0]:
                node.keywords = []  # (numba's full_like takes no shape; it is the same)
            elif builder.profile == "numba":  # np.full(shape, g, t.dtype): numba's spelling
                node.func = ast.Attribute(value=name(builder.xp), attr="full", ctx=ast.Load())
                dtype = ast.Attribute(value=name(active[0]), attr="dtype", ctx=ast.Load())
                node.args = [copy_tree(shape), node.args[1], dtype]
                node.keywords = []
            for other in sizes:
                other.func = ast.Attribute(value=name(builder.math), attr="prod", ctx=ast.Load())
                other.args = [copy_tree(shape)]
        return expr, before

    def _resolve_shape_reads(self) -> None:
        """``unbroadcast(g, u)`` reads only the shape of ``u``. Where ``u`` would
        otherwise have to be recorded, compute its shape from operands the
        adjoint has anyway (``matmul_shape(np.shape(h), np.shape(W))``)."""
        for stmt, u in self.shape_reads:
            if u in self.plan.recompute:
                self.shapes[(id(stmt), u)] = self.builder.xp_call(
                    "shape", copy_tree(self.plan.recompute[u])
                )
                continue
            if self._unchanged(u, stmt, stmt):
                continue
            shape = self._shape_of(u, stmt, depth=0)
            if shape is None:
                self.plan.needed.add(u)
            else:
                self.shapes[(id(stmt), u)] = shape

    def _unchanged(self, n: str, since: ast.stmt, until: ast.stmt) -> bool:
        """Whether ``n`` holds, when ``until``'s adjoint runs, the value it had
        when ``since`` ran (``since`` at or before ``until``, in one block)."""
        if n in self.facts.loop_indices:
            return n in self.plan.loops_around.get(id(until), [])
        defs = self.facts.definitions.get(n, [])
        if not defs:
            return True  # a parameter never assigned, or a global
        start, end = self.plan.position[id(since)], self.plan.position[id(until)]
        if n in self.plan.needed:  # recorded: restored to its value just after `until`
            return all(not start < self.plan.position[id(d)] <= end for d, _ in defs)
        # not recorded: it keeps the last value it was given, so it must be given one
        # value only, before `since`, outside loops
        return len(defs) == 1 and defs[0][1] == 0 and self.plan.position[id(defs[0][0])] < start

    def _shape_of(self, u: str, at: ast.Assign, depth: int, deep: bool = False) -> ast.expr | None:
        """An expression for the shape ``u`` had, valid where ``at``'s adjoint runs.
        ``deep``: read the shapes of temporaries' operands rather than of the
        temporaries, where it can (so the temporaries need not be computed)."""
        if depth > 6:
            return None
        defs = self.facts.definitions.get(u, [])
        if len(defs) != 1 or not isinstance(defs[0][0], ast.Assign) or u in self.params:
            return None  # a parameter's first value comes from the caller
        definition = defs[0][0]
        if self.plan.blocks_of.get(id(definition)) != self.plan.blocks_of.get(id(at)):
            return None
        if self.plan.position[id(definition)] > self.plan.position[id(at)]:
            return None  # read before it is given a value: the previous iteration's
        op = self.facts.ops[definition]
        if op.rule is None or op.ctx is None:
            return None
        if op.key == "getitem":
            return self._view_shape(op, definition, at)
        shapes = []
        for param in op.rule.params:
            atom = op.args.get(param)
            if isinstance(atom, ast.Constant):
                shapes.append(ast.Tuple(elts=[], ctx=ast.Load()))
            elif isinstance(atom, ast.Name) and atom.id in self.plan.recompute:
                shapes.append(
                    self.builder.xp_call("shape", copy_tree(self.plan.recompute[atom.id]))
                )
            elif isinstance(atom, ast.Name) and self._unchanged(atom.id, definition, at):
                inner = None
                if deep and atom.id in self.norm.temps:
                    inner = self._shape_of(atom.id, at, depth + 1, deep)
                shapes.append(inner or self.builder.xp_call("shape", name(atom.id)))
            elif isinstance(atom, ast.Name):
                inner = self._shape_of(atom.id, at, depth + 1, deep)
                if inner is None:
                    return None
                shapes.append(inner)
            else:
                return None
        if op.rule.elementwise:
            return self._broadcast(shapes)
        if op.key in _MATMULS:
            return self.builder.call("matmul_shape", *shapes)
        return None

    def _view_shape(self, op, definition: ast.Assign, at: ast.Assign) -> ast.expr | None:
        """The shape of ``t = y[1:-1]`` (a basic index: slices and integers) where
        ``at``'s adjoint runs, taken again from ``y`` there (``np.shape(y[1:-1])``): ``y``
        keeps its shape as long as nothing but writes into its items changes it, and the
        index's names hold the values they had. So a view read only for its shape (the
        stencil's ``u[2:]``) is never recorded, and writes into ``y`` need no undoing
        for it."""
        x, index = op.args.get("x"), op.ctx.index
        if not isinstance(x, ast.Name) or index is None or not self._shape_kept(x.id, definition):
            return None
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        for p in parts:
            if isinstance(p, ast.Slice):
                bounds = [b for b in (p.lower, p.upper, p.step) if b is not None]
                if not all(_number(b) or self._integer(b) for b in bounds):
                    return None
            elif not (_number(p) or self._integer(p)):
                return None
        if not all(self._unchanged(n, definition, at) for n in loaded(index)):
            return None
        view = ast.Subscript(value=name(x.id), slice=copy_tree(index), ctx=ast.Load())
        return self.builder.xp_call("shape", view)

    def _integer(self, node: ast.expr) -> bool:
        """Whether ``node`` is a name holding an integer (a loop index, a counter)."""
        return (
            isinstance(node, ast.Name)
            and self.facts.shape(node).rank == 0
            and (
                node.id in self.facts.loop_indices or self.facts.dtype_kinds.get(node.id) == INTEGER
            )
        )

    def _shape_kept(self, y: str, since: ast.stmt) -> bool:
        """Whether the array ``y`` holds from ``since`` on arrays of one shape: it is
        given one value (a parameter's, or one assignment before ``since`` outside loops)
        and afterwards only writes into its items."""
        facts = self.facts
        if y in facts.sequences or y in facts.maybe_sequences or y in facts.loop_indices:
            return False
        defs = facts.definitions.get(y, [])
        bound = [(s, depth) for s, depth in defs if not is_setitem(s)]
        if y in self.params:
            return not bound
        return (
            len(bound) == 1
            and bound[0][1] == 0
            and self.plan.position[id(bound[0][0])] < self.plan.position[id(since)]
        )

    def _broadcast(self, shapes: list[ast.expr]) -> ast.expr:
        """``np.broadcast_shapes`` of ``shapes``, nested calls flattened, repeats and
        ``()`` left out."""
        flat: list[ast.expr] = []
        for s in shapes:
            if (
                isinstance(s, ast.Call)
                and isinstance(s.func, ast.Attribute)
                and s.func.attr == "broadcast_shapes"
            ):
                flat.extend(s.args)
            elif not (isinstance(s, ast.Tuple) and not s.elts):
                flat.append(s)
        unique: list[ast.expr] = []
        for s in flat:
            if all(ast.dump(s) != ast.dump(t) for t in unique):
                unique.append(s)
        if not unique:
            return ast.Tuple(elts=[], ctx=ast.Load())
        if len(unique) == 1:
            return unique[0]
        return self.builder.xp_call("broadcast_shapes", *unique)

    def _witnesses(self, stmt: ast.Assign) -> Iterable[str]:
        """Names whose shape may stand in for another's at ``stmt``: their value
        when its adjoint runs is the value they had when it ran."""
        if self._witness_facts is None:
            # per name, once: its last definition's position, whether it is defined at most
            # once and outside loops, and whether it is bound on every path (a parameter,
            # or defined by a statement outside any branch)
            top = {id(s) for s in self.norm.tree.body}
            table = []
            for n in self.named:
                defs = self.facts.definitions.get(n, [])
                last = max((self.plan.position[id(s)] for s, _ in defs), default=-1)
                once = len(defs) <= 1 and all(d == 0 for _, d in defs)
                if not defs or any(id(s) in top for s, _ in defs):
                    table.append((n, last, once))
            self._witness_facts = table
            self._in_loop_witnesses = [n for n, _, once in table if once]
        if self.plan.depth[id(stmt)] > 0:
            return self._in_loop_witnesses
        return _DefinedBefore(self._witness_facts, self.plan.position[id(stmt)])


def _shape_of_name(shape: ast.expr) -> str | None:
    """``x`` for ``np.shape(x)``, else None."""
    if (
        isinstance(shape, ast.Call)
        and isinstance(shape.func, ast.Attribute)
        and shape.func.attr == "shape"
        and len(shape.args) == 1
        and isinstance(shape.args[0], ast.Name)
    ):
        return shape.args[0].id
    return None
