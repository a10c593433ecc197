"""The few helpers generated code calls, as small plain functions.

Generated modules are standalone: the emitter copies the source of each
helper a derivative uses into the module it writes, with ``np`` bound to the
array module the code was compiled for (numpy or cupy). The helpers here are
that source, and are also importable for tests.

Every helper takes arrays or Python scalars and works on numpy and cupy
alike: nothing builds an array from a shape alone.
"""

import numpy as np


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``: the adjoint of numpy broadcasting."""
    return unbroadcast_to(g, np.shape(x))


def unbroadcast_to(g, shape):
    """Sum ``g`` down to ``shape``: the adjoint of broadcasting to ``g``'s shape."""
    if np.shape(g) == shape:
        return g
    lead = np.ndim(g) - len(shape)
    if lead > 0:
        g = np.sum(g, axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(g)[i] != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return g


def matmul_shape(a, b):
    """The shape of ``x @ y`` for ``x`` of shape ``a`` and ``y`` of shape ``b`` (a
    ``ValueError`` where ``x @ y`` would raise one: the code computing the shape may
    stand in for the product itself)."""
    inner_a, inner_b = a[-1], b[0] if len(b) == 1 else b[-2]
    if inner_a != inner_b:
        raise ValueError(
            f"matmul: the operands' shapes {tuple(a)} and {tuple(b)} do not match in their "
            f"core dimension ({inner_a} is not {inner_b})"
        )
    if len(a) == 2 and len(b) == 2:  # the common case, first
        return (a[0], b[1])
    if len(b) == 1:
        return tuple(a[:-1])
    if len(a) == 1:
        return tuple(b[:-2]) + tuple(b[-1:])
    return tuple(np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))) + (a[-2], b[-1])


def broadcast_like(d, y):
    """``d`` broadcast to the shape of ``y``: a tangent as large as its value."""
    shape = np.shape(y)
    if np.shape(d) == shape:
        return d
    return np.broadcast_to(d, shape)


def unreduce(g, x, axis, keepdims):
    """The adjoint of a sum over ``axis``: ``g`` spread back over the shape of ``x``."""
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, np.shape(x))


def reduced_size(x, axis):
    """How many elements of ``x`` a reduction over ``axis`` combines into one."""
    shape = np.shape(x)
    if axis is None:
        return int(np.prod(shape))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([shape[a] for a in axes]))


def matmul_vjp_a(g, a, b):
    """Adjoint of ``a`` in ``a @ b`` for arrays of any rank."""
    if np.ndim(b) == 1:
        return g * b if np.ndim(a) == 1 else g[..., None] * b
    if np.ndim(a) == 1:
        return unbroadcast((b @ g[..., None])[..., 0], a)
    return unbroadcast(g @ np.swapaxes(b, -1, -2), a)


def matmul_vjp_b(g, a, b):
    """Adjoint of ``b`` in ``a @ b`` for arrays of any rank."""
    if np.ndim(a) == 1:
        return g * a if np.ndim(b) == 1 else unbroadcast(a[:, None] * g[..., None, :], b)
    if np.ndim(b) == 1:
        return unbroadcast((np.swapaxes(a, -1, -2) @ g[..., None])[..., 0], b)
    return unbroadcast(np.swapaxes(a, -1, -2) @ g, b)


def _expand(value, x, axis, keepdims):
    """A reduction's result ``value`` with the reduced axes of ``x`` put back (size 1)."""
    if axis is None:
        return np.reshape(value, (1,) * np.ndim(x)) if not keepdims else value
    return value if keepdims else np.expand_dims(value, axis)


def extremum_vjp(g, x, ans, axis=None, keepdims=False):
    """Adjoint of ``np.max``/``np.min``: ``g`` split evenly among the tied extrema."""
    hit = x == _expand(ans, x, axis, keepdims)
    count = np.sum(hit, axis=axis, keepdims=True, dtype=np.result_type(g))
    return np.where(hit, _expand(g, x, axis, keepdims) / count, 0.0)


