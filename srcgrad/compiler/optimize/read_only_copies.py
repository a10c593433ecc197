"""Pass: a copy nothing writes through while it is read is the value itself."""

from __future__ import annotations

import ast

import numpy as np

from ..analyze.facts import is_append
from ..astwalk import nodes
from ..transform.builder import is_marker
from .dataflow import (
    Context,
    _forget,
    _statements,
    _stmt_shares,
    _written_into,
    blocks,
    reads,
    shares,
    target,
    writes,
)

#: methods that neither change their object nor return a view of it that a later write
#: could reach unseen (a view such as ``.T`` is a value ``shares`` follows anyway)
_READING_METHODS = frozenset(
    "copy sum mean prod max min any all std var argmax argmin dot conj conjugate astype "
    "item tolist reshape ravel flatten transpose squeeze swapaxes cumsum cumprod round "
    "clip nonzero get keys values items index count".split()
)

#: numpy functions that write into an argument
_WRITING_FUNCTIONS = frozenset(
    "copyto put place putmask fill_diagonal put_along_axis shuffle ndarray".split()
)

#: Python's functions that write into none of their arguments
_READING_BUILTINS = frozenset(
    "range len float int abs min max sum reversed enumerate zip isinstance tuple list bool "
    "complex round divmod pow iter dict sorted any all slice type".split()
)

_COMPOUND = (ast.If, ast.For, ast.While)
#: statements the pass looks through; anything else (a nested def, a ``with``) stops it
_PLAIN = (ast.Assign, ast.AugAssign, ast.Expr, ast.Return, ast.Pass, *_COMPOUND)


