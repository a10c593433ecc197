"""The dask backend's array module: dask.array with the few numpy functions generated
code calls that it lacks or that differ (:func:`dask_numpy`). Generated code for dask
arrays imports it as ``from srcgrad.backends import dask_array as np``
(:mod:`srcgrad.backends` makes it on first use)."""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np

#: the name generated code imports the module by (see ``srcgrad.backends.__getattr__``)
_NAME = "srcgrad.backends.dask_array"


# -- dask: dask.array, with the few numpy functions generated code calls that it lacks ------
#
# The one per-backend table: generated code and the runtime helpers call ``np.X`` for the
# module they were compiled for. dask.array has no ``size``, ``broadcast_shapes`` or
# ``ufunc.at``, its ``shape``/``ndim``, reductions and a few more accept dask arrays only
# (numpy's also take Python numbers), its ``nonzero`` of a numpy array is a dask array of
# unknown size and its ``linalg.cholesky`` gives the upper factor, so the dask backend's
# module is dask.array with these filled in (``_dask_fills``); everything else is
# dask.array's own.


def _dask_shape(a: Any) -> tuple:
    return a.shape if hasattr(a, "chunks") else np.shape(a)


def _dask_ndim(a: Any) -> int:
    return a.ndim if hasattr(a, "chunks") else np.ndim(a)


def _unknown_chunks(what: str) -> ValueError:
    return ValueError(
        f"srcgrad needs {what} of a dask array whose chunk sizes are unknown (x[mask] with "
        "a boolean mask, for example): call x.compute_chunk_sizes() on it first, or keep "
        "the shape with np.where(mask, x, 0)"
    )


def _dask_size(a: Any) -> Any:
    if not hasattr(a, "chunks"):
        return np.size(a)
    if any(math.isnan(n) for n in a.shape):
        raise _unknown_chunks("the size")
    return a.size


def _dask_broadcast_shapes(*shapes: tuple) -> tuple:
    if any(math.isnan(n) for s in shapes for n in s):
        raise _unknown_chunks("the shape")
    return np.broadcast_shapes(*shapes)


def _dask_array_split(a: Any, sections: Any, axis: int = 0) -> list:
    """``np.array_split`` (and ``np.split``): by slicing, at the positions ``sections``
    (a list of ints) or into that many near-equal parts."""
    n = a.shape[axis]
    if isinstance(sections, int):
        size, extra = divmod(n, sections)
        sizes = [size + 1] * extra + [size] * (sections - extra)
        sections = [sum(sizes[:k]) for k in range(1, sections)]
    edges = [0, *sections, n]
    lead = (slice(None),) * (axis % a.ndim)
    return [a[(*lead, slice(lo, hi))] for lo, hi in zip(edges[:-1], edges[1:])]


def _dask_split(a: Any, sections: Any, axis: int = 0) -> list:
    if isinstance(sections, int) and a.shape[axis] % sections:
        raise ValueError("array split does not result in an equal division")
    return _dask_array_split(a, sections, axis)


def _dask_copy(a: Any) -> Any:
    return a.copy() if hasattr(a, "chunks") else np.copy(a)


