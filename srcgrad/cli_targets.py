"""The command line's ``FILE.py:FUNC``: the file (or dotted module) imported as Python
would import it, the function found in it, and errors as one line on stderr
(:class:`_ShowError`: exit status 2)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from typing import Any

from . import display


class _ShowError(Exception):
    """A problem with ``show``'s target or options: one line on stderr, exit status 2."""


def _load_module(spec_text: str) -> Any:
    """Import ``path/to/file.py`` (its directory first on ``sys.path``, as ``python
    file.py`` would have it) or a dotted module name."""
    path = os.path.abspath(spec_text)
    looks_like_path = spec_text.endswith(".py") or os.sep in spec_text or "/" in spec_text
    if not os.path.exists(path):
        if looks_like_path:
            raise _ShowError(f"no such file: {spec_text}")
        try:  # a module name, e.g. mypackage.losses
            return importlib.import_module(spec_text)
        except ModuleNotFoundError as exc:
            if exc.name and spec_text.startswith(exc.name):
                raise _ShowError(f"no such file or module: {spec_text}") from None
            raise
    if os.path.isdir(path):
        raise _ShowError(f"{spec_text} is a directory; give a Python file: FILE.py:FUNCTION")
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = os.path.splitext(os.path.basename(path))[0]
    loaded = sys.modules.get(name)
    if loaded is not None:
        if os.path.abspath(getattr(loaded, "__file__", None) or "") == path:
            return loaded
        name = f"_srcgrad_show_{name}"  # another module already has the name
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise _ShowError(f"cannot import {spec_text}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _functions_of(module: Any) -> list[str]:
    names = []
    for name, value in vars(module).items():
        func = display.primal_function(value)
        if inspect.isfunction(func) and func.__module__ == module.__name__:
            names.append(name)
    return sorted(names)


def _target(target: str) -> Any:
    """The object ``FILE.py:FUNC`` names (a function, or a srcgrad derivative)."""
    where, sep, qualname = target.rpartition(":")
    if not sep or not where or not qualname:
        raise _ShowError(f"expected FILE.py:FUNCTION, got {target!r}")
    try:
        module = _load_module(where)
    except _ShowError:
        raise
    except SyntaxError as exc:
        raise _ShowError(f"cannot import {where}: line {exc.lineno}: {exc.msg}") from None
    except BaseException as exc:  # the user's module-level code failed
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _ShowError(f"importing {where} failed: {_one_line(exc)}") from None
    obj: Any = module
    for part in qualname.split("."):
        if not hasattr(obj, part):
            defined = ", ".join(_functions_of(module)) or "none"
            raise _ShowError(f"{where} has no function {qualname!r} (its functions: {defined})")
        obj = getattr(obj, part)
    if not inspect.isfunction(display.primal_function(obj)):
        raise _ShowError(
            f"{where}:{qualname} is a {type(obj).__name__}, not a Python function srcgrad "
            "can differentiate"
        )
    return obj


def _one_line(exc: BaseException) -> str:
    """An exception as one line: its type, and its message with newlines folded."""
    from .errors import SrcgradError

    if isinstance(exc, SrcgradError) and exc.filename is not None:
        where = exc.filename
        if os.path.isabs(where) and not os.path.relpath(where).startswith(os.pardir):
            where = os.path.relpath(where)
        if exc.lineno:
            where += f":{exc.lineno}"
        message = " ".join(line.strip() for line in exc.message.splitlines())
        code = f" (in `{exc.source_line.strip()}`)" if exc.source_line else ""
        return f"{where}: {type(exc).__name__}: {message}{code}"
    message = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
