"""The linear algebra rules, tested: every rule in ``srcgrad/rules/linalg.py``.

Each row names a primitive, a small function using it (``functions_linalg.py``)
and how to draw its arguments: random sizes (1 to 4), stacks of matrices
where numpy takes them, float64 and float32. :func:`rule_checks.check` runs
forward mode, reverse mode and finite differences for each differentiable
argument and all together, and checks dtypes and that no input changes.

Matrices are drawn well conditioned: ``x / n + 2 I`` (``|x| <= 1``) for
``inv``/``solve``/``det``; ``q diag(w) q.T`` with eigenvalues at least 1
apart for ``eigh``; ``u diag(s) v.T`` with singular values 1 apart from 1 up
for ``svd``, ``qr`` and ``pinv``.
"""

from __future__ import annotations

import functions_linalg as fn
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rule_checks import DTYPES, Domain, check, operand, values

import srcgrad

UNIT = Domain(-1.0, 1.0)


# -- drawing arguments ----------------------------------------------------------------------
def side(data) -> int:
    return data.draw(st.integers(1, 4))


def stack(data) -> tuple:
    """Leading (batch) axes of a stack of matrices: none, one or two."""
    return data.draw(st.sampled_from([(), (), (2,), (1, 3)]))


def draw(data, shape, dtype, domain=UNIT, scalars=False):
    return operand(data, tuple(shape), domain, dtype, scalars=scalars)


def well_conditioned(data, shape, dtype, negate=False):
    """Matrices ``x / n + 2 I`` with ``|x| <= 1``: diagonally dominant."""
    n = shape[-1]
    x = data.draw(values(tuple(shape), UNIT, np.float64)) / n + 2 * np.eye(n)
    if negate and data.draw(st.booleans()):  # a negative determinant
        x[..., 0, :] *= -1
    return x.astype(dtype)


