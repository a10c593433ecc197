"""Part of normalize: the functions of expressions that need none of the lowering's
state: which dotted names are static (a global, closure or builtin) and their values,
the names a tree binds or a compound statement assigns, a call's ``*``/``**`` displays
written out, an f-string spelled out as the calls Python makes for it."""

from __future__ import annotations

import ast
import types
from typing import Any

from ..astwalk import nodes


def is_static(node: ast.expr, env: dict[str, Any], local: set[str]) -> bool:
    """Whether ``node`` is a dotted name rooted at a global, closure or builtin."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in env and node.id not in local


def _assigned_in_compound(stmts: list[ast.stmt], top: bool = False) -> set[str]:
    """Names assigned inside if/for/while statements (or anywhere, if ``top``),
    and arrays written into (``y[i] = v`` changes ``y`` where it stands)."""
    found: set[str] = set()
    for node in (n for stmt in stmts for n in nodes(stmt)):
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        for t in targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                found.add(t.value.id)
        func = getattr(node, "func", None)
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "append"
            and isinstance(func.value, ast.Name)
        ):
            found.add(func.value.id)
    for stmt in stmts:
        if top or isinstance(stmt, (ast.If, ast.For, ast.While)):
            for node in nodes(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    found.add(node.id)
    return found


#: the builtins an f-string is spelled out with
_FORMAT_CALLS = ("format", "str", "repr", "ascii")
_CONVERSIONS = {ord("s"): "str", ord("r"): "repr", ord("a"): "ascii"}


def spelled_out(node: ast.JoinedStr) -> ast.expr:
    """The f-string ``node`` as the calls Python makes for it: ``f"a{v!r:>8}"`` is
    ``'a' + format(repr(v), '>8')``. Its value is a string: nothing in it is
    differentiated, and a value computed from it is refused where a derivative needs it
    (as ``format`` has no derivative rule)."""
    parts: list[ast.expr] = []
    for value in node.values:
        if isinstance(value, ast.FormattedValue):
            shown = value.value
            if value.conversion in _CONVERSIONS:
                shown = _call(_CONVERSIONS[value.conversion], [shown])
            spec = value.format_spec
            args = [shown] if spec is None else [shown, spelled_out(spec)]
            parts.append(_call("format", args))
        else:
            parts.append(ast.Constant(value=value.value))
    result: ast.expr = parts[0] if parts else ast.Constant(value="")
    for part in parts[1:]:
        result = ast.BinOp(left=result, op=ast.Add(), right=part)
    for made in ast.walk(result):  # (errors point at the f-string)
        if "lineno" in made._attributes and not hasattr(made, "lineno"):
            ast.copy_location(made, node)
    return result


def bound_in(tree: ast.AST) -> set[str]:
    """The names ``tree`` binds anywhere: assigned, parameters, functions, classes and
    imports (a builtin of such a name may be hidden where the code runs)."""
    bound: set[str] = set()
    for node in nodes(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return bound


def _call(name: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])


def _static_value(node: ast.expr, env: dict[str, Any]) -> Any:
    """The value of a dotted name rooted at a global (attributes of modules only)."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    value = env.get(node.id) if isinstance(node, ast.Name) else None
    for attr in reversed(attrs):
        value = getattr(value, attr, None) if isinstance(value, types.ModuleType) else None
    return value


def _unpacked_args(args: list[ast.expr]) -> list[ast.expr]:
    """A call's positional arguments, ``*(a, b)`` and ``*[a, b]`` written out."""
    out: list[ast.expr] = []
    for arg in args:
        if isinstance(arg, ast.Starred) and isinstance(arg.value, (ast.Tuple, ast.List)):
            out.extend(_unpacked_args(arg.value.elts))
        else:
            out.append(arg)
    return out


def _unpacked_keywords(keywords: list[ast.keyword]) -> list[ast.keyword]:
    """A call's keywords, ``**{"w": w}`` written out where each key is a constant string."""
    out: list[ast.keyword] = []
    for kw in keywords:
        value = kw.value
        if (
            kw.arg is None
            and isinstance(value, ast.Dict)
            and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier()
                for k in value.keys
            )
        ):
            out.extend(
                ast.copy_location(ast.keyword(arg=k.value, value=v), v)
                for k, v in zip(value.keys, value.values)
            )
        else:
            out.append(kw)
    return out


def _copy(node: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(node), mode="eval").body
