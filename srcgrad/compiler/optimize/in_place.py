"""Pass: an accumulation into an array no one else sees is done in place."""

from __future__ import annotations

import ast

from .dataflow import (
    Context,
    _is_zeros_like,
    _statements,
    own_reads,
    own_writes,
    reads,
    shares,
    target,
)
from .fresh_copies import _copy_of_itself


def accumulate_in_place(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = v + e`` is ``v += e`` (``v = v - e`` is ``v -= e``), and ``v = v +
    index_adjoint(g, x, i)`` is ``v[i] += g``,
    where no one else can see ``v``'s array: every value ``v`` is given is a new array
    (zeros, an index adjoint, the result of arithmetic), and ``v`` is read only by such
    accumulations, into new values (``t = v * 0.1``), and by ``return``. Where every
    value of ``v`` is an array, of its primal's shape (``ctx.primal_of``: ``x_bar`` of
    ``x``), ``v += np.full_like(x, g)`` is ``v += g`` (the addition broadcasts ``g``).

    Before::

        W_bar = np.zeros_like(W)
        for t in reversed(t3):
            W_bar = W_bar + h.T @ t4_bar
        x_bar = index_adjoint(a_bar, x, slice(1, None))
        x_bar = x_bar + index_adjoint(b_bar, x, 0)
        u_bar = u * 2
        for t in reversed(t1):
            t5_bar = u_bar * 0.1
            u_bar = u_bar - t5_bar * k
        return (W_bar, x_bar, u_bar)

    After::

        W_bar = np.zeros_like(W)
        for t in reversed(t3):
            W_bar += h.T @ t4_bar
        x_bar = index_adjoint(a_bar, x, slice(1, None))
        x_bar[0] += b_bar
        u_bar = u * 2
        for t in reversed(t1):
            t5_bar = u_bar * 0.1
            u_bar -= t5_bar * k
        return (W_bar, x_bar, u_bar)
    """
    helpers = ctx.helpers
    if helpers is None:
        return body, False
    index_adjoint = helpers.get("index_adjoint")
    fresh_calls = {helpers.get(h) for h in ("index_adjoint", "index_adjoint_add")}
    # (zeros whose kind and shape srcgrad could not tell before the code runs)
    unknown_zeros = {helpers.get(h) for h in ("zero_adjoint", "zeros_seq")} - {None}
    known = {ctx.xp, *helpers.values()} - {None}
    candidates, indexable = _private_accumulators(
        body, ctx.params | ctx.not_in_place, fresh_calls, unknown_zeros, known
    )
    if not candidates:
        return body, False
    fills = {v: p for v, p in ctx.primal_of.items() if v in indexable}
    rewriter = _InPlace(candidates, indexable, index_adjoint, fills, ctx.xp)
    body = rewriter.rewrite(body)
    return body, rewriter.changed


def _call_of(value: ast.expr | None, names: set[str | None], arity: int = 3) -> ast.Call | None:
    """``value`` if it calls one of ``names`` with ``arity`` positional arguments."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        if value.func.id in names and len(value.args) == arity and not value.keywords:
            return value
    return None


def _accumulation(stmt: ast.stmt) -> tuple[str, ast.expr, ast.operator] | None:
    """``(v, e, op)`` for ``v = v + e`` or ``v = v - e`` (``e`` not reading ``v``)."""
    v = target(stmt)
    value = getattr(stmt, "value", None)
    if (
        v is not None
        and isinstance(stmt, ast.Assign)
        and isinstance(value, ast.BinOp)
        and isinstance(value.op, (ast.Add, ast.Sub))
        and isinstance(value.left, ast.Name)
        and value.left.id == v
        and v not in reads(value.right)
    ):
        return v, value.right, value.op
    return None


def _item_accumulation(stmt: ast.stmt) -> str | None:
    """``v`` for ``v[i] += e`` (``-=``), neither ``i`` nor ``e`` reading ``v``."""
    if (
        isinstance(stmt, ast.AugAssign)
        and isinstance(stmt.op, (ast.Add, ast.Sub))
        and isinstance(stmt.target, ast.Subscript)
        and isinstance(stmt.target.value, ast.Name)
    ):
        v = stmt.target.value.id
        if v not in reads(stmt.value) and v not in reads(stmt.target.slice):
            return v
    return None


def _made(
    value: ast.expr | None, fresh_calls: set[str | None], unknown_zeros: set[str | None]
) -> str | None:
    """ "array" for a new array, "number" for a zero that may be a Python number; None for
    anything else, ``zero_adjoint(x)`` included (a zero of ``x``'s kind where srcgrad
    could not tell it: a 0-d array for a number ``x`` that a loop makes an array, which
    then cannot take the array's tangent in place)."""
    if _call_of(value, unknown_zeros, 1) is not None:
        return None
    if _call_of(value, fresh_calls) is not None or (
        _is_zeros_like(value) and not isinstance(value, ast.Constant)
    ):
        return "array"
    if isinstance(value, ast.Constant) and value.value == 0.0:
        return "number"
    if isinstance(value, (ast.BinOp, ast.UnaryOp)):
        return "number"  # an array, or a number where the operands are numbers
    return None


