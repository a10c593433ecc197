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
import dataclasses
from typing import Any

import numpy as np

from ...rules.complex_numbers import COMPLEX_RULES
from .dtypes import hashable_in as _hashable_in
from .facts import Facts, _static_attr, resolve_static

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
_COMPLEX_HELPERS = {("helper", "irfft_adjoint")}
#: functions of numpy.fft giving real numbers of complex ones
_REAL_OF_COMPLEX_FFT = {"irfft", "irfft2", "irfftn", "hfft"}


def _is_complex(value: Any) -> bool:
    if isinstance(value, (complex, np.complexfloating)):
        return True
    dtype = getattr(value, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind == "c"


def complex_values(facts: Facts, assigns: list[ast.stmt], env: dict[str, Any]) -> dict[str, str]:
    """Names that may hold complex numbers, each with where its complex value comes from:
    a complex constant, global or closure value, a cast to a complex dtype, a function
    that may return complex numbers (``np.fft``, ``np.linalg.eig``, ``np.emath``), and
    every operation on such a value but comparisons, ``abs`` and the like."""
    found: dict[str, str] = {}

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
        before = len(found)
        for stmt in assigns:
            op = facts.ops[stmt]
            if op.target in found:
                continue
            callee = op.callee
            module = getattr(callee, "__module__", None) or ""
            if op.ctx is not None and op.rule is not None and op.rule.nondiff:
                continue  # comparisons, shapes, rounding: real
            name = getattr(callee, "__name__", "")
            if op.key in _COMPLEX_HELPERS:
                found[op.target] = "srcgrad's adjoint of np.fft.irfft is complex"
                continue
            if callee is not None and (
                _hashable_in(callee, _COMPLEX_MAKERS)
                or (module.startswith(_COMPLEX_MODULES) and name not in _REAL_FFT)
                or (module.startswith("scipy.linalg") and name in _COMPLEX_SCIPY)
            ):
                found[op.target] = (
                    f"it is made by {name}"
                    if isinstance(callee, type)
                    else f"{name} may return complex numbers"
                )
                continue
            dtype = op.args.get("dtype") if op.ctx is not None else None
            if dtype is not None and op.problem and "complex" in op.problem:
                found[op.target] = f"it is cast to {ast.unparse(dtype)}"
                continue
            if _hashable_in(op.key, _REAL_PARTS) or (
                module.startswith(_COMPLEX_MODULES) and name in _REAL_OF_COMPLEX_FFT
            ):
                continue
            for atom in op.args.values():
                why = origin(atom)
                if why is not None:
                    found[op.target] = why
                    break
        if len(found) == before:
            break
    return found


def use_complex_rules(facts: Facts) -> None:
    """Each operation on a complex operand whose rule differs for complex numbers gets
    that rule (``np.abs(z)``: ``g * np.conj(z) / ans`` backward, not ``g * np.sign(z)``)."""
    found = facts.complex
    if not found:
        return
    for op in facts.ops.values():
        if op.ctx is None or op.problem or not _hashable_in(op.key, COMPLEX_RULES):
            continue
        if any(isinstance(a, ast.Name) and a.id in found or _complex_constant(a) for a in op.args.values()):
            op.rule = COMPLEX_RULES[op.key]
            op.ctx = dataclasses.replace(op.ctx, rule=op.rule)


def _complex_constant(atom: ast.expr) -> bool:
    return isinstance(atom, ast.Constant) and _is_complex(atom.value)
