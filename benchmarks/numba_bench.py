"""srcgrad with ``compile="numba"`` against plain srcgrad, the hand-written numpy gradient
and ``jax.jit(jax.grad)``, on workloads of benchmarks/workloads.py: the Euler loop (500 and
2,000 steps) and 40 tiny operations (loops and small arrays), the tanh RNN (matrix-bound),
Rosenbrock on 10**6 elements and the heat-equation stencil (elementwise fusion).

    python benchmarks/numba_bench.py             # prints the table
    python benchmarks/numba_bench.py --write     # and writes benchmarks/NUMBA.md
    python benchmarks/numba_bench.py --no-jax    # without jax (its compile of the
                                                 # unrolled 2,000-step loop takes minutes)

numba and jax are not test dependencies: ``pip install "srcgrad[numba]" jax``, best in a
virtual environment of its own. Single-threaded and float64 like benchmarks/run.py. Every
gradient is checked against the hand-written one before it is timed. A time is the median
of interleaved rounds (each round a timeit-style adaptive number of calls); the ratio is
to the hand-written gradient's time. "compile" is the first call (srcgrad: generating the
code, numba's compile and the timed choice; jax: tracing and XLA's compile) less a later
call. "kept": what srcgrad+numba's timed choice runs (numba's code, or plain srcgrad's
where that was faster on the first call); "numba's code": its time with the choice off.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import workloads as W  # noqa: E402

import srcgrad  # noqa: E402

RTOL = 1e-8  # max |g - hand| / max |hand|
ROUNDS = 7


def heat_jax(u0: Any, r: float, steps: int) -> Any:
    """``workloads.heat`` for jax, whose arrays take no assignment: ``u.at[1:-1].set``."""
    import jax.numpy as jnp

    u = u0
    for _ in range(steps):
        u = u.at[1:-1].set(u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
    return jnp.sum(u * u)


#: jax's form of a primal where ``workloads.rebind`` cannot make one
JAX_FORMS: dict[Any, Callable[..., Any]] = {W.heat: heat_jax}

#: (name, primal, arguments, hand-written gradient, jax static_argnums, wrt)
CASES = [
    ("euler, 500 steps", W.euler, (2.0, 1.0, 0.0, 0.01, 500), W.euler_grad, (4,), 0),
    ("euler, 2,000 steps", W.euler, W.euler_args(), W.euler_grad, (4,), 0),
    ("tiny (40 ops, 10 elements)", W.tiny, W.tiny_args(), W.tiny_grad, (), 0),
    ("tanh RNN (50 steps, 16x64)", W.rnn, W.rnn_args(), W.rnn_grad, (), (0, 1)),
    ("Rosenbrock, 10^6 elements", W.rosenbrock, W.rosenbrock_args(), W.rosenbrock_grad, (), 0),
    ("heat stencil (100 steps, 1,000 points)", W.heat, W.heat_args(), W.heat_grad, (2,), (0, 1)),
]


def _first_and_call(make: Callable[[], Callable[[], Any]]) -> tuple[Callable[[], Any], float, Any]:
    """The call ``make`` prepares, its one-time cost (first call less a later one) and
    its result."""
    start = time.perf_counter()
    call = make()
    result = call()
    first = time.perf_counter() - start
    start = time.perf_counter()
    call()
    again = time.perf_counter() - start
    return call, max(first - again, 0.0), result


def _check(got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _check(g, w)
        return
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    error = np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-300)
    if not error <= RTOL:
        raise AssertionError(f"wrong gradient: relative error {error:.1e}")


def _medians(calls: dict[str, Callable[[], Any]]) -> dict[str, float]:
    timers = {k: timeit.Timer(c) for k, c in calls.items()}
    numbers = {k: t.autorange()[0] for k, t in timers.items()}
    samples: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(ROUNDS):
        for k, t in timers.items():
            samples[k].append(t.timeit(numbers[k]) / numbers[k])
    return {k: statistics.median(v) for k, v in samples.items()}


#: what the timed choice kept, by workload (filled as the methods are made)
KEPT: dict[int, str] = {}


def _methods(f: Any, args: tuple, static: tuple, wrt: Any, use_jax: bool) -> dict[str, Any]:
    jax_form = JAX_FORMS.get(f)
    f = W._with_globals(f, f.__globals__)  # (a new function: srcgrad's cache starts empty)

    def plain() -> Callable[[], Any]:
        g = srcgrad.grad(f, wrt)
        return lambda: g(*args)

    def numba() -> Callable[[], Any]:
        g = srcgrad.grad(f, wrt, compile="numba")

        def call() -> Any:
            result = g(*args)
            chosen = g._last.function.chosen
            KEPT[id(f)] = "numba" if all(chosen.values()) else "plain srcgrad"
            return result

        return call

    def numba_code() -> Callable[[], Any]:
        g = W._with_globals(f, f.__globals__)
        d = srcgrad.grad(g, wrt, compile="numba")

        def call() -> Any:
            srcgrad.compiled.CHOOSE = False
            try:
                return d(*args)
            finally:
                srcgrad.compiled.CHOOSE = True

        return call

    methods: dict[str, Any] = {
        "srcgrad": plain,
        "srcgrad+numba": numba,
        "numba's code": numba_code,
    }
    if use_jax:
        import jax

        jax.config.update("jax_enable_x64", True)

        def jitted() -> Callable[[], Any]:
            primal = jax_form or W.rebind(f, jax.numpy)
            g = jax.jit(jax.grad(primal, wrt), static_argnums=static)
            jargs = tuple(jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
            return lambda: jax.block_until_ready(g(*jargs))

        methods["jax.jit(jax.grad)"] = jitted
    return methods


def _time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write benchmarks/NUMBA.md")
    parser.add_argument("--no-jax", action="store_true", help="leave jax.jit out")
    parser.add_argument("--only", default="", help="the workloads whose name has this")
    options = parser.parse_args()
    names = ["hand-written numpy", "srcgrad", "srcgrad+numba"]
    if not options.no_jax:
        names.append("jax.jit(jax.grad)")
    head = ["workload", *names, "kept", "numba's code", "compile: srcgrad+numba"]
    if not options.no_jax:
        head.append("compile: jax.jit")
    rows = []
    for label, f, args, hand, static, wrt in CASES:
        if options.only not in label:
            continue
        want = hand(*args)
        calls: dict[str, Callable[[], Any]] = {"hand-written numpy": lambda h=hand, a=args: h(*a)}
        compiles: dict[str, float] = {}
        for name, make in _methods(f, args, static, wrt, not options.no_jax).items():
            call, once, result = _first_and_call(make)
            _check(result, want)
            calls[name] = call
            compiles[name] = once
            print(f"{label}: {name} ready ({_time(once)} one-time)", file=sys.stderr)
        times = _medians(calls)
        base = times["hand-written numpy"]
        cells = [f"{_time(times[n])} ({times[n] / base:.2f}x)" for n in names]
        cells.append(next(iter(KEPT.values())))
        KEPT.clear()
        code = "numba's code"
        cells.append(f"{_time(times[code])} ({times[code] / base:.2f}x)")
        cells.append(_time(compiles["srcgrad+numba"]))
        if not options.no_jax:
            cells.append(_time(compiles["jax.jit(jax.grad)"]))
        rows.append([label, *cells])
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
    import numba as nb

    versions = f"numpy {np.__version__}, numba {nb.__version__}"
    if not options.no_jax:
        import jax

        versions += f", jax {jax.__version__}"
    text = "\n".join(
        [
            '# srcgrad with compile="numba"',
            "",
            "Made by `python benchmarks/numba_bench.py --write` (see its docstring). Timings "
            "**loaded (2 cores shared with other work)**: ratios matter more than the times. "
            "Median time per gradient call, with the ratio to the hand-written numpy "
            "gradient; compile: the first call less a later one.",
            "",
            *lines,
            "",
            f"- {versions}; Python {platform.python_version()}; single-threaded, float64",
            "",
        ]
    )
    print(text)
    if options.write:  # (the notes written by hand below the table are kept)
        path = HERE / "NUMBA.md"
        old = path.read_text() if path.exists() else ""
        notes = old[old.index(_NOTES) :] if _NOTES in old else ""
        path.write_text(text + ("\n" + notes if notes else ""))


#: the heading of NUMBA.md's notes, which --write keeps
_NOTES = "## Notes"


if __name__ == "__main__":
    main()