def _private_accumulators(
    body: list[ast.stmt],
    params: frozenset[str],
    fresh_calls: set[str | None],
    unknown_zeros: set[str | None],
    known: set[str],
) -> tuple[set[str], set[str]]:
    """The names ``v`` of ``v = v + e`` whose array no one else sees (``v`` is given only
    new values, and read only by its accumulations, into new values, and by ``return``),
    and those of them whose every value is an array (where ``v[i] += g`` is safe)."""
    statements = list(_statements(body))
    candidates = {a[0] for s in statements if (a := _accumulation(s)) is not None} - params
    indexable = set(candidates)  # every value an array: v[i] += g is safe
    for s in statements:
        if isinstance(s, ast.Return):
            continue
        found = _accumulation(s)
        s_reads, s_writes = set(own_reads(s)), set(own_writes(s))
        for v in list(candidates & (s_reads | s_writes)):
            if found is not None and found[0] == v:
                continue  # (v += e, in place, keeps v the array it was, or the number)
            if _item_accumulation(s) == v or _copy_of_itself(s) == v:
                continue  # (v[i] += e and v = v.copy(), made by the transform, too)
            if v in s_reads and not _reads_a_copy(s, v, known):
                candidates.discard(v)
            elif v in s_writes:
                kind = (
                    _made(s.value, fresh_calls, unknown_zeros)
                    if isinstance(s, ast.Assign)
                    else None
                )
                if kind is None:
                    candidates.discard(v)
                elif kind != "array":
                    indexable.discard(v)
    return candidates, indexable


def _reads_a_copy(s: ast.stmt, v: str, known: set[str]) -> bool:
    """Whether ``s`` reads ``v`` only into a new value (``t = v * 0.1``, ``w += v``), never
    into one that may be ``v``'s array or a view of it (``t = v[1:]``, ``np.asarray(v)``,
    a push, a loop over it), nor writes into ``v``, nor gives it to a function that may
    keep it (only the array module's functions and srcgrad's helpers, ``known``): a later
    ``v += e`` changes nothing ``s`` made."""
    if isinstance(s, ast.Assign):
        value, written = s.value, target(s)
    elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
        value, written = s.value, s.target.id
    else:
        return False
    if written == v or v in shares(value):
        return False
    for call in ast.walk(value):
        if isinstance(call, ast.Call) and v in reads(call) and _callee(call) not in known:
            return False
    return True


def _callee(call: ast.Call) -> str | None:
    """The name a call is made through: ``f`` of ``f(...)``, ``np`` of ``np.sum(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id
    return func.id if isinstance(func, ast.Name) else None


class _InPlace:
    """Rewrites the accumulations into ``candidates`` as augmented assignments, through
    nested blocks; ``changed`` says whether it made one."""

    def __init__(
        self,
        candidates: set[str],
        indexable: set[str],
        index_adjoint: str | None,
        fills: dict[str, str],
        xp: str | None,
    ):
        self.candidates, self.indexable = candidates, indexable
        self.index_adjoint = index_adjoint
        #: accumulators whose every value is an array of their primal's shape, with it
        self.fills, self.xp = fills, xp
        self.changed = False

    def rewrite(self, block: list[ast.stmt]) -> list[ast.stmt]:
        out = []
        for s in block:
            found = _accumulation(s)
            if found is not None and found[0] in self.candidates:
                out.append(self._augmented(s, *found))
                self.changed = True
                continue
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(s, field, self.rewrite(inner))
            out.append(s)
        return out

    def _augmented(self, s: ast.stmt, v: str, e: ast.expr, op: ast.operator) -> ast.AugAssign:
        """``v += e`` for ``v = v + e`` (``v -= e`` for ``v = v - e``); ``v[i] += g`` for
        ``v = v + index_adjoint(g, x, i)`` where every value of ``v`` is an array."""
        call = _call_of(e, {self.index_adjoint})
        if call is not None and v in self.indexable and isinstance(op, ast.Add):
            where: ast.expr = ast.Subscript(
                value=ast.Name(id=v, ctx=ast.Load()),
                slice=as_index(call.args[2]),
                ctx=ast.Store(),
            )
            e = call.args[0]
        else:
            where = ast.Name(id=v, ctx=ast.Store())
            if v in self.fills:
                e = _unfilled(e, self.fills[v], self.xp)
        return ast.copy_location(ast.AugAssign(target=where, op=type(op)(), value=e), s)


def _unfilled(e: ast.expr, primal: str, xp: str | None) -> ast.expr:
    """``g`` for ``np.full_like(x, g)`` added into an array of ``x``'s shape, also as an
    operand of an elementwise operator (``np.full_like(x, g) * i`` is ``g * i``): adding
    ``g`` broadcasts it as the full array did, without making it."""
    fill = _fill_of(e, primal, xp)
    if fill is not None:
        return fill
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left, right = _fill_of(e.left, primal, xp), _fill_of(e.right, primal, xp)
        if left is not None or right is not None:
            return ast.BinOp(left=left or e.left, op=e.op, right=right or e.right)
    return e


def _fill_of(e: ast.expr, primal: str, xp: str | None) -> ast.expr | None:
    """``g`` where ``e`` is ``np.full_like(primal, g)``."""
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and e.func.attr == "full_like"
        and isinstance(e.func.value, ast.Name)
        and e.func.value.id == xp
        and len(e.args) == 2
        and not e.keywords
        and isinstance(e.args[0], ast.Name)
        and e.args[0].id == primal
    ):
        return e.args[1]
    return None


def as_index(value: ast.expr) -> ast.expr:
    """An index value as subscript syntax: ``slice(1, None)`` becomes ``1:``."""
    if isinstance(value, ast.Tuple):
        return ast.Tuple(elts=[as_index(e) for e in value.elts], ctx=ast.Load())
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "slice"
        and 1 <= len(value.args) <= 3
        and not value.keywords
    ):
        args = [None if isinstance(a, ast.Constant) and a.value is None else a for a in value.args]
        if len(args) == 1:
            return ast.Slice(lower=None, upper=args[0], step=None)
        return ast.Slice(*(args + [None] * (3 - len(args))))
    return value
