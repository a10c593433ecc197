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

``python -m srcgrad check path/to/file.py:func [--shape NAME=N,M ...]`` checks a
gradient at many inputs (:mod:`srcgrad.cli_check`). The ``rules`` listing is
:mod:`srcgrad.cli_rules`'s; finding ``FILE.py:FUNC`` is :mod:`srcgrad.cli_targets`'.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import display
from .cli_check import _add_check, _check
from .cli_rules import _names, _numpy_version, markdown, supported  # noqa: F401  (tests read them)
from .cli_targets import _one_line, _ShowError, _target

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
