"""Part of normalize: dicts built in the function and read back by constant keys.

In:  the statements of a user function (plain Python AST), a
:class:`~srcgrad.compiler.transform.naming.Namer`, its free names resolved and its
local names.
Out: the same statements, where a dict built once at the top level of the function
(``{"w": w, "b": b}`` or ``dict(w=w, b=b)``) and never changed has a variable for each
value, which its reads ``d["w"]`` read, and its loops ``for k, v in d.items()``
(``.keys()``, ``.values()``, ``d`` itself) run over a tuple of its keys and values; the
dict itself is still made where the code uses it whole (``return loss, d``, for
``has_aux``), as ``dict(w=d_w, b=d_b)``, which carries no derivative::

    d = {"w": w * 2.0, "b": b}                 d_w = w * 2.0
    y = d["w"] @ x + d["b"]            ==>     d_b = b
    return np.sum(y), d                        y = d_w @ x + d_b
                                               return np.sum(y), dict(w=d_w, b=d_b)

Only where that is exactly Python's meaning: every other use of the dict is in a
``return`` (so nothing can change it before a later read), it is assigned once, and
nothing writes into it (``d["w"] = v``, ``d.update(...)``). Any other dict display with
constant keys is made with ``dict(...)`` as it stands (a value that carries no
derivative: the analysis refuses one that does, saying what to write instead).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..astwalk import copy_tree
from ..transform.naming import Namer

#: the methods whose loops run over a dict's keys, values or both
_VIEWS = ("items", "keys", "values")


def lower_dicts(
    body: list[ast.stmt],
    namer: Namer,
    env: dict[str, Any],
    local: set[str],
    fail: Callable[[ast.AST, str], UnsupportedSyntaxError],
) -> list[ast.stmt]:
    """``body`` with the dicts it builds read through variables (see the module's
    docstring); the user's statements are left as they are. A write into a dict the
    function builds is refused (``fail``)."""
    if not any(isinstance(n, (ast.Dict, ast.Call)) for s in body for n in ast.walk(s)):
        return body
    _refuse_writes(body, env, local, fail)
    found = {}
    for stmt in body:
        entries = _built(stmt, env, local)
        if entries is not None:
            name = stmt.targets[0].id
            found[name] = None if name in found else (stmt, entries)
    candidates = {
        name: entry
        for name, entry in found.items()
        if entry is not None and _only_read(name, body, entry[0], {k for k, _ in entry[1]})
    }
    if not candidates:
        return body
    body = copy_tree(body)
    out: list[ast.stmt] = []
    held: dict[str, dict[Any, str]] = {}
    for stmt in body:
        entries = _built(stmt, env, local)
        name = stmt.targets[0].id if entries is not None else None
        if name in candidates:
            held[name] = {}
            for key, value in entries:
                var = namer.fresh(f"{name}_{key}" if _word(key) else f"{name}_value")
                held[name][key] = var
                target = ast.Name(id=var, ctx=ast.Store())
                out.append(ast.copy_location(ast.Assign(targets=[target], value=value), stmt))
            continue
        out.append(_Reads(held).visit(stmt))
    return out


def make_dict(node: ast.Dict, where: ast.AST) -> ast.Call | None:
    """A dict display with constant keys, each once, as the call of ``dict`` that makes
    it: ``dict(w=w)``, or ``dict([(1, a)])`` for keys that are not names; None for
    others."""
    keys = node.keys
    if not all(isinstance(k, ast.Constant) for k in keys):
        return None
    if len({(type(k.value), k.value) for k in keys}) != len(keys):
        return None  # (a key twice: the last value wins, which a call cannot say)
    func = ast.Name(id="dict", ctx=ast.Load())
    if all(_word(k.value) for k in keys):
        keywords = [ast.keyword(arg=k.value, value=v) for k, v in zip(keys, node.values)]
        call = ast.Call(func=func, args=[], keywords=keywords)
    else:
        pairs = [ast.Tuple(elts=[k, v], ctx=ast.Load()) for k, v in zip(keys, node.values)]
        call = ast.Call(func=func, args=[ast.List(elts=pairs, ctx=ast.Load())], keywords=[])
    for n in ast.walk(call):
        if isinstance(n, ast.expr) and not hasattr(n, "lineno"):
            ast.copy_location(n, where)
    return call


def _refuse_writes(
    body: list[ast.stmt],
    env: dict[str, Any],
    local: set[str],
    fail: Callable[[ast.AST, str], UnsupportedSyntaxError],
) -> None:
    """Refuse ``d[k] = v`` (and ``d[k] += v``, ``del d[k]``) into a name the function
    assigns a dict it builds."""
    built = {
        node.targets[0].id
        for s in body
        for node in ast.walk(s)
        if isinstance(node, ast.Assign) and (_built(node, env, local) is not None or _empty(node))
    }
    for s in body:
        for node in ast.walk(s):
            if (
                isinstance(node, ast.Subscript)
                and not isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name)
                and node.value.id in built
            ):
                raise fail(
                    node,
                    f"`{node.value.id}` is a dict built in the function, which srcgrad reads "
                    "by its keys but does not follow writes into: build it with all its "
                    f'values at once (`{node.value.id} = {{"a": a, "b": b}}`), or use '
                    "variables of their own.",
                )


def _empty(node: ast.Assign) -> bool:
    return (
        len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Dict)
        and not node.value.keys
    )


def _word(key: Any) -> bool:
    return isinstance(key, str) and key.isidentifier() and key not in ("None", "True", "False")


def _built(stmt: ast.stmt, env: dict[str, Any], local: set[str]) -> list[tuple] | None:
    """The keys and values of ``d = {k: v, ...}`` or ``d = dict(k=v, ...)`` (keys that are
    constants, each once), else None."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        return None
    value = stmt.value
    if isinstance(value, ast.Dict):
        if not all(isinstance(k, ast.Constant) for k in value.keys):
            return None
        entries = [(k.value, v) for k, v in zip(value.keys, value.values)]
    elif (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dict"
        and "dict" not in local
        and env.get("dict", builtins.dict) is builtins.dict
        and not value.args
        and all(k.arg is not None for k in value.keywords)
    ):
        entries = [(k.arg, k.value) for k in value.keywords]
    else:
        return None
    keys = [k for k, _ in entries]
    if len(set(keys)) != len(keys) or not all(isinstance(k, (str, int)) for k in keys):
        return None
    return entries


