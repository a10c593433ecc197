"""Rules for numpy's shape, assembly and indexing functions, and for functions whose
output carries no derivative (indices, masks, constants).

Most functions here are linear in their array argument: forward mode applies
the function itself to the tangent (``linear``), reverse mode applies its
adjoint, written out where it is a numpy call (``np.flip(g, axis)``,
``np.moveaxis(g, destination, source)``, ``np.roll(g, -shift, axis)``) and a
runtime helper where it has to sum (``tile_adjoint``, ``repeat_adjoint``) or
scatter (``take_adjoint``: repeated indices add up, as ``np.add.at`` does).
``reshape``, ``transpose``, ``.T``, ``.ravel()``, ``.flatten()``,
``concatenate``, ``stack``, ``array`` and indexing live in ``indexing.py``.

Conventions:

* ``np.sort``: the derivative of each output element is the derivative of the
  input element numpy's *stable* argsort puts there, whatever ``kind`` the
  call names. Tied values therefore pass on the derivative of the earlier of
  them (in the order of the input) to the earlier output position; the sorted
  values do not depend on the choice, their derivative does only at ties.
* Indices, masks and counts (``np.argmax``, ``np.argsort``, ``np.nonzero``,
  ``np.shape``, ...) and arrays made from shapes (``np.zeros``, ``np.eye``)
  carry no derivative. ``np.full``/``np.full_like`` are differentiated in
  their fill value, ``np.linspace`` in ``start`` and ``stop``, and
  ``np.arange`` in ``start`` and ``step`` (the length of the result is
  piecewise constant, so ``stop`` has derivative 0).
* ``np.pad``: modes ``constant`` (also differentiated in a scalar
  ``constant_values``), ``edge``, ``reflect``, ``symmetric`` and ``wrap``.
"""

from __future__ import annotations

import numpy as np

from . import Context, NotStatic, Rule, linear, register


# -- ranks --------------------------------------------------------------------------------
def _same_rank(ctx: Context) -> int | None:
    return ctx.rank("x")


def _one(ctx: Context) -> int:
    return 1


def _count(value) -> int:
    return len(value) if isinstance(value, (tuple, list)) else 1


def _expand_dims_rank(ctx: Context) -> int | None:
    rank = ctx.rank("x")
    try:
        return None if rank is None else rank + _count(ctx.static("axis"))
    except NotStatic:
        return None


def _squeeze_rank(ctx: Context) -> int | None:
    rank = ctx.rank("x")
    try:
        axis = ctx.static("axis")
    except NotStatic:
        return None
    return None if rank is None or axis is None else rank - _count(axis)


def _broadcast_to_rank(ctx: Context) -> int | None:
    try:
        return _count(ctx.static("shape"))
    except NotStatic:
        return ctx.length("shape")


def _at_least(k: int):
    def rank(ctx: Context) -> int | None:
        r = ctx.rank("x")
        return None if r is None else max(r, k)

    return rank


def _tile_rank(ctx: Context) -> int | None:
    rank = ctx.rank("x")
    try:
        return None if rank is None else max(rank, _count(ctx.static("reps")))
    except NotStatic:
        return None


def _axis_none_flat(ctx: Context) -> int | None:
    """Rank of ``repeat``, ``sort``: 1 with ``axis=None`` (flattened), else that of x."""
    try:
        axis = ctx.static("axis")
    except NotStatic:
        return None
    return 1 if axis is None else ctx.rank("x")


def _take_rank(ctx: Context) -> int | None:
    rank, indices = ctx.rank("x"), ctx.rank("indices")
    try:
        axis = ctx.static("axis")
    except NotStatic:
        return None
    if indices is None:
        return None
    if axis is None:
        return indices
    return None if rank is None else rank - 1 + indices


def _arg_reduced_rank(ctx: Context) -> int | None:
    rank = ctx.rank("x")
    try:
        axis, keepdims = ctx.static("axis"), ctx.static("keepdims")
    except NotStatic:
        return None
    if keepdims:
        return rank
    if axis is None:
        return 0
    return None if rank is None else rank - 1


def _shape_rank(ctx: Context) -> int | None:
    try:
        return _count(ctx.static("shape"))
    except NotStatic:  # (n, m) of names, or one number n
        return ctx.length("shape")


