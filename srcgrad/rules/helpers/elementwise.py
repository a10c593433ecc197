"""Runtime helpers of the rules for elementwise functions (``srcgrad/rules/elementwise.py``).

Like those of :mod:`srcgrad.runtime`, each is copied as source into the generated
modules that call it (with ``np`` bound to their array module): a plain function of
arrays and Python values that works on numpy and cupy alike."""

import numpy as np


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
