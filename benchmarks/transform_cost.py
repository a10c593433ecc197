"""One-time cost of generating a derivative: a 30-line function with a loop and a
helper call, differentiated in reverse and forward mode (issue 5 asks for it).

    python benchmarks/transform_cost.py

Prints the first call (transformation + run) and the median of later calls (run only).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import srcgrad


def layer(h, w, b):
    z = h @ w + b
    return np.tanh(z)


def model(w1, w2, b1, b2, xs, target):
    h = np.zeros_like(b1)
    total = 0.0
    for t in range(xs.shape[0]):
        x = xs[t]
        u = layer(x, w1, b1)
        if np.sum(u) > 0.0:
            h = 0.9 * h + 0.1 * u
        else:
            h = h - 0.05 * u
        y = layer(h, w2, b2)
        err = y - target[t]
        total = total + np.sum(err * err)
        reg = 0.01 * np.sum(w1 * w1)
        total = total + reg
    scale = 1.0 / xs.shape[0]
    mean = total * scale
    penalty = 0.001 * np.sum(w2 * w2)
    smooth = np.sum(np.abs(b1)) * 0.0001
    result = mean + penalty
    result = result + smooth
    return result


def first_and_later(make, args, repeats=20):
    derivative = make()
    start = time.perf_counter()
    derivative(*args)
    first = time.perf_counter() - start
    later = []
    for _ in range(repeats):
        start = time.perf_counter()
        derivative(*args)
        later.append(time.perf_counter() - start)
    return first, statistics.median(later)


def main() -> None:
    rng = np.random.default_rng(0)
    args = (
        rng.standard_normal((4, 8)),
        rng.standard_normal((8, 3)),
        rng.standard_normal(8),
        rng.standard_normal(3),
        rng.standard_normal((10, 4)),
        rng.standard_normal((10, 3)),
    )
    for mode in ("reverse", "forward"):
        first, later = first_and_later(
            lambda mode=mode: srcgrad.grad(model, wrt=(0, 1), mode=mode), args
        )
        print(
            f"{mode:>7}: first call {first * 1e3:7.1f} ms, later calls {later * 1e3:6.2f} ms, "
            f"transformation about {(first - later) * 1e3:7.1f} ms"
        )


if __name__ == "__main__":
    main()
