"""Part of the reverse-mode emitter: what the primal sweep computes once, before a loop,
instead of on every trip (``t = -k`` on scalars no trip changes)."""

from __future__ import annotations

import ast

from ...analyze.facts import Facts
from ...astwalk import nodes
from .reads import uses
from .tape_plan import TapePlan


def hoistable(body: list[ast.stmt], plan: TapePlan, facts: Facts) -> list[ast.stmt]:
    """Statements of a loop's body computing the same number on every trip by
    arithmetic that cannot fail (``t = -k``, ``c = dt * k`` on scalars): the
    primal computes them once, before the loop."""
    out = []
    read_before: set[str] = set()
    # (an invariant may read another one, given its value in the loop: only if that
    # one moves out too)
    inside = {
        n.id
        for n in nodes(ast.Module(body=body, type_ignores=[]))
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    hoisted: set[str] = set()
    for stmt in body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            v = stmt.targets[0].id
            value = stmt.value
            cheap = (
                isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd))
            ) or (
                isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult))
            )
            operands = [n for n in ast.iter_child_nodes(value) if isinstance(n, ast.expr)]
            if (
                cheap
                and v in plan.invariant
                and v not in read_before
                and all(
                    isinstance(a, ast.Constant)
                    and type(a.value) in (int, float)
                    or isinstance(a, ast.Name)
                    and facts.shape(a).rank == 0
                    and (a.id not in inside or a.id in hoisted)
                    for a in operands
                )
            ):
                out.append(stmt)
                hoisted.add(v)
        for node in [stmt] + [n for n in nodes(stmt) if isinstance(n, ast.stmt)]:
            read_before.update(uses(node))
    return out
