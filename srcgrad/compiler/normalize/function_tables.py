"""Part of normalize: tuples, lists and dicts of functions, called by a constant index
or key or in a loop over them, written as calls of each function by its name.

In:  the statements of a user function (plain Python AST, comprehensions made loops).
Out: the same statements, where a table of functions (a tuple, list or dict display
bound once, at the top level, to a name used only as ``fs[k]`` with a constant ``k``
and as what a ``for`` iterates) is read element by element, and a loop over one (or
over a display whose loop variable is called) is written out once per function, the
loop variable replaced by the function (a dict's key by the constant key)::

    fs = {"a": np.sin, "b": g}                     total = total + np.sin(x)
    for f in (np.sin, np.cos):              ==>    total = total + np.cos(x)
        total = total + f(x)                       y = g(x)
    y = fs["b"](x)

An element that is not a module's function, a parameter of the function never
assigned or a nested function (a lambda, a closure a factory makes, a partial) is
first bound to a name of its own, where the display is evaluated, and called by that
name (``normalize.nested`` writes it out). A loop with ``break``, ``continue`` or
``else``, assigning its loop variable, or whose variable is read outside it is refused,
with what to write instead; a table used any other way (indexed by a value computed
at run time, changed, passed on) is left as it is (and refused where a function is
called out of it).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..astwalk import copy_tree, nodes
from ..transform.naming import Namer
from .expression_helpers import is_static

Fail = Callable[[ast.AST, str], UnsupportedSyntaxError]


def lower_function_tables(
    body: list[ast.stmt], namer: Namer, env: dict[str, Any], local: set[str], fail: Fail
) -> list[ast.stmt]:
    """``body`` with its tables of functions read element by element and its loops over
    them written out (see the module's docstring); ``local`` gains the names made."""
    if not any(
        (isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript))
        or (isinstance(n, ast.For) and _calls_target(n))
        for s in body
        for n in nodes(s)
    ):
        return body
    tables = _Tables(namer, env, local, body, fail)
    return tables.block(copy_tree(body), top=True)