def extremum_jvp(dx, x, ans, axis=None, keepdims=False):
    """Tangent of ``np.max``/``np.min``: the mean of ``dx`` over the tied extrema."""
    hit = x == _expand(ans, x, axis, keepdims)
    total = np.sum(np.where(hit, dx, 0.0), axis=axis, keepdims=keepdims)
    return total / np.sum(hit, axis=axis, keepdims=keepdims, dtype=np.result_type(dx))


def zero_adjoint(x):
    """A zero adjoint (or tangent) for ``x``, or None where ``x`` was never given a value."""
    if x is None:
        return None
    if isinstance(x, (list, tuple, dict)):
        return zeros_seq(x)
    return np.zeros_like(x)


def zeros_seq(xs):
    """A zero adjoint for a list, tuple or dict: zeros of the same structure (a list
    for a tuple), nested containers included."""
    if isinstance(xs, dict):
        return {k: zero_adjoint(x) for k, x in xs.items()}
    return [zero_adjoint(x) for x in xs]


def add_seq(a, b):
    """Adjoints of a list, tuple or dict, added element by element (nested too); of
    anything else (a value whose kind srcgrad could not tell), ``a + b``."""
    if not isinstance(a, (list, tuple, dict)):
        return a + b
    if isinstance(a, dict):
        return {
            k: add_seq(x, b[k]) if isinstance(x, (list, tuple, dict)) else x + b[k]
            for k, x in a.items()
        }
    return [add_seq(x, y) if isinstance(x, (list, tuple, dict)) else x + y for x, y in zip(a, b)]


def add_at(xs, index, g):
    """The adjoint ``xs`` of a list, tuple or dict with ``g`` added to element ``index``:
    a new container sharing the other elements (no zeros made for them)."""
    out = dict(xs) if isinstance(xs, dict) else list(xs)
    out[index] = add_seq(out[index], g) if isinstance(g, (list, tuple, dict)) else out[index] + g
    return out


def set_at(xs, index, g):
    """The adjoint ``xs`` of a list, tuple or dict with element ``index`` replaced by ``g``:
    a new container sharing the other elements. (An element's adjoint taken out of its
    container's, added to, and put back: no zeros made for it.)"""
    out = dict(xs) if isinstance(xs, dict) else list(xs)
    out[index] = g
    return out


def unstack(g, axis):
    """Adjoint of ``np.stack(xs, axis)``: ``g`` cut into the arrays it was made of."""
    return list(np.moveaxis(g, axis, 0))


def split_like(g, xs, axis):
    """Adjoint of ``np.concatenate(xs, axis)``: ``g`` cut where the pieces met."""
    sizes = [np.shape(x)[axis] for x in xs]
    bounds = [sum(sizes[:k]) for k in range(1, len(sizes))]
    return np.split(g, bounds, axis=axis)


def spread(g, xs):
    """Adjoint of ``sum(xs)``: ``g`` for every element (summed to its shape)."""
    return [unbroadcast(g, x) for x in xs]


def index_adjoint(g, x, index):
    """Adjoint of ``x[index]`` for a basic index: ``g`` placed in zeros shaped like ``x``
    (in a structure of zeros for a list, tuple or dict)."""
    if isinstance(x, (list, tuple, dict)):
        out = zeros_seq(x)
        out[index] = g
        return out
    rows = np.shape(x)[0] if np.ndim(x) > 0 else None  # (dask: nan where unknown)
    if type(index) is slice and index.step in (None, 1) and isinstance(rows, int):
        # a run of rows: zeros only around it (zeros_like would write every element twice)
        start, stop, _ = index.indices(rows)
        out = np.empty_like(x)
        out[:start] = 0
        out[start:stop] = g
        out[max(start, stop) :] = 0
        return out
    out = np.zeros_like(x)
    out[index] = g
    return out


