"""Hostile random programs: each is differentiated correctly or refused clearly.

:mod:`adversarial_programs` writes programs full of what srcgrad may mishandle:
aliases and views under in-place operators, writes with repeated fancy indices,
casts to int, bool and float32, lists reached through two names, odd names (a
parameter named ``np``, locals named ``t1``, ``x_bar``, ``tape``). The oracle is
numpy itself: central differences of the real function, called on fresh copies of
its arguments each time, so that aliases and views behave as numpy says
(:class:`Numeric`); autograd too, on programs without in-place operations (where
its semantics are numpy's).

For every program, srcgrad's derivatives (first order: vjp, jvp, grad and
value_and_grad in both modes; second order, with respect to every argument of
the derivative, the cotangent and tangents included: the jvp of the vjp, the jvp
of the jvp, the Hessian, the Hessian-vector product, the gradient of a jvp) must
each be either

- right (to finite-difference accuracy), without changing the caller's arrays, or
- refused with srcgrad's error (``UnsupportedSyntaxError``, ``NoDerivativeError``,
  or a ``TypeError``/``ValueError`` raised by srcgrad itself), whose message names the
  user's file or line (for a derivative of a derivative, srcgrad's own argument
  errors count too).

A wrong number, an internal exception (``KeyError``, ``AttributeError``, an error
inside generated code) or a changed argument fails the test, printing the program.

``AVOID`` switches off constructs whose bug is open (each has a strict xfail
reproducer below); the thorough profile runs many more programs::

    SRCGRAD_HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_adversarial_programs.py
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import os
import sys
import traceback
from collections import Counter
from typing import Any

import adversarial_programs as ap
import functions_hostile as fh
import numpy as np
import pytest
from autograd_oracle import (
    KNOWN_GAPS,
    NoAutograd,
    Oracle,
    first_order_skips,
    is_refusal,
    names_a_line,
    rotation,
)
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import srcgrad

THOROUGH = os.environ.get("SRCGRAD_HYPOTHESIS_PROFILE") == "thorough"

#: constructs left out of the generator while their bug is open (feature names of
#: ``adversarial_programs``), each with the issue-16 family and a reproducer below
AVOID: dict[str, str] = {}

#: what srcgrad refused, by derivative and first line of the message (for a survey:
#: SRCGRAD_ADVERSARIAL_REPORT=/tmp/refused.txt)
REFUSED: Counter = Counter()
REPORT = os.environ.get("SRCGRAD_ADVERSARIAL_REPORT")

_counter = itertools.count()


# -- numpy as the oracle ------------------------------------------------------------------------
class IllPosed(Exception):
    """Finite differences mean nothing here (a jump nearby, an overflow)."""


class Numeric:
    """Derivatives of the real function by central differences, through the twin (which
    records every comparison and cast, so that a jump within reach is detected)."""

    def __init__(self, twin: Any, recorder: ap.Recorder, args: list[Any], positions: list[int]):
        self.twin, self.recorder = twin, recorder
        self.args, self.positions = args, positions
        self.sizes = [int(np.size(args[i])) for i in positions]
        self.n = sum(self.sizes)
        out, self.path, margin = self.call(self.flat())
        if margin < ap.MARGIN:
            raise IllPosed(f"a comparison or cast within {margin:.3g} of a jump")
        self.out = out

    def flat(self) -> np.ndarray:
        return np.concatenate([np.ravel(self.args[i]).astype(float) for i in self.positions])

    def unflatten(self, z: np.ndarray) -> list[Any]:
        """The arguments with the differentiated ones replaced by ``z`` (fresh copies)."""
        new = [np.copy(a) if isinstance(a, np.ndarray) else a for a in self.args]
        start = 0
        for i, size in zip(self.positions, self.sizes):
            new[i] = z[start : start + size].reshape(np.shape(self.args[i])).astype(float)
            start += size
        return new

    def split(self, z: np.ndarray) -> list[np.ndarray]:
        """A flat vector as one array per differentiated argument."""
        out, start = [], 0
        for i, size in zip(self.positions, self.sizes):
            out.append(z[start : start + size].reshape(np.shape(self.args[i])))
            start += size
        return out

    def call(self, z: np.ndarray) -> tuple[np.ndarray, tuple, float]:
        self.recorder.path, self.recorder.margin = [], np.inf
        try:
            with np.errstate(all="raise"):
                out = self.twin(*self.unflatten(z))
        except FloatingPointError as exc:
            raise IllPosed(str(exc)) from None
        out = np.asarray(out, dtype=float)
        if not np.all(np.isfinite(out)) or np.max(np.abs(out), initial=0.0) > 1e6:
            raise IllPosed("a huge or non-finite value")
        return out, tuple(map(str, self.recorder.path)), self.recorder.margin

    def at(self, z: np.ndarray) -> np.ndarray:
        out, path, _ = self.call(z)
        if path != self.path:
            raise IllPosed("a comparison flips within the finite-difference step")
        return out

    def jacobian(self, h: float) -> np.ndarray:
        """``J`` with ``J[..., k]`` the derivative along the k-th input element."""
        z = self.flat()
        columns = []
        for k in range(self.n):
            e = np.zeros(self.n)
            e[k] = h
            columns.append((self.at(z + e) - self.at(z - e)) / (2 * h))
        return np.stack(columns, axis=-1)

    def second(self, d1: np.ndarray, d2: np.ndarray, h: float) -> np.ndarray:
        """``D^2 f[d1, d2]``: mixed central differences."""
        z = self.flat()
        a = self.at(z + h * d1 + h * d2) - self.at(z + h * d1 - h * d2)
        b = self.at(z - h * d1 + h * d2) - self.at(z - h * d1 - h * d2)
        return (a - b) / (4 * h * h)

    def hessian(self, u: Any, h: float) -> np.ndarray:
        """The Hessian of ``<u, f>``."""
        eye = np.eye(self.n)
        H = np.zeros((self.n, self.n))
        for k in range(self.n):
            for j in range(k, self.n):
                H[k, j] = H[j, k] = float(np.sum(np.asarray(u) * self.second(eye[k], eye[j], h)))
        return H


# -- running a program --------------------------------------------------------------------------
def load(source: str, directory: Any, name: str) -> Any:
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def flat(values: Any) -> np.ndarray:
    parts = values if isinstance(values, (tuple, list)) else [values]
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in parts])


class Verdict:
    """srcgrad's derivatives of one program against ``Numeric``; failures raise."""

    def __init__(self, program: ap.Program, module: Any, numeric: Numeric, rng: Any) -> None:
        self.program, self.f, self.numeric, self.rng = program, module.f, numeric, rng
        self.path = module.__file__
        self.args = numeric.args
        single = program.single_precision
        self.h1 = 1e-3 if single else 1e-5
        self.tol1 = (3e-2, 3e-3) if single else (1e-5, 1e-6)  # rtol, atol (times the scale)
        self.tol2 = (2e-3, 2e-4)
        self.refused: list[str] = []

    # -- one srcgrad call ------------------------------------------------------------------------
    def attempt(self, what: str, call: Any, inputs: list[Any], first: bool) -> Any:
        """``call()``; None where srcgrad refuses clearly. Anything else unclear fails."""
        saved = [np.copy(v) if isinstance(v, np.ndarray) else v for v in inputs]
        try:
            with np.errstate(all="ignore"):
                result = call()
        except Exception as exc:
            clear = is_refusal(exc) and (
                names_a_line(exc, self.path, self.program.source) or not first
            )
            if not clear:
                detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
                raise AssertionError(
                    f"{what}: srcgrad neither differentiated nor refused clearly:\n{detail[-2500:]}"
                ) from None
            line = str(exc).strip().splitlines()
            self.refused.append(f"{what}: {type(exc).__name__}: {line[-1] if line else ''}")
            return None
        for k, (before, after) in enumerate(zip(saved, inputs)):
            if isinstance(before, np.ndarray) and not np.array_equal(before, after):
                raise AssertionError(f"{what}: srcgrad changed the caller's argument {k}")
        return result

    def close(self, what: str, got: Any, want: Any, tol: tuple[float, float]) -> None:
        g, w = flat(got), flat(want)
        if g.shape != w.shape:
            raise AssertionError(f"{what}: srcgrad gives {g.size} numbers, numpy {w.size}")
        rtol, atol = tol
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        if not np.allclose(g, w, rtol=rtol, atol=atol * scale):
            k = int(np.argmax(np.abs(g - w)))
            raise AssertionError(
                f"{what}: srcgrad gives {g[k]!r}, finite differences of the program {w[k]!r} "
                f"(element {k})\nsrcgrad: {g.tolist()}\nnumpy:   {w.tolist()}"
            )

    # -- first order -------------------------------------------------------------------------------
    def first(self, J: np.ndarray) -> bool:
        """vjp, jvp, grad and value_and_grad (each right or refused); False where srcgrad
        refused the vjp (then the second order is not tried)."""
        f, args, num = self.f, self.args, self.numeric
        P = tuple(num.positions)
        out = num.out
        u = self.rng.standard_normal(out.shape) if out.ndim else float(self.rng.standard_normal())
        Jm = J.reshape(-1, num.n)
        got = self.attempt("vjp", lambda: srcgrad.vjp(f, wrt=P)(*args, u), [*args], True)
        if got is not None:
            self.close("vjp", got, Jm.T @ np.ravel(u), self.tol1)
        differentiated = got is not None
        t = self.rng.standard_normal(num.n)
        ts = num.split(t)
        got = self.attempt("jvp", lambda: srcgrad.jvp(f, wrt=P)(*args, *ts), [*args, *ts], True)
        if got is not None:
            self.close("jvp value", got[0], out, self.tol1)
            self.close("jvp", got[1], (Jm @ t).reshape(out.shape), self.tol1)
        if self.program.scalar_output:
            for mode in ("reverse", "forward"):
                for kind in ("grad", "value_and_grad"):
                    what = f"{kind} mode={mode}"
                    make = getattr(srcgrad, kind)
                    got = self.attempt(
                        what, lambda m=mode, k=make: k(f, wrt=P, mode=m)(*args), [*args], True
                    )
                    if got is None:
                        continue
                    if kind == "value_and_grad":
                        self.close(f"{what} value", got[0], out, self.tol1)
                        got = got[1]
                    self.close(what, got, Jm[0], self.tol1)
        return differentiated

    # -- second order: every argument of the derivative --------------------------------------------
    def second(self, kinds: list[str], J: np.ndarray) -> None:
        f, args, num = self.f, self.args, self.numeric
        P = tuple(num.positions)
        n, out = num.n, num.out
        Jm = J.reshape(-1, n)
        h2 = 1e-3
        for kind in kinds:
            if kind == "jvp of vjp":
                u = (
                    self.rng.standard_normal(out.shape)
                    if out.ndim
                    else float(self.rng.standard_normal())
                )
                tx = self.rng.standard_normal(n)
                Q = [*P, len(args)]
                tangents = [*num.split(tx)]
                tu = (
                    self.rng.standard_normal(out.shape)
                    if out.ndim
                    else float(self.rng.standard_normal())
                )
                expected = num.hessian(u, h2) @ tx
                if "cotangent" in KNOWN_GAPS:  # (see autograd_oracle.KNOWN_GAPS)
                    Q = list(P)
                else:
                    tangents.append(tu)
                    expected = expected + Jm.T @ np.ravel(tu)
                D = srcgrad.vjp(f, wrt=P)
                got = self.attempt(
                    kind,
                    lambda D=D, Q=Q, tangents=tangents, u=u: srcgrad.jvp(D, wrt=tuple(Q))(
                        *args, u, *tangents
                    ),
                    [*args, *tangents],
                    False,
                )
                if got is not None:
                    self.close(f"{kind} value", got[0], Jm.T @ np.ravel(u), self.tol1)
                    self.close(kind, got[1], expected, self.tol2)
            elif kind == "jvp of jvp":
                t = self.rng.standard_normal(n)
                tx = self.rng.standard_normal(n)
                tt = self.rng.standard_normal(n)
                D = srcgrad.jvp(f, wrt=P)
                Q = tuple(range(len(args))) + tuple(len(args) + k for k in range(len(P)))
                tangents = [*num.split(tx), *num.split(tt)]
                got = self.attempt(
                    kind,
                    lambda D=D, Q=Q, t=t, tangents=tangents: srcgrad.jvp(D, wrt=Q)(
                        *args, *num.split(t), *tangents
                    ),
                    [*args, *tangents],
                    False,
                )
                if got is not None:
                    (value, tangent), (dvalue, dtangent) = got
                    self.close(f"{kind} value", value, out, self.tol1)
                    self.close(f"{kind} tangent", tangent, Jm @ t, self.tol1)
                    self.close(f"{kind} d value", dvalue, Jm @ tx, self.tol1)
                    want = num.second(t, tx, h2) + (Jm @ tt).reshape(out.shape)
                    self.close(f"{kind} d tangent", dtangent, want, self.tol2)
            elif not self.program.scalar_output:
                continue
            elif kind in ("hessian", "hvp", "jvp of grad"):
                H = num.hessian(1.0, h2)
                if kind == "hessian":
                    start = 0
                    for i, size in zip(P, num.sizes):
                        block = H[start : start + size, start : start + size]
                        got = self.attempt(
                            f"hessian wrt={i}",
                            lambda i=i: srcgrad.hessian(f, wrt=i)(*args),
                            [*args],
                            False,
                        )
                        if got is not None:
                            self.close(f"hessian wrt={i}", got, block, self.tol2)
                        start += size
                else:
                    v = self.rng.standard_normal(n)
                    vs = num.split(v)
                    if kind == "hvp":
                        call = lambda vs=vs: srcgrad.hvp(f, wrt=P)(*args, *vs)  # noqa: E731
                    else:
                        D = srcgrad.grad(f, wrt=P)
                        call = lambda vs=vs, D=D: srcgrad.jvp(D, wrt=P)(*args, *vs)[1]  # noqa: E731
                    got = self.attempt(kind, call, [*args, *vs], False)
                    if got is not None:
                        self.close(kind, got, H @ v, self.tol2)
            elif kind == "grad of jvp":
                t = self.rng.standard_normal(n)
                D = srcgrad.jvp(f, wrt=P)
                Q = tuple(range(len(args) + len(P)))
                got = self.attempt(
                    kind,
                    lambda D=D, Q=Q, t=t: srcgrad.grad(D, wrt=Q)(*args, *num.split(t)),
                    [*args],
                    False,
                )
                if got is not None:
                    H = num.hessian(1.0, h2)
                    self.close(f"{kind} (the arguments)", got[: len(P)], H @ t, self.tol2)
                    self.close(f"{kind} (the tangents)", got[len(P) :], Jm[0], self.tol1)


