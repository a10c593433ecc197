"""Part of normalize: dicts built in the function and read back by constant keys.

In:  the statements of a user function (plain Python AST), a
:class:`~srcgrad.compiler.transform.naming.Namer`, its free names resolved and its
local names.
Out: the same statements, where a dict built once at the top level of the function
(``{"w": w, "b": b}``, ``dict(w=w, b=b)`` or ``{}``) has a variable for each key, which
its reads ``d["w"]`` (``d.get("w", v)``, ``"w" in d``, ``len(d)``) read, and its loops
``for k, v in d.items()`` (``.keys()``, ``.values()``, ``d`` itself) and comprehensions
run over a tuple of its keys and values; a write ``d["w"] = v`` (or ``d["w"] += v``) in
the function's top level assigns the key's variable, so each read sees the dict as it is
at its line. The dict itself is still made where the code uses it whole
(``return loss, d``, for ``has_aux``), as ``dict(w=d_w, b=d_b)``, which carries no
derivative::

    d = {"w": w * 2.0}                         d_w = w * 2.0
    d["b"] = b                                 d_b = b
    y = d["w"] @ x + d["b"]            ==>     y = d_w @ x + d_b
    return np.sum(y), d                        return np.sum(y), dict(w=d_w, b=d_b)

Only where that is exactly Python's meaning: every other use of the dict is in a
``return`` (so nothing can change it before a later read), it is assigned once, every
key is a constant, and every write is in the top level (a write in a loop, under an
``if``, by a computed key, ``del d["w"]`` or through another name is refused). Any other
dict display with constant keys is made with ``dict(...)`` as it stands (a value that
carries no derivative: the analysis refuses one that does, saying what to write instead).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..astwalk import copy_tree, nodes
from ..transform.naming import Namer
from .constants import UNKNOWN, constant_value
from .dict_comprehensions import LATER, expand_comprehension

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
    docstring); the user's statements are left as they are (``body`` itself is returned
    where there is no such dict). A write into a dict the function builds that this does
    not follow is refused (``fail``)."""
    if not any(isinstance(n, (ast.Dict, ast.Call)) for s in body for n in nodes(s)):
        return body
    found: dict[str, Any] = {}
    for stmt in body:
        entries = _built(stmt, env, local)
        if entries is not None:
            name = stmt.targets[0].id
            found[name] = None if name in found else (stmt, entries)
    candidates = {
        name: entry
        for name, entry in found.items()
        if entry is not None and _followed(name, body, entry[0], env, local)
    }
    _refuse_writes(body, env, local, fail, set(candidates))
    if not candidates:
        return body
    lowering = _Lowering(namer, env, local, fail)
    out: list[ast.stmt] = []
    for stmt in copy_tree(body):
        entries = _built(stmt, env, local)
        name = stmt.targets[0].id if entries is not None else None
        if name in candidates:
            lowering.held[name] = {}
            for key, value in entries:
                out.append(lowering.write(stmt, name, key, value))
            continue
        write = _written(stmt, candidates, env, local)
        if write is not None:
            out.append(lowering.write(stmt, *write))
            continue
        out.append(lowering.visit(stmt))
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
    for n in nodes(call):
        if isinstance(n, ast.expr) and not hasattr(n, "lineno"):
            ast.copy_location(n, where)
    return call


