"""Rules for srcgrad's own runtime helpers, so that generated code can be
differentiated again (higher order: forward mode over generated code).

Almost every helper is linear in the adjoint it takes (``unbroadcast``,
``index_adjoint``, ``unstack``...): its forward rule is the helper applied to
the tangent. Helpers that only compute shapes or zeros carry no derivative.
Keys are ``("helper", name)``; generated modules tag their copies of the
helpers with ``__srcgrad_helper__`` so the analysis finds these rules.

A helper without a rule here (``cumprod_vjp``, ``svd_jvp``, ``norm_grad``...) is plain
numpy code, and srcgrad differentiates its source like a user's function: such helpers
keep to the code srcgrad can differentiate (no division that is exact only at first
order, checks that raise in helpers called with shapes only).
"""

from __future__ import annotations

from . import Context, NotStatic, Rule, linear, register


def _rank_of(param: str):
    return lambda ctx: ctx.rank(param)


def _rule(name: str, params: tuple[str, ...], **fields) -> None:
    """Register the rule of runtime helper ``name``."""
    register(("helper", name), Rule(name=f"srcgrad's {name}", params=params, **fields))


def helper(name: str, params: tuple[str, ...], linear_in: tuple[str, ...], **extra) -> None:
    """A helper linear in each of ``linear_in``: its tangent is itself applied to them. Its
    other parameters give shapes, indices, axes or a piecewise-constant choice (sort
    order, ties): derivative zero."""
    zero = frozenset(params) - frozenset(linear_in)
    _rule(name, params, jvp=dict.fromkeys(linear_in, linear), zero=zero, **extra)


def _nondiff(name: str, params: tuple[str, ...], **extra) -> None:
    _rule(name, params, nondiff=True, **extra)


helper("unbroadcast", ("d", "x"), ("d",), rank=_rank_of("x"))
helper("rfft_adjoint", ("d", "x", "n", "axis", "norm"), ("d",), rank=_rank_of("x"))
helper("resized_like", ("d", "x", "axis"), ("d",), rank=_rank_of("x"))
helper("irfft_adjoint", ("d", "c", "axis", "norm"), ("d",), rank=_rank_of("c"))
helper("fftn_adjoint", ("d", "a", "s", "axes", "norm", "kind"), ("d",), rank=_rank_of("a"))
helper("unbroadcast_to", ("d", "shape"), ("d",))
helper("broadcast_like", ("d", "y"), ("d",), rank=_rank_of("y"))
helper("unreduce", ("d", "x", "axis", "keepdims"), ("d",), rank=_rank_of("x"))
helper("matmul_vjp_a", ("d", "a", "b"), ("d", "b"), rank=_rank_of("a"))
helper("matmul_vjp_b", ("d", "a", "b"), ("d", "a"), rank=_rank_of("b"))
helper("dot_vjp_a", ("d", "a", "b"), ("d", "b"), rank=_rank_of("a"))
helper("dot_vjp_b", ("d", "a", "b"), ("d", "a"), rank=_rank_of("b"))
# the tied extrema are piecewise constant in x: the adjoint is linear in d alone
helper(
    "extremum_vjp",
    ("d", "x", "ans", "axis", "keepdims"),
    ("d",),
    defaults={"axis": None, "keepdims": False},
    rank=_rank_of("x"),
)
helper(
    "extremum_jvp",
    ("d", "x", "ans", "axis", "keepdims"),
    ("d",),
    defaults={"axis": None, "keepdims": False},
    rank=_rank_of("ans"),
)
# additive, not bilinear: each argument's tangent passes through, added element-wise
_rule("add_seq", params=("a", "b"), jvp={"a": "g", "b": "g"}, combine="add_seq", tuple_result=True)
_rule(  # additive: the container's tangent, plus the element's in its place
    "add_at",
    params=("xs", "index", "d"),
    jvp={"xs": "g", "d": "index_adjoint(g, xs, index)"},
    zero=frozenset({"index"}),
    combine="add_seq",
    tuple_result=True,
)
_rule(  # linear in the container less its element, and in the new element
    "set_at",
    params=("xs", "index", "d"),
    jvp={"xs": "set_at(g, index, zero_adjoint(g[index]))", "d": "index_adjoint(g, xs, index)"},
    zero=frozenset({"index"}),
    combine="add_seq",
    tuple_result=True,
)
helper("unstack", ("d", "axis"), ("d",))
helper("unstack_like", ("d", "x"), ("d",))
helper("split_like", ("d", "xs", "axis"), ("d",))
helper("spread", ("d", "xs"), ("d",))
helper("index_adjoint", ("d", "x", "index"), ("d",), rank=_rank_of("x"))
helper("index_adjoint_add", ("d", "x", "index"), ("d",), rank=_rank_of("x"))
helper("kept_writes", ("d", "index"), ("d",))
helper("untranspose", ("d", "axes"), ("d",), rank=_rank_of("d"))
for _name, _params in (
    ("zero_adjoint", ("x",)),
    ("matmul_shape", ("a", "b")),
    ("reduced_size", ("x", "axis")),
):
    _nondiff(_name, _params)
