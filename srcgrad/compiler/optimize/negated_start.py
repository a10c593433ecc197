"""Pass: ``v = -a; v = v + b`` is ``v = b - a``."""

from __future__ import annotations

import ast

from .dataflow import Context, _accumulated, _pure, _written_into, blocks, reads, target, writes


def _negated(value: ast.expr) -> ast.expr | None:
    """``a`` where ``value`` is ``-a``, or a product or quotient whose leftmost factor is
    negated (``-a * b / c`` is ``-(a * b / c)`` exactly); None otherwise."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        return value.operand
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mult, ast.Div)):
        left = _negated(value.left)
        if left is not None:
            return ast.BinOp(left=left, op=value.op, right=value.right)
    return None


def subtract_negated_start(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = -a`` followed (in the same block) by ``v = v + b`` is ``v = b - a``, where
    nothing between reads or writes ``v`` or changes what ``a`` reads: one operation
    instead of two, and exactly the same numbers (``-a + b`` is ``b - a``).

    Before::                      After::

        a_bar = -r_bar                y = x * 3.0
        y = x * 3.0                   a_bar = t4_bar - r_bar
        a_bar = a_bar + t4_bar
    """
    changed = False
    for block in blocks(body):
        i = 0
        while i < len(block):
            v = target(block[i])
            value = block[i].value if v is not None else None
            positive = _negated(value) if value is not None else None
            if positive is None or not _pure(value) or v in reads(value):
                i += 1
                continue
            inputs = set(reads(positive))
            for j in range(i + 1, len(block)):
                stmt = block[j]
                if v in reads(stmt) or v in writes(stmt):
                    added = stmt.value if isinstance(stmt, ast.Assign) else None
                    rest = _accumulated(v, added) if isinstance(added, ast.BinOp) else None
                    if rest is not None and target(stmt) == v:
                        difference = ast.BinOp(left=rest, op=ast.Sub(), right=positive)
                        block[j] = ast.copy_location(
                            ast.Assign(targets=stmt.targets, value=difference), stmt
                        )
                        del block[i]
                        changed = True
                        i -= 1
                    break
                if inputs & (set(writes(stmt)) | _written_into(stmt)):
                    break
            i += 1
    return body, changed
