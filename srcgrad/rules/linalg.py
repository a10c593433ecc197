"""Rules for linear algebra: products, ``numpy.linalg`` and diagonals/triangles.

See builders.py for how a row reads (``@``, ``np.matmul`` and ``np.dot``
live in operators.py). The matrix functions work on stacks of matrices (the last two
axes) wherever numpy does: ``inv``, ``solve``, ``det``, ``slogdet``,
``cholesky``, ``eigh``, ``svd``, ``qr``, ``pinv``. The long derivatives are
helpers in :mod:`srcgrad.rules.helpers.linalg` (``eigh_vjp`` and friends), each with its
formula in its docstring.

Functions returning tuples (``slogdet``, ``eigh``, ``svd``, ``qr``) have a
tuple tangent and a list adjoint, one entry per element; unpack them
(``w, v = np.linalg.eigh(a)``) or index them (``np.linalg.eigh(a)[0]``).
Of the field names of numpy's result types, ``.eigenvalues``,
``.eigenvectors`` and ``.logabsdet`` are differentiated (attribute rules are
keyed by name alone, so svd's ``.U``/``.S``/``.Vh`` and qr's ``.Q``/``.R``,
too easily mistaken, are not).

Conventions (as in JAX):

- ``cholesky`` and ``eigh`` read one triangle of their argument, but their
  derivatives treat it as symmetric: a tangent ``da`` counts as
  ``(da + da.T) / 2``, and the adjoint is symmetric. Differentiate functions
  of symmetric matrices (``np.linalg.cholesky(a @ a.T + ...)``), where both
  views agree.
- ``eigh``'s eigenvector derivative divides by eigenvalue gaps ``w[j] - w[i]``
  and ``svd``'s by ``s[j]**2 - s[i]**2``: at repeated eigenvalues or singular
  values the derivative is undefined (inf/nan), and near them ill conditioned.
  Eigenvalues and singular values alone (``w``; ``svd(compute_uv=False)``)
  are fine. Eigenvectors are taken as numpy returns them (their sign is
  arbitrary): differentiate quantities that do not depend on the sign.
- ``svd`` of a non-square m x n matrix with ``full_matrices=True`` (numpy's default)
  gives ``|m - n|`` extra singular vectors, any orthonormal basis of the rest of the
  space, with no derivative: reverse mode differentiates it where they are not used
  (``s``, ``u[:, :k]``), and refuses it, naming ``full_matrices=False``, where they are;
  forward mode cannot tell, and always refuses it. A literal ``compute_uv``; singular
  values must be nonzero for the singular vectors' derivative.
- ``qr`` (mode ``'reduced'``) needs a nonsingular ``r`` (with more columns than rows,
  its first square block); ``pinv``'s derivative holds where the rank is constant
  (Golub and Pereyra); ``inv``, ``solve`` and ``slogdet`` need a nonsingular
  matrix (no special case at singular ones); only ``slogdet``'s logdet is
  differentiated (the sign is piecewise constant). ``det``'s derivative is the
  transposed adjugate, from the SVD, so it holds at singular matrices too.
- ``einsum`` takes its subscripts as a string (explicit ``->``, implicit,
  ``...``), then up to 8 operands; not the interleaved operand/sublist form.
  ``tensordot``'s ``axes`` may be an int or a pair of ints or sequences.
"""

from __future__ import annotations

import ast

import numpy as np

from . import Context, NotStatic, Rule, linear, register


# -- ranks -----------------------------------------------------------------------------
def _rank_of(param: str, change: int = 0):
    def rank(ctx: Context) -> int | None:
        r = ctx.rank(param)
        return None if r is None else r + change

    return rank


def _no_rank(ctx: Context) -> None:
    return None


def _both(ctx: Context) -> tuple[int | None, int | None]:
    return ctx.rank("a"), ctx.rank("b")


def _by_ranks(table: dict, fallback: str):
    """A template chosen by the ranks of ``a`` and ``b`` (a helper where they are unknown)."""

    def template(ctx: Context) -> str:
        return table.get(_both(ctx), fallback)

    return template


