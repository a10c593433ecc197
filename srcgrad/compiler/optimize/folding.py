"""Pass: arithmetic simplified (``g * 1.0`` is ``g``, powers of two merged)."""

from __future__ import annotations

import ast
import math
import operator

from ..astwalk import copy_tree
from .dataflow import (
    Context,
    _forget,
    _stmt_shares,
    blocks,
    items_stored,
    settle,
    settled,
    target,
    written_in_place,
)

_FOLD = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def _num(node: ast.expr) -> float | int | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def _may_not_be_float(node: ast.expr, not_floats: frozenset[str]) -> bool:
    """Whether ``node``'s value may be a bool or an array of bools or integers
    (``not_floats``: the names a comparison may give, and the arrays not proven floats).
    Then ``1.0 * node`` is not ``node``: ``-1.0 * mask`` is a float where ``-mask``
    raises, ``np.sin(1.0 * mask)`` a float64 where ``np.sin(mask)`` is a float16,
    ``(1.0 * k) ** -1`` a float where ``k ** -1`` raises."""
    if isinstance(node, ast.Constant):
        return type(node.value) is bool
    if isinstance(node, ast.Name):
        return node.id in not_floats
    if isinstance(node, (ast.Compare, ast.BoolOp)):
        return True
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not) or _may_not_be_float(node.operand, not_floats)
    if isinstance(node, ast.BinOp):  # (mask * mask is a mask; a quotient is a float)
        return not isinstance(node.op, ast.Div) and (
            _may_not_be_float(node.left, not_floats) and _may_not_be_float(node.right, not_floats)
        )
    if isinstance(node, ast.Subscript):
        return _may_not_be_float(node.value, not_floats)
    if isinstance(node, ast.Call):  # np.asarray(mask), np.sin(mask) (a float16)
        return any(_may_not_be_float(a, not_floats) for a in node.args)
    return False


def _pow2(c: float | int) -> bool:
    """Whether ``c`` is a power of two (multiplying by it rounds nothing)."""
    return (
        isinstance(c, (int, float)) and c != 0 and math.isfinite(c) and abs(math.frexp(c)[0]) == 0.5
    )