class _Tables:
    def __init__(
        self, namer: Namer, env: dict[str, Any], local: set[str], body: list[ast.stmt], fail: Fail
    ) -> None:
        self.namer, self.env, self.local, self.fail = namer, env, local, fail
        self.body = body
        stores = Counter(
            n.id for s in body for n in nodes(s) if isinstance(n, ast.Name) and _is_store(n)
        )
        self.stored = set(stores)
        #: names bound once, by a statement at the top level (a nested ``def``, a lambda
        #: bound to a name): every statement after it reads the same function by them
        self.once = {name for s in body for name in _top_level_binding(s) if stores[name] <= 1}
        #: names a loop reads outside every loop binding them (its last value, after it)
        self.read_after = _read_outside_loops(body)
        self.tables: dict[str, tuple[list[Any] | None, list[ast.expr]]] = {}

    # -- which names are tables ---------------------------------------------------
    def table(self, stmt: ast.stmt) -> str | None:
        """The name ``stmt`` binds to a table of functions, where it is one."""
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, (ast.Tuple, ast.List, ast.Dict))
        ):
            return None
        name = stmt.targets[0].id
        value = stmt.value
        if isinstance(value, ast.Dict):
            keys = [_constant(k) for k in value.keys]
            if any(k is _NOT_CONSTANT for k in keys) or len(set(map(repr, keys))) < len(keys):
                return None
        elif any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        stores = [
            n for s in self.body for n in nodes(s) if isinstance(n, ast.Name) and _is_store(n)
        ]
        if sum(n.id == name for n in stores) != 1:
            return None
        called = False
        for use in self.uses(name):
            if use == "call":
                called = True
            elif use != "read":
                return None
        return name if called else None

    def uses(self, name: str) -> list[str]:
        """How the function uses ``name`` apart from binding it: ``call`` (``fs[k](...)``
        or a loop whose variable is called), ``read`` (``fs[k]`` otherwise, a loop),
        ``other``."""
        parents = {c: p for s in self.body for p in nodes(s) for c in ast.iter_child_nodes(p)}
        found = []
        for n in (n for s in self.body for n in nodes(s)):
            if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
                continue
            parent = parents.get(n)
            if isinstance(parent, ast.Subscript) and parent.value is n:
                if _constant(parent.slice) is _NOT_CONSTANT or not isinstance(parent.ctx, ast.Load):
                    found.append("other")
                    continue
                grand = parents.get(parent)
                found.append(
                    "call" if isinstance(grand, ast.Call) and grand.func is parent else "read"
                )
            elif isinstance(parent, ast.For) and parent.iter is n:
                found.append("call" if _calls_target(parent) else "read")
            elif (
                isinstance(parent, ast.Attribute)
                and parent.attr in ("items", "values", "keys")
                and isinstance(parents.get(parent), ast.Call)
                and isinstance(parents.get(parents.get(parent)), ast.For)
            ):
                loop = parents.get(parents.get(parent))
                found.append("call" if _calls_target(loop) else "read")
            else:
                found.append("other")
        return found

    # -- rewriting -----------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], top: bool = False) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            name = self.table(stmt) if top else None
            if name is not None:
                assert isinstance(stmt, ast.Assign)
                out.extend(self.define(name, stmt))
                continue
            stmt = self.substitute(stmt)
            if isinstance(stmt, ast.For):
                unrolled = self.unroll(stmt, top)
                if unrolled is not None:
                    out.extend(self.block(unrolled, top))
                    continue
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, self.block(getattr(stmt, field)))
            out.append(stmt)
        return out

    def define(self, name: str, stmt: ast.Assign) -> list[ast.stmt]:
        """The statements binding the table's elements that need a name of their own;
        the table is noted (its display is gone: every use reads an element)."""
        value = stmt.value
        keys = [_constant(k) for k in value.keys] if isinstance(value, ast.Dict) else None
        elts = value.values if isinstance(value, ast.Dict) else value.elts
        before: list[ast.stmt] = []
        self.tables[name] = (
            keys,
            [self.plain(e, f"{name}_{k}", stmt, before) for k, e in enumerate(elts)],
        )
        return before

    def plain(self, elt: ast.expr, base: str, where: ast.stmt, before: list[ast.stmt]) -> ast.expr:
        """``elt``, or a fresh name bound to it (in ``before``) where it is not a name
        every statement reads the same function by."""
        if self.is_function(elt):
            return elt
        held = self.namer.fresh(base)
        self.local.add(held)
        target = ast.Name(id=held, ctx=ast.Store())
        before.append(ast.copy_location(ast.Assign(targets=[target], value=elt), where))
        return ast.Name(id=held, ctx=ast.Load())

    def substitute(self, stmt: ast.stmt) -> ast.stmt:
        """``stmt`` with each ``fs[k]`` of a table read as its element."""
        tables = self.tables

        class Read(ast.NodeTransformer):
            def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
                self.generic_visit(node)
                if not (isinstance(node.value, ast.Name) and node.value.id in tables):
                    return node
                element = _element(tables[node.value.id], _constant(node.slice))
                if element is None:
                    return node
                return ast.copy_location(copy_tree(element), node)

        return Read().visit(stmt) if self.tables else stmt

    def unroll(self, loop: ast.For, top: bool) -> list[ast.stmt] | None:
        """The loop written out once per function, where it iterates a table or a
        display whose variable it calls."""
        iterations = self.iterations(loop, top)
        if iterations is None:
            return None
        targets = [loop.target] if isinstance(loop.target, ast.Name) else loop.target.elts
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        problem = None
        if len(names) != len(targets):
            problem = "its variables are not plain names"
        elif loop.orelse or _exits(loop.body):
            problem = "it has `break`, `continue` or `else`"
        elif any(name in self.read_after for name in names):
            problem = f"`{names[0]}` is read outside it"
        elif any(
            isinstance(n, ast.Name) and _is_store(n) and n.id in names
            for s in loop.body
            for n in nodes(s)
        ):
            problem = "its body assigns its variable"
        if problem is not None:
            raise self.fail(
                loop,
                "srcgrad writes a loop over functions out once per function (the loop "
                f"variable replaced by each), which it cannot do here: {problem}. Write the "
                "loop without them (compute a flag and test it in the body instead of "
                "`break`), or call each function by its name.",
            )
        out: list[ast.stmt] = []
        for values in iterations:
            given = dict(zip(names, values))

            out.extend(_Put(given).visit(s) for s in copy_tree(loop.body))
        return out or [ast.copy_location(ast.Pass(), loop)]

    def iterations(self, loop: ast.For, top: bool) -> list[list[ast.expr]] | None:
        """The values the loop's variables take, one list per iteration."""
        it = loop.iter
        method = None
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and not it.args
            and not it.keywords
        ):
            method, it = it.func.attr, it.func.value
        if isinstance(it, ast.Name) and it.id in self.tables:
            keys, elts = self.tables[it.id]
            if keys is None:
                return [[e] for e in elts] if method is None else None
            constants = [ast.Constant(k) for k in keys]
            if method in (None, "keys"):
                return [[k] for k in constants]
            if method == "values":
                return [[e] for e in elts]
            return [[k, e] for k, e in zip(constants, elts)] if method == "items" else None
        if (
            method is None
            and isinstance(it, (ast.Tuple, ast.List))
            and not any(isinstance(e, ast.Starred) for e in it.elts)
            and _calls_target(loop)
            and all(self.is_function(e) for e in it.elts)
        ):
            return [[e] for e in it.elts]
        return None

    def is_function(self, elt: ast.expr) -> bool:
        """Whether ``elt`` reads a function the same way in every statement (a module's
        name, a nested ``def``, a parameter never assigned)."""
        return is_static(elt, self.env, self.local) or (
            isinstance(elt, ast.Name)
            and elt.id in self.local
            and (elt.id in self.once or elt.id not in self.stored)
        )


