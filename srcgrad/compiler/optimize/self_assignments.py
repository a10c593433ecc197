"""Pass: ``v = v`` goes, and ``b = a`` just after ``a = b``."""

from __future__ import annotations

import ast

from .dataflow import Context, blocks, target


def drop_self_assignments(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = v`` does nothing, nor does ``b = a`` right after ``a = b`` (both names
    hold the same value already).

    Before::                 After::

        y = x * 2.0              y = x * 2.0
        y = y                    g = y
        g = y
        y = g
    """
    changed = False
    for block in blocks(body):
        kept: list[ast.stmt] = []
        for stmt in block:
            source = _copied_name(stmt)
            if source is not None and (
                source == target(stmt)
                or (kept and _copied_name(kept[-1]) == target(stmt) and target(kept[-1]) == source)
            ):
                continue
            kept.append(stmt)
        if len(kept) != len(block):
            block[:] = kept
            changed = True
    return body, changed


def _copied_name(stmt: ast.stmt) -> str | None:
    """``b`` for ``a = b`` (names both)."""
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and target(stmt):
        return stmt.value.id
    return None
