"""A user's script, typed, using every transformation: ``mypy --strict`` must pass on it
(.ci/run checks it); ``main`` runs (``tests/test_typing.py`` runs it).

The lines of ``mistakes`` (never called), each marked ``# type: ignore[...]``, are
mistakes a type checker must catch: under ``--strict`` an ignore that silences nothing
is itself an error, so each one checks that srcgrad's types reject that call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

import srcgrad
from srcgrad.testing import check_grads

Array = NDArray[np.float64]


def loss(w: Array, x: Array, y: Array) -> float:
    p = 1 / (1 + np.exp(-(x @ w)))
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def model(w: Array, x: Array) -> Array:
    return np.tanh(x @ w)


def wave(t: Array) -> Array:
    return np.sin(t) * t


@srcgrad.grad(wrt="w")
def decorated(w: Array, scale: float = 2.0) -> float:
    return float(np.sum(w * w) * scale)


def main() -> None:
    rng = np.random.default_rng(0)
    w, x, y = rng.standard_normal(3), rng.standard_normal((5, 3)), rng.random(5)

    g: srcgrad.Derivative[[Array, Array, Array]] = srcgrad.grad(loss)
    print(g(w, x, y), g.source.count("\n"))

    value, gradient = srcgrad.value_and_grad(loss, argnums=(0, 1), mode="forward")(w, x, y)
    both = srcgrad.grad(argnums=(0, 1))(loss)  # the decorator form with options
    print(value, gradient, both(w, x, y))

    print(decorated(w), decorated(w, scale=3.0))

    out, tangent = srcgrad.jvp(model)(w, x, np.ones(3))  # (the tangents follow)
    cotangents = srcgrad.vjp(model, wrt=(0, 1))(w, x, np.ones(5))
    out, vjp_fn = srcgrad.vjp(model, return_fn=True)(w, x)
    w_bar: Any = vjp_fn(np.ones_like(out))
    print(tangent, cotangents, w_bar)

    jac: srcgrad.Jacobian[[Array, Array]] = srcgrad.jacobian(model, mode="forward")
    print(jac(w, x).shape, srcgrad.jacfwd(model)(w, x), srcgrad.jacrev(model, argnums=1)(w, x))
    print(srcgrad.hessian(loss)(w, x, y), srcgrad.hvp(loss)(w, x, y, np.ones(3)))
    compiled: srcgrad.Jacobian[[Array, Array, Array]] = srcgrad.hessian(loss, compile=None)
    print(compiled(w, x, y), srcgrad.jacrev(model, compile=None), srcgrad.hvp(loss, compile=None))

    ts = np.linspace(-2.0, 2.0, 5)
    first = srcgrad.elementwise_grad(wave)
    print(first(ts), srcgrad.elementwise_grad(first)(ts), srcgrad.grad(srcgrad.grad(decorated)))

    params = {"w": w, "b": 0.5}
    step = srcgrad.tree_map(lambda p: p * 0.9, params)
    print(srcgrad.tree_leaves(step), srcgrad.__version__)
    check_grads(loss, (w, x, y), argnums=0)
    srcgrad.show(g)


def mistakes(w: Array, x: Array, y: Array, ts: Array) -> None:
    """Calls with the wrong arguments, each one an error for the type checker."""
    g = srcgrad.grad(loss)
    both = srcgrad.grad(argnums=(0, 1))(loss)
    jac = srcgrad.jacobian(model, mode="forward")
    first = srcgrad.elementwise_grad(wave)
    g(w, x)  # type: ignore[call-arg]
    g(w, x, y, 1.0)  # type: ignore[call-arg]
    g(w, x, "y")  # type: ignore[arg-type]
    both(w)  # type: ignore[call-arg]
    decorated(w, scale="3")  # type: ignore[arg-type]
    srcgrad.vjp(model, return_fn=True)(w)  # type: ignore[call-arg]
    jac(w)  # type: ignore[call-arg]
    srcgrad.hessian(loss)(w, x)  # type: ignore[call-arg]
    first(ts, ts)  # type: ignore[call-arg]


if __name__ == "__main__":
    main()
