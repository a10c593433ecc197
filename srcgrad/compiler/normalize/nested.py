"""Part of normalize: functions defined inside the function, written out where they are
called.

In:  the statements of a user function (plain Python AST), a
:class:`~srcgrad.compiler.transform.naming.Namer` and a way to fail at a user's node.
Out: the same statements without the nested ``def`` s and the lambdas bound to a name
(``sq = lambda t: t * t``): each call of one is replaced by its body, its parameters
and its own variables under fresh names, its result by the expression it returns::

    def f(x, w):                                 def f(x, w):
        def layer(h):                                h = x
            z = h @ w                    ==>         z = h @ w
            return np.tanh(z)                        y = np.tanh(z)
        y = layer(x)                                 h_1 = y
        return np.sum(layer(y))                      z_1 = h_1 @ w
                                                     return np.sum(np.tanh(z_1))

A closure reads the variables of the function when it is called, not when it is
defined, and so does its body written out at the call: the two compute the same. Each
call is written out where the statement calling it is evaluated once and always
(an assignment, an expression statement, a ``return``, an ``if`` test, a ``for``'s
iterable; a list comprehension is a loop by now). Refused, with what to write instead:
a nested function defined under an ``if`` or in a loop, defined twice or rebound, with
``*args``/``**kwargs``, a decorator, a default that is not a constant, ``return``
before its end, ``nonlocal``/``global``, one that calls itself, and one used other than
by calling it (returned, stored, passed to another function) or called where only some
paths evaluate it (``a if c else g(x)``, ``while g(x) > 0``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..astwalk import copy_tree, nodes
from ..parse import ParsedFunction
from ..transform.naming import Namer
from .partials import _PARTIAL_AS_A_VALUE, Partials, _Partial
from .written_out import WritingOut, _where

Fail = Callable[[ast.AST, str], UnsupportedSyntaxError]

#: expressions whose operands are evaluated on some paths only, or later, or again
_CONDITIONAL = (
    ast.IfExp,
    ast.BoolOp,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_AS_A_VALUE = (
    "srcgrad writes a function defined inside the function out where it is called "
    "(`{name}(...)`), and a function of yours it is passed to with it; here `{name}` is "
    "used as a value (returned, stored, or passed to a builtin or a library's function). "
    "Call it here, or define it at module level (a function passed as an argument works)."
)


@dataclass
class _Nested:
    """A nested function: its parameters, constant defaults, body and returned value."""

    name: str
    node: ast.stmt
    positional: list[str]
    keyword_only: list[str]
    defaults: dict[str, ast.expr]
    body: list[ast.stmt]
    result: ast.expr
    local: set[str] = field(default_factory=set)


def inline_nested(
    body: list[ast.stmt],
    namer: Namer,
    env: dict[str, Any],
    local: set[str],
    fail: Fail,
    parsed: ParsedFunction | None = None,
    written_out: frozenset = frozenset(),
) -> list[ast.stmt]:
    """``body`` with its nested functions written out where they are called, its
    partials called as the functions they bind, and the closures its factories make
    written out as nested functions (``normalize.factories``; see the module's
    docstring); the user's statements are left as they are. ``env``: the free names
    resolved; ``local``: the function's own names; ``parsed``: the function, which notes
    the factories written out (their code is checked with its own); ``written_out``: the
    calls of module functions to write out as nested functions too (see
    ``Normalized.written_out``)."""
    inliner = _Inliner(namer, env, local, fail)
    inliner.parsed = parsed
    inliner.written_out = written_out
    inliner.called = {
        n.func.id
        for s in body
        for n in nodes(s)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in local
    }
    if not written_out and not any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        or inliner.partial(n)
        or inliner.factory(n) is not None
        for s in body
        for n in nodes(s)
    ):
        return body
    inliner.assigned = {
        n.id
        for s in body
        for n in nodes(s)
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    return inliner.block(copy_tree(body), top=True)


class _Inliner(WritingOut, Partials):
    def __init__(self, namer: Namer, env: dict[str, Any], local: set[str], fail: Fail) -> None:
        self.namer = namer
        self.env = env
        self.local = local
        self.fail = fail
        self.assigned: set[str] = set()  # the names the function assigns
        self.nested: dict[str, _Nested | _Partial] = {}
        self.calling: list[str] = []  # the nested functions being written out
        self.parsed: ParsedFunction | None = None
        self.called: set[str] = set()  # the function's variables it calls
        self.written_out: frozenset = frozenset()  # see inline_nested
        self.where: tuple[int, int, int, int] | None = None  # the statement lowered
        self.helpers: dict[Any, str] = {}  # module functions written out: their names

    def block(self, stmts: list[ast.stmt], top: bool = False) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            definition = self.definition(stmt)
            if definition is not None:
                if not top:
                    raise self.fail(
                        stmt,
                        f"srcgrad writes out `{definition}` where it is called only where it "
                        "is defined at the top level of the function (not under an `if` or "
                        "in a loop); define it there, or at module level.",
                    )
                out.extend(self.define(stmt, definition))
                continue
            self.rebinding(stmt)
            out.extend(self.statement(stmt))
        return out

    def definition(self, stmt: ast.stmt) -> str | None:
        """The name a nested ``def``, ``name = lambda ...`` or ``name = partial(...)``
        defines."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return stmt.name
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and (
                isinstance(stmt.value, ast.Lambda)
                or self.partial(stmt.value)
                or self.factory(stmt) is not None
            )
        ):
            return stmt.targets[0].id
        return None

    def define(self, stmt: ast.stmt, name: str) -> list[ast.stmt]:
        """Note the nested function ``stmt`` defines; the statements to run in its place
        (a partial's arguments, computed where it is made)."""
        if name in self.nested:
            raise self.fail(
                stmt,
                f"`{name}` is defined twice in the function; give the second one another name.",
            )
        if isinstance(stmt, ast.Assign) and self.partial(stmt.value):
            assert isinstance(stmt.value, ast.Call)
            return self.define_partial(stmt, name, stmt.value)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            return self.define_factory(stmt, name)
        if isinstance(stmt, ast.AsyncFunctionDef):
            raise self.fail(stmt, "srcgrad differentiates synchronous functions; use `def`.")
        if isinstance(stmt, ast.FunctionDef):
            args, body, result = stmt.args, *self.def_body(stmt, name)
        else:
            assert isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda)
            args, body, result = stmt.value.args, [], stmt.value.body
        if args.vararg or args.kwarg:
            raise self.fail(
                stmt,
                f"srcgrad writes out `{name}` where it is called, with named parameters only; "
                "*args and **kwargs are not supported there: name the parameters.",
            )
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        keyword_only = [a.arg for a in args.kwonlyargs]
        defaults: dict[str, ast.expr] = dict(zip(positional[::-1], args.defaults[::-1]))
        defaults.update(
            (a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None
        )
        for value in defaults.values():
            if not isinstance(value, ast.Constant):
                raise self.fail(
                    value,
                    f"the default values of `{name}` are computed once, where it is defined; "
                    "srcgrad writes it out where it is called and takes constant defaults "
                    "only: pass that value at each call instead.",
                )
        local = set(positional) | set(keyword_only)
        for node in (n for s in [*body, ast.Expr(value=result)] for n in ast.walk(s)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
        self.nested[name] = _Nested(
            name, stmt, positional, keyword_only, defaults, body, result, local
        )
        return []

    def def_body(self, stmt: ast.FunctionDef, name: str) -> tuple[list[ast.stmt], ast.expr]:
        """The statements of the nested ``def`` ``stmt`` (its docstring left out) and the
        expression it returns; an error for a decorator, an early ``return``, ``nonlocal``
        or ``global``."""
        body = list(stmt.body)
        if stmt.decorator_list:
            raise self.fail(
                stmt,
                f"srcgrad writes out nested functions without decorators; define `{name}` "
                "at module level to decorate it.",
            )
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # (a docstring)
        result: ast.expr = ast.Constant(None)
        if body and isinstance(body[-1], ast.Return):
            result = body[-1].value or ast.Constant(None)
            body = body[:-1]
        for node in (n for s in body for n in _walk_own(s)):
            if isinstance(node, ast.Return):
                raise self.fail(
                    node,
                    f"srcgrad writes out `{name}` where it is called, which needs its one "
                    "`return` at its end; assign the result to a variable and return it "
                    "last, or define the function at module level.",
                )
            if isinstance(node, (ast.Nonlocal, ast.Global)):
                raise self.fail(
                    node,
                    f"`{name}` changes a variable of the function around it, which "
                    "srcgrad does not follow; return the new value and assign it instead.",
                )
        return body, result

    def rebinding(self, stmt: ast.stmt) -> None:
        """Refuse a statement that assigns to the name of a nested function."""
        for node in ast.walk(stmt):  # (in order: the first found is reported)
            if (
                isinstance(node, ast.Name)
                and not isinstance(node.ctx, ast.Load)
                and node.id in self.nested
            ):
                raise self.fail(
                    stmt,
                    f"`{node.id}` names a function defined in the function and is assigned "
                    "again here; give the variable another name.",
                )

    # -- statements ----------------------------------------------------------
    def statement(self, stmt: ast.stmt) -> list[ast.stmt]:
        outer, self.where = self.where, _where(stmt)
        try:
            return self.lowered(stmt)
        finally:
            self.where = outer

    def lowered(self, stmt: ast.stmt) -> list[ast.stmt]:
        before: list[ast.stmt] = []
        if isinstance(stmt, (ast.If, ast.For)):
            key = "test" if isinstance(stmt, ast.If) else "iter"
            setattr(stmt, key, self.expression(getattr(stmt, key), before))
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse)
        elif isinstance(stmt, ast.While):
            self.not_called(stmt.test)
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse)
        elif isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)):
            if stmt.value is not None:
                stmt.value = self.expression(stmt.value, before)
        self.not_called(stmt)
        return [*before, stmt]

    def not_called(self, node: ast.AST) -> None:
        """Refuse what is left of a nested function in ``node``: a use as a value, or a
        call where only some paths evaluate it."""
        for n in nodes(node):
            if isinstance(n, ast.Name) and n.id in self.nested:
                calls = [
                    c
                    for c in ast.walk(node)  # (in order: the first found is reported)
                    if isinstance(c, ast.Call)
                    and isinstance(c.func, ast.Name)
                    and c.func.id == n.id
                ]
                if calls:
                    raise self.fail(
                        calls[0],
                        f"srcgrad writes out `{n.id}(...)` where it is called, only where "
                        "every path evaluates the call once (not in a conditional expression, "
                        "after `and`/`or`, in a `while` test or in a set or dict "
                        "comprehension): call it in a statement of its own first.",
                    )
                if isinstance(self.nested[n.id], _Partial):
                    raise self.fail(n, _PARTIAL_AS_A_VALUE.format(name=n.id))
                raise self.fail(n, _AS_A_VALUE.format(name=n.id))

    # -- expressions ---------------------------------------------------------
    def expression(self, node: ast.expr, before: list[ast.stmt]) -> ast.expr:
        """``node`` with each call of a nested function replaced by the value it returns,
        the statements computing it appended to ``before``, in the order Python
        evaluates them."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id not in self.nested:
                written = self.written_call(node, before)
                if written is not None:
                    return written
            if node.func.id in self.nested:
                return self.call(node, before)
        if isinstance(node, _CONDITIONAL):
            return node  # (refused by not_called where it calls one)
        for name, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                setattr(node, name, self.expression(value, before))
            elif isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, ast.expr):
                        value[k] = self.expression(item, before)
                    elif isinstance(item, ast.keyword):
                        item.value = self.expression(item.value, before)
        return node

    def call(self, node: ast.Call, before: list[ast.stmt]) -> ast.expr:
        """The nested function's body for this call: its parameters assigned the
        arguments, then its statements (into ``before``); the value it returns."""
        name = node.func.id
        nested = self.nested[name]
        if isinstance(nested, _Partial):
            return self.call_partial(node, nested, before)
        if name in self.calling:
            raise self.fail(
                node,
                f"`{name}` calls itself; srcgrad writes out functions defined inside the "
                "function where they are called, which a recursive one cannot be: define it "
                "at module level (recursion works there).",
            )
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise self.fail(
                node, f"pass the arguments of `{name}` one by one (not `*seq` or `**dict`)."
            )
        args = [self.expression(a, before) for a in node.args]
        keywords = {k.arg: self.expression(k.value, before) for k in node.keywords}
        bound = self.bind(nested, node, args, keywords)
        renamed = {v: self.namer.fresh(v) for v in sorted(nested.local)}
        passed = self.passed_functions(nested, node, bound)
        renamed.update(passed)
        names = {old: ast.Name(id=new, ctx=ast.Load()) for old, new in renamed.items()}
        for param, value in bound.items():
            if param in passed:
                continue
            target = ast.Name(id=renamed[param], ctx=ast.Store())
            before.append(ast.copy_location(ast.Assign(targets=[target], value=value), node))
        self.calling.append(name)
        try:
            body = _renamed(copy_tree(nested.body), names)
            before.extend(self.block(body))
            result = self.expression(_renamed(copy_tree(nested.result), names), before)
        finally:
            self.calling.pop()
        if isinstance(result, ast.Constant) and not hasattr(result, "lineno"):
            ast.copy_location(result, node)
        return result

    def passed_functions(
        self, nested: _Nested, node: ast.Call, bound: dict[str, ast.expr]
    ) -> dict[str, str]:
        """The parameters of ``nested`` given a function defined in this one (a lambda,
        defined here as a nested function, or the name of one), each with the name of
        that function: the written-out body calls it by that name, and it is written
        out where it is called in turn."""
        passed: dict[str, str] = {}
        for param, value in bound.items():
            if isinstance(value, ast.Lambda):
                name = self.namer.fresh(param)
                made = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value)
                self.define(ast.copy_location(made, value), name)
                passed[param] = name
            elif isinstance(value, ast.Name) and value.id in self.nested:
                passed[param] = value.id
        for stmt in nested.body:
            for n in nodes(stmt):
                if isinstance(n, ast.Name) and n.id in passed and not isinstance(n.ctx, ast.Load):
                    raise self.fail(
                        node,
                        f"`{nested.name}` assigns to its parameter `{n.id}`, which is given a "
                        "function here; give the variable another name.",
                    )
        return passed

    def bind(
        self, nested: _Nested, node: ast.Call, args: list[ast.expr], keywords: dict[str, ast.expr]
    ) -> dict[str, ast.expr]:
        """Each parameter's value for this call, in the order of the parameters."""
        if len(args) > len(nested.positional):
            raise self.fail(
                node,
                f"`{nested.name}` takes {len(nested.positional)} positional arguments but "
                f"{len(args)} are given here.",
            )
        given = dict(zip(nested.positional, args))
        for key, value in keywords.items():
            if key in given or key not in nested.positional + nested.keyword_only:
                raise self.fail(node, f"`{nested.name}` gets no parameter `{key}` here.")
            given[key] = value
        bound = {}
        for param in nested.positional + nested.keyword_only:
            if param in given:
                bound[param] = given[param]
            elif param in nested.defaults:
                bound[param] = copy_tree(nested.defaults[param])
            else:
                raise self.fail(node, f"`{nested.name}` is not given its parameter `{param}` here.")
        return bound


def _walk_own(node: ast.AST):  # noqa: ANN202 (an iterator of nodes)
    """The nodes of ``node`` outside the functions and lambdas nested in it."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for child in ast.iter_child_nodes(n):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                todo.append(child)


def _renamed(node: ast.AST | list, names: dict[str, ast.Name]):  # noqa: ANN202
    """``node`` (a copy) with the names in ``names`` renamed, loads and stores alike."""
    for tree in node if isinstance(node, list) else [node]:
        for n in nodes(tree):
            if isinstance(n, ast.Name) and n.id in names:
                n.id = names[n.id].id
    return node
