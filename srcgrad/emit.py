"""Stage 6, emit: generated functions in, a compiled standalone module out.

In:  the generated ``FunctionDef`` s, the :class:`~srcgrad.builder.Builder`
that named them, the user's resolved free names and the backend.
Out: :class:`Module`: the source text (``.source``: imports, the runtime
helpers it calls, the functions), and the namespace it was executed in.

The text is compiled under a file name registered with :mod:`linecache`, so
tracebacks and debuggers show its lines; it is executed in a fresh
namespace, never the user's module globals.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import itertools
import linecache
import math
import sys
import types
from dataclasses import dataclass
from typing import Any

from . import runtime
from .backends import Backend
from .builder import HELPERS, Builder

_counter = itertools.count(1)


@dataclass
class Module:
    source: str
    filename: str
    namespace: dict[str, Any]

    def function(self, name: str) -> Any:
        return self.namespace[name]


def render(
    funcs: list[ast.FunctionDef],
    builder: Builder,
    env: dict[str, Any],
    backend: Backend,
    title: str,
    user_module: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The module text, and the bindings the text's imports stand for."""
    used = {n.id for f in funcs for n in ast.walk(f) if isinstance(n, ast.Name)}
    helpers = _helpers_needed(used, builder)
    header, bindings = _imports(used | {builder.xp}, builder, env, backend, user_module)
    body: list[ast.stmt] = []
    for h in helpers:
        body.append(_helper_def(h, builder))
    body.extend(funcs)
    ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    code = "\n\n\n".join(ast.unparse(node) for node in body)
    text = f'"""{title}"""\n' + "\n".join(header) + "\n\n\n" + code + "\n"
    return text, bindings


def load(text: str, bindings: dict[str, Any], label: str) -> Module:
    """Compile ``text`` under a linecache-registered name and execute it."""
    filename = f"<srcgrad-{next(_counter)}: {label}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict[str, Any] = dict(bindings)
    namespace["__name__"] = "srcgrad_generated"
    exec(compile(text, filename, "exec"), namespace)
    return Module(source=text, filename=filename, namespace=namespace)


def _helpers_needed(used: set[str], builder: Builder) -> list[str]:
    """Helpers the code calls, with the helpers those call, in runtime order."""
    wanted = {h for h in HELPERS if builder.helpers[h] in used}
    todo = list(wanted)
    while todo:
        h = todo.pop()
        for n in ast.walk(_helper_tree(h)):
            if isinstance(n, ast.Name) and n.id in HELPERS and n.id not in wanted:
                wanted.add(n.id)
                todo.append(n.id)
    return [h for h in HELPERS if h in wanted]


#: the source of every runtime helper, read once (so a later edit of runtime.py
#: cannot mix one helper's name with another's text)
_HELPER_SOURCES = {h: inspect.getsource(getattr(runtime, h)) for h in HELPERS}


def _helper_tree(h: str) -> ast.FunctionDef:
    return ast.parse(_HELPER_SOURCES[h]).body[0]


def _helper_def(h: str, builder: Builder) -> ast.FunctionDef:
    tree = _helper_tree(h)
    rename = {"np": builder.xp, **builder.helpers}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in rename:
            node.id = rename[node.id]
    tree.name = builder.helpers[h]
    return tree


def _import_line(name: str, value: Any) -> str | None:
    """An import statement binding ``name`` to ``value``, if one exists."""
    if isinstance(value, types.ModuleType):
        mod = value.__name__
        if "." in mod:
            parent, _, leaf = mod.rpartition(".")
            return f"from {parent} import {leaf}" + ("" if leaf == name else f" as {name}")
        return f"import {mod}" + ("" if mod == name else f" as {name}")
    mod = getattr(value, "__module__", None)
    qual = getattr(value, "__qualname__", getattr(value, "__name__", None))
    if mod and qual and "." not in qual and "<" not in qual:
        public = _public_module(mod, qual, value)
        if public:
            return f"from {public} import {qual}" + ("" if qual == name else f" as {name}")
    return None


def _public_module(mod: str, qual: str, value: Any) -> str | None:
    parts = mod.split(".")
    for k in range(1, len(parts) + 1):  # numpy rather than numpy._core.umath
        candidate = ".".join(parts[:k])
        module = sys.modules.get(candidate)
        if module is not None and getattr(module, qual, None) is value:
            return candidate
    return None


def _imports(
    used: set[str], builder: Builder, env: dict[str, Any], backend: Backend, user_module: str | None
) -> tuple[list[str], dict[str, Any]]:
    lines: list[str] = []
    bindings: dict[str, Any] = {}
    names = sorted(n for n in used if n in env or n in (builder.xp, builder.math))
    for name in names:
        tag = getattr(env.get(name), "__srcgrad_helper__", None)
        if builder.helpers.get(tag) == name:
            continue  # a helper of generated code: this module defines it again
        if name == builder.xp:
            value: Any = backend.module
        elif name == builder.math:
            value = math
        else:
            value = backend.rebind(env[name])
        bindings[name] = value
        if getattr(builtins, name, _MISSING) is value:
            continue
        line = _import_line(name, value)
        if line is None:
            if user_module and getattr(sys.modules.get(user_module), name, _MISSING) is value:
                line = f"from {user_module} import {name}"
        if line is None:
            line = f"# {name} = {_short_repr(value)}  (a closure value, passed in by srcgrad)"
        lines.append(line)
    modules = sorted({line for line in lines if line.startswith("import ")})
    froms = sorted({line for line in lines if line.startswith("from ")})
    notes = [line for line in lines if line.startswith("#")]
    return modules + froms + notes, bindings


_MISSING = object()


def _short_repr(value: Any) -> str:
    text = repr(value).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."