def _by_rank(param: str, table: dict, fallback: str):
    def template(ctx: Context) -> str:
        return table.get(ctx.rank(param), fallback)

    return template


# -- products ------------------------------------------------------------------------------
def _product(key, name, vjp_a, vjp_b, rank, **extra) -> None:
    register(
        key,
        Rule(
            name=name,
            params=extra.pop("params", ("a", "b")),
            jvp={"a": linear, "b": linear},
            vjp={"a": vjp_a, "b": vjp_b},
            rank=rank,
            **extra,
        ),
    )


_product(
    np.vdot,
    "np.vdot",
    _by_ranks({(1, 1): "g * b"}, "np.reshape(g * b, np.shape(a))"),
    _by_ranks({(1, 1): "g * a"}, "np.reshape(g * a, np.shape(b))"),
    lambda c: 0,
)


def _inner_rank(ctx: Context) -> int | None:
    ra, rb = _both(ctx)
    if ra is None or rb is None:
        return None
    return max(ra, rb) if min(ra, rb) == 0 else ra + rb - 2


_product(
    np.inner,
    "np.inner",
    _by_ranks(
        {(1, 1): "g * b", (2, 2): "g @ b", (2, 1): "np.outer(g, b)", (1, 2): "g @ b"},
        "inner_vjp_a(g, a, b)",
    ),
    _by_ranks(
        {(1, 1): "g * a", (2, 2): "g.T @ a", (2, 1): "g @ a", (1, 2): "np.outer(g, a)"},
        "inner_vjp_b(g, a, b)",
    ),
    _inner_rank,
)
_product(
    np.outer,
    "np.outer",
    _by_ranks({(1, 1): "g @ b"}, "np.reshape(g @ np.ravel(b), np.shape(a))"),
    _by_ranks({(1, 1): "a @ g"}, "np.reshape(np.ravel(a) @ g, np.shape(b))"),
    lambda c: 2,
    params=("a", "b", "out"),
    defaults={"out": None},
    fixed={"out": None},
)


def _tensordot_rank(ctx: Context) -> int | None:
    ra, rb = _both(ctx)
    try:
        axes = ctx.static("axes")
    except NotStatic:
        return None
    if ra is None or rb is None:
        return None
    if isinstance(axes, int):
        return ra + rb - 2 * axes
    first = axes[0]
    return ra + rb - 2 * (1 if isinstance(first, int) else len(first))


_product(
    np.tensordot,
    "np.tensordot",
    "tensordot_vjp_a(g, a, b, axes)",
    "tensordot_vjp_b(g, a, b, axes)",
    _tensordot_rank,
    params=("a", "b", "axes"),
    defaults={"axes": 2},
)
_product(
    np.kron,
    "np.kron",
    "kron_vjp(g, a, b, 0)",
    "kron_vjp(g, a, b, 1)",
    lambda c: None if None in _both(c) else max(_both(c)),
)

# -- einsum: np.einsum(subscripts, x0, x1, ...) ------------------------------------------
_OPERANDS = tuple(f"x{i}" for i in range(8))


def _einsum_vjp(i: int):
    def template(ctx: Context) -> str:
        given = ", ".join(p for p in _OPERANDS if p in ctx.supplied)
        return f"einsum_vjp(g, subscripts, {i}, {given})"

    return template


def _einsum_rank(ctx: Context) -> int | None:
    try:
        subscripts = ctx.static("subscripts")
    except NotStatic:
        return None
    if not isinstance(subscripts, str) or "..." in subscripts:
        return None
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        return len(subscripts.split("->")[1])
    letters = subscripts.replace(",", "")
    return sum(1 for c in set(letters) if letters.count(c) == 1)


