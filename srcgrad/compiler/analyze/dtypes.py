"""Which names provably hold float values: the dtype analysis behind two refusals.

A value that carries a derivative is always a float (a cast to an integer dtype gives
a value without one), with two exceptions that numpy makes silently and srcgrad must
see before the code runs:

- ``y[i] = v`` casts ``v`` to ``y``'s dtype: into an integer or bool array the value is
  rounded (``y = np.zeros(3, dtype=int); y[0] = x[0]`` keeps ``int(x[0])``), and its
  derivative is zero, not ``v``'s;
- ``y += v`` (any augmented assignment to a name) writes into ``y``'s array: on an
  integer array with a float ``v`` numpy raises, where srcgrad's code, which spells it
  ``y = y + v``, would compute a float.

:func:`float_kinds` finds, for every name, whether each of its definitions gives a
float (:data:`FLOAT`), an integer or bool (:data:`INTEGER`), or something it cannot
tell (:data:`UNKNOWN`: a call to a user function, a parameter whose argument is not a
float array or number, ``np.array`` of a list display). A write of a value with a
derivative into a name not proven float is refused at the user's line
(:func:`check_writes`), with the definition that makes the name what it is.

Before::                                         Refused::

    y = np.zeros(3, dtype=int)                       y[0] = x[0] * 2.0
    y[0] = x[0] * 2.0                                (y is an integer array)
"""

from __future__ import annotations

import ast
import builtins
import inspect
import itertools
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import UnsupportedSyntaxError

FLOAT, INTEGER, UNKNOWN = "float", "integer", "unknown"

#: arrays made from a shape: float64 unless told otherwise
_FROM_SHAPE = {np.zeros, np.ones, np.empty, np.eye, np.identity}
#: arrays of another one's dtype (or ``dtype=``)
_LIKE = {np.zeros_like, np.ones_like, np.empty_like, np.full_like}
#: a new array of the operand's dtype (or ``dtype=``)
_CONVERT = {np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.copy}
#: functions without a derivative that keep a float operand float
_ROUNDING = {np.floor, np.ceil, np.rint, np.round, np.trunc, np.fix, np.sign, np.around}
#: numbers of the operation's result whatever its operands: lengths, counts, indices
_INTEGER_RESULTS = {np.shape, np.ndim, np.size, builtins.len}


def _join(kinds: list[str]) -> str:
    if all(k == FLOAT for k in kinds):
        return FLOAT
    if all(k == INTEGER for k in kinds):
        return INTEGER
    return UNKNOWN


def _join_known(kinds: list[str | None]) -> str | None:
    """The join of the kinds known so far (None while none is)."""
    known = [k for k in kinds if k is not None]
    return _join(known) if known else None


def value_kind(value: Any) -> str:
    """The kind of a Python or numpy value."""
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return INTEGER
    if isinstance(value, (float, np.floating)):
        return FLOAT
    dtype = getattr(value, "dtype", None)
    if isinstance(dtype, np.dtype):
        return FLOAT if dtype.kind == "f" else INTEGER if dtype.kind in "iub" else UNKNOWN
    return UNKNOWN


def dtype_kind(atom: ast.expr | None, env: dict[str, Any]) -> str | None:
    """The kind of a ``dtype=`` argument, None where it was not given."""
    if atom is None or (isinstance(atom, ast.Constant) and atom.value is None):
        return None
    try:
        if isinstance(atom, ast.Constant):
            value = atom.value
        else:
            value = _static(atom, env)
        kind = np.dtype(value).kind
    except (TypeError, ValueError, AttributeError, KeyError):
        return UNKNOWN
    return FLOAT if kind == "f" else INTEGER if kind in "iub" else UNKNOWN


def _static(atom: ast.expr, env: dict[str, Any]) -> Any:
    """The value of a global name or a module attribute (``np.float32``)."""
    if isinstance(atom, ast.Name):
        return env[atom.id]
    if isinstance(atom, ast.Attribute):
        return getattr(_static(atom.value, env), atom.attr)
    raise KeyError(atom)


