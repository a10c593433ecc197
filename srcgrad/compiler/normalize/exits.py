"""Part of normalize: ``break``, ``continue`` and early ``return`` become flags.

In:  a user ``FunctionDef`` (plain Python AST) and a
:class:`~srcgrad.naming.Namer`.
Out: the same function where the only jumps left are ``if flag: break`` as
the last statement of a loop body and one ``return`` at the very end. What
follows an ``if`` one of whose branches returns goes into its other branch;
where every ``return`` then ends its path, each is an assignment of the
value, with no flag. Every other statement after a possible jump runs under
``if not flag``, so a transform sees structured code whose every path it can
replay::

    for x in xs:                      broke = False
        if x > 3:                     for x in xs:
            break                         if x > 3:
        s = s + x          ==>                broke = True
                                          if not broke:
                                              s = s + x
                                          if broke:
                                              break

A function without jumps comes back unchanged.
"""

from __future__ import annotations

import ast
import copy

from ..transform.naming import Namer

_LOOPS = (ast.For, ast.While)


def _contains(stmts: list[ast.stmt], kinds: tuple[type, ...], into_loops: bool) -> bool:
    """Whether ``stmts`` hold a statement of ``kinds`` (not looking into nested
    function definitions, nor into nested loops unless ``into_loops``)."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, kinds):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, _LOOPS) and not into_loops:
            todo.extend(node.orelse)  # a loop's else belongs to the enclosing block
            continue
        todo.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    return False


def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _set(flag: str, value: bool, where: ast.AST) -> ast.Assign:
    node = ast.Assign(targets=[_name(flag, True)], value=ast.Constant(value))
    return ast.copy_location(node, where)


def _any(flags: list[str]) -> ast.expr:
    if len(flags) == 1:
        return _name(flags[0])
    return ast.BoolOp(op=ast.Or(), values=[_name(f) for f in flags])


class _Loop:
    def __init__(self, broke: str | None, skipped: str | None) -> None:
        self.broke = broke
        self.skipped = skipped


class ExitLowering:
    def __init__(self, namer: Namer) -> None:
        self.namer = namer
        self.returned: str | None = None  # the flag set by an early return
        self.value: str | None = None  # the variable holding the returned value
        self.last = False  # every return is the last statement of its path: no flag

    def run(self, func: ast.FunctionDef) -> ast.FunctionDef:
        body = _returns_last(func.body)
        final = body[-1] if body and isinstance(body[-1], ast.Return) else None
        early = _contains(body[:-1] if final else body, (ast.Return,), into_loops=True)
        early = early or (final is None and _contains(body, (ast.Return,), True))
        jumps = _contains(body, (ast.Break, ast.Continue, ast.Return), into_loops=True)
        if not jumps or (not early and not _contains(body, (ast.Break, ast.Continue), True)):
            return func
        new = copy.copy(func)
        prologue: list[ast.stmt] = []
        if early and _returns_at_ends(body):  # no flag: every return ends its path
            self.value = self.namer.fresh("result")
            self.last = True
            if not _always_returns(body):  # (a path that ends without one returns None)
                prologue = [_none(self.value, func)]
        elif early:
            self.returned = self.namer.fresh("returned")
            self.value = self.namer.fresh("result")
            prologue = [_set(self.returned, False, func), _none(self.value, func)]
        lowered = self.block(body, None)
        if early:
            end = ast.copy_location(ast.Return(value=_name(self.value)), final or body[-1])
            lowered.append(end)
        new.body = prologue + lowered
        return new

    # -- blocks ----------------------------------------------------------------------
    def _flags(self, stmt: ast.stmt, loop: _Loop | None) -> list[str]:
        """The flags ``stmt`` may set, which the statements after it must check."""
        flags = []
        if loop and loop.broke and _contains([stmt], (ast.Break,), into_loops=False):
            flags.append(loop.broke)
        if loop and loop.skipped and _contains([stmt], (ast.Continue,), into_loops=False):
            flags.append(loop.skipped)
        if self.returned and _contains([stmt], (ast.Return,), into_loops=True):
            flags.append(self.returned)
        return flags

    def block(self, stmts: list[ast.stmt], loop: _Loop | None) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return) and self.returned is None and not self.last:
                out.append(stmt)  # the function's final return, kept as it is
                continue
            out.extend(self.statement(stmt, loop))
            flags = self._flags(stmt, loop)
            rest = stmts[i + 1 :]
            if flags and rest:
                guard = ast.UnaryOp(op=ast.Not(), operand=_any(flags))
                inner = self.block(rest, loop)
                if inner:
                    out.append(
                        ast.copy_location(ast.If(test=guard, body=inner, orelse=[]), rest[0])
                    )
                break
        return out

    def statement(self, stmt: ast.stmt, loop: _Loop | None) -> list[ast.stmt]:
        if isinstance(stmt, ast.Break):
            return [_set(loop.broke, True, stmt)]
        if isinstance(stmt, ast.Continue):
            return [_set(loop.skipped, True, stmt)]
        if isinstance(stmt, ast.Return):
            value = stmt.value if stmt.value is not None else ast.Constant(None)
            assign = ast.copy_location(
                ast.Assign(targets=[_name(self.value, True)], value=value), stmt
            )
            if self.last:
                return [assign]
            return [assign, _set(self.returned, True, stmt)]
        if isinstance(stmt, ast.If):
            new = copy.copy(stmt)
            new.body = self.block(stmt.body, loop) or [ast.copy_location(ast.Pass(), stmt)]
            new.orelse = self.block(stmt.orelse, loop)
            return [new]
        if isinstance(stmt, _LOOPS):
            return self.loop(stmt, loop)
        return [stmt]

    def loop(self, stmt: ast.For | ast.While, outer: _Loop | None) -> list[ast.stmt]:
        """The loop with its exits as flags; ``outer`` is the loop around it, which a
        ``break`` or ``continue`` in its ``else`` block leaves or continues."""
        breaks = _contains(stmt.body, (ast.Break,), into_loops=False)
        continues = _contains(stmt.body, (ast.Continue,), into_loops=False)
        returns = self.returned is not None and _contains(stmt.body, (ast.Return,), True)
        loop = _Loop(
            self.namer.fresh("broke") if breaks else None,
            self.namer.fresh("skipped") if continues else None,
        )
        before: list[ast.stmt] = []
        body: list[ast.stmt] = []
        if loop.broke:
            before.append(_set(loop.broke, False, stmt))
        if loop.skipped:
            body.append(_set(loop.skipped, False, stmt))
        body.extend(self.block(stmt.body, loop))
        stops = [f for f in (loop.broke, self.returned if returns else None) if f]
        if stops:
            exit_ = ast.If(test=_any(stops), body=[ast.Break()], orelse=[])
            body.append(ast.copy_location(exit_, stmt.body[-1]))
        new = copy.copy(stmt)
        new.body = body
        new.orelse = []
        after: list[ast.stmt] = []
        if stmt.orelse:
            orelse = self.block(stmt.orelse, outer)
            if stops:
                guard = ast.UnaryOp(op=ast.Not(), operand=_any(stops))
                after.append(
                    ast.copy_location(ast.If(test=guard, body=orelse, orelse=[]), stmt.orelse[0])
                )
            else:
                after.extend(orelse)
        return [*before, new, *after]


def _always_returns(block: list[ast.stmt]) -> bool:
    """Whether every path through ``block`` ends in a ``return`` of its own."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _returns_last(block: list[ast.stmt]) -> list[ast.stmt]:
    """``block`` with what follows an ``if`` one of whose branches always returns moved
    into its other branch, so that a return ends its path (loops are left as they are)::

        if n == 0:                        if n == 0:
            return 1.0          ==>           return 1.0
        return x * f(x, n - 1)            else:
                                              return x * f(x, n - 1)
    """
    out: list[ast.stmt] = []
    for k, stmt in enumerate(block):
        if not isinstance(stmt, ast.If):
            out.append(stmt)
            continue
        new = copy.copy(stmt)
        new.body, new.orelse = _returns_last(stmt.body), _returns_last(stmt.orelse)
        rest = block[k + 1 :]
        out.append(new)
        if rest and _always_returns(new.body) and not _always_returns(new.orelse):
            new.orelse = _returns_last(new.orelse + rest)
            break
        if rest and _always_returns(new.orelse) and not _always_returns(new.body):
            new.body = _returns_last(new.body + rest)
            break
    return out


