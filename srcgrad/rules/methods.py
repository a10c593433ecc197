"""Rules for numpy functions that are also array methods or attributes: reductions
(``sum``, ``mean``, ``max``, ``min``), shapes (``transpose``, ``.T``, ``reshape``,
``ravel``), copies and casts; and the functions whose output carries no derivative
(``np.shape``, ``len``, ``np.zeros_like``...). How a row is written: builders.py;
more reductions in reductions.py, more shapes in shapes.py.
"""

from __future__ import annotations

import ast
import builtins

import numpy as np

from . import Context, NotStatic, Rule, linear, register
from .builders import _same_rank, nondiff


# -- reductions -----------------------------------------------------------------------
def _reduced_rank(ctx: Context) -> int | None:
    rank = ctx.rank("x")
    try:
        axis, keepdims = ctx.static("axis"), ctx.static("keepdims")
    except NotStatic:
        return None
    if axis is None:
        return rank if keepdims else 0
    if rank is None or keepdims:
        return rank
    return rank - (len(axis) if isinstance(axis, tuple) else 1)


def _spread(ctx: Context, g: str) -> str:
    """``g`` spread back over the reduced axes of ``x``."""
    if not ctx.is_static("axis", "keepdims"):
        return f"unreduce({g}, x, axis, keepdims)"
    if ctx.static("keepdims"):
        return f"np.broadcast_to({g}, np.shape(x))"
    if ctx.static("axis") is None:
        return f"np.full_like(x, {g})"
    return f"np.broadcast_to(np.expand_dims({g}, axis), np.shape(x))"


def _mean_vjp(ctx: Context) -> str:
    # `or 1`: the mean of no elements is nan, and the adjoint of an empty x is empty, what
    # ever it is filled with (`g / 0` would raise ZeroDivisionError for a Python float)
    axis = ctx.args["axis"]
    if isinstance(axis, ast.Constant) and axis.value is None:
        count = "(np.size(x) or 1)"
    elif isinstance(axis, ast.Constant) and isinstance(axis.value, int):
        count = "(np.shape(x)[axis] or 1)"
    else:
        count = "(np.size(x) // (np.size(ans) or 1) or 1)"
    return _spread(ctx, f"g / {count}")


_REDUCTION = dict(
    params=("x", "axis", "dtype", "out", "keepdims"),
    defaults={"axis": None, "dtype": None, "out": None, "keepdims": False},
    fixed={"out": None},
    rank=_reduced_rank,
)
for _key in (np.sum, ("method", "sum")):
    register(
        _key,
        Rule(name="np.sum", jvp={"x": linear}, vjp={"x": lambda c: _spread(c, "g")}, **_REDUCTION),
    )
for _key in (np.mean, ("method", "mean")):
    register(_key, Rule(name="np.mean", jvp={"x": linear}, vjp={"x": _mean_vjp}, **_REDUCTION))

# -- max and min: ties share the derivative evenly ----------------------------------
_EXTREMUM = dict(
    params=("x", "axis", "out", "keepdims"),
    defaults={"axis": None, "out": None, "keepdims": False},
    fixed={"out": None},
    jvp={"x": "extremum_jvp(g, x, ans, axis, keepdims)"},
    vjp={"x": "extremum_vjp(g, x, ans, axis, keepdims)"},
    rank=_reduced_rank,
)
for _key in (np.max, np.amax, ("method", "max")):
    register(_key, Rule(name="np.max", **_EXTREMUM))
for _key in (np.min, np.amin, ("method", "min")):
    register(_key, Rule(name="np.min", **_EXTREMUM))


# -- shapes ---------------------------------------------------------------------------
def _transpose_vjp(ctx: Context) -> str:
    try:
        axes = ctx.static("axes")
    except NotStatic:
        return "untranspose(g, axes)"
    if axes is None:
        return "np.transpose(g)"
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):  # x.transpose((1, 0, 2))
        axes = axes[0]
    inverse = [0] * len(axes)
    for i, axis in enumerate(axes):
        inverse[axis % len(axes)] = i
    return f"np.transpose(g, {tuple(inverse)})"


def _reshape_rank(ctx: Context) -> int | None:
    try:
        shape = ctx.static("shape")
    except NotStatic:
        return None
    if isinstance(shape, int):
        return 1
    if len(shape) == 1 and isinstance(shape[0], tuple):
        shape = shape[0]
    return len(shape)


