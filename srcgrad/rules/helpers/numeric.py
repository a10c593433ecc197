"""Runtime helpers of the rules for numerical routines (``srcgrad/rules/numeric.py``):
convolution, the trapezoidal rule, linear interpolation, polynomials, cross products and
finite differences.

Like those of :mod:`srcgrad.runtime`, each is copied as source into the generated
modules that call it (with ``np`` bound to their array module): a plain function of
arrays and Python values that works on numpy and cupy alike."""

import numpy as np

from ...runtime import unbroadcast, unbroadcast_to


# -- np.convolve and np.correlate --------------------------------------------------------------
def _correlation_mode(mode):
    """numpy's mode of ``np.convolve``/``np.correlate`` by name: ``'valid'``, ``'same'`` or
    ``'full'`` (numpy also takes 0, 1 and 2 for them)."""
    names = {0: "valid", 1: "same", 2: "full", "valid": "valid", "same": "same", "full": "full"}
    if isinstance(mode, (str, int)) and mode in names:
        return names[mode]
    raise ValueError("Use one of 'valid', 'same', or 'full' for convolve/correlate mode")


def _correlation_start(m, n, mode):
    """Where ``np.correlate(a, v, mode)`` (``a`` of ``m`` elements, ``v`` of ``n``) starts
    in the full correlation: numpy correlates the longer with the shorter, keeps the
    middle for ``'same'`` (``n // 2`` to the left of the longer) and reverses where it
    swapped them."""
    mode = _correlation_mode(mode)
    if mode == "full":
        return 0
    if mode == "valid":
        return min(m, n) - 1
    return n - 1 - n // 2 if m >= n else m // 2


def _full_adjoint(g, start, length):
    """``g`` put where its elements sit in a full result of ``length`` from ``start``."""
    return np.pad(np.ravel(g), (start, length - start - np.size(g)))