def run_program(program: ap.Program, directory: Any, seed: int) -> None:
    """Check one program at random arguments; IllPosed where finite differences cannot."""
    rng = np.random.default_rng(seed)
    args = [rng.uniform(-2.0, 2.0, shape) for shape in program.shapes]
    name = f"hostile_{next(_counter)}"
    twin_module = load(ap.twin_source(program.source), directory, f"twin_{name}")
    recorder = ap.Recorder()
    twin_module._cmp, twin_module._cast = recorder.cmp, recorder.cast
    positions = list(range(len(args)))
    try:
        numeric = Numeric(twin_module.f, recorder, args, positions)
    finally:
        sys.modules.pop(twin_module.__name__, None)
    module = load(program.source, directory, name)
    try:
        verdict = Verdict(program, module, numeric, rng)
        check(program, module, verdict, seed)
    except AssertionError as exc:
        shown = ", ".join(f"{p}={a.tolist()!r}" for p, a in zip(program.params, args))
        raise AssertionError(
            f"{exc}\n--- program ({', '.join(sorted(program.features))}) ---\n"
            f"{program.source}--- arguments ---\n{shown}"
        ) from None
    finally:
        sys.modules.pop(name, None)
    REFUSED.update(r[:160] for r in verdict.refused)
    if REPORT and verdict.refused:
        with open(REPORT, "a") as out:
            out.write(f"{sorted(program.features)}\n{program.source}")
            out.writelines(f"    refused: {r}\n" for r in verdict.refused)