def _refuse_writes(
    body: list[ast.stmt],
    env: dict[str, Any],
    local: set[str],
    fail: Callable[[ast.AST, str], UnsupportedSyntaxError],
    followed: set[str],
) -> None:
    """Refuse ``d[k] = v`` (and ``d[k] += v``, ``del d[k]``) into a name the function
    assigns a dict it builds, where :func:`_followed` does not follow it."""
    built = {
        node.targets[0].id
        for s in body
        for node in nodes(s)
        if isinstance(node, ast.Assign) and (_built(node, env, local) is not None or _empty(node))
    }
    for s in body:
        for node in nodes(s):
            if (
                isinstance(node, ast.Subscript)
                and not isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name)
                and node.value.id in built - followed
            ):
                raise fail(
                    node,
                    f"`{node.value.id}` is a dict built in the function, which srcgrad reads "
                    "by its keys but does not follow writes into here: it follows a write "
                    f'with a constant key (`{node.value.id}["a"] = v`) in the function\'s '
                    "top level (not in a loop or under an `if`), into a dict assigned once "
                    "and used only by its keys. Build it with all its values at once "
                    f'(`{node.value.id} = {{"a": a, "b": b}}`), or use variables of their own.',
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


def _suffix(key: Any) -> str:
    """What a key adds to its variable's name: ``d_w``, ``d_0``, ``d_0_1``."""
    parts = key if isinstance(key, tuple) else (key,)
    if all(_word(p) or (type(p) is int and p >= 0) for p in parts) and parts:
        return "_".join(str(p) for p in parts)
    return "value"


def _key(node: ast.expr) -> Any:
    """The value of a constant key (a str, an int, or a tuple of those), else UNKNOWN."""
    value = constant_value(node, {}, set())
    return value if _keylike(value) else UNKNOWN


def _keylike(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_keylike(v) for v in value)
    return type(value) in (str, int)


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
        if any(k is None for k in value.keys):
            return None
        entries = [(_key(k), v) for k, v in zip(value.keys, value.values)]
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
    if len(set(keys)) != len(keys) or UNKNOWN in keys:
        return None
    return entries


def _written(
    stmt: ast.stmt, names: Any, env: dict[str, Any], local: set[str]
) -> tuple[str, Any, ast.expr] | None:
    """``d[k] = v`` (or ``d[k] += v``, as ``d[k] = d[k] + v``) into a dict of ``names``,
    with a constant key: the dict, the key and the value written."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript):
        target = stmt.target
        read = ast.copy_location(
            ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load()), target
        )
        value = ast.copy_location(ast.BinOp(left=read, op=stmt.op, right=stmt.value), stmt)
    else:
        return None
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return None
    key = _key(target.slice)
    if target.value.id not in names or key is UNKNOWN:
        return None
    return target.value.id, key, value


def _followed(
    name: str, body: list[ast.stmt], made: ast.stmt, env: dict[str, Any], local: set[str]
) -> bool:
    """Whether srcgrad follows the dict ``name`` (made by ``made``): it is read by constant
    keys (``d["w"]``, ``d.get("w", v)``, ``"w" in d``, ``len(d)``), iterated (a loop's or a
    comprehension's header) or returned whole, and written into with constant keys in the
    function's top level only; never assigned again, nor given to anything that could
    change it."""
    plain_len = "len" not in local and env.get("len", builtins.len) is builtins.len
    for stmt in body:
        if stmt is made:
            continue
        allowed = set()
        written = _written(stmt, {name}, env, local)
        if written is not None:
            allowed.add(id(getattr(stmt, "target", None) or stmt.targets[0]))
        for node in nodes(stmt):
            if isinstance(node, ast.Subscript) and _is(node.value, name):
                if _key(node.slice) is UNKNOWN:
                    return False
                if not isinstance(node.ctx, ast.Load) and id(node) not in allowed:
                    return False
                allowed.add(id(node.value))
            allowed.update(id(n) for n in _views(node, name, plain_len))
        for node in nodes(stmt):
            if isinstance(node, ast.Name) and node.id == name:
                if not isinstance(node.ctx, ast.Load):
                    return False
                if id(node) not in allowed and not isinstance(stmt, ast.Return):
                    return False
    return True


def _views(node: ast.AST, name: str, plain_len: bool) -> list[ast.AST]:
    """The names ``name`` in ``node`` that read the dict by constant keys or iterate it
    (``d.get("w")``, ``"w" in d``, ``len(d)``, a loop's or a comprehension's header)."""
    if isinstance(node, ast.For):
        iterables = [node.iter]
    elif isinstance(node, (ast.DictComp, ast.SetComp, ast.ListComp, ast.GeneratorExp)):
        iterables = [g.iter for g in node.generators]
    elif _get(node, name) is not None or (plain_len and _length(node, name)):
        return [node.func.value if isinstance(node.func, ast.Attribute) else node.args[0]]
    elif _membership(node, name) is not None:
        return [node.comparators[0]]
    else:
        return []
    return [n for i in iterables if _loop_view(i, name) is not None for n in nodes(i)]


def _get(node: ast.AST, name: str) -> tuple[Any, ast.expr | None] | None:
    """``d.get(k)`` or ``d.get(k, default)`` with a constant key: the key and default."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and _is(node.func.value, name)
        and 1 <= len(node.args) <= 2
        and not node.keywords
        and _key(node.args[0]) is not UNKNOWN
    ):
        return _key(node.args[0]), (node.args[1] if len(node.args) == 2 else None)
    return None


def _length(node: ast.AST, name: str) -> bool:
    """``len(d)`` (the builtin: generated code never shadows it)."""
    return (
        isinstance(node, ast.Call)
        and _is(node.func, "len")
        and len(node.args) == 1
        and _is(node.args[0], name)
        and not node.keywords
    )


def _membership(node: ast.AST, name: str) -> Any:
    """``k in d`` or ``k not in d`` with a constant key: the key, else None."""
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], (ast.In, ast.NotIn))
        and _is(node.comparators[0], name)
        and _key(node.left) is not UNKNOWN
    ):
        return _key(node.left)
    return None


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


