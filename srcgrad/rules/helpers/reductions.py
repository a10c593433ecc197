"""Runtime helpers of the rules for reductions (``srcgrad/rules/reductions.py``).

Like those of :mod:`srcgrad.runtime`, each is copied as source into the generated
modules that call it (with ``np`` bound to their array module): a plain function of
arrays and Python values that works on numpy and cupy alike."""

import numpy as np

from ...runtime import _expand, unbroadcast_to


def safe_divisor(a):
    """``a`` with zeros replaced by 1: dividing by a norm or standard deviation that may be
    0, where the numerator is 0 too, gives the derivative 0 there (srcgrad's convention)."""
    return np.where(a == 0, 1, a)


def _axes_of(x, axis):
    """``axis`` of a reduction over ``x`` as a tuple of non-negative axes (None: all)."""
    nd = np.ndim(x)
    if axis is None:
        return tuple(range(nd))
    return tuple(a % nd for a in (axis if isinstance(axis, tuple) else (axis,)))


def prod_others(x, axis=None):
    """For each element of ``x``, the product of the other elements of its reduction over
    ``axis``: the derivative of ``np.prod``. Exclusive products from both ends, no
    division, so it is exact where ``x`` has zeros."""
    nd = np.ndim(x)
    axes = _axes_of(x, axis)
    last = tuple(range(nd - len(axes), nd))
    y = np.moveaxis(np.asarray(x), axes, last)
    moved = np.shape(y)
    y = np.reshape(y, moved[: nd - len(axes)] + (-1,))
    one = np.ones_like(y[..., :1])
    before = np.concatenate([one, np.cumprod(y[..., :-1], axis=-1)], axis=-1)
    after = np.concatenate([np.flip(np.cumprod(np.flip(y[..., 1:], -1), axis=-1), -1), one], -1)
    return np.moveaxis(np.reshape(before * after, moved), last, axes)


def cumsum_vjp(g, x, axis):
    """Adjoint of ``np.cumsum(x, axis)``: ``g`` summed from the end."""
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(g))), np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def _along_last(x, axis):
    """``x`` with ``axis`` moved last (flattened first for ``axis=None``), and that axis."""
    if axis is None:
        return np.ravel(x), 0
    return np.moveaxis(x, axis, -1), axis


def cumprod_jvp(dx, x, axis):
    """Tangent of ``np.cumprod(x, axis)``: the running product of dual numbers
    ``(x, dx)``, by doubling (log2(n) vectorised steps; no division, so it is exact where
    ``x`` has zeros, and so are its own derivatives)."""
    p, moved = _along_last(x, axis)
    t, moved = _along_last(np.broadcast_to(dx, np.shape(x)), axis)
    n = np.shape(p)[-1]
    step = 1
    while step < n:
        low, high = p[..., :-step], p[..., step:]
        t = np.concatenate([t[..., :step], t[..., step:] * low + high * t[..., :-step]], -1)
        p = np.concatenate([p[..., :step], high * low], -1)
        step = step * 2
    return np.moveaxis(t, -1, moved)


def cumprod_vjp(g, x, axis):
    """Adjoint of ``np.cumprod(x, axis)``: element k gets ``prod(x[:k]) * s[k]`` with
    ``s[k] = g[k] + x[k+1] * s[k+1]``, the recurrence solved by doubling (no division:
    exact where ``x`` has zeros, and so are its own derivatives)."""
    shape = np.shape(x)
    x, moved = _along_last(x, axis)
    g, moved = _along_last(g, axis)
    n = np.shape(x)[-1]
    # s[k] = b[k] + a[k] * s[k + step], starting from step 1 (s past the end is 0)
    a = np.concatenate([x[..., 1:], np.zeros_like(x[..., :1])], -1)
    b = g
    step = 1
    while step < n:
        b = np.concatenate([b[..., :-step] + a[..., :-step] * b[..., step:], b[..., -step:]], -1)
        a = np.concatenate([a[..., :-step] * a[..., step:], a[..., -step:]], -1)
        step = step * 2
    before = np.concatenate([np.ones_like(x[..., :1]), np.cumprod(x[..., :-1], -1)], -1)
    return np.reshape(np.moveaxis(before * b, -1, moved), shape)


