"""Part of normalize: closures made by a function of the user's (a factory) and called
in the function, written out as the nested functions they are.

In:  ``name = factory(args)`` in the function, ``name`` called there, and ``factory``
a function of a module whose body makes one closure and returns it (a ``def`` and
``return`` of its name, or ``return lambda ...``), after assignments of its own.
Out: the statements the call of the factory runs, in the function: each parameter of
the factory bound to its argument (a constant, a module's name or a parameter of the
function never assigned is written where the closure reads it instead), the factory's
assignments, and the closure defined under ``name`` (a nested ``def``, which
``normalize.nested`` writes out where it is called)::

    def make_step(h):                        def f(y, theta):
        def step(y, th):                         def step(y, th):
            return y + h * rhs(y, th)   ==>          return y + 0.1 * rhs(y, th)
        return step                              y = step(y, theta)
                                                 return y
    def f(y, theta):
        step = make_step(0.1)
        y = step(y, theta)
        return y

The closure reads the factory's parameters as the call bound them (its own variables
afterwards never change them): a value computed in the function (an active one too)
is computed once, into a variable of its own, where the factory is called. The names
the factory reads from its module are read here under fresh names where the function
binds them to something else; the factory's code and free names are checked on each
call with the function's own (``ParsedFunction.factories``). The statements keep the
factory's lines where it is in the function's file, and take the line of the call
elsewhere. Refused, with what to write instead: a factory that is not plain (branches
choosing between closures, loops, several closures, a closure returned in a container),
``*args``/``**kwargs`` and defaults that are not constants.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..astwalk import copy_tree, nodes
from ..parse import ParsedFunction, parse
from ..transform.naming import Namer
from .expression_helpers import _static_value, is_static

Fail = Callable[[ast.AST, str], UnsupportedSyntaxError]

_KINDS = {
    ast.If: "an `if`",
    ast.For: "a `for` loop",
    ast.While: "a `while` loop",
    ast.Try: "a `try`",
    ast.With: "a `with`",
    ast.Return: "an early `return`",
}
_PLAIN = (
    "srcgrad writes out a closure made by `{factory}` (`{name} = {factory}(...)`) where "
    "`{name}` is called, for a factory whose body assigns variables, defines one function "
    "and returns it (or returns a lambda); {problem}. Write the closure's body where it is "
    "called, or define the function at module level and pass what it captures as arguments."
)


def factory_of(call: ast.expr, env: dict[str, Any], local: set[str]) -> Any:
    """The user function ``call`` calls, where it may be a factory: a module's name (or an
    attribute of a module) bound to a Python function; None otherwise."""
    if not isinstance(call, ast.Call) or not is_static(call.func, env, local):
        return None
    func = _static_value(call.func, env)
    return func if inspect.isfunction(func) else None


class FactoryCall:
    """One ``name = factory(args)`` written out (:meth:`statements`)."""

    def __init__(
        self,
        stmt: ast.Assign,
        name: str,
        factory: Any,
        namer: Namer,
        env: dict[str, Any],
        local: set[str],
        fail: Fail,
        filename: str,
    ) -> None:
        self.stmt, self.name, self.namer, self.env, self.local = stmt, name, namer, env, local
        self.fail = fail
        self.call = stmt.value
        assert isinstance(self.call, ast.Call)
        self.label = ast.unparse(self.call.func)
        try:
            self.parsed: ParsedFunction = parse(factory)
        except (TypeError, UnsupportedSyntaxError) as exc:
            raise self.refuse(f"srcgrad cannot read it ({str(exc).splitlines()[-1]})") from None
        self.same_file = self.parsed.locator.filename == filename
        self.borrowed: set[str] = set()  # names bound in ``env`` for the factory

    def refuse(self, problem: str) -> UnsupportedSyntaxError:
        text = _PLAIN.format(factory=self.label, name=self.name, problem=problem)
        return self.fail(self.call, text)

    def statements(self, assigned: set[str]) -> list[ast.stmt]:
        """What the call runs, the closure last, defined as ``name``. ``assigned``: the
        names the function assigns (a parameter of it among them is bound, not
        written where it is read)."""
        tree = self.parsed.tree
        body = list(tree.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # (a docstring)
        closure, prelude = self.closure(body)
        params = self.parameters(tree.args)
        factory_local = set(params) | {
            n.id
            for s in prelude
            for n in nodes(s)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        }
        inner_local = _own_names(closure)
        defined_as = {closure.name} if isinstance(closure, ast.FunctionDef) else set()
        renames = self.free_names(prelude, closure, factory_local | inner_local | defined_as)
        bound = self.bind(params)
        written: dict[str, ast.expr] = {}
        out: list[ast.stmt] = []
        reassigned = {n for n in params if any(_stores(s, n) for s in prelude)}
        for param, value in bound.items():
            if param not in reassigned and self.writable(value, assigned, inner_local):
                written[param] = value
                continue
            renames[param] = self.namer.fresh(param)
            out.append(self.located(_assign(renames[param], value)))
        for name in sorted(factory_local - set(params)):
            renames[name] = self.namer.fresh(name)
        for stmt in prelude:
            out.append(self.located(_replaced(copy_tree(stmt), renames, written)))
        inner = copy_tree(closure)
        own = {k: v for k, v in renames.items() if k not in inner_local}
        read = {k: v for k, v in written.items() if k not in inner_local}
        if isinstance(inner, ast.FunctionDef):
            own[inner.name] = self.name  # (a call of itself: refused as recursion)
            inner.name = self.name
            inner.body = [_replaced(s, own, read) for s in inner.body]
            defined: ast.stmt = inner
        else:
            defined = _assign(self.name, _replaced(inner, own, read))
        out.append(self.located(defined))
        return out

    def as_nested(self, why: str = "it is given complex numbers") -> ast.FunctionDef:
        """The function itself (not a factory: a function of the user's written out where
        it is called, because ``why``), as a nested ``def`` named ``name`` reading its
        module's names (renamed where the function binds them otherwise)."""
        tree = copy_tree(self.parsed.tree)
        if tree.decorator_list:
            raise self.fail(
                self.call,
                f"srcgrad writes out `{self.label}` where it is called here ({why}), which "
                "it cannot do for a decorated function: write its statements here instead.",
            )
        own = _own_names(tree) | {tree.name}
        renames = self.free_names([], tree, own)
        renames[tree.name] = self.name  # (a call of itself: refused as recursion)
        tree.name = self.name
        tree.body = [_replaced(s, renames, {}) for s in tree.body]
        return self.located(tree)

    def closure(self, body: list[ast.stmt]) -> tuple[ast.FunctionDef | ast.Lambda, list]:
        """The closure the factory returns, and the assignments before it."""
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            raise self.refuse("its last statement is not a `return` of the closure")
        returned = body[-1].value
        defs = [s for s in body[:-1] if isinstance(s, ast.FunctionDef)]
        prelude = [s for s in body[:-1] if not isinstance(s, ast.FunctionDef)]
        for stmt in prelude:
            if not (
                isinstance(stmt, ast.Assign)
                and all(isinstance(t, ast.Name) for t in stmt.targets)
                and not any(isinstance(n, (ast.Lambda, ast.NamedExpr)) for n in nodes(stmt))
            ):
                kind = _KINDS.get(type(stmt), "a statement other than an assignment")
                where = f"{Path(self.parsed.locator.filename).name}:{stmt.lineno}"
                raise self.refuse(
                    f"it has {kind} ({where}: a branch or loop choosing between closures, "
                    "say), which srcgrad does not follow"
                )
        if isinstance(returned, ast.Lambda) and not defs:
            return returned, prelude
        if (
            isinstance(returned, ast.Name)
            and len(defs) == 1
            and defs[0].name == returned.id
            and not any(_stores(s, returned.id) for s in prelude)
        ):
            return defs[0], prelude
        raise self.refuse(
            "it returns something else (several functions, or one in a container or "
            "chosen at run time)"
        )

    def parameters(self, args: ast.arguments) -> list[str]:
        if args.vararg or args.kwarg:
            raise self.refuse("it takes *args or **kwargs: name its parameters")
        return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]

    def bind(self, params: list[str]) -> dict[str, ast.expr]:
        """Each parameter of the factory, and the argument the call gives it."""
        args = self.parsed.tree.args
        call = self.call
        assert isinstance(call, ast.Call)
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            raise self.refuse("the call passes `*seq` or `**dict`: pass the arguments one by one")
        if len(call.args) > len(positional):
            raise self.refuse(f"it takes {len(positional)} positional arguments")
        given = dict(zip(positional, call.args))
        for kw in call.keywords:
            if kw.arg in given or kw.arg not in params:
                raise self.refuse(f"it gets no parameter `{kw.arg}` here")
            given[kw.arg] = kw.value
        defaults: dict[str, ast.expr | None] = dict(zip(positional[::-1], args.defaults[::-1]))
        defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults))
        bound: dict[str, ast.expr] = {}
        for param in params:
            value = given.get(param, defaults.get(param))
            if value is None:
                raise self.refuse(f"the call gives no value for its parameter `{param}`")
            if param not in given and not isinstance(value, ast.Constant):
                raise self.refuse(
                    f"the default of its parameter `{param}` is not a constant: pass it"
                )
            bound[param] = copy_tree(value) if param in given else ast.Constant(value.value)
        return bound

    def writable(self, value: ast.expr, assigned: set[str], inner_local: set[str]) -> bool:
        """Whether ``value`` may be written where the closure reads the parameter: a
        constant, a module's name, or a parameter of the function it never assigns (each
        reads the same object everywhere), shadowed by no variable of the closure."""
        if isinstance(value, ast.Constant):
            return True
        root = value
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id in inner_local:
            return False
        if is_static(value, self.env, self.local):
            return True
        return isinstance(value, ast.Name) and value.id in self.local - assigned

    def free_names(self, prelude: list[ast.stmt], closure: ast.AST, own: set[str]) -> dict:
        """The factory's module names its statements read: those the function binds to
        another object (or assigns) renamed, bound in ``env`` under the new name."""
        renames: dict[str, str] = {}
        for node in (n for s in [*prelude, closure] for n in nodes(s)):
            if not isinstance(node, ast.Name) or node.id in own or node.id in renames:
                continue
            if node.id not in self.parsed.env:
                continue
            value = self.parsed.env[node.id]
            if node.id in self.env and self.env[node.id] is value and node.id not in self.local:
                continue
            new = self.namer.fresh(node.id)
            self.env[new] = value
            self.borrowed.add(new)
            renames[node.id] = new
        return renames

    def located(self, stmt: ast.stmt) -> ast.stmt:
        """``stmt`` at the factory's lines in the function's file; at the call's line where
        the factory is in another file (which the function's error messages and comments
        cannot quote)."""
        for node in ast.walk(stmt):
            if isinstance(node, (ast.stmt, ast.expr, ast.arg, ast.keyword)) and (
                not self.same_file or not hasattr(node, "lineno")
            ):
                ast.copy_location(node, self.stmt)
        return stmt


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value)


def _stores(stmt: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
        for n in nodes(stmt)
    )


def _own_names(closure: ast.FunctionDef | ast.Lambda) -> set[str]:
    """The closure's parameters and the variables it assigns."""
    args = closure.args
    own = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    own |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    body = closure.body if isinstance(closure.body, list) else [closure.body]
    for node in (n for s in body for n in nodes(s)):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            own.add(node.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
    return own


def _replaced(node: Any, renames: dict[str, str], written: dict[str, ast.expr]) -> Any:
    """``node`` with the names in ``renames`` renamed and those in ``written`` replaced by
    (a copy of) the expression each stands for."""

    class Replace(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.expr:
            if n.id in written and isinstance(n.ctx, ast.Load):
                return ast.copy_location(copy_tree(written[n.id]), n)
            if n.id in renames:
                n.id = renames[n.id]
            return n

    if isinstance(node, ast.Lambda):
        node.body = Replace().visit(node.body)
        return node
    return Replace().visit(node)
