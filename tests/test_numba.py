"""``compile="numba"``: the generated derivative in the numba profile, compiled by
``numba.njit`` (srcgrad/compiled.py).

Every gradient made under numba equals plain srcgrad's (rtol 1e-12) on the benchmark's
Euler loop and 40 tiny operations and on each function of the control-flow corpus the
profile accepts; each one it refuses raises :class:`srcgrad.CompileError` at the user's
file and line (never numba's own ``TypingError``, never a number), and
``compile="numba-or-python"`` warns and gives plain srcgrad's numbers there.

Each numba compile takes 0.3 to 1 s: every corpus function is compiled once, at its
first point, with numba's optimizer off (``NUMBA_OPT=0``).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

# the tests compare numbers, not speed: numba compiles about a third faster unoptimized
# (read when numba is first imported, by the first compile="numba")
os.environ.setdefault("NUMBA_OPT", "0")

import corpus_control_flow as cf
import numpy as np
import pytest
import test_random_programs as rp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import srcgrad
from srcgrad import compiled
from srcgrad.compiler import driver

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import workloads  # noqa: E402

RTOL = 1e-12

#: the corpus functions the numba profile refuses, with what its message names: a
#: runtime helper it has no numba form of yet, or what numba itself did not compile
REFUSED = {
    # a pytree adjoint (a list or tuple of arrays): no numba form of its helper
    "for_enumerate_zip": "zeros_seq",
    "list_stacked": "unstack",
    "nested_lists_to_array": "unstack_like",
    # numba's xs[0] * 0.0 of float32 is float64 (numpy's: float32), and its @ takes
    # operands of one dtype only
    "rnn_float32": "float32",
    # a name that is a float, then an array (or a 0-d array, then a float): numba types
    # each name once
    "scalar_becomes_array": "Cannot unify",
    "reassigned_in_loop_body": "Cannot unify",
    "parameter_reassigned_in_loop_from_invariants": "Cannot unify",
    # a comparison's mask whose rank srcgrad cannot tell before the loop: preset to None
    "where_in_loop": "OptionalType",
}


@pytest.fixture(autouse=True)
def _numba(request, monkeypatch):
    if request.node.name != "test_without_numba_installed":  # (runs without numba too)
        pytest.importorskip("numba")
    if "timed_choice" not in request.node.name:  # (numba's code always: its numbers tested)
        monkeypatch.setattr(compiled, "CHOOSE", False)


def _close(got, want, wrt) -> None:
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=1e-14)


def _compiled_text(derivative) -> str:
    """The text of the module numba compiled the derivative's entry point from."""
    jitted = derivative._last.function
    assert isinstance(jitted, compiled.Jitted)
    code = jitted.jitted.py_func.__code__
    import linecache

    return "".join(linecache.getlines(code.co_filename))


# -- the benchmark's loop and tiny workloads ---------------------------------------------


def test_euler_loop():
    args = workloads.euler_args()
    g = srcgrad.grad(workloads.euler, compile="numba")
    got = g(*args)
    _close(got, srcgrad.grad(workloads.euler)(*args), 0)
    _close(got, workloads.euler_grad(*args), 0)
    assert "reversed" not in g.source
    assert "for _ in range(len(t1) - 1, -1, -1):" in g.source  # (the index arithmetic)
    assert g.source == _compiled_text(g)  # .source is what numba compiled
    assert len(g._last.function.jitted.signatures) == 1  # compiled, not run as Python
    _close(g(2.5, 1.0, 0.0, 0.01, 500), srcgrad.grad(workloads.euler)(2.5, 1.0, 0.0, 0.01, 500), 0)


def test_tiny_operations():
    (x,) = workloads.tiny_args()
    g = srcgrad.grad(workloads.tiny, compile="numba")
    got = g(x)
    assert isinstance(got, np.ndarray) and got.shape == x.shape and got.dtype == x.dtype
    _close(got, srcgrad.grad(workloads.tiny)(x), 0)
    assert g.source == _compiled_text(g)


