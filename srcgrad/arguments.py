"""What a derivative checks and reads of its function and its arguments: the function
(a plain Python function, or a derivative for higher order) and ``wrt``, each argument
to differentiate (a float or a float array, or a pytree of them), and the kind of each
argument that decides the generated code (its rank, or a pytree's structure, and which
of an array's axes are not of length 1)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import pytree
from .backends import dask_numpy, is_cupy, is_dask
from .compiler.analyze.facts import LEAF

if TYPE_CHECKING:
    from .derivative import Derivative

Wrt = Union[int, str, Sequence[Union[int, str]]]  # noqa: UP007 (a runtime alias on 3.10)


def resolve_wrt(wrt: Wrt | None, argnums: Wrt | None, kind: str) -> Wrt:
    """The arguments a transformation differentiates: ``wrt``, or ``argnums`` (JAX's name
    for it, accepted as a synonym), or the first argument when neither is given."""
    if wrt is not None and argnums is not None:
        raise TypeError(
            f"{kind} takes wrt or argnums (the same option, by JAX's name), not both: "
            f"got wrt={wrt!r} and argnums={argnums!r}"
        )
    if argnums is not None:
        return argnums
    return 0 if wrt is None else wrt


_MODES = ("reverse", "forward")
#: grad's and value_and_grad's: "auto" is forward mode for one or two numbers (see
#: passes.auto_forward)
_GRAD_MODES = (*_MODES, "auto")


def _mode_over(inner: Derivative, kind: str, mode: str) -> str:
    """The mode of a ``kind`` derivative of the derivative ``inner``: forward mode over
    reverse-mode code (grad or vjp), either mode over forward-mode code (jvp); a
    ``TypeError`` for the others."""
    made = f"{kind} of {inner!r}"
    if inner.kind in ("grad", "vjp"):
        if kind == "vjp" and inner._inner is None and not inner.has_aux:
            return "reverse"  # (over the function's forward-mode code: Derivative._over_reverse)
        if kind == "vjp":
            raise TypeError(
                f"srcgrad runs forward mode over the reverse-mode code of {inner!r}, not reverse "
                f"mode again, so it has no {made} (it has the vjp of a gradient or a vjp of a "
                "Python function). Use srcgrad.jvp of it (a column at a time), "
                "srcgrad.jacobian(..., mode='forward'), or for a gradient srcgrad.hvp / "
                "srcgrad.hessian of the function itself"
            )
        return "forward"
    if inner.kind == "jvp":
        return mode
    raise TypeError(
        f"srcgrad differentiates derivatives made by grad, vjp and jvp; {inner!r} returns a "
        f"value and a gradient together, so it has no {made}. Differentiate srcgrad.grad of "
        "the function instead"
    )


def _not_a_function(func: Any, kind: str) -> str:
    """Why ``func`` (a callable but not a Python function) cannot be differentiated, and
    what to write instead."""
    how = (
        "Differentiate a function written with def or lambda that makes the call, "
        "e.g. `{call}`, so that srcgrad can read its source"
    )
    if getattr(func, "__srcgrad_derivative__", False):  # jacobian(f), hvp(f)...: no Derivative
        return (
            f"srcgrad differentiates Python functions and the derivatives grad, "
            f"value_and_grad, jvp and vjp make; got {func!r}, which it does not "
            f"differentiate again. Apply {kind} to those: srcgrad.hessian(f) and "
            "jacobian(grad(f), mode='forward') for second derivatives, jvp(vjp(f)) or "
            "vjp(vjp(f)) for those of a vjp, elementwise_grad(elementwise_grad(f))."
        )
    if inspect.ismethod(func) and inspect.isfunction(func.__func__):
        owner = func.__self__ if inspect.isclass(func.__self__) else type(func.__self__)
        name = f"{owner.__qualname__}.{func.__func__.__name__}"
        obj = owner.__name__ if inspect.isclass(func.__self__) else "obj"
        article = "an" if owner.__name__[:1].lower() in "aeiou" else "a"
        what = f"the bound method {name} of {article} {owner.__name__} object"
        if inspect.isclass(func.__self__):
            what, name = f"the class method {name}", f"{name}.__func__"
        hint = how.format(call=f"{kind}(lambda x: {name}({obj}, x))")
        return (
            f"srcgrad differentiates plain Python functions; got {what}. {hint}: srcgrad "
            f"differentiates {name} as it does any function it calls, with the "
            "object as its first argument."
        )
    if isinstance(func, functools.partial):
        inner = getattr(func.func, "__qualname__", repr(func.func))
        fixed = ["..."] * len(func.args) + ["x"] + [f"{k}=..." for k in func.keywords]
        hint = how.format(call=f"{kind}(lambda x: {inner}({', '.join(fixed)}))")
        return (
            f"srcgrad differentiates plain Python functions; got functools.partial of {inner} "
            f"with arguments fixed. {hint}, passing the fixed arguments in the call."
        )
    if inspect.isbuiltin(func) or inspect.ismethod(func) or isinstance(func, np.ufunc):
        return (
            f"srcgrad differentiates Python functions written in Python; got {func!r}, a "
            f"{type(func).__name__} with no Python source. Call it from a function written "
            "with def or lambda (srcgrad knows the derivatives of numpy's functions), or "
            "give it a rule with srcgrad.primitive."
        )
    call = inspect.getattr_static(type(func), "__call__", None)
    if not inspect.isroutine(func) and inspect.isfunction(call):
        hint = how.format(call=f"{kind}(lambda x: {call.__qualname__}(obj, x))")
        return (
            f"srcgrad differentiates plain Python functions; got an instance of "
            f"{type(func).__name__}, a callable object. {hint}: srcgrad differentiates "
            f"{type(func).__name__}.__call__ as it does any function it calls."
        )
    return (
        f"srcgrad differentiates Python functions written in Python; got {func!r} (a "
        f"{type(func).__name__}), which has no Python source to transform: wrap the call in "
        "a function written with def or lambda, or give it a rule with srcgrad.primitive."
    )


def _unused_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_1``, ``name_2``... the first not in ``taken``."""
    fresh, n = name, 0
    while fresh in taken:
        n += 1
        fresh = f"{name}_{n}"
    return fresh


