"""Runtime helpers of the SciPy rules (``srcgrad/rules/scipy_stats.py``,
``scipy_special.py``, ``scipy_linalg.py``).

Like :func:`srcgrad.runtime.digamma`, a helper that calls SciPy imports it when first
called, so srcgrad and the modules it generates import without SciPy. Each is copied as
source into the generated modules that call it."""

import numpy as np

from ...runtime import unbroadcast
from .linalg import cholesky_jvp, cholesky_vjp, eye_like


def gammaln(x):
    """``scipy.special.gammaln(x)``, the log of the gamma function (the normalising
    constants of the t and gamma densities)."""
    from scipy.special import gammaln as log_gamma

    return log_gamma(x)


def betaln(a, b):
    """``scipy.special.betaln(a, b)``, the log of the beta function (the beta density)."""
    from scipy.special import betaln as log_beta

    return log_beta(a, b)


# -- scipy.stats.multivariate_normal ------------------------------------------------------
# SciPy reads cov as a matrix, a vector (its diagonal) or a number (times the identity),
# of the dimension of mean where mean is given; x holds one point per row of its
# flattening to that dimension (a 1-D x of dimension-1 points is one point per entry).


def mvn_matrix(cov, mean):
    """``cov`` as the covariance matrix SciPy reads it as."""
    if np.ndim(cov) == 2:
        return cov
    if np.ndim(cov) == 1:
        return np.diag(cov)
    return cov * np.eye(1 if mean is None else np.size(mean), dtype=np.result_type(cov, 1.0))


def mvn_whiten(x, mean, cov):
    """``inv(cov) @ (x - mean)`` for each point of ``x``, one per row."""
    c = mvn_matrix(cov, mean)
    r = np.reshape(x, (-1, np.shape(c)[-1]))
    if mean is not None:
        r = r - mean
    return mvn_swap(np.linalg.solve(c, mvn_swap(r)))


def mvn_swap(m):
    """The transpose of a matrix (a helper of its own, linear, for the rules of the others)."""
    return np.swapaxes(m, -1, -2)


def mvn_cov_jvp(g, s, cov, mean):
    """Tangent of ``multivariate_normal.logpdf`` for the tangent ``g`` of ``cov``, one entry
    per point (``s`` from ``mvn_whiten``): ``(s' e s - trace(inv(cov) e)) / 2`` with ``e``
    the symmetric part of ``g`` as a matrix."""
    e = mvn_matrix(g, mean)
    e = (e + mvn_swap(e)) / 2
    quadratic = np.sum((s @ e) * s, axis=-1)
    return (quadratic - np.trace(np.linalg.solve(mvn_matrix(cov, mean), e))) / 2


def mvn_cov_vjp(g, s, cov, mean):
    """Adjoint of ``cov`` in ``multivariate_normal.logpdf`` for the adjoint ``g`` (one per
    point): ``(s' diag(g) s - sum(g) inv(cov)) / 2``, symmetric, folded back to the form
    ``cov`` came in (its diagonal for a vector, its trace for a number)."""
    g = np.reshape(g, (-1, 1))
    c = mvn_matrix(cov, mean)
    adjoint = (mvn_swap(s) @ (g * s) - np.sum(g) * np.linalg.inv(c)) / 2
    if np.ndim(cov) == 2:
        return adjoint
    if np.ndim(cov) == 1:
        return np.diagonal(adjoint)
    return np.trace(adjoint)


# -- scipy.linalg ---------------------------------------------------------------------------


def transposed(trans):
    """Whether ``trans`` (SciPy's 0, 1, 2 or 'N', 'T', 'C') solves with the transpose."""
    return trans in (1, 2, "T", "C")


def flip_trans(trans):
    """The ``trans`` that solves with the transpose of what ``trans`` solves with."""
    return 0 if transposed(trans) else 1


def tri_part(d, lower, unit_diagonal):
    """The triangle of ``d`` that ``solve_triangular`` reads (its diagonal too, unless
    ``unit_diagonal``): the rest of a triangular matrix has derivative zero."""
    if lower:
        return np.tril(d, -1 if unit_diagonal else 0)
    return np.triu(d, 1 if unit_diagonal else 0)


def tri_apply(d, x, trans, lower, unit_diagonal):
    """``op(t) @ x``, with ``t`` the triangle of ``d`` and ``op`` the transpose where
    ``trans`` says: the tangent of the matrix ``solve_triangular`` solves with, times x."""
    t = tri_part(d, lower, unit_diagonal)
    if transposed(trans):
        t = np.swapaxes(t, -1, -2)
    return t @ x


