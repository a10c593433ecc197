"""Cost of reverse mode for loops that write array items, against trip count.

    python benchmarks/loop_writes.py

For ``y[i] += v * x[i]`` (an increment), ``y[i] = v * x[i]`` (a plain write) and
``y[i] = v * y[i - 1] + x[i]`` (a recurrence: a write and a read of an earlier item), and
a ``while`` loop over ``x[i]`` that stops at a ``break`` (here after all n trips), and a
loop that only reads ``x[i]`` after a line whose adjoint gives ``x_bar`` a value (``y = y
+ np.sin(x)``, after the loop), in a loop of n trips: the median time of srcgrad's
gradient and of a hand-written numpy gradient of the same loop, per n, and the exponent
of a least-squares fit of log time against log n (1 is linear, 2 quadratic).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import srcgrad


def increments(x, v):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] += v * x[i]
    return np.sum(y * y)


def writes(x, v):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] = v * x[i]
    return np.sum(y * y)


def recurrence(x, v):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = v * y[i - 1] + x[i]
    return np.sum(y * y)


def recurrence_by_hand(x, v):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = v * y[i - 1] + x[i]
    y_bar = 2.0 * y
    x_bar = np.zeros_like(x)
    v_bar = 0.0
    for i in reversed(range(1, x.shape[0])):
        g = y_bar[i]
        x_bar[i] += g
        v_bar += g * y[i - 1]
        y_bar[i - 1] += g * v
    x_bar[0] += y_bar[0]
    return x_bar, v_bar


def by_hand(x, v):
    """What a careful person writes for either: the loop, then its adjoint loop."""
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] += v * x[i]
    return _increments_adjoint(x, v, 2.0 * y, np.zeros_like(x))


def _increments_adjoint(x, v, y_bar, x_bar):
    """The adjoint loop of ``y[i] += v * x[i]``, adding into ``x_bar``."""
    v_bar = 0.0
    for i in reversed(range(x.shape[0])):
        g = y_bar[i]
        v_bar += g * x[i]
        x_bar[i] += g * v
    return x_bar, v_bar


def while_break(x, v):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        if x[i] > v:
            break
        s = s + np.sin(x[i]) * x[i]
        i += 1
    return s


def while_break_by_hand(x, v):
    i = 0
    while i < x.shape[0]:
        if x[i] > v:
            break
        i += 1
    x_bar = np.zeros_like(x)
    for k in reversed(range(i)):
        x_bar[k] += np.cos(x[k]) * x[k] + np.sin(x[k])
    return x_bar


def read_after(x, v):
    y = np.zeros(x.shape)
    for i in range(x.shape[0]):
        y[i] += v * x[i]
    y = y + np.sin(x)
    return np.sum(y * y)


def read_after_by_hand(x, v):
    y = np.zeros(x.shape)
    for i in range(x.shape[0]):
        y[i] += v * x[i]
    y = y + np.sin(x)
    y_bar = 2.0 * y
    return _increments_adjoint(x, v, y_bar, y_bar * np.cos(x))


def median_time(f, *args, repeats: int = 5) -> float:
    f(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    sizes = (1_000, 4_000, 16_000)
    rows = {
        "y[i] += v * x[i]": srcgrad.grad(increments, wrt=(0, 1)),
        "y[i] = v * x[i]": srcgrad.grad(writes, wrt=(0, 1)),
        "hand-written (either)": by_hand,
        "y[i] = v * y[i - 1] + x[i]": srcgrad.grad(recurrence, wrt=(0, 1)),
        "hand-written (recurrence)": recurrence_by_hand,
        "while with break": srcgrad.grad(while_break),
        "hand-written (while with break)": while_break_by_hand,
        "read after a line with an adjoint": srcgrad.grad(read_after, wrt=(0, 1)),
        "hand-written (read after)": read_after_by_hand,
    }
    print("| loop | " + " | ".join(f"n = {n}" for n in sizes) + " | exponent |")
    print("|---|" + "---|" * len(sizes) + "---|")
    for label, f in rows.items():
        threshold = 2.0 if "break" in label else 0.5  # (the break never comes: n trips)
        times = [median_time(f, np.linspace(0.0, 1.0, n), threshold) for n in sizes]
        fit = np.polyfit(np.log(sizes), np.log(times), 1)[0]
        cells = " | ".join(f"{t * 1e3:.1f} ms" for t in times)
        print(f"| {label} | {cells} | {fit:.2f} |")


if __name__ == "__main__":
    main()