class _Lowering(ast.NodeTransformer):
    """The dicts followed, read through their variables: ``held``, each dict's keys (in
    their order) and the variable holding each key's value at this point."""

    def __init__(
        self,
        namer: Namer,
        env: dict[str, Any],
        local: set[str],
        fail: Callable[[ast.AST, str], UnsupportedSyntaxError],
    ) -> None:
        self.namer = namer
        self.env = env
        self.local = local
        self.fail = fail
        self.held: dict[str, dict[Any, str]] = {}
        self.conditional = False  # (in a branch, a loop, after `and`, in `a if c else b`)
        self.plain_len = "len" not in local and env.get("len", builtins.len) is builtins.len

    def write(self, stmt: ast.stmt, name: str, key: Any, value: ast.expr) -> ast.stmt:
        """``name[key] = value`` as the assignment of the key's variable (a new one for a
        new key: the dict keeps its keys in the order they came)."""
        value = self.visit(value)  # (the reads in it, of the dicts as they are before)
        var = self.held[name].get(key) or self.namer.fresh(f"{name}_{_suffix(key)}")
        self.held[name][key] = var
        target = ast.Name(id=var, ctx=ast.Store())
        return ast.copy_location(ast.Assign(targets=[target], value=value), stmt)

    def read(self, node: ast.AST, name: str, key: Any) -> ast.expr:
        """The variable of ``name[key]``; for a key the dict does not have here, an
        error where every path reads it, else a read of an empty dict, which raises
        Python's KeyError where it runs (``if "b" in d: d["b"]`` is no error)."""
        if key not in self.held[name] and not self.conditional:
            raise self.fail(
                node,
                f"`{name}` has no key {key!r} here (Python raises KeyError): srcgrad follows "
                "the keys a dict built in the function has at each line. Write the key "
                "before reading it, or read it with `.get(key, default)`.",
            )
        if key not in self.held[name]:
            empty = ast.Dict(keys=[], values=[])
            read = ast.Subscript(value=empty, slice=ast.Constant(key), ctx=ast.Load())
            for n in nodes(read):
                ast.copy_location(n, node)
            return read
        return ast.copy_location(ast.Name(id=self.held[name][key], ctx=ast.Load()), node)

    def visit(self, node: ast.AST) -> Any:
        conditional = self.conditional
        if isinstance(node, (ast.If, ast.For, ast.While, ast.IfExp, ast.BoolOp)):
            self.conditional = True  # (more than needed: an if's test runs always)
        try:
            return super().visit(node)
        finally:
            self.conditional = conditional

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        value = node.value
        if isinstance(value, ast.Name) and value.id in self.held:
            return self.read(node, value.id, _key(node.slice))  # (a constant: _followed)
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        for name in self.held:
            got = _get(node, name)
            if got is not None:
                key, default = got
                if key in self.held[name]:
                    return self.read(node, name, key)
                return self.visit(default or ast.copy_location(ast.Constant(None), node))
            if self.plain_len and _length(node, name):
                return ast.copy_location(ast.Constant(len(self.held[name])), node)
        self.generic_visit(node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        for name in self.held:
            key = _membership(node, name)
            if key is not None:
                found = (key in self.held[name]) == isinstance(node.ops[0], ast.In)
                return ast.copy_location(ast.Constant(found), node)
        self.generic_visit(node)
        return node

    def comprehension(self, node: ast.DictComp | ast.SetComp) -> ast.expr:
        def keyed(target: ast.Name) -> Any:
            if target.id not in self.held:
                return LATER  # (refused later where srcgrad does not know its keys)
            return [(k, ast.Name(id=v, ctx=ast.Load())) for k, v in self.held[target.id].items()]

        expanded = expand_comprehension(node, self.env, self.local, self.fail, keyed)
        if expanded is node:
            self.generic_visit(node)
            return node
        return self.visit(expanded)

    visit_DictComp = visit_SetComp = comprehension

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
            for n in nodes(new):
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
            for n in nodes(display):
                ast.copy_location(n, node)
            return display
        return node
