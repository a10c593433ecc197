"""Part of normalize: what a ``for`` loop iterates over. :class:`_Iteration` lowers the
iterable of ``for target in iterable`` to a name holding a range and the item at each
index (``for row in X`` is ``for i in range(len(X)): row = X[i]``): ranges, ``reversed``,
``enumerate``, ``zip``, lists, arrays and dicts."""

from __future__ import annotations

import ast
import builtins
from typing import Any

from .expression_helpers import _copy, _static_value
from .expressions import _Expressions


class _Iteration(_Expressions):
    """The lowering of what ``for`` loops iterate over."""

    def sequence(self, node: ast.expr) -> tuple[ast.Name, Any]:
        """What a for loop iterates over: a name holding a range, and how to get
        the item for an index (None when the items are the range's own). ``sorted(d)``
        of a dict runs over its keys in order, once the analysis has found them."""
        call = node if isinstance(node, ast.Call) and not node.keywords else None
        func = self.builtin_called(call)
        if func == "range":
            return self.range_atom([self.atom(a) for a in call.args]), None
        if func == "reversed" and len(call.args) == 1:
            inner = call.args[0]
            if self.builtin_called(inner if isinstance(inner, ast.Call) else None) == "range":
                r = self.range_atom([self.atom(a) for a in inner.args])
                return self.as_name(ast.Subscript(value=r, slice=_step(-1), ctx=ast.Load())), None
            seq, item = self.items(inner)
            r = self.range_atom([self.len_of(seq)])
            flipped = self.as_name(ast.Subscript(value=r, slice=_step(-1), ctx=ast.Load()))
            return flipped, item
        if func == "enumerate" and len(call.args) == 1:
            # positions 0, 1, ... count the items; the underlying index is r[p]
            r, items = self.sequence(call.args[0])
            positions = self.range_atom([self.len_of(r)])

            def item(p: ast.expr) -> ast.expr:
                index = self.as_atom(ast.Subscript(value=r, slice=p, ctx=ast.Load()))
                value = index if items is None else self.as_atom(self.rhs_value(items(index)))
                return ast.Tuple(elts=[p, value], ctx=ast.Load())

            return positions, item
        if func == "sorted" and len(call.args) == 1:  # a dict's keys, in order
            inner = call.args[0]
            keys = self.dicts.get(_where(inner))
            if keys is not None:
                try:
                    ordered = sorted(keys)
                except TypeError:  # (keys Python cannot order: sorted raises as it runs)
                    ordered = None
                if ordered is not None:
                    seq = self.as_name(
                        ast.Tuple(elts=[ast.Constant(k) for k in ordered], ctx=ast.Load())
                    )
                    return self.range_atom([self.len_of(seq)]), lambda i: ast.Subscript(
                        value=seq, slice=i, ctx=ast.Load()
                    )
            elif isinstance(inner, ast.Name) and inner.id in self.current:
                self.iterated[self.current[inner.id]] = _where(inner)  # (a dict? see items)
        if func == "zip" and call.args:
            parts = [self.items(a) for a in call.args]
            lengths = [self.len_of(seq) for seq, _ in parts]
            n = lengths[0]
            if len(lengths) > 1:
                n = self.as_name(_call("min", lengths))
            return self.range_atom([n]), lambda i: ast.Tuple(
                elts=[self.as_atom(self.rhs_value(item(i))) for _, item in parts], ctx=ast.Load()
            )
        seq, item = self.items(node)
        return self.range_atom([self.len_of(seq)]), item

    def items(self, node: ast.expr) -> tuple[ast.expr, Any]:
        """What ``for item in node`` reads: an atom with as many items, and the item at a
        position (an expression over atoms, emitted where the loop's body begins).

        A list, tuple or array is read by position: ``for row in X`` is ``row = X[i]``.
        A dict gives its keys, and ``d.keys()``, ``d.values()`` and ``d.items()`` what
        they name: over the keys the analysis found it to have (``self.dicts``, a tuple
        of constants: its structure is part of what the code is made for), or for a
        global dict, over ``list(d)`` when the code runs. Until the analysis has seen
        a value, it is read by position, and where the loop names it is noted in
        ``self.iterated`` for the analysis to look it up.
        """
        method = None
        target = node
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("keys", "values", "items")
            and not node.args
            and not node.keywords
            and (
                not self.is_static(node.func.value)
                or isinstance(_static_value(node.func.value, self.env), dict)
            )
        ):
            method, target = node.func.attr, node.func.value
        keys = self.dicts.get(_where(target))
        if keys is not None:  # a dict whose keys the analysis found: a tuple of them
            seq: ast.expr = self.as_name(
                ast.Tuple(elts=[ast.Constant(k) for k in keys], ctx=ast.Load())
            )
            whole = self.atom(target) if method in ("values", "items") else seq
        elif self.is_static(target) and isinstance(_static_value(target, self.env), dict):
            self.env.setdefault("list", builtins.list)  # a global's keys as the code runs
            seq = self.as_name(_call("list", [_copy(target)]))
            whole = _copy(target)
        else:  # by position, unless the analysis finds a dict here (see the driver)
            seq = whole = self.atom(target)
            if isinstance(seq, ast.Name):
                self.iterated[seq.id] = _where(target)
        if method in (None, "keys"):
            return seq, lambda i: ast.Subscript(value=seq, slice=i, ctx=ast.Load())

        def item(i: ast.expr) -> ast.expr:
            key = self.as_atom(ast.Subscript(value=seq, slice=i, ctx=ast.Load()))
            value = ast.Subscript(value=whole, slice=key, ctx=ast.Load())
            if method == "values":
                return value
            return ast.Tuple(elts=[key, self.as_atom(value)], ctx=ast.Load())

        return seq, item

    def builtin_called(self, call: ast.Call | None) -> str | None:
        if call is None or not isinstance(call.func, ast.Name):
            return None
        name = call.func.id
        if name in self.current or name not in self.env:
            return None
        return name if self.env[name] is getattr(builtins, name, None) else None

    def range_atom(self, args: list[ast.expr]) -> ast.Name:
        return self.as_name(_call("range", args))

    def len_of(self, seq: ast.expr) -> ast.Name:
        return self.as_name(_call("len", [seq]))

    def as_name(self, value: ast.expr) -> ast.Name:
        for name in ("range", "len", "min"):
            self.env.setdefault(name, getattr(builtins, name))
        return ast.Name(id=self.as_temp(value, force=True), ctx=ast.Load())

    def rhs_value(self, node: ast.expr) -> ast.expr:
        """A synthesized item expression (already over atoms) as a core rhs."""
        if isinstance(node, ast.Tuple):
            return ast.Tuple(
                elts=[self.as_atom(self.rhs_value(e)) for e in node.elts], ctx=ast.Load()
            )
        return node


def _where(node: ast.expr) -> tuple[int, int, int, int]:
    """Where ``node`` is in the user's source: what names a loop's iterable across
    lowerings."""
    return (node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0)


def _call(name: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def _step(step: int) -> ast.Slice:
    return ast.Slice(lower=None, upper=None, step=ast.Constant(step))
