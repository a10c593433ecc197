"""The rule table and the control-flow corpus on cupy arrays: they run only on a machine
with a CUDA GPU (and cupy installed); anywhere else the whole module skips at collection,
saying why, and costs nothing.

The same three kinds of check as ``test_dask.py`` makes on dask arrays, with the same rows
and draws (imported from ``test_rules*.py`` and ``test_dask.py``, never copied):

- the rule table's one-argument rows (``test_rules*.py``): the vjp and the jvp of each
  row at a drawn float64 ``x``, once on ``x`` and once on ``cupy.asarray(x)``;
- the rows with several arguments and the linalg rows: every numpy array argument
  (float, integer and boolean: cupy refuses numpy arrays mixed with cupy ones) on the
  GPU, everything else (numbers, axes, shapes, slices, subscripts) as it is; the vjp and
  the jvp with respect to every differentiable argument;
- the control-flow corpus (``corpus_control_flow.py``): every point with an array
  argument, its reverse-mode gradient and its jvp (forward mode) with random tangents.

Each result computed from cupy arguments must be a cupy array where numpy's is a numpy
array (checked before anything is copied back), of numpy's shape and dtype, and
``cupy.asnumpy`` of it must match numpy's result. A number on numpy (the gradient of a
Python float argument, a reduction's value) may be a number or a 0-d cupy array. Rows cupy
itself cannot run are skipped, saying why, only where the cupy installed is checked to
lack what the row calls. Hypothesis draws 2 or 3 examples per row: every row runs on numpy
in its own file.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu import cupy_or_skip
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import srcgrad

cp = cupy_or_skip()

F64_TOL = {"rtol": 1e-9, "atol": 1e-10}
F32_TOL = {"rtol": 1e-5, "atol": 1e-6}  # rnn_float32 in the corpus


# -- helpers -------------------------------------------------------------------------------


def to_gpu(value):
    """A cupy array for every numpy array in ``value`` (in tuples, lists and dicts too);
    numbers, slices, strings and the like as they are."""
    if isinstance(value, np.ndarray):
        return cp.asarray(value)
    if isinstance(value, dict):
        return {k: to_gpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_gpu(v) for v in value)
    return value


def holds_cupy(value) -> bool:
    if isinstance(value, dict):
        return any(holds_cupy(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds_cupy(v) for v in value)
    return isinstance(value, cp.ndarray)


def assert_on_gpu_close(got, want, tol):
    """``got`` (from cupy arguments) matches ``want`` (numpy's): a cupy array (checked
    before it is copied back) where ``want`` is a numpy array; a number or a 0-d cupy array
    where ``want`` is a number; pytrees leaf by leaf."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys()
        for k in want:
            assert_on_gpu_close(got[k], want[k], tol)
        return
    if isinstance(want, (list, tuple)):
        assert isinstance(got, type(want)) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_on_gpu_close(g, w, tol)
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, cp.ndarray), f"expected a cupy array, got {type(got).__name__}"
        assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)
        np.testing.assert_allclose(cp.asnumpy(got), want, **tol)
        return
    if isinstance(got, cp.ndarray):
        assert got.shape == (), f"a number on numpy, an array of shape {got.shape} on cupy"
        got = cp.asnumpy(got)
    else:
        assert isinstance(got, (float, int, np.generic)), type(got).__name__
    if isinstance(want, np.generic):
        assert np.result_type(got) == want.dtype, (np.result_type(got), want.dtype)
    np.testing.assert_allclose(got, want, **tol)


def _lacks(call) -> bool:
    """Whether ``call()``, a use of cupy that a row makes, fails on the cupy installed."""
    try:
        call()
    except Exception:
        return True
    return False


