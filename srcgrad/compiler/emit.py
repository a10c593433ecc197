"""Stage 6, emit: generated functions in, a compiled standalone module out.

In:  the generated ``FunctionDef`` s, the :class:`~srcgrad.compiler.transform.builder.Builder`
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
import functools
import inspect
import itertools
import keyword
import linecache
import math
import sys
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import numba_helpers
from ..backends import Backend
from .astwalk import nodes, unparse
from .transform.builder import (
    HELPER_FUNCTIONS,
    HELPERS,
    Builder,
    comment,
    comment_text,
    function_def,
    is_comment,
)
from .transform.naming import Namer, names_in

_counter = itertools.count(1)

#: the ``__name__`` of every generated module's namespace
GENERATED = "srcgrad_generated"


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
    """The module text, and the bindings the text's imports stand for.

    Every piece of the text is unparsed from AST nodes: the title is the docstring's
    ``ast.Constant``, imports are ``ast.Import`` nodes whose names were checked as
    (dotted) identifiers, and notes are comments made safe by
    :func:`~srcgrad.compiler.transform.builder.comment_text`. No user-controlled text (a
    qualname, a file name, a repr) is ever formatted into the source.
    """
    every = [n for f in funcs for n in nodes(f)]
    passed = _pass_constants(funcs, every)
    env = {**env, **passed}
    used = {n.id for n in every if type(n) is ast.Name} | set(passed)
    helpers = _helpers_needed(used, builder)
    header, bindings = _imports(used | {builder.xp}, builder, env, backend, user_module)
    code = "\n\n\n".join([*(_helper_text(h, builder) for h in helpers), *map(unparse, funcs)])
    title_node = ast.Expr(ast.Constant(comment_text(title)))  # (one line, whatever it names)
    docstring = ast.unparse(ast.Module(body=[title_node], type_ignores=[]))
    imports = "\n".join(ast.unparse(node) for node in header)
    return f"{docstring}\n{imports}\n\n\n{code}\n", bindings


#: the types whose constants ``ast.unparse`` writes as canonical literals (its text for
#: any other value, a float subclass say, is that value's ``repr``, which anyone can write)
_LITERAL_TYPES = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


def _is_literal(value: Any) -> bool:
    if type(value) in (tuple, frozenset):
        return all(_is_literal(v) for v in value)
    return type(value) in _LITERAL_TYPES


def _pass_constants(funcs: list[ast.FunctionDef], every: list[ast.AST]) -> dict[str, Any]:
    """Replace each constant that is not of a literal type (a numpy scalar, a subclass of
    float with its own ``repr``: a default argument of the user's, say) by a name bound
    to the object itself, which the module notes and passes in; the names, by value.
    ``every``: the nodes of ``funcs``."""
    if all(_is_literal(n.value) for n in every if type(n) is ast.Constant):
        return {}
    namer = Namer(set().union(*(names_in(f) for f in funcs)))
    passed: dict[str, Any] = {}

    class Bind(ast.NodeTransformer):
        def visit_Constant(self, node: ast.Constant) -> ast.expr:
            if _is_literal(node.value):
                return node
            name = next((k for k, v in passed.items() if v is node.value), None)
            if name is None:
                name = namer.fresh("constant")
                passed[name] = node.value
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)

    for f in funcs:
        Bind().visit(f)
    return passed


def load(text: str, bindings: dict[str, Any], label: str) -> Module:
    """Compile ``text`` under a linecache-registered name and execute it.

    The :mod:`linecache` entry lives as long as the module's functions: it is removed
    when they are freed (each holds the namespace, which holds them all, so they go
    together), so generating code for many short-lived functions keeps no text.
    """
    filename = f"<srcgrad-{next(_counter)}: {comment_text(label)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict[str, Any] = dict(bindings)
    namespace["__name__"] = GENERATED
    try:
        exec(compile(text, filename, "exec"), namespace)
    except BaseException:
        linecache.cache.pop(filename, None)
        raise
    made = [v for v in namespace.values() if getattr(v, "__globals__", None) is namespace]
    if made:
        weakref.finalize(made[0], _forget, filename)
    else:
        linecache.cache.pop(filename, None)
    return Module(source=text, filename=filename, namespace=namespace)


def _forget(filename: str) -> None:
    """Remove the linecache entry of a generated module that was freed."""
    linecache.cache.pop(filename, None)


def _helpers_needed(used: set[str], builder: Builder) -> list[str]:
    """Helpers the code calls, with the helpers those call, in runtime order."""
    wanted = {h for h in HELPERS if builder.helpers[h] in used}
    todo = list(wanted)
    while todo:
        for n in _helper_calls(todo.pop(), builder.profile):
            if n not in wanted:
                wanted.add(n)
                todo.append(n)
    return [h for h in HELPERS if h in wanted]


@functools.cache
def _helper_calls(h: str, profile: str | None = None) -> frozenset[str]:
    """The helpers the helper ``h`` calls (read once), in the form of ``profile``."""
    tree = _helper_tree(h, profile)
    return frozenset(n.id for n in nodes(tree) if isinstance(n, ast.Name) and n.id in HELPERS)


#: the text of each helper as generated code names it: by (helper, array module's name,
#: every helper's name), since a helper's text names the helpers it calls
_HELPER_TEXTS: dict[tuple[str, str, tuple[str, ...]], str] = {}


def _helper_text(h: str, builder: Builder) -> str:
    key = (h, builder.xp, tuple(builder.helpers[n] for n in HELPERS), builder.profile)
    text = _HELPER_TEXTS.get(key)
    if text is None:
        text = _HELPER_TEXTS[key] = unparse(_helper_def(h, builder))
    return text


#: the source of every runtime helper, read once (so a later edit of runtime.py
#: cannot mix one helper's name with another's text)
_HELPER_SOURCES = {h: inspect.getsource(f) for h, f in HELPER_FUNCTIONS.items()}

#: the same for the numba profile's forms of some (``srcgrad.numba_helpers``)
_NUMBA_SOURCES = {h: inspect.getsource(f) for h, f in numba_helpers.FORMS.items()}


def _helper_tree(h: str, profile: str | None = None) -> ast.FunctionDef:
    if profile == "numba" and h in _NUMBA_SOURCES:
        return ast.parse(_NUMBA_SOURCES[h]).body[0]
    return ast.parse(_HELPER_SOURCES[h]).body[0]


def _helper_def(h: str, builder: Builder) -> ast.FunctionDef:
    tree = _helper_tree(h, builder.profile)
    rename = {"np": builder.xp, **builder.helpers}
    for node in nodes(tree):
        if isinstance(node, ast.Name) and node.id in rename:
            node.id = rename[node.id]
    tree.name = builder.helpers[h]
    return tree


def _import_node(name: str, value: Any) -> ast.stmt | None:
    """An import statement binding ``name`` to ``value``, if one exists (with names that
    are identifiers: a module or qualname that is not gets no import)."""
    if isinstance(value, types.ModuleType):
        mod = value.__name__
        if not _is_dotted(mod):
            return None
        if "." in mod:
            parent, _, leaf = mod.rpartition(".")
            return _from_import(parent, leaf, name)
        return ast.Import(names=[ast.alias(name=mod, asname=None if mod == name else name)])
    mod = getattr(value, "__module__", None)
    qual = getattr(value, "__qualname__", getattr(value, "__name__", None))
    if isinstance(mod, str) and isinstance(qual, str) and _is_identifier(qual):
        public = _public_module(mod, qual, value)
        if public:
            return _from_import(public, qual, name)
    return None


def _from_import(module: str, attr: str, name: str) -> ast.ImportFrom:
    """``from module import attr`` (``as name`` where they differ)."""
    alias = ast.alias(name=attr, asname=None if attr == name else name)
    return ast.ImportFrom(module=module, names=[alias], level=0)


def _is_identifier(text: Any) -> bool:
    """Whether ``text`` may stand in source as a name (an identifier, not a keyword)."""
    return isinstance(text, str) and text.isidentifier() and not keyword.iskeyword(text)


def _is_dotted(text: Any) -> bool:
    """Whether ``text`` may stand in source as a module path (``numpy.linalg``)."""
    return isinstance(text, str) and all(_is_identifier(part) for part in text.split("."))


def _public_module(mod: str, qual: str, value: Any) -> str | None:
    if not _is_dotted(mod):
        return None
    parts = mod.split(".")
    for k in range(1, len(parts) + 1):  # numpy rather than numpy._core.umath
        candidate = ".".join(parts[:k])
        module = sys.modules.get(candidate)
        if module is not None and getattr(module, qual, None) is value:
            return candidate
    return None


def _imports(
    used: set[str], builder: Builder, env: dict[str, Any], backend: Backend, user_module: str | None
) -> tuple[list[ast.stmt], dict[str, Any]]:
    """The header's statements (imports, then notes on values passed in), and the
    bindings they stand for."""
    nodes: list[ast.stmt] = []
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
        assert _is_identifier(name), name  # (a name of the user's source, or one srcgrad made)
        node = _import_node(name, value)
        if (
            node is None
            and _is_dotted(user_module)
            and getattr(sys.modules.get(user_module or ""), name, _MISSING) is value
        ):
            node = _from_import(user_module, name, name)
        if node is None:
            node = comment(f"{name} = {_short_repr(value)}  (a value srcgrad passes in)")
        nodes.append(node)
    by_text = {ast.unparse(node): node for node in nodes}
    modules = sorted(t for t, node in by_text.items() if isinstance(node, ast.Import))
    froms = sorted(t for t, node in by_text.items() if isinstance(node, ast.ImportFrom))
    notes = [t for t, node in by_text.items() if is_comment(node)]
    return [by_text[t] for t in modules + froms + notes], bindings


_MISSING = object()


def _short_repr(value: Any) -> str:
    """The start of ``repr(value)``, for a comment (which :func:`comment` makes safe)."""
    try:
        text = repr(value)
    except Exception:  # a repr that fails is no reason not to generate the code
        text = f"<{type(value).__name__} object>"
    text = comment_text(text.replace("\n", " "))  # (a numpy array's rows on one line)
    return text if len(text) <= 60 else text[:57] + "..."


def unit_tangent_wrapper(
    derived: Any, params: list[str], wrt: str, name: str
) -> Callable[..., Any]:
    """A generated function returning the forward-mode derivative with respect to the
    scalar ``wrt``: one call of the jvp ``derived`` (a ``driver.Derived``) with a unit
    tangent. It has
    source, so it can be differentiated again (third and higher order).

    The module is built from AST nodes: ``name`` (the user's function's, which may be
    any text) appears only in the docstring's ``ast.Constant``, and the parameters are
    checked as identifiers::

        def d_f(x, y):
            _, x_derivative = jvp_f(x, y, x * 0.0 + 1.0)
            return x_derivative
    """
    for p in params:
        if not p.isidentifier() or keyword.iskeyword(p):
            raise TypeError(
                f"srcgrad cannot differentiate {name!r} again: its parameter {p!r} is not a name"
            )
    namer = Namer({*params, derived.name})
    function = namer.fresh("d_" + derived.name.removeprefix("jvp_"))  # (a lambda's: jvp_lambda)
    value, tangent = namer.fresh("_"), namer.fresh(f"{wrt}_derivative")
    unit = ast.BinOp(
        left=ast.BinOp(
            left=ast.Name(id=wrt, ctx=ast.Load()), op=ast.Mult(), right=ast.Constant(0.0)
        ),
        op=ast.Add(),
        right=ast.Constant(1.0),
    )
    call = ast.Call(
        func=ast.Name(id=derived.name, ctx=ast.Load()),
        args=[*(ast.Name(id=p, ctx=ast.Load()) for p in params), unit],
        keywords=[],
    )
    pair = ast.Tuple(
        elts=[ast.Name(id=value, ctx=ast.Store()), ast.Name(id=tangent, ctx=ast.Store())],
        ctx=ast.Store(),
    )
    body: list[ast.stmt] = [
        ast.Assign(targets=[pair], value=call),
        ast.Return(value=ast.Name(id=tangent, ctx=ast.Load())),
    ]
    title = f"The derivative of {name} with respect to {wrt}, generated by srcgrad."
    docstring = ast.Module(body=[ast.Expr(ast.Constant(title))], type_ignores=[])
    text = f"{ast.unparse(docstring)}\n\n\n{unparse(function_def(function, params, body))}\n"
    module = load(text, {derived.name: derived.function}, f"derivative of {name}")
    return module.function(function)


def in_errstate(func: ast.FunctionDef, settings: dict[str, str], xp: str) -> None:
    """``func``'s body (its docstring left out) under ``with np.errstate(**settings):``,
    as the user's function ran its ``with np.errstate`` blocks (``normalize.contexts``)."""
    body = func.body
    doc = body[:1] if body and isinstance(body[0], ast.Expr) and _is_text(body[0].value) else []
    call = ast.Call(
        func=ast.Attribute(value=ast.Name(id=xp, ctx=ast.Load()), attr="errstate", ctx=ast.Load()),
        args=[],
        keywords=[ast.keyword(arg=k, value=ast.Constant(v)) for k, v in sorted(settings.items())],
    )
    block = ast.With(items=[ast.withitem(context_expr=call)], body=body[len(doc) :])
    func.body = [*doc, ast.fix_missing_locations(ast.copy_location(block, func))]


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)