register(
    np.einsum,
    Rule(
        name="np.einsum",
        params=("subscripts", *_OPERANDS, "optimize"),
        defaults={**{p: None for p in _OPERANDS[1:]}, "optimize": False},
        jvp={p: linear for p in _OPERANDS},
        vjp={p: _einsum_vjp(i) for i, p in enumerate(_OPERANDS)},
        rank=_einsum_rank,
        hints={
            "subscripts": "srcgrad differentiates np.einsum with its subscripts as a string, "
            "np.einsum('ij,jk->ik', a, b), not the interleaved operand/sublist form"
        },
    ),
)

# -- numpy.linalg ---------------------------------------------------------------------------
register(
    np.linalg.inv,
    Rule(
        name="np.linalg.inv",
        params=("a",),
        jvp={"a": "-ans @ g @ ans"},
        vjp={"a": _by_rank("a", {2: "-ans.T @ g @ ans.T"}, "-mT(ans) @ g @ mT(ans)")},
        rank=_rank_of("a"),
    ),
)


def _solve_rank(ctx: Context) -> int | None:
    ra, rb = _both(ctx)
    if rb == 1:
        return None if ra is None else ra - 1
    return None if ra is None or rb is None else max(ra, rb)


register(
    np.linalg.solve,
    Rule(
        name="np.linalg.solve",
        params=("a", "b"),
        jvp={
            "a": _by_ranks(
                {(2, 1): "-np.linalg.solve(a, g @ ans)", (2, 2): "-np.linalg.solve(a, g @ ans)"},
                "solve_jvp_a(g, a, b, ans)",
            ),
            "b": linear,
        },
        vjp={
            "a": _by_ranks(
                {
                    (2, 1): "-np.outer(np.linalg.solve(a.T, g), ans)",
                    (2, 2): "-np.linalg.solve(a.T, g) @ ans.T",
                },
                "solve_vjp_a(g, a, b, ans)",
            ),
            "b": _by_ranks(
                {(2, 1): "np.linalg.solve(a.T, g)", (2, 2): "np.linalg.solve(a.T, g)"},
                "solve_vjp_b(g, a, b)",
            ),
        },
        rank=_solve_rank,
    ),
)

_TRACE_SOLVE = _by_rank(
    "a",
    {2: "np.trace(np.linalg.solve(a, g))"},
    "np.trace(np.linalg.solve(a, g), axis1=-2, axis2=-1)",
)
# the derivative of det is the transposed adjugate, also at singular matrices (where
# det(a) * inv(a) raises LinAlgError); the adjugate comes from the SVD, without division
register(
    np.linalg.det,
    Rule(
        name="np.linalg.det",
        params=("a",),
        jvp={
            "a": _by_rank(
                "a",
                {2: "np.sum(adjugate(a).T * g)"},
                "np.sum(mT(adjugate(a)) * g, axis=(-2, -1))",
            )
        },
        vjp={
            "a": _by_rank(
                "a",
                {2: "g * adjugate(a).T"},
                "np.expand_dims(g, (-2, -1)) * mT(adjugate(a))",
            )
        },
        rank=_rank_of("a", -2),
    ),
)
register(
    np.linalg.slogdet,
    Rule(
        name="np.linalg.slogdet",
        params=("a",),
        jvp={"a": lambda c: f"(np.zeros_like(ans[0]), {_TRACE_SOLVE(c)})"},
        vjp={
            "a": _by_rank(
                "a",
                {2: "g[1] * np.linalg.inv(a).T"},
                "np.expand_dims(g[1], (-2, -1)) * mT(np.linalg.inv(a))",
            )
        },
        rank=_no_rank,
        tuple_result=True,
    ),
)
register(
    np.linalg.cholesky,
    Rule(
        name="np.linalg.cholesky",
        params=("a", "upper"),
        defaults={"upper": False},
        fixed={"upper": False},
        jvp={"a": "cholesky_jvp(g, ans)"},
        vjp={"a": "cholesky_vjp(g, ans)"},
        rank=_rank_of("a"),
    ),
)
register(
    np.linalg.eigh,
    Rule(
        name="np.linalg.eigh",
        params=("a", "UPLO"),
        defaults={"UPLO": "L"},
        jvp={"a": "eigh_jvp(g, ans)"},
        vjp={"a": "eigh_vjp(g, ans)"},
        rank=_no_rank,
        tuple_result=True,
    ),
)