def check(program: ap.Program, module: Any, verdict: Verdict, seed: int) -> None:
    """First order; then, unless srcgrad refused it or float32 rounding makes second
    differences meaningless, second order; then autograd where it applies."""
    J = verdict.numeric.jacobian(1e-3 if program.single_precision else 1e-5)
    if verdict.first(J) and not program.single_precision:
        try:
            verdict.second(rotation(seed, THOROUGH), J)
        except IllPosed:
            pass
    if not any(k.startswith(("inplace", "write", "list")) for k in program.features):
        against_autograd(module.f, verdict.args, seed, program.single_precision)


def against_autograd(f: Any, args: list[Any], seed: int, single: bool = False) -> None:
    """autograd on the same source (where it runs it: no in-place operation in sight);
    ``single``: the function casts to float32 inside (the two derivatives agree to
    float32's rounding only: a jvp of a jvp differed by 2e-5 of a small value)."""
    try:
        oracle = Oracle(f, args, seed=seed, gaps=KNOWN_GAPS, refusable=True, single=single)
        oracle.run(rotation(seed, THOROUGH), every=False, skip=first_order_skips(seed, THOROUGH))
    except NoAutograd:
        return


# -- the tests ----------------------------------------------------------------------------------
def _examples(factor: int) -> int:
    return max(1, settings.default.max_examples * factor)


