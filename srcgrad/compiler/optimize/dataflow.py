"""What the passes ask of statements: the names each reads and writes (kept while
the optimizer runs), blocks, purity, and which arrays may be written into in place."""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..analyze.facts import is_append
from ..astwalk import copy_tree, loaded, nodes, stored
from ..transform.builder import is_comment


def reads(node: ast.AST) -> list[str]:
    """Names a statement (with its nested blocks) or expression reads."""
    memo = getattr(_local, "memo", None)
    if memo is not None and isinstance(node, ast.stmt):
        return list(_summary(node, memo)[0])
    return _reads(node)


def _reads(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):  # the target's index (and written array) count too
        node = ast.Tuple(elts=[node.value, *node.targets], ctx=ast.Load())
    return loaded(node)


@dataclass(frozen=True)
class Context:
    """What every pass is given besides the code (one signature for all:
    ``pass(body, ctx) -> (body, changed)``)."""

    #: names never substituted away: the function's parameters and the user's variables
    params: frozenset[str] = frozenset()
    #: the function's own parameters
    arguments: frozenset[str] = frozenset()
    #: the name the code calls the array module by (None: no array module)
    xp: str | None = None
    #: names the compiler made (``t3``), which inlining may write into their readers
    temporaries: frozenset[str] = frozenset()
    #: the names the code calls srcgrad's runtime helpers by (None: none known)
    helpers: Mapping[str, str] | None = None
    #: the parameters whose arguments are floats (numbers or float arrays)
    floats: frozenset[str] = frozenset()
    #: names never written into in place: those that may hold complex values (a complex
    #: array changed in place is not differentiated again) or integers (a zero made like
    #: one is an integer array, which takes no float in place), and their adjoints
    not_in_place: frozenset[str] = frozenset()
    #: each tangent's or adjoint's primal (``x_bar`` -> ``x``): where its every value is
    #: an array, it has the primal's shape
    primal_of: Mapping[str, str] = field(default_factory=dict)
    #: names a comparison may give, and arrays not proven floats: a fold that drops a
    #: float constant would change their dtype (``-1.0 * mask`` is a float; ``-mask``
    #: raises)
    not_floats: frozenset[str] = frozenset()


#: while :func:`optimize` runs, in ``_local.memo``: each simple statement's reads and
#: writes by id, with the statement itself (so that no other statement takes its id).
#: The passes ask for them tens of times per statement; one that changes a statement in
#: place forgets it (:func:`_forget`). A compound statement's come from its blocks'.
_local = threading.local()


_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.Pass)


_Summary = tuple[list[str], list[str], frozenset[str], frozenset[str]]


def _summary(stmt: ast.stmt, memo: dict) -> _Summary:
    """The names ``stmt`` reads and writes, those whose arrays it writes into in place
    (:func:`_written_into`) and those it stores items of (``y[i] = v``, not ``y += v``),
    from one walk of a simple statement (kept in ``memo``) or its blocks' for a compound
    one."""
    hit = memo.get(id(stmt))
    if hit is not None and hit[0] is stmt:
        return hit[1:]
    if isinstance(stmt, _SIMPLE):
        found = _scan(stmt)
        memo[id(stmt)] = (stmt, *found)
        return found
    if isinstance(stmt, (ast.If, ast.For, ast.While)):
        head = [stmt.target, stmt.iter] if isinstance(stmt, ast.For) else [stmt.test]
        read = [n for h in head for n in loaded(h)]
        written = [n for h in head for n in stored(h)]
        into: set[str] = set()
        items: set[str] = set()
        for inner in (*stmt.body, *stmt.orelse):
            r, w, i, k = _summary(inner, memo)
            read += r
            written += w
            into |= i
            items |= k
        return read, written, frozenset(into), frozenset(items)
    return _scan(stmt)


def _scan(stmt: ast.stmt) -> _Summary:
    """One walk of ``stmt``: the names it reads (an assignment's target index counts),
    those it assigns, those whose arrays it writes into (``y[i] = v``, ``y += v``), and
    the names it stores an item of directly (``y[i] = v``)."""
    read: list[str] = []
    written: list[str] = []
    into: set[str] = set()
    items: set[str] = set()
    name, load, sub, store, aug = ast.Name, ast.Load, ast.Subscript, ast.Store, ast.AugAssign
    for n in nodes(stmt):
        kind = type(n)
        if kind is name:
            (read if type(n.ctx) is load else written).append(n.id)
            continue
        where = n.target if kind is aug else n if kind is sub and type(n.ctx) is store else None
        if kind is sub and where is n and type(n.value) is name:
            items.add(n.value.id)
        while type(where) is sub:
            where = where.value
        if type(where) is name:
            into.add(where.id)
    return read, written, frozenset(into), frozenset(items)