def test_value_and_grad_vjp_jvp():
    (x,) = workloads.tiny_args()

    def elementwise(x):
        return np.sin(x) * x

    def total(x):
        return np.sum(np.sin(x) * x)

    value, grad = srcgrad.value_and_grad(total, compile="numba")(x)
    want_value, want_grad = srcgrad.value_and_grad(total)(x)
    _close(value, want_value, 0)
    _close(grad, want_grad, 0)

    dout = np.linspace(-1.0, 1.0, x.size)
    _close(srcgrad.vjp(elementwise, compile="numba")(x, dout), srcgrad.vjp(elementwise)(x, dout), 0)
    args = workloads.euler_args()
    jvp = srcgrad.jvp(workloads.euler, compile="numba")
    value, tangent = jvp(*args, 1.0)
    want_value, want_tangent = srcgrad.jvp(workloads.euler)(*args, 1.0)
    _close((value, tangent), (want_value, want_tangent), (0, 1))
    assert isinstance(jvp._last.function, compiled.Jitted)


def test_forward_mode():
    """Forward-mode code (a jvp, and grad's vector JVP for a few inputs) compiles too,
    tangent_div and tangent_mul with it."""

    def f(x):
        return np.sum(np.sqrt(x) * np.arctan(x))

    x = np.linspace(0.1, 1.0, 5)
    dx = np.linspace(1.0, -1.0, 5)
    jvp = srcgrad.jvp(f, compile="numba")
    _close(jvp(x, dx), srcgrad.jvp(f)(x, dx), (0, 1))
    assert "tangent_div" in jvp.source and isinstance(jvp._last.function, compiled.Jitted)
    args = workloads.euler_args()
    forward = srcgrad.grad(workloads.euler, mode="forward", compile="numba")
    np.testing.assert_allclose(forward(*args), srcgrad.grad(workloads.euler)(*args), rtol=1e-12)


def _elementwise(x):
    return np.sin(x) * x + x**3


def _scalar(x):
    return np.sum(np.sin(x) * x**2)


@pytest.mark.parametrize(
    ("transformation", "function", "runs"),
    [
        (srcgrad.jacobian, _elementwise, lambda d: d._inner),
        (srcgrad.jacfwd, _elementwise, lambda d: d._inner),
        (srcgrad.jacrev, _elementwise, lambda d: d._inner),
        (srcgrad.hessian, _scalar, lambda d: d._inner),
        (srcgrad.elementwise_grad, _elementwise, lambda d: d._derivative),
        (srcgrad.hvp, _scalar, lambda d: d._jvp),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_composed_transformations_take_the_option(transformation, function, runs):
    """jacobian, jacfwd, jacrev, hessian, elementwise_grad and hvp run code numba compiled,
    with plain srcgrad's numbers."""
    x = np.linspace(0.2, 1.1, 4)
    args = (x, np.linspace(1.0, -1.0, 4)) if transformation is srcgrad.hvp else (x,)
    compiled_one = transformation(function, compile="numba")
    _close(compiled_one(*args), transformation(function)(*args), 0)
    assert isinstance(runs(compiled_one)._last.function, compiled.Jitted)


def test_second_elementwise_grad_compiles_the_outer_derivative():
    x = np.linspace(0.2, 1.1, 4)
    second = srcgrad.elementwise_grad(srcgrad.elementwise_grad(_elementwise), compile="numba")
    want = srcgrad.elementwise_grad(srcgrad.elementwise_grad(_elementwise))(x)
    _close(second(x), want, 0)
    np.testing.assert_allclose(want, 2 * np.cos(x) - x * np.sin(x) + 6 * x, rtol=1e-12)
    assert isinstance(second._derivative._last.function, compiled.Jitted)


def test_code_is_cached_per_kind_of_arguments():
    def f(x, n):
        s = 0.0
        for i in range(n):
            s = s + np.sin(x * i)
        return s

    g = srcgrad.grad(f, compile="numba")
    want = [srcgrad.grad(f)(x, 5) for x in (0.3, 0.7, 1.1)]
    before = driver.RUNS.get("emit", 0)
    for x, w in zip((0.3, 0.7, 1.1), want):
        _close(g(x, 5), w, 0)
    assert driver.RUNS.get("emit", 0) == before + 1  # generated once
    assert len(g._last.function.jitted.signatures) == 1  # compiled once


def test_plain_code_unchanged_by_the_option():
    args = workloads.euler_args()
    plain = srcgrad.grad(workloads.euler)
    plain(*args)
    assert "reversed(t1)" in plain.source  # the plain profile keeps reversed
    assert repr(srcgrad.grad(workloads.euler, compile="numba")).endswith("compile='numba'>")


# -- the control-flow corpus --------------------------------------------------------------


@pytest.mark.parametrize("case", cf.CASES, ids=[c.func.__name__ for c in cf.CASES])
def test_corpus(case):
    point = case.points[0]
    want = srcgrad.grad(case.func, case.wrt)(*point)
    g = srcgrad.grad(case.func, case.wrt, compile="numba")
    name = case.func.__name__
    if name in REFUSED:
        with pytest.raises(srcgrad.CompileError) as info:
            g(*point)
        message = str(info.value)
        assert REFUSED[name] in message
        assert info.value.filename == cf.__file__ and info.value.lineno is not None
        return
    _close(g(*point), want, case.wrt)


def test_broadcast_operands():
    """numba's unbroadcast and unbroadcast_to (srcgrad/numba_helpers.py) on a row, a
    column, a float and more leading axes, against plain srcgrad's."""

    def f(x, b):
        return np.sum(np.sin(x * b) + b)

    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 2))
    g = srcgrad.grad(f, wrt=(0, 1), compile="numba")
    for b in (
        rng.standard_normal(2),
        rng.standard_normal((3, 1)),
        0.7,
        rng.standard_normal(x.shape),
    ):
        _close(g(x, b), srcgrad.grad(f, wrt=(0, 1))(x, b), (0, 1))
        assert isinstance(g._last.function, compiled.Jitted)
        if np.shape(b) == (2,):
            assert "def unbroadcast_to(g, shape):" in g.source  # (numba's form)


