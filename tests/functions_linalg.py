"""Small user-style functions, one per rule (or variant of a rule) in
``srcgrad/rules/linalg.py``. ``tests/test_rules_linalg.py`` differentiates them.

Functions of symmetric matrices (cholesky, eigh) build or symmetrise their
matrix themselves, so finite differences in any direction stay symmetric;
functions of eigen- and singular vectors use them only through quantities
that do not depend on their sign (``v ** 2``).
"""

import numpy as np

# -- products ------------------------------------------------------------------------------


def vdot(a, b):
    return np.vdot(a, b)


def inner(a, b):
    return np.inner(a, b)


def outer(a, b):
    return np.outer(a, b)


def kron(a, b):
    return np.kron(a, b)


def tensordot_default(a, b):
    return np.tensordot(a, b)


def tensordot_0(a, b):
    return np.tensordot(a, b, 0)


def tensordot_1(a, b):
    return np.tensordot(a, b, axes=1)


def tensordot_pairs(a, b):
    return np.tensordot(a, b, axes=([1, 0], [0, 2]))


def tensordot_ints(a, b):
    return np.tensordot(a, b, axes=(0, 1))


def tensordot_negative(a, b):
    return np.tensordot(a, b, axes=([-1], [-2]))


def tensordot_dynamic(a, b, axes):
    return np.tensordot(a, b, axes)


# -- einsum --------------------------------------------------------------------------------


def einsum_matmul(a, b):
    return np.einsum("ij,jk->ik", a, b)


def einsum_transpose(a):
    return np.einsum("ij->ji", a)


def einsum_trace(a):
    return np.einsum("ii->", a)


def einsum_diagonal(a):
    return np.einsum("ii->i", a)


def einsum_sum_rows(a):
    return np.einsum("ij->i", a)


def einsum_rowwise_dot(a, b):
    return np.einsum("ij,ij->i", a, b)


def einsum_outer(a, b):
    return np.einsum("i,j->ij", a, b)


def einsum_batched(a, b):
    return np.einsum("bij,bjk->bik", a, b)


def einsum_three(a, b, c):
    return np.einsum("ij,jk,k->i", a, b, c)


def einsum_implicit(a, b):
    return np.einsum("ij,jk", a, b)


def einsum_ellipsis(a, b):
    return np.einsum("...ij,...jk->...ik", a, b)


def einsum_same_operand(a):
    return np.einsum("ij,ij->", a, a)


def einsum_optimize(a, b, c):
    return np.einsum("ij,jk,kl->il", a, b, c, optimize=True)


def einsum_dynamic(subscripts, a, b):
    return np.einsum(subscripts, a, b)


# -- numpy.linalg --------------------------------------------------------------------------


def inv(a):
    return np.linalg.inv(a)


def solve(a, b):
    return np.linalg.solve(a, b)


def det(a):
    return np.linalg.det(a)


def slogdet_logdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet


def slogdet_both(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * logdet


def slogdet_index(a):
    return np.linalg.slogdet(a)[1]


def slogdet_attribute(a):
    return np.linalg.slogdet(a).logabsdet


def cholesky_gram(x):
    a = x @ np.einsum("...ij->...ji", x)
    return np.linalg.cholesky(a + x.shape[-1] * np.eye(x.shape[-2], dtype=x.dtype))


def cholesky_symmetrised(a):
    return np.linalg.cholesky((a + np.einsum("...ij->...ji", a)) / 2)


def eigh_values(a):
    w, v = np.linalg.eigh((a + np.einsum("...ij->...ji", a)) / 2)
    return w


def eigh_vectors(a):
    w, v = np.linalg.eigh((a + np.einsum("...ij->...ji", a)) / 2)
    return v**2 * w[..., None, :]


def eigh_upper_index(a):
    return np.linalg.eigh((a + np.einsum("...ij->...ji", a)) / 2, UPLO="U")[0]


def eigh_attributes(a):
    result = np.linalg.eigh((a + np.einsum("...ij->...ji", a)) / 2)
    return result.eigenvectors**2 + result.eigenvalues[..., None]


def svd_values(a):
    return np.linalg.svd(a, compute_uv=False)


def svd_vectors(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return u**2 @ (s[..., None] * vt**2)


def svd_square(a):
    u, s, vt = np.linalg.svd(a)
    return u**2 @ (s[..., None] * vt**2)


def svd_values_of_triple(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return s


def svd_full_leading(a):
    """``full_matrices=True`` (the default), using only what has a derivative."""
    u, s, vt = np.linalg.svd(a)
    k = min(a.shape[-2:])
    return u[..., :, :k] ** 2 @ (s[..., None] * vt[..., :k, :] ** 2)


def svd_thin_leading(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return u**2 @ (s[..., None] * vt**2)


def norm_spectral(a):
    return np.linalg.norm(a, 2, axis=(-2, -1))


def norm_spectral_transposed(a):
    return np.linalg.norm(a, ord=2, axis=(-1, -2), keepdims=True)


def norm_smallest(a):
    return np.linalg.norm(a, -2, axis=(-2, -1))


def norm_nuclear(a):
    return np.linalg.norm(a, "nuc", axis=(-2, -1))


def norm_of_matrix(a):
    return np.linalg.norm(a[..., 0, :, :], 2) + np.linalg.norm(a[..., 0, :, :], "nuc")


def qr_q(a):
    q, r = np.linalg.qr(a)
    return q


def qr_r(a):
    return np.linalg.qr(a)[1]


def qr_both(a):
    q, r = np.linalg.qr(a, mode="reduced")
    return q @ (r * r)


def pinv(a):
    return np.linalg.pinv(a)


# -- diagonals and triangles ------------------------------------------------------------------


def diag(v):
    return np.diag(v)


def diag_above(v):
    return np.diag(v, 1)


def diag_below(v):
    return np.diag(v, k=-2)


def diag_dynamic(v, k):
    return np.diag(v, k)


def diagonal(a):
    return np.diagonal(a)


def diagonal_axes(a):
    return np.diagonal(a, 1, 2, 0)


def diagonal_negative_axes(a):
    return np.diagonal(a, offset=-1, axis1=-1, axis2=-2)


def diagonal_dynamic(a, offset, axis1, axis2):
    return np.diagonal(a, offset, axis1, axis2)


def method_diagonal(a):
    return a.diagonal(-1)


def triu(m):
    return np.triu(m)


def tril(m):
    return np.tril(m, -1)


def triu_dynamic(m, k):
    return np.triu(m, k)


def tril_dynamic(m, k):
    return np.tril(m, k=k)