def kept_writes(g, index):
    """Adjoint of ``v`` in ``y[index] = v`` (``g`` is ``y``'s): ``g[index]``, where every
    write but the last into one element gets zero. An integer index array may name an
    element more than once, and numpy keeps the value written last (``y[[0, 0]] = v``
    keeps ``v[1]``; ``y[[0, 0]] += v`` adds ``v[1]`` alone)."""
    part = g[index]
    parts = index if isinstance(index, tuple) else (index,)
    if all(_names_once(p) for p in parts):
        return part
    order = np.reshape(np.arange(np.size(part)), np.shape(part))
    last = np.zeros_like(g, dtype=order.dtype)
    last[index] = order  # each element ends holding the position of its last write
    return np.where(last[index] == order, part, 0)


def _names_once(p):
    """Whether an index part names each element at most once: not an integer array (or
    list) of two or more positions."""
    if p is None or p is Ellipsis or isinstance(p, (int, slice)):
        return True
    return np.size(p) < 2 or np.asarray(p).dtype.kind == "b"


def pow_log(x):
    """``log(x)`` for the derivative of ``x ** y`` in ``y``: 0 where ``x == 0``
    (JAX's convention), and a Python float for a Python number, so that a
    float32 exponent keeps a float32 derivative."""
    if isinstance(x, (int, float)):
        return float(np.log(x)) if x != 0 else 0.0
    return np.log(np.where(x == 0, 1, x))


def untranspose(g, axes):
    """The adjoint of ``np.transpose(x, axes)``: ``g`` with the inverse permutation."""
    if axes is None:
        return np.transpose(g)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):  # x.transpose((1, 0, 2))
        axes = axes[0]
    inverse = [0] * len(axes)
    for i, axis in enumerate(axes):
        inverse[axis % len(axes)] = i
    return np.transpose(g, tuple(inverse))


def check_cotangent(dout, value):
    """Raise unless the cotangent ``dout`` has the shape of the output ``value`` (one
    cotangent per element, each of its shape, for a tuple output)."""
    if isinstance(value, (tuple, list)):
        if not isinstance(dout, (tuple, list)) or len(dout) != len(value):
            raise ValueError(
                f"vjp: the function returns a tuple of {len(value)}; pass a tuple of "
                f"{len(value)} cotangents, one shaped like each element"
            )
        for d, v in zip(dout, value):
            check_cotangent(d, v)
        return
    if np.shape(dout) != np.shape(value):
        raise ValueError(
            f"vjp: the cotangent has shape {np.shape(dout)} but the function's output has "
            f"shape {np.shape(value)}; pass a cotangent shaped like the output"
        )


def check_scalar(value):
    """Raise unless ``value`` is a scalar, as ``grad`` requires."""
    if np.size(value) != 1 or np.ndim(value) != 0:
        raise ValueError(
            f"grad requires a function with a scalar output, but it returned an array of "
            f"shape {np.shape(value)}; use srcgrad.vjp or srcgrad.jacobian for array outputs"
        )
    return value


def index_adjoint_add(g, x, index):
    """Adjoint of ``x[index]`` for any index: repeated positions add up (a key of a
    list, tuple or dict: ``g`` in a structure of zeros)."""
    if isinstance(x, (list, tuple, dict)):
        return index_adjoint(g, x, index)
    out = np.zeros_like(x)
    np.add.at(out, index, g)
    return out


def dot_vjp_a(g, a, b):
    """Adjoint of ``a`` in ``np.dot(a, b)`` where the ranks were not known statically."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    if np.ndim(b) > 2:
        raise NotImplementedError(
            "srcgrad differentiates np.dot(a, b) for b of rank <= 2; use np.matmul"
        )
    return matmul_vjp_a(g, a, b)


def dot_vjp_b(g, a, b):
    """Adjoint of ``b`` in ``np.dot(a, b)`` where the ranks were not known statically."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    if np.ndim(b) > 2:
        raise NotImplementedError(
            "srcgrad differentiates np.dot(a, b) for b of rank <= 2; use np.matmul"
        )
    return matmul_vjp_b(g, a, b)


