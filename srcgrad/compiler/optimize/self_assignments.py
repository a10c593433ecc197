"""Pass: ``v = v`` goes."""

from __future__ import annotations

import ast

from .dataflow import Context, blocks, target


def drop_self_assignments(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = v`` does nothing.

    Before::                 After::

        y = x * 2.0              y = x * 2.0
        y = y
    """
    changed = False
    for block in blocks(body):
        kept = [
            stmt
            for stmt in block
            if not (
                isinstance(stmt, ast.Assign)
                and isinstance(stmt.value, ast.Name)
                and target(stmt) == stmt.value.id
            )
        ]
        if len(kept) != len(block):
            block[:] = kept
            changed = True
    return body, changed