def test_fusion():
    """A run of elementwise statements over 1-D arrays of one length is one loop
    (srcgrad/numba_fusion.py): Rosenbrock's gradient touches each element once; a run
    whose operands' lengths differ when the code runs (a broadcast) runs as it was."""
    x = np.linspace(-1.5, 1.5, 9)
    g = srcgrad.grad(workloads.rosenbrock, compile="numba")
    _close(g(x), workloads.rosenbrock_grad(x), 0)
    assert g.source.count("for fused_k in range(fused_n):") == 1
    assert "t4_bar_k = x[fused_k + 1] - x[fused_k] ** 2" in g.source  # (a number, no array)
    assert "x_bar = np.empty_like(x)" in g.source  # (each element stored once: no zeros)
    assert "x_bar[fused_k] = x_bar_next_1 + x_bar_at_0" in g.source

    def stencil(u, w):
        v = u[2:] - 2.0 * u[1:-1] + u[:-2] * w
        return np.sum(np.sin(v) * w) + np.sum(u * u)

    wrt = (0, 1)
    s = srcgrad.grad(stencil, wrt, compile="numba")
    u = np.linspace(0.0, 2.0, 7)
    for w in (np.linspace(1.0, 2.0, 5), np.array([0.5])):  # (w broadcast: not fused)
        _close(s(u, w), srcgrad.grad(stencil, wrt)(u, w), wrt)
    assert "for fused_k in range(fused_n):" in s.source


def test_slices():
    """numba's index_adjoint: the adjoint of a slice or a row read."""

    def f(x):
        y = x[1:] - x[:-1]
        return np.sum(y * y) + x[0] * x[2]

    x = np.linspace(-1.0, 2.0, 6)
    _close(srcgrad.grad(f, compile="numba")(x), srcgrad.grad(f)(x), 0)


def test_refusal_names_the_line_and_the_helper():
    def f(xs):
        ys = [np.sin(x) for x in xs]
        return np.sum(np.stack(ys))

    with pytest.raises(srcgrad.CompileError) as info:
        srcgrad.grad(f, compile="numba")(np.ones((3, 2)))
    error = info.value
    assert error.filename == __file__
    assert f.__code__.co_firstlineno <= error.lineno <= f.__code__.co_firstlineno + 2
    assert "numba-or-python" in str(error) and "no numba form" in str(error)


def test_numba_failing_otherwise_while_compiling():
    """numba's typing raises an AttributeError (not one of its errors) for
    ``np.asarray(y, dtype=int)``: a CompileError too, at the function's line; an error
    of the compiled code itself (a division by zero) is raised as plain Python raises it."""

    def f(y, x):
        c = np.tanh(np.sum(np.asarray(y, dtype=int), axis=0))
        return np.sum(c * x)

    with pytest.raises(srcgrad.CompileError, match="while compiling") as info:
        srcgrad.grad(f, wrt=1, compile="numba")(np.ones((2, 3)), np.ones(3))
    assert info.value.lineno == f.__code__.co_firstlineno

    def g(x):
        return 1.0 / x

    reciprocal = srcgrad.grad(g, compile="numba")
    assert reciprocal(2.0) == -0.25
    with pytest.raises(ZeroDivisionError):
        reciprocal(0.0)