def _factors(node: ast.expr) -> list[tuple[type, ast.expr]]:
    """A chain of products and quotients read left to right, with the operator before
    each factor: ``a * b / c`` is ``[(Mult, a), (Mult, b), (Div, c)]``. A factor
    ``(2 * u)`` with a power of two is two factors (``g / (2 * u)`` is ``g / 2 / u``
    exactly)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))):
        return [(ast.Mult, node)]
    op, right = type(node.op), node.right
    if isinstance(right, ast.BinOp) and isinstance(right.op, ast.Mult):
        for c, u in ((right.left, right.right), (right.right, right.left)):
            if _num(c) is not None and _pow2(_num(c)):
                return _factors(node.left) + [(op, c), (op, u)]
    return _factors(node.left) + [(op, right)]


def _fold_factors(node: ast.BinOp, not_floats: frozenset[str] = frozenset()) -> ast.expr | None:
    """A product chain with fewer operations, or None: its powers of two merged into
    one constant (into its one other constant, if it has one: scaling by a power of two
    is exact), and the signs of negated factors moved into that constant.

    ``g / (2 * u) * h * 2`` is ``g / u * h``; ``-a * b / c * 2`` is ``a * b / c * -2``.
    """
    chain = _factors(node)
    signs = 0
    others: list[tuple[type, ast.expr]] = []
    powers: list[tuple[type, float | int]] = []
    anchor: int | None = None  # the position of the one other constant kept
    for op, factor in chain:
        while isinstance(factor, ast.UnaryOp) and isinstance(factor.op, ast.USub):
            signs, factor = signs + 1, factor.operand
        c = _num(factor)
        if c is not None and _pow2(c):
            powers.append((op, c))
            continue
        if c is not None and anchor is None:
            anchor = len(others)
        others.append((op, factor))
    if not others:
        return None  # constants alone: folded as such
    anchor_op, value = (
        (others[anchor][0], _num(others[anchor][1])) if anchor is not None else (ast.Mult, 1)
    )
    for op, c in powers:
        value = value * c if op is anchor_op else value / c
    if signs % 2:
        value = -value
    negate = False
    if anchor is not None:
        others[anchor] = (anchor_op, ast.Constant(value))
    elif value == -1 and any(op is ast.Div for op, _ in others):
        negate = True
    elif value != 1 or not any(op is ast.Div for op, _ in others):
        others.append((ast.Mult, ast.Constant(value)))
    if others[0][0] is ast.Div:  # a numerator first
        others.insert(0, (ast.Mult, ast.Constant(1)))
    if len(others) - 1 + negate >= len(chain) - 1 + signs:
        return None
    if all(_may_not_be_float(f, not_floats) for _, f in others):  # (2.0 * k / 2.0: a float)
        return None
    result = others[0][1]
    if negate:
        result = ast.UnaryOp(op=ast.USub(), operand=result)
    for op, factor in others[1:]:
        result = ast.BinOp(left=result, op=op(), right=factor)
    return result


class _Simplify(ast.NodeTransformer):
    changed = False

    def __init__(self, not_floats: frozenset[str] = frozenset()) -> None:
        #: names a comparison may give, arrays not proven floats (:func:`_may_not_be_float`)
        self.not_floats = not_floats

    def done(self, node: ast.expr) -> ast.expr:
        self.changed = True
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.USub):
            inner = node.operand
            if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.USub):
                return self.done(inner.operand)
            if (
                isinstance(inner, ast.BinOp)
                and isinstance(inner.op, (ast.Mult, ast.Div))
                and not _may_not_be_float(inner.left, self.not_floats)  # (-mask raises)
            ):
                # -(a * b) is (-a) * b: the sign moves to the leftmost factor
                left = self.visit(ast.UnaryOp(op=ast.USub(), operand=inner.left))
                self.done(node)
                return self.visit_BinOp(ast.BinOp(left=left, op=inner.op, right=inner.right))
            if _num(inner) is not None:
                return self.done(ast.Constant(-_num(inner)))
        if isinstance(node.op, ast.UAdd):
            return self.done(node.operand)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, (ast.Mult, ast.Div)):
            folded = _fold_factors(node, self.not_floats)
            if folded is not None:
                return self.done(folded)
        left, right, op = node.left, node.right, node.op
        a, b = _num(left), _num(right)
        if a is not None and b is not None and type(op) in _FOLD:
            try:
                value = _FOLD[type(op)](a, b)
            except (ZeroDivisionError, OverflowError):
                return node
            if isinstance(value, (int, float)) and abs(value) < 1e15:
                return self.done(ast.Constant(value))
        simpler = None
        if b is not None and isinstance(op, ast.Mult):
            simpler = _scaled(op, left, b)
        if simpler is None and (a is not None or b is not None):
            kept = right if a is not None else left  # (what the identity leaves)
            if not _may_not_be_float(kept, self.not_floats):  # (-1.0 * mask: -mask raises)
                simpler = _identity(op, left, right, a, b)
        if simpler is None:
            simpler = _sign_moved(op, left, right)
        return node if simpler is None else self.done(simpler)


def _scaled(op: ast.Mult, left: ast.expr, b: float | int) -> ast.expr | None:
    """``left * b`` (``b`` a number) with ``b`` merged into ``left``'s own constant factor,
    or with ``left``'s sign moved into ``b``; or None."""
    if isinstance(left, ast.BinOp):
        c = _num(left.right)
        if isinstance(left.op, ast.Mult) and c is not None and (_pow2(b) or _pow2(c)):
            # (x * 100.0) * 2 is x * 200.0 exactly: scaling by 2 commutes with rounding
            return ast.BinOp(left=left.left, op=ast.Mult(), right=ast.Constant(c * b))
    if isinstance(left, ast.UnaryOp) and isinstance(left.op, ast.USub):
        return ast.BinOp(left=left.operand, op=op, right=ast.Constant(-b))
    return None


