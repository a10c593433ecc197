"""Part of normalize: list comprehensions become the loops they mean (and ``:=`` an
assignment of its own).

In:  the statements of a user function (plain Python AST) and a
:class:`~srcgrad.compiler.transform.naming.Namer`.
Out: the same statements, where a list comprehension in a statement that evaluates it
once (an assignment, an expression statement, a ``return``, a ``for``'s iterable, an
``if``'s test) is
built by a loop of ``append``s just before the statement, and a generator expression
given to the builtin ``sum`` or ``list`` is built the same way (those take any
iterable, so a list means the same). The loop variables get names of their own: a
comprehension's variables are its own in Python 3, never the function's::

    terms = [np.sin(v) * w for v in x if v > 0]      terms = []
                                                     for v_1 in x:
                                           ==>           if v_1 > 0:
                                                             terms.append(np.sin(v_1) * w)

An assignment expression ``(y := v)`` in the same places becomes ``y = v`` just before
the statement (a walrus inside a comprehension binds in the function, as Python's
does). Left as they are (and refused later, with what to write instead): either one
evaluated only on some paths (in a conditional expression, after ``and``/``or``, in a
lambda, in a ``while`` test), set and dict comprehensions, and generator
expressions anywhere else (``np.stack`` refuses generators, ``np.array`` makes an
object array of one: numpy does not read them as lists).
"""

from __future__ import annotations

import ast
import builtins
import copy
from typing import Any

from ..astwalk import copy_tree, nodes
from ..transform.naming import Namer

#: builtins that consume any iterable the way they consume a list
_CONSUMERS = {"sum": builtins.sum, "list": builtins.list}
#: expressions whose operands are evaluated on some paths only, or later
_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.Lambda)
#: statements whose expressions are evaluated once, where they stand
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


def lower_comprehensions(body: list[ast.stmt], namer: Namer, env: dict[str, Any]) -> list[ast.stmt]:
    """``body`` with its comprehensions lowered (see the module's docstring); the user's
    statements are left as they are (a statement holding one is copied first)."""
    kinds = (ast.ListComp, ast.GeneratorExp, ast.NamedExpr)
    if not any(isinstance(n, kinds) for s in body for n in nodes(s)):
        return body
    return _Lowering(namer, env).block(copy_tree(body))