def _returns_at_ends(block: list[ast.stmt]) -> bool:
    """Whether every ``return`` in ``block`` is the last statement of a path through it
    (none in a loop)."""
    for stmt in block[:-1]:
        if _contains([stmt], (ast.Return,), into_loops=True):
            return False
    if not block:
        return True
    last = block[-1]
    if isinstance(last, ast.If):
        return _returns_at_ends(last.body) and _returns_at_ends(last.orelse)
    return isinstance(last, ast.Return) or not _contains([last], (ast.Return,), True)


def _none(name: str, where: ast.AST) -> ast.Assign:
    return ast.copy_location(
        ast.Assign(targets=[_name(name, True)], value=ast.Constant(None)), where
    )


def lower_exits(func: ast.FunctionDef, namer: Namer) -> ast.FunctionDef:
    """``func`` with break, continue and early return turned into flags."""
    return fix_locations(ExitLowering(namer).run(func))


def fix_locations(tree: ast.AST) -> ast.AST:
    """``ast.fix_missing_locations`` without recursion: a node without a position takes
    its parent's. (The user's tree is as deep as its longest expression, and Python
    runs a sum of a thousand terms, which the recursive version cannot walk.)"""
    todo: list[tuple[ast.AST, tuple[int, int, int, int]]] = [(tree, (1, 0, 1, 0))]
    fields = ("lineno", "col_offset", "end_lineno", "end_col_offset")
    while todo:
        node, inherited = todo.pop()
        if "lineno" in node._attributes:
            for name, value in zip(fields, inherited):
                if getattr(node, name, None) is None:
                    setattr(node, name, value)
            inherited = tuple(getattr(node, name) for name in fields)
        todo.extend((child, inherited) for child in ast.iter_child_nodes(node))
    return tree
