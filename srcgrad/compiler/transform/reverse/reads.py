"""The names a core statement reads itself (not in its nested blocks): what the tape
plan and the emitter ask of each statement."""

from __future__ import annotations

import ast

from ...astwalk import loaded


def uses(stmt: ast.stmt) -> list[str]:
    """Names a core statement reads itself (not in its nested blocks)."""
    if isinstance(stmt, ast.Assign):
        return list(loads([stmt.value]))
    if isinstance(stmt, (ast.If, ast.While)):
        return list(loads([stmt.test]))
    if isinstance(stmt, ast.For):
        return list(loads([stmt.iter]))
    if isinstance(stmt, (ast.Return, ast.Expr)):
        return list(loads([stmt.value]))
    if isinstance(stmt, ast.Raise):
        return list(loads([n for n in (stmt.exc, stmt.cause) if n is not None]))
    return []


def loads(trees: list[ast.AST]) -> set[str]:
    return {n for tree in trees for n in loaded(tree)}
