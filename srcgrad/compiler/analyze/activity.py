"""Activity: which names carry derivatives. ``varied``: names whose value depends on a
``wrt`` parameter (forward, to a fixed point); ``useful``: names the returned value
depends on (backward, to a fixed point); ``Facts.active`` is both."""

from __future__ import annotations

import ast

from .facts import Facts


def find_activity(facts: Facts, assigns: list[ast.stmt], wrt: list[str], ret: ast.Return) -> None:
    """Fill ``facts.varied`` and ``facts.useful``: a name's value may come from several
    definitions, so both are fixed points over every assignment."""
    facts.varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for stmt in assigns:
            op = facts.ops[stmt]
            if op.target not in facts.varied and any(
                isinstance(a, ast.Name) and a.id in facts.varied for _, a in op.diff_args
            ):
                facts.varied.add(op.target)
                changed = True
    if isinstance(ret.value, ast.Name):
        facts.useful.add(ret.value.id)
    changed = True
    while changed:
        changed = False
        for stmt in reversed(assigns):
            op = facts.ops[stmt]
            if op.target in facts.useful:
                new = {a.id for _, a in op.diff_args if isinstance(a, ast.Name)} - facts.useful
                if new:
                    facts.useful |= new
                    changed = True
