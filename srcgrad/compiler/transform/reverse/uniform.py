"""Adjoints equal in every element (``np.sum(t)``'s gradient is ``g`` everywhere), held
as one scalar until an operation needs the array."""

from __future__ import annotations

import ast
import dataclasses
from collections import Counter

from ....rules import instantiate
from ...analyze.facts import blocks_of, walk_block
from ...astwalk import copy_tree, nodes
from ..builder import assign, name
from .reads import uses
from .shapes import plain_full_like


class UniformAdjoints:
    """Adjoints held as one scalar standing for every element.

    The methods of this class are part of ``_Reverse`` (:mod:`.sweeps`), whose state
    they read: ``facts``, ``norm``, ``builder``, ``plan`` (the :class:`TapePlan`),
    ``active``, and the emitter's own tables."""

    def _uniform_candidates(self) -> set[str]:
        """Temporaries whose adjoint may be held as one scalar standing for every element
        (``np.sum(t)``'s gradient is ``g`` everywhere): given once, read once, in the
        same block (at the top level, or in one loop trip: ``s = s + np.sum(w * X[i])``),
        by an elementwise operation, so the scalar reaches that operation's adjoint, in
        the same block of the adjoint, and nothing else."""
        reads: dict[str, int] = {}
        read_in: dict[str, int] = {}  # the block (by id) of a name's last read
        blocks = {id(s): id(self.norm.tree.body) for s in self.norm.tree.body}
        for stmt, _ in walk_block(self.core):
            for block in blocks_of(stmt):
                blocks.update({id(s): id(block) for s in block})
            for n in uses(stmt):
                reads[n] = reads.get(n, 0) + 1
                read_in[n] = blocks.get(id(stmt), -1)
        for n in uses(self.norm.tree.body[-1]):
            reads[n] = reads.get(n, 0) + 1
            read_in[n] = id(self.norm.tree.body)
        out = set()
        complex_ops = {  # (a scalar standing for a complex adjoint, or a real one's of one)
            name
            for op in self.facts.ops.values()
            if op.target in self.facts.complex
            for name in [op.target, *(a.id for a in op.args.values() if isinstance(a, ast.Name))]
        }
        for v in (self.norm.temps & self.active & self.plan.simple) - complex_ops:
            defs = self.facts.definitions.get(v, [])
            if len(defs) != 1 or reads.get(v) != 1:
                continue
            if blocks.get(id(defs[0][0]), -2) != read_in.get(v):
                continue
            op = self.facts.ops.get(defs[0][0])
            if op and op.rule and op.rule.elementwise and op.ctx and op.call_args is None:
                out.add(v)
        return out

    def _spreads_uniformly(self, contribution: ast.expr, u: str) -> ast.expr | None:
        """The scalar ``s`` where ``contribution`` to ``u``'s adjoint is ``np.full_like(x,
        s)`` and ``u`` may hold it as a scalar (:meth:`_uniform_candidates`)."""
        if u not in self.uniform_ok:
            return None
        c = contribution
        if not (plain_full_like(c) and self._scalar(c.args[1])):
            return None
        return c.args[1]

    def _scalar(self, expr: ast.expr) -> bool:
        """Whether ``expr`` is provably a scalar: constants, names of rank 0, sizes."""
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, (int, float))
        if isinstance(expr, ast.Name):
            if expr.id in self.levels:
                return True
            v = self.builder.primal_of.get(expr.id, expr.id)
            return self.facts.shape(ast.Name(id=v)).rank == 0
        if isinstance(expr, ast.BinOp):
            return self._scalar(expr.left) and self._scalar(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return self._scalar(expr.operand)
        if isinstance(expr, ast.BoolOp):  # (np.size(x) or 1)
            return all(self._scalar(v) for v in expr.values)
        return (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("size", "prod")
            and not expr.keywords
            and len(expr.args) == 1
        )

    def _frozen(self, expr: ast.expr, stmt: ast.Assign, out: list[ast.stmt]) -> ast.expr:
        """``expr`` (a scalar), or a new name given its value now (at ``stmt``'s
        adjoint): names it reads may change before the adjoint that reads it runs."""
        if isinstance(expr, ast.Constant):
            return expr
        level = self.builder.namer.fresh("level")
        self.levels.add(level)
        out.append(assign(level, self.builder.with_witnesses(expr, self._witnesses(stmt))))
        return name(level)

    def _uniform_contributions(
        self, stmt: ast.Assign, args: dict[str, ast.expr], level: ast.expr, out: list[ast.stmt]
    ) -> tuple[dict[str, ast.expr], bool]:
        """The contributions of ``stmt``'s elementwise adjoint that may read the scalar
        ``level`` its result's adjoint is in every element, and whether all may (if not,
        the others read it as an array). A contribution that reads an operand with the
        result's shape (or the result) has that shape with the scalar too; one that
        reads only scalars is passed on as its operand's uniform adjoint, where the
        operand has the result's shape and may hold one (:meth:`_uniform_candidates`)."""
        facts, builder = self.facts, self.builder
        op = facts.ops[stmt]
        full = {op.target} | {
            a.id for a in op.args.values() if isinstance(a, ast.Name) and facts.fills(a, stmt)
        }
        planned: dict[str, ast.expr] = {}
        passed: dict[str, ast.expr] = {}
        whole = True
        for param, atom in op.diff_args:
            if not (isinstance(atom, ast.Name) and atom.id in self.active):
                continue
            symbols = builder.symbols(copy_tree(level), op.target)
            ctx = dataclasses.replace(op.ctx, args=args, param=param, symbols=symbols)
            contribution = instantiate(op.rule.vjp[param], ctx)
            # (what it reads of the operands as named, before any is computed again:
            # ``X[i]`` recomputed still has the shape of the ``t = X[i]`` that fills)
            named = instantiate(op.rule.vjp[param], dataclasses.replace(ctx, args=op.ctx.args))
            read = {
                builder.primal_of.get(n.id, n.id)
                for n in [*nodes(contribution), *nodes(named)]
                if isinstance(n, ast.Name)
            }
            if read & full:
                planned[param] = contribution
            elif (
                self._scalar(contribution)
                and atom.id in full
                and atom.id in self.uniform_ok
                and atom.id not in passed
            ):
                passed[atom.id] = contribution
            else:
                whole = False
        reads = Counter(a.id for _, a in op.diff_args if isinstance(a, ast.Name))
        for u, contribution in passed.items():
            if reads[u] == 1:  # (x * x: one form for both of x's adjoints)
                self.uniform[u] = self._frozen(contribution, stmt, out)
            else:
                whole = False
        return planned, whole
