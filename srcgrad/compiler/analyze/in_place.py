"""Which augmented assignments need a check when the code runs: numpy's in-place cast.

``x += v`` changes ``x``'s array in place, and numpy refuses to write floats into an
integer or bool array that way (casting rule ``same_kind``); srcgrad's code spells the
update ``x_1 = x + v``, a new array, which never raises. Where the analysis proves that
``x`` holds floats, or only Python numbers (``k = 0``; ``s = 0`` then ``s += x[i]``,
which rebinds), or that ``v`` is an integer, both agree; everywhere else (``x`` given by
a user function that returns an integer cast on some path, by ``np.array(k)`` of an
argument not known to be float...) the generated code asks before the update, as numpy
would fail::

    a = h(x)                            a = h(x)
    a += 0.5 * x            becomes     check_in_place(a, 'a')
                                        a_1 = a + t2

The same holds for ``y[i] += v`` where the item ``y[i]`` is an array (a slice, a row,
a fancy index): numpy adds into it in place (an integer item number is rebound, then
cast back by the write), where srcgrad's ``t = y[i]; y[i] = t + v`` would round the
float sum silently; the check asks about the item ``t``.

Generated code differentiated again keeps its checks (``Normalized.checks``).
"""

from __future__ import annotations

import ast
import builtins
import itertools
from typing import Any

import numpy as np

from ..normalize.lower import Normalized
from .dtypes import FLOAT, INTEGER, _definition_kind, _is_range, atom_kind, hashable_in
from .facts import Facts

#: calls that give a Python int, never an array
_COUNTS = {builtins.len, np.ndim, np.size}


def in_place_checks(norm: Normalized, facts: Facts) -> dict[ast.stmt, tuple[str, str]]:
    """For each core statement that needs one, the check to run before it: the name
    whose value numpy would change in place, and the user's name of it (for the
    message). Found once per facts."""
    cached = facts.__dict__.get("_in_place_checks")
    if cached is not None:
        return cached
    checks = dict(norm.checks)
    numbers: set[str] | None = None
    updates = itertools.chain(norm.updates.items(), norm.item_updates.items())
    for stmt, into in updates:
        if into in facts.sequences or into in facts.maybe_sequences:
            continue  # (a list grows in place: xs += [v])
        if facts.dtype_kinds.get(into) == FLOAT or not _may_be_float(stmt, facts):
            continue
        if numbers is None:
            numbers = _never_integer_arrays(facts)
        if into not in numbers:
            checks[stmt] = (into, _user_name(norm, stmt) or into)
    facts.__dict__["_in_place_checks"] = checks
    return checks


def _may_be_float(stmt: ast.stmt, facts: Facts) -> bool:
    """Whether the update's operand may be a float (true division always gives one)."""
    value = stmt.value if isinstance(stmt, ast.Assign) else None
    if isinstance(value, ast.Name) and len(facts.definitions.get(value.id, [])) == 1:
        made = facts.definitions[value.id][0][0]  # (x = t after t = x + v, in a loop)
        value = made.value if isinstance(made, ast.Assign) else None
    if not isinstance(value, ast.BinOp):
        return False
    if isinstance(value.op, ast.Div):
        return True
    return atom_kind(value.right, facts.dtype_kinds, facts.env) != INTEGER


def _never_integer_arrays(facts: Facts) -> set[str]:
    """The local names every definition of which gives floats, or Python numbers
    (constants, range indices, lengths, arithmetic and comparisons of those): the
    greatest fixed point, so ``k = k + 1`` in a loop after ``k = 0`` is one."""
    params = {a.arg for a in facts.params}
    found = {n for n in facts.definitions if n not in params}
    changed = True
    while changed:
        changed = False
        for name in sorted(found):
            defs = facts.definitions[name]
            if not all(_gives_no_integer_array(s, facts, found) for s, _ in defs):
                found.discard(name)
                changed = True
    return found


def _gives_no_integer_array(stmt: ast.stmt, facts: Facts, numbers: set[str]) -> bool:
    if isinstance(stmt, ast.For):
        return _is_range(stmt.iter, facts.env)
    op = facts.ops.get(stmt)
    if op is None or not isinstance(stmt, ast.Assign):
        return False
    if op.key == "setitem":
        return True  # (the array keeps its dtype: its other definitions tell)
    if _definition_kind(stmt, facts, facts.env, facts.dtype_kinds) == FLOAT:
        return True
    if hashable_in(op.callee, _COUNTS):
        return True
    value = stmt.value
    if isinstance(value, ast.BinOp):
        atoms: list[ast.expr] = [value.left, value.right]
    elif isinstance(value, ast.UnaryOp):
        atoms = [value.operand]
    elif isinstance(value, ast.Compare):
        atoms = [value.left, *value.comparators]
    else:
        atoms = [value]
    return all(_is_number(a, facts, numbers) for a in atoms)


def _is_number(atom: ast.expr, facts: Facts, numbers: set[str]) -> bool:
    """Whether ``atom`` is a Python number or bool, or a name of ``numbers``."""
    if isinstance(atom, ast.Constant):
        return isinstance(atom.value, (bool, int, float))
    if isinstance(atom, ast.Name):
        if atom.id in facts.definitions:
            return atom.id in numbers
        return isinstance(facts.env.get(atom.id), (bool, int, float))
    return False


def _user_name(norm: Normalized, stmt: ast.stmt) -> str | None:
    """``x`` of the user's ``x += v`` the core statement comes from."""
    user: Any = norm.origin.get(stmt)
    if not isinstance(user, ast.AugAssign):
        return None
    target = user.target
    while isinstance(target, ast.Subscript):  # (y of y[i] += v)
        target = target.value
    return target.id if isinstance(target, ast.Name) else None
