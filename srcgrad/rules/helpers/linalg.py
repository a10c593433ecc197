"""Runtime helpers of the rules for linear algebra (``srcgrad/rules/linalg.py``).

Like those of :mod:`srcgrad.runtime`, each is copied as source into the generated
modules that call it (with ``np`` bound to their array module): a plain function of
arrays and Python values that works on numpy and cupy alike."""

import numpy as np

from ...runtime import unbroadcast
from .reductions import _diagonal_of_zeros, prod_others

# Helpers of srcgrad/rules/linalg.py. Matrices may come in stacks (the last two axes).


def mT(x):
    """The transpose of each matrix in a stack: the last two axes swapped."""
    return np.swapaxes(x, -1, -2)


def sym_part(x):
    """The symmetric part of each matrix in a stack."""
    return (x + mT(x)) / 2


def eye_like(x):
    """The identity matrix, as large as the last axis of ``x``, of its dtype."""
    return np.eye(np.shape(x)[-1], dtype=x.dtype)


def adjugate(a):
    """The adjugate of each square matrix in a stack: ``det(a) * inv(a)`` where ``a`` is
    invertible, and the transposed matrix of cofactors (the derivative of ``det``) also
    where it is singular. From the SVD ``a = u s vh``: ``adj(a) = det(u) det(vh) vh.T
    diag(p) u.T`` with ``p[i]`` the product of the singular values but the i-th (no
    division)."""
    u, s, vh = np.linalg.svd(a)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return sign[..., None, None] * (mT(vh) * prod_others(s, axis=-1)[..., None, :]) @ mT(u)


def adjugate_jvp(g, a):
    """Tangent of ``adjugate(a)`` for the tangent ``g`` of ``a``, also where ``a`` is
    singular. With ``a = u s vh`` and ``f = u.T g vh.T``, the tangent of the adjugate of
    ``diag(s)`` is ``-f[i, j] * q[i, j]`` off the diagonal and ``sum(f[k, k] * q[i, k]
    for k != i)`` on it, ``q[i, k]`` the product of the singular values but the i-th and
    the k-th; it maps back as the adjugate does."""
    u, s, vh = np.linalg.svd(a)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    eye = eye_like(a) != 0
    q = prod_others(np.where(eye, 1, s[..., None, :]), axis=-1)
    f = mT(u) @ g @ mT(vh)
    diagonal = np.sum(np.where(eye, 0, np.diagonal(f, 0, -2, -1)[..., None, :] * q), axis=-1)
    d = np.where(eye, diagonal[..., :, None], -f * q)
    return sign[..., None, None] * (mT(vh) @ d @ mT(u))


def inner_vjp_a(g, a, b):
    """Adjoint of ``a`` in ``np.inner(a, b)``: ``g`` contracted with ``b``'s leading axes."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    na, nb = np.ndim(a) - 1, np.ndim(b) - 1
    return np.tensordot(g, b, axes=(list(range(na, na + nb)), list(range(nb))))


def inner_vjp_b(g, a, b):
    """Adjoint of ``b`` in ``np.inner(a, b)``: ``g`` contracted with ``a``'s leading axes."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    na = np.ndim(a) - 1
    return np.tensordot(g, a, axes=(list(range(na)), list(range(na))))


def _tensordot_axes(axes, na, nb):
    """The axes ``np.tensordot(a, b, axes)`` sums over, as two lists of non-negative ints."""
    if np.ndim(axes) == 0:
        return list(range(na - axes, na)), list(range(axes))
    xa, xb = axes
    xa = [xa] if np.ndim(xa) == 0 else list(xa)
    xb = [xb] if np.ndim(xb) == 0 else list(xb)
    return [int(i) % na for i in xa], [int(i) % nb for i in xb]