# -- registering --------------------------------------------------------------------------
def _register(keys, **fields) -> Rule:
    keys = keys if isinstance(keys, list) else [keys]
    rule = Rule(**fields)
    for key in keys:
        register(key, rule)
    return rule


def _linear(keys, name, params, vjp, rank, defaults=None, **extra) -> Rule:
    """A function linear in its first parameter ``x``: ``linear`` forward, ``vjp`` back."""
    return _register(
        keys,
        name=name,
        params=tuple(params),
        defaults=defaults or {},
        jvp={params[0]: linear},
        vjp={params[0]: vjp},
        rank=rank,
        **extra,
    )


def _nondiff(keys, params, rank=None, defaults=None, **extra) -> Rule:
    keys = keys if isinstance(keys, list) else [keys]
    return _register(
        keys,
        name=_name(keys[0]),
        params=tuple(params),
        defaults=defaults or {},
        nondiff=True,
        rank=rank,
        **extra,
    )


def _name(key) -> str:
    if isinstance(key, tuple):
        return f".{key[1]}()" if key[0] == "method" else f".{key[1]}"
    return f"np.{key.__name__}"


_BACK_TO_X = "np.reshape(g, np.shape(x))"

# -- reshaping without moving data ------------------------------------------------------------
_linear(
    np.ravel, "np.ravel", ("x", "order"), _BACK_TO_X, _one, {"order": "C"}, fixed={"order": "C"}
)
_linear(
    [np.squeeze, ("method", "squeeze")],
    "np.squeeze",
    ("x", "axis"),
    _BACK_TO_X,
    _squeeze_rank,
    {"axis": None},
)
_linear(np.expand_dims, "np.expand_dims", ("x", "axis"), "np.squeeze(g, axis)", _expand_dims_rank)
for _k in (1, 2, 3):
    _linear(getattr(np, f"atleast_{_k}d"), f"np.atleast_{_k}d", ("x",), _BACK_TO_X, _at_least(_k))
_linear(
    np.broadcast_to,
    "np.broadcast_to",
    ("x", "shape", "subok"),
    "unbroadcast(g, x)",
    _broadcast_to_rank,
    {"subok": False},
)

# -- moving axes and elements ------------------------------------------------------------------
_linear(
    [np.swapaxes, ("method", "swapaxes")],
    "np.swapaxes",
    ("x", "axis1", "axis2"),
    "np.swapaxes(g, axis1, axis2)",
    _same_rank,
)
_linear(
    np.moveaxis,
    "np.moveaxis",
    ("x", "source", "destination"),
    "np.moveaxis(g, destination, source)",
    _same_rank,
)
_linear(np.flip, "np.flip", ("x", "axis"), "np.flip(g, axis)", _same_rank, {"axis": None})
_linear(np.fliplr, "np.fliplr", ("x",), "np.fliplr(g)", _same_rank)
_linear(np.flipud, "np.flipud", ("x",), "np.flipud(g)", _same_rank)
_linear(
    np.rot90,
    "np.rot90",
    ("x", "k", "axes"),
    "np.rot90(g, -k, axes)",
    _same_rank,
    {"k": 1, "axes": (0, 1)},
)


def _roll_vjp(ctx: Context) -> str:
    try:
        shift = ctx.static("shift")
    except NotStatic:
        return "roll_adjoint(g, shift, axis)"
    back = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return f"np.roll(g, {back!r}, axis)"


_linear(np.roll, "np.roll", ("x", "shift", "axis"), _roll_vjp, _same_rank, {"axis": None})

# -- copies: tile, repeat, pad ---------------------------------------------------------------
_linear(np.tile, "np.tile", ("x", "reps"), "tile_adjoint(g, x, reps)", _tile_rank)
_linear(
    [np.repeat, ("method", "repeat")],
    "np.repeat",
    ("x", "repeats", "axis"),
    "repeat_adjoint(g, x, repeats, axis)",
    _axis_none_flat,
    {"axis": None},
)

_PAD_GATHERS = ("edge", "reflect", "symmetric", "wrap")


def _pad_mode(ctx: Context) -> str | None:
    """The mode of a ``np.pad`` call if it is a literal."""
    try:
        return ctx.static("mode")
    except NotStatic:
        return None