@pytest.fixture(scope="module")
def directory(tmp_path_factory: Any) -> Any:
    return tmp_path_factory.mktemp("hostile")


@settings(max_examples=_examples(3))
@given(program=ap.programs(avoid=set(AVOID), max_statements=5), data=st.data())
def test_hostile_programs(directory: Any, program: ap.Program, data: Any) -> None:
    try:
        run_program(program, directory, data.draw(st.integers(0, 2**32 - 1), label="seed"))
    except IllPosed:
        assume(False)


# -- minimal reproductions of what the oracles found (strict xfail: remove the mark, and the
# -- construct from AVOID or the gap from autograd_oracle.KNOWN_GAPS, when the fix lands) ------
X = np.array([0.3, 1.7, -1.2, 0.6])  # fractional parts away from 0 and 1: casts are flat here
Y = np.array([0.8, -0.4, 1.3, -2.1])
M = np.array([[0.3, 1.7, -1.2], [0.6, -0.9, 2.2]])


def numpy_gradient(func: Any, args: tuple, h: float = 1e-6) -> tuple:
    """Central differences of the real function, on fresh copies of the arguments each
    time (the function may write into them, as numpy lets it)."""
    grads = []
    for i, a in enumerate(args):
        g = np.zeros(np.shape(a))
        for index in np.ndindex(np.shape(a)):
            values = []
            for sign in (1.0, -1.0):
                moved = [np.array(b, dtype=float, copy=True) for b in args]
                moved[i][index] += sign * h
                values.append(func(*moved))
            g[index] = (values[0] - values[1]) / (2 * h)
        grads.append(g)
    return tuple(grads)


