"""``python -m srcgrad``: the command line.

``python -m srcgrad rules`` prints every function srcgrad differentiates, one
per line: its qualified name (``numpy.exp``, ``numpy.linalg.solve``,
``ndarray.sum``, ``math.sin``) and the modes it supports. ``--markdown``
prints the same as the table in ``docs/rules.md``.

``python -m srcgrad show path/to/file.py:func [--mode forward|reverse] [--wrt
NAME ...] [--stages]`` prints the code srcgrad generates for ``func`` without
calling it: the generic version, for arguments of any rank (a call generates
code specialised to its arguments' ranks). It imports the file, as Python
must to get at the function, so the file's top-level code runs (its ``if
__name__ == "__main__":`` block does not). ``--stages`` prints the source
after each stage of the pipeline (:func:`srcgrad.compiler.driver.stages`). Errors
(no such file or function, a function srcgrad cannot differentiate) are one
line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import display
from .rules import RULES, SEQUENCE_RULES, Rule, load_scipy_stats_rules
from .rules.complex_numbers import COMPLEX_RULES

#: well-known second names of one numpy object, listed too
_ALIASES = {
    "numpy.absolute": "numpy.abs",
    "numpy.divide": "numpy.true_divide",
    "scipy.special.psi": "scipy.special.digamma",
}

_OPERATORS = {
    ast.Add: "x + y",
    ast.Sub: "x - y",
    ast.Mult: "x * y",
    ast.Div: "x / y",
    ast.Pow: "x ** y",
    ast.MatMult: "x @ y",
    ast.USub: "-x",
    ast.UAdd: "+x",
}
_STATEMENTS = {"getitem": "x[index]", "setitem": "x[index] = v"}


def _qualified(key: Any) -> list[str]:
    """``numpy.exp``, ``numpy.linalg.solve``, ``scipy.special.expit``, ``math.sin``: the
    name a function is documented under (its own ``__name__``, not version-dependent
    re-exports), with well-known aliases."""
    name = getattr(key, "__name__", None)
    if name is None:
        return [repr(key)]
    module = getattr(key, "__module__", None) or ""
    if isinstance(key, np.ufunc):  # numpy's own, or scipy.special's (ufuncs lack __module__)
        special = sys.modules.get("scipy.special")
        if getattr(np, name, None) is not key and getattr(special, name, None) is key:
            module = "scipy.special"
        else:
            module = "numpy"
    if module == "numpy" or module.startswith("numpy._"):
        qualified = f"numpy.{name}"
    elif module.startswith("numpy.linalg"):
        qualified = f"numpy.linalg.{name}"
    elif module.startswith("scipy.special"):
        qualified = f"scipy.special.{name}"
    elif module.startswith("scipy.stats") and inspect.ismethod(key):  # norm.cdf
        # (multivariate distributions have no .name: multivariate_normal_gen's instance)
        dist = getattr(key.__self__, "name", None) or type(key.__self__).__name__
        qualified = f"scipy.stats.{dist.removesuffix('_gen')}.{name}"
    elif module.startswith("srcgrad"):
        qualified = f"srcgrad.{name}"
    elif module in ("math", "builtins"):
        qualified = f"{module}.{name}"
    else:
        qualified = f"{module}.{name}"
    names = [qualified]
    alias = _ALIASES.get(qualified)
    if alias is not None:
        names.append(alias)
    return names


def _names(key: Any) -> list[str]:
    if isinstance(key, type) and key in _OPERATORS:
        return [f"operator {_OPERATORS[key]}"]
    if isinstance(key, tuple):
        kind, attr = key
        if kind == "helper":  # srcgrad's runtime, for higher order
            return []
        return [f"ndarray.{attr}" + ("()" if kind == "method" else "")]
    if isinstance(key, str):
        return [f"operator {_STATEMENTS[key]}"] if key in _STATEMENTS else []
    return _qualified(key)


def _modes(rule: Rule, key: Any = None) -> str:
    complex_too = rule.complex_ok or _complex_rule(key)
    if rule.nondiff:
        if complex_too:  # (np.imag, np.angle: piecewise constant on real numbers only)
            return "forward reverse (zero derivative for real numbers; complex too)"
        return "forward reverse (zero derivative)"
    modes = " ".join(m for m, table in (("forward", rule.jvp), ("reverse", rule.vjp)) if table)
    return f"{modes} (complex too)" if complex_too else modes


def _complex_rule(key: Any) -> bool:
    try:
        return key in COMPLEX_RULES
    except TypeError:
        return False


def supported() -> list[tuple[str, str]]:
    """(qualified name, modes) for every function srcgrad differentiates, sorted."""
    load_scipy_stats_rules(import_scipy=True)
    rows = {}
    for key, rule in RULES.items():
        if rule.primitive is not None:  # a user's own rule
            continue
        for name in _names(key):
            rows[name] = _modes(rule, key)
    for attr, rule in SEQUENCE_RULES.items():
        rows[f"list.{attr}"] = _modes(rule)
    return sorted(rows.items(), key=lambda row: (_group(row[0]), row[0].lower()))


def _group(name: str) -> int:
    prefixes = ("operator", "numpy.linalg.", "numpy.", "ndarray.", "scipy.", "builtins.", "list.")
    for i, prefix in enumerate(prefixes):
        if name.startswith(prefix):
            return i
    return len(prefixes)


def _numpy_version() -> str:
    return ".".join(np.__version__.split(".")[:2])


def markdown() -> str:
    """The table of ``docs/rules.md``."""
    rows = supported()
    both = sum(1 for name, modes in rows if name.startswith("numpy.") and "reverse" in modes)
    lines = [
        "# Supported functions",
        "",
        "Generated by `python -m srcgrad rules --markdown > docs/rules.md` (with numpy",
        f"{_numpy_version()}); a test checks that it is current. *zero derivative*: the",
        "output carries no derivative (comparisons, shapes, rounding, index computations).",
        "*complex too*: differentiated on complex numbers as well (the convention:",
        "[User guide, Complex numbers](guide.md#complex-numbers)).",
        "",
        f"{len(rows)} entries; {both} NumPy functions in both modes.",
        "",
        "| function | modes |",
        "| --- | --- |",
    ]
    lines += [f"| `{name}` | {modes} |" for name, modes in rows]
    return "\n".join(lines) + "\n"


_SHOW_HELP = """\
Print the code srcgrad generates for FUNC, without calling it.

