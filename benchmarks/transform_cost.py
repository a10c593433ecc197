"""One-time cost of generating a derivative.

    python benchmarks/transform_cost.py            # the 30-line function
    python benchmarks/transform_cost.py --scaling  # 10 to 1,000 statements
    python benchmarks/transform_cost.py --scaling --write  # both, kept in TRANSFORM_COST.md
    python benchmarks/transform_cost.py --stages   # the 30-line function, stage by stage

The first: a 30-line function with a loop and a helper call, differentiated in reverse
and forward mode; prints the first call (transformation + run) and the median of later
calls (run only). The second: straight-line numpy functions of n statements and loops
whose body has n statements, first-call CPU time in each mode, and the exponent of a
least-squares fit of log time against log n (1 is linear). The third: where the first
call's time goes, stage by stage (CPU time, median of 7 fresh copies of the function).
"""

from __future__ import annotations

import collections
import importlib.util
import os
import platform
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

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


#: the driver's stages, as it calls them (their callees' derivatives included)
_STAGES = ("parse", "normalize", "analyze", "forward", "reverse", "optimize", "split")


def stages(repeats: int = 7) -> list[str]:
    """CPU time per stage of the first call of the 30-line function's gradient, in each
    mode: the driver's stage functions timed where it calls them."""
    from srcgrad.compiler import driver
    from srcgrad.compiler import emit as emit_stage

    spent: collections.Counter[str] = collections.Counter()

    def timed(module: object, attr: str, label: str) -> None:
        inner = getattr(module, attr)

        def stage(*args: object, **kwargs: object) -> object:
            start = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] += time.process_time() - start

        setattr(module, attr, stage)

    for attr in _STAGES:
        timed(driver, attr, attr)
    timed(emit_stage, "render", "emit (render)")
    timed(emit_stage, "load", "emit (compile)")
    rng = np.random.default_rng(0)
    args = tuple(
        rng.standard_normal(shape) for shape in ((4, 8), (8, 3), (8,), (3,), (10, 4), (10, 3))
    )
    srcgrad.grad(_function(3, False, Path(tempfile.mkdtemp())))(  # (one-time costs)
        np.ones(4), np.full(4, 0.3), np.eye(4)
    )
    lines = ["| mode | stage | CPU time | share |", "|---|---|---|---|"]
    print(*lines, sep="\n")
    for mode in ("reverse", "forward"):
        runs = []
        for _ in range(repeats):
            spent.clear()
            fresh = types.FunctionType(model.__code__, model.__globals__, model.__name__)
            start = time.process_time()
            srcgrad.grad(fresh, wrt=(0, 1), mode=mode)(*args)
            total = time.process_time() - start
            runs.append((total, dict(spent)))
        total, parts = sorted(runs, key=lambda run: run[0])[repeats // 2]
        rest = total - sum(parts.values())
        rows = sorted(parts.items(), key=lambda item: -item[1])
        rows.append(("the rest (checks, cache, running it)", rest))
        for label, t in rows:
            lines.append(f"| {mode} | {label} | {t * 1e3:.1f} ms | {t / total:.0%} |")
            print(lines[-1])
        lines.append(f"| {mode} | **first call** | **{total * 1e3:.1f} ms** | |")
        print(lines[-1], flush=True)
    return lines


#: the statements the scaling functions cycle through (h, w: arrays of 4 elements)
_STATEMENTS = [
    "h = np.sin(h) * w",
    "h = h + np.cos(w) * 0.5",
    "h = np.tanh(h @ m)",
    "h = h * h - w",
    "h = np.exp(-h * h) + h",
]


def _function(n: int, loop: bool, directory: Path) -> object:
    """``f(x, w, m)``: n statements, straight or as the body of a loop of 3 trips."""
    indent = "        " if loop else "    "
    lines = ["import numpy as np", "", "", "def f(x, w, m):", "    h = x * 1.0"]
    if loop:
        lines.append("    for _ in range(3):")
    lines += [indent + _STATEMENTS[k % len(_STATEMENTS)] for k in range(n)]
    lines.append("    return np.sum(h)")
    name = f"scaling_{'loop' if loop else 'straight'}_{n}"
    path = directory / f"{name}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f


def _exponent(sizes: list[int], times: list[float]) -> float:
    x = np.log(np.array(sizes, dtype=float))
    y = np.log(np.array(times))
    return float(np.polyfit(x, y, 1)[0])


def scaling(sizes: tuple[int, ...] = (10, 30, 100, 300, 1000), repeats: int = 3) -> list[str]:
    """The table's lines (printed as they come): first-call CPU time per size and mode,
    the least of ``repeats`` fresh copies of the function (other processes on the
    machine slow a run; none makes one faster)."""
    args = (np.ones(4), np.full(4, 0.3), np.eye(4) * 0.5)
    lines = [
        "| function | mode | "
        + " | ".join(f"n = {n}" for n in sizes)
        + " | exponent | last two sizes |",
        "|---|---|" + "---|" * len(sizes) + "---|---|",
    ]
    print(*lines, sep="\n")
    with tempfile.TemporaryDirectory() as folder:
        srcgrad.grad(_function(3, False, Path(folder)))(*args)  # (one-time costs of a process)
        for loop in (False, True):
            for mode in ("reverse", "forward"):
                times = []
                for n in sizes:
                    best = float("inf")
                    for _ in range(repeats):
                        f = _function(n, loop, Path(folder))  # (a new module: a fresh copy)
                        start = time.process_time()
                        srcgrad.grad(f, mode=mode)(*args)
                        best = min(best, time.process_time() - start)
                    times.append(best)
                cells = " | ".join(f"{t * 1e3:.0f} ms" for t in times)
                kind = "loop body" if loop else "straight line"
                fit = _exponent(list(sizes), times)
                last = _exponent(list(sizes[-2:]), times[-2:])
                lines.append(f"| {kind} | {mode} | {cells} | {fit:.2f} | {last:.2f} |")
                print(lines[-1], flush=True)
    return lines


#: where ``--scaling --write`` keeps the latest table
TABLE = Path(__file__).resolve().parent / "TRANSFORM_COST.md"


#: the line from which TRANSFORM_COST.md is written by hand (kept by ``--write``)
NOTES = "<!-- written by hand from here on: --write keeps it -->"


def write(lines: list[str], by_stage: list[str]) -> None:
    """TRANSFORM_COST.md anew: both tables, then the notes it had (from ``NOTES`` on)."""
    old = TABLE.read_text() if TABLE.exists() else ""
    notes = old[old.index(NOTES) :] if NOTES in old else ""
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime())
    text = [
        "# Cost of making a derivative",
        "",
        f"`python benchmarks/transform_cost.py --scaling --write`, {stamp},",
        f"numpy {np.__version__}, Python {sys.version.split()[0]}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs.",
        "",
        "First call of `srcgrad.grad(f, mode=...)` (making the derivative, and running it",
        "once), CPU time, after one small derivative has paid the process's one-time",
        "costs, the least of 3 fresh copies. `f` is straight-line numpy code of n",
        "statements, or a loop of 3 trips whose body has n statements. Exponent: the",
        "slope of a least-squares fit of log time against log n (1 is linear); last two",
        "sizes: the slope between them alone.",
        "In forward mode the gradient of a 4-element `x` is one vector JVP carrying 4",
        "tangents (one pass, not 4), made after the plain JVP: the first call transforms",
        "both, about 3 to 5 times a single JVP's work (the plain one could be skipped).",
        "A loaded machine slows every row alike; compare rows of one run only.",
        "",
        *lines,
        "",
        "## Where the time goes",
        "",
        "`python benchmarks/transform_cost.py --stages`: the first call of the 30-line",
        "function's gradient (a loop, a branch, a helper called twice; `wrt=(0, 1)`),",
        "stage by stage, CPU time, the median of 7 fresh copies. A callee's stages count",
        "with the stage. In forward mode the first call also runs the generated code once",
        "per input element (32 + 24 here): most of its 'rest'.",
        "",
        *by_stage,
        "",
    ]
    TABLE.write_text("\n".join(text) + ("\n" + notes if notes else ""))


if __name__ == "__main__":
    if "--stages" in sys.argv[1:]:
        stages()
    elif "--scaling" in sys.argv[1:]:
        table = scaling()
        if "--write" in sys.argv[1:]:
            write(table, stages())
    else:
        main()
