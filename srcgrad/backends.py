"""Which array module a call runs on: numpy, cupy for cupy arrays, dask.array for dask arrays.

Generated code refers to the array module by name only, so running it on
another backend is a matter of binding that name (and any numpy function
the user imported by name) to the other module: module rebinding. The dask backend's
module, dask.array with a few functions filled in, is :mod:`srcgrad.dask_backend`'s.
"""

from __future__ import annotations

import numbers
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from .dask_backend import dask_numpy
from .pytree import paths


@dataclass(frozen=True)
class Backend:
    name: str  # "numpy", "cupy" or "dask"
    module: types.ModuleType

    def rebind(self, value: Any) -> Any:
        """``value`` as the user's code would see it on this backend."""
        if self.name == "numpy":
            return value
        if value is np:
            return self.module
        if getattr(value, "__module__", None) in ("numpy", "numpy._core.umath") or isinstance(
            value, np.ufunc
        ):
            twin = getattr(self.module, getattr(value, "__name__", ""), None)
            if twin is not None:
                return twin
        return value

    def is_array(self, value: Any) -> bool:
        return isinstance(value, getattr(self.module, "ndarray", None) or self.module.Array)


NUMPY = Backend("numpy", np)


def __getattr__(name: str) -> Any:
    # ``from srcgrad.backends import dask_array as np``, the import line of generated code
    # for dask arrays
    if name == "dask_array":
        return dask_numpy()
    raise AttributeError(name)


