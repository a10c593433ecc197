"""What an index names, for the analyses and transforms that ask: one element (a
number, a copy), each element once (a basic index or a mask: an in-place ``+=`` is
exact), or perhaps an element twice (an index array: ``y[[0, 0]]``)."""

from __future__ import annotations

import ast

import numpy as np

from .facts import Facts

#: calls that give a boolean array
_MASK_CALLS = (
    np.isnan,
    np.isfinite,
    np.isinf,
    np.signbit,
    np.logical_and,
    np.logical_or,
    np.logical_not,
    np.logical_xor,
)


def parts(index: ast.expr) -> list[ast.expr]:
    """The index of each axis: ``y[i, 1:]`` has two."""
    return index.elts if isinstance(index, ast.Tuple) else [index]


def is_number(atom: ast.expr, facts: Facts) -> bool:
    """An integer constant, or a name of one number: of rank 0 (slices have no rank),
    and never given ``None`` or ``...`` (whose rank is 0 too: ``y[None]`` and ``y[...]``
    are views)."""
    if isinstance(atom, ast.Constant):
        return type(atom.value) is int
    if not (isinstance(atom, ast.Name) and facts.shape(atom).rank == 0):
        return False
    for stmt, _ in facts.definitions.get(atom.id, []):
        op = facts.ops.get(stmt)
        given = op.args.get("x") if op is not None and op.key == "copy" else None
        if isinstance(given, ast.Constant) and not isinstance(
            given.value, (bool, int, float, complex)
        ):
            return False
    return True


def index_rank(part: ast.Name, facts: Facts) -> int | None:
    """The rank of a name in an index, for the indexing rules (0: an integer index,
    which takes an axis away); ``None`` where it may be ``None`` or ``...``."""
    rank = facts.shape(part).rank
    return None if rank == 0 and not is_number(part, facts) else rank


def names_one_element(
    array: ast.expr, index: ast.expr, facts: Facts, loop_indices: bool = False
) -> bool:
    """Whether ``array[index]`` is one number (numpy gives a copy, not a view): a number
    for each of the array's axes. ``loop_indices``: only integer constants and loop
    indices count, numbers the analysis of generated code (differentiated again) can
    tell too."""
    rank = facts.shape(array).rank
    found = parts(index)
    if loop_indices:
        return rank == len(found) and all(
            (isinstance(p, ast.Constant) and type(p.value) is int)
            or (isinstance(p, ast.Name) and p.id in facts.loop_indices and is_number(p, facts))
            for p in found
        )
    return rank == len(found) and all(is_number(p, facts) for p in found)


def may_repeat(index: ast.expr, facts: Facts) -> bool:
    """Whether an index may name one element twice (``y[[0, 0]]``): a part that may hold
    an array or list that is not a boolean mask (a comparison, ``np.isnan``, or ``~``,
    ``&``, ``|``, ``^`` of them). Numbers, slices, ``None`` and ``...`` name each element
    once."""
    for p in parts(index):
        if isinstance(p, (ast.Slice, ast.Constant)):
            continue
        if isinstance(p, ast.Name) and (is_number(p, facts) or is_mask(p.id, facts)):
            continue
        return True
    return False


def is_mask(v: str, facts: Facts, depth: int = 0) -> bool:
    """Whether every definition of ``v`` gives it a boolean array."""
    defs = facts.definitions.get(v, [])
    if not defs or depth > 5:
        return False
    for stmt, _ in defs:
        op = facts.ops.get(stmt)
        if op is None or op.key == "setitem":
            return False
        if op.key == "compare" or op.key in _MASK_CALLS:
            continue
        if op.key in (ast.Invert, ast.BitAnd, ast.BitOr, ast.BitXor) and all(
            isinstance(a, ast.Name) and is_mask(a.id, facts, depth + 1) for a in op.args.values()
        ):
            continue
        return False
    return True