def float_kinds(facts: Any, env: dict[str, Any], floats: set[str]) -> dict[str, str]:
    """Each name's kind, joined over all its definitions (a write into an array keeps its
    dtype), to a fixed point: a definition reading a name not yet known waits for it, so
    ``h = 0.9 * h + u`` in a loop is a float where ``h`` starts as one, and kinds only
    fall (not yet known, then float or integer, then unknown). ``floats``: the parameters
    whose arguments are floats (the ``wrt`` ones always are)."""
    params = {a.arg for a in facts.params}
    start = {p: FLOAT if p in floats else UNKNOWN for p in params}
    kinds: dict[str, str | None] = dict(start)
    kinds.update({n: None for n in facts.definitions if n not in params})
    changed = True
    while changed:
        changed = False
        for name, defs in facts.definitions.items():
            found = [start[name]] if name in start else []
            for stmt, _ in defs:
                kind = _definition_kind(stmt, facts, env, kinds)
                if kind is not None:
                    found.append(kind)
            new = _join(found) if found else None
            if new != kinds[name]:
                kinds[name] = new
                changed = True
    return {n: (k if k is not None else UNKNOWN) for n, k in kinds.items()}


def integer_definitions(facts: Any, env: dict[str, Any], kinds: dict[str, str]) -> set[str]:
    """The names some definition of which gives integers or bools (``kinds``: the
    fixed point of :func:`float_kinds`). ``y = np.asarray(y, dtype=int)`` on one path
    makes ``y`` such a name: its joined kind is UNKNOWN, like that of a name no one can
    tell, but a zero made like it (``np.zeros_like(y)``) may be an integer array, which
    cannot take a float adjoint in place."""
    return {
        name
        for name, defs in facts.definitions.items()
        if any(_definition_kind(stmt, facts, env, kinds) == INTEGER for stmt, _ in defs)
    }


def atom_kind(atom: ast.expr | None, kinds: dict[str, Any], env: dict[str, Any]) -> str | None:
    """The kind of an atom: a constant's, a name's in ``kinds`` (None while not yet
    known), a free name's or a module attribute's value's; UNKNOWN for anything else."""
    if atom is None:
        return UNKNOWN
    if isinstance(atom, ast.Constant):
        return value_kind(atom.value)
    if isinstance(atom, ast.Name):
        if atom.id in kinds:
            return kinds[atom.id]
        if atom.id in env:
            return value_kind(env[atom.id])
        return UNKNOWN
    try:
        return value_kind(_static(atom, env))
    except (KeyError, AttributeError):
        return UNKNOWN


def _definition_kind(
    stmt: ast.stmt, facts: Any, env: dict[str, Any], kinds: dict[str, str | None]
) -> str | None:
    """What one definition gives; None for a write into the array (its dtype stays), for
    ``x = None``, or where it reads only names not yet known (optimistic: the greatest
    fixed point)."""

    def of(atom: ast.expr | None) -> str | None:
        return atom_kind(atom, kinds, env)

    if isinstance(stmt, ast.For):  # over a range, or the elements of a list or an array
        if _is_range(stmt.iter, env):
            return INTEGER
        return of(stmt.iter) if isinstance(stmt.iter, ast.Name) else UNKNOWN
    op = facts.ops.get(stmt)
    if op is None:
        return UNKNOWN
    if op.key == "setitem":
        return None
    if op.key == "copy" and isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
        # x = None (an early return's result before it is set, a placeholder): None is
        # written into and updated by nothing (numpy raises), so it makes no kind
        return None
    if _is_operation(op.key):
        return _operation_kind(op, of)
    callee = op.callee
    if op.call_args is not None:  # a user function: what its own code returns
        given = [of(a) for a in op.call_args]
        if None in given:
            return None
        names = _parameter_names(callee)
        return returned_kind(callee, frozenset(p for p, k in zip(names, given) if k == FLOAT))
    return _call_kind(op, env, of)


def _is_operation(key: Any) -> bool:
    """Whether a rule's key is of an operation that is not a call: a display, a copy, an
    index, a comparison, an attribute, an operator."""
    return (
        key in ("pack", "append", "copy", "getitem", "compare", ast.Not)
        or (isinstance(key, tuple) and key[0] == "attr")
        or (isinstance(key, type) and issubclass(key, (ast.operator, ast.unaryop)))
    )


def _operation_kind(op: Any, of: Callable[[ast.expr | None], str | None]) -> str | None:
    """What an operation that is not a call gives (see :func:`_is_operation`), the kinds
    of atoms told by ``of``."""
    # a list or tuple has the kind of its elements (``np.array([0.0, 1.0])`` is a float)
    if op.key == "pack":
        return _join_known([of(a) for a in op.args.values()])
    if op.key == "append":
        return _join_known([of(op.args.get("x")), of(op.args.get("v"))])
    args = list(op.args.values())
    key = op.key
    if key == "copy" or key == "getitem":
        return of(args[0]) if args else UNKNOWN
    if key == "compare" or key in (ast.Not,):
        return INTEGER
    if isinstance(key, tuple) and key[0] == "attr":
        # (``x.dtype``: a dtype's kind is the kind of the arrays it makes, for
        # ``np.zeros(x.shape, x.dtype)``; see ``_call_kind``)
        if key[1] in ("T", "real", "mT", "dtype"):
            return of(args[0])
        return INTEGER if key[1] in ("shape", "ndim", "size") else UNKNOWN
    return _arithmetic(key, [of(a) for a in args])