def tri_solve_vjp_a(d, x, trans, lower, unit_diagonal):
    """Adjoint of ``a`` in ``x = solve_triangular(a, b, trans, lower, unit_diagonal)`` from
    ``d``, the adjoint of ``b``: ``-d x'`` (``-x d'`` for a transposed solve), on the
    triangle read."""
    if np.ndim(x) == 1:
        outer = d[:, None] * x[None, :]
    else:
        outer = d @ np.swapaxes(x, -1, -2)
    if transposed(trans):
        outer = np.swapaxes(outer, -1, -2)
    return -tri_part(outer, lower, unit_diagonal)


def frechet_block(a, e):
    """The block matrix ``[[a, e], [0, a]]`` (of each matrix in a stack): ``expm`` of it
    holds the derivative of ``expm`` at ``a`` in the direction ``e`` top right."""
    top = np.concatenate([a, e], axis=-1)
    bottom = np.concatenate([np.zeros_like(a), a], axis=-1)
    return np.concatenate([top, bottom], axis=-2)


def frechet_corner(m):
    """The top right block of ``m``, a ``frechet_block`` mapped by ``expm``."""
    n = np.shape(m)[-1] // 2
    return m[..., :n, n:]


# -- Bessel functions of any order (the derivatives of those of order 0 and 1) ---------------


def bessel_iv(v, x):
    """``scipy.special.iv(v, x)``, the modified Bessel function of the first kind."""
    from scipy.special import iv

    return iv(v, x)


def bessel_ive(v, x):
    """``scipy.special.ive(v, x)``: ``iv(v, x) * exp(-|x|)``."""
    from scipy.special import ive

    return ive(v, x)


def bessel_jv(v, x):
    """``scipy.special.jv(v, x)``, the Bessel function of the first kind."""
    from scipy.special import jv

    return jv(v, x)


def bessel_yv(v, x):
    """``scipy.special.yv(v, x)``, the Bessel function of the second kind."""
    from scipy.special import yv

    return yv(v, x)


def bessel_kv(v, x):
    """``scipy.special.kv(v, x)``, the modified Bessel function of the second kind."""
    from scipy.special import kv

    return kv(v, x)


# -- cho_factor / cho_solve -----------------------------------------------------------------
# cho_factor(a, lower) returns the Cholesky factor in one triangle of c (l with a = l l',
# or u with a = u' u) and a's own entries in the other (LAPACK leaves them there).


def cho_tri(d, lower):
    """The triangle of ``d`` that holds the factor."""
    return np.tril(d) if lower else np.triu(d)


def cho_factor_jvp(g, c, lower):
    """Tangent of ``c`` in ``c, lower = cho_factor(a, lower)``: that of the factor (``a``
    taken as symmetric, as ``cholesky_jvp`` does), and ``a``'s tangent copied in the other
    triangle."""
    t = cho_tri(c, lower)
    if lower:
        dt = cholesky_jvp(g, t)
    else:
        dt = np.swapaxes(cholesky_jvp(g, np.swapaxes(t, -1, -2)), -1, -2)
    return dt + (g - cho_tri(g, lower))


def cho_factor_vjp(g, c, lower):
    """Adjoint of ``a`` in ``c, lower = cho_factor(a, lower)`` from ``g``, that of ``c``."""
    t, gt = cho_tri(c, lower), cho_tri(g, lower)
    if lower:
        adjoint = cholesky_vjp(gt, t)
    else:
        adjoint = cholesky_vjp(np.swapaxes(gt, -1, -2), np.swapaxes(t, -1, -2))
    return adjoint + (g - gt)


def cho_apply(d, c, lower, x):
    """``da @ x`` for the tangent ``da = dl l' + l dl'`` (``du' u + u' du``) of the matrix
    factored, with ``dl`` the factor's triangle of ``d``: linear in each of d, c, x."""
    dt, t = cho_tri(d, lower), cho_tri(c, lower)
    if lower:
        return dt @ (np.swapaxes(t, -1, -2) @ x) + t @ (np.swapaxes(dt, -1, -2) @ x)
    return np.swapaxes(dt, -1, -2) @ (t @ x) + np.swapaxes(t, -1, -2) @ (dt @ x)


def cho_solve_vjp(d, c, lower, x):
    """Adjoint of the pair ``(c, lower)`` in ``x = cho_solve((c, lower), b)`` from ``d``,
    the adjoint of ``b``: ``s = -(d x' + x d')``, then ``tril(s l)`` (``triu(u s)``); none
    for the flag. Linear in each of d, c, x."""
    if np.ndim(x) == 1:
        outer = d[:, None] * x[None, :]
    else:
        outer = d @ np.swapaxes(x, -1, -2)
    s = -(outer + np.swapaxes(outer, -1, -2))
    t = cho_tri(c, lower)
    # (summed over the stack of right-hand sides one factor solved)
    return [unbroadcast(cho_tri(s @ t if lower else t @ s, lower), c), np.zeros(())]