def convolve_adjoint(g, x, other, mode):
    """Adjoint of ``x`` in ``np.convolve(x, other, mode)`` (or in ``np.convolve(other, x,
    mode)``: convolution is symmetric). ``g`` is put where its elements sit in the full
    convolution (``'same'`` and ``'valid'`` keep a middle part of it), then correlated with
    ``other``: ``x_bar[i] = sum_k full[i + k] * other[k]``."""
    m, n = np.size(x), np.size(other)
    mode = _correlation_mode(mode)
    start = {"full": 0, "same": (min(m, n) - 1) // 2, "valid": min(m, n) - 1}[mode]
    full = _full_adjoint(g, start, m + n - 1)
    return np.reshape(np.correlate(full, np.ravel(other), "valid"), np.shape(x))


def correlate_adjoint(g, x, other, mode, first):
    """Adjoint of ``x`` in ``np.correlate(x, other, mode)`` (``first``) or in
    ``np.correlate(other, x, mode)`` (real operands). With ``a`` the first operand (``m``
    elements) and ``v`` the second (``n``), the full correlation is ``c[j] = sum_k
    a[j + k - n + 1] * v[k]``; ``g`` put where its elements sit in it, ``a_bar[i] = sum_k
    c_bar[i + n - 1 - k] * v[k]`` (a convolution) and ``v_bar[k] = sum_i c_bar[i + n - 1 - k]
    * a[i]`` (a correlation, reversed)."""
    m, n = (np.size(x), np.size(other)) if first else (np.size(other), np.size(x))
    full = _full_adjoint(g, _correlation_start(m, n, mode), m + n - 1)
    if first:
        out = np.convolve(full, np.ravel(other), "valid")
    else:
        out = np.correlate(full, np.ravel(other), "valid")[::-1]
    return np.reshape(out, np.shape(x))


# -- np.trapezoid: sum(d * (y[1:] + y[:-1]) / 2) along an axis -----------------------------
def _trapezoid_cut(y, axis, part):
    """``y[1:]`` (``part`` 1) or ``y[:-1]`` (0) along ``axis``."""
    index = [slice(None)] * np.ndim(y)
    index[axis] = slice(1, None) if part == 1 else slice(None, -1)
    return y[tuple(index)]


def _trapezoid_widths(y, x, dx, axis):
    """The widths of ``np.trapezoid``'s intervals, as numpy computes them: ``dx``, or the
    differences of ``x`` (a 1-d ``x`` lies along ``axis``)."""
    if x is None:
        return dx
    if np.ndim(x) == 1:
        shape = [1] * np.ndim(y)
        shape[axis] = np.shape(x)[0] - 1
        return np.reshape(np.diff(x), shape)
    return np.diff(x, axis=axis)


def _trapezoid_spread(g, axis, like):
    """``g`` (the result of a sum over ``axis``) with that axis put back, broadcast to
    the shape of ``like`` (the summed product)."""
    g = np.expand_dims(g, axis)
    return np.broadcast_to(g, np.broadcast_shapes(np.shape(g), np.shape(like)))


def trapezoid_vjp_y(g, y, x, dx, axis):
    """Adjoint of ``y`` in ``np.trapezoid(y, x, dx, axis)``: each interval's share
    ``g * d / 2`` to both of its ends."""
    d = _trapezoid_widths(y, x, dx, axis)
    y0 = _trapezoid_cut(y, axis, 0)
    half = _trapezoid_spread(g, axis, d * y0) * d / 2
    full = np.broadcast_shapes(np.shape(half), np.shape(y0))
    part = unbroadcast_to(np.broadcast_to(half, full), np.shape(y0))
    widths = [(0, 0)] * np.ndim(y)
    before, after = list(widths), list(widths)
    before[axis], after[axis] = (1, 0), (0, 1)
    return np.pad(part, before) + np.pad(part, after)


def _trapezoid_widths_adjoint(g, y, d, axis):
    """Adjoint of the widths ``d`` in ``np.trapezoid``: ``g`` times the interval means."""
    mean = (_trapezoid_cut(y, axis, 0) + _trapezoid_cut(y, axis, 1)) / 2
    return unbroadcast(_trapezoid_spread(g, axis, d * mean) * mean, d)


def trapezoid_vjp_x(g, y, x, axis):
    """Adjoint of the sample points ``x`` in ``np.trapezoid(y, x, axis=axis)``: the widths'
    adjoint, through ``np.diff`` (a 1-d ``x`` lies along ``axis``)."""
    d_bar = _trapezoid_widths_adjoint(g, y, _trapezoid_widths(y, x, 1.0, axis), axis)
    if np.ndim(x) == 1:
        return -np.diff(np.ravel(d_bar), prepend=0, append=0)
    return -np.diff(d_bar, axis=axis, prepend=0, append=0)


def trapezoid_dx_tangent(g, x):
    """The tangent of the spacing ``dx`` where ``np.trapezoid`` reads it (``x`` None), else 0."""
    return g if x is None else 0 * g


def trapezoid_jvp_dx(g, y, x, axis):
    """Tangent of ``np.trapezoid(y, x, dx, axis)`` in the spacing ``dx``, which numpy reads
    only where ``x`` is None."""
    if x is not None:
        return np.zeros_like(np.trapezoid(y, axis=axis))
    return np.trapezoid(y, dx=g, axis=axis)


def trapezoid_vjp_dx(g, y, x, dx, axis):
    """Adjoint of the spacing ``dx`` in ``np.trapezoid(y, x, dx, axis)`` (0 where ``x``
    is given: numpy reads ``dx`` only where ``x`` is None)."""
    if x is not None:
        return np.zeros_like(dx)
    return _trapezoid_widths_adjoint(g, y, dx, axis)


# -- np.interp (xp increasing, period None) --------------------------------------------------
def _interp_segments(x, xp):
    """For each ``x``: the index ``i`` of the segment ``xp[i - 1] .. xp[i]`` it lies in (the
    first or the last for points outside), where numpy's interpolant is linear, and the
    fraction ``t`` of the way along it (JAX's segments: at an inner knot, the one to the
    right; at ``xp[-1]``, the last)."""
    n = np.shape(xp)[0]
    i = np.clip(np.searchsorted(xp, x, side="right"), 1, max(n - 1, 1))
    low = xp[np.minimum(i - 1, n - 1)]
    width = xp[np.minimum(i, n - 1)] - low
    t = (x - low) / np.where(width == 0, 1, width)
    return i, np.where(width == 0, 0.0, t), width


def _interp_inside(x, xp):
    return (x >= xp[0]) & (x <= xp[-1])


def interp_slope(x, xp, fp):
    """The derivative of ``np.interp(x, xp, fp)`` in ``x``: the slope of the segment ``x``
    lies in (see ``_interp_segments``), 0 outside ``[xp[0], xp[-1]]`` and on segments of width 0;
    float64, as ``np.interp`` computes."""
    n = np.shape(xp)[0]
    i, t, width = _interp_segments(x, xp)
    rise = fp[np.minimum(i, n - 1)] - fp[np.minimum(i - 1, n - 1)]
    inside = _interp_inside(x, xp) & (width != 0)
    slope = np.where(inside, rise / np.where(width == 0, 1, width), 0.0)
    return np.asarray(slope, dtype=np.float64)


def interp_vjp_fp_dx(g, dx, x, xp):
    """Tangent of ``interp_vjp_fp(g, x, xp, ...)`` in ``x`` (tangent ``dx``): the weights
    ``1 - t`` and ``t`` move by ``-dx / width`` and ``dx / width``."""
    n = np.shape(xp)[0]
    g = np.ravel(np.broadcast_to(g, np.shape(x)))
    dx = np.ravel(np.broadcast_to(dx, np.shape(x)))
    x = np.ravel(x)
    i, _, width = _interp_segments(x, xp)
    inside = _interp_inside(x, xp) & (width != 0)
    dt = np.where(inside, g * dx / np.where(width == 0, 1, width), 0.0)
    out = np.zeros_like(xp, dtype=np.float64)
    np.add.at(out, np.minimum(i - 1, n - 1), -dt)
    np.add.at(out, np.minimum(i, n - 1), dt)
    return out


def interp_jvp_fp(g, x, xp, left, right):
    """Tangent of ``np.interp(x, xp, fp, left, right)`` in ``fp``: the tangent interpolated,
    0 outside where ``left`` or ``right`` replaces the end values."""
    return np.interp(x, xp, g, None if left is None else 0.0, None if right is None else 0.0)


def interp_vjp_fp(g, x, xp, left, right):
    """Adjoint of ``fp`` in ``np.interp(x, xp, fp, left, right)``: each ``g`` split between
    the two ends of its segment (``1 - t`` and ``t``), or to ``fp[0]`` / ``fp[-1]`` outside
    where ``left`` / ``right`` is not given."""
    n = np.shape(xp)[0]
    g = np.ravel(np.broadcast_to(g, np.shape(x)))
    x = np.ravel(x)
    i, t, _ = _interp_segments(x, xp)
    inside = _interp_inside(x, xp)
    out = np.zeros_like(xp, dtype=np.float64)
    np.add.at(out, np.minimum(i - 1, n - 1), np.where(inside, g * (1 - t), 0.0))
    np.add.at(out, np.minimum(i, n - 1), np.where(inside, g * t, 0.0))
    below = np.sum(np.where(x < xp[0], g, 0.0)) if left is None else 0.0
    above = np.sum(np.where(x > xp[-1], g, 0.0)) if right is None else 0.0
    ends = np.zeros_like(out)
    ends[0] = below
    ends[-1] = ends[-1] + above
    return out + ends


def interp_jvp_end(g, x, xp, side):
    """Tangent of ``np.interp(x, xp, fp, left, right)`` in ``left`` (``side`` 0) or
    ``right`` (1): ``g`` where ``x`` lies beyond that end, float64."""
    beyond = x < xp[0] if side == 0 else x > xp[-1]
    return np.asarray(np.where(beyond, g, 0.0), dtype=np.float64)


def interp_vjp_end(g, x, xp, side):
    """Adjoint of ``left`` (``side`` 0) or ``right`` (1) in ``np.interp``."""
    beyond = x < xp[0] if side == 0 else x > xp[-1]
    return np.sum(np.where(beyond, g, 0.0))


# -- np.interp with period ----------------------------------------------------------------
def _interp_periodic(x, xp, period):
    """numpy's reading of ``np.interp(x, xp, fp, period=period)``: ``x`` and ``xp`` in
    float64 modulo ``|period|``, ``xp`` sorted (by ``np.argsort``, as numpy sorts it) and
    extended by one point at each end; with, for each point of the extended ``xp``, the
    index of its value in ``fp``."""
    period = abs(period)
    x = np.asarray(x, dtype=np.float64) % period
    xp = np.asarray(xp, dtype=np.float64) % period
    order = np.argsort(xp)
    xp = xp[order]
    xp = np.concatenate((xp[-1:] - period, xp, xp[0:1] + period))
    return x, xp, np.concatenate((order[-1:], order, order[0:1]))


def interp_slope_periodic(x, xp, fp, period):
    """The derivative of ``np.interp(x, xp, fp, period=period)`` in ``x`` (that of
    ``x % period`` is 1): the slope of the segment of the periodic samples ``x`` lies in;
    ``interp_slope`` where ``period`` is None."""
    if period is None:
        return interp_slope(x, xp, fp)
    x, xp, index = _interp_periodic(x, xp, period)
    return interp_slope(x, xp, fp[index])


def _interp_gather_adjoint(v, xp, index):
    """The adjoint of ``fp[index]`` (``fp`` as long as ``xp``) for ``v``."""
    out = np.zeros(np.shape(xp), dtype=np.float64)
    np.add.at(out, index, v)
    return out


def interp_vjp_fp_periodic(g, x, xp, period):
    """Adjoint of ``fp`` in ``np.interp(x, xp, fp, period=period)`` (``left`` and ``right``
    not given): that of the periodic samples, each added to the value of ``fp`` it is."""
    if period is None:
        return interp_vjp_fp(g, x, xp, None, None)
    x, extended, index = _interp_periodic(x, xp, period)
    return _interp_gather_adjoint(interp_vjp_fp(g, x, extended, None, None), xp, index)


def interp_vjp_fp_periodic_dx(g, dx, x, xp, period):
    """Tangent of ``interp_vjp_fp_periodic(g, x, xp, period)`` in ``x`` (tangent ``dx``)."""
    if period is None:
        return interp_vjp_fp_dx(g, dx, x, xp)
    x, extended, index = _interp_periodic(x, xp, period)
    return _interp_gather_adjoint(interp_vjp_fp_dx(g, dx, x, extended), xp, index)


# -- polynomials ---------------------------------------------------------------------------
def polyval_vjp_p(g, p, x):
    """Adjoint of the coefficients ``p`` (1-d, highest power first) in ``np.polyval(p, x)``:
    ``p_bar[k] = sum(g * x ** (n - 1 - k))``."""
    n = np.shape(p)[0]
    powers = np.reshape(x, (-1, 1)) ** np.arange(n - 1, -1, -1)
    g = np.reshape(np.broadcast_to(g, np.shape(x)), (-1, 1))
    return np.sum(g * powers, axis=0)


def polyder_coefficients(p):
    """The coefficients of the derivative of the polynomial ``p`` (``np.polyder(p)``, in
    numpy's and cupy's code alike): ``p[:-1] * [n - 1, ..., 1]``."""
    return p[:-1] * np.arange(np.shape(p)[0] - 1, 0, -1)


def polyder_adjoint(g, p, m):
    """Adjoint of ``np.polyder(p, m)``: each derivative ``p[:-1] * arange(n - 1, 0, -1)``
    transposed, last first."""
    n = np.shape(p)[0]
    for j in range(m - 1, -1, -1):
        size = n - j  # the length of the j-th derivative's coefficients
        if size > 0:
            g = np.pad(g * np.arange(size - 1, 0, -1), (0, 1))
    return g


# -- np.cross -------------------------------------------------------------------------------
def _cross_three(v):
    """Vectors along the last axis of length 2 or 3, as 3-vectors (a zero third entry)."""
    if np.shape(v)[-1] == 3:
        return v
    return np.pad(v, [(0, 0)] * (np.ndim(v) - 1) + [(0, 1)])


def cross_adjoint(g, x, other, first=True, axisx=-1, axiso=-1, axisc=-1, axis=None):
    """Adjoint of ``x`` in ``np.cross(x, other)`` (``first``) or ``np.cross(other, x)``
    with the vectors of ``x``, ``other`` and the result along ``axisx``, ``axiso`` and
    ``axisc`` (all along ``axis`` where it is given): ``other × g`` (or ``g × other``),
    from ``<g, x × o> = <x, o × g>``. Vectors of 2 count as 3-vectors with a zero third
    entry; of two 2-vectors numpy returns the third entry alone."""
    if axis is not None:
        axisx = axiso = axisc = axis
    xm, om = np.moveaxis(x, axisx, -1), np.moveaxis(other, axiso, -1)
    if np.shape(xm)[-1] == 2 and np.shape(om)[-1] == 2:
        g3 = np.stack([np.zeros_like(g), np.zeros_like(g), g], axis=-1)
    else:
        g3 = np.moveaxis(g, axisc, -1)
    out = np.cross(_cross_three(om), g3) if first else np.cross(g3, _cross_three(om))
    out = out[..., : np.shape(xm)[-1]]
    return np.moveaxis(unbroadcast(out, xm), -1, axisx)


# -- np.gradient -----------------------------------------------------------------------------
def _gradient_stencils(h, n, edge_order):
    """The weights of ``np.gradient`` along an axis of ``n`` points: ``(a, b, c)`` of the
    inner points (``out[i] = a f[i-1] + b f[i] + c f[i+1]``), then the weights of the first
    and of the last output on the first and last ``edge_order + 1`` points, as numpy
    computes them (``h`` a number, or the differences of the coordinates)."""
    if np.ndim(h) == 0:
        inner = (-0.5 / h, 0.0 * h, 0.5 / h)
        if edge_order == 1:
            return inner, (-1.0 / h, 1.0 / h), (-1.0 / h, 1.0 / h)
        return inner, (-1.5 / h, 2.0 / h, -0.5 / h), (0.5 / h, -2.0 / h, 1.5 / h)
    dx1, dx2 = h[:-1], h[1:]
    inner = (-dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2), dx1 / (dx2 * (dx1 + dx2)))
    if edge_order == 1:
        return inner, (-1.0 / h[0], 1.0 / h[0]), (-1.0 / h[-1], 1.0 / h[-1])
    d1, d2 = h[0], h[1]
    first = (
        -(2.0 * d1 + d2) / (d1 * (d1 + d2)),
        (d1 + d2) / (d1 * d2),
        -d1 / (d2 * (d1 + d2)),
    )
    d1, d2 = h[-2], h[-1]
    last = (d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2), (2.0 * d2 + d1) / (d2 * (d1 + d2)))
    return inner, first, last


