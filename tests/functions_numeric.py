"""Small user-style functions, one per rule (or variant of a rule) in
``srcgrad/rules/numeric.py``. ``tests/test_rules_numeric.py`` differentiates them.

Functions of ``np.gradient`` on arrays of more than one axis get a tuple from numpy and
combine its parts into one array (the rule tests compare arrays)."""

import numpy as np

XP = np.array([-1.0, 0.0, 0.5, 2.0, 2.5])  # sample points of np.interp (increasing)
#: sample points of a periodic np.interp (any order; 0.8 apart modulo 2 pi and modulo 7)
XP_PERIODIC = np.array([2.5, 0.2, 1.0, 4.1, 5.0])

# -- np.convolve ---------------------------------------------------------------------------------


def convolve_full(a, v):
    return np.convolve(a, v)


def convolve_same(a, v):
    return np.convolve(a, v, "same")


def convolve_valid(a, v):
    return np.convolve(a, v, mode="valid")


def convolve_dynamic(a, v, mode):
    return np.convolve(a, v, mode)


def convolve_self(a):
    return np.convolve(a, a)


# -- np.correlate ---------------------------------------------------------------------------------


def correlate(a, v):
    return np.correlate(a, v)


def correlate_same(a, v):
    return np.correlate(a, v, "same")


def correlate_full(a, v):
    return np.correlate(a, v, mode="full")


def correlate_dynamic(a, v, mode):
    return np.correlate(a, v, mode)


def correlate_self(a):
    return np.correlate(np.sin(a), a, "full") * np.correlate(a, a[::-1], "same")[0]


def correlate_of_complex(a):
    return np.abs(np.sum(np.correlate(a, a * 1j, "full")))


# -- np.trapezoid ------------------------------------------------------------------------------


def trapezoid(y):
    return np.trapezoid(y)


def trapezoid_x(y, x):
    return np.trapezoid(y, x)


def trapezoid_x_axis0(y, x):
    return np.trapezoid(y, x=x, axis=0)


def trapezoid_dx(y, dx):
    return np.trapezoid(y, dx=dx)


def trapezoid_dynamic(y, x, dx, axis):
    return np.trapezoid(y, x, dx, axis)


def trapezoid_of_square(x):
    return np.trapezoid(x**2, x)


# -- np.interp -------------------------------------------------------------------------------------


def interp(x, fp):
    return np.interp(x, XP, fp)


def interp_left_right(x, fp, left, right):
    return np.interp(x, XP, fp, left=left, right=right)


def interp_sample_points(x, xp, fp):
    return np.interp(x, xp, fp)


def interp_of_sine(x):
    return np.interp(x, XP, np.sin(XP * x[0]))


def interp_period(x, fp):
    return np.interp(x, XP_PERIODIC, fp, period=2 * np.pi)


def interp_period_negative(x, fp):
    return np.interp(x, XP_PERIODIC, fp, period=-7.0)


def interp_period_of_sine(x):
    return np.interp(x, XP_PERIODIC, np.sin(XP_PERIODIC * x[0]), period=2 * np.pi)


def interp_period_dynamic(x, fp, period):
    return np.interp(x, XP, fp, period=period)


# -- polynomials ---------------------------------------------------------------------------------


def polyval(p, x):
    return np.polyval(p, x)


def polyval_polyder(p, x):
    return np.polyval(np.polyder(p), x) * x


def polyder(p):
    return np.polyder(p)


def polyder_twice(p):
    return np.polyder(p, 2)


def polyder_dynamic(p, m):
    return np.polyder(p, m)


# -- np.cross ------------------------------------------------------------------------------------


def cross(a, b):
    return np.cross(a, b)


def cross_axes(a, b):
    return np.cross(a, b, axisa=0, axisb=-1, axisc=0)


def cross_axis(a, b):
    return np.cross(a, b, axis=0)


def cross_dynamic(a, b, axisa, axisb, axisc, axis):
    return np.cross(a, b, axisa, axisb, axisc, axis)


def cross_self(a):
    return np.cross(a, np.sin(a))


# -- np.gradient -----------------------------------------------------------------------------------


def gradient(f):
    return np.gradient(f)


def gradient_spacing(f):
    return np.gradient(f, 0.5, edge_order=2)


def gradient_axis(f):
    return np.gradient(f, 0.25, axis=-1)


def gradient_coordinates(f):
    return np.gradient(f, np.linspace(0.0, 1.0, f.shape[0]) ** 2 + 0.1, axis=0)


def gradient_all_axes(f):
    parts = np.gradient(f, 0.5, 2.0)
    return parts[0] * parts[1]


def gradient_unpacked(f):
    dy, dx = np.gradient(f)
    return dy - 3.0 * dx


def gradient_dynamic(f, h, axis, edge_order):
    return np.gradient(f, h, axis=axis, edge_order=edge_order)