def _parameter_names(func: Callable[..., Any]) -> list[str]:
    """The names of ``func``'s positional parameters, in order."""
    code = func.__code__
    return list(code.co_varnames[: code.co_argcount])


def call_with(func: Callable[..., Any], values: Sequence[Any]) -> Any:
    """``func`` called with ``values``, one per parameter in the signature's order (as a
    derivative binds them): a keyword-only parameter's passed by name, a ``**kwargs``
    parameter's dict spread into keywords."""
    if _keywords_parameter(func) is None:
        return func(*values)
    signature = inspect.signature(func, follow_wrapped=False)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for param, value in zip(signature.parameters.values(), values):
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            kwargs.update(value)
        elif param.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[param.name] = value
        elif param.kind is inspect.Parameter.VAR_POSITIONAL:
            args.extend(value)
        else:
            args.append(value)
    return func(*args, **kwargs)


def _keywords_parameter(func: Callable[..., Any]) -> str | None:
    """The name of ``func``'s ``**kwargs`` parameter, if it has one."""
    try:
        signature = inspect.signature(func, follow_wrapped=False)
    except (TypeError, ValueError):
        return None
    kinds = {p.name: p.kind for p in signature.parameters.values()}
    return next((n for n, k in kinds.items() if k is inspect.Parameter.VAR_KEYWORD), None)


