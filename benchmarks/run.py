"""Gradient benchmarks: every workload in benchmarks/workloads.py, with every method
side by side in one process.

    python benchmarks/run.py                 # all workloads; writes benchmarks/RESULTS.md
    python benchmarks/run.py --only rnn tiny # a subset; prints, writes nothing

Methods: the numpy primal, the hand-written numpy gradient, srcgrad (reverse,
forward where the input is small, and mode="auto"),
autograd, jax.grad, jax.jit(jax.grad), torch eager autograd and tangent
(tangent-ad). A library that is not installed shows
"not installed" in its column; ``pip install -e ".[bench]"`` installs them all.

Everything is float64 and single-threaded: the BLAS thread variables are set
before numpy is imported, torch runs with one thread, and XLA with its
multi-threaded Eigen off. Every method's gradient is checked against the
hand-written one before it is timed; a mismatch or an error is shown in its cell
instead of a time. A time is the median over repeats of a timeit-style adaptive
number of calls (the calls in a repeat add up to at least 0.2 s); the repeats of a
workload's methods are interleaved, one of each per round. The ratio is to the
hand-written gradient's time. Arguments are converted to each library's
arrays once, outside the timing; jax results are waited for (block_until_ready).

A second table gives the one-time cost of the methods that generate code
(srcgrad, tangent, jax.jit): making the derivative plus its first call, less a
later call; and the peak memory one gradient call allocates (tracemalloc, which
sees numpy's arrays and Python objects, so not jax's or torch's buffers).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import gc
import importlib
import importlib.metadata
import os
import platform
import statistics
import sys
import time
import timeit
import traceback
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
os.environ.setdefault("TANGENT_DISK_CACHE", "0")  # tangent-ad: no cache under ~/.cache


def _pin_malloc() -> str:
    """Fix glibc malloc's policy for large blocks, for every method alike.

    By default glibc adapts its mmap threshold to the blocks freed so far and trims
    the heap when a large block at its top is freed, so whether a call's 8 MB
    arrays come back from the heap or are page-faulted in afresh (which doubled
    some times) depended on what ran before. With blocks up to 32 MiB taken from
    the heap and the heap never trimmed, every call reuses memory.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        if libc.mallopt(m_trim_threshold, 1 << 30) and libc.mallopt(m_mmap_threshold, 32 << 20):
            return "glibc malloc with mmap threshold 32 MiB and no trimming (see run.py)"
    except (OSError, AttributeError):
        pass
    return "the C library's default malloc policy"


MALLOC = _pin_malloc()

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads  # noqa: E402
from workloads import Workload, rebind  # noqa: E402

import srcgrad  # noqa: E402
from srcgrad.passes import AUTO_FORWARD  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
RTOL = 1e-8  # max |g - hand| / max |hand|, per gradient array
FORWARD_MAX_INPUTS = 100  # srcgrad forward mode is timed up to this many input elements
MAX_REPEATS, MIN_REPEATS, REPEAT_BUDGET_S = 7, 3, 3.0


# -- libraries ---------------------------------------------------------------------------


class Unavailable(Exception):
    """The method cannot run on this workload; the message is the table cell."""


_LIBS: dict[str, Any] = {}


def lib(name: str) -> Any:
    """The library ``name``, set up for this benchmark; Unavailable if not installed."""
    if name not in _LIBS:
        try:
            if name == "jax":
                import jax

                jax.config.update("jax_enable_x64", True)
                _LIBS[name] = jax
            elif name == "torch":
                import torch

                torch.set_num_threads(1)
                _LIBS[name] = torch
            else:
                _LIBS[name] = importlib.import_module(name)
        except ImportError:
            _LIBS[name] = None
        except Exception as exc:  # installed but broken: say why in the table
            _LIBS[name] = exc
    module = _LIBS[name]
    if module is None:
        raise Unavailable("not installed")
    if isinstance(module, Exception):
        raise Unavailable(f"fails on import: {short(module)}")
    return module


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


# -- methods -----------------------------------------------------------------------------


@dataclass
class Prepared:
    call: Callable[[], Any]  # one gradient (or primal) evaluation, finished on return
    to_numpy: Callable[[Any], tuple] | None  # the result as a tuple of gradients


def _wrt(w: Workload) -> Any:
    return w.wrt[0] if len(w.wrt) == 1 else w.wrt


def _as_tuple(g: Any) -> tuple:
    return tuple(g) if isinstance(g, (tuple, list)) else (g,)