# -- lu_factor / lu_solve ---------------------------------------------------------------------
# lu_factor(a) returns (lu, piv) with a = p l u: l unit lower triangular (its strict lower
# triangle in lu), u upper triangular (the rest of lu), p the permutation piv encodes. The
# rules never build p: l⁻¹ p' = u a⁻¹, and a⁻¹ = u⁻¹ l⁻¹ p'.


def lu_parts(lu):
    """``(l, u)`` from the packed ``lu``."""
    return np.tril(lu, -1) + eye_like(lu), np.triu(lu)


def lu_factor_jvp(g, a, lu):
    """Tangent of ``lu`` in ``lu, piv = lu_factor(a)``: with ``f = l⁻¹ p' da u⁻¹ = u a⁻¹
    da u⁻¹``, ``dl = l tril(f, -1)`` and ``du = triu(f) u``, packed as ``lu`` is."""
    low, up = lu_parts(lu)
    f = np.swapaxes(
        np.linalg.solve(np.swapaxes(up, -1, -2), np.swapaxes(up @ np.linalg.solve(a, g), -1, -2)),
        -1,
        -2,
    )
    return low @ np.tril(f, -1) + np.triu(f) @ up


def lu_factor_vjp(g, a, lu):
    """Adjoint of ``a`` in ``lu, piv = lu_factor(a)`` from ``g``, that of ``lu``:
    ``a⁻ᵀ u' h u⁻ᵀ`` with ``h = tril(l' tril(g, -1), -1) + triu(triu(g) u')``."""
    low, up = lu_parts(lu)
    h = np.tril(np.swapaxes(low, -1, -2) @ np.tril(g, -1), -1)
    h = h + np.triu(np.triu(g) @ np.swapaxes(up, -1, -2))
    right = np.swapaxes(np.linalg.solve(up, np.swapaxes(h, -1, -2)), -1, -2)
    return np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(up, -1, -2) @ right)


def lu_solve_jvp(d, lu, x):
    """Tangent of ``x = lu_solve((lu, piv), b)`` for the tangent ``d`` of ``lu``:
    ``-u⁻¹ (l⁻¹ dl u x + du x)``."""
    low, up = lu_parts(lu)
    inner = np.linalg.solve(low, np.tril(d, -1) @ (up @ x)) + np.triu(d) @ x
    return -np.linalg.solve(up, inner)


def lu_solve_vjp(d, lu, x):
    """Adjoint of ``lu`` in ``x = lu_solve((lu, piv), b)`` from ``d``, that of ``x``: with
    ``w = u⁻ᵀ d``, ``-tril(l⁻ᵀ w (u x)', -1) - triu(w x')``."""
    low, up = lu_parts(lu)
    w = np.linalg.solve(np.swapaxes(up, -1, -2), d)
    v = np.linalg.solve(np.swapaxes(low, -1, -2), w)
    return unbroadcast(-np.tril(_outer(v, up @ x), -1) - np.triu(_outer(w, x)), lu)


def lu_solve_t_rhs(d, lu, b):
    """For ``x = lu_solve((lu, piv), b, trans=1)``: ``v`` such that the tangent of ``x`` for
    the tangent ``d`` of ``lu`` is ``-lu_solve((lu, piv), v, trans=1)``: with ``z = p' x
    = l⁻ᵀ u⁻ᵀ b``, ``v = u' dl' z + du' l' z``."""
    low, up = lu_parts(lu)
    lt, ut = np.swapaxes(low, -1, -2), np.swapaxes(up, -1, -2)
    z = np.linalg.solve(lt, np.linalg.solve(ut, b))
    return ut @ (np.swapaxes(np.tril(d, -1), -1, -2) @ z) + np.swapaxes(np.triu(d), -1, -2) @ (
        lt @ z
    )


def lu_solve_t_vjp(q, lu, b):
    """Adjoint of ``lu`` in ``x = lu_solve((lu, piv), b, trans=1)`` from ``q = a⁻¹ d``
    (``d`` that of ``x``): ``-tril(z (u q)', -1) - triu(l' z q')``, ``z = l⁻ᵀ u⁻ᵀ b``."""
    low, up = lu_parts(lu)
    lt, ut = np.swapaxes(low, -1, -2), np.swapaxes(up, -1, -2)
    z = np.linalg.solve(lt, np.linalg.solve(ut, b))
    return unbroadcast(-np.tril(_outer(z, up @ q), -1) - np.triu(_outer(lt @ z, q)), lu)


def _outer(u, v):
    """``u v'`` for vectors, ``u @ v'`` for matrices (columns of right-hand sides)."""
    if np.ndim(u) == 1:
        return u[:, None] * v[None, :]
    return u @ np.swapaxes(v, -1, -2)


def pair_adjoint(d):
    """The adjoint of a pair ``(matrix, flag or pivots)`` from that of the matrix."""
    return [d, np.zeros(())]
