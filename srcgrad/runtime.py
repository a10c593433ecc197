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
    """A zero adjoint (or tangent) for ``x``, or None where ``x`` was never given a value;
    floats for a bool (``y = y > 0.5`` on one path: numpy has no ``-`` of bools)."""
    if x is None:
        return None
    if isinstance(x, (list, tuple, dict)):
        return zeros_seq(x)
    if isinstance(x, bool) or getattr(getattr(x, "dtype", None), "kind", None) == "b":
        return np.zeros_like(x, dtype=float)
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


def unstack_like(g, x):
    """Adjoint of ``np.array(x)``: ``g`` cut into the nested lists and tuples ``x`` is
    made of (a list for each), ``g`` itself where ``x`` is an array or a number."""
    if isinstance(x, (list, tuple)):
        return [unstack_like(gk, xk) for gk, xk in zip(g, x)]
    return g


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


def check_in_place(value, name):
    """Raise as numpy would where ``name += v`` (or ``-=``, ``*=``, ``/=``...) writes a
    float into ``value``, an integer or bool array, in place: numpy refuses that cast
    (rule 'same_kind'). srcgrad's code computes ``name + v`` as a new array, so it asks
    first, where it could not tell before the code ran what ``name`` holds."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and hasattr(type(value), "__iadd__") and dtype.kind in "iub":
        raise TypeError(
            f"`{name}` is an array of dtype {dtype}, and the function changes it in place "
            f"by a float (`{name} += ...`, `{name}[1:] *= ...`): numpy refuses that "
            f"(casting rule 'same_kind'), so the function raises here and has no "
            f"derivative. Make `{name}` a float "
            f"array first (`{name} = {name}.astype(float)`)."
        )


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
