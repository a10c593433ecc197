"""Stage 1, parse: a Python function in, its AST and resolved free names out.

In:  a plain Python function object (``def`` or ``lambda``).
Out: :class:`ParsedFunction`, holding an ``ast.FunctionDef`` whose line
numbers are the user's real file lines, and ``env``, the object every free
name refers to (closure cells first, then module globals, then builtins).

This is the one place that knows where a name comes from; a function whose
source is not available is a clear ``TypeError`` here.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .errors import SourceLocator, UnsupportedSyntaxError


@dataclass
class ParsedFunction:
    """A user function, parsed, with every free name resolved."""

    func: Callable[..., Any]
    tree: ast.FunctionDef
    locator: SourceLocator
    env: dict[str, Any] = field(default_factory=dict)
    code: Any = None  # func.__code__ when it was parsed

    def __post_init__(self) -> None:
        if self.code is None:
            self.code = self.func.__code__

    @property
    def name(self) -> str:
        return self.tree.name

    @property
    def params(self) -> list[str]:
        return [a.arg for a in self.tree.args.args]


def parse(func: Callable[..., Any]) -> ParsedFunction:
    """Parse ``func`` and resolve its free names."""
    if not inspect.isfunction(func):
        kind = type(func).__name__
        raise TypeError(
            f"srcgrad differentiates Python functions written in Python; got {func!r} "
            f"(a {kind}). Builtins and C functions have no source to transform: wrap the "
            "call in a Python function, or give it a rule with srcgrad.primitive."
        )
    try:
        lines, firstlineno = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise TypeError(
            f"srcgrad needs the source code of {func.__qualname__!r} but Python cannot find it "
            f"({exc}). Functions typed at an interactive prompt or built with exec() have no "
            "source file; define the function in a module or notebook cell."
        ) from None
    filename = inspect.getsourcefile(func) or func.__code__.co_filename
    locator = SourceLocator(filename, linecache.getlines(filename) or lines)
    if func.__name__ == "<lambda>":
        tree = _lambda_tree(func, lines, firstlineno, locator)
    else:
        tree = _def_tree(func, lines, firstlineno)
    env = _resolve(func, tree, locator)
    return ParsedFunction(func=func, tree=tree, locator=locator, env=env)


def env_is_current(parsed: ParsedFunction) -> bool:
    """Whether the function's code is the code parsed, and every free name still
    refers to the object it was resolved to.

    Python looks globals and closure cells up at call time; generated code
    binds them when it is made. Checking identity on each call keeps the two
    in step: a rebound global makes the caller generate the code again.
    """
    if parsed.func.__code__ is not parsed.code:
        return False
    return sources_current(*free_name_sources(parsed))


def sources_current(
    cells: Iterable[tuple[Any, Any]], names: Iterable[tuple[dict, str, Any]]
) -> bool:
    """Whether each closure cell and namespace of :func:`free_name_sources` still holds
    the object recorded beside it."""
    for cell, value in cells:
        try:
            if cell.cell_contents is not value:
                return False
        except ValueError:  # (emptied)
            return False
    for namespace, name, value in names:
        if namespace.get(name, UNBOUND) is not value:
            return False
    return True


def free_name_sources(
    parsed: ParsedFunction,
) -> tuple[list[tuple[Any, Any]], list[tuple[dict, str, Any]]]:
    """Where the function reads each free name from when it runs, with the object the
    name was resolved to: ``(cell, object)`` for a closure variable, ``(namespace,
    name, object)`` for a global, and for a builtin two of those: its module's globals
    must not hold the name (``UNBOUND``), and builtins must hold the object."""
    func = parsed.func
    closure = dict(zip(parsed.code.co_freevars, func.__closure__ or ()))
    globals_ = func.__globals__
    cells, names = [], []
    for name, value in parsed.env.items():
        if name in closure:
            cells.append((closure[name], value))
        elif name in globals_:
            names.append((globals_, name, value))
        else:
            names.append((globals_, name, UNBOUND))
            names.append((builtins.__dict__, name, value))
    return cells, names


#: what a namespace that must not hold a name is checked against (``.get(name, UNBOUND)``)
UNBOUND = object()


def _def_tree(func: Callable[..., Any], lines: list[str], firstlineno: int) -> ast.FunctionDef:
    module = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(module, firstlineno - 1)
    _shift_columns(module, len(lines[0]) - len(lines[0].lstrip()))
    node = module.body[0]
    if isinstance(node, ast.AsyncFunctionDef):
        raise TypeError(f"srcgrad cannot differentiate the coroutine {func.__qualname__!r}")
    assert isinstance(node, ast.FunctionDef), ast.dump(node)
    node.decorator_list = []
    return node


def _shift_columns(tree: ast.AST, indent: int) -> None:
    """Make column offsets refer to the file's lines, not the dedented text."""
    if not indent:
        return
    for node in ast.walk(tree):
        if hasattr(node, "col_offset") and node.col_offset is not None:
            node.col_offset += indent
        if getattr(node, "end_col_offset", None) is not None:
            node.end_col_offset += indent


def _lambda_tree(
    func: Callable[..., Any], lines: list[str], firstlineno: int, locator: SourceLocator
) -> ast.FunctionDef:
    text = textwrap.dedent("".join(lines))
    module = None
    # The lines holding a lambda may be a fragment of a larger statement: trim
    # from the left until what is left parses.
    start = text.find("lambda")
    for begin in (0, start):
        candidate = text[begin:].rstrip()
        for end in range(len(candidate), 0, -1):
            try:
                module = ast.parse(candidate[:end])
                break
            except SyntaxError:
                continue
        if module is not None:
            break
    wanted = [*func.__code__.co_varnames[: func.__code__.co_argcount]]
    found = []
    if module is not None:
        for node in ast.walk(module):
            if isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == wanted:
                found.append(node)
    if len(found) != 1:
        raise TypeError(
            f"srcgrad cannot tell which lambda on line {firstlineno} of {locator.filename} is "
            "the one to differentiate; give it its own line or write it with def."
        )
    lam = found[0]
    ast.increment_lineno(lam, firstlineno - 1)
    ret = ast.Return(value=lam.body)
    ast.copy_location(ret, lam.body)
    tree = ast.FunctionDef(
        name="lambda",
        args=lam.args,
        body=[ret],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    ast.copy_location(tree, lam)
    return ast.fix_missing_locations(tree)


def _local_names(tree: ast.FunctionDef) -> set[str]:
    local = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    for extra in (tree.args.vararg, tree.args.kwarg):
        if extra is not None:
            local.add(extra.arg)
    for node in ast.walk(tree):
        if node is tree:
            continue  # the function's own name is not a local: it may call itself
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            local.add(node.id)
        elif isinstance(node, ast.arg):  # parameters of nested functions and lambdas
            local.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(node.name)
    return local


def _resolve(
    func: Callable[..., Any], tree: ast.FunctionDef, locator: SourceLocator
) -> dict[str, Any]:
    local = _local_names(tree)
    closure = {}
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                pass
    env: dict[str, Any] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name) or node.id in local or node.id in env:
            continue
        name = node.id
        if name in closure:
            env[name] = closure[name]
        elif name in func.__globals__:
            env[name] = func.__globals__[name]
        elif hasattr(builtins, name):
            env[name] = getattr(builtins, name)
        else:
            raise locator.error(
                UnsupportedSyntaxError,
                node,
                f"name {name!r} is not defined where {func.__qualname__!r} was defined; "
                "define it at module level or pass it as an argument.",
            )
    return env
