"""Functions with the statements ``test_kept_statements.py`` checks (``assert``, ``raise``,
``print``), in a module of their own: pytest rewrites the ``assert`` statements of test
modules, and srcgrad differentiates only source that is the code Python runs."""

from __future__ import annotations

import warnings

import numpy as np


def checked(x, n):
    assert n > 0, f"n must be positive, got {n}"
    y = np.sin(x) * n
    if np.any(np.abs(y) > 100.0):
        raise ValueError("too big")
    return np.sum(y * x)


def checked_in_a_loop(x):
    total = 0.0
    for k in range(3):
        assert np.all(np.isfinite(x)), "x has a nan"
        total = total + np.sum(np.tanh(x * k))
    return total


def prints(x):
    y = np.exp(x) * 0.5
    print("y:", np.round(y, 3))
    return np.sum(y * y)


def imports_inside(x):
    from math import pi

    import numpy as np
    from scipy import special

    return np.sum(special.expit(x) * pi)


def import_in_a_branch(x):
    if x[0] > 0:
        import math  # noqa: F401
    return x[0] * 2.0


def warns(x):
    y = np.exp(x) * 0.5
    if np.max(y) > 0.0:
        warnings.warn("y is positive", stacklevel=2)
    return np.sum(y * y)


def formats(x):
    y = np.sin(x) * x
    label = f"loss {np.sum(y):.3f} over {len(x)} values ({x[0]!r:>12})"
    width = 8
    padded = f"{label:<{width}}|"
    return np.sum(y * y) * len(padded) / len(label)


def formats_then_reads(x):
    y = float(f"{x[0]:.3f}")
    return y * x[1]


def rebinds_format(x):
    format = 3
    label = f"{x[0]}"
    return np.sum(x) * (len(label) + format)