def numpy_hvp(func: Any, args: tuple, ts: tuple, h: float = 1e-4) -> tuple:
    """The Hessian of the real function times ``ts``: central differences of its
    numerical gradient."""
    plus = numpy_gradient(func, tuple(a + h * t for a, t in zip(args, ts)))
    minus = numpy_gradient(func, tuple(a - h * t for a, t in zip(args, ts)))
    return tuple((p - m) / (2 * h) for p, m in zip(plus, minus))


def fresh(args: tuple) -> tuple:
    return tuple(np.array(a, copy=True) for a in args)


FIRST_ORDER = [
    # (function, arguments, {mode it fails in now: reason}): right, or refused clearly
    (fh.write_then_dot, (X,), {}),
    (fh.alias_then_inplace, (X, Y), {}),
    (fh.alias_read_after_inplace, (X, Y), {}),
    (fh.view_of_local_inplace, (X, Y), {}),
    (fh.transposed_view_inplace, (M, M), {}),
    (fh.write_seen_through_an_alias, (X, Y), {}),
    (fh.list_append_through_alias, (X, Y), {}),
    (fh.list_holds_argument_then_inplace, (X, Y), {}),
    (fh.repeated_index_write, (X, Y), {}),
    (fh.repeated_index_add, (X, Y), {}),
    (fh.cast_int, (X, Y), {}),
    (fh.cast_bool, (X, Y), {}),
    (fh.parameter_rebound_to_ints, (X, Y), {}),
    (fh.sum_dtype_int, (X, Y), {}),
    (fh.array_dtype_int, (X, Y), {}),
    (fh.tuple_read_twice, (X,), {}),
    (fh.numpy_parameter, (X, Y), {}),
]


def _first_order_params() -> list[Any]:
    params = []
    for func, args, failing in FIRST_ORDER:
        for mode in ("reverse", "forward"):
            reason = failing.get(mode)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(func, args, mode, id=f"{func.__name__}-{mode}", marks=marks))
    return params


