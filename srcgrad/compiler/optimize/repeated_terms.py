"""Pass: ``v = e; v = v + e`` is ``v = e * 2``."""

from __future__ import annotations

import ast

from .dataflow import Context, _pure, blocks, reads, target


def double_repeated_terms(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = e`` then ``v = v + e`` is ``v = e * 2`` (both of ``x * x``'s operands give
    ``x``'s adjoint the same term; doubling is exact).

    Before::                 After::

        q_bar = g * q            q_bar = g * q * 2
        q_bar = q_bar + g * q
    """
    changed = False
    for block in blocks(body):
        i = -1
        while i + 2 < len(block):
            i += 1
            first, second = block[i], block[i + 1]
            v = target(first)
            if (
                v is None
                or not isinstance(first, ast.Assign)
                or v in reads(first.value)
                or target(second) != v
                or not isinstance(second, ast.Assign)
            ):
                continue
            value = second.value
            if (
                isinstance(value, ast.BinOp)
                and isinstance(value.op, ast.Add)
                and isinstance(value.left, ast.Name)
                and value.left.id == v
                and ast.dump(value.right) == ast.dump(first.value)
                and _pure(first.value)
            ):
                doubled = ast.BinOp(left=first.value, op=ast.Mult(), right=ast.Constant(2))
                block[i] = ast.Assign(targets=first.targets, value=doubled)
                del block[i + 1]
                changed = True
    return body, changed