def _numpy_grads(g: Any) -> tuple:
    return tuple(np.asarray(x) for x in _as_tuple(g))


def prep_primal(w: Workload, args: tuple) -> Prepared:
    return Prepared(lambda: w.f(*args), None)


def prep_hand(w: Workload, args: tuple) -> Prepared:
    return Prepared(lambda: w.hand(*args), _numpy_grads)


def prep_srcgrad(mode: str) -> Callable[[Workload, tuple], Prepared]:
    def prep(w: Workload, args: tuple) -> Prepared:
        size = sum(int(np.size(args[i])) for i in w.wrt)
        if mode == "forward" and size > FORWARD_MAX_INPUTS:
            raise Unavailable(f"skipped: {size} inputs")
        derivative = srcgrad.grad(w.f, wrt=_wrt(w), mode=mode)
        return Prepared(lambda: derivative(*args), _numpy_grads)

    return prep


def prep_autograd(w: Workload, args: tuple) -> Prepared:
    autograd = lib("autograd")
    anp = importlib.import_module("autograd.numpy")
    derivative = autograd.grad(rebind(w.f, anp), argnum=_wrt(w))
    return Prepared(lambda: derivative(*args), _numpy_grads)


def prep_jax(jit: bool) -> Callable[[Workload, tuple], Prepared]:
    def prep(w: Workload, args: tuple) -> Prepared:
        jax = lib("jax")
        jnp = jax.numpy
        derivative = jax.grad(rebind(w.f, jnp), argnums=_wrt(w))
        if jit:
            derivative = jax.jit(derivative, static_argnums=w.static_argnums)
        jargs = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
        return Prepared(
            lambda: jax.block_until_ready(derivative(*jargs)),
            _numpy_grads,
        )

    return prep


def prep_torch(w: Workload, args: tuple) -> Prepared:
    torch = lib("torch")
    targs = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.dtype.kind != "f":  # positions (scatter's idx)
            a = torch.tensor(a)
        elif isinstance(a, np.ndarray):
            a = torch.tensor(a, dtype=torch.float64, requires_grad=i in w.wrt)
        elif i in w.wrt:
            a = torch.tensor(float(a), dtype=torch.float64, requires_grad=True)
        targs.append(a)
    inputs = [targs[i] for i in w.wrt]

    def call() -> Any:
        return torch.autograd.grad(w.torch_f(*targs), inputs)

    def to_numpy(g: Any) -> tuple:
        return tuple(t.detach().numpy() for t in g)

    return Prepared(call, to_numpy)


def prep_tangent(w: Workload, args: tuple) -> Prepared:
    tangent = lib("tangent")
    derivative = tangent.grad(w.f, wrt=w.wrt)
    return Prepared(lambda: derivative(*args), _numpy_grads)


METHODS: list[tuple[str, Callable[[Workload, tuple], Prepared]]] = [
    ("numpy f (primal)", prep_primal),
    ("hand-written", prep_hand),
    ("srcgrad reverse", prep_srcgrad("reverse")),
    ("srcgrad forward", prep_srcgrad("forward")),
    ("srcgrad auto", prep_srcgrad("auto")),
    ("autograd", prep_autograd),
    ("jax.grad", prep_jax(jit=False)),
    ("jax.jit(jax.grad)", prep_jax(jit=True)),
    ("torch eager", prep_torch),
    ("tangent", prep_tangent),
]
# methods whose memory tracemalloc can see (numpy arrays, Python objects)
MEMORY_METHODS = ["numpy f (primal)", "hand-written", "srcgrad reverse", "autograd", "tangent"]
ONE_TIME_METHODS = ["srcgrad reverse", "srcgrad forward", "tangent", "jax.jit(jax.grad)"]


# -- measuring ---------------------------------------------------------------------------


@dataclass
class Cell:
    time: float | None = None  # median seconds per call
    note: str = ""  # why there is no time, or what went wrong
    one_time: float | None = None  # make + first call - a later call
    first: float | None = None
    peak: int | None = None  # bytes, tracemalloc


@dataclass
class Row:
    workload: Workload
    cells: dict[str, Cell] = field(default_factory=dict)


