"""User-style code that passes functions as arguments (``test_functions_as_arguments``):
an RK4 integrator called with the right-hand side of an ODE, and small ``map``-style
helpers. In a module of their own, so that autograd's twin rebinds them together."""

from __future__ import annotations

import numpy as np


def rk4(f, y, theta, dt):
    k1 = f(y, theta)
    k2 = f(y + 0.5 * dt * k1, theta)
    k3 = f(y + 0.5 * dt * k2, theta)
    k4 = f(y + dt * k3, theta)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def decay(y, theta):
    return -theta * y


def logistic(y, theta):
    return theta * y * (1.0 - y)


def fit_decay(theta, y0):
    y = y0
    for _ in range(4):
        y = rk4(decay, y, theta, 0.1)
    return np.sum(y**2)


def fit_both(theta, y0):
    return np.sum(rk4(logistic, y0, theta, 0.1)) + np.sum(rk4(decay, y0, theta, 0.1) * y0)


def apply(f, x):
    return np.sum(f(x) * x)


def twice(f, x):
    return apply(f, x) + np.sum(f(x * 0.5))


def square(v):
    return v * v


triple = lambda v: v * 3.0  # noqa: E731 (a lambda passed as an argument)


def constant_from(f, x):
    c = f(2.0)  # (a value srcgrad does not differentiate: any callable will do)
    return np.sum(x * c)
