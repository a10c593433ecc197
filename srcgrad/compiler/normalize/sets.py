"""Part of normalize: sets of constants, in the membership tests that read them.

In:  the statements of a user function (plain Python AST, its set comprehensions written
out by now: ``normalize.dict_comprehensions``), its free names resolved, its local
names and a way to fail at a user's node.
Out: the same statements, where a set display of constants tested for membership (``in``,
``not in``), or counted (``len``), directly or through a name given it once at the top
level of the function and used only so, is the tuple of its distinct values (which
answers those the same)::

    if i in {1, 2, 1}:            ==>  if i in (1, 2):
    active = {k % 3 for k in range(6)}   ==>  active = (0, 1, 2)

Refused at the user's line, with what to write instead: a set holding a value the code
computes (a set merges equal values, so two equal floats would share one derivative:
srcgrad does not follow that), and a set of constants used otherwise (iterated in its
own order, compared, combined with ``|``).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..astwalk import copy_tree, nodes
from .constants import UNKNOWN, constant_value

Fail = Callable[[ast.AST, str], UnsupportedSyntaxError]

_ACTIVE = (
    "a set holds each value once, merging equal values, so srcgrad does not "
    "differentiate through one holding values the code computes (`{ast}`): use a tuple, a "
    "list or an array; a set of constants works (`if i in {{1, 2}}`)."
)
_ELSEWHERE = (
    "srcgrad reads a set of constants where it is tested for membership (`i in {{1, 2}}`) "
    "or counted (`len(s)`), directly or through a name given it once; `{ast}` is used "
    "otherwise here: use a tuple or a list (or a frozenset made outside the function)."
)


def lower_constant_sets(
    body: list[ast.stmt], env: dict[str, Any], local: set[str], fail: Fail
) -> list[ast.stmt]:
    """``body`` with its sets of constants as tuples (see the module's docstring); the
    user's statements are copied first where one changes."""
    lowering = _Sets(env, local, fail)
    if not any(lowering.is_set(n) for s in body for n in nodes(s)):
        return body
    body = copy_tree(body)
    named = lowering.named_sets(body)
    return [lowering.statement(s, named) for s in body]


class _Sets:
    def __init__(self, env: dict[str, Any], local: set[str], fail: Fail) -> None:
        self.env = env
        self.local = local
        self.fail = fail

    def is_set(self, node: ast.AST) -> bool:
        """A set display, or ``set()`` (the builtin)."""
        if isinstance(node, ast.Set):
            return True
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "set"
            and "set" not in self.local
            and self.env.get("set", builtins.set) is builtins.set
            and not node.args
            and not node.keywords
        )

    def distinct(self, node: ast.expr) -> ast.Tuple:
        """The tuple of the distinct values of the set ``node`` (refused where one is not
        a constant)."""
        seen: set[Any] = set()
        elts = []
        for elt in getattr(node, "elts", []):
            value = constant_value(elt, self.env, self.local)
            if value is UNKNOWN:
                raise self.fail(node, _ACTIVE.format(ast=ast.unparse(node)))
            if value not in seen:
                seen.add(value)
                elts.append(ast.copy_location(ast.Constant(value), elt))
        return ast.copy_location(ast.Tuple(elts=elts, ctx=ast.Load()), node)

    def named_sets(self, body: list[ast.stmt]) -> set[str]:
        """The names given a set once, at the top level, and only read where a set of
        constants may be."""
        stores: dict[str, int] = {}
        for node in (n for s in body for n in nodes(s)):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
        named = {
            s.targets[0].id
            for s in body
            if isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and self.is_set(s.value)
            and stores.get(s.targets[0].id) == 1
        }
        allowed = {id(n) for s in body for n in self.allowed_places(s)}
        for s in body:
            for node in nodes(s):
                if (
                    isinstance(node, ast.Name)
                    and node.id in named
                    and isinstance(node.ctx, ast.Load)
                    and id(node) not in allowed
                ):
                    raise self.fail(s, _ELSEWHERE.format(ast=node.id))
        return named

    def allowed_places(self, stmt: ast.stmt) -> list[ast.expr]:
        """The expressions in ``stmt`` where a set of constants answers as a tuple would:
        the right operand of ``in``/``not in``, the argument of ``len``."""
        out = []
        for node in nodes(stmt):
            if isinstance(node, ast.Compare):
                out += [
                    c
                    for op, c in zip(node.ops, node.comparators)
                    if isinstance(op, (ast.In, ast.NotIn))
                ]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "len"
                and "len" not in self.local
                and self.env.get("len", builtins.len) is builtins.len
                and len(node.args) == 1
            ):
                out.append(node.args[0])
        return out

    def statement(self, stmt: ast.stmt, named: set[str]) -> ast.stmt:
        allowed = {id(n) for n in self.allowed_places(stmt)}
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id in named
        ):
            allowed.add(id(stmt.value))
        sets = self

        class Replace(ast.NodeTransformer):
            def generic_visit(self, node: ast.AST) -> ast.AST:
                if isinstance(node, ast.expr) and sets.is_set(node):
                    tuple_ = sets.distinct(node)
                    if id(node) not in allowed:
                        raise sets.fail(node, _ELSEWHERE.format(ast=ast.unparse(node)))
                    return tuple_
                return super().generic_visit(node)

        return Replace().visit(stmt)