#: row name: (a probe of what the row calls, why cupy cannot run it). A row is skipped only
#: where its probe fails on the cupy installed, so it runs wherever cupy has what it needs.
#: The reasons come from cupy's documentation (to confirm on a GPU: no session has run them).
CUPY_LACKS = {
    "np.sort(x, kind='mergesort')": (
        lambda: cp.sort(cp.arange(3.0), kind="mergesort"),
        "cupy.sort takes kind=None or 'stable' only",
    ),
    "np.take mode": (
        lambda: cp.take(cp.arange(3.0), cp.asarray([0, 4]), axis=0, mode="wrap"),
        "cupy.take has no mode",
    ),
    "np.clip(x, min=-1.0, max=hi)": (
        lambda: cp.clip(cp.arange(3.0), min=-1.0, max=1.0),
        "cupy.clip takes a_min and a_max, not numpy 2.1's min and max",
    ),
    "linalg slogdet-.logabsdet": (
        lambda: cp.linalg.slogdet(cp.eye(2)).logabsdet,
        "cupy.linalg.slogdet returns a plain tuple: no .sign or .logabsdet",
    ),
    "linalg eigh-attributes": (
        lambda: cp.linalg.eigh(cp.eye(2)).eigenvectors,
        "cupy.linalg.eigh returns a plain tuple: no .eigenvalues or .eigenvectors",
    ),
    "np.row_stack": (
        lambda: cp.row_stack((cp.ones(2), cp.ones(2))),
        "cupy has no row_stack (numpy 2 deprecated this old name of vstack)",
    ),
    **dict.fromkeys(
        [
            "numeric np.trapezoid",
            "numeric np.trapezoid-x",
            "numeric np.trapezoid-x-axis0",
            "numeric np.trapezoid-dx",
            "numeric np.trapezoid-dynamic",
            "numeric np.trapezoid-of-square",
        ],
        (lambda: cp.trapezoid(cp.ones(2)), "cupy has no trapezoid (numpy 2's name of trapz)"),
    ),
    **dict.fromkeys(
        [
            "numeric np.polyval-polyder",  # (the function itself calls np.polyder)
            "numeric np.polyder",
            "numeric np.polyder-twice",
            "numeric np.polyder-dynamic",
        ],
        (lambda: cp.polyder(cp.ones(3)), "cupy has no polyder"),
    ),
    **dict.fromkeys(
        ["numeric np.interp", "numeric np.interp-left-right", "numeric np.interp-of-sine"],
        (
            lambda: cp.interp(cp.ones(2), np.arange(2.0), cp.ones(2)),
            "the rows' sample points are a numpy array (a module constant), which cupy does "
            "not mix with cupy arrays",
        ),
    ),
    **dict.fromkeys(
        ["numeric np.cross", "numeric np.cross-dynamic"],
        (
            lambda: cp.cross(cp.ones(2), cp.ones(2)),
            "cupy.cross takes no 2-vectors (numpy 2 deprecates them)",
        ),
    ),
}

#: rows whose arguments are never arrays: their calls run on numpy whatever the test does
NO_ARRAY_ARGUMENT = {"np.arange start and step", "np.arange stop"}


def _marks(name) -> list:
    if name in NO_ARRAY_ARGUMENT:
        return [pytest.mark.skip(reason="Python and numpy scalars only: no cupy array to pass")]
    if name in CUPY_LACKS and _lacks(CUPY_LACKS[name][0]):
        return [pytest.mark.skip(reason=f"not on cupy: {CUPY_LACKS[name][1]}")]
    return []


# -- the rule table's one-argument rows, on cupy ------------------------------------------


def _rule_rows():
    import test_rules
    import test_rules_elementwise
    import test_rules_reductions
    import test_rules_shapes

    rows = [
        *test_rules.UNARY,
        *test_rules_elementwise.UNARY,
        *test_rules_reductions.SMOOTH,
        *test_rules_reductions.KINKED,
        *test_rules_shapes.STATIC,
    ]
    return [pytest.param(row, id=row.name, marks=_marks(row.name)) for row in rows]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("row", _rule_rows())
