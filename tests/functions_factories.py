"""User-style code that calls closures made by factories (``test_function_factories``):
a step function made for a step size, a scaled sine made as a lambda, a Gaussian made
for its parameters (active ones). In a module of their own, so that autograd's twin
rebinds the factories with the functions calling them."""

from __future__ import annotations

import numpy as np


def rhs(y, th):
    return -th[0] * y + th[1] * np.sin(y)


def make_euler(h):
    """A step of Euler's method of size ``h`` for ``rhs``."""

    def step(y, th):
        return y + h * rhs(y, th)

    return step


def make_rk4(f, dt):
    """A step of the classical Runge-Kutta method for the right-hand side ``f``."""
    half = 0.5 * dt

    def step(y, th):
        k1 = f(y, th)
        k2 = f(y + half * k1, th)
        k3 = f(y + half * k2, th)
        k4 = f(y + dt * k3, th)
        return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    return step


def scaled(a):
    return lambda x: a * np.sin(x)


def make_gauss(mu, sigma):
    inv = 1.0 / (sigma * sigma)

    def g(x):
        return np.exp(-0.5 * (x - mu) ** 2 * inv)

    return g


def fit_euler(theta, y0):
    step = make_euler(0.1)
    y = y0
    for _ in range(5):
        y = step(y, theta)
    return np.sum(y * y)


def fit_rk4(theta, y0):
    step = make_rk4(rhs, 0.05)
    y = y0
    for _ in range(3):
        y = step(y, theta)
    return np.sum(y * y)


def scaled_sine(x):
    g = scaled(2.0)
    return np.sum(g(x) * x)


def captured_active(x):
    g = scaled(x[0] * x[1])  # (the captured value depends on x)
    return np.sum(g(x))


def gauss_fit(p):
    g = make_gauss(p[0], p[1])
    xs = np.linspace(-1.0, 1.0, 5)
    return np.sum((g(xs) - 0.5) ** 2) + np.sum(g(p))


def two_steps(theta, y0):
    coarse = make_euler(0.2)
    fine = make_euler(0.05)
    y = coarse(y0, theta)
    z = fine(fine(y0, theta), theta)
    return np.sum(y * z)


def step_size_active(theta, y0):
    step = make_euler(theta[0] * 0.1)  # (the step size is differentiated too)
    y = step(y0, theta)
    return np.sum(np.tanh(y))


def loss_calling_a_helper(theta, y0):
    return np.sum(simulate(theta, y0) ** 2)


def simulate(theta, y0):
    """A helper (differentiated as a callee) that uses a factory."""
    step = make_rk4(rhs, 0.1)
    y = step(y0, theta)
    return step(y, theta)


# -- refused -------------------------------------------------------------------


def make_branching(kind):
    if kind == "sin":

        def f(x):
            return np.sin(x)

    else:

        def f(x):
            return np.cos(x)

    return f


def make_pair(a):
    def f(x):
        return a * x

    def g(x):
        return x / a

    return f, g


def make_many(*scales):
    def f(x):
        return sum(scales) * x

    return f


def branching_factory(x):
    f = make_branching("sin")
    return np.sum(f(x))


def pair_factory(x):
    f, g = make_pair(2.0)
    return np.sum(f(x) + g(x))


def starred_factory(x):
    f = make_many(1.0, 2.0)
    return np.sum(f(x))


def closures_in_a_list(x, i):
    fs = [scaled(1.0), scaled(2.0)]
    return np.sum(fs[i](x))


def factory_in_a_loop(x):
    total = 0.0
    for k in range(3):
        g = scaled(k + 1.0)
        total = total + np.sum(g(x))
    return total


# -- tables of functions (issue 18, leftover item 2) ------------------------------------


def cube(v):
    return v * v * v


def loop_over_a_display(x):
    total = 0.0
    for f in (np.sin, np.cos, cube):
        total = total + np.sum(f(x))
    return total


def tuple_by_constant_index(x):
    fs = (np.tanh, cube, np.exp)
    return np.sum(fs[0](x) * fs[-1](x)) + np.sum(fs[1](x))


def dict_by_constant_key(x):
    activations = {"tanh": np.tanh, "cube": cube}
    return np.sum(activations["tanh"](x) + activations["cube"](x))


def loop_over_dict_items(x, w):
    fs = {"sin": np.sin, "cube": cube}
    total = 0.0
    for name, f in fs.items():
        weight = w[0] if name == "sin" else w[1]
        total = total + weight * np.sum(f(x))
    return total


def lambdas_and_closures_in_a_list(x):
    fs = [lambda y: y * 2.0, lambda y: np.sin(y) ** 2, scaled(x[0])]
    return sum(np.sum(f(x)) for f in fs)


def nested_defs_in_a_table(x, w):
    def layer(h):
        return np.tanh(w * h)

    def square(h):
        return h * h

    fs = [layer, square, layer]
    h = x
    for f in fs:
        h = f(h)
    return np.sum(h)


def functions_passed_through_a_table(theta, y0):
    steppers = (make_euler(0.1), make_rk4(rhs, 0.1))
    return np.sum(steppers[0](y0, theta) * steppers[1](y0, theta))


def loop_with_a_break(x):
    total = 0.0
    for f in (np.sin, np.cos):
        total = total + np.sum(f(x))
        if total > 10.0:
            break
    return total


def table_changed(x):
    fs = [np.sin, np.cos]
    fs[0] = np.tanh
    return np.sum(fs[0](x))


def loop_variable_read_after(x):
    total = 0.0
    for f in (np.sin, np.cos):
        total = total + np.sum(f(x))
    return total + np.sum(f(x))


def make_euler_of(f, dt):
    """(The code ``test_function_factories`` gives ``make_rk4`` to check the cache.)"""

    def step(y, th):
        return y + dt * f(y, th)

    return step
