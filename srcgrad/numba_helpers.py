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
    """Sum ``g`` down to ``shape`` (of any rank): each element of ``g`` added into
    the element of the result its index broadcasts from, the axes lined up at the end."""
    if len(shape) == 0:  # (a number's shape: everything summed)
        if isinstance(g, (float, int)):
            return g + 0.0
        return np.sum(g) + 0.0
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


def matmul_shape(a, b):
    """The shape of ``x @ y`` for ``x`` of shape ``a`` and ``y`` of shape ``b``, operands
    of rank 1 or 2 (numba's ``@``); a ``ValueError`` where ``x @ y`` would raise one."""
    if len(b) == 1:
        if a[-1] != b[0]:
            raise ValueError("matmul: the operands' shapes do not match in their core dimension")
        return a[:-1]
    if a[-1] != b[-2]:
        raise ValueError("matmul: the operands' shapes do not match in their core dimension")
    if len(a) == 1:
        return b[:-2] + b[-1:]
    return a[:-1] + b[-1:]


def zero_adjoint(x):
    """A zero adjoint for ``x``: ``0.0`` for a number, zeros like an array."""
    if isinstance(x, (float, int)):
        return 0.0
    return np.zeros_like(x)


def add_seq(a, b):
    """``a + b`` for adjoints that are numbers or arrays (this form refuses containers,
    where ``+`` would join them instead of adding)."""
    if isinstance(a, (list, tuple)):
        raise TypeError("compile='numba': adjoints of lists and tuples are not added here")
    return a + b


def spread(g, xs):
    """Adjoint of ``sum(xs)`` for a list ``xs``: ``g`` for every element (summed to its
    shape)."""
    return [unbroadcast(g, x) for x in xs]


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
    "matmul_shape": matmul_shape,
    "zero_adjoint": zero_adjoint,
    "add_seq": add_seq,
    "spread": spread,
}