def _call_kind(
    op: Any, env: dict[str, Any], of: Callable[[ast.expr | None], str | None]
) -> str | None:
    """What a call of a library function or a method gives: its ``dtype=`` where told,
    else what the function is known to make, else what its rule's operands promote to."""
    args = list(op.args.values())
    key, callee = op.key, op.callee
    told = op.args.get("dtype")
    dtype = dtype_kind(told, env) if op.ctx is not None else None
    if dtype == UNKNOWN and isinstance(told, ast.Name) and told.id not in env:
        dtype = of(told)  # a name given ``x.dtype`` (``_operation_kind``), or None: wait
        if dtype is None:
            return None
    if isinstance(key, tuple) and key[0] == "method":
        if key[1] == "astype":
            return dtype or UNKNOWN
        if key[1] == "copy":
            return of(args[0])
    if dtype is not None and dtype != UNKNOWN:
        return dtype
    if hashable_in(callee, _FROM_SHAPE):
        return dtype or FLOAT
    if callee is np.full:
        return dtype or of(op.args.get("fill_value"))
    if hashable_in(callee, _LIKE) or hashable_in(callee, _CONVERT):
        return dtype or (of(args[0]) if args else UNKNOWN)
    if callee is np.linspace or callee is np.logspace:
        return dtype or FLOAT
    if callee is np.arange:
        given = [a for a in args if not (isinstance(a, ast.Constant) and a.value is None)]
        return dtype or _arithmetic(ast.Add, [of(a) for a in given])
    if hashable_in(callee, _INTEGER_RESULTS):
        return INTEGER
    rule = op.rule
    if rule is None or op.problem:
        return UNKNOWN
    operands = [of(a) for _, a in op.diff_args] if not rule.nondiff else []
    if rule.nondiff:
        if hashable_in(callee, _ROUNDING) or (isinstance(key, tuple) and key[1] == "round"):
            return of(args[0]) if of(args[0]) == FLOAT else UNKNOWN
        return UNKNOWN
    if FLOAT in operands:  # numpy promotes: a float operand gives a float result
        return FLOAT
    if operands and all(k == INTEGER for k in operands) and _float_valued(callee):
        return FLOAT  # np.tanh of an integer array is a float array
    return None if None in operands else UNKNOWN


def _float_valued(callee: Any) -> bool:
    """Whether ``callee`` is a numpy ufunc that gives floats for integer and bool operands
    of every width (``np.tanh``, ``np.sqrt``, ``np.divide``; not ``np.negative``, whose
    result keeps an integer dtype), asked of numpy's own loop resolution."""
    if not isinstance(callee, np.ufunc):
        return False
    known = _FLOAT_VALUED.get(callee)
    if known is None:
        known = _FLOAT_VALUED[callee] = _resolves_to_floats(callee)
    return known


#: per ufunc, whether it is float-valued (see _float_valued): by the object, since two
#: ufuncs may share a name (``np.log1p`` and ``scipy.special.log1p``)
_FLOAT_VALUED: dict[np.ufunc, bool] = {}
_INTEGER_DTYPES = [np.dtype(t) for t in (bool, np.int8, np.uint8, np.int32, np.int64, np.uint64)]


def _resolves_to_floats(ufunc: np.ufunc) -> bool:
    try:
        for given in itertools.product(_INTEGER_DTYPES, repeat=ufunc.nin):
            out = ufunc.resolve_dtypes((*given, *(None,) * ufunc.nout))[ufunc.nin :]
            if not all(d.kind == "f" for d in out):
                return False
    except (TypeError, ValueError, AttributeError):  # (no loop; numpy before 1.24)
        return False
    return True


#: per user function (held weakly), the kind it returns for each set of float parameters
_RETURNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: user functions whose results are being found (a recursive call is not followed)
_FINDING: set[Any] = set()


