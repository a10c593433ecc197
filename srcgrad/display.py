"""Showing generated code: highlighted in a terminal, side by side in a notebook.

:func:`highlight_terminal` colours Python source for a terminal (``python -m
srcgrad show`` uses it when stdout is one); :func:`derivative_html` is what a
derivative shows in a Jupyter notebook (``Derivative._repr_html_``): the
original function and the generated module in two columns. Both use pygments
when it is importable and fall back to plain (escaped) text when it is not;
pygments is optional.
"""

from __future__ import annotations

import html
import inspect
import os
import textwrap
from typing import Any

#: the pygments style for the notebook view (a light one, as notebooks are)
HTML_STYLE = "default"

_PRE_STYLE = "margin: 0; padding: 0.5em; line-height: 125%; background: #f8f8f8; overflow-x: auto"
_CELL_STYLE = "vertical-align: top; text-align: left; padding: 0 0.5em; width: 50%"
_HEAD_STYLE = (
    "vertical-align: bottom; text-align: left; padding: 0.25em 0.5em; "
    "font-family: sans-serif; font-weight: normal"
)


def have_pygments() -> bool:
    """Whether pygments is importable (it is optional)."""
    try:
        import pygments  # noqa: F401
    except ImportError:
        return False
    return True


def use_color(stream: Any) -> bool:
    """Whether to highlight text written to ``stream``: a terminal, pygments installed,
    and no ``NO_COLOR`` in the environment (https://no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    try:
        tty = bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):
        tty = False
    return tty and not os.environ.get("NO_COLOR") and have_pygments()


def highlight_terminal(source: str) -> str:
    """``source`` (Python) with ANSI colour codes; unchanged without pygments."""
    if not have_pygments():
        return source
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import PythonLexer

    return highlight(source, PythonLexer(stripnl=False), TerminalFormatter())


def code_html(source: str, *, highlight: bool | None = None) -> str:
    """``source`` (Python) as an HTML block with inline styles (no stylesheet needed):
    highlighted by pygments where ``highlight`` (default: when pygments is installed),
    else an escaped ``<pre>``."""
    if highlight is None:
        highlight = have_pygments()
    if highlight:
        from pygments import highlight as pyg_highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        formatter = HtmlFormatter(
            noclasses=True, style=HTML_STYLE, nobackground=True, prestyles="margin: 0"
        )
        inner = pyg_highlight(source, PythonLexer(stripnl=False), formatter)
        return f'<div style="{_PRE_STYLE}">{inner.strip()}</div>'
    return f'<pre style="{_PRE_STYLE}">{html.escape(source)}</pre>'


def primal_function(obj: Any) -> Any:
    """The user's Python function under a derivative (a derivative of a derivative
    included): the innermost ``__wrapped__``."""
    seen = set()
    while hasattr(obj, "__wrapped__") and id(obj) not in seen:
        seen.add(id(obj))
        obj = obj.__wrapped__
    return obj


def primal_source(func: Any) -> tuple[str, str]:
    """``(source, where)`` of the user's function; a placeholder where Python has no
    source for it."""
    where = ""
    code = getattr(func, "__code__", None)
    if code is not None:
        where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    try:
        text = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        text = f"# the source of {getattr(func, '__qualname__', func)!r} is not available\n"
    return text, where


def derivative_html(derivative: Any, *, highlight: bool | None = None) -> str:
    """The notebook view of a derivative: a two-column table, the user's function on
    the left and the generated module (``.source``) on the right, with inline styles
    only (notebook front ends drop stylesheets from untrusted output)."""
    func = primal_function(derivative)
    primal, where = primal_source(func)
    try:
        generated = derivative.source
    except Exception as exc:  # shown, not raised: a notebook shows a repr, not a traceback
        generated = f"# srcgrad could not generate this derivative:\n# {type(exc).__name__}: "
        generated += "\n# ".join(str(exc).splitlines()) + "\n"
    name = getattr(func, "__qualname__", repr(func))
    left = f"<b>{html.escape(name)}</b>" + (f" ({html.escape(where)})" if where else "")
    right = f"<b>{html.escape(repr(derivative))}</b>: <code>.source</code>"
    return (
        '<table class="srcgrad-derivative" '
        'style="border-collapse: collapse; width: 100%; table-layout: fixed">'
        "<thead><tr>"
        f'<th style="{_HEAD_STYLE}">{left}</th>'
        f'<th style="{_HEAD_STYLE}">{right}</th>'
        "</tr></thead>"
        "<tbody><tr>"
        f'<td style="{_CELL_STYLE}">{code_html(primal, highlight=highlight)}</td>'
        f'<td style="{_CELL_STYLE}">{code_html(generated, highlight=highlight)}</td>'
        "</tr></tbody></table>"
    )
