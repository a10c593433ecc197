"""Part of parse: a function's source lines (those of the code it runs) and the tree of
its ``def`` or ``lambda`` parsed from them, at the file's own lines and columns, checked
against the code (:mod:`.matching`); private names mangled as in the class around it."""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any

from ...errors import SourceLocator, SrcgradError, UnsupportedSyntaxError
from .matching import _matches


def _source_lines(func: Any) -> tuple[list[str], int, str]:
    """The lines of ``func``'s definition, its first line number and its file.

    The code's own source (``getsourcelines(func)`` would follow ``__wrapped__``), read
    from the file the code names with the function's globals for a loader's source
    (a notebook cell, a zip import); ``inspect.getsourcelines(code)`` finds the same
    lines, but looks the module up among all loaded modules first (a third of the
    first call's time for a 30-line function).
    """
    code = func.__code__
    filename = inspect.getsourcefile(code) or code.co_filename
    lines = linecache.getlines(filename, func.__globals__)
    start = code.co_firstlineno - 1
    if 0 <= start < len(lines):
        return inspect.getblock(lines[start:]), start + 1, filename
    found, first = inspect.getsourcelines(code)  # (its own error where there is none)
    return found, first, filename


def source_text(func: Any) -> str:
    """The dedented source of the code a Python function runs (``OSError`` or
    ``TypeError`` where it has none)."""
    if not inspect.isfunction(func):
        raise TypeError(f"{type(func).__name__} has no Python code")
    return textwrap.dedent("".join(_source_lines(func)[0]))


def _def_tree(
    func: Callable[..., Any], lines: list[str], firstlineno: int, locator: SourceLocator
) -> ast.FunctionDef:
    text = "".join(lines)
    # an indented def (a method, a closure) is parsed where it stands, under an `if`:
    # its columns stay the file's, and its multi-line strings stay whole (dedenting the
    # text fails where one of their lines is indented less than the def)
    header = "if 1:\n" if text[:1] in (" ", "\t") else ""
    try:
        module = ast.parse(header + text)
    except SyntaxError:  # (what the file holds there now is not a function)
        raise _stale(func, types.SimpleNamespace(lineno=firstlineno), locator) from None
    ast.increment_lineno(module, firstlineno - 1 - len(header and "\n"))
    node = module.body[0].body[0] if header else module.body[0]
    if isinstance(node, ast.AsyncFunctionDef):
        raise locator.error(
            UnsupportedSyntaxError,
            node,
            f"srcgrad does not differentiate coroutine functions (`async def`): "
            f"{func.__qualname__!r} returns a coroutine, not a value. Differentiate a plain "
            "`def` function that computes the value, and await around it.",
        )
    matched = isinstance(node, ast.FunctionDef) and _matches(func, "".join(lines))
    if not matched:
        raise _stale(func, node, locator)
    node.decorator_list = []
    if isinstance(matched, str):  # a method whose private names Python mangled
        _mangle(node, matched)
    return node


def _mangle(tree: ast.AST, class_name: str) -> None:
    """Spell the private names in ``tree`` (``self.__w``, ``__helper``) as Python does in
    the body of class ``class_name`` (``self._Model__w``): generated code lives outside
    the class, where the names are not mangled for it."""
    prefix = "_" + class_name.lstrip("_")
    if prefix == "_":
        return  # (a class named only with underscores mangles nothing)

    def mangled(name: str) -> str:
        private = name.startswith("__") and not name.endswith("__") and "." not in name
        return prefix + name if private else name

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = mangled(node.id)
        elif isinstance(node, ast.Attribute):
            node.attr = mangled(node.attr)
        elif isinstance(node, ast.arg):
            node.arg = mangled(node.arg)
        elif isinstance(node, ast.keyword) and node.arg is not None:
            node.arg = mangled(node.arg)


def _stale(func: Callable[..., Any], node: Any, locator: SourceLocator) -> SrcgradError:
    """The error for a source that is not the one of the code the function runs."""
    module = sys.modules.get(getattr(func, "__module__", None) or "")
    loader = getattr(module, "__loader__", None)
    if type(loader).__name__ == "AssertionRewritingHook":  # pytest's, for test modules
        return locator.error(
            SrcgradError,
            node,
            f"pytest rewrote the `assert` statements of {locator.filename} (a test module), "
            f"so the code Python runs for {func.__qualname__!r} is not its source. Define "
            "the function in a module pytest does not rewrite (a helper module the tests "
            "import), or run pytest with --assert=plain.",
        )
    return locator.error(
        SrcgradError,
        node,
        f"the source of {func.__qualname__!r} in {locator.filename} is not the code Python "
        "runs for it: the file was changed after the module was imported (or the "
        "function's __code__ was replaced). srcgrad differentiates the source, so reload "
        "the module (importlib.reload, or %autoreload in IPython) or restart Python, and "
        "differentiate again.",
    )


def _lambda_tree(
    func: Callable[..., Any], lines: list[str], firstlineno: int, locator: SourceLocator
) -> ast.FunctionDef:
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    module = None
    # The lines holding a lambda may be a fragment of a larger statement: trim
    # from the left until what is left parses.
    start = text.find("lambda")
    source = ""
    for begin in (0, start):
        candidate = text[begin:].rstrip()
        for end in range(len(candidate), 0, -1):
            try:
                module = ast.parse(candidate[:end])
                source = candidate[:end]
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
                found.append((node, ast.get_source_segment(source, node) or ""))
        _place(module, raw, text, begin, firstlineno)
    # of the lambdas with its parameters, the ones whose code is the code it runs
    matches = [(lam, seg, _matches(func, f"  (\n{seg}\n)\n")) for lam, seg in found]
    same = [(lam, seg) for lam, seg, matched in matches if matched]
    if found and not same:
        raise _stale(func, found[0][0], locator)
    if not same or any(seg != same[0][1] for _, seg in same[1:]):
        raise TypeError(
            f"srcgrad cannot tell which lambda on line {firstlineno} of {locator.filename} is "
            "the one to differentiate; give it its own line or write it with def."
        )
    lam = same[0][0]
    matched = next(m for node, _, m in matches if node is lam)
    if isinstance(matched, str):  # a lambda in a class body whose private names are mangled
        _mangle(lam, matched)
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
    return tree


def _place(module: ast.Module, raw: str, text: str, begin: int, firstlineno: int) -> None:
    """Give ``module``, parsed from ``text[begin:]`` (``text`` being ``raw``, the lines
    from the file's line ``firstlineno``, dedented), the file's lines and columns."""
    row = text.count("\n", 0, begin)  # the line of text that module's first line is
    line_start = text.rfind("\n", 0, begin) + 1
    first = len(text[line_start:begin].encode())  # (columns count UTF-8 bytes)
    content = next((k for k, line in enumerate(text.splitlines()) if line.strip()), 0)
    raw_line, text_line = raw.splitlines()[content], text.splitlines()[content]
    margin = len(raw_line) - len(text_line)  # the indentation dedent took off each line
    for node in ast.walk(module):
        if getattr(node, "col_offset", None) is not None:
            node.col_offset += margin + (first if node.lineno == 1 else 0)
        if getattr(node, "end_col_offset", None) is not None:
            node.end_col_offset += margin + (first if node.end_lineno == 1 else 0)
    ast.increment_lineno(module, firstlineno - 1 + row)