def count_valid(x, axis=None, keepdims=False):
    """How many elements of ``x`` that are not NaN each reduction over ``axis`` has, in the
    float dtype of ``x`` (the divisor of ``np.nanmean``)."""
    return np.sum(~np.isnan(x), axis=axis, keepdims=keepdims, dtype=np.result_type(x))


def average_weights(w, x, axis):
    """The weights of ``np.average(x, axis, weights=w)`` broadcastable against ``x``."""
    if np.shape(w) == np.shape(x):
        return w
    axes = _axes_of(x, axis)
    order = sorted(range(len(axes)), key=lambda i: axes[i])
    shape = [1] * np.ndim(x)
    for a in axes:
        shape[a] = np.shape(x)[a]
    return np.reshape(np.transpose(w, order), shape)


def average_weights_adjoint(v, w, x, axis):
    """``v`` (shaped like ``x``) summed back to the shape of the weights ``w``: the adjoint
    of ``average_weights``."""
    if np.shape(w) == np.shape(x):
        return v
    axes = _axes_of(x, axis)
    others = tuple(a for a in range(np.ndim(x)) if a not in axes)
    order = sorted(range(len(axes)), key=lambda i: axes[i])
    inverse = sorted(range(len(axes)), key=lambda i: order[i])
    return np.transpose(np.sum(v, axis=others), inverse)


def average_vjp_x(g, x, axis, weights, keepdims=False):
    """Adjoint of ``x`` in ``np.average(x, axis, weights)``: ``g`` spread with the weights."""
    w = average_weights(weights, x, axis)
    total = np.sum(np.broadcast_to(w, np.shape(x)), axis=axis, keepdims=True)
    return _expand(g, x, axis, keepdims) * (w / total)


def average_jvp_weights(dw, x, ans, axis, weights, keepdims=False):
    """Tangent of ``np.average(x, axis, weights)`` in the weights: ``sum(dw * (x - ans)) /
    sum(weights)`` over ``axis``."""
    w = np.broadcast_to(average_weights(weights, x, axis), np.shape(x))
    dw = average_weights(dw, x, axis)
    deviation = x - _expand(ans, x, axis, keepdims)
    total = np.sum(w, axis=axis, keepdims=keepdims)
    return np.sum(dw * deviation, axis=axis, keepdims=keepdims) / total


def average_vjp_weights(g, x, ans, axis, weights, keepdims=False):
    """Adjoint of the weights in ``np.average(x, axis, weights)`` (see average_jvp_weights)."""
    w = np.broadcast_to(average_weights(weights, x, axis), np.shape(x))
    deviation = x - _expand(ans, x, axis, keepdims)
    total = np.sum(w, axis=axis, keepdims=True)
    adjoint = _expand(g, x, axis, keepdims) * deviation / total
    return average_weights_adjoint(adjoint, weights, x, axis)


def average_scale_jvp(dw, x, avg, axis, keepdims=False):
    """Tangent of the sum of the weights that ``np.average(x, axis, weights,
    returned=True)`` returns (broadcast to the average's shape), in the weights."""
    total = np.sum(average_weights(dw, x, axis), axis=axis, keepdims=keepdims)
    return np.broadcast_to(total, np.shape(avg))


def average_scale_vjp(g, x, axis, weights, keepdims=False):
    """Adjoint of the weights in the sum of the weights ``np.average(..., returned=True)``
    returns: ``g`` summed to one value per reduction, spread back over the weights."""
    w = average_weights(weights, x, axis)
    g = unbroadcast_to(g, np.shape(np.sum(w, axis=axis, keepdims=keepdims)))
    spread = np.broadcast_to(_expand(g, w, axis, keepdims), np.shape(w))
    return average_weights_adjoint(spread, weights, x, axis)


def _diagonal_of_zeros(values, x, offset, axis1, axis2):
    """Zeros shaped like ``x`` with ``values`` on the diagonal ``offset`` of the axes
    ``axis1``, ``axis2``; written through one flat index, not through a view (dask.array
    has no views, and assigns through one integer array at most)."""
    zeros = np.moveaxis(np.zeros_like(x), (axis1, axis2), (-2, -1))
    *batch, n, m = np.shape(zeros)
    count = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    if count == 0:
        return np.zeros_like(x)
    k = np.arange(count)
    flat = np.reshape(zeros, (*batch, n * m))
    flat[..., (k + max(-offset, 0)) * m + k + max(offset, 0)] = values
    return np.moveaxis(np.reshape(flat, (*batch, n, m)), (-2, -1), (axis1, axis2))


