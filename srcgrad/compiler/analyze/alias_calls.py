"""Part of the alias analysis (:mod:`.aliases`): what library calls do to memory. Which
numpy functions, array methods, builtins and srcgrad runtime helpers make new arrays or
return what they are given, which change an argument in place
(:func:`_changed_by_call`), and which globals' values no in-place change can reach."""

from __future__ import annotations

import ast
import types
from typing import Any

import numpy as np

from ..normalize.expressions import is_static
from .facts import resolve_static

#: functions that make a new array from a shape, a value or a copy (0-d ones too)
_CONSTRUCTORS = (
    np.array,
    np.copy,
    np.zeros,
    np.ones,
    np.empty,
    np.full,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.full_like,
)
#: numpy functions (besides ufuncs) whose result is a new array
_NEW_ARRAYS = {
    *_CONSTRUCTORS,
    np.arange,
    np.linspace,
    np.eye,
    np.identity,
    np.sum,
    np.mean,
    np.prod,
    np.std,
    np.var,
    np.max,
    np.min,
    np.amax,
    np.amin,
    np.cumsum,
    np.cumprod,
    np.dot,
    np.outer,
    np.inner,
    np.tensordot,
    np.where,
    np.clip,
    np.concatenate,
    np.stack,
    np.hstack,
    np.vstack,
    np.tile,
    np.repeat,
    np.sort,
    np.diff,
    np.trace,
    np.kron,
    np.cross,
    np.around,
    np.round,
    np.fix,
    np.sinc,
    np.nan_to_num,
    np.linalg.inv,
    np.linalg.solve,
    np.linalg.det,
    np.linalg.slogdet,
    np.linalg.cholesky,
    np.linalg.eigh,
    np.linalg.svd,
    np.linalg.qr,
    np.linalg.pinv,
    np.linalg.norm,
}
#: functions that make arrays, 0-d ones too (where arithmetic would give a number)
_ARRAY_MAKERS = (np.asarray, *_CONSTRUCTORS)
#: array methods whose result is a new array (or a number)
_NEW_FROM_METHODS = frozenset(
    "copy astype sum mean prod std var max min cumsum cumprod dot flatten tolist item "
    "all any argmax argmin argsort nonzero repeat take trace round clip".split()
)
#: srcgrad's runtime helpers (in generated code differentiated again): the positions of
#: the arguments each one's result may be, view or hold (absent: any of them)
_HELPER_RESULTS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(
        "index_adjoint index_adjoint_add zero_adjoint zeros_seq add_seq matmul_vjp_a "
        "matmul_vjp_b dot_vjp_a dot_vjp_b extremum_vjp extremum_jvp tensordot_vjp_a "
        "tensordot_vjp_b inner_vjp_a inner_vjp_b cumsum_vjp trace_vjp pow_log".split(),
        (),
    ),
    **dict.fromkeys(
        "unbroadcast unbroadcast_to broadcast_like unreduce untranspose kept_writes unstack "
        "unstack_like split_like spread sum_like add_at check_scalar".split(),
        (0,),
    ),
    "set_at": (0, 2),
}
#: attributes that are values of their own, not views of the array
_VALUE_ATTRIBUTES = frozenset("shape size ndim dtype itemsize nbytes".split())
#: builtins whose result never shares memory with their arguments
_PLAIN_BUILTINS = frozenset("len range float int bool abs round str repr isinstance".split())


#: methods that change a list or an array in place
_CHANGING_METHODS = frozenset(
    "append extend insert pop remove clear sort reverse fill put resize itemset setfield "
    "update setdefault popitem partition".split()
)


#: numpy functions that change their first argument in place (and return None)
_CHANGING_FUNCTIONS = tuple(
    f
    for f in (
        np.fill_diagonal,
        np.copyto,
        np.put,
        np.place,
        np.putmask,
        getattr(np, "put_along_axis", None),
        np.random.shuffle,
    )
    if f is not None
)


def _changed_by_call(call: ast.Call, env: dict, local: set[str]) -> ast.expr | None:
    """The argument a call changes in place: ``out=``'s, a changing method's receiver
    (``y.sort()``; ``xs.pop()`` is followed as such), a changing numpy function's first."""
    for k in call.keywords:
        if k.arg == "out" and not (isinstance(k.value, ast.Constant) and k.value.value is None):
            return k.value
    func = call.func
    if is_static(func, env, local):
        callee = resolve_static(func, env)
        ufunc_at = isinstance(getattr(callee, "__self__", None), np.ufunc) and (
            getattr(callee, "__name__", None) == "at"
        )
        if (ufunc_at or any(callee is f for f in _CHANGING_FUNCTIONS)) and call.args:
            return call.args[0]  # (np.add.at(y, i, v), np.fill_diagonal(y, v))
        return None
    if isinstance(func, ast.Attribute) and func.attr == "shuffle" and call.args:
        return call.args[0]  # rng.shuffle(y)
    if isinstance(func, ast.Attribute) and func.attr in _CHANGING_METHODS - {"pop", "append"}:
        return func.value
    return None


def _immutable(value: Any) -> bool:
    """Whether a global's value can never be changed in place (numbers, strings, modules,
    functions, classes): it refers to no memory an in-place change could reach."""
    return (
        value is None
        or callable(value)
        or isinstance(
            value, (bool, int, float, complex, str, bytes, np.generic, types.ModuleType, range)
        )
    )


def _is_new_array(callee: Any) -> bool:
    try:
        return callee in _NEW_ARRAYS
    except TypeError:  # unhashable
        return False


def _is_builtin(callee: Any) -> bool:
    return getattr(callee, "__module__", None) == "builtins" or isinstance(
        callee, types.BuiltinFunctionType
    )
