"""Part of normalize: ``np.r_[...]`` and ``np.c_[...]`` written as the
``np.concatenate`` they amount to.

A mixin of :class:`~.expressions._Expressions`, whose state it reads (``env``,
``fail``, ``as_atom``...)."""

from __future__ import annotations

import ast
import sys

from .expression_helpers import _static_value


class IndexConcatenation:
    """The ``np.r_``/``np.c_`` lowering of :class:`~.expressions._Expressions`."""

    def index_concatenator(self, node: ast.expr) -> str | None:
        """``"r_"`` or ``"c_"`` where ``node`` names numpy's ``np.r_`` or ``np.c_``."""
        if not self.is_static(node):
            return None
        value = _static_value(node, self.env)
        numpy = sys.modules.get("numpy")
        for kind in ("r_", "c_"):
            if numpy is not None and value is getattr(numpy, kind):
                return kind
        return None

    def concatenation(self, node: ast.Subscript, kind: str) -> ast.expr:
        """``np.r_[a, 0:3, b]`` as what numpy computes: ``np.concatenate((np.atleast_1d(a),
        np.arange(0, 3), np.atleast_1d(b)), dtype=np.result_type(a, ..., b))`` (a Python
        number among arrays weak, as in numpy); ``np.c_[...]`` joins along the last axis,
        each piece at least 2-d, a 1-d one as a column (``np.transpose(np.atleast_2d(
        np.transpose(a)))``, for any rank). Each piece is evaluated once."""
        module = self.numpy_name(node)
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
            raise self.fail(
                node,
                f"srcgrad differentiates np.{kind}[...] of arrays, numbers and slices, not "
                "with a directive string; write np.concatenate or np.stack instead.",
            )
        atoms = [self.range_of(i, module, kind) for i in items]

        def call(name: str, *args: ast.expr, **keywords: ast.expr) -> ast.Call:
            return ast.Call(
                func=ast.Attribute(value=ast.Name(id=module, ctx=ast.Load()), attr=name),
                args=list(args),
                keywords=[ast.keyword(arg=k, value=v) for k, v in keywords.items()],
            )

        pieces = []
        for a in atoms:
            if kind == "r_":
                pieces.append(self.as_atom(call("atleast_1d", a)))
            else:  # at least 2-d, a 1-d piece (or a number) as a column: (n,) -> (n, 1)
                t = self.as_atom(call("transpose", a))
                t = self.as_atom(call("atleast_2d", t))
                pieces.append(self.as_atom(call("transpose", t)))
        joined = self.as_atom(ast.Tuple(elts=pieces, ctx=ast.Load()))
        dtype = self.as_atom(call("result_type", *atoms))
        axis = ast.Constant(0 if kind == "r_" else -1)
        return call("concatenate", joined, axis=axis, dtype=dtype)

    def numpy_name(self, node: ast.Subscript) -> str:
        """The name numpy goes by here (``np`` of ``np.r_``)."""
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        numpy = sys.modules.get("numpy")
        if isinstance(node.value, ast.Attribute) and self.env.get(root.id) is numpy:
            return root.id
        for name, value in self.env.items():
            if value is numpy and name not in self.current:
                return name
        raise self.fail(
            node, "srcgrad lowers np.r_[...] and np.c_[...] where numpy is imported as a module"
        )

    def range_of(self, item: ast.expr, module: str, kind: str) -> ast.expr:
        """An item of ``np.r_[...]`` as an atom: a slice ``a:b:c`` is ``np.arange(a, b, c)``
        (``np.linspace(a, b, n)`` for a step ``nj``, as numpy reads it)."""
        if not isinstance(item, ast.Slice):
            return self.atom(item)
        if item.upper is None:
            raise self.fail(
                item, f"srcgrad differentiates np.{kind}[...] with slices that have a stop"
            )
        start = ast.Constant(0) if item.lower is None else item.lower
        step = item.step
        func = ast.Attribute(value=ast.Name(id=module, ctx=ast.Load()), attr="arange")
        args = [start, item.upper, step if step is not None else ast.Constant(1)]
        if isinstance(step, ast.Constant) and isinstance(step.value, complex):
            func.attr = "linspace"
            args[2] = ast.Constant(int(abs(step.value)))
        return self.atom(ast.Call(func=func, args=args, keywords=[]))