def orthogonal(data, batch, n) -> np.ndarray:
    """Random orthogonal matrices, from a drawn seed: generic ones (LAPACK's qr changes
    its signs, discontinuously, where a column below the diagonal is exactly 0)."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    return np.linalg.qr(rng.standard_normal((*batch, n, n)))[0]


def separated(data, k, low=-3.0) -> np.ndarray:
    """``k`` increasing values at least 1 apart."""
    start = data.draw(st.floats(low, low + 2))
    gaps = data.draw(st.lists(st.floats(1.0, 2.0), min_size=k, max_size=k))
    return start + np.cumsum(gaps)


def symmetric(data, dtype):
    batch, n = stack(data), side(data)
    q = orthogonal(data, batch, n)
    w = separated(data, n)
    return ((q * w) @ np.swapaxes(q, -1, -2)).astype(dtype)


def full_rank(data, dtype, square=False):
    """``u diag(s) v.T`` with singular values in [1, 10], at least 1 apart."""
    batch, m = stack(data), side(data)
    n = m if square else side(data)
    k = min(m, n)
    u = orthogonal(data, batch, m)[..., :k]
    v = orthogonal(data, batch, n)[..., :k]
    s = separated(data, k, low=0.0)
    return ((u * s) @ np.swapaxes(v, -1, -2)).astype(dtype)


def _one_full_rank(data, dtype):
    """``full_rank`` with one leading axis of 1: a stack of one matrix."""
    a = full_rank(data, dtype)
    return a.reshape((-1, *a.shape[-2:]))[:1]


# -- rows: (name, function, argument drawer) ---------------------------------------------------
def tall(data, dtype):
    """``[2 I; 0]`` plus a small generic (seeded) perturbation: each Householder step of
    LAPACK's qr meets a diagonal entry near 2 and a nonzero column below it, away from
    where it flips the signs of its factors (discontinuously)."""
    batch, m, n = stack(data), side(data), side(data)
    m, n = max(m, n), min(m, n)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = 2 * np.eye(m, n) + rng.uniform(-1, 1, (*batch, m, n)) / m
    return a.astype(dtype)


def wide(data, dtype):
    """``[2 I, 0]`` plus a small generic perturbation, with more columns than rows (``tall``
    transposed, for the QR of its first square block)."""
    return np.swapaxes(tall(data, dtype), -1, -2).copy()


def _vdot(data, dtype):
    n, k = side(data), side(data)
    shape = data.draw(st.sampled_from([(n * k,), (n, k)]))
    return draw(data, shape, dtype), draw(data, (n * k,), dtype)


def _ranked(ra, rb, scalars=False):
    """Operands for np.inner: matching last axes, other axes free."""

    def args(data, dtype):
        k = side(data)
        a = draw(data, [side(data) for _ in range(ra - 1)] + [k] if ra else [], dtype, scalars=True)
        b = draw(data, [side(data) for _ in range(rb - 1)] + [k] if rb else [], dtype, scalars=True)
        return a, b

    return args


def _any_two(ra, rb):
    def args(data, dtype):
        return (
            draw(data, [side(data) for _ in range(ra)], dtype),
            draw(data, [side(data) for _ in range(rb)], dtype),
        )

    return args


def _shapes(*shapes):
    """Operands of the given shapes; letters stand for one drawn size each."""

    def args(data, dtype):
        sizes = {}
        out = []
        for shape in shapes:
            dims = [d if isinstance(d, int) else sizes.setdefault(d, side(data)) for d in shape]
            out.append(draw(data, dims, dtype))
        return tuple(out)

    return args


def _tensordot_dynamic(data, dtype):
    i, j, k = side(data), side(data), side(data)
    a, b = draw(data, (i, j, k), dtype), draw(data, (j, k, i), dtype)
    axes = data.draw(
        st.sampled_from([0, ([1, 2], [0, 1]), ((0,), (2,)), (-1, 1), ([2, 0, 1], [1, 2, 0])])
    )
    return a, b, axes


def _einsum_dynamic(data, dtype):
    a, b = _shapes("ij", "jk")(data, dtype)
    subscripts = data.draw(st.sampled_from(["ij,jk->ik", "ij,jk->ki", "ij,jk", "ij,jk->"]))
    return subscripts, a, b


def _einsum_ellipsis(data, dtype):
    i, j, k, n = side(data), side(data), side(data), side(data)
    return draw(data, (n, 1, i, j), dtype), draw(data, (3, j, k), dtype)


def _matrices(dtype_fn):
    def args(data, dtype):
        return (dtype_fn(data, dtype),)

    return args


def _square(data, dtype, negate=False):
    n = side(data)
    return well_conditioned(data, (*stack(data), n, n), dtype, negate)


def _solve(data, dtype):
    n, k = side(data), side(data)
    batch = stack(data)
    a = well_conditioned(data, (*batch, n, n), dtype)
    b_batch = data.draw(st.sampled_from([batch, batch[1:], (1,) * len(batch)]))
    b_shape = data.draw(st.sampled_from([(n,), (*b_batch, n, k)]))
    return a, draw(data, b_shape, dtype)


def _gram(data, dtype):
    return (draw(data, (*stack(data), side(data), side(data)), dtype),)


def _spd(data, dtype):
    n = side(data)
    x = data.draw(values((*stack(data), n, n), UNIT, np.float64))
    return ((x @ np.swapaxes(x, -1, -2) + n * np.eye(n)).astype(dtype),)


def _diag_dynamic(data, dtype):
    v = draw(data, data.draw(st.sampled_from([(side(data),), (side(data), side(data))])), dtype)
    return v, data.draw(st.integers(-2, 2))


def _diagonal(rank):
    def args(data, dtype):
        return (draw(data, [side(data) for _ in range(rank)], dtype),)

    return args


def _diagonal_dynamic(data, dtype):
    a = draw(data, [side(data) for _ in range(data.draw(st.integers(2, 3)))], dtype)
    axis1, axis2 = data.draw(st.permutations(range(a.ndim)))[:2]
    axis1 -= data.draw(st.sampled_from([0, a.ndim]))  # sometimes negative
    return a, data.draw(st.integers(-2, 2)), axis1, axis2


def _triangle_dynamic(data, dtype):
    return draw(data, (*stack(data), side(data), side(data)), dtype), data.draw(st.integers(-2, 2))


ROWS = [
    # products
    ("np.vdot", fn.vdot, _vdot),
    ("np.inner-1d-1d", fn.inner, _ranked(1, 1)),
    ("np.inner-2d-2d", fn.inner, _ranked(2, 2)),
    ("np.inner-2d-1d", fn.inner, _ranked(2, 1)),
    ("np.inner-1d-2d", fn.inner, _ranked(1, 2)),
    ("np.inner-3d-2d", fn.inner, _ranked(3, 2)),
    ("np.inner-0d-2d", fn.inner, _ranked(0, 2)),
    ("np.outer-1d-1d", fn.outer, _any_two(1, 1)),
    ("np.outer-2d-1d", fn.outer, _any_two(2, 1)),
    ("np.kron-1d-1d", fn.kron, _any_two(1, 1)),
    ("np.kron-2d-2d", fn.kron, _any_two(2, 2)),
    ("np.kron-1d-3d", fn.kron, _any_two(1, 3)),
    ("np.tensordot", fn.tensordot_default, _shapes("ijk", "jkl")),
    ("np.tensordot-0", fn.tensordot_0, _any_two(1, 2)),
    ("np.tensordot-1", fn.tensordot_1, _shapes("ij", "jk")),
    ("np.tensordot-pairs", fn.tensordot_pairs, _shapes("ijk", "jli")),
    ("np.tensordot-ints", fn.tensordot_ints, _shapes("ij", "ki")),
    ("np.tensordot-negative", fn.tensordot_negative, _shapes("ij", "jk")),
    ("np.tensordot-dynamic", fn.tensordot_dynamic, _tensordot_dynamic),
    # einsum
    ("einsum-matmul", fn.einsum_matmul, _shapes("ij", "jk")),
    ("einsum-transpose", fn.einsum_transpose, _shapes("ij")),
    ("einsum-trace", fn.einsum_trace, _shapes("ii")),
    ("einsum-diagonal", fn.einsum_diagonal, _shapes("ii")),
    ("einsum-sum", fn.einsum_sum_rows, _shapes("ij")),
    ("einsum-rowwise-dot", fn.einsum_rowwise_dot, _shapes("ij", "ij")),
    ("einsum-broadcast-1", fn.einsum_rowwise_dot, _shapes("ij", (1, "j"))),
    ("einsum-outer", fn.einsum_outer, _shapes("i", "j")),
    ("einsum-batched", fn.einsum_batched, _shapes("bij", "bjk")),
    ("einsum-three", fn.einsum_three, _shapes("ij", "jk", "k")),
    ("einsum-implicit", fn.einsum_implicit, _shapes("ij", "jk")),
    ("einsum-ellipsis", fn.einsum_ellipsis, _einsum_ellipsis),
    ("einsum-same-operand", fn.einsum_same_operand, _shapes("ij")),
    ("einsum-optimize", fn.einsum_optimize, _shapes("ij", "jk", "kl")),
    ("einsum-dynamic", fn.einsum_dynamic, _einsum_dynamic),
    # numpy.linalg
    ("inv", fn.inv, _matrices(_square)),
    ("solve", fn.solve, _solve),
    ("det", fn.det, _matrices(lambda d, t: _square(d, t, negate=True))),
    ("slogdet", fn.slogdet_logdet, _matrices(lambda d, t: _square(d, t, negate=True))),
    ("slogdet-sign-times", fn.slogdet_both, _matrices(lambda d, t: _square(d, t, negate=True))),
    ("slogdet-index", fn.slogdet_index, _matrices(_square)),
    ("slogdet-.logabsdet", fn.slogdet_attribute, _matrices(_square)),
    ("cholesky-gram", fn.cholesky_gram, _gram),
    ("cholesky-symmetrised", fn.cholesky_symmetrised, _spd),
    ("eigh-values", fn.eigh_values, _matrices(symmetric)),
    ("eigh-vectors", fn.eigh_vectors, _matrices(symmetric)),
    ("eigh-UPLO-index", fn.eigh_upper_index, _matrices(symmetric)),
    ("eigh-attributes", fn.eigh_attributes, _matrices(symmetric)),
    ("svd-values", fn.svd_values, _matrices(full_rank)),
    ("svd-vectors", fn.svd_vectors, _matrices(full_rank)),
    ("svd-square", fn.svd_square, _matrices(lambda d, t: full_rank(d, t, square=True))),
    ("svd-s-of-triple", fn.svd_values_of_triple, _matrices(full_rank)),
    ("qr-q", fn.qr_q, _matrices(tall)),
    ("qr-r", fn.qr_r, _matrices(tall)),
    ("qr-both", fn.qr_both, _matrices(tall)),
    ("qr-wide-q", fn.qr_q, _matrices(wide)),
    ("qr-wide-r", fn.qr_r, _matrices(wide)),
    ("qr-wide-both", fn.qr_both, _matrices(wide)),
    ("pinv", fn.pinv, _matrices(full_rank)),
    # matrix norms of the singular values
    ("norm-ord-2", fn.norm_spectral, _matrices(full_rank)),
    ("norm-ord-2-transposed", fn.norm_spectral_transposed, _matrices(full_rank)),
    ("norm-ord--2", fn.norm_smallest, _matrices(full_rank)),
    ("norm-nuc", fn.norm_nuclear, _matrices(full_rank)),
    ("norm-2-and-nuc-of-one-matrix", fn.norm_of_matrix, _matrices(_one_full_rank)),
    # diagonals and triangles
    ("np.diag-vector", fn.diag, _diagonal(1)),
    ("np.diag-matrix", fn.diag, _diagonal(2)),
    ("np.diag-k=1", fn.diag_above, _diagonal(1)),
    ("np.diag-k=-2-matrix", fn.diag_below, _shapes((3, "n"))),
    ("np.diag-dynamic", fn.diag_dynamic, _diag_dynamic),
    ("np.diagonal", fn.diagonal, _diagonal(2)),
    ("np.diagonal-axes", fn.diagonal_axes, _diagonal(3)),
    ("np.diagonal-negative-axes", fn.diagonal_negative_axes, _diagonal(4)),
    ("np.diagonal-dynamic", fn.diagonal_dynamic, _diagonal_dynamic),
    (".diagonal()", fn.method_diagonal, _diagonal(3)),
    ("np.triu", fn.triu, _diagonal(2)),
    ("np.tril-k=-1", fn.tril, _diagonal(3)),
    ("np.triu-dynamic", fn.triu_dynamic, _triangle_dynamic),
    ("np.tril-dynamic", fn.tril_dynamic, _triangle_dynamic),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, func, args", ROWS, ids=[row[0] for row in ROWS])
@given(data=st.data())
def test_linalg(name, func, args, dtype, data):
    check(func, args(data, dtype))


# -- conventions (documented in linalg.py) -------------------------------------------------------
def both_modes(func, x):
    """The gradient of ``sum(func(x))`` by reverse mode and, element by element, forward mode."""
    out = func(x)
    reverse = srcgrad.vjp(func)(x, np.ones_like(out))
    forward = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        tangent = np.zeros_like(x)
        tangent[index] = 1.0
        forward[index] = np.sum(srcgrad.jvp(func)(x, tangent)[1])
    return forward, reverse


@pytest.mark.parametrize("func", [fn.eigh_values, fn.svd_values, fn.svd_values_of_triple])
def test_repeated_eigenvalues_alone_are_fine(func):
    # the sum of the eigenvalues (singular values) of an SPD matrix is its trace
    forward, reverse = both_modes(func, np.eye(3))
    np.testing.assert_allclose(forward, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(reverse, np.eye(3), atol=1e-12)


def eigh_of_argument(a):
    return np.linalg.eigh(a)[0]


def cholesky_of_argument(a):
    return np.linalg.cholesky(a)


@pytest.mark.parametrize("func", [eigh_of_argument, cholesky_of_argument])
def test_symmetric_convention(func):
    # numpy reads the lower triangle; the derivative treats the input as symmetric
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    g = srcgrad.vjp(func)(a, np.arange(1.0, 4.0) if func is eigh_of_argument else np.tril(a))
    np.testing.assert_allclose(g, g.T)
    upper = np.triu(np.ones((3, 3)), 1)
    _, t_upper = srcgrad.jvp(func)(a, upper)
    _, t_lower = srcgrad.jvp(func)(a, upper.T)
    np.testing.assert_allclose(t_upper, t_lower)


def test_slogdet_sign_has_no_derivative():
    a = np.array([[0.0, 2.0], [1.0, 0.5]])  # negative determinant
    _, tangent = srcgrad.jvp(fn.slogdet_both)(a, np.ones_like(a))
    np.testing.assert_allclose(tangent, -np.trace(np.linalg.solve(a, np.ones_like(a))))


# -- what is not differentiated: clear errors ---------------------------------------------
def svd_full(a):
    return np.linalg.svd(a)[0]


def svd_full_vh(a):
    return np.linalg.svd(a)[2][-1]


def qr_complete(a):
    return np.linalg.qr(a, mode="complete")[0]


def cholesky_upper(a):
    return np.linalg.cholesky(a, upper=True)


@pytest.mark.parametrize(
    "func, shape, error, match",
    [
        (svd_full, (3, 2), NotImplementedError, "full_matrices=False"),
        (svd_full_vh, (2, 3), NotImplementedError, "full_matrices=False"),
        # (these two once gave a silent zero derivative: a call breaking a rule's fixed
        # argument had no differentiable arguments in analyze's Op.diff_args)
        (qr_complete, (3, 3), srcgrad.errors.NoDerivativeError, "mode='reduced'"),
        (cholesky_upper, (2, 2), srcgrad.errors.NoDerivativeError, "upper=False"),
    ],
    ids=["svd-full-matrices", "svd-full-matrices-vh", "qr-complete", "cholesky-upper"],
)
def test_unsupported(func, shape, error, match):
    a = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) + np.eye(*shape)
    with pytest.raises(error, match=match):
        srcgrad.vjp(func)(a, np.ones_like(func(a)))


@pytest.mark.parametrize("shape", [(4, 2), (2, 3), (2, 4, 3)])
def test_svd_full_matrices_where_the_extra_vectors_are_unused(shape):
    """Reverse mode differentiates svd(a) (full_matrices=True) of a non-square matrix where
    only ``s`` and the first k singular vectors are used, as full_matrices=False; forward
    mode cannot tell what is used, and refuses it."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape)
    dout = rng.standard_normal(fn.svd_thin_leading(a).shape)
    expected = srcgrad.vjp(fn.svd_thin_leading)(a, dout)
    np.testing.assert_allclose(srcgrad.vjp(fn.svd_full_leading)(a, dout), expected)
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        srcgrad.jvp(fn.svd_full_leading)(a, np.ones_like(a))


