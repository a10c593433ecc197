"""Shaping what a derivative returns: gradients like their inputs (dtype, array or
float, pytree), and results that share no memory with the caller's arrays or with
each other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import pytree
from .backends import dask_numpy, is_cupy, is_dask
from .backends import module_of as _module_of

_NDARRAY = np.ndarray  # (one lookup fewer on the quick path)


_COMPLEX_GRADIENT = (
    "the derivative of a real argument came out complex: a complex value srcgrad's "
    "analysis did not see met the differentiated arguments; make the complex values "
    "inside the function (z = x + 1j * y), where srcgrad sees them"
)


def _like(g: Any, x: Any) -> Any:
    """The gradient ``g`` with the type, dtype and shape of the argument ``x``."""
    if np.iscomplexobj(g) and not np.iscomplexobj(x):  # (a complex value analysis missed)
        raise TypeError(_COMPLEX_GRADIENT)
    if isinstance(x, complex):
        return complex(g)
    # (a dask gradient of a number stays lazy: a 0-d dask array)
    if isinstance(x, float) and not isinstance(x, np.generic):
        if isinstance(g, (float, np.generic, np.ndarray)) or not is_dask(g):
            return float(g)
        return g.astype(float)
    if isinstance(x, np.generic):
        if isinstance(g, (float, np.generic, np.ndarray)) or not is_dask(g):
            return x.dtype.type(g)
        return g.astype(x.dtype)
    # a dask gradient stays lazy, even for a numpy argument of a call with dask arrays
    xp = _module_of(g if not isinstance(g, np.ndarray) and is_dask(g) else x)
    out = xp.asarray(g, dtype=x.dtype)
    if out.shape != x.shape:
        raise AssertionError(
            f"srcgrad bug: gradient of shape {out.shape} for an argument of shape {x.shape}"
        )
    if xp is np and (not out.flags.writeable or 0 in out.strides and out.size > 1):
        out = out.copy()
    return out


def _like_array(g: Any, x: np.ndarray) -> Any:
    """``_like`` for a numpy array argument, quick where ``g`` already is a writable numpy
    array of its dtype and shape with no repeated elements (as ``_like`` leaves it)."""
    if (
        type(g) is _NDARRAY
        and g.dtype is x.dtype
        and g.shape == x.shape
        and g.flags.writeable
        and (0 not in g.strides or g.size <= 1)
    ):
        return g
    return _like(g, x)


def _like_float(g: Any, x: float) -> Any:
    """``_like`` for a Python float argument (of type float exactly)."""
    if isinstance(g, (float, np.floating)) or (isinstance(g, np.ndarray) and g.dtype.kind != "c"):
        return float(g)
    return _like(g, x)


#: the quick equivalents of ``_like_tree`` for an argument of exactly these types
_LIKES: dict[type, Callable[[Any, Any], Any]] = {np.ndarray: _like_array, float: _like_float}


def _like_tree(g: Any, x: Any) -> Any:
    """``_like`` for every leaf of a pytree argument ``x``."""
    if not pytree.is_node(x):
        return _like(g, x)
    return pytree.map_leaves(lambda leaf, gleaf: _like(gleaf, leaf), x, g, name="the gradient")


def _unflatten(tree: Any, leaves: list[Any]) -> Any:
    """``tree`` with its leaves replaced by ``leaves`` in order (None: a zero tangent)."""
    supply = iter(leaves)

    def take(leaf: Any) -> Any:
        value = next(supply)
        return _zero_tangent(leaf) if value is None else value

    return pytree.map_leaves(take, tree)


def _zero_tangent(x: Any) -> Any:
    if pytree.is_node(x):
        return pytree.map_leaves(_zero_tangent, x)
    if isinstance(x, np.ndarray):
        return np.zeros_like(x)
    return dask_numpy().zeros_like(x) if is_dask(x) else type(x)(0.0)


def _tangent_like(t: Any, x: Any, name: str) -> Any:
    """A jvp tangent for argument ``x``: an array where ``x`` is one, shaped like it (for a
    pytree argument, a pytree of the same structure)."""
    if pytree.is_node(x):
        return pytree.map_leaves(
            lambda leaf, tleaf: _tangent_like(tleaf, leaf, name),
            x,
            t,
            name=f"the tangent for {name!r}",
        )
    if np.shape(t) != np.shape(x):
        raise ValueError(
            f"jvp: the tangent for {name!r} has shape {np.shape(t)} but the argument has shape "
            f"{np.shape(x)}; pass one tangent shaped like each wrt argument"
        )
    if isinstance(x, np.generic):
        return x.dtype.type(t)
    if hasattr(x, "dtype") and hasattr(x, "shape") and not hasattr(t, "shape"):
        return _module_of(x).asarray(t, dtype=x.dtype)
    return t


def _output_dtype(t: Any, value: Any) -> Any:
    """The tangent ``t`` of ``value`` in ``value``'s float dtype. Generated code keeps the
    dtype of the tangents it combines, and numpy's promotion may give the value a wider
    one (a float32 argument added to a float64 constant). A tangent is a tuple where the
    value is (generated code makes a list for an inactive tuple's zero tangent)."""
    if isinstance(value, (tuple, list)) and isinstance(t, (tuple, list)):
        kind = type(value) if type(value) in (tuple, list) else type(t)
        return kind(_output_dtype(ti, vi) for ti, vi in zip(t, value))
    dtype = getattr(value, "dtype", None)
    if dtype is None or getattr(t, "dtype", dtype) == dtype or dtype.kind not in "fc":
        return t
    if dtype.kind == "f" and np.iscomplexobj(t):  # (never dropped silently: a bug if so)
        raise TypeError(_COMPLEX_GRADIENT)
    if isinstance(value, np.generic):
        return dtype.type(t)
    return t.astype(dtype) if hasattr(t, "astype") else _module_of(value).asarray(t, dtype=dtype)


def _fresh(result: Any, inputs: Sequence[Any]) -> Any:
    """``result`` with every array copied that is, or is a view of, one of the caller's
    ``inputs`` or an array an earlier part of ``result`` holds: the caller gets arrays
    of its own, which share memory with nothing it passed and with each other."""
    if type(result) is tuple:  # (value_and_grad, a tuple wrt: all new arrays, or numbers)
        arrays = 0
        for r in result:
            if not _new(r, inputs):
                break
            arrays += type(r) is _NDARRAY
        else:
            if arrays < 2 or len({id(r) for r in result if type(r) is _NDARRAY}) == arrays:
                return result
    elif _new(result, inputs):  # (the common case)
        return result
    owners = []  # the arrays whose memory the caller's inputs show
    for v in inputs:
        if type(v) is _NDARRAY:
            owners.append(v if v.base is None else _owner(v))
        elif pytree.is_node(v):
            owners += [_owner(x) for x in pytree.leaves(v) if hasattr(x, "base")]
        elif hasattr(v, "base") and not isinstance(v, np.generic):
            owners.append(_owner(v))
    if type(result) is tuple:
        return tuple([_fresh_part(r, owners) for r in result])
    return _fresh_part(result, owners)


def _fresh_part(r: Any, owners: list[Any]) -> Any:
    """``r`` (a part of a result) with every array copied whose memory one of ``owners``
    owns; the owner of each array it gives out joins them."""
    if type(r) is _NDARRAY:
        owner = r if r.base is None else _owner(r)
    elif pytree.is_node(r):
        return pytree.rebuild(r, [_fresh_part(child, owners) for _, child in pytree.children(r)])
    elif not hasattr(r, "base") or isinstance(r, np.generic):
        return r  # a number, or an array that cannot be written (dask)
    else:
        owner = _owner(r)
    for o in owners:
        if o is owner:
            r = owner = r.copy()
            break
    owners.append(owner)
    return r


def _new(r: Any, inputs: Sequence[Any]) -> bool:
    """Whether ``r`` is a number, or a numpy array that owns its memory and is none of the
    ``inputs`` nor a leaf of one (quick to tell: what most generated code returns)."""
    t = type(r)
    if t is float or t is int or t is bool:
        return True
    if t is not _NDARRAY:
        return isinstance(r, np.generic)
    if r.base is not None:
        return False
    for x in inputs:
        if r is x:
            return False
        if type(x) is not _NDARRAY and pytree.is_node(x):  # (y_bar = xs[0])
            if any(r is leaf for leaf in pytree.leaves(x)):
                return False
    return True


def _owner(x: Any) -> Any:
    """The array that owns the memory ``x`` (an array, perhaps a view) shows."""
    while getattr(x, "base", None) is not None and hasattr(x.base, "base"):
        x = x.base
    return x


def _copied(values: Sequence[Any]) -> list[Any]:
    """The call's values with every array copied (and every list, tuple and dict holding
    one rebuilt), for running the user's function where it must not touch the caller's."""
    return [pytree.map_leaves(_copy_array, v) for v in values]


def _copy_array(x: Any) -> Any:
    return x.copy() if isinstance(x, np.ndarray) or is_cupy(x) else x
