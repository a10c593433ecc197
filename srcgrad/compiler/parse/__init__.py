"""Stage 1, parse: a Python function in, its AST and resolved free names out.

In:  a plain Python function object (``def`` or ``lambda``).
Out: :class:`ParsedFunction`, holding an ``ast.FunctionDef`` whose line
numbers are the user's real file lines, and ``env``, the object every free
name refers to (closure cells first, then module globals, then builtins).

This is the one place that knows where a name comes from; a function whose
source is not available is a clear ``TypeError`` here.

The source is the one of the code the function runs (``func.__code__``), never the
one of a function it wraps (``functools.wraps`` sets ``__wrapped__``, which
``inspect.getsource`` follows), and it is checked against that code: a file edited
after its module was imported is refused, not differentiated as if it ran.

The stage is in three modules: :mod:`.source` (the source lines and the tree parsed from
them), :mod:`.matching` (the check that the source is the code's) and :mod:`.names` (the
free names, :class:`ParsedFunction`, and the checks that they are still current).
"""

from __future__ import annotations

import inspect
import linecache
from collections.abc import Callable
from typing import Any

from ...errors import SourceLocator
from .names import (
    ParsedFunction,
    _resolve,
    env_is_current,
    free_name_sources,
    sources_current,
)
from .source import _def_tree, _lambda_tree, _source_lines, source_text

__all__ = [
    "ParsedFunction",
    "env_is_current",
    "free_name_sources",
    "parse",
    "source_text",
    "sources_current",
]


def parse(func: Callable[..., Any]) -> ParsedFunction:
    """Parse ``func`` and resolve its free names."""
    if not inspect.isfunction(func):
        kind = type(func).__name__
        raise TypeError(
            f"srcgrad differentiates Python functions written in Python; got {func!r} "
            f"(a {kind}). Builtins and C functions have no source to transform: wrap the "
            "call in a Python function, or give it a rule with srcgrad.primitive."
        )
    code = func.__code__
    try:
        lines, firstlineno, filename = _source_lines(func)
    except (OSError, TypeError) as exc:
        raise TypeError(
            f"srcgrad needs the source code of {func.__qualname__!r} but Python cannot find it "
            f"({exc}). Functions typed at an interactive prompt or built with exec() have no "
            "source file; define the function in a module or notebook cell."
        ) from None
    locator = SourceLocator(filename, linecache.getlines(filename) or lines)
    if code.co_name == "<lambda>":
        tree = _lambda_tree(func, lines, firstlineno, locator)
    else:
        tree = _def_tree(func, lines, firstlineno, locator)
    env = _resolve(func, tree, locator)
    return ParsedFunction(func=func, tree=tree, locator=locator, env=env)