def tensordot_vjp_a(g, a, b, axes):
    """Adjoint of ``a`` in ``np.tensordot(a, b, axes)``: ``g`` contracted with ``b``'s
    free axes, the contracted axes put back where ``a`` had them."""
    xa, xb = _tensordot_axes(axes, np.ndim(a), np.ndim(b))
    free_a = [i for i in range(np.ndim(a)) if i not in xa]
    free_b = [i for i in range(np.ndim(b)) if i not in xb]
    g_b = list(range(len(free_a), len(free_a) + len(free_b)))
    out = np.tensordot(g, b, axes=(g_b, free_b))
    order = free_a + [xa[xb.index(j)] for j in sorted(xb)]  # the axis of a each axis is
    return np.transpose(out, [order.index(i) for i in range(np.ndim(a))])


def tensordot_vjp_b(g, a, b, axes):
    """Adjoint of ``b`` in ``np.tensordot(a, b, axes)``."""
    xa, xb = _tensordot_axes(axes, np.ndim(a), np.ndim(b))
    free_a = [i for i in range(np.ndim(a)) if i not in xa]
    out = np.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))
    order = [xb[xa.index(i)] for i in sorted(xa)]
    order += [i for i in range(np.ndim(b)) if i not in xb]
    return np.transpose(out, [order.index(i) for i in range(np.ndim(b))])


