"""Rules for srcgrad's own runtime helpers, so that generated code can be
differentiated again (higher order: forward mode over generated code).

Almost every helper is linear in the adjoint it takes (``unbroadcast``,
``index_adjoint``, ``unstack``...): its forward rule is the helper applied to
the tangent. Helpers that only compute shapes or zeros carry no derivative.
Keys are ``("helper", name)``; generated modules tag their copies of the
helpers with ``__srcgrad_helper__`` so the analysis finds these rules.
"""

from __future__ import annotations

from . import Rule, linear, register


def _rank_of(param: str):
    return lambda ctx: ctx.rank(param)


def helper(name: str, params: tuple[str, ...], linear_in: tuple[str, ...], **extra) -> None:
    register(
        ("helper", name),
        Rule(
            name=f"srcgrad's {name}", params=params, jvp=dict.fromkeys(linear_in, linear), **extra
        ),
    )


def _nondiff(name: str, params: tuple[str, ...]) -> None:
    register(("helper", name), Rule(name=f"srcgrad's {name}", params=params, nondiff=True))


helper("unbroadcast", ("d", "x"), ("d",), rank=_rank_of("x"))
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
register(
    ("helper", "add_seq"),
    Rule(
        name="srcgrad's add_seq",
        params=("a", "b"),
        jvp={"a": "g", "b": "g"},
        combine="add_seq",
    ),
)
helper("unstack", ("d", "axis"), ("d",))
helper("split_like", ("d", "xs", "axis"), ("d",))
helper("spread", ("d", "xs"), ("d",))
helper("index_adjoint", ("d", "x", "index"), ("d",), rank=_rank_of("x"))
helper("index_adjoint_add", ("d", "x", "index"), ("d",), rank=_rank_of("x"))
helper("untranspose", ("d", "axes"), ("d",), rank=_rank_of("d"))
for _name, _params in (
    ("zero_adjoint", ("x",)),
    ("zeros_seq", ("xs",)),
    ("matmul_shape", ("a", "b")),
    ("reduced_size", ("x", "axis")),
):
    _nondiff(_name, _params)


# pow_log(x) is log(x), and 0 where x == 0 (a constant there)
register(
    ("helper", "pow_log"),
    Rule(
        name="srcgrad's pow_log",
        params=("x",),
        jvp={"x": "g / np.where(x == 0, 1, x) * (x != 0)"},
        rank=_rank_of("x"),
    ),
)