def trace_vjp(g, x, offset=0, axis1=0, axis2=1):
    """Adjoint of ``np.trace(x, offset, axis1, axis2)``: ``g`` on that diagonal, 0 elsewhere."""
    return _diagonal_of_zeros(np.asarray(g)[..., None], x, offset, axis1, axis2)


def _norm_kind(nd, ord, axis):
    """Which derivative formula ``np.linalg.norm(x, ord, axis)`` of an ``nd``-dim ``x``
    takes: "two" (Frobenius or Euclidean), "sums" (matrix 1/inf norms), "zero", "one",
    "max" (vector inf/-inf) or "power" (other vector p-norms)."""
    matrix = (axis is None and nd == 2 and ord is not None) or (
        isinstance(axis, tuple) and len(axis) == 2
    )
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        return "two"
    if matrix and ord in (1, -1, np.inf, -np.inf):
        return "sums"
    if matrix and ord in (2, -2, "nuc"):
        return "singular"
    if matrix:
        raise NotImplementedError(
            f"srcgrad differentiates np.linalg.norm of matrices for ord None, 'fro', 1, -1, "
            f"inf, -inf, 2, -2 and 'nuc', not ord={ord!r}"
        )
    if ord == 0:
        return "zero"
    if ord == 1:
        return "one"
    return "max" if ord in (np.inf, -np.inf) else "power"


def _singular_norm_grad(x, ord, axis):
    """The derivative of the matrix norms of the singular values (ord 2: the largest, -2:
    the smallest, 'nuc': their sum): ``u diag(w) vh`` from the thin SVD, ``w`` 1 on the
    singular values the norm takes. Tied extreme singular values share it evenly (the
    minimum-norm subgradient, which does not depend on the singular vectors numpy picks),
    and singular values 0 take none (so the derivative at a zero matrix is 0)."""
    rows, cols = (0, 1) if axis is None else _axes_of(x, axis)
    moved = np.moveaxis(x, (rows, cols), (-2, -1))
    u, s, vh = np.linalg.svd(moved, full_matrices=False)
    if ord == "nuc":
        w = (s > 0).astype(s.dtype)
    else:
        end = s[..., :1] if ord == 2 else s[..., -1:]
        hit = (s == end) & (end > 0)
        w = hit / safe_divisor(np.sum(hit, axis=-1, keepdims=True, dtype=s.dtype))
    return np.moveaxis((u * w[..., None, :]) @ vh, (-2, -1), (rows, cols))


def norm_grad(x, ans, ord=None, axis=None, keepdims=False):
    """The derivative of ``np.linalg.norm(x, ord, axis, keepdims)`` in each element of ``x``
    (shaped like ``x``). Conventions: 0 where the norm is 0 (and, for ord 1 and p-norms,
    where an element is 0); ties of the inf/-inf norms (and of the matrix 1/inf norms'
    column or row sums) share the derivative evenly."""
    kind = _norm_kind(np.ndim(x), ord, axis)
    norm = _expand(ans, x, axis, keepdims)
    if kind == "two":
        return x / safe_divisor(norm)
    if kind == "sums":
        rows, cols = (0, 1) if axis is None else _axes_of(x, axis)
        across = rows if ord in (1, -1) else cols  # column sums for 1, row sums for inf
        along = cols if ord in (1, -1) else rows
        sums = np.sum(np.abs(x), axis=across, keepdims=True)
        hit = sums == norm
        return np.sign(x) * hit / np.sum(hit, axis=along, keepdims=True, dtype=np.result_type(x))
    if kind == "singular":
        return _singular_norm_grad(x, ord, axis)
    if kind == "zero":
        return np.zeros_like(x)
    if kind == "one":
        return np.sign(x)
    if kind == "max":
        hit = np.abs(x) == norm
        return np.sign(x) * hit / np.sum(hit, axis=axis, keepdims=True, dtype=np.result_type(x))
    zero = x == 0
    ratio = np.abs(np.where(zero, 1, x)) / safe_divisor(norm)
    return np.where(zero, 0.0, np.sign(x) * ratio ** (ord - 1))