def _gradient_pad_last(v, before, after):
    return np.pad(v, [(0, 0)] * (np.ndim(v) - 1) + [(before, after)])


def _gradient_adjoint_last(g, h, edge_order):
    """Adjoint of ``np.gradient`` along the last axis, with spacing ``h``."""
    n = np.shape(g)[-1]
    (a, b, c), first, last = _gradient_stencils(h, n, edge_order)
    inner = g[..., 1:-1]
    out = _gradient_pad_last(a * inner, 0, 2) + _gradient_pad_last(c * inner, 2, 0)
    out = out + _gradient_pad_last(b * inner, 1, 1)
    k = len(first)
    head = np.stack([w * g[..., 0] for w in first], axis=-1)
    tail = np.stack([w * g[..., -1] for w in last], axis=-1)
    return out + _gradient_pad_last(head, 0, n - k) + _gradient_pad_last(tail, n - k, 0)


def gradient_adjoint(g, f, spacing, axis, edge_order):
    """Adjoint of ``np.gradient(f, *spacing, axis=axis, edge_order=edge_order)``: for each
    axis, its output's adjoint through the transposed difference stencil (``g`` is a list,
    one adjoint per axis, where numpy returns a tuple)."""
    nd = np.ndim(f)
    if axis is None:
        axes = list(range(nd))
    elif isinstance(axis, (tuple, list)):
        axes = [a % nd for a in axis]
    else:
        axes = [axis % nd]
    gs = list(g) if isinstance(g, (tuple, list)) else [g]
    if len(spacing) == 0:
        hs = [1.0] * len(axes)
    elif len(spacing) == 1 and np.ndim(spacing[0]) == 0:
        hs = [spacing[0]] * len(axes)
    else:
        hs = list(spacing)
    out = np.zeros_like(f, dtype=np.result_type(f, 1.0))
    for ax, h, part in zip(axes, hs, gs):
        if np.ndim(h) != 0:  # coordinates: their differences
            h = np.diff(np.asarray(h, dtype=np.result_type(h, 1.0)))
        moved = np.moveaxis(np.broadcast_to(part, np.shape(f)), ax, -1)
        out = out + np.moveaxis(_gradient_adjoint_last(moved, h, edge_order), -1, ax)
    return out
