"""Runtime helpers of the rules for shape, assembly and indexing functions
(``srcgrad/rules/shapes.py``).

Like those of :mod:`srcgrad.runtime`, each is copied as source into the generated
modules that call it (with ``np`` bound to their array module): a plain function of
arrays and Python values that works on numpy and cupy alike."""

import numpy as np


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


def diff_adjoint(g, n, axis):
    """Adjoint of ``np.diff(x, n, axis)``: the transposed difference (``-diff`` of ``g``
    with a zero before and after), ``n`` times."""
    for _ in range(n):
        g = -np.diff(g, axis=axis, prepend=0, append=0)
    return g


def append_adjoint(g, arr, values, axis, which):
    """Adjoint of ``arr`` (``which`` 0) or ``values`` (1) in ``np.append(arr, values,
    axis)``: ``g`` cut where they met (flat, for ``axis=None``) and shaped like it."""
    if axis is None:
        flat = np.ravel(g)
        part = flat[: np.size(arr)] if which == 0 else flat[np.size(arr) :]
        return np.reshape(part, np.shape(arr if which == 0 else values))
    cut = np.shape(arr)[axis]
    index = [slice(None)] * np.ndim(g)
    index[axis] = slice(None, cut) if which == 0 else slice(cut, None)
    return g[tuple(index)]
