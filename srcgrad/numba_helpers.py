"""The runtime helpers in the numba profile: forms of a few of :mod:`srcgrad.runtime`'s
helpers that ``numba.njit`` compiles, copied into generated modules made for
``compile="numba"`` in place of the plain ones (so ``.source`` is what numba compiled).

They take arrays and numbers only (numba passes no lists or dicts), and their messages are
constants (numba raises exceptions with constant arguments). The helpers with no form here
are refused in the numba profile (``srcgrad.compiled.refuse``).
"""

import numpy as np


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


#: the helpers with a numba form, by name
FORMS = {"check_cotangent": check_cotangent, "check_scalar": check_scalar}