_nondiff("zeros_seq", ("xs",), tuple_result=True)  # a container: its zero tangent is one too


# pow_log(x) is log(x), and 0 where x == 0 (a constant there)
_rule(
    "pow_log",
    params=("x",),
    jvp={"x": "g / np.where(x == 0, 1, x) * (x != 0)"},
    rank=_rank_of("x"),
)

# -- helpers of the wider NumPy table (issue 4): linear in their first argument; the
# others give shapes, indices, axes or a piecewise-constant choice (sort order, ties)
for _name, _params in (
    ("cumsum_vjp", ("d", "x", "axis")),
    ("trace_vjp", ("d", "x", "offset", "axis1", "axis2")),
    ("diagonal_adjoint", ("d", "x", "offset", "axis1", "axis2")),
    ("tile_adjoint", ("d", "x", "reps")),
    ("repeat_adjoint", ("d", "x", "repeats", "axis")),
    ("roll_adjoint", ("d", "shift", "axis")),
    ("unpad", ("d", "pad_width")),
    ("pad_tangent", ("d", "pad_width", "mode")),
    ("pad_adjoint", ("d", "x", "pad_width", "mode")),
    ("hstack_adjoint", ("d", "xs")),
    ("diff_adjoint", ("d", "n", "axis")),
    ("append_adjoint", ("d", "arr", "values", "axis", "which")),
    ("vstack_adjoint", ("d", "xs")),
    ("dstack_adjoint", ("d", "xs")),
    ("column_stack_adjoint", ("d", "xs")),
    ("take_adjoint", ("d", "x", "indices", "axis", "mode")),
    ("take_along_axis_adjoint", ("d", "x", "indices", "axis")),
    ("sort_jvp", ("d", "x", "axis")),
    ("sort_vjp", ("d", "x", "axis")),
    ("linspace_jvp", ("d", "ans", "num", "endpoint", "axis", "which")),
    ("linspace_vjp", ("d", "num", "endpoint", "axis", "which")),
    ("tie_share", ("d", "a", "b", "ans")),
    ("clip_parts", ("d", "x", "lo", "hi", "ans")),
    ("sum_like", ("d", "b")),
    ("average_weights", ("d", "x", "axis")),
    ("average_weights_adjoint", ("d", "w", "x", "axis")),
    ("mT", ("d",)),
    ("sym_part", ("d",)),
):
    helper(_name, _params, ("d",), defaults=dict.fromkeys(_params[1:], None))
# bilinear: linear in the adjoint and in the other operand
helper("inner_vjp_a", ("d", "a", "b"), ("d", "b"))
helper("inner_vjp_b", ("d", "a", "b"), ("d", "a"))
helper("tensordot_vjp_a", ("d", "a", "b", "axes"), ("d", "b"))
helper("tensordot_vjp_b", ("d", "a", "b", "axes"), ("d", "a"))
for _name, _params in (("eye_like", ("x",)), ("count_valid", ("x", "axis", "keepdims"))):
    _nondiff(_name, _params, defaults=dict.fromkeys(_params[1:], None))
_rule("adjugate", params=("a",), jvp={"a": "adjugate_jvp(g, a)"})  # (at singular a too)
_rule("safe_div", params=("a", "b"), jvp={"a": "safe_div(g, b)", "b": "-safe_div(g * ans, b)"})
_rule("safe_divisor", params=("a",), jvp={"a": "g * (a != 0)"})
_rule("digamma", params=("x",), jvp={"x": "g * trigamma(x)"})
_rule("trigamma", params=("x",), jvp={"x": "g * polygamma_n(2, x)"})
_rule("polygamma_n", params=("n", "x"), jvp={"x": "g * polygamma_n(n + 1, x)"})

# einsum_vjp(d, subscripts, i, x0, x1, ...): the adjoint of operand i, linear in the
# adjoint d and in every other operand, and a function of operand i's shape alone
_OPERANDS = tuple(f"x{k}" for k in range(8))


def _einsum_vjp_tangent(k: int):
    def template(ctx: Context):
        if not ctx.is_static("i"):  # generated code passes i as a literal
            raise NotStatic("i")
        return "np.zeros_like(ans)" if ctx.static("i") == k else linear(ctx)

    return template


_rule(
    "einsum_vjp",
    params=("d", "subscripts", "i", *_OPERANDS),
    defaults=dict.fromkeys(_OPERANDS[1:]),
    jvp={"d": linear, **{p: _einsum_vjp_tangent(k) for k, p in enumerate(_OPERANDS)}},
)
