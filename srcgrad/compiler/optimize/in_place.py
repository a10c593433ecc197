"""Pass: an accumulation into an array no one else sees is done in place."""

from __future__ import annotations

import ast

from .dataflow import Context, _is_zeros_like, _statements, own_reads, own_writes, reads, target


def accumulate_in_place(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = v + e`` is ``v += e``, and ``v = v + index_adjoint(g, x, i)`` is ``v[i] += g``,
    where no one else can see ``v``'s array: every value ``v`` is given is a new array
    (zeros, an index adjoint, the result of arithmetic), and ``v`` is read only by such
    accumulations and by ``return``.

    Before::

        W_bar = np.zeros_like(W)
        for t in reversed(t3):
            W_bar = W_bar + h.T @ t4_bar
        x_bar = index_adjoint(a_bar, x, slice(1, None))
        x_bar = x_bar + index_adjoint(b_bar, x, 0)
        return (W_bar, x_bar)

    After::

        W_bar = np.zeros_like(W)
        for t in reversed(t3):
            W_bar += h.T @ t4_bar
        x_bar = index_adjoint(a_bar, x, slice(1, None))
        x_bar[0] += b_bar
        return (W_bar, x_bar)
    """
    params, helpers = ctx.params, ctx.helpers
    if helpers is None:
        return body, False
    index_adjoint = helpers.get("index_adjoint")
    fresh_calls = {helpers.get(h) for h in ("index_adjoint", "index_adjoint_add")}

    def call_of(value: ast.expr, names: set[str | None]) -> ast.Call | None:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            if value.func.id in names and len(value.args) == 3 and not value.keywords:
                return value
        return None

    def accumulation(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
        """``(v, e)`` for ``v = v + e`` (``e`` not reading ``v``)."""
        v = target(stmt)
        value = getattr(stmt, "value", None)
        if (
            v is not None
            and isinstance(stmt, ast.Assign)
            and isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)
            and isinstance(value.left, ast.Name)
            and value.left.id == v
            and v not in reads(value.right)
        ):
            return v, value.right
        return None

    def made(value: ast.expr | None) -> str | None:
        """ "array" for a new array, "number" for a zero that may be a Python number."""
        if call_of(value, fresh_calls) is not None or (
            _is_zeros_like(value) and not isinstance(value, ast.Constant)
        ):
            return "array"
        if isinstance(value, ast.Constant) and value.value == 0.0:
            return "number"
        if isinstance(value, (ast.BinOp, ast.UnaryOp)):
            return "number"  # an array, or a number where the operands are numbers
        return None

    statements = list(_statements(body))
    candidates = {a[0] for s in statements if (a := accumulation(s)) is not None} - params
    indexable = set(candidates)  # every value an array: v[i] += g is safe
    for s in statements:
        if isinstance(s, ast.Return):
            continue
        found = accumulation(s)
        s_reads, s_writes = set(own_reads(s)), set(own_writes(s))
        for v in list(candidates & (s_reads | s_writes)):
            if found is not None and found[0] == v:
                if call_of(found[1], {index_adjoint}) is None:
                    indexable.discard(v)  # v + e: perhaps a number, if v was one
                continue
            if v in s_reads:
                candidates.discard(v)
            elif v in s_writes:
                kind = made(getattr(s, "value", None)) if isinstance(s, ast.Assign) else None
                if kind is None:
                    candidates.discard(v)
                elif kind != "array":
                    indexable.discard(v)
    if not candidates:
        return body, False
    changed = False

    def rewrite(block: list[ast.stmt]) -> list[ast.stmt]:
        nonlocal changed
        out = []
        for s in block:
            found = accumulation(s)
            if found is not None and found[0] in candidates:
                v, e = found
                call = call_of(e, {index_adjoint})
                if call is not None and v in indexable:
                    where: ast.expr = ast.Subscript(
                        value=ast.Name(id=v, ctx=ast.Load()),
                        slice=_as_index(call.args[2]),
                        ctx=ast.Store(),
                    )
                    e = call.args[0]
                else:
                    where = ast.Name(id=v, ctx=ast.Store())
                out.append(ast.copy_location(ast.AugAssign(target=where, op=ast.Add(), value=e), s))
                changed = True
                continue
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(s, field, rewrite(inner))
            out.append(s)
        return out

    body = rewrite(body)
    return body, changed


def _as_index(value: ast.expr) -> ast.expr:
    """An index value as subscript syntax: ``slice(1, None)`` becomes ``1:``."""
    if isinstance(value, ast.Tuple):
        return ast.Tuple(elts=[_as_index(e) for e in value.elts], ctx=ast.Load())
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