def _forget(stmt: ast.stmt) -> None:
    """``stmt`` (and any statement in its blocks) changed in place."""
    memo = getattr(_local, "memo", None)
    if memo is not None:
        settled = _local.settled
        if isinstance(stmt, _SIMPLE):
            memo.pop(id(stmt), None)
            settled.pop(id(stmt), None)
            return
        for n in nodes(stmt):
            if isinstance(n, ast.stmt):
                memo.pop(id(n), None)
                settled.pop(id(n), None)


def settled(stmt: ast.stmt, how: str) -> bool:
    """Whether a pass found ``stmt`` already as ``how`` (its name) leaves it, whatever
    the code around it, and nothing has changed it since (:func:`_forget`)."""
    found = getattr(_local, "settled", None)
    if found is None:
        return False
    hit = found.get(id(stmt))
    return hit is not None and hit[0] is stmt and how in hit[1]


def settle(stmt: ast.stmt, how: str) -> None:
    """Note that the pass ``how`` leaves ``stmt`` as it is, whatever the code around it
    (kept with the statement, so that no other statement takes its id)."""
    found = getattr(_local, "settled", None)
    if found is not None:
        hit = found.get(id(stmt))
        if hit is None or hit[0] is not stmt:
            found[id(stmt)] = (stmt, {how})
        else:
            hit[1].add(how)


def own_reads(stmt: ast.stmt) -> list[str]:
    """Names a statement reads itself, not in its nested blocks."""
    if isinstance(stmt, (ast.If, ast.While)):
        return reads(stmt.test)
    if isinstance(stmt, ast.For):
        return reads(stmt.iter)
    return reads(stmt)


def writes(node: ast.AST) -> list[str]:
    """Names a statement (with its nested blocks) assigns."""
    memo = getattr(_local, "memo", None)
    if memo is not None and isinstance(node, ast.stmt):
        return list(_summary(node, memo)[1])
    return stored(node)


def own_writes(stmt: ast.stmt) -> list[str]:
    """Names a statement assigns itself, not in its nested blocks."""
    if isinstance(stmt, ast.For):
        return writes(stmt.target)
    if isinstance(stmt, (ast.If, ast.While)):
        return []
    return writes(stmt)


def target(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """``body`` and every block nested in it (if branches, loop bodies)."""
    yield body
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from blocks(stmt.body)
            yield from blocks(stmt.orelse)
        elif isinstance(stmt, (ast.For, ast.While)):
            yield from blocks(stmt.body)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for block in blocks(body):
        yield from block


def _pure(value: ast.expr) -> bool:
    """Whether evaluating ``value`` has no effect but its result (a tape pop has)."""
    return not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "pop"
        for n in nodes(value)
    )


class _Replace(ast.NodeTransformer):
    def __init__(self, old: str, new: ast.expr) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id == self.old and isinstance(node.ctx, ast.Load):
            return copy_tree(self.new)
        return node


def _is_zeros_like(value: ast.expr) -> bool:
    """``np.zeros_like(x)``, ``zeros_seq(xs)``, ``zero_adjoint(x)`` or ``0.0``: an
    adjoint's zero start."""
    if isinstance(value, ast.Constant) and type(value.value) is float and value.value == 0.0:
        return True
    if not isinstance(value, ast.Call) or len(value.args) != 1 or value.keywords:
        return False
    func = value.func
    return (isinstance(func, ast.Attribute) and func.attr == "zeros_like") or (
        isinstance(func, ast.Name) and func.id.startswith(("zeros_seq", "zero_adjoint"))
    )


