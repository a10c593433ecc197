"""Activity: which names carry derivatives. ``varied``: names whose value depends on a
``wrt`` parameter (forward, to a fixed point); ``useful``: names the returned value
depends on (backward, to a fixed point); ``Facts.active`` is both."""

from __future__ import annotations

import ast

from .facts import Facts


def find_activity(facts: Facts, assigns: list[ast.stmt], wrt: list[str], ret: ast.Return) -> None:
    """Fill ``facts.varied`` and ``facts.useful``: a name's value may come from several
    definitions, so both are fixed points over every assignment."""
    facts.varied = varied_from(facts, assigns, wrt)
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


def varied_from(facts: Facts, assigns: list[ast.stmt], seeds: list[str]) -> set[str]:
    """The names whose value depends on a parameter in ``seeds``: a fixed point over
    every assignment (``facts.ops`` classified already). Of the ``wrt`` parameters, it is
    ``facts.varied``; of one of them, what a direction of a vector JVP carries."""
    varied = set(seeds)
    changed = True
    while changed:
        changed = False
        for stmt in assigns:
            op = facts.ops[stmt]
            if op.target not in varied and any(
                isinstance(a, ast.Name) and a.id in varied for _, a in op.diff_args
            ):
                varied.add(op.target)
                changed = True
    return varied
