"""Which array module a call runs on: numpy, or cupy for cupy arrays.

Generated code refers to the array module by name only, so running it on
another backend is a matter of binding that name (and any numpy function
the user imported by name) to the other module: module rebinding.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from .pytree import paths


@dataclass(frozen=True)
class Backend:
    name: str  # "numpy" or "cupy"
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
        return isinstance(value, self.module.ndarray)


NUMPY = Backend("numpy", np)


def _is_cupy(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "cupy"


def backend_of(args: list[Any], names: list[str]) -> Backend:
    """The backend of a call's arguments (the leaves of pytree arguments too); a clear
    error for numpy mixed with cupy."""
    flat = [pair for n, a in zip(names, args) for pair in paths(a, n)]
    names, args = [n for n, _ in flat], [a for _, a in flat]
    cupy_args = [n for n, a in zip(names, args) if _is_cupy(a)]
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
