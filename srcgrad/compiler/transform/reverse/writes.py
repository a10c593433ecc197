"""Adjoints of writes: ``y[i] = v`` into an array (repeated indices follow numpy: the
last write wins), and ``t = (a, b)`` and ``xs.append(v)`` into sequences."""

from __future__ import annotations

import ast

from ...analyze.indices import may_repeat, names_one_element
from ...astwalk import copy_tree
from ...optimize.in_place import as_index
from ..builder import add, assign, name
from .increments import Increment


def _index_value(index: ast.expr) -> ast.expr:
    """An index as a value to pass to a function: ``1:n`` is ``slice(1, n)``."""
    if isinstance(index, ast.Tuple):
        return ast.Tuple(elts=[_index_value(e) for e in index.elts], ctx=ast.Load())
    if isinstance(index, ast.Slice):
        parts = [p or ast.Constant(None) for p in (index.lower, index.upper, index.step)]
        return ast.Call(func=name("slice"), args=copy_tree(parts), keywords=[])
    return copy_tree(index)


def own_copy(v: str) -> ast.stmt:
    """``v = v.copy()``: an adjoint no other name refers to, to write into."""
    fresh = ast.Call(
        func=ast.Attribute(value=name(v), attr="copy", ctx=ast.Load()), args=[], keywords=[]
    )
    return assign(v, fresh)