def _on_dask_or_numpy(name: str, dask_name: str | None = None, arrays: str = "dask") -> Any:
    """dask.array's ``name`` for dask arrays, numpy's for anything else (a list of shape
    entries, a Python number): dask.array's functions take arrays only. With ``arrays=
    "any"``, dask.array's for numpy arrays and scalars too (lazy, as elsewhere on dask)."""
    import dask.array

    lazy, eager = getattr(dask.array, dask_name or name), getattr(np, name)

    def function(a: Any, *args: Any, **kwargs: Any) -> Any:
        if hasattr(a, "chunks") or (arrays == "any" and hasattr(a, "dtype")):
            return lazy(a, *args, **kwargs)
        if _holds_dask(a):  # a list or tuple of dask arrays (numpy's would compute them)
            return lazy(dask.array.asarray(a), *args, **kwargs)
        return eager(a, *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    return function


def _holds_dask(a: Any) -> bool:
    if isinstance(a, (list, tuple)):
        return any(_holds_dask(v) for v in a)
    return hasattr(a, "chunks")


def _flat_when_no_axis(name: str) -> Any:
    """dask.array's ``cumsum``/``cumprod``, which need an axis: none means the flattened
    array, as in numpy."""
    import dask.array

    lazy = getattr(dask.array, name)

    def function(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        if axis is None:
            a, axis = dask.array.ravel(a), 0
        return lazy(a, axis=axis, dtype=dtype, out=out)

    function.__name__ = function.__qualname__ = name
    return function


def _flat_when_no_axis_arg(name: str) -> Any:
    """dask.array's ``take``/``repeat``, whose axis is 0 or required: none means the
    flattened array, as in numpy."""
    import dask.array

    lazy = getattr(dask.array, name)

    def function(a: Any, b: Any, axis: Any = None, **kwargs: Any) -> Any:
        if axis is None:
            a, axis = dask.array.ravel(a), 0
        return lazy(a, b, axis=axis, **kwargs)

    function.__name__ = function.__qualname__ = name
    return function


def _dask_reshape(a: Any, shape: Any, *args: Any, **kwargs: Any) -> Any:
    """dask.array's ``reshape``, which also takes an int and reshapes empty arrays (the
    adjoint of ``np.tile(x, 0)`` is one; dask's own fails on them)."""
    import dask.array

    shape = (shape,) if isinstance(shape, int) else shape
    a = dask.array.asarray(a)
    if 0 in a.shape:  # no elements to move: zeros of the new shape (-1 resolved by numpy)
        return dask.array.zeros(np.empty(a.shape, bool).reshape(shape).shape, dtype=a.dtype)
    return dask.array.reshape(a, shape, *args, **kwargs)


def _dask_full_like(a: Any, fill_value: Any, *args: Any, shape: Any = None, **kwargs: Any) -> Any:
    """dask.array's ``full_like``, chunked like ``a`` where its ``shape`` matches ``a``'s
    (dask's own gives a ``shape=`` array automatic chunks: one of 128 MiB, not ``a``'s)."""
    import dask.array

    if shape is not None and hasattr(a, "chunks") and kwargs.get("chunks") is None:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        lead = len(shape) - a.ndim  # broadcasting aligns the trailing axes
        kwargs["chunks"] = tuple(
            a.chunks[k - lead] if k >= lead and a.shape[k - lead] == n else "auto"
            for k, n in enumerate(shape)
        )
    return dask.array.full_like(a, fill_value, *args, shape=shape, **kwargs)


def _dask_cholesky(a: Any, upper: bool = False) -> Any:
    """``np.linalg.cholesky``: the lower factor unless ``upper`` (dask.array.linalg's
    ``cholesky`` follows scipy and gives the upper one by default)."""
    import dask.array

    return dask.array.linalg.cholesky(a, lower=not upper)


def _dask_identity(n: int, dtype: Any = None) -> Any:
    import dask.array

    return dask.array.eye(n, dtype=dtype if dtype is not None else float)


class _DaskAdd:
    """``np.add`` for dask: dask.array's ``add`` with numpy's ``add.at``."""

    def __init__(self, add: Any) -> None:
        self._add = add

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._add(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._add, name)

    @staticmethod
    def at(out: Any, index: Any, values: Any) -> None:
        """``out[index] += values`` with repeated positions adding up, as numpy's
        ``np.add.at``: lazily, by a bincount of the flat positions ``index`` picks, and
        written into ``out`` in place the way dask's own ``out[...] = y`` writes."""
        import dask.array as da

        size = _dask_size(out)
        grid: Any = 0  # the flat position of every element of out, chunked like out
        for k, (n, chunks) in enumerate(zip(out.shape, out.chunks)):
            axis = da.arange(n, chunks=(chunks,))[(slice(None),) + (None,) * (out.ndim - k - 1)]
            grid = grid + axis * math.prod(out.shape[k + 1 :])
        positions = da.asarray(grid)[index]
        if any(math.isnan(n) for n in positions.shape):
            raise ValueError(
                "the adjoint of x[mask] for a dask array x and a boolean mask: its positions "
                "are known only once the mask is computed; write np.where(mask, x, 0) instead"
            )
        if 0 in positions.shape:  # index picks nothing: nothing to add (dask cannot ravel it)
            return
        weights = da.broadcast_to(da.asarray(values), positions.shape).ravel()
        positions = positions.ravel().rechunk(weights.chunks)
        total = da.bincount(positions, weights=weights, minlength=size)
        out[...] = out + total.reshape(out.shape).astype(out.dtype).rechunk(out.chunks)


#: dask.array functions that take arrays only, where numpy's twin also takes a Python
#: number or a list: numpy's for those (``np.sum(y)`` of a float ``y`` in user code)
_ARRAYS_ONLY = (
    *("sum", "mean", "std", "var", "max", "min", "ptp", "argmax", "argmin"),
    *("nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmax", "nanmin"),
    *("any", "all", "round", "around", "squeeze", "transpose"),
)
#: numpy's for anything but a dask array: the product of a shape; positions of a numpy mask
#: (numpy's are of known size, as in the user's own code; dask.array's of unknown size)
_EAGER_UNLESS_DASK = ("prod", "nonzero", "flatnonzero", "argwhere")


def _dask_fills() -> dict[str, Any]:
    import dask.array

    return {
        "shape": _dask_shape,
        "ndim": _dask_ndim,
        "size": _dask_size,
        "broadcast_shapes": _dask_broadcast_shapes,
        "split": _dask_split,
        "array_split": _dask_array_split,
        "copy": _dask_copy,
        **{name: _on_dask_or_numpy(name, arrays="any") for name in _ARRAYS_ONLY},
        "amax": _on_dask_or_numpy("amax", "max", arrays="any"),
        "amin": _on_dask_or_numpy("amin", "min", arrays="any"),
        **{name: _on_dask_or_numpy(name) for name in _EAGER_UNLESS_DASK},
        "cumsum": _flat_when_no_axis("cumsum"),
        "cumprod": _flat_when_no_axis("cumprod"),
        "reshape": _dask_reshape,
        "take": _flat_when_no_axis_arg("take"),
        "repeat": _flat_when_no_axis_arg("repeat"),
        "identity": _dask_identity,
        "full_like": _dask_full_like,
        "add": _DaskAdd(dask.array.add),
        "linalg": _Filled(f"{_NAME}.linalg", dask.array.linalg, {"cholesky": _dask_cholesky}),
    }


class _Filled(types.ModuleType):
    """An array module with a few functions filled in; anything else is the module's own."""

    def __init__(self, name: str, base: types.ModuleType, fills: dict[str, Any]) -> None:
        super().__init__(name, base.__doc__)
        self.__dict__.update({k: v for k, v in vars(base).items() if not k.startswith("__")})
        self.__dict__.update(fills)
        self._base = base

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


_dask_numpy: types.ModuleType | None = None


def dask_numpy() -> types.ModuleType:
    """dask.array as generated code for dask arrays sees it (made once: importing dask is
    slow, and only calls with dask arrays need it)."""
    global _dask_numpy
    if _dask_numpy is None:
        import dask.array

        _dask_numpy = _Filled(_NAME, dask.array, _dask_fills())
    return _dask_numpy
