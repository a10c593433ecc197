"""The runtime helpers in the numba profile: forms of a few of :mod:`srcgrad.runtime`'s
helpers that ``numba.njit`` compiles, copied into generated modules made for
``compile="numba"`` in place of the plain ones (so ``.source`` is what numba compiled).

They take arrays and numbers only (numba passes no lists or dicts), and their messages are
constants (numba raises exceptions with constant arguments). The helpers with no form here
are refused in the numba profile (``srcgrad.compiled.refuse``).
"""

import numpy as np

from .rules.helpers import elementwise


def check_cotangent(dout, value):
    """Raise unless the cotangent ``dout`` has the shape of the output ``value``."""
    if np.shape(dout) != np.shape(value):
        raise ValueError(
            "vjp: the cotangent's shape is not the function's output's; pass a cotangent "
            "shaped like the output"
        )


def check_scalar(value):
    """Raise unless ``value`` is a scalar, as ``grad`` requires."""
    if np.asarray(value).ndim != 0:
        raise ValueError(
            "grad requires a function with a scalar output, but it returned an array; use "
            "srcgrad.vjp or srcgrad.jacobian for array outputs"
        )
    return value


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``: the adjoint of numpy broadcasting (``x`` a
    number or an array of rank 1 or more)."""
    if isinstance(x, (float, int)):
        if isinstance(g, (float, int)):
            return g
        return np.sum(g)
    return unbroadcast_to(g, np.shape(x))


def unbroadcast_to(g, shape):
    """Sum ``g`` down to ``shape`` (of rank 1 or more): each element of ``g`` added into
    the element of the result its index broadcasts from, the axes lined up at the end."""
    if isinstance(g, (float, int)):
        return np.full(shape, g)
    out = np.zeros(shape, g.dtype)
    into = out.reshape(-1)
    items = np.ascontiguousarray(g).reshape(-1)
    lead = g.ndim - len(shape)
    for k in range(items.size):
        rest = k
        j = 0
        stride = 1
        for axis in range(g.ndim - 1, -1, -1):
            i = rest % g.shape[axis]
            rest = rest // g.shape[axis]
            if axis >= lead:
                n = shape[axis - lead]
                if n != 1:
                    j += i * stride
                stride *= n
        into[j] += items[k]
    return out


def index_adjoint(g, x, index):
    """Adjoint of ``x[index]`` for a basic index (an integer, a slice, a tuple of them)
    of an array ``x``: ``g`` placed in zeros shaped like ``x``."""
    out = np.zeros_like(x)
    out[index] = g
    return out


#: the helpers with a numba form, by name (the tangent helpers of elementwise rules
#: compile as they are: numba's np.where takes numbers and arrays alike)
FORMS = {
    "tangent_div": elementwise.tangent_div,
    "tangent_mul": elementwise.tangent_mul,
    "index_adjoint": index_adjoint,
    "check_cotangent": check_cotangent,
    "check_scalar": check_scalar,
    "unbroadcast": unbroadcast,
    "unbroadcast_to": unbroadcast_to,
}