def _normalize_wrt(wrt: Wrt, params: list[str], func: Callable[..., Any]) -> tuple[list[str], bool]:
    items = list(wrt) if isinstance(wrt, (tuple, list)) else [wrt]
    is_tuple = isinstance(wrt, (tuple, list))
    if not items:
        raise ValueError("wrt must name at least one argument")
    names = []
    collected = _keywords_parameter(func)
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"wrt takes argument positions (int) or names (str); got {item!r}")
        if isinstance(item, int):
            if not -len(params) <= item < len(params):
                raise ValueError(
                    f"wrt={item} is out of range: {func.__qualname__} has {len(params)} "
                    f"parameter(s) {params}"
                )
            names.append(params[item])
        else:
            if item not in params and collected is not None:
                raise ValueError(
                    f"wrt={item!r} is not a parameter of {func.__qualname__}; a keyword "
                    f"argument its **{collected} collects is passed as it is, never "
                    f"differentiated: give {item!r} a parameter of its own to differentiate it"
                )
            if item not in params:
                raise ValueError(
                    f"wrt={item!r} is not a parameter of {func.__qualname__}; "
                    f"its parameters are {params}"
                )
            names.append(item)
        if names[-1] == collected:
            raise ValueError(
                f"wrt names **{collected}, which collects the keyword arguments of "
                f"{func.__qualname__}: srcgrad passes those as they are, never "
                "differentiated; give a value to differentiate a parameter of its own"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"wrt names the same argument twice: {items}")
    return names, is_tuple


def _wide_axes(value: Any) -> Any:
    """For an array, which of its axes are not of length 1 (broadcasting never stretches
    them, which the generated code may rely on); for a pytree with such leaves, its
    structure with ``(LEAF, axes)`` for each leaf; None for anything else."""
    if pytree.is_node(value):
        axes = [_wide_axes(leaf) for leaf in pytree.leaves(value)]
        if not any(axes):
            return None
        in_order = iter(axes)  # (structure visits the leaves in the order leaves lists them)
        return pytree.structure(value, lambda leaf: (LEAF, next(in_order)))
    shape = getattr(value, "shape", None)
    if not isinstance(shape, tuple):
        return None
    if not all(isinstance(n, int) for n in shape):
        return None  # (dask: an axis of unknown length)
    return tuple(n != 1 for n in shape) if any(n != 1 for n in shape) else None


def _rank(value: Any) -> int | str | None:
    if pytree.is_node(value):  # a pytree: its structure, with the ranks of its leaves
        return pytree.structure(value, _rank)
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return 0
    ndim = getattr(value, "ndim", None)
    return ndim if isinstance(ndim, int) and hasattr(value, "shape") else None


def _check_differentiable(name: str, value: Any, fname: str) -> None:
    if isinstance(value, dict):
        for key, leaf in value.items():
            _check_differentiable(f"{name}[{key!r}]", leaf, fname)
        return
    if pytree.is_dataclass_instance(value):
        for key, leaf in pytree.children(value):
            _check_differentiable(f"{name}.{key}", leaf, fname)
        return
    if isinstance(value, (list, tuple)):
        for i, leaf in enumerate(value):
            _check_differentiable(f"{name}[{i}]", leaf, fname)
        return
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"cannot differentiate {fname} with respect to {name!r}: it is a bool ({value!r}); "
            f"pass a float, e.g. float({name})"
        )
    if isinstance(value, (int, np.integer)):
        raise TypeError(
            f"cannot differentiate {fname} with respect to {name!r}: it is an integer "
            f"({value!r}); pass a float, e.g. float({name})"
        )
    if isinstance(value, float):
        return
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        raise TypeError(
            f"cannot differentiate {fname} with respect to {name!r}: expected a float or a float "
            f"array, got {type(value).__name__}"
        )
    if dtype.kind != "f":
        kind = {
            "i": "an integer",
            "u": "an unsigned integer",
            "b": "a boolean",
            "c": "a complex",
        }.get(dtype.kind, f"a {dtype}")
        if dtype.kind == "c":
            raise TypeError(
                f"cannot differentiate {fname} with respect to {name!r}: it is a complex "
                "array, and srcgrad differentiates with respect to real numbers; pass its real "
                f"and imaginary parts ({name}.real, {name}.imag) as two arguments and make "
                "the complex value inside the function (z = x + 1j * y)"
            )
        raise TypeError(
            f"cannot differentiate {fname} with respect to {name!r}: it is {kind} array; "
            f"pass a float array, e.g. {name}.astype(float)"
        )