def _einsum_labels(subscripts, ndims):
    """``subscripts`` in explicit form, one list of labels per operand and one for
    the output, with every ``...`` spelled out as labels of its own."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    ins = ins.split(",")
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    spare = [c for c in letters if c not in subscripts]
    ellipsis = max(
        [n - len(s.replace("...", "")) for s, n in zip(ins, ndims) if "..." in s], default=0
    )
    dots = spare[len(spare) - ellipsis :]  # broadcast axes, aligned at the right

    def spell(s, n):
        if "..." not in s:
            return list(s)
        head, tail = s.split("...")
        return list(head) + dots[len(dots) - (n - len(head) - len(tail)) :] + list(tail)

    labels = [spell(s, n) for s, n in zip(ins, ndims)]
    if out is None:  # implicit mode: broadcast axes, then labels used once, sorted
        counts = [c for s in ins for c in s.replace("...", "")]
        out = "..." + "".join(sorted(c for c in set(counts) if counts.count(c) == 1))
    out = spell(out, len(dots) + len(out.replace("...", "")))
    return labels, out, spare[: len(spare) - ellipsis]


def einsum_vjp(g, subscripts, i, *operands):
    """Adjoint of operand ``i`` of ``np.einsum(subscripts, *operands)``: an einsum of
    ``g`` and the other operands. A label repeated in operand ``i`` (a diagonal)
    is tied to its copy by an identity matrix; a label nowhere else (a sum over
    it, or a size-1 axis that broadcast) is broadcast back afterwards."""
    labels, out, spare = _einsum_labels(subscripts, [np.ndim(x) for x in operands])
    x = operands[i]
    shape = np.shape(x)
    terms = [(labels[j], y) for j, y in enumerate(operands) if j != i] + [(out, g)]
    sizes = {}
    for subs, y in terms:
        for label, n in zip(subs, np.shape(y)):
            sizes[label] = max(n, sizes.get(label, 1))
    target = []
    for label, n in zip(labels[i], shape):
        if label in target:  # a diagonal: a new label, tied to the first by an identity
            new = spare.pop()
            terms.append(([label, new], np.eye(n, dtype=np.result_type(g))))
            target.append(new)
        elif n == 1 and sizes.get(label, 1) > 1:  # broadcast in the primal: summed here
            target.append(spare.pop())
        else:
            target.append(label)
    present = {label for subs, _ in terms for label in subs}
    kept = "".join(label for label in target if label in present)
    spec = ",".join("".join(subs) for subs, _ in terms) + "->" + kept
    result = np.einsum(spec, *[y for _, y in terms])
    if len(kept) < len(target):  # summed over in the primal: the same adjoint everywhere
        result = np.reshape(result, [n if t in present else 1 for t, n in zip(target, shape)])
        result = np.broadcast_to(result, shape)
    return result


def _interleave(sa, sb):
    return [d for pair in zip(sa, sb) for d in pair]


def kron_vjp(g, a, b, which):
    """Adjoint of ``a`` (``which`` 0) or ``b`` (1) in ``np.kron(a, b)``: ``g`` seen as
    blocks ``a[i] * b``, contracted with the other operand."""
    n = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (n - np.ndim(a)) + tuple(np.shape(a))
    sb = (1,) * (n - np.ndim(b)) + tuple(np.shape(b))
    blocks = np.reshape(g, _interleave(sa, sb))  # axes a0 b0 a1 b1...
    x, other, shape = (a, b, sb) if which == 0 else (b, a, sa)
    axes = list(range(1 - which, 2 * n, 2))  # the other operand's axes among the blocks'
    out = np.tensordot(blocks, np.reshape(other, shape), axes=(axes, list(range(n))))
    return np.reshape(out, np.shape(x))


def diagonal_adjoint(g, x, offset=0, axis1=0, axis2=1):
    """Adjoint of ``np.diagonal(x, offset, axis1, axis2)`` (and of ``np.diag`` of a
    matrix): ``g`` written on that diagonal of zeros shaped like ``x``."""
    return _diagonal_of_zeros(g, x, offset, axis1, axis2)


def solve_jvp_a(g, a, b, ans):
    """Tangent of ``np.linalg.solve(a, b)`` in ``a``: ``-solve(a, da @ x)``."""
    if np.ndim(b) == 1:  # b a vector (numpy's rule), a perhaps a stack
        return -np.linalg.solve(a, g @ ans[..., None])[..., 0]
    return -np.linalg.solve(a, g @ ans)


def solve_vjp_b(g, a, b):
    """Adjoint of ``b`` in ``np.linalg.solve(a, b)``: a solve with the transpose of ``a``."""
    if np.ndim(b) == 1:
        return unbroadcast(np.linalg.solve(mT(a), g[..., None])[..., 0], b)
    return unbroadcast(np.linalg.solve(mT(a), g), b)


def solve_vjp_a(g, a, b, ans):
    """Adjoint of ``a`` in ``np.linalg.solve(a, b)``: ``-solve(a.T, g) @ x.T``."""
    if np.ndim(b) == 1:
        g, ans = g[..., None], ans[..., None]
    return unbroadcast(-np.linalg.solve(mT(a), g) @ mT(ans), a)


def _lower_half_diagonal(x):
    """The lower triangle of each matrix, its diagonal halved."""
    return np.tril(x) - np.tril(np.triu(x)) / 2


def cholesky_jvp(g, ans):
    """Tangent of ``L = np.linalg.cholesky(a)``: ``L Φ(L⁻¹ sym(da) L⁻ᵀ)``, with Φ the
    lower triangle, diagonal halved."""
    x = np.linalg.solve(ans, sym_part(g))
    return ans @ _lower_half_diagonal(np.linalg.solve(ans, mT(x)))


def cholesky_vjp(g, ans):
    """Adjoint of ``a`` in ``L = np.linalg.cholesky(a)``: ``sym(L⁻ᵀ Φ(Lᵀ g) L⁻¹)``."""
    x = np.linalg.solve(mT(ans), _lower_half_diagonal(mT(ans) @ g))
    return sym_part(mT(np.linalg.solve(mT(ans), mT(x))))


def _inverse_gaps(w):
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it (for eigh and svd)."""
    gaps = w[..., None, :] - w[..., :, None]
    eye = np.eye(np.shape(w)[-1], dtype=bool)
    return np.where(eye, 0.0, 1 / np.where(eye, 1.0, gaps)).astype(w.dtype)


def eigh_jvp(g, ans):
    """Tangent of ``w, v = np.linalg.eigh(a)``: ``dw = diag(vᵀ da v)``,
    ``dv = v (F ∘ vᵀ da v)`` with ``F[i, j] = 1 / (w[j] - w[i])`` (da symmetrised)."""
    w, v = ans
    vt_da_v = mT(v) @ sym_part(g) @ v
    return np.diagonal(vt_da_v, axis1=-2, axis2=-1).copy(), v @ (_inverse_gaps(w) * vt_da_v)


