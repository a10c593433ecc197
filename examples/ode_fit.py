"""Fit an ODE's parameters through an RK4 integrator that takes the ODE as an argument.

Run:  python examples/ode_fit.py [--quick] [--out DIR]

A population grows logistically, dy/dt = r y (1 - y / K), from y(0) = 0.1; we
observe it, with noise, at 25 times, and fit the growth rate r and capacity K by
gradient descent on the squared error. The integrator is the textbook one: a
function ``rk4_step(f, y, params, dt)`` that calls the right-hand side ``f`` it is
given, four times a step. srcgrad differentiates the loss through the loop of
steps and through each call of ``f`` (it makes the derivative for the function
passed in, ``logistic``), in reverse mode; the gradient is checked against
forward mode and finite differences first. The fitted parameters are printed and
the data, the initial guess and the fit drawn to DIR/ode_fit.png. ``--quick`` runs
three iterations (the test suite's smoke run).
"""

from __future__ import annotations

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
from srcgrad.testing import check_grads  # noqa: E402

DT = 0.2  # time step
STEPS_PER_OBSERVATION = 2
OBSERVATIONS = 25
TRUE = np.array([0.8, 2.5])  # r, K


def logistic(y, params):
    """The right-hand side dy/dt of the logistic ODE."""
    return params[0] * y * (1.0 - y / params[1])


def rk4_step(f, y, params, dt):
    """One classical Runge-Kutta step of dy/dt = f(y, params)."""
    k1 = f(y, params)
    k2 = f(y + 0.5 * dt * k1, params)
    k3 = f(y + 0.5 * dt * k2, params)
    k4 = f(y + dt * k3, params)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def trajectory(params, y0):
    """y at each observation time."""
    ys = []
    y = y0
    for _ in range(OBSERVATIONS):
        for _ in range(STEPS_PER_OBSERVATION):
            y = rk4_step(logistic, y, params, DT)
        ys.append(y)
    return np.stack(ys)


def loss(params, y0, observed):
    error = trajectory(params, y0) - observed
    return np.mean(error * error)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three iterations only")
    parser.add_argument("--out", default=".", help="directory for ode_fit.png")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    rng = np.random.default_rng(0)
    y0 = np.array([0.1])
    observed = trajectory(TRUE, y0) + 0.05 * rng.standard_normal((OBSERVATIONS, 1))
    params = np.array([0.3, 1.5])  # the initial guess

    check_grads(loss, (params, y0, observed), wrt=0)
    print("check_grads: reverse mode, forward mode and finite differences agree")
    value_and_grad = srcgrad.value_and_grad(loss)
    source = srcgrad.grad(loss).source
    start = source.index("def rk4_step_fwd")
    print("the integrator's step, as srcgrad generated it for f = logistic:")
    print(source[start : source.index("\n\n\n", start)])

    guess = params.copy()
    iterations = 3 if args.quick else 400
    mean_square = np.zeros(2)
    for step in range(1, iterations + 1):  # RMSprop: the two parameters differ in scale
        value, g = value_and_grad(params, y0, observed)
        mean_square = 0.9 * mean_square + 0.1 * g * g
        rate = 0.05 * 0.99**step
        params = params - rate * g / (np.sqrt(mean_square) + 1e-8)
        if step == 1 or step % 100 == 0:
            print(f"iteration {step}: loss {value:.5f}, r = {params[0]:.3f}, K = {params[1]:.3f}")
    print(f"fitted r = {params[0]:.3f}, K = {params[1]:.3f} (true: r = 0.8, K = 2.5)")

    times = DT * STEPS_PER_OBSERVATION * np.arange(1, OBSERVATIONS + 1)
    plt.figure(figsize=(6, 4))
    plt.plot(times, observed[:, 0], "o", label="observed")
    plt.plot(times, trajectory(guess, y0)[:, 0], "--", label="initial guess")
    plt.plot(times, trajectory(params, y0)[:, 0], label="fit")
    plt.xlabel("t")
    plt.ylabel("y")
    plt.legend()
    plt.tight_layout()
    plt.savefig(out / "ode_fit.png", dpi=120)
    print(f"wrote {out / 'ode_fit.png'}")


if __name__ == "__main__":
    main()
