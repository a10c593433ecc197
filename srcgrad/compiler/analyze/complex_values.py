"""Part of analyze: which names may hold complex numbers, and the rules their operations
take. A complex value comes from a complex constant, global or closure value, a cast to
a complex dtype or a function that may return complex numbers (``np.fft``,
``np.linalg.eig``, ``np.emath``), and spreads through every operation on it but those
that take a complex number apart (``np.abs``, ``np.real``...) and comparisons. An
operation on a complex operand whose rule differs for complex numbers
(:data:`srcgrad.rules.complex_numbers.COMPLEX_RULES`) is given that rule here, before
activity is found; :func:`~.checks.check_facts` refuses the others that have no rule
read for complex numbers."""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import types
import weakref
from typing import Any

import numpy as np

from ...rules.complex_numbers import COMPLEX_RULES
from ...rules.fft import REAL_INPUT
from ..normalize.lower import Normalized
from .dtypes import hashable_in as _hashable_in
from .facts import Facts, Op, _static_attr, resolve_static

#: functions that may return complex numbers for real arguments (with the complex types)
_COMPLEX_MAKERS = {
    complex,
    np.complex64,
    np.complex128,
    np.clongdouble,
    np.linalg.eig,
    np.linalg.eigvals,
    np.roots,
}


#: modules whose functions may return complex numbers for real arguments
_COMPLEX_MODULES = ("numpy.fft", "numpy.lib.scimath", "numpy.emath", "scipy.fft", "scipy.fftpack")


#: functions of those modules that return real numbers for real arguments (complex ones
#: for complex arguments, which the operands' own tracking finds)
_REAL_FFT = {"fftfreq", "rfftfreq", "fftshift", "ifftshift", "irfft", "irfft2", "irfftn", "hfft"}


#: functions of scipy.linalg that may return complex numbers for real arguments
_COMPLEX_SCIPY = {"eig", "eigvals", "rsf2csf", "logm", "sqrtm"}


#: operations giving real numbers of complex ones
_REAL_PARTS = {np.abs, abs, np.real, np.imag, np.angle, ("attr", "real"), ("attr", "imag")}
#: srcgrad's helpers giving complex numbers of real ones (in generated code)
_COMPLEX_HELPERS = {("helper", "irfft_adjoint"), ("helper", "fftn_adjoint")}
#: functions of numpy.fft giving real numbers of complex ones
_REAL_OF_COMPLEX_FFT = {"irfft", "irfft2", "irfftn", "hfft"}