@pytest.mark.parametrize("func, args, mode", _first_order_params())
def test_reproducer_first_order(func: Any, args: tuple, mode: str) -> None:
    wrt = tuple(range(len(args)))
    want = numpy_gradient(func, args)
    try:
        got = srcgrad.grad(func, wrt=wrt, mode=mode)(*fresh(args))
    except Exception as exc:  # refused: clearly, at the user's line
        assert is_refusal(exc), traceback.format_exc()
        assert names_a_line(exc, fh.__file__, inspect.getsource(func)), str(exc)
        return
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_reproducer_integer_primal_truncates_the_cotangent() -> None:
    # the gradient w.r.t. y (the operand that is not cast) is right with dout = 1 only
    _, y_bar = srcgrad.vjp(fh.array_dtype_int, wrt=(0, 1))(X, Y, 0.5)
    np.testing.assert_allclose(y_bar, 0.5 * np.array(X, dtype=int))


@pytest.mark.parametrize("derivative", ["jvp", "vjp"])
def test_reproducer_jvp_leaves_the_callers_array_alone(derivative: str) -> None:
    """A function writing into its argument (the jvp once changed the caller's array;
    then it was refused): now differentiated on its own copy of the argument, as numpy
    computes it on a copy, in both modes; the caller's arrays are never changed."""
    x, y = X.copy(), Y.copy()
    tx, ty = np.linspace(-1.0, 1.0, 4), np.ones(4)
    if derivative == "jvp":
        _, got = srcgrad.jvp(fh.writes_into_argument, wrt=(0, 1))(x, y, tx, ty)
        eps = 1e-6
        plus = fh.writes_into_argument(X + eps * tx, Y + eps * ty)
        minus = fh.writes_into_argument(X - eps * tx, Y - eps * ty)
        np.testing.assert_allclose(got, (plus - minus) / (2 * eps), rtol=1e-6)
    else:
        x_bar, y_bar = srcgrad.vjp(fh.writes_into_argument, wrt=(0, 1))(x, y, 1.0)
        want = numpy_gradient(fh.writes_into_argument, (X, Y))
        np.testing.assert_allclose(x_bar, want[0], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(y_bar, want[1], rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(y, Y)


# -- second order ----------------------------------------------------------------------------------
def test_reproducer_jvp_of_vjp_reads_the_cotangent_tangent() -> None:
    u, tx, tu = 0.5, np.array([1.0, 0.0, -1.0, 2.0]), 0.25
    _, tangent = srcgrad.jvp(srcgrad.vjp(fh.smooth), wrt=(0, 2))(X, Y, u, tx, tu)
    # d/dx (u cos(x) y) tx + d/du (u cos(x) y) tu
    np.testing.assert_allclose(tangent, -u * np.sin(X) * Y * tx + np.cos(X) * Y * tu)


def test_reproducer_grad_of_vjp_differentiates_the_cotangent() -> None:
    x, y = 0.7, 1.3
    _, dout_bar = srcgrad.grad(srcgrad.vjp(fh.smooth), wrt=(0, 2))(x, y, 0.5)
    assert dout_bar == pytest.approx(np.cos(x) * y)


@pytest.mark.parametrize(
    "func, derivative",
    [
        pytest.param(fh.parameter_named_dout, "jvp of vjp", id="dout-jvp-of-vjp"),
        pytest.param(fh.parameter_named_x_dot, "jvp of jvp", id="x_dot-jvp-of-jvp"),
        pytest.param(fh.parameter_named_x_dot, "grad of jvp", id="x_dot-grad-of-jvp"),
    ],
)
def test_reproducer_parameter_named_like_a_derivative_argument(func: Any, derivative: str) -> None:
    x, other = X, Y
    tx, tother = np.ones(4), np.array([0.5, -1.0, 2.0, 0.0])
    want = numpy_hvp(func, (x, other), (tx, tother))
    if derivative == "jvp of vjp":
        _, got = srcgrad.jvp(srcgrad.vjp(func, wrt=(0, 1)), wrt=(0, 1))(x, other, 1.0, tx, tother)
    elif derivative == "jvp of jvp":
        inner = srcgrad.jvp(func, wrt=(0, 1))
        (_, _), (_, got) = srcgrad.jvp(inner, wrt=(0, 1))(x, other, tx, tother, tx, tother)
        want = float(np.sum(want[0] * tx) + np.sum(want[1] * tother))
    else:
        inner = srcgrad.jvp(func, wrt=(0, 1))
        got = srcgrad.grad(inner, wrt=(0, 1))(x, other, tx, tother)
    for g, w in zip(
        np.atleast_1d(got) if np.ndim(want) == 0 else got,
        np.atleast_1d(want) if np.ndim(want) == 0 else want,
    ):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_reproducer_local_named_like_a_tangent() -> None:
    # the jvp of the jvp w.r.t. y and the tangent of y: d/dy <grad f, t> . t + <grad f, t2>
    t, t2 = np.ones(4), np.array([0.5, -1.0, 0.25, 2.0])
    f = fh.local_named_like_a_tangent
    inner = srcgrad.jvp(f, wrt=(0, 1))
    zero = np.zeros(4)
    (_, _), (_, got) = srcgrad.jvp(inner, wrt=(1, 3))(X, Y, zero, t, t, t2)
    _, hy = numpy_hvp(f, (X, Y), (zero, t))
    _, gy = numpy_gradient(f, (X, Y))
    assert got == pytest.approx(np.sum(hy * t) + np.sum(gy * t2), rel=1e-4)


def test_reproducer_grad_of_jvp_through_a_helper_returning_a_pair() -> None:
    t = np.array([1.0, -0.5, 0.25, 2.0])
    got = srcgrad.grad(srcgrad.jvp(fh.helper_pair), wrt=0)(X, t)
    (want,) = numpy_hvp(fh.helper_pair, (X,), (t,))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(), (3,)], ids=["0d", "1d"])