class _Lowering:
    def __init__(self, namer: Namer, env: dict[str, Any]) -> None:
        self.namer = namer
        self.env = env

    def block(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            out.extend(self.statement(stmt))
        return out

    def statement(self, stmt: ast.stmt) -> list[ast.stmt]:
        if isinstance(stmt, ast.While):
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse)
            return [stmt]
        if isinstance(stmt, (ast.For, ast.If)):  # (the iterable, the test: evaluated once)
            before = self.hoist(stmt, "iter" if isinstance(stmt, ast.For) else "test")
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse)
            return [*before, stmt]
        if not isinstance(stmt, _SIMPLE):
            return [stmt]
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and self.lowerable(stmt.value)
            and not _reads(stmt.value, stmt.targets[0].id)
        ):  # terms = [...]: the loop appends to terms itself
            return self.build(stmt.value, stmt.targets[0].id, stmt)
        return [*self.hoist(stmt, "value"), stmt]

    def hoist(self, node: Any, field: str, owner: ast.stmt | None = None) -> list[ast.stmt]:
        """Lower the comprehensions of ``node.field`` (an expression), each replaced by
        the name of its list; the statements that build them."""
        value = getattr(node, field, None)
        if not isinstance(value, ast.expr):
            return []
        owner = owner if owner is not None else node
        if isinstance(value, ast.NamedExpr) and isinstance(value.target, ast.Name):
            # (y := v): y = v just before, then y (v's own comprehensions first)
            holder = _Holder(value.value)
            before = self.hoist(holder, "value", owner)
            target = ast.Name(id=value.target.id, ctx=ast.Store())
            assign = ast.copy_location(ast.Assign(targets=[target], value=holder.value), owner)
            setattr(
                node, field, ast.copy_location(ast.Name(id=value.target.id, ctx=ast.Load()), value)
            )
            return [*before, assign]
        if self.lowerable(value):
            name = self.namer.fresh("items")
            setattr(node, field, ast.copy_location(ast.Name(id=name, ctx=ast.Load()), value))
            return self.build(value, name, owner)
        if isinstance(value, (*_CONDITIONAL, ast.ListComp, ast.GeneratorExp, ast.NamedExpr)):
            return []  # (evaluated on some paths only; or left for the refusal)
        out: list[ast.stmt] = []
        for child_field, child in ast.iter_fields(value):
            if isinstance(child, ast.expr):
                out += self.hoist(value, child_field, owner)
            elif isinstance(child, list):
                for k in range(len(child)):
                    out += self.hoist_in(child, k, owner)
        return out

    def hoist_in(self, items: list[Any], k: int, owner: ast.stmt) -> list[ast.stmt]:
        """:meth:`hoist` for the ``k``-th of a list of expressions (a call's arguments)."""
        if isinstance(items[k], ast.keyword):
            return self.hoist(items[k], "value", owner)
        if not isinstance(items[k], ast.expr):
            return []
        holder = _Holder(items[k])
        out = self.hoist(holder, "value", owner)
        items[k] = holder.value
        return out

    def lowerable(self, node: ast.expr) -> bool:
        """A list comprehension, or ``sum``/``list`` of a generator expression."""
        if isinstance(node, ast.ListComp):
            return True
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _CONSUMERS
            and self.env.get(node.func.id, _CONSUMERS[node.func.id]) is _CONSUMERS[node.func.id]
            and len(node.args) == 1
            and isinstance(node.args[0], ast.GeneratorExp)
        )

    def build(self, node: ast.expr, name: str, owner: ast.stmt) -> list[ast.stmt]:
        """``name = []`` and the loops appending to it (for ``sum(...)`` of a generator,
        then ``name = sum(name)``)."""
        consumer = None
        if isinstance(node, ast.Call):
            consumer, node = node.func.id, node.args[0]
        assert isinstance(node, (ast.ListComp, ast.GeneratorExp))
        elt, generators = node.elt, node.generators
        loops: list[ast.stmt] = []
        renamed: dict[str, str] = {}
        nest = loops  # where the next statement goes
        for k, gen in enumerate(generators):
            if gen.is_async:
                return [owner]  # (left for the normalizer to refuse)
            iterable = gen.iter if k == 0 else _renamed(gen.iter, renamed)
            for target in _names(gen.target):
                renamed[target] = self.namer.fresh(target)
            loop = ast.For(target=_renamed(gen.target, renamed), iter=iterable, body=[], orelse=[])
            nest.append(loop)
            nest = loop.body
            for condition in gen.ifs:
                branch = ast.If(test=_renamed(condition, renamed), body=[], orelse=[])
                nest.append(branch)
                nest = branch.body
        append = ast.Attribute(
            value=ast.Name(id=name, ctx=ast.Load()), attr="append", ctx=ast.Load()
        )
        nest.append(
            ast.Expr(value=ast.Call(func=append, args=[_renamed(elt, renamed)], keywords=[]))
        )
        out: list[ast.stmt] = [
            ast.Assign(
                targets=[ast.Name(id=name, ctx=ast.Store())],
                value=ast.List(elts=[], ctx=ast.Load()),
            )
        ]
        out += loops
        if consumer == "sum":  # (list: the list itself)
            call = ast.Call(
                func=ast.Name(id=consumer, ctx=ast.Load()),
                args=[ast.Name(id=name, ctx=ast.Load())],
                keywords=[],
            )
            out.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=call))
        for stmt in out:
            for n in nodes(stmt):
                if isinstance(n, (ast.stmt, ast.expr)) and not hasattr(n, "lineno"):
                    ast.copy_location(n, owner)
            ast.copy_location(stmt, owner)
        return self.block(out)  # (comprehensions inside the element, in turn)


class _Holder:
    """A field holder for :meth:`_Lowering.hoist` over an item of a list."""

    def __init__(self, value: ast.expr) -> None:
        self.value = value


def _names(target: ast.expr) -> list[str]:
    return [n.id for n in nodes(target) if isinstance(n, ast.Name)]


def _reads(node: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in nodes(node))


def _renamed(node: ast.expr, renamed: dict[str, str]) -> ast.expr:
    """A copy of ``node`` with the names in ``renamed`` replaced (positions kept)."""

    class Rename(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.Name:
            if n.id in renamed:
                return ast.copy_location(ast.Name(id=renamed[n.id], ctx=n.ctx), n)
            return n

    return Rename().visit(copy.deepcopy(node))
