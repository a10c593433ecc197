"""Part of normalize: a function with ``**kwargs`` that the differentiated function
calls, made for the keywords a call gives it.

In:  a user's function with a ``**kwargs`` parameter, and the keywords of a call of it
(the analysis finds the call: ``analyze.classify``).
Out: a *variant* of the function, the same code with a signature of its own: each
keyword its named parameters do not take is a keyword-only parameter (``kw_a`` for
``a``), and :func:`with_keywords` lowers its body as if it began by building the dict
from them at once, which ``normalize.dicts`` reads by its keys::

    def h(x, **kw):                          def h(x, *, kw_a, kw_b):
        return x * kw["a"] + kw.get("b")  ==>    kw = {"a": kw_a, "b": kw_b}
                                                 return x * kw["a"] + kw.get("b")
    h(x, a=2.0, b=x)                         h(x, kw_a=2.0, kw_b=x)

Each set of keywords gets its own variant (made once, kept while the function lives), so
the derivative srcgrad makes for each is its own, like one for other argument ranks.
"""

from __future__ import annotations

import ast
import inspect
import types
import weakref
from typing import Any

from ..astwalk import copy_tree, nodes
from ..parse import ParsedFunction

_VARIANTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def keyword_variant(func: Any, kws: list[ast.keyword]) -> tuple[Any, list[ast.keyword]]:
    """For a call of ``func`` with the keywords ``kws``: the variant of ``func`` that
    takes them, and the keywords renamed to its parameters (``func`` and ``kws`` where
    ``func`` has no ``**kwargs``)."""
    try:
        signature = inspect.signature(func, follow_wrapped=False)
    except (TypeError, ValueError):
        return func, kws
    params = list(signature.parameters.values())
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params) or any(
        k.arg is None for k in kws
    ):
        return func, kws
    named = {p.name for p in params if p.kind in _NAMED}
    extra = tuple(k.arg for k in kws if k.arg not in named)
    variants = _VARIANTS.setdefault(func, {})
    if extra not in variants:
        variants[extra] = _variant(func, signature, extra)
    variant = variants[extra]
    rename = {key: param for param, key in variant.__srcgrad_keywords__.items()}
    renamed = [
        ast.copy_location(ast.keyword(arg=rename.get(k.arg, k.arg), value=k.value), k)
        if k.arg not in named
        else k
        for k in kws
    ]
    return variant, renamed


def _variant(func: Any, signature: inspect.Signature, extra: tuple[str, ...]) -> Any:
    code = func.__code__
    params = list(signature.parameters.values())
    kwargs = next(p.name for p in params if p.kind is inspect.Parameter.VAR_KEYWORD)
    taken = {*code.co_varnames, *code.co_names, *code.co_freevars, *code.co_cellvars}
    taken.update(signature.parameters)
    mapping: dict[str, str] = {}
    for key in extra:
        base = candidate = f"{kwargs}_{key}"
        n = 1
        while candidate in taken:
            candidate, n = f"{base}_{n}", n + 1
        taken.add(candidate)
        mapping[candidate] = key
    variant = types.FunctionType(
        code, func.__globals__, func.__name__, func.__defaults__, func.__closure__
    )
    variant.__kwdefaults__ = func.__kwdefaults__
    variant.__qualname__ = func.__qualname__
    variant.__module__ = func.__module__
    kept = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
    added = [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in mapping]
    variant.__signature__ = signature.replace(parameters=[*kept, *added])
    variant.__srcgrad_keywords__ = mapping
    return variant


def with_keywords(parsed: ParsedFunction) -> ParsedFunction:
    """``parsed`` for a variant (see the module's docstring): its ``**kwargs`` a
    keyword-only parameter per keyword, and the dict built from them first; else
    ``parsed`` itself."""
    mapping = getattr(parsed.func, "__srcgrad_keywords__", None)
    if mapping is None or parsed.tree.args.kwarg is None:
        return parsed
    tree = copy_tree(parsed.tree)
    args = tree.args
    kwargs, args.kwarg = args.kwarg.arg, None
    args.kwonlyargs = [*args.kwonlyargs, *(ast.arg(arg=p) for p in mapping)]
    args.kw_defaults = [*args.kw_defaults, *(None for _ in mapping)]
    display = ast.Dict(
        keys=[ast.Constant(key) for key in mapping.values()],
        values=[ast.Name(id=p, ctx=ast.Load()) for p in mapping],
    )
    build = ast.Assign(targets=[ast.Name(id=kwargs, ctx=ast.Store())], value=display)
    for node in nodes(build):
        ast.copy_location(node, tree)
    first = tree.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    at = 1 if docstring and isinstance(first.value.value, str) else 0
    tree.body.insert(at, build)
    return ParsedFunction(parsed.func, tree, parsed.locator, parsed.env)