def eigh_vjp(g, ans):
    """Adjoint of ``a`` in ``w, v = np.linalg.eigh(a)``: ``sym(v (diag(gw) + F ∘ vᵀ gv) vᵀ)``."""
    w, v = ans
    gw, gv = g
    inner = gw[..., None] * eye_like(v)
    if np.any(gv):  # eigenvalues alone: no gaps, so repeated eigenvalues are fine
        inner = inner + _inverse_gaps(w) * (mT(v) @ gv)
    return sym_part(v @ inner @ mT(v))


def _svd_full_matrices(m, n):
    return NotImplementedError(
        f"the last {abs(m - n)} {'columns of u' if m > n else 'rows of vh'} that "
        f"np.linalg.svd(a, full_matrices=True) gives for an {m}x{n} matrix are any "
        "orthonormal basis of the rest of the space: they have no derivative. Pass "
        "full_matrices=False, which gives the same singular values and the first "
        f"{min(m, n)} singular vectors ({'u[:, :k]' if m > n else 'vh[:k]'}), and use those"
    )


def _svd_shape(a, full_matrices):
    """The shape of each matrix; an error for full_matrices=True with m != n (forward mode
    cannot tell whether the extra singular vectors, which have no derivative, are used)."""
    m, n = np.shape(a)[-2:]
    if full_matrices and m != n:
        raise _svd_full_matrices(m, n)
    return m, n


def svd_jvp(g, a, ans, full_matrices=True, compute_uv=True):
    """Tangent of ``np.linalg.svd(a)``: ``(du, ds, dvh)``, or ``ds`` for ``compute_uv=False``
    (JAX's rule: ``ds = diag(uᵀ da v)``, ``F[i, j] = 1 / (s[j]² - s[i]²)``)."""
    if not compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return np.diagonal(mT(u) @ g @ mT(vh), axis1=-2, axis2=-1).copy()
    m, n = _svd_shape(a, full_matrices)
    u, s, vh = ans
    v = mT(vh)
    ds_mat = mT(u) @ g @ v
    ds = np.diagonal(ds_mat, axis1=-2, axis2=-1).copy()
    f = _inverse_gaps(s * s)
    col = s[..., None, :]  # s[j] in column j
    du = u @ (f * (ds_mat * col + mT(ds_mat * col)))
    dv = v @ (f * (mT(col) * ds_mat + mT(mT(col) * ds_mat)))
    if m > n:
        ga_v = g @ v
        du = du + (ga_v - u @ (mT(u) @ ga_v)) / col
    if n > m:
        ga_u = mT(g) @ u
        dv = dv + (ga_u - v @ (mT(v) @ ga_u)) / col
    return du, ds, mT(dv)


def svd_vjp(g, a, ans, full_matrices=True, compute_uv=True):
    """Adjoint of ``a`` in ``np.linalg.svd(a)`` (Townsend, "Differentiating the
    singular value decomposition", 2016, real case)."""
    if not compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return (u * g[..., None, :]) @ vh
    m, n = np.shape(a)[-2:]
    u, s, vh = ans
    gu, gs, gvh = g
    if full_matrices and m != n:  # fine where the extra singular vectors are not used
        k = min(m, n)
        if np.any(gu[..., :, k:]) or np.any(gvh[..., k:, :]):
            raise _svd_full_matrices(m, n)
        u, vh, gu, gvh = u[..., :, :k], vh[..., :k, :], gu[..., :, :k], gvh[..., :k, :]
    if not (np.any(gu) or np.any(gvh)):  # singular values alone: fine where repeated
        return (u * gs[..., None, :]) @ vh
    v, gv = mT(vh), mT(gvh)
    f = _inverse_gaps(s * s)
    col = s[..., None, :]
    ut_gu = mT(u) @ gu
    vt_gv = mT(v) @ gv
    inner = (
        gs[..., None] * eye_like(u)
        + (f * (ut_gu - mT(ut_gu))) * col
        + mT(col) * (f * (vt_gv - mT(vt_gv)))
    )
    out = u @ inner @ vh
    if m > n:
        out = out + ((gu - u @ ut_gu) / col) @ vh
    if n > m:
        out = out + (u / col) @ (mT(gv) - mT(gv) @ v @ vh)
    return out