# -- scipy.special --
# SciPy is imported inside the helpers that need it, when first called: srcgrad
# and the modules it generates import without SciPy.


def digamma(x):
    """``scipy.special.digamma(x)``: the derivative of ``gammaln``."""
    from scipy.special import psi

    return psi(x)


def trigamma(x):
    """``scipy.special.polygamma(1, x)``, the derivative of ``digamma``."""
    return polygamma_n(1, x)


def polygamma_n(n, x):
    """``scipy.special.polygamma(n, x)`` in the precision of ``x`` (SciPy computes
    polygamma in float64, digamma not): the derivatives of ``trigamma``."""
    from scipy.special import polygamma

    return np.asarray(polygamma(n, x), dtype=np.result_type(x))


def xdivy(x, y):
    """``x / y``, but 0 where ``x == 0`` (TensorFlow's ``xdivy``): the derivative of
    ``xlogy(x, y)`` in ``y``. Python numbers count as float64, as in SciPy's ufuncs,
    so that the derivative has the dtype of ``xlogy``'s result. Only ``y`` is replaced
    (where both are 0), so the derivative in ``x`` is ``1 / y`` also at ``x == 0``."""
    x, y = np.asarray(x), np.asarray(y)
    return x / np.where((x == 0) & (y == 0), 1, y)


def sum_like(d, b):
    """``d`` broadcast against ``b`` and summed back to ``b``'s shape: the adjoint of
    ``b`` in a reduction of ``b * e`` from ``d = g * e``, where ``g`` has size 1 along
    the reduced axes (so ``d`` may lack extents ``b`` has)."""
    return unbroadcast(np.broadcast_to(d, np.broadcast(d, b).shape), b)


# -- elementwise rules --
def tangent_div(g, d):
    """``g / d`` for a tangent ``g``: exactly 0 where ``g`` is 0, also where the divisor
    ``d`` is 0 (a zero tangent times an infinite derivative changes nothing; ``0 / 0`` would
    be NaN, and forward mode pushes tangents that are 0 almost everywhere)."""
    return g / np.where(g == 0, 1, d)


def tangent_mul(g, f):
    """``g * f`` for a tangent ``g``: exactly 0 where ``g`` is 0, also where the derivative
    ``f`` is infinite or NaN (see ``tangent_div``)."""
    return g * np.where(g == 0, 0, f)


def pow_dx(x, y):
    """``y * x ** (y - 1)``, the derivative of ``x ** y`` in ``x``: 0 where ``y`` is 0
    (``x ** 0`` is 1 for every ``x``, 0 included), and numpy's inf at ``0 ** negative``
    also for Python numbers (where Python raises ZeroDivisionError)."""
    if np.ndim(x) == 0 and np.ndim(y) == 0:
        if x == 0 and y == 0:
            return y * x
        return y * np.power(x, y - 1)
    # (x moved to 1 where both are 0 only: elsewhere the formula and its own derivatives
    # are exact, also in y at y == 0)
    return y * np.power(np.where((x == 0) & (y == 0), 1, x), y - 1)


def safe_div(a, b):
    """``a / b``, and 0 where ``b`` is 0: a derivative at a point where its formula is 0 / 0."""
    zero = b == 0
    return np.where(zero, 0.0, a / np.where(zero, 1, b))


def tie_share(g, a, b, ans):
    """``g`` times the derivative in ``a`` of ``ans = np.maximum(a, b)`` (or a minimum):
    ``g`` where ``ans`` is ``a``, half of it where ``a`` and ``b`` tie (JAX's convention),
    0 where ``ans`` is ``b``."""
    return np.where(a == ans, np.where(b == ans, 0.5 * g, g), 0.0)