def test_timed_choice():
    """On the first call with each size of arguments, numba's code and plain srcgrad's are
    timed and the faster kept: both give the same numbers, and each size is timed once."""
    args = workloads.euler_args()
    g = srcgrad.grad(workloads.euler, compile="numba")
    want = srcgrad.grad(workloads.euler)(*args)
    _close(g(*args), want, 0)
    jitted = g._last.function
    assert jitted.chosen == {compiled._size(args): True}  # (a loop of floats: numba's)
    jitted.chosen[compiled._size(args)] = False  # (as if plain srcgrad had been faster)
    _close(g(*args), want, 0)
    assert jitted._plain is not None and not isinstance(jitted._plain, compiled.Jitted)
    short = (*args[:4], 50)
    _close(g(*short), srcgrad.grad(workloads.euler)(*short), 0)
    assert len(jitted.chosen) == 2  # (another trip count: another size)


# -- numba-or-python ----------------------------------------------------------------------


def test_numba_or_python_falls_back_with_a_warning():
    case = next(c for c in cf.CASES if c.func.__name__ == "list_stacked")
    point = case.points[0]
    g = srcgrad.grad(case.func, case.wrt, compile="numba-or-python")
    with pytest.warns(srcgrad.CompileWarning, match="unstack"):
        got = g(*point)
    _close(got, srcgrad.grad(case.func, case.wrt)(*point), case.wrt)
    assert not isinstance(g._last.function, compiled.Jitted)  # plain Python's code


def test_numba_or_python_falls_back_where_numba_refuses():
    case = next(c for c in cf.CASES if c.func.__name__ == "rnn_float32")
    point = case.points[0]
    g = srcgrad.grad(case.func, case.wrt, compile="numba-or-python")
    with pytest.warns(srcgrad.CompileWarning, match="float32"):
        got = g(*point)
    _close(got, srcgrad.grad(case.func, case.wrt)(*point), case.wrt)
    assert g._last.function._plain is not None  # (plain srcgrad's code, not numba's profile)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (warned once: then plain Python, quietly)
        _close(g(*point), got, case.wrt)


def test_numba_or_python_compiles_what_numba_accepts():
    args = workloads.euler_args()
    g = srcgrad.grad(workloads.euler, compile="numba-or-python")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _close(g(*args), srcgrad.grad(workloads.euler)(*args), 0)
    assert len(g._last.function.jitted.signatures) == 1


# -- the option itself --------------------------------------------------------------------


def test_bad_option():
    with pytest.raises(ValueError, match="compile must be None, 'numba'"):
        srcgrad.grad(workloads.euler, compile="jit")


def test_without_numba_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # (import numba raises ImportError)
    with pytest.raises(ImportError, match=r'pip install "srcgrad\[numba\]"'):
        srcgrad.grad(workloads.euler, compile="numba")
    srcgrad.grad(workloads.euler)  # (the plain transformation needs no numba)


def test_range_items_only_at_positions():
    """``r[-1]`` is not ``r.start - r.step``: an item of a range at an index that is not a
    loop's position is left to numba, which refuses it (never a wrong number)."""

    def f(x):
        r = range(1, 5)
        s = 0.0
        for k in range(3):
            s = s + x[k] * r[-1]
        for i, v in enumerate(x):
            s = s + v * i
        return s

    with pytest.raises(srcgrad.CompileError, match="getitem"):
        srcgrad.grad(f, compile="numba")(np.arange(1.0, 8.0))


# -- random programs ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    return tmp_path_factory.mktemp("numba_programs")


@settings(max_examples=8, deadline=None)
@given(program=rp.programs(max_statements=4), data=st.data())
def test_random_programs(directory, program, data):
    """The random programs of test_random_programs.py: under numba, plain srcgrad's
    gradient or a CompileError (never numba's own error, never another number)."""
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    args, _ = rp.make_args(program, seed, data.draw(st.integers(0, 3), label="n"))
    name = f"numba_prog_{seed}_{len(program.source)}"
    module = rp.load(program.source, directory, name)
    try:
        try:
            with np.errstate(all="ignore"):
                want = srcgrad.grad(module.f, wrt=program.wrt)(*args)
        except Exception:  # (numpy refuses the program: test_random_programs covers it)
            assume(False)
        try:
            with np.errstate(all="ignore"):
                got = srcgrad.grad(module.f, wrt=program.wrt, compile="numba")(*args)
        except srcgrad.CompileError:
            return
        _close(got, want, program.wrt)
    finally:
        sys.modules.pop(name, None)
