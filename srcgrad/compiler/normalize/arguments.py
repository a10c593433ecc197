"""Part of normalize: a function that writes into an argument works on its own copy.

``x[i] = v`` (or ``x[i] += v``) with ``x`` a parameter that the function never rebinds
changes the caller's array in numpy. srcgrad's derivatives never change their
arguments, so the function is differentiated as if it began with ``x = x.copy()``: the
values are numpy's, and the caller's array stays as it was (as in Tangent and
tangent-ad)::

    def f(x, y):                        def f(x, y):
        x[0] = x[1] * y        ==>          x = x.copy()
        return np.sum(x * x)                x[0] = x[1] * y
                                            return np.sum(x * x)

Only a write into the parameter itself counts (``x[i]``, ``x[i:j]``, ``x[mask]``): a
write one level further in (``p["w"][0] = v``, into an array a dict holds) would need
a deep copy, and stays an error, as does a write through a view (``v = x[0:2]``).
"""

from __future__ import annotations

import ast

from ..astwalk import nodes


def copy_written_parameters(
    body: list[ast.stmt], params: list[str]
) -> tuple[list[ast.stmt], dict[str, ast.stmt]]:
    """``body`` with ``p = p.copy()`` first for each parameter ``p`` written into and
    never rebound (placed at the line of its first write); and, for each such ``p``, the
    user's statement that first writes into it."""
    rebound: set[str] = set()
    first_write: dict[str, ast.stmt] = {}
    for stmt in _statements(body):
        for target in _targets(stmt):
            for node in nodes(target):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    rebound.add(node.id)
                if (
                    isinstance(node, ast.Subscript)
                    and isinstance(node.ctx, ast.Store)
                    and isinstance(node.value, ast.Name)
                ):
                    first_write.setdefault(node.value.id, stmt)
    made = {p: first_write[p] for p in params if p in first_write and p not in rebound}
    copies: list[ast.stmt] = []
    for p, write in made.items():
        method = ast.Attribute(value=ast.Name(id=p, ctx=ast.Load()), attr="copy", ctx=ast.Load())
        copy = ast.Assign(
            targets=[ast.Name(id=p, ctx=ast.Store())],
            value=ast.Call(func=method, args=[], keywords=[]),
        )
        for node in nodes(copy):
            ast.copy_location(node, write)
        copies.append(copy)
    return ([*copies, *body] if copies else body), made


def _statements(body: list[ast.stmt]):
    """Every statement of ``body``, nested blocks included (not nested functions)."""
    todo = list(reversed(body))
    while todo:
        stmt = todo.pop()
        yield stmt
        for field in ("body", "orelse"):
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                todo.extend(reversed(getattr(stmt, field, None) or []))


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For)):
        return [stmt.target]
    if isinstance(stmt, ast.With):
        return [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return []