def _accumulated(v: str, value: ast.expr) -> ast.expr | None:
    """``c`` if ``value`` is ``v + c`` or ``add_seq(v, c)`` (``c`` not reading ``v``)."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        left, right = value.left, value.right
    elif (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id.startswith("add_seq")
        and len(value.args) == 2
    ):
        left, right = value.args
    else:
        return None
    if isinstance(left, ast.Name) and left.id == v and v not in reads(right):
        return right
    return None


def _written_into(stmt: ast.stmt) -> frozenset[str]:
    """Names whose arrays ``stmt`` (with its nested blocks) changes in place: ``y[i] = v``,
    ``y[i] += v``, ``y += v``."""
    return _summary(stmt, _memo())[2]


def items_stored(stmt: ast.stmt) -> frozenset[str]:
    """Names ``stmt`` (with its nested blocks) stores an item of: ``y[i] = v``."""
    return _summary(stmt, _memo())[3]


def _memo() -> dict:
    memo = getattr(_local, "memo", None)
    return {} if memo is None else memo


#: array attributes that are values of their own, not views of the array
_VALUE_ATTRIBUTES = frozenset("shape size ndim dtype itemsize nbytes".split())


#: array functions and methods (besides ufuncs) whose result is always a new array
_NEW_ARRAYS = frozenset(
    "array copy zeros_like ones_like full_like empty_like zeros ones full empty arange "
    "sum mean prod std var max min amax amin cumsum cumprod dot vdot matmul outer inner "
    "tensordot where clip concatenate stack hstack vstack tile repeat sort".split()
)


def shares(value: ast.expr) -> set[str]:
    """Names whose arrays the value of ``value`` may be, or be a view of: a name, an
    attribute (``.T``) or index of one, a call that may return an argument or a view of
    one (``unbroadcast(g, x)`` returns ``g`` where the shapes agree, ``np.reshape``);
    arithmetic, ufuncs and the functions of ``_NEW_ARRAYS`` make new arrays."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, ast.Attribute):
        return set() if value.attr in _VALUE_ATTRIBUTES else shares(value.value)
    if isinstance(value, ast.Subscript):
        return shares(value.value)
    if isinstance(value, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare)):
        return set()
    if isinstance(value, ast.Call):
        func = value.func
        if isinstance(func, ast.Attribute) and (
            func.attr in _NEW_ARRAYS or isinstance(getattr(np, func.attr, None), np.ufunc)
        ):
            return set()
        out = shares(func.value) if isinstance(func, ast.Attribute) else set()
        for arg in [*value.args, *(k.value for k in value.keywords)]:
            out |= shares(arg)
        return out
    if isinstance(value, (ast.Tuple, ast.List)):
        return set().union(*(shares(e) for e in value.elts))
    return set(reads(value))


def _stmt_shares(stmt: ast.stmt) -> set[str]:
    """Names whose arrays the value a statement stores, pushes or returns may share."""
    value = getattr(stmt, "value", None)
    if is_append(stmt):
        return set().union(*(shares(a) for a in value.args))
    if isinstance(stmt, (ast.Assign, ast.Return)) and value is not None:
        return shares(value)
    return set()


def written_in_place(body: list[ast.stmt], params: set[str] = frozenset()) -> set[str]:
    """Names whose arrays may be written into in place (``y[i] = v``, ``y += v``), and
    every name that may share memory with one (``a = y``, ``a = y.T``, ``t.append(y)``
    and ``b = t.pop()``), found by joining names into groups through assignments. Only
    the function's own names join (those it assigns, and ``params``): not the modules and
    helpers it calls (``np`` in ``np.reshape(y, s)``).

    A write right after its name was given a new array (``y_bar = y_bar.copy();
    y_bar[i] = 0.0``) reaches no other name and does not count.
    """
    own = set(params) | {n for s in _statements(body) for n in writes(s)}
    parent: dict[str, str] = {}

    def find(n: str) -> str:
        while parent.get(n, n) != n:
            parent[n] = parent.get(parent[n], parent[n])  # (halve the path: near-linear)
            n = parent[n]
        return n

    def join(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    written: set[str] = set()
    for block in blocks(body):
        for k, stmt in enumerate(block):
            if isinstance(stmt, ast.Assign) or is_append(stmt):
                if is_append(stmt):
                    names = [n for n in [stmt.value.func.value] if isinstance(n, ast.Name)]
                    names = [n.id for n in names]
                else:
                    names = writes(ast.Tuple(elts=stmt.targets, ctx=ast.Store()))
                for a in names:
                    for b in _stmt_shares(stmt) & own:  # (b = t.pop(): b shares t's contents)
                        join(a, b)
            into = _written_into(stmt) if not isinstance(stmt, _COMPOUND) else set()
            for v in into:
                prior = block[k - 1] if k else None
                fresh = (
                    prior is not None
                    and target(prior) == v
                    and not _stmt_shares(prior)
                    and _pure(prior.value)
                )
                if not fresh:
                    written.add(v)
    roots = {find(v) for v in written}
    names = {n for s in _statements(body) for n in reads(s) + writes(s)}
    return {n for n in names | written if find(n) in roots}


_COMPOUND = (ast.If, ast.For, ast.While)


def _pushed(stmt: ast.stmt) -> tuple[str, str] | None:
    """The list and name of ``tape.append(v)``."""
    if not is_append(stmt):
        return None
    call = stmt.value
    if isinstance(call.func.value, ast.Name) and [type(a) for a in call.args] == [ast.Name]:
        return call.func.value.id, call.args[0].id
    return None


def _meaningful(block: list[ast.stmt]) -> bool:
    return any(not isinstance(s, ast.Pass) and not is_comment(s) for s in block)