def _pad_jvp(ctx: Context) -> str:
    mode = _pad_mode(ctx)
    if mode == "constant":  # the constant's own derivative is its parameter's
        return "np.pad(g, pad_width)"
    if mode in _PAD_GATHERS:
        return "np.pad(g, pad_width, mode)"
    return "pad_tangent(g, pad_width, mode)"


def _pad_vjp(ctx: Context) -> str:
    if _pad_mode(ctx) == "constant":
        return "unpad(g, pad_width)"
    return "pad_adjoint(g, x, pad_width, mode)"


register(
    np.pad,
    Rule(
        name="np.pad",
        params=("x", "pad_width", "mode", "constant_values"),
        defaults={"mode": "constant", "constant_values": 0},
        jvp={
            "x": _pad_jvp,
            "constant_values": "np.pad(np.zeros_like(x), pad_width, constant_values=g)",
        },
        vjp={"x": _pad_vjp, "constant_values": "np.sum(g) - np.sum(unpad(g, pad_width))"},
        rank=_same_rank,
    ),
)

# -- assembling arrays from lists -----------------------------------------------------------
for _f in ("hstack", "vstack", "dstack", "column_stack"):
    _linear(getattr(np, _f), f"np.{_f}", ("arrays",), f"{_f}_adjoint(g, arrays)", lambda c: None)
if hasattr(np, "row_stack"):  # vstack's old name (deprecated in numpy 2.0)
    _linear(np.row_stack, "np.row_stack", ("arrays",), "vstack_adjoint(g, arrays)", lambda c: None)
register(
    np.asarray,
    Rule(
        name="np.asarray",
        params=("x", "dtype"),
        defaults={"dtype": None},
        jvp={"x": linear},
        vjp={"x": "unstack_like(g, x)"},
        rank=lambda c: c.rank("x"),
    ),
)

# -- splitting into lists -------------------------------------------------------------------
for _f in (np.split, np.array_split):
    _linear(
        _f,
        f"np.{_f.__name__}",
        ("x", "indices_or_sections", "axis"),
        "np.concatenate(g, axis)",
        lambda c: None,
        {"axis": 0},
        tuple_result=True,
    )

for _f, _axis in ((np.hsplit, "1 if np.ndim(x) > 1 else 0"), (np.vsplit, "0"), (np.dsplit, "2")):
    _linear(
        _f,
        f"np.{_f.__name__}",
        ("x", "indices_or_sections"),
        f"np.concatenate(g, {_axis})",
        lambda c: None,
        tuple_result=True,
    )

# -- differences and appending ---------------------------------------------------------------
_linear(
    np.diff,
    "np.diff",
    ("x", "n", "axis"),
    "diff_adjoint(g, n, axis)",
    _same_rank,
    {"n": 1, "axis": -1},
)
_linear(np.ediff1d, "np.ediff1d", ("x",), "np.reshape(diff_adjoint(g, 1, -1), np.shape(x))", _one)
_register(
    np.append,
    name="np.append",
    params=("arr", "values", "axis"),
    defaults={"axis": None},
    jvp={
        "arr": "np.append(g, np.zeros_like(values, dtype=np.result_type(g)), axis)",
        "values": "np.append(np.zeros_like(arr, dtype=np.result_type(g)), g, axis)",
    },
    vjp={
        "arr": "append_adjoint(g, arr, values, axis, 0)",
        "values": "append_adjoint(g, arr, values, axis, 1)",
    },
    rank=lambda c: 1 if c.is_static("axis") and c.static("axis") is None else c.rank("arr"),
)

# -- gathering by index ---------------------------------------------------------------------
_linear(
    [np.take, ("method", "take")],
    "np.take",
    ("x", "indices", "axis", "out", "mode"),
    "take_adjoint(g, x, indices, axis, mode)",
    _take_rank,
    {"axis": None, "out": None, "mode": "raise"},
    fixed={"out": None},
)
_linear(
    np.take_along_axis,
    "np.take_along_axis",
    ("x", "indices", "axis"),
    "take_along_axis_adjoint(g, x, indices, axis)",
    lambda c: c.rank("indices"),
    {"axis": -1},
)
register(
    np.sort,
    Rule(
        name="np.sort",
        params=("x", "axis", "kind", "order", "stable"),
        defaults={"axis": -1, "kind": None, "order": None, "stable": None},
        fixed={"order": None},
        jvp={"x": "sort_jvp(g, x, axis)"},
        vjp={"x": "sort_vjp(g, x, axis)"},
        rank=_axis_none_flat,
    ),
)