The code printed is the generic version, for arguments of any rank; a call
with real arguments generates code specialised to their ranks, which may be
shorter. To get at FUNC, this imports FILE as Python must: its top-level
code runs (imports, definitions, anything else at module level), its
`if __name__ == "__main__":` block does not. A FUNC decorated in the file
(`@srcgrad.grad(wrt="w")`) is shown as decorated unless options override it.
Output is syntax-highlighted when stdout is a terminal and pygments is
installed.
"""


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


def _derivative(obj: Any, args: argparse.Namespace) -> Any:
    """The derivative to show: ``obj`` itself when the file decorated it and no option
    overrides that, else a new one of the user's function."""
    from .derivative import Derivative

    overridden = args.mode is not None or args.wrt is not None or args.kind is not None
    if isinstance(obj, Derivative) and not overridden:
        return obj
    if not isinstance(obj, Derivative) and hasattr(obj, "source") and not overridden:
        return obj  # a Jacobian or Hessian-vector product made in the file
    func = display.primal_function(obj)
    wrt: Any = 0
    if args.wrt is not None:
        items = [int(w) if w.lstrip("-").isdigit() else w for w in args.wrt]
        wrt = items[0] if len(items) == 1 else tuple(items)
    kind = args.kind or "grad"
    mode = args.mode or ("forward" if kind == "jvp" else "reverse")
    if kind in ("jvp", "vjp") and mode != ("forward" if kind == "jvp" else "reverse"):
        raise _ShowError(f"--kind {kind} is {'forward' if kind == 'jvp' else 'reverse'} mode only")
    if kind in ("jvp", "vjp"):
        return Derivative(func, kind, wrt)
    return Derivative(func, kind, wrt, mode=mode)