def is_cupy(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "cupy"


def is_dask(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "dask"


# -- the arguments srcgrad computes with ----------------------------------------------------
#
# Generated code and the derivative rules assume numpy's semantics for every value: ``*``
# multiplies elementwise, every element takes part in a sum, an array of any rank stays of
# that rank. np.matrix, masked arrays and other ndarray subclasses change that, and array
# types of other libraries (jax, torch, xarray, pandas) follow rules of their own, so a
# derivative computed as if they were numpy arrays could be silently wrong: they are refused,
# whether srcgrad differentiates with respect to them or not. Objects that are not numbers
# or arrays (None, strings, a random number generator, a callable) are options the
# function reads, and pass.

#: the number types numpy computes with as it does with its own
_NUMBERS = (bool, int, float, complex, np.generic)

#: the attributes that mark an object as an array of some library
_ARRAY_MARKS = (
    "__array__",
    "__array_interface__",
    "__array_function__",
    "__array_ufunc__",
    "__cuda_array_interface__",
    "__dlpack__",
)


#: the operators whose meaning an object may change; x * value for an array x and an object
#: of such a type computes what the object says, which no derivative rule knows
_ARITHMETIC = (
    *("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__"),
    *("__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__"),
)

#: options with operators of their own that never meet an array in arithmetic
_OPTIONS = (str, bytes, set, frozenset, range)


def check_arguments(values: Any, names: Any, fname: str) -> None:
    """Raise a ``TypeError`` naming the argument for any value (or leaf of a list, tuple
    or dict) of a type srcgrad does not compute with: an ndarray subclass with other
    semantics (np.matrix, a masked array), another library's array, a number type numpy
    holds as Python objects (``Fraction``, ``Decimal``)."""
    for name, value in zip(names, values):
        if type(value) is np.ndarray:  # (the common case)
            continue
        for path, leaf in paths(value, name):
            why = _unsupported(leaf)
            if why is not None:
                raise TypeError(
                    f"{fname}: argument {path!r} is {_type_name(leaf)}, {why}; srcgrad "
                    "computes with numpy arrays (cupy and dask arrays on those backends) and "
                    f"numbers, and would silently compute {_type_name(leaf)} as one. "
                    f"{_instead(leaf, path)}"
                )


def _unsupported(value: Any) -> str | None:
    """Why srcgrad cannot compute with ``value`` (None where it can)."""
    cls = type(value)
    if cls is np.ndarray or isinstance(value, _NUMBERS) or value is None:
        return None
    if isinstance(value, np.ndarray):
        if isinstance(value, np.memmap):  # an ndarray whose memory is a file: same semantics
            return None
        if isinstance(value, np.matrix):
            return "whose `*` and `**` are matrix products and whose results stay 2-D"
        if isinstance(value, np.ma.MaskedArray):
            return "whose masked elements take no part in sums, products and the rest"
        return "an ndarray subclass, whose operations may differ from numpy's"
    if is_cupy(value):
        try:
            import cupy
        except ImportError:
            return "from cupy, which cannot be imported here"
        return None if cls is cupy.ndarray else "not a cupy array srcgrad knows"
    if is_dask(value):
        import dask.array

        return None if isinstance(value, dask.array.Array) else "not a dask array"
    if isinstance(value, numbers.Number):
        return "a number type numpy holds as Python objects"
    if any(hasattr(cls, mark) for mark in _ARRAY_MARKS) or (
        isinstance(getattr(value, "shape", None), tuple) and hasattr(value, "dtype")
    ):
        return "an array type with semantics of its own"
    if isinstance(value, _OPTIONS) or hasattr(cls, "__fspath__"):
        return None
    operators = [name for name in _ARITHMETIC if hasattr(cls, name)]
    if operators:  # (x * value would run its code, which the derivative rules know nothing of)
        return f"an object with arithmetic of its own (it defines {', '.join(operators)})"
    return None  # an option the function reads: a generator, a callable, a module...


def _type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    name = cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"
    return f"a {name}"


def _instead(value: Any, path: str) -> str:
    """What to pass instead of ``value``."""
    if isinstance(value, np.ma.MaskedArray):
        return (
            f"Pass {path}.filled(...) or the data and the mask as two arrays, and apply the "
            "mask in the function (np.where(mask, x, 0))."
        )
    if isinstance(value, np.ndarray):
        return f"Pass np.asarray({path})."
    if isinstance(value, numbers.Number):
        return f"Pass float({path})."
    if any(hasattr(type(value), name) for name in _ARITHMETIC):
        return f"Pass a number or an array for {path}, and compute with it in the function."
    return f"Convert it first, e.g. np.asarray({path}) (or a cupy or dask array)."


def backend_of(args: list[Any], names: list[str]) -> Backend:
    """The backend of a call's arguments (the leaves of pytree arguments too); a clear
    error for numpy mixed with cupy, or cupy mixed with dask. Numpy arrays mixed with
    dask arrays are fine: dask treats them as constants."""
    flat = [pair for n, a in zip(names, args) for pair in paths(a, n)]
    names, args = [n for n, _ in flat], [a for _, a in flat]
    cupy_args = [n for n, a in zip(names, args) if is_cupy(a)]
    dask_args = [n for n, a in zip(names, args) if is_dask(a)]
    if dask_args:
        if cupy_args:
            raise TypeError(
                f"arguments {dask_args} are dask arrays but {cupy_args} are cupy arrays; "
                "pass dask arrays only (a dask array of cupy chunks is one dask array: "
                "dask.array.from_array(x))"
            )
        return Backend("dask", dask_numpy())
    if not cupy_args:
        return NUMPY
    numpy_args = [n for n, a in zip(names, args) if isinstance(a, np.ndarray)]
    if numpy_args:
        raise TypeError(
            f"arguments {cupy_args} are cupy arrays but {numpy_args} are numpy arrays; "
            "move them to one device first, e.g. cupy.asarray(x)"
        )
    import cupy

    return Backend("cupy", cupy)


def module_of(x: Any) -> Any:
    """The array module of ``x``, one of the arrays ``check_arguments`` lets through."""
    if isinstance(x, np.ndarray):
        return np
    if is_dask(x):
        return dask_numpy()
    if is_cupy(x):
        import cupy

        return cupy
    raise TypeError(f"srcgrad computes with numpy, cupy and dask arrays, not {type(x)!r}")