def _times_inverse(x, r):
    """``x @ inv(r)``, by a solve: ``(r⁻ᵀ xᵀ)ᵀ``."""
    return mT(np.linalg.solve(mT(r), mT(x)))


def _qr_square_jvp(g, q, r):
    """Tangent of ``q, r = qr(x)`` for ``x`` with at least as many rows as columns (``r``
    square; JAX's rule)."""
    da_rinv = _times_inverse(g, r)
    qt_da_rinv = mT(q) @ da_rinv
    lower = np.tril(qt_da_rinv, -1)
    skew = lower - mT(lower)
    return q @ (skew - qt_da_rinv) + da_rinv, (qt_da_rinv - skew) @ r


def _qr_square_vjp(gq, gr, q, r):
    """Adjoint of ``x`` in ``q, r = qr(x)`` (``r`` square): ``(gq + q copyltu(M)) r⁻ᵀ``
    with ``M = r grᵀ - gqᵀ q`` and copyltu the symmetric matrix of M's lower triangle."""
    m = r @ mT(gr) - mT(gq) @ q
    lower = np.tril(m, -1)
    copyltu = lower + mT(lower) + np.tril(np.triu(m))
    return _times_inverse(gq + q @ copyltu, mT(r))


def qr_jvp(g, a, ans):
    """Tangent of ``q, r = np.linalg.qr(a)`` (reduced). With more columns than rows, ``a =
    [x, y]`` with ``x`` square: ``q, r[:, :m]`` are the QR of ``x``, and ``r[:, m:] = qᵀ y``
    (Roberts and Roberts, "QR and LQ decomposition matrix backpropagation algorithms for
    square, wide, and deep matrices", 2020)."""
    m, n = np.shape(a)[-2:]
    q, r = ans
    if m >= n:
        return _qr_square_jvp(g, q, r)
    dq, dr_x = _qr_square_jvp(g[..., :, :m], q, r[..., :, :m])
    dr_y = mT(dq) @ a[..., :, m:] + mT(q) @ g[..., :, m:]
    return dq, np.concatenate([dr_x, dr_y], axis=-1)


def qr_vjp(g, a, ans):
    """Adjoint of ``a`` in ``q, r = np.linalg.qr(a)`` (reduced; see ``qr_jvp`` for more
    columns than rows: ``r[:, m:] = qᵀ y`` adds ``y gr[:, m:]ᵀ`` to q's adjoint)."""
    m, n = np.shape(a)[-2:]
    q, r = ans
    gq, gr = g
    if m >= n:
        return _qr_square_vjp(gq, gr, q, r)
    y, gr_y = a[..., :, m:], gr[..., :, m:]
    gx = _qr_square_vjp(gq + y @ mT(gr_y), gr[..., :, :m], q, r[..., :, :m])
    return np.concatenate([gx, q @ gr_y], axis=-1)


def pinv_jvp(g, a, ans):
    """Tangent of ``p = np.linalg.pinv(a)`` where the rank of ``a`` does not change:
    ``-p da p + p pᵀ daᵀ (I - a p) + (I - p a) daᵀ pᵀ p``."""
    gt, pt = mT(g), mT(ans)
    first = ans @ (pt @ (gt - gt @ a @ ans))
    second = (gt - ans @ (a @ gt)) @ (pt @ ans)
    return -ans @ g @ ans + first + second


def pinv_vjp(g, a, ans):
    """Adjoint of ``a`` in ``p = np.linalg.pinv(a)`` (constant rank):
    ``-pᵀ g pᵀ + (I - a p) gᵀ p pᵀ + pᵀ p gᵀ (I - p a)``."""
    gt, pt = mT(g), mT(ans)
    first = (gt - a @ (ans @ gt)) @ (ans @ pt)
    second = (pt @ ans) @ (gt - gt @ ans @ a)
    return -pt @ g @ pt + first + second