def test_reproducer_zero_second_derivative_keeps_its_structure(shape: tuple) -> None:
    x, y = np.ones(shape), np.ones(shape)
    product = srcgrad.hvp(fh.linear, wrt=(0, 1))(x, y, x, y)
    assert isinstance(product, tuple) and len(product) == 2
    assert all(np.shape(p) == shape for p in product)


def test_reproducer_hessian_with_a_tuple_wrt() -> None:
    x, y = np.array([0.3, 0.5]), np.array(2.0)
    (hxx, hxy), (hyx, hyy) = srcgrad.hessian(fh.smooth, wrt=(0, 1))(x, y)
    for block, w in zip((hxx, hxy, hyx, hyy), (srcgrad.hessian(fh.smooth, wrt=0)(x, y),)):
        np.testing.assert_allclose(block, w)
    g = srcgrad.grad(fh.smooth, wrt=(0, 1))
    assert np.shape(hxy) == (2,) and np.shape(hyx) == (2,) and np.shape(hyy) == ()
    step = 1e-6
    np.testing.assert_allclose(hxy, (g(x, y + step)[0] - g(x, y - step)[0]) / (2 * step), rtol=1e-6)
    np.testing.assert_allclose(hyx, hxy)
    assert hyy == pytest.approx((g(x, y + step)[1] - g(x, y - step)[1]) / (2 * step), abs=1e-6)


@pytest.mark.parametrize("what", ["hessian", "jacobian-forward"])
def test_reproducer_forward_jacobian_of_a_numpy_scalar(what: str) -> None:
    x = np.float64(0.5)
    if what == "hessian":
        got = srcgrad.hessian(fh.smooth)(x, 2.0)
        assert got == pytest.approx(-np.sin(0.5) * 2.0)
    else:
        got = srcgrad.jacobian(fh.smooth, mode="forward")(x, 2.0)
        assert got == pytest.approx(np.cos(0.5) * 2.0)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_reproducer_grad_of_a_transposed_0d_array(mode: str) -> None:
    assert srcgrad.grad(fh.transpose_only, mode=mode)(np.array(0.5)) == 1.0


def test_reproducer_third_order() -> None:
    x, y, t = 0.7, 1.3, 1.0
    inner = srcgrad.jvp(srcgrad.jvp(fh.smooth), wrt=0)
    _, (_, (_, third)) = srcgrad.jvp(inner, wrt=0)(x, y, t, t, t)
    assert third == pytest.approx(-np.cos(x) * y)
