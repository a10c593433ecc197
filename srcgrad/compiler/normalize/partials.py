"""Part of normalize: the part of :mod:`.nested`'s inliner that calls a
``functools.partial`` made in the function as the function it binds
(``p = partial(f, a)``; ``p(x)`` is ``f(a, x)``), its arguments computed where it is
made."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from ..astwalk import copy_tree
from .expression_helpers import _static_value

_PARTIAL_AS_A_VALUE = (
    "`{name}` is a functools.partial made in the function, which srcgrad calls as the "
    "function it binds where it is called (`{name}(...)`); here it is used as a value "
    "(returned, stored or passed on). Pass the function and the arguments it fixes "
    "separately instead (a partial fixing numbers, made outside and passed in, works too)."
)


@dataclass
class _Partial:
    """``name = functools.partial(func, *args, **keywords)``: the function called, and
    the arguments it was given (atoms: each computed once, where the partial is made)."""

    name: str
    func: ast.expr
    args: list[ast.expr]
    keywords: dict[str, ast.expr]


class Partials:
    """Methods of ``nested._Inliner`` (which holds the state they use)."""

    def partial(self, node: ast.AST) -> bool:
        """Whether ``node`` calls ``functools.partial`` (by a name the function does not
        rebind)."""
        if not isinstance(node, ast.Call):
            return False
        root = node.func
        while isinstance(root, ast.Attribute):
            root = root.value
        return (
            isinstance(root, ast.Name)
            and root.id not in self.local
            and _static_value(node.func, self.env) is functools.partial
        )

    def define_partial(self, stmt: ast.stmt, name: str, call: ast.Call) -> list[ast.stmt]:
        """``name = functools.partial(func, *args, **keywords)``: each argument that is not
        a constant is computed into a variable of its own, here (as ``partial`` does)."""
        if (
            not call.args
            or any(isinstance(a, ast.Starred) for a in call.args)
            or any(k.arg is None for k in call.keywords)
        ):
            raise self.fail(
                stmt,
                "srcgrad calls `functools.partial(f, ...)` as `f` with the arguments written "
                "out: give it the function first and the arguments one by one (no `*` or `**`).",
            )
        func = call.args[0]
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or (
            root.id in self.assigned and root.id not in self.nested
        ):
            raise self.fail(
                stmt,
                "srcgrad calls a partial through the function it binds, which must be a "
                "function of the module, a parameter or one defined in the function; "
                f"`{ast.unparse(func)}` is a variable here: call the function itself.",
            )
        before: list[ast.stmt] = []
        values: list[ast.expr] = []
        for k, value in enumerate([*call.args[1:], *(kw.value for kw in call.keywords)]):
            if isinstance(value, ast.Constant):
                values.append(value)
                continue
            held = self.namer.fresh(f"{name}_arg{k}")
            target = ast.Name(id=held, ctx=ast.Store())
            value = self.expression(value, before)
            before.append(ast.copy_location(ast.Assign(targets=[target], value=value), stmt))
            values.append(ast.Name(id=held, ctx=ast.Load()))
        given = len(call.args) - 1
        keywords = {kw.arg: v for kw, v in zip(call.keywords, values[given:])}
        self.nested[name] = _Partial(name, func, values[:given], keywords)
        return before

    def call_partial(self, node: ast.Call, partial: _Partial, before: list[ast.stmt]) -> ast.expr:
        """``p(x, k=v)`` with ``p = partial(f, a, k=w)`` is ``f(a, x, k=v)``."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise self.fail(
                node, f"pass the arguments of `{partial.name}` one by one (not `*seq` or `**dict`)."
            )
        keywords = {k: copy_tree(v) for k, v in partial.keywords.items()}
        keywords.update((k.arg, k.value) for k in node.keywords)
        call = ast.Call(
            func=copy_tree(partial.func),
            args=[*(copy_tree(a) for a in partial.args), *node.args],
            keywords=[ast.keyword(arg=k, value=v) for k, v in keywords.items()],
        )
        for n in ast.walk(call):  # (in order: the first found is reported)
            if not hasattr(n, "lineno") and isinstance(n, ast.expr):
                ast.copy_location(n, node)
        return self.expression(ast.copy_location(call, node), before)