_TRANSPOSE = dict(jvp={"x": linear}, vjp={"x": _transpose_vjp}, rank=_same_rank)
register(
    np.transpose,
    Rule(name="np.transpose", params=("x", "axes"), defaults={"axes": None}, **_TRANSPOSE),
)
register(
    ("method", "transpose"),
    Rule(
        name=".transpose()",
        params=("x", "axes"),
        defaults={"axes": None},
        varargs=True,
        **_TRANSPOSE,
    ),
)


def _transposed_g(ctx: Context) -> str:
    """``g.T``, but ``g`` where ``x`` is 0-d (its adjoint may be a Python number, with no
    ``.T``), and ``np.transpose(g)`` where its rank is unknown."""
    rank = ctx.rank("x")
    return "g" if rank == 0 else "g.T" if rank is not None else "np.transpose(g)"


register(
    ("attr", "T"),
    Rule(name=".T", params=("x",), jvp={"x": linear}, vjp={"x": _transposed_g}, rank=_same_rank),
)

_RESHAPE = dict(jvp={"x": linear}, vjp={"x": "np.reshape(g, np.shape(x))"}, rank=_reshape_rank)
register(
    np.reshape,
    Rule(
        name="np.reshape",
        params=("x", "shape", "order"),
        defaults={"order": "C"},
        fixed={"order": "C"},
        **_RESHAPE,
    ),
)
register(
    ("method", "reshape"), Rule(name=".reshape()", params=("x", "shape"), varargs=True, **_RESHAPE)
)


# -- more array methods -----------------------------------------------------------------
register(
    ("method", "copy"),
    Rule(
        name=".copy()",
        params=("x",),
        jvp={"x": linear},
        vjp={"x": "g"},
        elementwise=True,
        rank=_same_rank,
    ),
)
register(
    np.copy,
    Rule(
        name="np.copy",
        params=("a", "order", "subok"),
        defaults={"order": "K", "subok": False},
        jvp={"a": "g"},
        vjp={"a": "g"},
        elementwise=True,
        rank=lambda ctx: ctx.rank("a"),
        zero=frozenset({"order", "subok"}),
    ),
)
# casts: analyze reads the dtype (to a float dtype the identity, to an integer or bool one
# derivative zero, to a complex one or one it cannot see, no derivative)
register(
    ("method", "astype"),
    Rule(
        name=".astype()",
        params=("x", "dtype", "order", "casting", "subok", "copy"),
        defaults={"order": "K", "casting": "unsafe", "subok": True, "copy": True},
        jvp={"x": linear},
        vjp={"x": "g"},
        elementwise=True,
        rank=_same_rank,
    ),
)
for _type in (np.float16, np.float32, np.float64, np.longdouble):
    register(
        _type,
        Rule(
            name=f"np.{_type.__name__}",
            params=("x",),
            jvp={"x": linear},
            vjp={"x": "g"},
            elementwise=True,
            rank=_same_rank,
        ),
    )
_INTEGER_TYPES = [np.bool_, np.intp, np.uintp]
_INTEGER_TYPES += [
    getattr(np, f"{sign}int{bits}") for sign in ("", "u") for bits in (8, 16, 32, 64)
]
for _type in _INTEGER_TYPES:  # piecewise constant
    nondiff(_type, elementwise=True, rank=_same_rank)
for _method in ("ravel", "flatten"):
    register(
        ("method", _method),
        Rule(
            name=f".{_method}()",
            params=("x",),
            jvp={"x": linear},
            vjp={"x": "np.reshape(g, np.shape(x))"},
            rank=lambda c: 1,
        ),
    )

# -- no derivative -------------------------------------------------------------------------
# a shape is a tuple of ints: a sequence (rank 1), so `x.shape[0]` is a number (rank 0)
nondiff([np.shape], rank=lambda ctx: 1)
nondiff([np.ndim, np.size, builtins.len], rank=lambda ctx: 0)


def _like_rank(ctx: Context) -> int | None:
    """``np.zeros_like(x)`` has ``x``'s rank; with ``shape=``, that shape's length."""
    shape = ctx.args.get("shape")
    if isinstance(shape, ast.Constant) and shape.value is None:
        return ctx.rank("x")
    return ctx.length("shape")


nondiff(
    [np.zeros_like, np.ones_like, np.empty_like],
    params=("x", "dtype", "order", "subok", "shape"),
    defaults={"dtype": None, "order": "K", "subok": True, "shape": None},
    rank=_like_rank,
)
nondiff([np.sign], params=("x",))
nondiff(("attr", "shape"), rank=lambda ctx: 1)
nondiff([("attr", "ndim"), ("attr", "size")], rank=lambda ctx: 0)
nondiff(("attr", "dtype"))
nondiff([np.result_type, np.promote_types], params=("arrays_and_dtypes",), varargs=True)