def _stages(derivative: Any) -> list[tuple[str, str]]:
    """The source after each pipeline stage, for the generic version of ``derivative``."""
    from .compiler import driver
    from .derivative import Derivative

    if not isinstance(derivative, Derivative) or derivative._inner is not None:
        raise _ShowError(
            "--stages shows the stages of a derivative of a Python function (grad, "
            f"value_and_grad, jvp or vjp), not of {derivative!r}"
        )
    kind = derivative._generated_kind
    func = derivative.__wrapped__
    if derivative.has_aux:  # as Derivative does it: the returned pair split first
        trace: dict[str, str] = {}
        norm = driver.front(func, trace)
        norm.split_aux()
        driver.derive(norm, kind, list(derivative.wrt), trace=trace)
    else:
        trace = driver.stages(func, kind, list(derivative.wrt))
    return list(trace.items())


def _show(args: argparse.Namespace) -> int:
    from .errors import SrcgradError

    try:
        derivative = _derivative(_target(args.target), args)
        if args.stages:
            sections = _stages(derivative)
        else:
            sections = [("", derivative.source)]
    except _ShowError as exc:
        print(f"python -m srcgrad show: error: {exc}", file=sys.stderr)
        return 2
    except (SrcgradError, ValueError, TypeError) as exc:  # srcgrad cannot differentiate it
        print(f"python -m srcgrad show: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    color = {"always": True, "never": False}.get(args.color)
    if color is None:
        color = display.use_color(sys.stdout)
    color = color and display.have_pygments()
    out = []
    for stage, text in sections:
        text = text if text.endswith("\n") else text + "\n"
        if stage:
            out.append(f"# ---- {stage} ----\n")
        python = stage != "analyze"  # the analysis is a listing of facts, not code
        out.append(display.highlight_terminal(text) if color and python else text)
        if stage:
            out.append("\n")
    sys.stdout.write("".join(out))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; its exit status. A reader that stops reading early
    (``python -m srcgrad rules | head``) ends it quietly, as it does other tools."""
    try:
        status = _main(argv)
        sys.stdout.flush()  # (a closed pipe shows here, where it can be caught)
    except BrokenPipeError:
        # Python flushes stdout again at exit, which would fail the same way and print a
        # traceback: point the descriptor at /dev/null first
        try:
            fileno = sys.stdout.fileno()
        except (AttributeError, OSError, ValueError):  # (not a real file: a test's buffer)
            return 1
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fileno)
        os.close(devnull)
        return 1
    return status


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m srcgrad", description="srcgrad: derivatives of numpy code, as source."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    rules = commands.add_parser("rules", help="list the functions srcgrad differentiates")
    rules.add_argument("--markdown", action="store_true", help="print docs/rules.md's table")
    show = commands.add_parser(
        "show",
        help="print the code srcgrad generates for a function (imports its file, does not call it)",
        description=_SHOW_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument(
        "target",
        metavar="FILE.py:FUNC",
        help="the file (or a dotted module name) and the function in it, e.g. model.py:loss",
    )
    show.add_argument(
        "--mode",
        choices=("forward", "reverse"),
        help="forward-mode (jvp) or reverse-mode (adjoint) code; default reverse",
    )
    show.add_argument(
        "--wrt",
        nargs="+",
        metavar="NAME",
        help="the parameters to differentiate with respect to, by name or index; default the first",
    )
    show.add_argument(
        "--kind",
        choices=("grad", "value_and_grad", "jvp", "vjp"),
        help="the transformation; default grad (vjp and jvp for array outputs)",
    )
    show.add_argument(
        "--stages", action="store_true", help="print the source after each pipeline stage"
    )
    show.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="syntax highlighting (needs pygments); auto: when stdout is a terminal",
    )
    _add_check(commands)
    args = parser.parse_args(argv)
    if args.command == "show":
        return _show(args)
    if args.command == "check":
        return _check(args)
    if args.command == "rules":
        if args.markdown:
            sys.stdout.write(markdown())
        else:
            rows = supported()
            width = max(len(name) for name, _ in rows)
            for name, modes in rows:
                print(f"{name:<{width}}  {modes}")
    return 0


_CHECK_HELP = """\
Check the gradient of a function at many inputs (srcgrad.testing.verify): srcgrad's
reverse and forward modes against finite differences, and your own gradient function
if you name one. Each parameter is a float unless --shape gives it a shape; one with
a default keeps it as its example. Prints the report of the smallest failing input
found, exit status 1; nothing wrong: one line, exit status 0.

  python -m srcgrad check model.py:loss --shape W=3,4 x=8,3
  python -m srcgrad check model.py:loss --shape W=3,4 x=8,3 --gradient my_grad
"""


def _add_check(commands: Any) -> None:
    check = commands.add_parser(
        "check",
        help="check a gradient (srcgrad's, or your own) at many inputs hypothesis draws",
        description=_CHECK_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("target", metavar="FILE.py:FUNC", help="the function, e.g. model.py:loss")
    check.add_argument(
        "--shape",
        nargs="+",
        default=[],
        metavar="NAME=N,M",
        help="a parameter's shape (an array of ones as its example); NAME= for a float",
    )
    check.add_argument("--wrt", nargs="+", metavar="NAME", help="differentiate with respect to")
    check.add_argument("--gradient", metavar="FUNC", help="your gradient function, in the file")
    check.add_argument("--examples", type=int, default=100, help="inputs to try (default 100)")


def _check(args: argparse.Namespace) -> int:
    from .testing import verify

    try:
        func = display.primal_function(_target(args.target))
        mine = (
            _target(f"{args.target.rpartition(':')[0]}:{args.gradient}") if args.gradient else None
        )
        examples, wrt = _check_arguments(func, args)
    except _ShowError as exc:
        print(f"python -m srcgrad check: error: {exc}", file=sys.stderr)
        return 2
    try:
        verify(func, examples, gradient=mine, wrt=wrt, max_examples=args.examples)
    except AssertionError as exc:
        print(exc)
        return 1
    print(f"{args.target}: no disagreement found (up to {args.examples} inputs)")
    return 0


def _check_arguments(func: Any, args: argparse.Namespace) -> tuple[list[Any], Any]:
    """``check``'s example arguments of ``func`` and its ``wrt`` (positions)."""
    import numpy as np

    params = list(inspect.signature(func).parameters.values())
    names = [p.name for p in params]
    shapes: dict[str, tuple[int, ...]] = {}
    for item in args.shape:
        name, sep, dims = item.partition("=")
        if not sep or name not in names:
            raise _ShowError(f"--shape {item!r}: expected NAME=N,M with NAME one of {names}")
        try:
            shapes[name] = tuple(int(d) for d in dims.split(",") if d.strip())
        except ValueError:
            raise _ShowError(f"--shape {item!r}: the lengths must be integers") from None
    examples: list[Any] = []
    for p in params:
        if p.name in shapes:
            examples.append(np.ones(shapes[p.name]) if shapes[p.name] else 1.0)
        else:
            examples.append(p.default if p.default is not p.empty else 1.0)
    wrt = [_position(w, names) for w in args.wrt or [names[0]]]
    return examples, (wrt[0] if len(wrt) == 1 else tuple(wrt))


def _position(w: str, names: list[str]) -> int:
    if w.isdigit() and int(w) < len(names):
        return int(w)
    if w not in names:
        raise _ShowError(f"--wrt {w!r}: not a parameter ({', '.join(names)})")
    return names.index(w)