def returned_kind(func: Any, floats: frozenset[str]) -> str:
    """The kind of what the user's function ``func`` returns when the parameters in
    ``floats`` are given floats, found by this analysis of its own code (UNKNOWN for a
    tuple, or where its code cannot be analyzed or is being analyzed: recursion)."""
    try:
        known = _RETURNS.setdefault(func, {})
    except TypeError:
        return UNKNOWN
    if floats in known:
        return known[floats]
    if func in _FINDING:
        return UNKNOWN
    _FINDING.add(func)
    try:
        from ..normalize.lower import normalize
        from ..parse import parse
        from . import analyze

        norm = normalize(parse(func))
        facts = analyze(norm, [], {}, check=False, floats=floats)
        returned = facts.returned
        if isinstance(returned, ast.Name):
            kind = float_kinds(facts, norm.parsed.env, set(floats)).get(returned.id, UNKNOWN)
        elif isinstance(returned, ast.Constant):
            kind = value_kind(returned.value)
        else:
            kind = UNKNOWN
    except Exception:  # noqa: BLE001 (any problem there: nothing is known)
        kind = UNKNOWN
    finally:
        _FINDING.discard(func)
    known[floats] = kind
    return kind


def _parameter_names(func: Any) -> list[str]:
    try:
        return list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return []


def _arithmetic(op: type, operands: list[str | None]) -> str | None:
    """An operator's result: true division gives a float; a float operand gives a float;
    integers give an integer; None while an operand is not yet known."""
    if op is ast.Div or FLOAT in operands:
        return FLOAT
    if None in operands:
        return None
    if operands and all(k == INTEGER for k in operands):
        return INTEGER if op is not ast.Pow else UNKNOWN  # (2 ** -1 is a float)
    return UNKNOWN


def hashable_in(key: Any, table: set[Any]) -> bool:
    """``key in table``, False for an unhashable key (a callee may be any object)."""
    try:
        return key in table
    except TypeError:
        return False


def _is_range(node: ast.expr, env: dict[str, Any]) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return env.get(node.func.id, getattr(builtins, node.func.id, None)) in (range, reversed)
    return False


def check_writes(norm: Any, facts: Any) -> None:
    """Refuse a value with a derivative written into an array not proven float (numpy
    rounds it to the array's dtype), and an augmented assignment of such a value to a
    name not proven float (numpy raises on an integer array, or rounds in place)."""
    active = facts.active
    for stmt, op in facts.ops.items():
        if op.target not in active or op.target in facts.maybe_sequences:
            continue  # (a write into a list: see analyze._check_fresh)
        if op.key == "setitem":
            value = op.args.get("v")
            into = op.target
        elif stmt in norm.updates:
            value, into = stmt, norm.updates[stmt]
        else:
            continue
        if op.key == "setitem" and not (isinstance(value, ast.Name) and value.id in facts.varied):
            continue
        kind = facts.dtype_kinds.get(into, UNKNOWN)
        if kind == FLOAT or (kind == UNKNOWN and op.key != "setitem"):
            # (in place, numpy casts by its same-kind rule: a float into an integer array
            # raises, so a name srcgrad cannot tell is either a float or an error)
            continue
        raise norm.parsed.locator.error(
            UnsupportedSyntaxError,
            norm.origin.get(stmt, stmt),
            _message(norm, facts, stmt, op.key == "setitem", into, kind),
        )


def _message(norm: Any, facts: Any, stmt: ast.stmt, item: bool, into: str, kind: str) -> str:
    user = norm.origin_text(stmt)
    made = [
        norm.definition_text(s)
        for s, _ in facts.definitions.get(into, [])
        if not (isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Subscript))
    ]
    made = [m for m in made if m and m != user]
    params = {a.arg for a in facts.params}
    name = _written_name(norm.origin.get(stmt)) or into
    if made:
        where = f" (it is made by `{made[0]}`)"
    elif into in params:
        where = f" (the argument `{into}`)"
    else:
        where = ""
    what = (
        f"is an integer or bool array{where}"
        if kind == INTEGER
        else f"may not be a float array: srcgrad cannot tell its dtype before the code runs{where}"
    )
    if item:
        return (
            f"`{user}` writes a value srcgrad differentiates into `{name}`, which {what}; "
            f"numpy rounds what is written into such an array, so its derivative would be "
            f"lost. Make `{name}` a float array (`np.zeros(n)`, `np.zeros_like(x)`, "
            f"`{name}.astype(float)`), or round on purpose with `np.floor`/`np.round`."
        )
    return (
        f"`{user}` changes `{name}` in place by a value srcgrad differentiates, and `{name}` "
        f"{what}; numpy refuses to write floats into an integer array in place. Make "
        f"`{name}` a float array first (`{name} = {name}.astype(float)`)."
    )


def _written_name(user: ast.stmt | None) -> str | None:
    """The name the user's statement writes into: ``y`` of ``y[i] = v`` or ``y += v``."""
    target = None
    if isinstance(user, ast.Assign) and len(user.targets) == 1:
        target = user.targets[0]
    elif isinstance(user, ast.AugAssign):
        target = user.target
    while isinstance(target, ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None