def drop_read_only_copies(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``a = b.copy()`` is ``a = b`` where no one can tell the two apart: while ``a`` is
    read, nothing writes into the memory of ``b`` or of ``a``, and ``a``'s array goes
    nowhere else.

    Precisely, for ``a = e.copy()`` in a block (``e`` any expression):

    - ``a`` is given a value only there, and every read of ``a`` is in the statements
      of that block after it (so each read sees this statement's value, in a loop the
      same trip's);
    - no statement reads ``a`` into another value that may share its memory (``c = a``,
      ``c = a[1:]``, ``t.append(a)``, ``items += [a]``, ``for row in a``, ``return a``):
      the memory ``a`` may share is read only where ``a`` itself is;
    - from the copy to the last statement that reads ``a`` (that one included), nothing
      writes in place into an array any name sharing memory with ``a`` or ``e`` may
      hold (``y[i] = v``, ``y += v``, a method other than a reading one, a call with
      ``out=``, numpy's writing functions), no function of the user's (nor a function
      srcgrad does not know) is called, and the function is not cut there into an
      augmented primal and its adjoint (the record would keep ``a``);
    - the names sharing memory are found through every assignment, push and pop of the
      function (:func:`~.dataflow.shares`), taking every copy the pass may drop as
      sharing already.

    ``np.copy(e)`` stays: it makes an array of a list or a number, which ``e`` is not.

    Before::                              After::

        t9_bar = u_bar[1:-1].copy()           t9_bar = u_bar[1:-1]
        r_bar += np.sum(t9_bar * t8)          r_bar += np.sum(t9_bar * t8)
        t8_bar = t9_bar * r                   t8_bar = t9_bar * r
        u_bar[:-2] += t8_bar                  u_bar[:-2] += t8_bar
    """
    candidates = [
        (block, k)
        for block in blocks(body)
        for k, stmt in enumerate(block)
        if _copied(stmt) is not None
    ]
    if not candidates:
        return body, False
    groups = _Groups(body, ctx)
    statements = list(_statements(body))
    changed = False
    for block, k in candidates:
        stmt = block[k]
        a, value = target(stmt), _copied(stmt)
        if _drops(a, value, block, k, body, statements, groups, ctx):
            stmt.value = value
            _forget(stmt)
            changed = True
    return body, changed


def _copied(stmt: ast.stmt) -> ast.expr | None:
    """``e`` of ``a = e.copy()`` (``a`` a name that ``e`` does not read)."""
    a = target(stmt)
    if a is None or len(stmt.targets) != 1:
        return None
    value = stmt.value
    if not (
        isinstance(value, ast.Call)
        and not value.args
        and not value.keywords
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "copy"
    ):
        return None
    copied = value.func.value
    if a in reads(copied):
        return None
    return copied


class _Groups:
    """Names that may share memory, joined through every assignment of a value that may
    be (a view of) another name's array, every push (the list and the value) and pop,
    and every ``for`` target (a row of what it iterates over); each ``a = e.copy()`` as
    if it were ``a = e``."""

    def __init__(self, body: list[ast.stmt], ctx: Context) -> None:
        self.parent: dict[str, str] = {}
        for stmt in _statements(body):
            if isinstance(stmt, ast.For):
                for t in _names(stmt.target):
                    for s in shares(stmt.iter):
                        self.join(t, s)
                continue
            copied = _copied(stmt)
            shared = shares(copied) if copied is not None else _stmt_shares(stmt)
            if is_append(stmt):
                owners = [stmt.value.func.value]
            elif isinstance(stmt, ast.Assign):
                owners = stmt.targets
            else:
                continue
            for owner in owners:
                for t in _names(owner):
                    for s in shared:
                        self.join(t, s)

    def find(self, n: str) -> str:
        while self.parent.get(n, n) != n:
            self.parent[n] = self.parent.get(self.parent[n], self.parent[n])
            n = self.parent[n]
        return n

    def join(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)

    def same(self, a: str, b: str) -> bool:
        return self.find(a) == self.find(b)


def _names(node: ast.expr) -> list[str]:
    """The names a target assigns or writes into (``a``, ``(a, b)``, ``y[i]``'s ``y``)."""
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for e in node.elts for n in _names(e)]
    return []


def _drops(
    a: str,
    value: ast.expr,
    block: list[ast.stmt],
    k: int,
    body: list[ast.stmt],
    statements: list[ast.stmt],
    groups: _Groups,
    ctx: Context,
) -> bool:
    """Whether ``a = value.copy()`` (``block[k]``) may be ``a = value`` (see
    :func:`drop_read_only_copies`)."""
    if sum(writes(s).count(a) for s in body) != 1:
        return False  # (a compound statement counts its blocks' writes and reads)
    reading = [j for j in range(k + 1, len(block)) if a in reads(block[j])]
    if not reading:
        return False
    inside = sum(reads(block[j]).count(a) for j in reading)
    if sum(reads(s).count(a) for s in body) != inside:
        return False  # (a read elsewhere: after a loop, in a loop's test)
    for s in statements:
        if s is block[k]:
            continue
        if isinstance(s, ast.For):
            shared = shares(s.iter)
        elif isinstance(s, ast.AugAssign):  # (a list's += keeps the items it is given)
            shared = shares(s.value)
        else:
            shared = _stmt_shares(s)
        if a in shared:
            return False  # (another name, a list or a result would keep its memory)
    own = set(ctx.arguments) | {n for s in statements for n in writes(s)}
    if not shares(value) <= own:
        return False  # (a module's array: anything may change it)
    window = block[k + 1 : reading[-1] + 1]
    return all(_leaves_alone(s, a, groups, ctx, own) for s in window)


def _leaves_alone(stmt: ast.stmt, a: str, groups: _Groups, ctx: Context, own: set[str]) -> bool:
    """Whether ``stmt`` (and its blocks) writes into no array sharing memory with ``a``
    and calls nothing that could."""
    if is_marker(stmt):
        return False
    for inner in nodes(stmt):
        if isinstance(inner, ast.stmt):
            if not isinstance(inner, _PLAIN):
                return False
            if not isinstance(inner, _COMPOUND) and any(
                groups.same(a, v) for v in _written_into(inner)
            ):
                return False
        elif isinstance(inner, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
        elif isinstance(inner, ast.Call) and not _harmless_call(inner, a, groups, ctx, own):
            return False
    return True


def _harmless_call(call: ast.Call, a: str, groups: _Groups, ctx: Context, own: set[str]) -> bool:
    """Whether ``call`` writes into no array sharing memory with ``a``, nor keeps it: an
    array module's function that writes nowhere, srcgrad's helpers, Python's functions
    that only read, a reading method, or another method of an object given nothing
    sharing memory with ``a``."""
    if any(k.arg == "out" for k in call.keywords):
        return False
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in own:
            return False
        return func.id in set((ctx.helpers or {}).values()) or func.id in _READING_BUILTINS
    if not isinstance(func, ast.Attribute):
        return False
    root = func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if ctx.xp is not None and isinstance(root, ast.Name) and root.id == ctx.xp:
        if func.attr in _WRITING_FUNCTIONS:
            return False
        found = getattr(np, func.attr, None)
        if isinstance(found, np.ufunc) and len(call.args) > found.nin:
            return False  # (an output given by position)
        return True
    if func.attr in _READING_METHODS:
        return True
    given = [func.value, *call.args, *(k.value for k in call.keywords)]
    return not any(groups.same(a, n) for g in given for n in shares(g))