def _only_read(name: str, body: list[ast.stmt], made: ast.stmt, keys: set[Any]) -> bool:
    """Whether the dict ``name`` (made by ``made``, with ``keys``) is only read: by
    constant keys it has, in a loop's header, or whole in a ``return``; never assigned
    again, written into, or given to anything that could change it."""
    for stmt in body:
        if stmt is made:
            continue
        returned = isinstance(stmt, ast.Return)
        allowed = set()
        for node in ast.walk(stmt):
            if isinstance(node, ast.Subscript) and _is(node.value, name):
                key = node.slice
                if not (
                    isinstance(node.ctx, ast.Load)
                    and isinstance(key, ast.Constant)
                    and key.value in keys
                ):
                    return False
                allowed.add(id(node.value))
            elif isinstance(node, ast.For) and _loop_view(node.iter, name) is not None:
                allowed.update(id(n) for n in ast.walk(node.iter) if _is(n, name))
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id == name:
                if not isinstance(node.ctx, ast.Load):
                    return False
                if id(node) not in allowed and not returned:
                    return False
    return True


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _loop_view(node: ast.expr, name: str) -> str | None:
    """``d``, ``d.keys()``, ``d.values()`` or ``d.items()`` as a loop's iterable: which."""
    if _is(node, name):
        return "keys"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _VIEWS
        and _is(node.func.value, name)
        and not node.args
        and not node.keywords
    ):
        return node.func.attr
    return None


class _Reads(ast.NodeTransformer):
    """The reads of the dicts in ``held`` (name -> key -> variable) replaced."""

    def __init__(self, held: dict[str, dict[Any, str]]) -> None:
        self.held = held

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        value, key = node.value, node.slice
        if isinstance(value, ast.Name) and value.id in self.held and isinstance(key, ast.Constant):
            var = self.held[value.id][key.value]  # (a key it has: see _only_read)
            return ast.copy_location(ast.Name(id=var, ctx=ast.Load()), node)
        self.generic_visit(node)
        return node

    def visit_For(self, node: ast.For) -> ast.For:
        for name, keys in self.held.items():
            view = _loop_view(node.iter, name)
            if view is None:
                continue

            def item(key: Any, var: str, view: str = view) -> ast.expr:
                if view == "keys":
                    return ast.Constant(key)
                if view == "values":
                    return ast.Name(id=var, ctx=ast.Load())
                elts = [ast.Constant(key), ast.Name(id=var, ctx=ast.Load())]
                return ast.Tuple(elts=elts, ctx=ast.Load())

            elts = [item(k, v) for k, v in keys.items()]
            new = ast.Tuple(elts=elts, ctx=ast.Load())
            for n in ast.walk(new):
                ast.copy_location(n, node.iter)
            node.iter = new
            break
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.held and isinstance(node.ctx, ast.Load):  # (whole, returned)
            keywords = {k: ast.Name(id=v, ctx=ast.Load()) for k, v in self.held[node.id].items()}
            display = ast.Dict(
                keys=[ast.Constant(k) for k in keywords], values=list(keywords.values())
            )
            for n in ast.walk(display):
                ast.copy_location(n, node)
            return display
        return node
