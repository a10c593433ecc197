"""Pass: a copy of an array just made by arithmetic goes."""

from __future__ import annotations

import ast

from .dataflow import Context, blocks, reads, shares, target, writes


def drop_fresh_copies(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = v.copy()`` copies nothing another name could see where the statement that
    last read or wrote ``v``, in the same block, gave it a new array: the result of
    arithmetic (or a number: numpy's operators never return a view) or of a function
    that always makes one (``np.zeros_like``, ``np.full_like``: ``dataflow.shares``).

    Before::                     After::

        y_bar = y * 2                y_bar = y * 2
        x_bar = np.zeros_like(x)     x_bar = np.zeros_like(x)
        y_bar = y_bar.copy()         t = y_bar * 0.5
        t = y_bar * 0.5              g = np.full_like(x, 1.0)
        x_bar = x_bar.copy()
        g = np.full_like(x, 1.0)
        g = g.copy()
    """
    changed = False
    for block in blocks(body):
        kept: list[ast.stmt] = []
        for stmt in block:
            v = _copy_of_itself(stmt)
            if v is not None and _made_by_arithmetic(kept, v):
                changed = True
                continue
            kept.append(stmt)
        block[:] = kept
    return body, changed


def _copy_of_itself(stmt: ast.stmt) -> str | None:
    """``v`` for ``v = v.copy()``."""
    v = target(stmt)
    value = getattr(stmt, "value", None)
    if (
        v is not None
        and isinstance(value, ast.Call)
        and not value.args
        and not value.keywords
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "copy"
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == v
    ):
        return v
    return None


def _made_by_arithmetic(before: list[ast.stmt], v: str) -> bool:
    """Whether the last of ``before`` that reads or writes ``v`` is ``v = a <op> b``,
    ``v = -a`` (reading ``v`` itself or not) or ``v = np.zeros_like(a)``: a new array."""
    for stmt in reversed(before):
        if v in writes(stmt) or v in reads(stmt):
            value = getattr(stmt, "value", None)
            return (
                target(stmt) == v
                and isinstance(value, (ast.BinOp, ast.UnaryOp, ast.Call))
                and not shares(value)
            )
    return False