def clip_parts(g, x, lo, hi, ans):
    """``g`` shared among ``x``, ``lo`` and ``hi`` as ``np.clip(x, lo, hi)``, which is
    ``np.minimum(np.maximum(x, lo), hi)``, shares it (see ``tie_share``); a bound may be None."""
    m = x if lo is None else np.maximum(x, lo)
    g_m, g_hi = (g, None) if hi is None else (tie_share(g, m, hi, ans), tie_share(g, hi, m, ans))
    if lo is None:
        return g_m, None, g_hi
    return tie_share(g_m, x, lo, m), tie_share(g_m, lo, x, m), g_hi


# -- reductions --
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
    if matrix:
        raise NotImplementedError(
            f"srcgrad differentiates np.linalg.norm of matrices for ord None, 'fro', 1, -1, "
            f"inf and -inf, not ord={ord!r}"
        )
    if ord == 0:
        return "zero"
    if ord == 1:
        return "one"
    return "max" if ord in (np.inf, -np.inf) else "power"


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


# -- linear algebra ----------------------------------------------------------------
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


def _svd_shape(a, full_matrices):
    m, n = np.shape(a)[-2:]
    if full_matrices and m != n:
        raise NotImplementedError(
            "srcgrad differentiates np.linalg.svd of a non-square matrix only with "
            "full_matrices=False (or compute_uv=False)"
        )
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
    m, n = _svd_shape(a, full_matrices)
    u, s, vh = ans
    gu, gs, gvh = g
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


def _qr_shape(a):
    m, n = np.shape(a)[-2:]
    if m < n:
        raise NotImplementedError(
            "srcgrad differentiates np.linalg.qr(a) only for a with at least as many rows "
            "as columns"
        )
    return m, n


def _times_inverse(x, r):
    """``x @ inv(r)``, by a solve: ``(r⁻ᵀ xᵀ)ᵀ``."""
    return mT(np.linalg.solve(mT(r), mT(x)))


def qr_jvp(g, a, ans):
    """Tangent of ``q, r = np.linalg.qr(a)`` (reduced, rows >= columns; JAX's rule)."""
    m, n = _qr_shape(a)
    q, r = ans
    da_rinv = _times_inverse(g, r)
    qt_da_rinv = mT(q) @ da_rinv
    lower = np.tril(qt_da_rinv, -1)
    skew = lower - mT(lower)
    return q @ (skew - qt_da_rinv) + da_rinv, (qt_da_rinv - skew) @ r


def qr_vjp(g, a, ans):
    """Adjoint of ``a`` in ``q, r = np.linalg.qr(a)``: ``(gq + q copyltu(M)) r⁻ᵀ`` with
    ``M = r grᵀ - gqᵀ q`` and copyltu the symmetric matrix of M's lower triangle."""
    m, n = _qr_shape(a)
    q, r = ans
    gq, gr = g
    m = r @ mT(gr) - mT(gq) @ q
    lower = np.tril(m, -1)
    copyltu = lower + mT(lower) + np.tril(np.triu(m))
    return _times_inverse(gq + q @ copyltu, mT(r))


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


# -- shapes and indexing --
def tile_adjoint(g, x, reps):
    """Adjoint of ``np.tile(x, reps)``: the copies of each element summed."""
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    shape = np.shape(x)
    d = max(len(shape), len(reps))
    s = (1,) * (d - len(shape)) + tuple(shape)
    r = (1,) * (d - len(reps)) + reps
    g = np.reshape(g, tuple(n for pair in zip(r, s) for n in pair))  # (r0, s0, r1, s1, ...)
    return np.reshape(np.sum(g, axis=tuple(range(0, 2 * d, 2))), shape)


def repeat_adjoint(g, x, repeats, axis):
    """Adjoint of ``np.repeat(x, repeats, axis)``: the copies of each element summed."""
    if axis is None:
        return np.reshape(repeat_adjoint(g, np.ravel(x), repeats, 0), np.shape(x))
    axis = axis % np.ndim(x)
    n = np.shape(x)[axis]
    g = np.moveaxis(g, axis, 0)
    if not isinstance(repeats, (tuple, list)) and getattr(repeats, "ndim", 0) == 0:
        out = np.sum(np.reshape(g, (n, int(repeats)) + np.shape(g)[1:]), axis=1)
    else:  # one count per element: scatter the copies back to their element
        out = np.zeros_like(np.moveaxis(x, axis, 0))
        np.add.at(out, np.repeat(np.arange(n), repeats), g)
    return np.moveaxis(out, 0, axis)