@settings(max_examples=3, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_rule_rows_on_cupy_match_numpy(row, data):
    from test_dask import _draw, _ones_like

    x = _draw(data, row)  # float64, drawn as test_dask.py draws it
    # distinct values: at a tie (np.std of equal values) the convention follows the sign of
    # a rounding error, and the GPU sums in another order than numpy
    assume(not any(k in row.name for k in ("std", "var")) or np.unique(x).size == x.size)
    dout = _ones_like(row.func(x))
    want = srcgrad.vjp(row.func)(x, dout)
    got = srcgrad.vjp(row.func)(cp.asarray(x), to_gpu(dout))
    assert_on_gpu_close(got, np.asarray(want, dtype=x.dtype), F64_TOL)
    tangent = np.ones_like(x)
    value, want = srcgrad.jvp(row.func)(x, tangent)
    gpu_value, got = srcgrad.jvp(row.func)(cp.asarray(x), cp.asarray(tangent))
    assert_on_gpu_close(gpu_value, value, F64_TOL)
    assert_on_gpu_close(got, want, F64_TOL)


# -- the rule table's rows with several arguments (and the linalg rows), on cupy ----------


def _multi_params():
    from test_dask import _multi_rows  # (name, draw) for every row, as test_dask.py runs them

    return [pytest.param(name, draw, id=name, marks=_marks(name)) for name, draw in _multi_rows()]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name, draw", _multi_params())
@settings(max_examples=2, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_multi_argument_rows_on_cupy_match_numpy(name, draw, data):
    import rule_checks
    from test_dask import _random_like

    func, args = draw(data)
    positions = [i for i, a in enumerate(args) if rule_checks.differentiable(a)]
    gpu = to_gpu(args)
    assume(positions and holds_cupy(gpu))  # else the call runs on numpy
    wrt = tuple(positions) if len(positions) > 1 else positions[0]
    rng = np.random.default_rng(7)
    dout = _random_like(func(*args), rng)
    want = srcgrad.vjp(func, wrt=wrt)(*args, dout)
    got = srcgrad.vjp(func, wrt=wrt)(*gpu, to_gpu(dout))
    assert_on_gpu_close(got, want, F64_TOL)
    tangents = [_random_like(args[i], rng) for i in positions]
    value, want = srcgrad.jvp(func, wrt=wrt)(*args, *tangents)
    gpu_value, got = srcgrad.jvp(func, wrt=wrt)(*gpu, *to_gpu(tangents))
    assert_on_gpu_close(gpu_value, value, F64_TOL)
    assert_on_gpu_close(got, want, F64_TOL)


# -- the control-flow corpus (corpus_control_flow.py), on cupy ----------------------------
#
# Every point of every case with an array argument: its arrays on the GPU (Python numbers
# stay numbers). A data-dependent ``if`` or ``while`` copies its condition to the host
# (Python's bool() of a cupy array does), in the derivative as in the function itself.


def _corpus_params():
    import corpus_control_flow as cf

    return [
        pytest.param(case.func, point, case.wrt, id=f"{case.func.__name__}-{k}")
        for case in cf.CASES
        for k, point in enumerate(case.points)
        if any(isinstance(a, np.ndarray) for a in point)
    ]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("func, args, wrt", _corpus_params())
def test_control_flow_corpus_on_cupy(func, args, wrt):
    from test_dask import _random_like

    single = any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args)
    tol = F32_TOL if single else F64_TOL
    gpu = to_gpu(args)
    want = srcgrad.grad(func, wrt=wrt)(*args)
    assert_on_gpu_close(srcgrad.grad(func, wrt=wrt)(*gpu), want, tol)
    rng = np.random.default_rng(3)
    tangents = [_random_like(args[i], rng) for i in (wrt if isinstance(wrt, tuple) else (wrt,))]
    value, want = srcgrad.jvp(func, wrt=wrt)(*args, *tangents)
    gpu_value, got = srcgrad.jvp(func, wrt=wrt)(*gpu, *to_gpu(tangents))
    assert_on_gpu_close(gpu_value, value, tol)
    assert_on_gpu_close(got, want, tol)