def _computes_uv(ctx: Context) -> bool:
    node = ctx.args["compute_uv"]
    return not (isinstance(node, ast.Constant) and not node.value)


register(
    np.linalg.svd,
    Rule(
        name="np.linalg.svd",
        params=("a", "full_matrices", "compute_uv", "hermitian"),
        defaults={"full_matrices": True, "compute_uv": True, "hermitian": False},
        fixed={"hermitian": False},
        jvp={"a": "svd_jvp(g, a, ans, full_matrices, compute_uv)"},
        vjp={"a": "svd_vjp(g, a, ans, full_matrices, compute_uv)"},
        rank=lambda c: None if _computes_uv(c) else _rank_of("a", -1)(c),
        tuple_result=_computes_uv,
    ),
)
register(
    np.linalg.qr,
    Rule(
        name="np.linalg.qr",
        params=("a", "mode"),
        defaults={"mode": "reduced"},
        fixed={"mode": "reduced"},
        jvp={"a": "qr_jvp(g, a, ans)"},
        vjp={"a": "qr_vjp(g, a, ans)"},
        rank=_no_rank,
        tuple_result=True,
    ),
)
register(
    np.linalg.pinv,
    Rule(
        name="np.linalg.pinv",
        params=("a", "rcond", "hermitian", "rtol"),
        defaults={"rcond": None, "hermitian": False, "rtol": None},
        fixed={"hermitian": False},
        jvp={"a": "pinv_jvp(g, a, ans)"},
        vjp={"a": "pinv_vjp(g, a, ans)"},
        rank=_rank_of("a"),
    ),
)

# -- diagonals and triangles (linear: the forward rule is the function itself) ---------------
register(
    np.diag,
    Rule(
        name="np.diag",
        params=("v", "k"),
        defaults={"k": 0},
        jvp={"v": linear},
        vjp={
            "v": _by_rank(
                "v",
                {1: "np.diag(g, k)", 2: "diagonal_adjoint(g, v, k)"},
                "np.diag(g, k) if np.ndim(v) == 1 else diagonal_adjoint(g, v, k)",
            )
        },
        rank=lambda c: {1: 2, 2: 1}.get(c.rank("v")),
    ),
)
_DIAGONAL = dict(
    params=("a", "offset", "axis1", "axis2"),
    defaults={"offset": 0, "axis1": 0, "axis2": 1},
    jvp={"a": linear},
    vjp={"a": "diagonal_adjoint(g, a, offset, axis1, axis2)"},
    rank=_rank_of("a", -1),
)
register(np.diagonal, Rule(name="np.diagonal", **_DIAGONAL))
register(("method", "diagonal"), Rule(name=".diagonal()", **_DIAGONAL))
for _key, _mask in ((np.triu, "np.triu(g, k)"), (np.tril, "np.tril(g, k)")):
    register(
        _key,
        Rule(
            name=f"np.{_key.__name__}",
            params=("m", "k"),
            defaults={"k": 0},
            jvp={"m": linear},
            vjp={"m": _mask},
            rank=_rank_of("m"),
        ),
    )

# -- fields of numpy's result tuples (EighResult, SlogdetResult) by name ----------------------
# Attribute rules are keyed by the name alone, so only unmistakable names are given
# (not svd's ``.U``/``.S``/``.Vh`` or qr's ``.Q``/``.R``: index or unpack those).
for _field, _position in (("eigenvalues", 0), ("eigenvectors", 1), ("logabsdet", 1)):
    register(
        ("attr", _field),
        Rule(
            name=f".{_field}",
            params=("x",),
            jvp={"x": f"g[{_position}]"},
            vjp={"x": f"index_adjoint(g, x, {_position})"},
            rank=_no_rank,
        ),
    )