class WriteAdjoints:
    """Adjoints of writes into arrays and sequences.

    The methods of this class are part of ``_Reverse`` (:mod:`.sweeps`), whose state
    they read: ``facts``, ``norm``, ``builder``, ``plan`` (the :class:`TapePlan`),
    ``active``, and the emitter's own tables."""

    def _setitem_adjoint(self, stmt: ast.Assign) -> list[ast.stmt]:
        """Adjoint of ``y[i] = v``: ``v`` gets ``y_bar[i]``, which then is zero (the
        old values there no longer reach the output); ``y[i]`` gets its old values back."""
        op = self.facts.ops[stmt]
        y, v = op.target, op.args["v"]
        index = op.ctx.index
        out: list[ast.stmt] = []
        increment = self.increments.get(id(stmt))
        if increment is not None:
            self._increment_adjoint(stmt, increment, out)
        elif y in self.active:
            self._comment_origin(stmt, out)
            y_bar = self.builder.adjoint(y)
            owner = self.owned.get(id(stmt))  # (the reversed loop that owns y_bar)
            if isinstance(v, ast.Name) and v.id in self.active:
                part = self._item_part(y, index, owner is not None)
                if may_repeat(index, self.facts):  # only the last write to an element counts
                    part = self.builder.call(
                        "kept_writes", name(y_bar), _index_value(self._index(index))
                    )
                shape = self.shapes.get((id(stmt), v.id))
                if self.facts.shape(v).rank == 0 and names_one_element(name(y), index, self.facts):
                    pass  # (a number into one item: nothing to sum)
                elif shape is not None:
                    part = self.builder.call("unbroadcast_to", part, shape)
                else:
                    part = self.builder.call("unbroadcast", part, name(v.id))
                    self.shape_reads.append((stmt, v.id))
                v_bar = self.builder.adjoint(v.id)
                out.append(assign(v_bar, add(name(v_bar), part)))
            if owner is None:  # y_bar may be another name's memory: zero in a copy
                out.append(own_copy(y_bar))
            else:
                self.copy_before.setdefault(owner, set()).add(y_bar)
            zero = ast.Subscript(value=name(y_bar), slice=self._index(index), ctx=ast.Store())
            out.append(ast.Assign(targets=[zero], value=ast.Constant(0.0)))
        if id(stmt) in self.plan.pushed:
            restore = ast.Subscript(value=name(y), slice=self._index(index), ctx=ast.Store())
            out.append(ast.Assign(targets=[restore], value=self._restored(stmt)))
        return out

    def _increment_adjoint(self, stmt: ast.Assign, increment: Increment, out: list) -> None:
        """Adjoint of ``y[i] += v`` (:mod:`.increments`): ``v`` gets ``y_bar[i]`` (summed
        to its shape), and ``y_bar`` stays as it is."""
        y = self.facts.ops[stmt].target
        self._comment_origin(stmt, out)
        v = increment.addend
        if not (isinstance(v, ast.Name) and v.id in self.active):
            return
        index = self.facts.ops[stmt].ctx.index
        owner = self.owned.get(id(stmt))
        if owner is not None:  # (reads of y's items in the loop add into y_bar in place)
            self.copy_before.setdefault(owner, set()).add(self.builder.adjoint(y))
        part = self._item_part(y, index, owner is not None)
        if increment.sign < 0:
            part = ast.UnaryOp(op=ast.USub(), operand=part)
        if not self.facts.fills(v, increment.total):
            part = self._unbroadcast(part, v.id, stmt)  # (read where this adjoint runs)
        out.append(self._accumulate(v.id, part))

    def _add_into_item(self, y: str, contribution: ast.expr) -> ast.stmt:
        """``y_bar[i] += g`` for the contribution ``index_adjoint(g, y, i)`` (a basic
        index names each element once); else ``y_bar = y_bar + contribution``."""
        c = contribution
        if not (
            isinstance(c, ast.Call)
            and isinstance(c.func, ast.Name)
            and c.func.id == self.builder.helpers["index_adjoint"]
            and len(c.args) == 3
        ):
            return self._accumulate(y, contribution)
        item = ast.Subscript(
            value=name(self.builder.adjoint(y)), slice=as_index(c.args[2]), ctx=ast.Store()
        )
        return ast.AugAssign(target=item, op=ast.Add(), value=c.args[0])

    def _index(self, index: ast.expr) -> ast.expr:
        """A write's index as the adjoint reads it: the names the plan computes again
        (``t4 = idx[i]``, ``t9 = i + 1``) replaced by what computes them, so the primal
        need not record them every trip."""
        return copy_tree(index, self.plan.recompute)

    def _item_part(self, y: str, index: ast.expr, owned: bool) -> ast.expr:
        """``y_bar[index]``; copied where a reversed loop owns ``y_bar`` (:mod:`.owned`)
        and the item may be a view, which zeroing items in place would change."""
        part: ast.expr = ast.Subscript(
            value=name(self.builder.adjoint(y)), slice=self._index(index), ctx=ast.Load()
        )
        if owned and not names_one_element(name(y), index, self.facts, loop_indices=True):
            # (y_bar is an array: its method keeps an item a number, and a copy read
            # only before any zeroing goes again, drop_read_only_copies)
            method = ast.Attribute(value=part, attr="copy", ctx=ast.Load())
            part = ast.Call(func=method, args=[], keywords=[])
        return part

    def _sequence_adjoint(self, stmt: ast.stmt) -> list[ast.stmt]:
        """Adjoints of ``t = (a, b)`` (each element its part) and ``xs.append(v)``
        (``v`` gets the last adjoint, which leaves the list; so does the value)."""
        op = self.facts.ops[stmt]
        out: list[ast.stmt] = []
        g = name(self.builder.adjoint(op.target))
        active = op.target in self.active
        if active:
            self._comment_origin(stmt, out)
        if op.key == "pack" and active:
            for k, atom in enumerate(stmt.value.elts):
                if isinstance(atom, ast.Name) and atom.id in self.active:
                    part = ast.Subscript(value=copy_tree(g), slice=ast.Constant(k), ctx=ast.Load())
                    out.append(self._accumulate(atom.id, part))
        elif op.key == "append":
            if active:
                last = ast.Call(
                    func=ast.Attribute(value=g, attr="pop", ctx=ast.Load()), args=[], keywords=[]
                )
                v = op.args["v"]
                if isinstance(v, ast.Name) and v.id in self.active:
                    out.append(self._accumulate(v.id, last))
                else:
                    out.append(ast.Expr(value=last))
            if op.target in self.plan.needed or id(stmt) in self.plan.shared_writes:  # as it was
                shrink = ast.Attribute(value=name(op.target), attr="pop", ctx=ast.Load())
                out.append(ast.Expr(value=ast.Call(func=shrink, args=[], keywords=[])))
        if op.key == "pack" and id(stmt) in self.plan.pushed:
            out.append(assign(op.target, self._restored(stmt)))
        v = op.target
        if (
            op.key == "pack"
            and active
            and v not in self.plan.simple
            and v not in self.plan.borrowed
        ):
            # the older value's adjoint starts at zero (a tuple, or what else it held)
            out.append(self._zero(v, maybe_unbound=v not in self.facts.sequences))
        return out
