"""Rules for numpy functions, Python operators, array methods and indexing.

Read a row as: the primitive, then the derivative template of each
differentiable argument. ``g`` is the incoming tangent (forward) or adjoint
(reverse), ``ans`` the primal result. Conventions at non-smooth points
follow JAX: ``abs`` has derivative ``sign(x)`` (0 at 0); ``maximum`` and
``minimum`` split the derivative evenly between tied arguments; ``x ** y``
has derivative 0 with respect to ``y`` where ``x == 0``, and with respect to
``x`` where ``y == 0`` (see elementwise.py for infinite derivatives in forward
mode and for formulas kept exact in their tails).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import math
from typing import Any

import numpy as np

from . import SEQUENCE_RULES, Context, NotStatic, Rule, linear, primal_with, register


# -- shapes of rule --------------------------------------------------------------
def _max_rank(ctx: Context) -> int | None:
    ranks = [ctx.rank(p) for p in ctx.rule.params]
    return None if None in ranks else max(ranks, default=0)


def elementwise(keys, params, templates, jvp=None, **extra) -> Rule:
    """An elementwise function: one derivative template serves both modes (``jvp``:
    forward templates that differ, where a zero tangent must stay exactly 0 at a point
    where the derivative is infinite, see ``tangent_div``)."""
    keys = keys if isinstance(keys, list) else [keys]
    name = _name(keys[0])
    rule = Rule(
        name=name,
        params=tuple(params),
        jvp={**templates, **(jvp or {})},
        vjp=dict(templates),
        elementwise=True,
        rank=_max_rank,
        **extra,
    )
    for key in keys:
        register(key, rule)
    return rule


def unary(keys, template: str, jvp: str | None = None) -> Rule:
    return elementwise(keys, ("x",), {"x": template}, jvp={"x": jvp} if jvp else None)


def binary(keys, dx, dy, jvp: dict | None = None) -> Rule:
    return elementwise(keys, ("x", "y"), {"x": dx, "y": dy}, jvp=jvp)


def pow_dx(power: str, forward: bool):
    """The template of ``d (x ** y) / dx`` (``power``: how ``x ** e`` is spelled): the
    plain formula for a literal exponent of at least 1 (finite everywhere), 0 for the
    exponent 0, numpy's power for another literal (inf, not ZeroDivisionError, at
    ``0 ** negative``), else ``pow_dx``, which is also 0 where ``y == 0`` (even at
    ``x == 0``); forward mode keeps a zero tangent 0 where the derivative is infinite."""
    numpy_power = power if power.startswith("np.") else "np.power({x}, {e})"

    def template(ctx: Context) -> str:
        try:
            y = ctx.static("y")
        except NotStatic:
            y = None
        if isinstance(y, (int, float)) and not isinstance(y, bool):
            if y == 0:
                return "0 * g"
            if y >= 1:
                return f"g * y * {power.format(x='x', e='y - 1')}"
            derivative = f"y * {numpy_power.format(x='x', e='y - 1')}"
        else:
            base = "x" if power.startswith("{x}") else power.format(x="x", e="1")
            derivative = f"pow_dx({base}, y)"
        return f"tangent_mul(g, {derivative})" if forward else f"g * {derivative}"

    return template


def nondiff(keys, params=("x",), **extra) -> Rule:
    """A function whose output carries no derivative (shapes, comparisons, masks)."""
    keys = keys if isinstance(keys, list) else [keys]
    rule = Rule(name=_name(keys[0]), params=tuple(params), nondiff=True, **extra)
    for key in keys:
        register(key, rule)
    return rule


def operation_name(key: Any) -> str:
    """How a message names the operation with rule key ``key``, in the user's terms:
    ``np.exp``, ``the @ operator``, ``.sum()`` (a method), ``.T`` (an attribute)."""
    return _name(key)


def _name(key) -> str:
    if isinstance(key, type) and issubclass(key, ast.AST):
        return f"the {_OPERATOR_TEXT.get(key, key.__name__)} operator"
    if isinstance(key, tuple):
        kind, attr = key
        return f".{attr}()" if kind == "method" else f".{attr}"
    if key == "getitem":
        return "indexing"
    if key == "copy":
        return "assignment"
    module = getattr(key, "__module__", None) or "numpy"
    prefix = "np" if module.startswith("numpy") or isinstance(key, np.ufunc) else module
    return f"{prefix}.{getattr(key, '__name__', key)}" if prefix != "builtins" else key.__name__


_OPERATOR_TEXT = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.USub: "unary -",
    ast.UAdd: "unary +",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.Invert: "~",
    ast.Not: "not",
}

# -- arithmetic ----------------------------------------------------------------------
binary([ast.Add, np.add], "g", "g")
binary([ast.Sub, np.subtract], "g", "-g")
binary([ast.Mult, np.multiply], "g * y", "g * x")
binary([ast.Div, np.divide], "g / y", "-g * ans / y")
binary(
    [ast.Pow, np.power, builtins.pow],
    pow_dx("{x} ** ({e})", forward=False),
    "g * ans * pow_log(x)",
    jvp={"x": pow_dx("{x} ** ({e})", forward=True)},
)
unary([ast.USub, np.negative], "-g")
unary([ast.UAdd, np.positive], "g")
unary("copy", "g")
unary(builtins.float, "g")

# -- elementwise functions ---------------------------------------------------------
unary(np.exp, "g * ans")
unary(np.log, "g / x")
unary(np.sqrt, "g / (2 * ans)", jvp="tangent_div(g, 2 * ans)")
unary(np.sin, "g * np.cos(x)")
unary(np.cos, "-g * np.sin(x)")
# 1 / cosh(x)**2, not 1 - ans**2, which is 0 wherever tanh rounds to +-1 (|x| > 19)
unary(np.tanh, "g / np.cosh(x) ** 2")
unary([np.abs, builtins.abs], "g * np.sign(x)")
binary(
    np.maximum,
    "np.where(x == y, 0.5 * g, np.where(x > y, g, 0.0))",
    "np.where(x == y, 0.5 * g, np.where(y > x, g, 0.0))",
)
binary(
    np.minimum,
    "np.where(x == y, 0.5 * g, np.where(x < y, g, 0.0))",
    "np.where(x == y, 0.5 * g, np.where(y < x, g, 0.0))",
)
elementwise(
    np.where,
    ("condition", "x", "y"),
    {"x": "np.where(condition, g, 0.0)", "y": "np.where(condition, 0.0, g)"},
    zero=frozenset({"condition"}),  # it only chooses
)


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


# -- linear algebra ---------------------------------------------------------------------
def _matmul_rank(ctx: Context) -> int | None:
    ra, rb = ctx.rank("a"), ctx.rank("b")
    if ra is None or rb is None:
        return None
    if min(ra, rb) == 0:  # np.dot with a scalar multiplies
        return max(ra, rb)
    return max(ra, rb, 2) - (ra == 1) - (rb == 1)


def _matmul_vjp_a(ctx: Context) -> str:
    return {
        (2, 2): "g @ b.T",
        (1, 2): "b @ g",
        (2, 1): "np.outer(g, b)",
        (1, 1): "g * b",
    }.get((ctx.rank("a"), ctx.rank("b")), "matmul_vjp_a(g, a, b)")


def _matmul_vjp_b(ctx: Context) -> str:
    return {
        (2, 2): "a.T @ g",
        (1, 2): "np.outer(a, g)",
        (2, 1): "a.T @ g",
        (1, 1): "g * a",
    }.get((ctx.rank("a"), ctx.rank("b")), "matmul_vjp_b(g, a, b)")


def _dot_vjp(side: str):
    def template(ctx: Context) -> str:
        ra, rb = ctx.rank("a"), ctx.rank("b")
        if ra == 0 or rb == 0:  # np.dot with a scalar is multiplication
            mine, other = (ra, "b") if side == "a" else (rb, "a")
            product = f"g * {other}"
            return product if mine != 0 or (ra == 0 and rb == 0) else f"np.sum({product})"
        if ra is not None and rb is not None and max(ra, rb) <= 2:
            return (_matmul_vjp_a if side == "a" else _matmul_vjp_b)(ctx)
        return f"dot_vjp_{side}(g, a, b)"

    return template


_MATMUL = dict(params=("a", "b"), jvp={"a": linear, "b": linear}, rank=_matmul_rank)
for _key in (ast.MatMult, np.matmul):
    register(
        _key, Rule(name="the @ operator", vjp={"a": _matmul_vjp_a, "b": _matmul_vjp_b}, **_MATMUL)
    )
for _key in (np.dot, ("method", "dot")):
    register(_key, Rule(name="np.dot", vjp={"a": _dot_vjp("a"), "b": _dot_vjp("b")}, **_MATMUL))


# -- shapes ---------------------------------------------------------------------------
def _same_rank(ctx: Context) -> int | None:
    return ctx.rank("x")


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


# -- indexing ----------------------------------------------------------------------------
def _getitem_rank(ctx: Context) -> int | None:
    rank = ctx.rank("x")
    index = ctx.index
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    if rank is None:
        return None
    out = rank
    for part in parts:
        if isinstance(part, ast.Slice):
            continue
        if isinstance(part, ast.Constant) and part.value is None:
            out += 1
        elif isinstance(part, ast.Constant) and isinstance(part.value, int):
            out -= 1
        elif isinstance(part, ast.Name) and ctx.ranks.get(f"index:{part.id}") == 0:
            out -= 1  # an integer (or 0-d) index
        else:
            return None
    if any(isinstance(p, ast.Constant) and p.value is Ellipsis for p in parts):
        return None
    return out


def _index_value(node: ast.expr) -> ast.expr:
    """An index as an ordinary value: ``1:n`` becomes ``slice(1, n)``."""
    if isinstance(node, ast.Slice):
        parts = [
            p if p is not None else ast.Constant(None) for p in (node.lower, node.upper, node.step)
        ]
        if node.step is None:  # slice(a, b) means step None; slice(a) would mean slice(None, a)
            parts.pop()
        return ast.Call(func=ast.Name(id="slice", ctx=ast.Load()), args=parts, keywords=[])
    if isinstance(node, ast.Tuple):
        return ast.Tuple(elts=[_index_value(e) for e in node.elts], ctx=ast.Load())
    return node


def _getitem_vjp(ctx: Context) -> ast.expr:
    index = ctx.index
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    basic = all(
        isinstance(p, ast.Slice)
        or (
            isinstance(p, ast.Constant)
            and (p.value is None or p.value is Ellipsis or isinstance(p.value, (int, str)))
        )
        or (isinstance(p, ast.Name) and ctx.ranks.get(f"index:{p.id}") == 0)
        for p in parts
    )
    helper = ctx.symbols["index_adjoint" if basic else "index_adjoint_add"]
    call = ast.Call(
        func=helper, args=[ctx.symbols["g"], ctx.args["x"], _index_value(index)], keywords=[]
    )
    return call


register(
    "getitem",
    Rule(
        name="indexing",
        params=("x",),
        jvp={"x": linear},
        vjp={"x": _getitem_vjp},
        rank=_getitem_rank,
    ),
)

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

# -- Python scalars: the math module and builtins ------------------------------------------
unary(math.sin, "g * math.cos(x)")
unary(math.cos, "-g * math.sin(x)")
unary(math.tan, "g / math.cos(x) ** 2")
unary(math.exp, "g * ans")
unary(math.expm1, "g * math.exp(x)")  # (ans + 1 is 0 where expm1 rounds to -1)
unary(math.sqrt, "g / (2 * ans)", jvp="tangent_div(g, 2 * ans)")
# sech(x)**2 from exp(-|x|): exact in the tails, no overflow (math.cosh raises there)
unary(math.tanh, "g * (2 * math.exp(-abs(x)) / (1 + math.exp(-2 * abs(x)))) ** 2")
unary(math.sinh, "g * math.cosh(x)")
unary(math.cosh, "g * math.sinh(x)")
unary(math.atan, "g / (1 + x * x)")
unary(
    math.asin,
    "g / math.sqrt((1 - x) * (1 + x))",
    jvp="tangent_div(g, math.sqrt((1 - x) * (1 + x)))",
)
unary(
    math.acos,
    "-g / math.sqrt((1 - x) * (1 + x))",
    jvp="-tangent_div(g, math.sqrt((1 - x) * (1 + x)))",
)
unary(math.log1p, "g / (1 + x)")
unary(math.log2, "g / (x * math.log(2))")
unary(math.log10, "g / (x * math.log(10))")
unary(math.fabs, "g * ((x > 0) - (x < 0))")
elementwise(math.log, ("x",), {"x": "g / x"})
binary(
    math.pow,
    pow_dx("{x} ** ({e})", forward=False),
    "g * ans * pow_log(x)",
    jvp={"x": pow_dx("{x} ** ({e})", forward=True)},
)
binary(math.atan2, "g * y / (x * x + y * y)", "-g * x / (x * x + y * y)")
binary(math.hypot, "g * x / ans", "g * y / ans")
binary(builtins.max, "g * ((x > y) + 0.5 * (x == y))", "g * ((y > x) + 0.5 * (x == y))")
binary(builtins.min, "g * ((x < y) + 0.5 * (x == y))", "g * ((y < x) + 0.5 * (x == y))")
nondiff([math.floor, math.ceil, math.trunc, builtins.int, builtins.bool, builtins.range])
nondiff(builtins.round, params=("x", "ndigits"), defaults={"ndigits": None})

# -- y[index] = v: the transforms write these statements themselves -----------------------
register(
    "setitem",
    Rule(
        name="assignment into an array",
        params=("x", "v"),
        jvp={"x": None, "v": None},
        vjp={"x": None, "v": None},
        rank=_same_rank,
    ),
)

SEQUENCE_RULES["append"] = Rule(
    name="list.append", params=("x", "v"), jvp={"x": None, "v": None}, vjp={"x": None, "v": None}
)

# -- lists of arrays -------------------------------------------------------------------------
register(
    np.stack,
    Rule(
        name="np.stack",
        params=("arrays", "axis", "out"),
        defaults={"axis": 0, "out": None},
        fixed={"out": None},
        jvp={"arrays": linear},
        vjp={"arrays": "unstack(g, axis)"},
    ),
)
register(
    np.concatenate,
    Rule(
        name="np.concatenate",
        params=("arrays", "axis", "out"),
        defaults={"axis": 0, "out": None},
        fixed={"out": None},
        jvp={"arrays": linear},
        vjp={"arrays": "split_like(g, arrays, axis)"},
    ),
)
register(
    np.array,
    Rule(
        name="np.array",
        params=("x", "dtype"),
        defaults={"dtype": None},
        jvp={"x": linear},
        vjp={"x": "unstack(g, 0) if isinstance(x, (list, tuple)) else g"},
    ),
)


def _sum_jvp_x(ctx: Context) -> ast.expr:
    """``sum(g)``, as the user's code calls ``sum``, without the start value (which has a
    tangent of its own)."""
    call = linear(ctx)
    if "start" not in ctx.supplied:
        return call
    return primal_with(dataclasses.replace(ctx, node=call), "start", ast.Constant(0))


register(
    builtins.sum,
    Rule(
        name="sum",
        params=("x", "start"),
        defaults={"start": 0},
        jvp={"x": _sum_jvp_x, "start": "broadcast_like(g, ans)"},
        vjp={"x": "spread(g, x)", "start": "unbroadcast(g, start)"},
    ),
)

# -- no derivative -------------------------------------------------------------------------
# a shape is a tuple of ints: a sequence (rank 1), so `x.shape[0]` is a number (rank 0)
nondiff([np.shape], rank=lambda ctx: 1)
nondiff([np.ndim, np.size, builtins.len], rank=lambda ctx: 0)
nondiff(
    [np.zeros_like, np.ones_like, np.empty_like],
    params=("x", "dtype", "order", "subok", "shape"),
    defaults={"dtype": None, "order": "K", "subok": True, "shape": None},
)
nondiff([np.sign], params=("x",))
nondiff(("attr", "shape"), rank=lambda ctx: 1)
nondiff([("attr", "ndim"), ("attr", "size")], rank=lambda ctx: 0)
nondiff(("attr", "dtype"))
nondiff([np.result_type, np.promote_types], params=("arrays_and_dtypes",), varargs=True)

# -- xs.pop(): generated reverse-mode code pops its tape; forward mode pops the tangents too --
register(("method", "pop"), Rule(name=".pop()", params=("x",), jvp={"x": linear}))