def roll_adjoint(g, shift, axis):
    """Adjoint of ``np.roll(x, shift, axis)``: ``g`` rolled back."""
    back = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return np.roll(g, back, axis)


def _pad_pairs(pad_width, ndim):
    """``np.pad``'s ``pad_width`` as one ``(before, after)`` pair per axis."""
    rows = pad_width if isinstance(pad_width, (tuple, list)) else [pad_width]
    if not any(isinstance(r, (tuple, list)) for r in rows):  # n, (n,) or (before, after)
        return [(int(rows[0]), int(rows[-1]))] * ndim
    pairs = [(int(r[0]), int(r[-1])) if isinstance(r, (tuple, list)) else (r, r) for r in rows]
    return pairs * ndim if len(pairs) == 1 else pairs


def unpad(g, pad_width):
    """Adjoint of ``np.pad(x, pad_width)`` (constant mode): the middle of ``g``."""
    pairs = _pad_pairs(pad_width, np.ndim(g))
    return g[tuple(slice(b, n - a) for (b, a), n in zip(pairs, np.shape(g)))]


def _pad_copies(mode):
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(
            f"srcgrad differentiates np.pad with mode 'constant', 'edge', 'reflect', "
            f"'symmetric' or 'wrap', not {mode!r}"
        )


def pad_tangent(g, pad_width, mode):
    """Tangent of ``np.pad(x, pad_width, mode)`` where ``mode`` is not a literal."""
    if mode == "constant":
        return np.pad(g, pad_width)
    _pad_copies(mode)
    return np.pad(g, pad_width, mode)


def pad_adjoint(g, x, pad_width, mode):
    """Adjoint of ``np.pad(x, pad_width, mode)``: where a mode copies elements (edge,
    reflect, symmetric, wrap) the adjoint of every copy goes back to its element."""
    if mode == "constant":
        return unpad(g, pad_width)
    _pad_copies(mode)
    source = np.pad(np.reshape(np.arange(np.size(x)), np.shape(x)), pad_width, mode)
    out = np.zeros_like(np.ravel(x))
    np.add.at(out, np.ravel(source), np.ravel(g))
    return np.reshape(out, np.shape(x))


def _cut(g, xs, axis, widths):
    """``g`` cut along ``axis`` into pieces ``widths`` wide, each shaped like its ``x``."""
    bounds = [sum(widths[:k]) for k in range(1, len(widths))]
    return [np.reshape(p, np.shape(x)) for p, x in zip(np.split(g, bounds, axis=axis), xs)]


def hstack_adjoint(g, xs):
    """Adjoint of ``np.hstack(xs)``: joined along axis 0 for 1-D pieces, else axis 1."""
    axis = 0 if np.ndim(xs[0]) <= 1 else 1
    return _cut(g, xs, axis, [np.shape(x)[axis] if np.ndim(x) else 1 for x in xs])


def vstack_adjoint(g, xs):
    """Adjoint of ``np.vstack(xs)``: pieces of at least 2-D, joined along axis 0."""
    return _cut(g, xs, 0, [np.shape(x)[0] if np.ndim(x) > 1 else 1 for x in xs])


def dstack_adjoint(g, xs):
    """Adjoint of ``np.dstack(xs)``: pieces of at least 3-D, joined along axis 2."""
    return _cut(g, xs, 2, [np.shape(x)[2] if np.ndim(x) > 2 else 1 for x in xs])


def column_stack_adjoint(g, xs):
    """Adjoint of ``np.column_stack(xs)``: 1-D pieces are columns, joined along axis 1."""
    return _cut(g, xs, 1, [np.shape(x)[1] if np.ndim(x) > 1 else 1 for x in xs])


