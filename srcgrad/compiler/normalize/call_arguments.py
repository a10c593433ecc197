"""Part of normalize: arguments of calls to the user's functions, written out: a tuple
spread into named parameters (``f(a, *t)``) and the extra positional arguments a
``*args`` parameter collects.

A mixin of :class:`~.expressions._Expressions`, whose state it reads (``env``,
``fail``, ``as_atom``...)."""

from __future__ import annotations

import ast
import inspect

from .expression_helpers import _static_value


class CallArguments:
    """The call-argument lowerings of :class:`~.expressions._Expressions`."""

    def spread(
        self, callee: ast.expr, given: list[ast.expr], node: ast.Call
    ) -> list[ast.expr] | None:
        """``f(a, *t)`` of a user's function ``f(a, b, c)`` whose parameters after ``a``
        have no defaults is ``f(a, t[0], t[1])``, after a check that ``t`` has exactly
        that many elements (Python's TypeError otherwise, as the call would raise): the
        arguments, lowered; None where the call is not such a call."""
        params = self.signature(callee)
        if (
            params is None
            or not given
            or not isinstance(given[-1], ast.Starred)
            or any(isinstance(a, ast.Starred) for a in given[:-1])
        ):
            return None
        positional = [
            p
            for p in params
            if p.kind
            in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        named = {k.arg for k in node.keywords}
        rest = positional[len(given) - 1 :]
        cut = next((k for k, p in enumerate(rest) if p.name in named), len(rest))
        rest, after = rest[:cut], rest[cut:]  # (those after: given by keyword)
        if (
            not rest
            or any(p.default is not inspect.Parameter.empty for p in rest)
            or not all(p.name in named for p in after)
        ):
            return None
        before = [self.atom(a) for a in given[:-1]]
        seq = self.atom(given[-1].value)
        count = self.len_of(seq)
        wrong = self.as_temp(
            ast.Compare(left=count, ops=[ast.NotEq()], comparators=[ast.Constant(len(rest))])
        )
        text = f"{ast.unparse(callee)}() takes {len(rest)} arguments from *{ast.unparse(seq)}"
        error = ast.Call(
            func=ast.Name(id="TypeError", ctx=ast.Load()), args=[ast.Constant(text)], keywords=[]
        )
        body: list[ast.stmt] = []
        with self.block(body):
            self.place(ast.Raise(exc=error, cause=None))
        self.place(ast.If(test=ast.Name(id=wrong, ctx=ast.Load()), body=body, orelse=[]))
        items = [
            ast.Subscript(value=seq, slice=ast.Constant(i), ctx=ast.Load())
            for i in range(len(rest))
        ]
        return [*before, *(self.as_atom(item) for item in items)]

    def signature(self, callee: ast.expr) -> list[inspect.Parameter] | None:
        """The parameters of the user's function ``callee`` names, if it is one (not a
        library's, not a helper of generated code: their rules read their arguments as
        the call gives them)."""
        if not self.is_static(callee):
            return None
        func = _static_value(callee, self.env)
        module = (getattr(func, "__module__", None) or "").split(".")[0]
        if (
            not inspect.isfunction(func)
            or getattr(func, "__srcgrad_helper__", None) is not None
            or module in ("numpy", "scipy", "cupy", "dask", "srcgrad", "math", "builtins")
        ):
            return None
        try:
            return list(inspect.signature(func, follow_wrapped=False).parameters.values())
        except (TypeError, ValueError):
            return None

    def var_positional(self, callee: ast.expr, node: ast.Call) -> int | None:
        """For a call of a user's function with ``*args``: how many positional
        parameters come before it (else None). A function with ``**kwargs`` is refused."""
        params = self.signature(callee)
        if params is None:
            return None
        kinds = [p.kind for p in params]
        if inspect.Parameter.VAR_POSITIONAL not in kinds:
            return None
        return kinds.index(inspect.Parameter.VAR_POSITIONAL)
