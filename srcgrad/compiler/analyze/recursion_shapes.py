"""Part of analyze: the shape of a recursive function's value, where a fixed point proves
it (:func:`_shapes`, the stage's entry to :mod:`.shapes`): ``power(x, n)``, whose base case
is ``np.ones_like(x)`` and whose other returns are products of ``x`` and the recursive
call's value, has ``x``'s shape, so its adjoints need no ``unbroadcast``."""

from __future__ import annotations

import ast
from typing import Any

from .facts import Facts, Shape, is_setitem
from .shapes import _given_once, _shapes_once


def _shapes(facts: Facts, assigns: list[ast.Assign], own: Any = None) -> None:
    """Broadcast keys and ranks (:func:`_shapes_once`); for a recursion whose value's rank
    is found, also its broadcast key where a fixed point proves one: assume every call of
    the function analyzed gives the key of a return that reads only parameters (the base
    case: ``np.ones_like(x)`` has ``x``'s), with arguments of that key; if every return
    then has that key, every call gives it (by induction on the depth of the recursion).
    Otherwise the shapes are those found without the assumption."""
    start = dict(facts.shapes), dict(facts.op_shapes)
    recursion, settled, rank = _shapes_once(facts, assigns, own)
    if not recursion or not settled or type(rank) is not int or rank == 0:
        return
    guess = _guessed_key(facts, rank)
    if guess is None:
        return
    facts.shapes, facts.op_shapes = dict(start[0]), dict(start[1])
    pinned = {stmt: guess for stmt in recursion}
    _, settled, rank = _shapes_once(facts, assigns, own, pinned)
    if not (settled and rank == guess.rank and _key_proven(facts, recursion, guess)):
        facts.shapes, facts.op_shapes = dict(start[0]), dict(start[1])
        _shapes_once(facts, assigns, own)


def _guessed_key(facts: Facts, rank: int) -> Shape | None:
    """The shape a recursion's value is assumed to have (see :func:`_shapes`): the key of
    the first definition of the returned name whose key is made of parameters given one
    value (whose keys stand for one shape), with those parameters' axes of length 1 where
    the key is one parameter's."""
    returned = facts.returned.id
    if returned in {p.arg for p in facts.params}:
        return None  # (its argument may reach the return)
    for stmt, _ in facts.definitions.get(returned, []):
        shape = _definition_shape(facts, stmt)
        if is_setitem(stmt) or shape is None or shape.rank != rank or not shape.key:
            continue
        if all(_fixed_parameter(n, facts) for n in shape.key):
            (first,) = shape.key if len(shape.key) == 1 else (None,)
            wide = facts.shapes[first].wide if first is not None else None
            return Shape(shape.key, rank, wide)
    return None


def _definition_shape(facts: Facts, stmt: ast.Assign) -> Shape | None:
    """The shape a definition gives, as :func:`_shapes` found it (``np.ones_like(x)``
    has ``x``'s key: :func:`.shapes_made_like.made_like`)."""
    return facts.op_shapes.get(id(stmt))


def _fixed_parameter(n: str, facts: Facts) -> bool:
    """Whether ``n`` is a parameter given no other value (writes into its items aside)."""
    return n in {p.arg for p in facts.params} and _given_once(n, facts)


def _key_proven(facts: Facts, recursion: dict[ast.Assign, Any], guess: Shape) -> bool:
    """Whether the assumption of :func:`_shapes` holds, its shapes found with it: every
    definition of the returned name (writes into its items aside) has the guessed key and
    rank, and every recursive call is given arguments of the parameters' ranks, those given
    to the key's parameters together of the key (``power(x, n // 2)``: ``x``)."""
    returned = facts.returned.id
    for stmt, _ in facts.definitions.get(returned, []):
        if is_setitem(stmt):
            continue
        shape = _definition_shape(facts, stmt)
        if shape is None or shape.key != guess.key or shape.rank != guess.rank:
            return False
    for stmt in recursion:
        args = facts.ops[stmt].call_args or []
        if len(args) != len(facts.params):
            return False
        keys: set[str] = set()
        for param, a in zip(facts.params, args):
            shape, own = facts.shape(a), facts.shapes.get(param.arg)
            if own is None or shape.rank is None or shape.rank != own.rank:
                return False
            if param.arg in guess.key:
                if not shape.key <= guess.key:
                    return False
                keys |= shape.key
        if keys != guess.key:
            return False
    return True
