"""Where a hand-written gradient goes wrong: its intermediate values compared with
srcgrad's adjoints of the same variables, for :func:`srcgrad.testing.verify`'s report.

A hand-written backprop names the adjoint of a variable ``H`` of the function ``dH``
(or ``H_bar``, ``H_grad``, ``grad_H``, ``delta_H``); srcgrad's gradient names it
``H_bar``. Both functions run once more at the failing input with their last values
captured (``sys.setprofile``, at their return); each of your names that has a
counterpart is compared, in the order your function assigns them, and the report
names the first line whose value is wrong and the last right one before it.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

#: how hand-written code names the adjoint of ``v``: (prefix, suffix)
_SPELLINGS = (("d", ""), ("", "_bar"), ("", "_grad"), ("grad_", ""), ("delta_", ""))


def locate(
    f: Callable[..., Any],
    gradient: Callable[..., Any],
    derivative: Any,
    values: list[Any],
    rtol: float,
) -> list[str]:
    """Lines of the report: your gradient's named intermediate values against srcgrad's
    adjoints at ``values`` (``derivative``: srcgrad's grad of ``f``); none where no name
    matches or a function's source cannot be read."""
    lines = _assignments(gradient)
    if not lines:
        return []
    variables = _variables(f)
    yours = _last_locals(gradient, values)
    derivative(*values)
    generated = getattr(getattr(derivative, "_last", None), "function", None)
    theirs = _last_locals(generated, values) if generated is not None else {}
    rows = []
    for name, (lineno, text) in sorted(lines.items(), key=lambda item: item[1][0]):
        v = _primal_of(name, variables)
        if v is None or name not in yours or f"{v}_bar" not in theirs:
            continue
        same = _close(yours[name], theirs[f"{v}_bar"], rtol)
        # (zeros that agree say nothing: a wrong factor times zero is zero too)
        telling = not same or bool(np.any(np.asarray(yours[name], dtype=float) != 0))
        rows.append((lineno, text, v, same, telling))
    if not rows or all(row[3] for row in rows):
        return []
    out = ["your gradient's values against srcgrad's adjoints of the same variables:"]
    for lineno, text, v, same, telling in rows:
        verdict = "agrees with" if same else "differs from"
        note = "" if telling else " (zero: says nothing)"
        out.append(f"  line {lineno}: {text:40s} {verdict} the adjoint of {v}{note}")
    first = next(k for k, row in enumerate(rows) if not row[3])
    wrong = rows[first][0]
    right = max((row[0] for row in rows[:first] if row[3] and row[4]), default=None)
    span = f"lines {right + 1}-{wrong}" if right is not None else f"the lines up to {wrong}"
    out.append(f"the first wrong value is made in {span} of your gradient")
    return out


def _assignments(func: Callable[..., Any]) -> dict[str, tuple[int, str]]:
    """Each name ``func`` assigns, with the line (in its file) and text of the first
    assignment; empty where its source cannot be read."""
    try:
        source_lines, start = inspect.getsourcelines(func)
        tree = ast.parse(textwrap.dedent("".join(source_lines)))
    except (OSError, TypeError, SyntaxError):
        return {}
    found: dict[str, tuple[int, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        text = source_lines[node.lineno - 1].strip()
                        line = (start + node.lineno - 1, text.split("#")[0].strip())
                        if n.id not in found or line[0] < found[n.id][0]:
                            found[n.id] = line
    return found


def _variables(f: Callable[..., Any]) -> set[str]:
    """``f``'s parameters and the names it assigns."""
    try:
        params = set(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        params = set()
    return params | set(_assignments(f))


def _primal_of(name: str, variables: set[str]) -> str | None:
    """The variable of ``f`` whose adjoint ``name`` spells, if one does."""
    if name in variables:
        return None
    for prefix, suffix in _SPELLINGS:
        if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(prefix + suffix):
            v = name[len(prefix) : len(name) - len(suffix) if suffix else None]
            if v in variables:
                return v
    return None


def _last_locals(func: Any, values: list[Any]) -> dict[str, Any]:
    """The local variables of ``func``'s frame as it returns, called on copies of
    ``values``."""
    code = getattr(func, "__code__", None)
    if code is None:
        return {}
    captured: dict[str, Any] = {}

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "return" and frame.f_code is code and not captured:
            captured.update(frame.f_locals)

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        func(*[v.copy() if isinstance(v, np.ndarray) else v for v in values])
    except Exception:  # (the report says what is wrong without this part)
        return {}
    finally:
        sys.setprofile(previous)
    return captured


def _close(a: Any, b: Any, rtol: float) -> bool:
    try:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return True  # (not numbers: no claim)
    if a.shape != b.shape:
        return False
    return bool(np.all(np.abs(a - b) <= rtol * (1 + np.abs(b))))