def short(exc: BaseException, limit: int = 70) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
    text = text.replace("|", "/").replace("`", "'")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def compare(got: tuple, ref: tuple) -> str:
    """'' when ``got`` matches the hand-written gradient ``ref``, else what differs."""
    if len(got) != len(ref):
        return f"wrong gradient: {len(got)} arrays, expected {len(ref)}"
    errors = []
    for g, r in zip(got, ref):
        if np.shape(g) != np.shape(r):
            return f"wrong gradient: shape {np.shape(g)}, expected {np.shape(r)}"
        scale = max(float(np.max(np.abs(r))), 1e-300)
        errors.append(float(np.max(np.abs(np.asarray(g, dtype=np.float64) - r))) / scale)
    if all(e <= RTOL for e in errors):  # False for nan
        return ""
    worst = max(errors, key=lambda e: float("inf") if e != e else e)
    return f"wrong gradient: rel. error {worst:.1e}"


def median_times(calls: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """Median seconds per call of each of ``calls``, timed in interleaved rounds (one
    repeat of every call per round), so that a burst of load from elsewhere on the
    machine slows all methods alike rather than the one that happened to be running."""
    timers, numbers, repeats = {}, {}, {}
    for name, call in calls.items():
        timers[name] = timeit.Timer(call)
        numbers[name], total = timers[name].autorange()
        repeats[name] = max(MIN_REPEATS, min(MAX_REPEATS, int(REPEAT_BUDGET_S / total)))
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for round_ in range(MAX_REPEATS):
        for name in calls:
            if round_ < repeats[name]:
                samples[name].append(timers[name].timeit(numbers[name]) / numbers[name])
    return {name: statistics.median(times) for name, times in samples.items()}


def peak_memory(call: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = call()
        peak = tracemalloc.get_traced_memory()[1] - before
        del result
    finally:
        tracemalloc.stop()
    return peak


def run_workload(w: Workload, log: Callable[[str], None]) -> Row:
    row = Row(w)
    args = w.make_args()
    ref = _numpy_grads(w.hand(*args))
    ready: dict[str, Prepared] = {}
    for name, prep in METHODS:  # make each method, call it once, check its gradient
        cell = row.cells[name] = Cell()
        try:
            start = time.perf_counter()
            prepared = prep(w, args)
            result = prepared.call()
            cell.first = time.perf_counter() - start
            if prepared.to_numpy is not None:
                cell.note = compare(prepared.to_numpy(result), ref)
            del result
            if not cell.note:
                ready[name] = prepared
        except Unavailable as exc:
            cell.note = str(exc)
        except Exception as exc:
            cell.note = f"fails: {short(exc)}"
            log("".join(traceback.format_exc().splitlines(keepends=True)[-8:]))
        if cell.note:
            log(f"  {name:18} {cell.note}")
    try:
        times = median_times({name: prepared.call for name, prepared in ready.items()})
    except Exception as exc:  # a method that passed its check fails when called again
        log(traceback.format_exc())
        for name in ready:
            row.cells[name].note = f"fails when timed: {short(exc)}"
        return row
    for name, prepared in ready.items():
        cell = row.cells[name]
        cell.time = times[name]
        cell.one_time = cell.first - cell.time
        if name in MEMORY_METHODS:
            cell.peak = peak_memory(prepared.call)
        log(f"  {name:18} {fmt_time(cell.time)}")
    return row


# -- reporting ---------------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale or unit == "µs":
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    raise AssertionError


def fmt_bytes(n: int) -> str:
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def fmt_ratio(r: float) -> str:
    return f"{r:.2g}x" if r < 10 else f"{r:.0f}x"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def time_table(rows: list[Row]) -> str:
    header = ["workload"] + [name for name, _ in METHODS]
    body = []
    for row in rows:
        hand = row.cells["hand-written"].time
        cells = [f"**{row.workload.name}**"]
        for name, _ in METHODS:
            c = row.cells[name]
            if c.time is None:
                cells.append(c.note)
            elif hand and name != "hand-written":
                cells.append(f"{fmt_time(c.time)} ({fmt_ratio(c.time / hand)})")
            else:
                cells.append(fmt_time(c.time))
        body.append(cells)
    return table(header, body)


def cost_table(rows: list[Row]) -> str:
    header = ["workload"]
    header += [f"one-time: {name}" for name in ONE_TIME_METHODS]
    header += [f"peak memory: {name}" for name in MEMORY_METHODS]
    header += ["srcgrad reverse / hand-written memory"]
    body = []
    for row in rows:
        cells = [f"**{row.workload.name}**"]
        for name in ONE_TIME_METHODS:
            c = row.cells[name]
            cells.append(fmt_time(max(c.one_time, 0.0)) if c.one_time is not None else "-")
        for name in MEMORY_METHODS:
            c = row.cells[name]
            cells.append(fmt_bytes(c.peak) if c.peak is not None else "-")
        s, h = row.cells["srcgrad reverse"].peak, row.cells["hand-written"].peak
        cells.append(fmt_ratio(s / h) if s is not None and h else "-")
        body.append(cells)
    return table(header, body)


def srcgrad_revision() -> str:
    """The git commit srcgrad was imported from, and whether srcgrad/ had changes."""
    import subprocess

    where = Path(srcgrad.__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(where), "log", "-1", "--format=%h %cs"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(where), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return f" (git {head}{', with uncommitted changes' if dirty else ''})"


def load() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def machine() -> list[str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    blas = "unknown"
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{deps.get('name')} {deps.get('version')}"
    except Exception:
        pass
    libs = f"srcgrad {version('srcgrad')}{srcgrad_revision()}, " + ", ".join(
        f"{d} {version(d)}" for d in ("autograd", "jax", "jaxlib", "torch", "tangent-ad")
    )
    return [
        f"- CPU: {cpu}, {os.cpu_count()} logical cores ({usable} usable by this process)",
        f"- OS: {platform.platform()}",
        f"- Python {platform.python_version()}, numpy {np.__version__} (BLAS: {blas})",
        f"- {libs}",
        "- one thread: OMP/OPENBLAS/MKL_NUM_THREADS=1, torch.set_num_threads(1), "
        f"XLA_FLAGS='{os.environ['XLA_FLAGS']}'; float64 everywhere (jax_enable_x64)",
        f"- memory: {MALLOC}",
    ]


def report(rows: list[Row], elapsed: float, load_before: str) -> str:
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    names = [r.workload.name for r in rows]
    full = names == [w.name for w in workloads.WORKLOADS]
    which = "all workloads" if full else "workloads " + ", ".join(names)
    parts = [
        "# Gradient benchmarks",
        "",
        f"Written by `python benchmarks/run.py` ({which}, {elapsed / 60:.1f} minutes) on "
        f"{date}. Do not edit by hand: run it again.",
        "",
        "## Machine",
        "",
        *machine(),
        f"- load average (1, 5, 15 min) before the run {load_before}, after it {load()}: "
        "other processes on the machine slow the times down",
        "",
        "## Time per gradient",
        "",
        "Median seconds per call (over 3 to 7 repeats of a timeit-style adaptive "
        "number of calls, the repeats of a workload's methods interleaved); in "
        "parentheses the ratio to the hand-written numpy gradient. "
        "Each method's gradient was checked against the hand-written one "
        f"(relative error at most {RTOL:g}) before it was timed: a cell without a time "
        "says why. `numpy f` is the primal alone, for scale. srcgrad forward mode is "
        f"timed only where the differentiated input has at most {FORWARD_MAX_INPUTS} "
        'elements. `srcgrad auto` is `mode="auto"`: forward mode (one pass carrying '
        f"a tangent per input) for up to {AUTO_FORWARD} numbers, else reverse mode.",
        "",
        time_table(rows),
        "",
        "## One-time cost and memory",
        "",
        "One-time: making the derivative plus its first call, less a later call (for "
        "srcgrad and tangent the source transformation, for jax.jit tracing and "
        "compiling). Peak memory: the most one call had allocated at once beyond what "
        "existed before it, by tracemalloc (numpy arrays and Python objects; jax and "
        "torch buffers are invisible to it, so they are not listed).",
        "",
        cost_table(rows),
        "",
        "## Workloads",
        "",
        *[f"- **{r.workload.name}**: {r.workload.description}" for r in rows],
        "",
        "Primals, hand-written gradients and inputs are in `benchmarks/workloads.py`.",
        "",
    ]
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [w.name for w in workloads.WORKLOADS]
    parser.add_argument(
        "--only",
        nargs="+",
        choices=names,
        help="run these workloads only (prints the tables; RESULTS.md is left as it is)",
    )
    opts = parser.parse_args()
    # tangent's generated modules compile with "is" against literals; not ours to fix
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    chosen = [w for w in workloads.WORKLOADS if not opts.only or w.name in opts.only]

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    # srcgrad's own one-time setup (imports of its rule tables) is not any workload's
    srcgrad.grad(lambda x: np.sum(np.sin(x)))(np.ones(3))
    load_before = load()
    start = time.perf_counter()
    rows = []
    for w in chosen:
        log(f"{w.name}: {w.description}")
        rows.append(run_workload(w, log))
    elapsed = time.perf_counter() - start
    text = report(rows, elapsed, load_before)
    print(text)
    if not opts.only:
        RESULTS.write_text(text, encoding="utf-8")
        log(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