def check_not_complex(params: Sequence[str], values: Sequence[Any], fname: str) -> None:
    """Refuse a complex argument (an array, a number, a leaf of a pytree): srcgrad's
    analysis finds complex values where the code makes them, not where they come in."""
    for param, value in zip(params, values):
        if any(np.iscomplexobj(leaf) for leaf in pytree.leaves(value) if _numeric(leaf)):
            raise TypeError(
                f"{fname} got a complex argument {param!r}; srcgrad takes real arguments and "
                "differentiates complex values the function makes itself: pass the real and "
                f"imaginary parts ({param}.real, {param}.imag) as two arguments and make the "
                "complex value inside the function (z = x + 1j * y)"
            )


def is_complex_leaf(value: Any) -> bool:
    """A complex number or array (not a container holding some)."""
    return isinstance(value, complex) or (
        isinstance(getattr(value, "dtype", None), np.dtype) and value.dtype.kind == "c"
    )


def _numeric(value: Any) -> bool:
    """An array or a number (a module has a ``dtype`` too: ``np.dtype``)."""
    return isinstance(value, complex) or isinstance(getattr(value, "dtype", None), np.dtype)


def _lazy(x: Any) -> Any:
    """A numpy array as a dask array (one chunk); anything else as it is."""
    return dask_numpy().asarray(x) if isinstance(x, np.ndarray) else x


def _is_array(x: Any) -> bool:
    """Whether ``x`` is an array of a module srcgrad computes with (not a number: numpy
    2's scalars have a ``.device`` too)."""
    return isinstance(x, np.ndarray) or is_cupy(x) or is_dask(x)


def complex_arguments(d: Derivative, values: list[Any]) -> frozenset[str]:
    """The parameters of ``d`` given complex arrays or numbers: differentiated in reverse mode
    and by jvp (autograd's convention, docs/guide.md); a ``TypeError`` saying what to do for
    the derivatives that do not take them yet."""
    complexes = frozenset(p for p, v in zip(d._params, values) if is_complex_leaf(v))
    check_not_complex(  # (in pytrees)
        [p for p in d._params if p not in complexes],
        [v for p, v in zip(d._params, values) if p not in complexes],
        d.__name__,
    )
    if not complexes:
        return complexes
    what = None
    if d._inner is not None:
        what = "a derivative of a derivative"
    elif d._generated_kind == "jvp" and d.kind != "jvp" and complexes & set(d.wrt):
        what = f"{d.kind} in forward mode (use mode='reverse')"
        complexes = complexes & set(d.wrt)  # (those named below)
    if what is not None:
        first = sorted(complexes)[0]
        raise TypeError(
            f"{d.__name__} got a complex argument {first!r}; srcgrad takes complex "
            f"arguments in reverse mode and jvp, not yet in {what}. Pass the real and "
            f"imaginary parts ({first}.real, {first}.imag) as two arguments and make the "
            "complex value inside the function (z = x + 1j * y)"
        )
    return complexes


def check_written_apart(
    copied: tuple[str, ...], params: list[str], values: list[Any], name: str
) -> None:
    """Refuse arguments where one the function writes into shares memory with another:
    numpy's write would be seen through the other, and the derivative, which writes
    into its own copy, would differentiate another function."""
    arrays = [[leaf for leaf in pytree.leaves(v) if isinstance(leaf, np.ndarray)] for v in values]
    for p in copied:
        if p not in params:
            continue
        k = params.index(p)
        for j, others in enumerate(arrays):
            if j == k:
                continue
            if any(np.shares_memory(a, b) for a in arrays[k] for b in others):
                raise ValueError(
                    f"{name}: the function writes into its argument {p!r}, and the "
                    f"argument for {params[j]!r} shares its memory (the same array, or a "
                    "view of it): numpy's write would change both. Pass a copy "
                    f"({params[j]}.copy()) for one of them."
                )
