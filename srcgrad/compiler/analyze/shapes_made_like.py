"""Part of analyze: arrays made with another's shape (``np.zeros_like(x)``,
``np.zeros(x.shape)``) have that shape, and its broadcast key."""

from __future__ import annotations

import ast

import numpy as np

from .facts import Facts, Op, Shape

#: arrays made like another: ``np.zeros_like(x)`` (without ``shape=``) has ``x``'s shape
_LIKE = (np.zeros_like, np.ones_like, np.empty_like, np.full_like)
#: arrays made from a shape: ``np.zeros(x.shape)`` has ``x``'s shape
_FROM_SHAPE = (np.zeros, np.ones, np.empty, np.full)


def made_like(op: Op, facts: Facts) -> Shape | None:
    """The shape of the array ``x`` whose shape ``op`` makes an array of (its broadcast
    key too: the two always have one shape): ``np.zeros_like(x)``, ``np.zeros(x.shape)``,
    ``np.ones(np.shape(x))``, ``np.full(x.shape, v)``; None for anything else."""
    callee = op.callee if op.ctx is not None else None
    if any(callee is f for f in _LIKE):
        given = op.ctx.args.get("shape")
        if given is None or (isinstance(given, ast.Constant) and given.value is None):
            x = op.args.get("x")
            return facts.shape(x) if isinstance(x, ast.Name) else None
        return None
    if any(callee is f for f in _FROM_SHAPE):
        return _shape_source(op.args.get("shape"), facts)
    return None


def _shape_source(atom: ast.expr | None, facts: Facts) -> Shape | None:
    """``x``'s shape where ``atom`` is a name given one value, ``x.shape`` or
    ``np.shape(x)``."""
    if not isinstance(atom, ast.Name) or len(facts.definitions.get(atom.id, ())) != 1:
        return None
    stmt = facts.definitions[atom.id][0][0]
    op = facts.ops.get(stmt)
    if op is None or not (op.key == ("attr", "shape") or op.callee is np.shape):
        return None
    x = op.args.get("x") or next(iter(op.args.values()), None)
    return facts.shape(x) if isinstance(x, ast.Name) else None