def take_adjoint(g, x, indices, axis=None, mode="raise"):
    """Adjoint of ``np.take(x, indices, axis, mode=mode)``: ``g`` scattered back to the
    elements it was taken from; an index taken twice gets the sum."""
    if axis is None:
        return np.reshape(take_adjoint(g, np.ravel(x), indices, 0, mode), np.shape(x))
    axis = axis % np.ndim(x)
    n = np.shape(x)[axis]
    indices = np.asarray(indices)
    if mode == "wrap":
        indices = indices % n
    elif mode == "clip":
        indices = np.clip(indices, 0, n - 1)
    out = np.zeros_like(x)
    np.add.at(out, (slice(None),) * axis + (indices,), g)
    return out


def _along_axis(indices, x, axis):
    """The index that picks ``indices`` along ``axis`` of ``x`` (np.take_along_axis's)."""
    ndim = np.ndim(x)
    index = []
    for i, n in enumerate(np.shape(x)):
        if i == axis % ndim:
            index.append(indices)
        else:
            index.append(np.reshape(np.arange(n), tuple(n if j == i else 1 for j in range(ndim))))
    return tuple(index)


def take_along_axis_adjoint(g, x, indices, axis):
    """Adjoint of ``np.take_along_axis(x, indices, axis)``: repeated indices add up."""
    if axis is None:
        return np.reshape(take_along_axis_adjoint(g, np.ravel(x), indices, 0), np.shape(x))
    out = np.zeros_like(x)
    np.add.at(out, _along_axis(indices, x, axis), g)
    return out


def _stable_argsort(x, axis):
    """``np.argsort(x, axis, kind="stable")``; cupy always sorts stably (and may not
    accept ``kind``)."""
    if np.__name__ == "cupy":
        return np.argsort(x, axis=axis)
    return np.argsort(x, axis=axis, kind="stable")


def sort_jvp(g, x, axis=-1):
    """Tangent of ``np.sort(x, axis)``: ``g`` in the order numpy's stable argsort
    puts ``x`` (tied elements keep their order)."""
    order = _stable_argsort(x, axis)
    if axis is None:
        return np.ravel(g)[order]
    return np.take_along_axis(g, order, axis)


def sort_vjp(g, x, axis=-1):
    """Adjoint of ``np.sort(x, axis)``: ``g`` put back where the stable argsort took
    each element from."""
    order = _stable_argsort(x, axis)
    if axis is None:
        out = np.zeros_like(np.ravel(x))
        out[order] = np.ravel(g)
        return np.reshape(out, np.shape(x))
    out = np.zeros_like(x)
    out[_along_axis(order, x, axis)] = g
    return out


def _linspace_weights(num, endpoint, axis, ndim, which, like):
    """How much each element of ``np.linspace`` moves with ``start`` (``which`` 0) or
    ``stop`` (1), shaped to broadcast along ``axis``."""
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint, dtype=np.result_type(like))
    w = t if which else 1 - t
    return np.reshape(w, tuple(num if i == axis else 1 for i in range(ndim)))


def linspace_jvp(g, ans, num, endpoint, axis, which):
    """Tangent of ``np.linspace(start, stop, num)`` from that of ``start`` or ``stop``."""
    ndim = np.ndim(ans)
    axis = axis % ndim
    rest = tuple(n for i, n in enumerate(np.shape(ans)) if i != axis)
    g = np.expand_dims(np.broadcast_to(g, rest), axis)
    return g * _linspace_weights(num, endpoint, axis, ndim, which, ans)


def linspace_vjp(g, num, endpoint, axis, which):
    """Adjoint of ``start`` or ``stop`` in ``np.linspace`` (before unbroadcasting)."""
    ndim = np.ndim(g)
    axis = axis % ndim
    return np.sum(g * _linspace_weights(num, endpoint, axis, ndim, which, g), axis=axis)
