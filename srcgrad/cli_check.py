"""``python -m srcgrad check FILE.py:FUNC``: a gradient checked at many inputs
(:func:`srcgrad.testing.verify`), with example arguments made from ``--shape``."""

from __future__ import annotations

import argparse
import inspect
import sys
from typing import Any

from . import display
from .cli_targets import _ShowError, _target

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