def eig_values_real(a):
    w, v = np.linalg.eig(a)
    return np.sum(w.real)


def eigvals_abs(a):
    return np.abs(np.linalg.eigvals(a))


def eig_attribute_of_symmetric(a):
    return np.real(np.linalg.eig(a @ a.T).eigenvalues)


@pytest.mark.parametrize("func", [eig_values_real, eigvals_abs, eig_attribute_of_symmetric])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_eig_of_an_active_matrix_is_refused(func, mode):
    """np.linalg.eig and eigvals return complex numbers, which srcgrad does not
    differentiate yet: a clear error (pointing to eigh), never a number, even where the
    eigenvalues happen to be real."""
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    with pytest.raises(srcgrad.errors.UnsupportedSyntaxError, match="complex.*eigh"):
        if mode == "reverse":
            srcgrad.vjp(func)(a, np.ones_like(np.real(func(a))))
        else:
            srcgrad.jvp(func)(a, np.ones_like(a))


def fill_diagonal_in_place(x):
    a = np.ones((3, 3))
    np.fill_diagonal(a, x)
    return a


def diagonal_written(x):
    a = np.ones((3, 3))
    k = min(a.shape)
    a[np.arange(k), np.arange(k)] = x
    return a


def diagonal_replaced(x):
    a = np.ones((3, 3))
    return a - np.diag(np.diag(a)) + np.diag(x)


def test_fill_diagonal_is_refused_with_what_to_write_instead():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(srcgrad.errors.UnsupportedSyntaxError, match=r"a\[np.arange\(k\)"):
        srcgrad.jvp(fill_diagonal_in_place)(x, np.ones(3))
    expected = fill_diagonal_in_place(x)
    for func in (diagonal_written, diagonal_replaced):  # what the message says to write
        np.testing.assert_allclose(func(x), expected)
        check(func, (x,))
