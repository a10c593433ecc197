"""Where an error srcgrad raises in code it generated comes from: differentiating a
derivative again (``hessian``, ``hvp``, ``grad`` of ``grad``...) reads the generated code
of the inner one, and an error at one of its lines is moved to the line of the user's
code that line was made from."""

from __future__ import annotations

import ast
import linecache
from typing import TYPE_CHECKING, Any

from .cache import _CACHE
from .compiler.parse import ParsedFunction
from .errors import SrcgradError

if TYPE_CHECKING:
    from .derivative import Derivative


def _in_user_code(exc: SrcgradError, derivative: Derivative) -> SrcgradError:
    """``exc``, raised at a line of code srcgrad generated (differentiating a derivative
    again: hessian, hvp, grad of grad...), moved to the line of the user's code that the
    generated line comes from; the generated line stays in the message."""
    name = exc.filename or ""
    if not name.startswith("<srcgrad-") or not exc.lineno:
        return exc
    generated = linecache.getlines(name)
    if not 1 <= exc.lineno <= len(generated):
        return exc
    line = generated[exc.lineno - 1].strip()
    inner = derivative
    while inner._inner is not None:
        inner = inner._inner
    entry = _CACHE.get(inner.__wrapped__)
    norms = [n for n in (entry.norm, entry.norm_aux) if n is not None] if entry else []
    callees = list(inner._last.callees) if inner._last is not None else []
    found = _origin(generated[: exc.lineno], norms, [n.parsed for n in norms] + callees)
    if found is None:  # the user's function itself
        code = inner.__wrapped__.__code__
        found = code.co_filename, code.co_firstlineno
    filename, lineno = found
    source_line = linecache.getline(filename, lineno) or None
    message = (
        f"{exc.message}\n(srcgrad was differentiating again the code it generated for "
        f"{inner!r}, at {name}:{exc.lineno}: `{line}`, which comes from the line above.)"
    )
    return type(exc)(message, filename=filename, lineno=lineno, source_line=source_line)


def _origin(
    generated: list[str], norms: list[Any], parsed: list[ParsedFunction]
) -> tuple[str, int] | None:
    """Where the user wrote the statement the last of the ``generated`` lines comes from:
    the nearest line at or above it (in the same generated function) that is a copy of a
    statement of the user's function as normalized (forward-mode code puts each tangent
    after its statement), or a ``# grad of:`` comment (reverse-mode code puts one above
    each statement's adjoint), found in the source of the user's function or of a
    function it calls."""
    statements = {
        ast.unparse(core): (norm.parsed.locator.filename, user.lineno)
        for norm in norms
        for core, user in norm.origin.items()
        if isinstance(core, (ast.Assign, ast.Expr))
    }
    for text in reversed(generated):
        text = text.strip()
        if text.startswith("def "):
            return None
        if text in statements:
            return statements[text]
        if text.startswith("# grad of:"):
            wanted = text[len("# grad of:") :].strip()
            for p in parsed:
                for lineno in range(p.tree.lineno, (p.tree.end_lineno or p.tree.lineno) + 1):
                    user = (p.locator.text(lineno) or "").strip()
                    if user and wanted.startswith(user):
                        return p.locator.filename, lineno
            return None
    return None