# -- arrays of constants, with a differentiable fill value ------------------------------------
register(
    np.full_like,
    Rule(
        name="np.full_like",
        params=("x", "fill_value", "dtype", "order", "subok", "shape"),
        defaults={"dtype": None, "order": "K", "subok": True, "shape": None},
        jvp={"fill_value": linear},
        vjp={"fill_value": "unbroadcast(g, fill_value)"},
        zero=frozenset({"x"}),  # only its shape and dtype are read
        rank=lambda c: c.rank("x") if c.is_static("shape") and c.static("shape") is None else None,
    ),
)
register(
    np.full,
    Rule(
        name="np.full",
        params=("shape", "fill_value", "dtype", "order"),
        defaults={"dtype": None, "order": "C"},
        jvp={"fill_value": linear},
        vjp={"fill_value": "unbroadcast(g, fill_value)"},
        rank=_shape_rank,
    ),
)
register(
    np.linspace,
    Rule(
        name="np.linspace",
        params=("start", "stop", "num", "endpoint", "retstep", "dtype", "axis"),
        defaults={"num": 50, "endpoint": True, "retstep": False, "dtype": None, "axis": 0},
        fixed={"retstep": False},
        jvp={
            "start": "linspace_jvp(g, ans, num, endpoint, axis, 0)",
            "stop": "linspace_jvp(g, ans, num, endpoint, axis, 1)",
        },
        vjp={
            "start": "unbroadcast(linspace_vjp(g, num, endpoint, axis, 0), start)",
            "stop": "unbroadcast(linspace_vjp(g, num, endpoint, axis, 1), stop)",
        },
    ),
)


def _arange_start(mode: str):
    def template(ctx: Context) -> str:
        if "stop" not in ctx.supplied:  # np.arange(stop): the one argument is the stop
            return "np.zeros_like(ans)" if mode == "jvp" else "0 * np.sum(g)"
        return "np.full_like(ans, g)" if mode == "jvp" else "np.sum(g)"

    return template


register(
    np.arange,
    Rule(
        name="np.arange",
        params=("start", "stop", "step", "dtype"),
        defaults={"stop": None, "step": None, "dtype": None},
        jvp={"start": _arange_start("jvp"), "step": "g * ((ans - start) / step)"},
        vjp={"start": _arange_start("vjp"), "step": "np.sum(g * ((ans - start) / step))"},
        zero=frozenset({"stop"}),  # the length is piecewise constant in it
        rank=_one,
    ),
)

# -- no derivative: indices, masks, constants ---------------------------------------------------
_ARG_REDUCE = dict(
    params=("x", "axis", "out", "keepdims"),
    defaults={"axis": None, "out": None, "keepdims": False},
    rank=_arg_reduced_rank,
)
_nondiff([np.argmax, ("method", "argmax")], **_ARG_REDUCE)
_nondiff([np.argmin, ("method", "argmin")], **_ARG_REDUCE)
_nondiff(
    [np.argsort, ("method", "argsort")],
    ("x", "axis", "kind", "order", "stable"),
    _axis_none_flat,
    {"axis": -1, "kind": None, "order": None, "stable": None},
)
_nondiff(np.argwhere, ("x",), lambda c: 2)
_nondiff(np.flatnonzero, ("x",), _one)
_nondiff([np.nonzero, ("method", "nonzero")], ("x",), tuple_result=True)
_nondiff(
    [np.zeros, np.ones, np.empty],
    ("shape", "dtype", "order"),
    _shape_rank,
    {"dtype": None, "order": "C"},
)
_nondiff(
    np.eye,
    ("N", "M", "k", "dtype", "order"),
    lambda c: 2,
    {"M": None, "k": 0, "dtype": float, "order": "C"},
)
_nondiff(np.identity, ("n", "dtype"), lambda c: 2, {"dtype": None})
