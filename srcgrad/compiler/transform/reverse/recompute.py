"""What the adjoint of a callee (``f_bwd``) computes again instead of reading from the
record its augmented primal returns: scalar tests and arithmetic on parameters that
no line reassigns (``t1 = n == 0``, ``t2 = n - 1``), on their shapes
(``half = x.shape[0] // 2``) and views of them (``x[:half]``), which the adjoint is
given too::

    if t1:                                if n == 0:
        ...                     ==>           ...
    r_bar = f_bwd(x, t2, r_rec, g)        r_bar = f_bwd(x, n - 1, r_rec, g)

so the record holds only what cannot be had again as cheaply (the recursive call's
value and record). Only operations that cannot fail on numbers are taken (comparisons,
``+``, ``-``, ``*``, ``not``, negation, ``//`` and ``%`` by a constant other than 0,
an array's ``shape``, ``ndim`` or ``size`` and a constant item of it, a view by
numbers and slices), of rank-0 parameters, constants and other such values; each is
read where the adjoint reads the name, on the path where the primal computed it, and
computes the same value there: its operands are never reassigned.
"""

from __future__ import annotations

import ast

from ...analyze.facts import Facts
from ...astwalk import copy_tree
from ...normalize.lower import Normalized

_CHEAP = (ast.Add, ast.Sub, ast.Mult, ast.Not, ast.USub, ast.UAdd)
_SHAPES = ("shape", "ndim", "size")
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def recomputed(adjoint: list[ast.stmt], norm: Normalized, facts: Facts) -> list[ast.stmt]:
    """``adjoint`` (the statements of a callee's adjoint sweep) reading, in place of each
    value :func:`recomputable` finds, the expression that computes it; and so for the
    active products :func:`recomputable_products` finds."""
    values = recomputable(norm, facts)
    if values:
        adjoint = copy_tree(adjoint, values)
    products = recomputable_products(adjoint, norm, facts)
    if products:
        adjoint = copy_tree(adjoint, products)
    return adjoint


def recomputable_products(
    adjoint: list[ast.stmt], norm: Normalized, facts: Facts
) -> dict[str, ast.expr]:
    """Temporaries given, once and outside loops, ``a * b`` (or ``a + b``, ``a - b``) of
    values the adjoint has anyway: parameters no line reassigns, constants, and names
    given one value outside loops that it reads elsewhere (so the record holds them
    whatever happens). The recursive ``x * h * h``'s ``t5 = x * h`` is then not in the
    record: its adjoint reads ``x * h`` again (one product, as the record's array would
    have cost one). Only where nothing is written in place (a write could change an
    operand between the product and its adjoint)."""
    aliases = facts.aliases
    if aliases is None or aliases.shared_writes or aliases.problems:
        return {}
    if any(isinstance(s, ast.Assign) and not isinstance(s.targets[0], ast.Name) for s in facts.ops):
        return {}  # (a write into an item, or an attribute)
    found = _Cheap(norm, facts)
    read: dict[str, int] = {}
    for stmt in adjoint:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                read[n.id] = read.get(n.id, 0) + 1
    out: dict[str, ast.expr] = {}

    def kept(a: ast.expr, v: str) -> bool:
        if isinstance(a, ast.Constant):
            return type(a.value) in (int, float)
        if not isinstance(a, ast.Name) or a.id == v or a.id in out:
            return False
        if found.given(a):
            return True
        defs = facts.definitions.get(a.id, [])
        return (
            len(defs) == 1
            and defs[0][1] == 0
            and a.id not in facts.sequences
            and a.id not in facts.maybe_sequences
            and read.get(a.id, 0) > 0
        )

    for v, defs in facts.definitions.items():
        if v not in norm.temps or len(defs) != 1 or defs[0][1] != 0 or v not in read:
            continue
        stmt = defs[0][0]
        value = stmt.value if isinstance(stmt, ast.Assign) else None
        if (
            isinstance(value, ast.BinOp)
            and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult))
            and kept(value.left, v)
            and kept(value.right, v)
        ):
            out[v] = copy_tree(value)
    return out


def recomputable(norm: Normalized, facts: Facts) -> dict[str, ast.expr]:
    """The names given, once and outside loops, a cheap operation of constants,
    parameters no line reassigns and names found before (not active, but for views of a
    parameter): each with the expression that computes it from those parameters."""
    found = _Cheap(norm, facts)
    params = found.params
    for v, defs in facts.definitions.items():  # (in program order)
        if len(defs) != 1 or defs[0][1] != 0 or v in params or v in facts.sequences:
            continue
        stmt = defs[0][0]
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)):
            continue
        view = isinstance(stmt.value, ast.Subscript) and found.given(stmt.value.value)
        if (view or v not in facts.active) and found.cheap(stmt.value):
            found.values[v] = copy_tree(stmt.value, found.values)
    return found.values


class _Cheap:
    """What :func:`recomputable` takes: ``values`` holds the names found so far."""

    def __init__(self, norm: Normalized, facts: Facts) -> None:
        self.facts = facts
        self.params = {a.arg for a in norm.tree.args.args}
        self.values: dict[str, ast.expr] = {}

    def given(self, a: ast.expr) -> bool:
        """A parameter no line reassigns, not a list."""
        facts = self.facts
        return (
            isinstance(a, ast.Name)
            and a.id in self.params
            and not facts.definitions.get(a.id)
            and a.id not in facts.sequences
            and a.id not in facts.maybe_sequences
        )

    def operand(self, a: ast.expr) -> bool:
        if isinstance(a, ast.Constant):
            return type(a.value) in (int, float, bool)
        if isinstance(a, ast.Name) and a.id in self.values:
            return True
        return self.given(a) and self.facts.shape(a).rank == 0

    def cheap(self, value: ast.expr) -> bool:
        operand = self.operand
        if isinstance(value, ast.Compare):
            return (
                len(value.ops) == 1
                and isinstance(value.ops[0], _COMPARISONS)
                and operand(value.left)
                and operand(value.comparators[0])
            )
        if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.FloorDiv, ast.Mod)):
            divisor = value.right  # (by a constant that is not zero: it cannot fail)
            nonzero = isinstance(divisor, ast.Constant) and type(divisor.value) is int
            return nonzero and divisor.value != 0 and operand(value.left)
        if isinstance(value, ast.BinOp):
            return isinstance(value.op, _CHEAP) and operand(value.left) and operand(value.right)
        if isinstance(value, ast.UnaryOp):
            return isinstance(value.op, _CHEAP) and operand(value.operand)
        if isinstance(value, ast.Attribute):  # an array parameter's shape
            return value.attr in _SHAPES and self.given(value.value)
        if isinstance(value, ast.Subscript) and self.given(value.value):  # a view (x[:half])
            parts = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
            return all(self.bound(p) for p in parts)
        if isinstance(value, ast.Subscript):  # an item of a shape (x.shape[0])
            index = value.slice
            return (
                isinstance(index, ast.Constant)
                and type(index.value) is int
                and (self.cheap(value.value) or operand(value.value))
            )
        return False

    def bound(self, part: ast.expr) -> bool:
        """An index of a view: numbers, ``:``, ``a:b``."""
        if isinstance(part, ast.Slice):
            return all(b is None or self.operand(b) for b in (part.lower, part.upper, part.step))
        return (
            self.operand(part)
            and not isinstance(part, ast.Constant)
            or (isinstance(part, ast.Constant) and type(part.value) is int)
        )