def _identity(
    op: ast.operator, left: ast.expr, right: ast.expr, a: float | int | None, b: float | int | None
) -> ast.expr | None:
    """``left op right`` where one side is the operator's identity (``g * 1``, ``g + 0``),
    or ``-1`` (``-1 * g`` is ``-g``); or None."""
    if isinstance(op, ast.Mult) and b == 1:
        return left
    if isinstance(op, ast.Mult) and a == 1:
        return right
    if isinstance(op, ast.Mult) and a == -1:
        return ast.UnaryOp(op=ast.USub(), operand=right)
    if isinstance(op, ast.Mult) and b == -1:
        return ast.UnaryOp(op=ast.USub(), operand=left)
    if isinstance(op, ast.Div) and b == 1:
        return left
    if isinstance(op, ast.Pow) and b == 1:
        return left
    if isinstance(op, (ast.Add, ast.Sub)) and b == 0:
        return left
    if isinstance(op, ast.Add) and a == 0:
        return right
    return None


def _sign_moved(op: ast.operator, left: ast.expr, right: ast.expr) -> ast.expr | None:
    """``a + -b`` is ``a - b``, ``a + -b * c`` is ``a - b * c``, ``-a * -b`` is ``a * b``;
    or None."""
    if isinstance(op, (ast.Add, ast.Sub)):
        if isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub):
            return ast.BinOp(left=left, op=_flipped(op), right=right.operand)
        if (  # a + -b * c is a - b * c: (-b) * c is -(b * c) exactly
            isinstance(right, ast.BinOp)
            and isinstance(right.op, (ast.Mult, ast.Div))
            and isinstance(right.left, ast.UnaryOp)
            and isinstance(right.left.op, ast.USub)
        ):
            product = ast.BinOp(left=right.left.operand, op=right.op, right=right.right)
            return ast.BinOp(left=left, op=_flipped(op), right=product)
        return None
    if (
        isinstance(op, (ast.Mult, ast.Div))
        and isinstance(left, ast.UnaryOp)
        and isinstance(left.op, ast.USub)
        and isinstance(right, ast.UnaryOp)
        and isinstance(right.op, ast.USub)
    ):
        return ast.BinOp(left=left.operand, op=op, right=right.operand)
    return None


def _flipped(op: ast.operator) -> ast.operator:
    return ast.Sub() if isinstance(op, ast.Add) else ast.Add()


def simplify(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """Fold constants and algebraic identities inside every expression.

    Before::                          After::

        a = g * 1.0                       a = g
        b = -(-g) + 2.0 * 0.5             b = g + 1.0
        c = g / (2.0 * u) * 2.0           c = g / u

    A fold that turns a new array into an existing one (``1.0 * y`` is ``y``) is made
    only where no array involved is written into in place: not for an array later
    written into, itself or through another name (``y = x * 1.0; y[i] = v``, or
    ``prev = y; prev[i] = v``, would write into ``x``), nor where the existing array is
    one (``x_bar = 1.0 * y`` and then ``y[0] = y_old``, the adjoint sweep restoring
    ``y``, would change ``x_bar``).
    """
    params = ctx.params
    mutated = {n for s in body for n in items_stored(s)}  # (blocks included)
    hazards = written_in_place(body, params) if mutated else set()
    simplifier = _Simplify(ctx.not_floats)
    changed = False
    for block in blocks(body):
        for k, stmt in enumerate(block):
            if isinstance(stmt, (ast.If, ast.For, ast.While)):
                continue  # their blocks come in turn
            if settled(stmt, "simplify"):
                continue  # (nothing to fold in it, found before, and it has not changed)
            before = copy_tree(stmt) if mutated else None
            simplifier.changed = False
            new = simplifier.visit(stmt)
            if not simplifier.changed:
                settle(stmt, "simplify")
            else:
                _forget(stmt)
            if before is not None and simplifier.changed:
                gained = _stmt_shares(new) - _stmt_shares(before)
                if gained and (target(stmt) in mutated | hazards or gained & hazards):
                    new = before  # folding would make it an alias of an array written into
                    simplifier.changed = False
            block[k] = new
            changed = changed or simplifier.changed
    return body, changed