def _is_complex(value: Any) -> bool:
    if isinstance(value, (complex, np.complexfloating)):
        return True
    dtype = getattr(value, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind == "c"


def complex_values(
    facts: Facts,
    assigns: list[ast.stmt],
    env: dict[str, Any],
    arguments: dict[str, str] | None = None,
) -> tuple[dict[str, str], set[int]]:
    """Names that may hold complex numbers, each with where its complex value comes from:
    a complex constant, global or closure value, a cast to a complex dtype, a function
    that may return complex numbers (``np.fft``, ``np.linalg.eig``, ``np.emath``, a
    function of the user's that does), and every operation on such a value but
    comparisons, ``abs`` and the like. Also the statements (by id) whose own operation
    gives a complex value (a name is complex where one of its definitions is).
    ``arguments``: the parameters given complex values, with why."""
    found: dict[str, str] = dict(arguments or {})
    sites: set[int] = set()

    def origin(atom: ast.expr) -> str | None:
        if isinstance(atom, ast.Constant):
            if _is_complex(atom.value):
                return f"it is computed from the complex number {atom.value!r}"
            return None
        if isinstance(atom, ast.Name) and atom.id in found:
            return found[atom.id]
        if _static_attr(atom, env) or (isinstance(atom, ast.Name) and atom.id in env):
            try:
                value = resolve_static(atom, env)
            except AttributeError:
                return None
            if _is_complex(value):
                return f"it is computed from {ast.unparse(atom)!r}, which holds complex numbers"
        return None

    for _ in range(len(assigns) + 1):
        before = len(sites)
        for stmt in assigns:
            if id(stmt) in sites:
                continue
            op = facts.ops[stmt]
            why = _made_complex(op)
            if why is None and not _real_result(op):
                why = next(filter(None, map(origin, op.args.values())), None)
            if why is not None:
                sites.add(id(stmt))
                found.setdefault(op.target, why)
        if len(sites) == before:
            break
    return found, sites


def _made_complex(op: Op) -> str | None:
    """Why ``op`` gives a complex value whatever its operands, or None."""
    callee = op.callee
    module = getattr(callee, "__module__", None) or ""
    name = getattr(callee, "__name__", "")
    if ("helper", getattr(callee, "__srcgrad_helper__", None)) in _COMPLEX_HELPERS:
        return "srcgrad's adjoint of a transform of np.fft is complex"
    if callee is not None and (
        _hashable_in(callee, _COMPLEX_MAKERS)
        or (module.startswith(_COMPLEX_MODULES) and name not in _REAL_FFT)
        or (module.startswith("scipy.linalg") and name in _COMPLEX_SCIPY)
    ):
        if isinstance(callee, type):
            return f"it is made by {name}"
        if name in ("eig", "eigvals") and module.startswith("numpy"):
            return (
                f"{name} may return complex numbers; for a symmetric matrix, np.linalg.eigh "
                "gives real eigenvalues and vectors, which srcgrad differentiates"
            )
        return f"{name} may return complex numbers"
    dtype = op.args.get("dtype") if op.ctx is not None else None
    if dtype is not None and op.problem and "complex" in op.problem:
        return f"it is cast to {ast.unparse(dtype)}"
    if op.call_args is not None and callee is not None and _returns_complex(callee):
        return f"{name or 'the function called'} returns complex numbers"
    return None


def _real_result(op: Op) -> bool:
    """Whether ``op`` gives a real value whatever its operands: comparisons, shapes,
    rounding, ``abs``, ``real``, ``imag``, ``angle``, ``irfft``."""
    if op.ctx is not None and op.rule is not None and op.rule.nondiff:
        return True
    module = getattr(op.callee, "__module__", None) or ""
    name = getattr(op.callee, "__name__", "")
    return _hashable_in(op.key, _REAL_PARTS) or (
        module.startswith(_COMPLEX_MODULES) and name in _REAL_OF_COMPLEX_FFT
    )


#: functions of the user's being read by :func:`_returns_complex` (recursion), and the
#: answers found (by function: a function's code does not change under it)
_READING: set[Any] = set()
_ANSWERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: names whose presence in a function's code may make complex numbers
_COMPLEX_NAMES = frozenset(
    {"fft", "complex", "complex64", "complex128", "clongdouble", "csingle", "cdouble"}
    | {"eig", "eigvals", "roots", "emath", "scimath", "cmath", "logm", "sqrtm", "rsf2csf"}
)


def _returns_complex(func: Any) -> bool:
    """Whether a function of the user's, called with real arguments, may return complex
    numbers (or a tuple or list holding some), found by this analysis of its own code
    where a look at its code objects cannot rule it out. Within a recursion the function
    read is taken to return real numbers (the least fixed point: a complex value must
    come from somewhere else in it); where its code cannot be read, complex."""
    if func in _READING:
        return False
    try:
        known = _ANSWERS.get(func)
    except TypeError:  # (not weakly referable)
        known = None
    if known is not None:
        return known
    if not _may_make_complex(func, set()):
        answer = False
    else:
        _READING.add(func)
        try:
            from ..normalize.lower import normalize
            from ..parse import parse
            from . import analyze

            norm = normalize(parse(func))
            facts = analyze(norm, [], {}, check=False)
            value = norm.tree.body[-1].value
            if isinstance(value, ast.Constant):
                answer = _is_complex(value.value)
            else:
                answer = isinstance(value, ast.Name) and value.id in facts.complex
        except Exception:  # noqa: BLE001 (any problem there: assume the worst here)
            answer = True
        finally:
            _READING.discard(func)
    with contextlib.suppress(TypeError):
        _ANSWERS[func] = answer
    return answer


def _may_make_complex(func: Any, seen: set[int]) -> bool:
    """Whether ``func``'s code (its nested code objects, the functions of the user's it
    names, globals and closure values included) mentions a complex constant or value or
    a name of :data:`_COMPLEX_NAMES`: False rules complex results out."""
    if id(func) in seen:
        return False
    seen.add(id(func))
    code = getattr(func, "__code__", None)
    if code is None:
        return True
    namespace = getattr(func, "__globals__", {})
    cells = [c.cell_contents for c in func.__closure__ or () if _filled(c)]
    stack = [code]
    while stack:
        co = stack.pop()
        for const in co.co_consts:
            if isinstance(const, types.CodeType):
                stack.append(const)
            elif isinstance(const, complex):
                return True
        names = co.co_names
        for name in names:
            if name in _COMPLEX_NAMES:
                return True
            if name in namespace and _value_may_be_complex(namespace[name], names, seen):
                return True
    return any(_value_may_be_complex(v, code.co_names, seen) for v in cells)


def _value_may_be_complex(value: Any, names: tuple[str, ...], seen: set[int]) -> bool:
    """Whether ``value``, a global or closure value a function reads, may hold or make
    complex numbers: a function of the user's that may, a complex value, a module with a
    complex value under one of the ``names`` the code reads (``consts.C``), any other
    object (its attributes may be complex: the analysis decides)."""
    if isinstance(value, types.FunctionType):
        return _may_make_complex(value, seen)
    if isinstance(value, types.ModuleType):
        return any(_is_complex(getattr(value, n, None)) for n in names)
    if value is None or isinstance(value, (bool, int, float, str, type, types.BuiltinFunctionType)):
        return False
    if isinstance(value, (np.ndarray, np.generic)) or callable(value):
        return _is_complex(value)  # (a ufunc, a numpy array)
    return True


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def use_complex_rules(facts: Facts) -> None:
    """Each operation on a complex operand whose rule differs for complex numbers gets
    that rule (``np.abs(z)``: ``g * np.conj(z) / ans`` backward, not ``g * np.sign(z)``)."""
    found = facts.complex
    if not found:
        return
    for op in facts.ops.values():
        if op.ctx is None or op.problem or not _hashable_in(op.key, COMPLEX_RULES):
            continue
        args = op.args.values()
        if any(_complex_atom(a, found) for a in args):
            op.rule = COMPLEX_RULES[op.key]
            op.ctx = dataclasses.replace(op.ctx, rule=op.rule)


# -- what srcgrad does not differentiate on complex numbers (asked by checks) -----------------
def complex_problem_of(norm: Normalized, facts: Facts, op: Op) -> str | None:
    """Why srcgrad cannot differentiate ``op`` where it meets complex numbers, or None:
    its rule must hold for complex operands (``Rule.complex_ok``, see
    :mod:`srcgrad.rules.complex_numbers`), with no dtype asked of it, and it must not
    write a complex value anywhere (an item, an array updated in place)."""
    found = facts.complex
    operands = [a for a in op.args.values() if _complex_atom(a, found)]
    if id(op.stmt) not in facts.complex_sites and not operands:
        return None  # (a name some other definition makes complex: not this one)
    why = found.get(op.target) or next(
        (found[a.id] for a in operands if isinstance(a, ast.Name)), "it is a complex number"
    )
    start = f"this value is complex ({why}), and srcgrad differentiates complex numbers"
    where = _complex_place(norm, op, operands, why, start)
    if where is not None or op.key in ("pack", "append") or op.rule is None or op.problem:
        return where or None  # (no derivative at all: refused as such, saying why)
    return _complex_rule_problem(op, operands, start)


def complex_calls(norm: Normalized, facts: Facts) -> frozenset:
    """The calls of functions of the user's given complex numbers, to write out where
    they stand (``Normalized.written_out``): each one's statement of the user's (its
    place) and the function."""
    import inspect

    found = set()
    for op in facts.ops.values():
        if op.call_args is None or not inspect.isfunction(op.callee):
            continue
        if not any(_complex_atom(a, facts.complex) for a in op.args.values()):
            continue
        user = norm.origin.get(op.stmt, op.stmt)
        where = (user.lineno, user.col_offset, user.end_lineno or 0, user.end_col_offset or 0)
        found.add((where, op.callee))
    return frozenset(found)


def _complex_atom(atom: ast.expr, found: dict[str, str]) -> bool:
    """Whether ``atom`` (a name or a constant) holds a complex value."""
    if isinstance(atom, ast.Name):
        return atom.id in found
    return isinstance(atom, ast.Constant) and _is_complex(atom.value)


def _complex_place(
    norm: Normalized, op: Op, operands: list[ast.expr], why: str, start: str
) -> str | None:
    """Where a complex value may not go yet: into a function of the user's, an array
    changed in place or an item; made by a cast or a call without a rule. ("" where a
    list or tuple holds it, or where a function of the user's makes it: both fine.)"""
    if op.call_args is not None and not operands:
        return ""  # (a function of the user's making complex numbers of real ones)
    if op.call_args is not None:
        return (
            f"{start} through numpy's operations, not yet through a call to a function of "
            "yours; write the function's statements here (or define the function inside "
            "this one, a nested `def`, which srcgrad writes out where it is called), or "
            "keep the values it gets real (pass np.real(z) and np.imag(z))."
        )
    if op.stmt in norm.updates:
        into = norm.updates[op.stmt]
        return (
            f"{start} in new values, not yet in an array changed in place; write "
            f"`{into} = {into} + ...` (a new array) instead of the augmented assignment."
        )
    if op.key in ("pack", "append") and not op.problem:
        return ""  # (a list or tuple holds a complex number as it is)
    if op.problem and "complex" in op.problem:  # (a cast to a complex dtype)
        return op.problem
    if op.rule is None and not operands:  # np.complex128(x), np.emath.sqrt(x)...
        return (
            f"this value is complex ({why}), and srcgrad does not differentiate the making "
            "of complex numbers of real ones by this call yet; write `x + 0j` (or "
            "`x + 1j * y`) for a complex value made of real ones."
        )
    if op.key == "setitem":
        return (
            f"{start} through arithmetic, numpy's elementwise functions, sums, products, "
            "indexing, lists, np.fft and np.real/imag/conj/abs/angle, not yet into items of "
            "arrays; build the array with operations (np.stack of the values, np.where) or "
            "keep this part real."
        )
    return None


def _complex_rule_problem(op: Op, operands: list[ast.expr], start: str) -> str | None:
    """Why ``op``'s rule does not hold for its complex operands, or None."""
    if not op.rule.complex_ok:
        return (
            f"{start} only through operations whose derivative srcgrad has checked for "
            f"them, and not yet through {op.rule.name}; keep this part real (np.real, "
            "np.imag, np.abs of the complex values)."
        )
    if op.rule.name in REAL_INPUT and operands:
        return (
            f"{start}, but {op.rule.name} takes real arrays (numpy drops the imaginary "
            "part); use np.fft.fft for a complex one."
        )
    dtype = op.args.get("dtype")
    if dtype is not None and not (isinstance(dtype, ast.Constant) and dtype.value is None):
        return f"{start} where their dtype stays theirs; leave out dtype= here."
    return None