_NOT_CONSTANT = object()


def _constant(node: ast.expr | None) -> Any:
    if node is None:
        return _NOT_CONSTANT
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_CONSTANT
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else _NOT_CONSTANT


def _element(table: tuple[list[Any] | None, list[ast.expr]], key: Any) -> ast.expr | None:
    keys, elts = table
    if key is _NOT_CONSTANT:
        return None
    if keys is None:
        if isinstance(key, int) and -len(elts) <= key < len(elts):
            return elts[key]
        return None
    return elts[keys.index(key)] if key in keys else None


def _is_store(node: ast.Name) -> bool:
    return not isinstance(node.ctx, ast.Load)


def _calls_target(loop: ast.For) -> bool:
    targets = (
        [loop.target] if isinstance(loop.target, ast.Name) else getattr(loop.target, "elts", [])
    )
    names = {t.id for t in targets if isinstance(t, ast.Name)}
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
        for s in loop.body
        for n in nodes(s)
    )


class _Put(ast.NodeTransformer):
    """Each read of a loop variable replaced by (a copy of) its value."""

    def __init__(self, given: dict[str, ast.expr]) -> None:
        self.given = given

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.given and isinstance(node.ctx, ast.Load):
            return ast.copy_location(copy_tree(self.given[node.id]), node)
        return node


def _top_level_binding(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, ast.FunctionDef):
        return [stmt.name]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        return [target.id] if isinstance(target, ast.Name) else []
    return []


def _read_outside_loops(body: list[ast.stmt]) -> set[str]:
    """The names read somewhere no ``for`` binding them as its variable encloses."""
    covered: set[int] = set()
    for loop in (n for s in body for n in nodes(s) if isinstance(n, ast.For)):
        bound = {n.id for n in nodes(loop.target) if isinstance(n, ast.Name)}
        covered |= {
            id(n) for s in loop.body for n in nodes(s) if isinstance(n, ast.Name) and n.id in bound
        }
    return {
        n.id
        for s in body
        for n in nodes(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in covered
    }


def _exits(body: list[ast.stmt]) -> bool:
    """Whether ``body`` has a ``break`` or ``continue`` of its own loop."""
    todo = list(body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return True
        if isinstance(stmt, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(stmt, field, None) or [])
    return False
