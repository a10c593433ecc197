"""The dask backend: generated code compiled against dask.array by module rebinding.

Gradients of functions of dask arrays are dask arrays (lazy graphs): each test checks
the type before it calls ``.compute()``, and compares the computed values with the
same computation on numpy arrays. One test runs a gradient on a dask.distributed
cluster started inside the test (loopback only, shut down at the end). The rule
table's rows (``test_rules*.py``: one-argument rows, rows with several arguments and
the linalg rows) run on dask too, in float64: the vjp and the jvp on dask match
numpy's; rows dask.array cannot run are skipped, saying why (and draws it cannot run,
for rows it runs in part). So does the control-flow corpus (``corpus_control_flow.py``).
Hypothesis draws 2 or 3 examples per row here: every row runs on numpy in its own file.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import srcgrad
from srcgrad.backends import NUMPY, backend_of

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install '.[dask]')")

CHUNKS = 2
TOL = {"rtol": 1e-10, "atol": 1e-12}

# -- functions under test ------------------------------------------------------------------

PICK = np.array([0, 2, 2, 5, 1])  # repeated positions: their adjoints add up
ROWS = np.array([3, 0, 3])


def elementwise(x, y):
    return np.sum(np.tanh(x) * np.sqrt(y * y + 1.0) + np.maximum(x, 0.0) / (1 + np.exp(y)))


def broadcasting(x, b):
    return np.sum(np.sin(x) * b + b**2)


def reductions(x):
    return np.sum(np.mean(np.exp(x) * x, axis=0)) + np.sum(np.max(x, axis=1) ** 2)


def matmul(a, b):
    return np.sum(np.tanh(a @ b))


def logistic(w, x, y):
    p = 1 / (1 + np.exp(-(x @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def slices(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2) + np.sum(x[::2] ** 3)


def slices_2d(x):
    return np.sum(x[:, 1:] * x[:, :-1]) + np.sum(x[1:3] ** 2)


def integer_arrays(x):
    return np.sum(x[PICK] ** 2)


def integer_rows(x):
    return np.sum(np.cos(x[ROWS]) * x[ROWS])


def loop(x, w):
    for _ in range(3):
        x = np.sin(x) * w + x
    return np.sum(x)


def mlp(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2)


def vector_out(x, y):
    return np.tanh(x) * y + x[::-1]


def rng_arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def logistic_args():
    w, x = rng_arrays(1, 4, (10, 4))
    y = (np.random.default_rng(2).random(10) > 0.5).astype(float)
    return w, x, y


def mlp_args():
    W1, b1, W2, b2, x, y = rng_arrays(3, (4, 5), 5, (5, 2), 2, (7, 4), (7, 2))
    return {"W1": W1, "b1": b1, "W2": W2, "b2": b2}, x, y


#: name, function, arguments (numpy), wrt
CASES = [
    ("elementwise", elementwise, rng_arrays(0, (3, 5), (3, 5)), (0, 1)),
    ("broadcasting", broadcasting, rng_arrays(0, (4, 3), 3), (0, 1)),
    ("reductions", reductions, rng_arrays(0, (4, 3)), 0),
    ("matmul", matmul, rng_arrays(0, (3, 4), (4, 5)), (0, 1)),
    ("logistic", logistic, logistic_args(), (0, 1)),
    ("slices", slices, rng_arrays(0, 7), 0),
    ("slices_2d", slices_2d, rng_arrays(0, (5, 4)), 0),
    ("integer_arrays", integer_arrays, rng_arrays(0, 6), 0),
    ("integer_rows", integer_rows, rng_arrays(0, (5, 3)), 0),
    ("loop", loop, rng_arrays(0, (3, 4), 4), (0, 1)),
    ("mlp", mlp, mlp_args(), 0),
]
IDS = [case[0] for case in CASES]


# -- helpers -------------------------------------------------------------------------------


def to_dask(value):
    """A dask array (chunks of 2 along every axis) for every numpy array of a pytree."""
    if isinstance(value, dict):
        return {k: to_dask(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_dask(v) for v in value)
    if isinstance(value, np.ndarray):
        return da.from_array(value, chunks=CHUNKS)
    return value


def assert_lazy_close(got, want, **tol):
    """``got`` is a dask array (checked before computing it) close to ``want``; pytrees
    leaf by leaf."""
    tol = tol or TOL
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys()
        for k in want:
            assert_lazy_close(got[k], want[k], **tol)
        return
    if isinstance(want, (list, tuple)):
        assert isinstance(got, type(want)) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_lazy_close(g, w, **tol)
        return
    assert isinstance(got, da.Array), f"expected a dask array, got {type(got).__name__}"
    assert got.shape == np.shape(want)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got.compute(), want, **tol)


# -- gradients on dask arrays match numpy --------------------------------------------------


@pytest.mark.parametrize("name, func, args, wrt", CASES, ids=IDS)
def test_reverse_grad_matches_numpy(name, func, args, wrt):
    want = srcgrad.grad(func, wrt=wrt)(*args)
    got = srcgrad.grad(func, wrt=wrt)(*to_dask(args))
    assert_lazy_close(got, want)


@pytest.mark.parametrize("name, func, args, wrt", CASES, ids=IDS)
def test_forward_grad_matches_numpy(name, func, args, wrt):
    want = srcgrad.grad(func, wrt=wrt, mode="forward")(*args)
    got = srcgrad.grad(func, wrt=wrt, mode="forward")(*to_dask(args))
    assert_lazy_close(got, want)


@pytest.mark.parametrize("name, func, args, wrt", CASES, ids=IDS)
def test_value_and_grad_matches_numpy(name, func, args, wrt):
    value, grads = srcgrad.value_and_grad(func, wrt=wrt)(*args)
    lazy_value, lazy_grads = srcgrad.value_and_grad(func, wrt=wrt)(*to_dask(args))
    assert_lazy_close(lazy_value, value)
    assert_lazy_close(lazy_grads, grads)


@pytest.mark.parametrize("name, func, args, wrt", CASES, ids=IDS)
def test_jvp_matches_numpy(name, func, args, wrt):
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    rng = np.random.default_rng(9)

    def tangent(x):
        if isinstance(x, dict):
            return {k: tangent(v) for k, v in x.items()}
        return rng.standard_normal(np.shape(x))

    tangents = [tangent(args[i]) for i in positions]
    value, dout = srcgrad.jvp(func, wrt=wrt)(*args, *tangents)
    lazy_value, lazy_dout = srcgrad.jvp(func, wrt=wrt)(*to_dask(args), *to_dask(tangents))
    assert_lazy_close(lazy_value, value)
    assert_lazy_close(lazy_dout, dout)


def test_vjp_of_an_array_output_matches_numpy():
    x, y, dout = rng_arrays(4, (3, 5), (3, 5), (3, 5))
    want = srcgrad.vjp(vector_out, wrt=(0, 1))(x, y, dout)
    got = srcgrad.vjp(vector_out, wrt=(0, 1))(*to_dask((x, y, dout)))
    assert_lazy_close(got, want)
    jvp_value, jvp_out = srcgrad.jvp(vector_out)(*to_dask((x, y, dout)))
    want_value, want_out = srcgrad.jvp(vector_out)(x, y, dout)
    assert_lazy_close(jvp_value, want_value)
    assert_lazy_close(jvp_out, want_out)


@pytest.mark.parametrize("name, func, args, wrt", CASES[:6], ids=IDS[:6])
def test_vjp_of_a_scalar_output_matches_numpy(name, func, args, wrt):
    want = srcgrad.vjp(func, wrt=wrt)(*args, 1.5)
    got = srcgrad.vjp(func, wrt=wrt)(*to_dask(args), 1.5)
    assert_lazy_close(got, want)


def test_float32_gradients_stay_float32():
    w, x, y = (a.astype(np.float32) for a in logistic_args())
    want = srcgrad.grad(logistic, wrt=(0, 1))(w, x, y)
    got = srcgrad.grad(logistic, wrt=(0, 1))(*to_dask((w, x, y)))
    assert_lazy_close(got, want, rtol=1e-5, atol=1e-6)


def test_numpy_constants_mix_with_dask_arguments():
    w, x, y = logistic_args()
    want = srcgrad.grad(logistic)(w, x, y)
    got = srcgrad.grad(logistic)(w, da.from_array(x, chunks=3), y)  # only x is a dask array
    assert_lazy_close(got, want)


# -- backend selection, generated code, caching --------------------------------------------


def test_backend_of_dask_arguments_is_dask():
    backend = backend_of([np.ones(3), {"a": [da.ones(3, chunks=2)]}, 2.0], ["x", "p", "c"])
    assert backend.name == "dask"
    assert backend.is_array(da.ones(2)) and not backend.is_array(np.ones(2))
    assert backend.rebind(np).exp is da.exp
    assert backend.rebind(np.tanh) is da.tanh
    assert backend_of([np.ones(3)], ["x"]) is NUMPY


def test_generated_code_for_dask_binds_np_to_dask_array():
    d = srcgrad.grad(logistic)
    d(*to_dask(logistic_args()))
    assert "from srcgrad.backends import dask_array as np" in d.source
    from srcgrad.backends import dask_array

    assert dask_array.Array is da.Array and dask_array.exp is da.exp


def test_seeds_are_chunked_like_their_operand():
    # np.full_like(t, g, shape=...) seeds reductions' adjoints: chunked like t, never one
    # automatic 128 MiB chunk (which would bound memory by the data, not the chunk size)
    from srcgrad.backends import dask_array

    z = da.ones(20_000_000, chunks=250_000)
    assert dask_array.full_like(z, 0.5, shape=z.shape).chunks == z.chunks
    assert dask_array.full_like(z, 0.5, shape=(3, *z.shape)).chunks[1] == z.chunks[0]
    x = da.ones((6, 4), chunks=2)
    assert srcgrad.grad(lambda x: np.mean(x**2))(x).chunks == x.chunks


def test_dask_and_numpy_code_are_cached_apart():
    args = logistic_args()
    d = srcgrad.grad(logistic)
    first = d(*args)
    lazy = d(*to_dask(args))
    again = d(*args)
    assert type(first) is np.ndarray and type(again) is np.ndarray
    assert_lazy_close(lazy, first)


def test_callers_dask_arrays_are_not_modified():
    args = to_dask(logistic_args())
    names = [a.name for a in args]
    srcgrad.grad(logistic, wrt=(0, 1, 2))(*args)
    srcgrad.grad(slices)(args[0])
    srcgrad.grad(integer_arrays)(da.from_array(np.arange(6.0), chunks=2))
    assert [a.name for a in args] == names


def test_nothing_is_computed_while_the_gradient_is_built():
    import dask

    calls = []

    def scheduler(dsk, keys, **kwargs):
        calls.append(keys)
        return dask.get(dsk, keys, **kwargs)

    args = to_dask(logistic_args())
    with dask.config.set(scheduler=scheduler):
        grads = srcgrad.grad(logistic, wrt=(0, 1))(*args)
        srcgrad.grad(logistic, mode="forward")(*args)
        srcgrad.grad(mlp)(*to_dask(mlp_args()))
    assert calls == []
    with dask.config.set(scheduler=scheduler):
        grads[0].compute()
    assert len(calls) == 1


def test_gradient_of_a_python_float_argument_stays_lazy():
    w, x, y = logistic_args()

    def shifted(w, b, x, y):
        return logistic(w, x, y) + b * np.sum(w)

    want = srcgrad.grad(shifted, wrt=(0, 1))(w, 0.5, x, y)
    got = srcgrad.grad(shifted, wrt=(0, 1))(w, 0.5, *to_dask((x, y)))
    assert isinstance(got[1], da.Array) and got[1].shape == () and got[1].dtype == np.float64
    assert_lazy_close(got[0], want[0])
    assert float(got[1].compute()) == pytest.approx(want[1], rel=1e-12)


def test_forward_gradient_of_a_python_float_argument_stays_lazy():
    # grad(mode="forward") computed float(dout) for a float argument of a call with dask
    # arrays (and element by element for a numpy array argument): a compute per element
    w, x, y = logistic_args()

    def shifted(w, b, x, y):
        return logistic(w, x, y) + b * np.sum(x @ w)

    want = srcgrad.grad(shifted, wrt=(0, 1), mode="forward")(w, 0.5, x, y)
    got = srcgrad.grad(shifted, wrt=(0, 1), mode="forward")(w, 0.5, *to_dask((x, y)))
    assert isinstance(got[1], da.Array) and got[1].shape == () and got[1].dtype == np.float64
    assert_lazy_close(got[0], want[0])  # w is a numpy array: its gradient is lazy too
    assert float(got[1].compute()) == pytest.approx(want[1], rel=1e-12)


def test_data_dependent_branch_computes_its_condition():
    def branchy(x):
        if np.sum(x) > 0:  # bool() of a dask array: dask computes it
            return np.sum(x**2)
        return np.sum(np.sin(x))

    for x in (np.arange(4.0), -np.arange(4.0)):
        assert_lazy_close(
            srcgrad.grad(branchy)(da.from_array(x, chunks=2)), srcgrad.grad(branchy)(x)
        )


def test_data_dependent_while_loop():
    def halve(x):
        while np.sum(x**2) > 1.0:  # bool() of a dask array: dask computes it
            x = x * 0.5
        return np.sum(np.sin(x) * x)

    x = np.arange(1.0, 4.0)
    assert_lazy_close(srcgrad.grad(halve)(da.from_array(x, chunks=2)), srcgrad.grad(halve)(x))


def test_hessian_vector_product_on_dask():
    def energy(x):
        return np.sum(np.sin(x) * x**2) + np.sum(x[1:] * x[:-1])

    x, v = rng_arrays(5, 5, 5)
    want = srcgrad.hvp(energy)(x, v)
    assert_lazy_close(srcgrad.hvp(energy)(*to_dask((x, v))), want)


def test_unknown_chunk_sizes_name_the_fix():
    def masked_mean(x):
        return np.mean(x[x > 0] ** 2)

    x = da.from_array(np.array([1.0, -2.0, 3.0, 4.0]), chunks=2)
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        srcgrad.grad(masked_mean)(x)


# -- a dask.distributed cluster ------------------------------------------------------------


def test_gradient_on_a_distributed_cluster():
    distributed = pytest.importorskip("distributed", reason="distributed is not installed")
    cluster = distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,  # workers in this process, talking over inproc://: no network
        dashboard_address=None,
    )
    client = distributed.Client(cluster)
    try:
        assert cluster.scheduler_address.startswith("inproc://")
        w, x, y = logistic_args()
        want = srcgrad.grad(logistic, wrt=(0, 1))(w, x, y)
        got = srcgrad.grad(logistic, wrt=(0, 1))(*to_dask((w, x, y)))
        assert all(isinstance(g, da.Array) for g in got)
        computed = client.compute(list(got), sync=True)
        for g, v in zip(computed, want):
            np.testing.assert_allclose(g, v, **TOL)
        assert_lazy_close(srcgrad.grad(mlp)(*to_dask(mlp_args())), srcgrad.grad(mlp)(*mlp_args()))
    finally:
        client.close()
        cluster.close()


# -- the rule table's one-argument rows, on dask -------------------------------------------

UNSUPPORTED = {  # row name: why it cannot run on dask
    **dict.fromkeys(
        ["np.reshape(x, (4, -1))", "x.reshape(3, 8)"],
        "dask reshapes only by merging or splitting dimensions evenly",
    ),
    **dict.fromkeys(
        ["x[None]", "x[..., None]", "x[1:, None, ::-2]", "x[None, ..., None, 0]"],
        "the adjoint assigns through an index with None: dask's __setitem__ cannot",
    ),
    **dict.fromkeys(
        ["x.cumsum()", "x.cumprod()", "x.take([1, 1, 0], axis=0)", "x[x.argsort()]"],
        "a dask array has no such method (the primal fails on dask)",
    ),
    **dict.fromkeys(
        ["a, b = np.hsplit(x, 2)", "np.vsplit(x, [1])"],
        "dask.array has no hsplit or vsplit (the primal fails on dask)",
    ),
    "np.ptp(x, axis=(0, -1), keepdims=True)": "dask.array.ptp has no keepdims",
    "np.linalg.norm(x)": "dask.array.linalg.norm with no axis takes 1-d and 2-d arrays only",
    "np.pad(x, 3, mode='wrap')": "dask pads with mode='wrap' to a different shape than numpy",
    "np.take(x, [[1, 0], [1, 1]], axis=1)": "dask indexes with 1-d integer arrays only",
    "x[x > 0.5]": "the adjoint of boolean-mask indexing needs the mask's size (unknown)",
    **dict.fromkeys(
        ["x[np.argmax(x)]", "x.argmax()"],
        "the adjoint assigns at a 0-d dask index: dask's __setitem__ cannot",
    ),
    **dict.fromkeys(
        [
            "np.sort(x)",
            "np.sort(x, axis=0)",
            "np.sort(x, axis=None)",
            "np.sort(x, kind='mergesort')",
            "np.take_along_axis(x, np.argsort(x))",
            "np.argmin(x, axis=0, keepdims=True)",
            "x * np.argsort(x)",
        ],
        "dask.array has no sort, argsort or take_along_axis",
    ),
    **dict.fromkeys(
        ["np.argwhere", "np.flatnonzero"],
        "the output's shape is unknown until computed (nan in dask)",
    ),
}


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
    params = []
    for row in rows:
        reason = UNSUPPORTED.get(row.name)
        marks = [pytest.mark.skip(reason=f"not on dask: {reason}")] if reason else []
        params.append(pytest.param(row, id=row.name, marks=marks))
    return params


def _draw(data, row):
    import test_rules_elementwise
    import test_rules_shapes

    shape = data.draw(row.shapes)
    if row.domain == test_rules_shapes.SPACED:
        return np.asarray(data.draw(test_rules_shapes.spaced(shape, np.float64)))
    return np.asarray(test_rules_elementwise.draw_values(data, shape, row.domain, np.float64))


def _ones_like(value):
    return np.ones_like(value) if isinstance(value, (np.ndarray, np.generic)) else 1.0


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("row", _rule_rows())
@settings(max_examples=3, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_rule_rows_on_dask_match_numpy(row, data):
    x = _draw(data, row)
    # distinct values: at a tie (np.std of equal values) the convention follows the sign of
    # a rounding error, and dask sums in another order than numpy
    assume(not any(k in row.name for k in ("std", "var")) or np.unique(x).size == x.size)
    out = row.func(x)
    dout = _ones_like(out)
    lazy_x = da.from_array(x, chunks=CHUNKS)
    tol = {"rtol": 1e-9, "atol": 1e-12}
    want = srcgrad.vjp(row.func)(x, dout)
    got = srcgrad.vjp(row.func)(lazy_x, dout)  # a numpy cotangent: fine on dask
    assert_lazy_close(got, np.asarray(want, dtype=x.dtype), **tol)
    tangent = np.ones_like(x)
    value, want = srcgrad.jvp(row.func)(x, tangent)
    lazy_value, got = srcgrad.jvp(row.func)(lazy_x, da.from_array(tangent, chunks=CHUNKS))
    if isinstance(out, (np.ndarray, np.generic)):
        assert_lazy_close(lazy_value, value, **tol)
        assert_lazy_close(got, want, **tol)
    else:  # float(x), x.item(): the function itself computes a Python number
        np.testing.assert_allclose(lazy_value, value, **tol)
        np.testing.assert_allclose(np.asarray(got), want, **tol)


# -- the rule table's rows with several arguments (and the linalg rows), on dask ----------
#
# Each row draws its arguments as its own test in test_rules*.py does (float64 only); float
# arrays become dask arrays, everything else (Python and numpy scalars, integer and boolean
# arrays: indices, masks, conditions; axes, shapes, subscripts) is passed as it is. The vjp
# (a dask cotangent) and the jvp (dask tangents) with respect to every differentiable
# argument must be dask arrays that compute to numpy's results.

F64 = np.float64


def _lazy_arg(value):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return da.from_array(value, chunks=CHUNKS)
    return value


def _random_like(value, rng):
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(rng.standard_normal(np.shape(value)), dtype=value.dtype)
    return float(rng.standard_normal())


def _check_on_dask(func, args, tol):
    import rule_checks

    positions = [i for i, a in enumerate(args) if rule_checks.differentiable(a)]
    lazy = tuple(_lazy_arg(a) for a in args)
    assume(positions and any(isinstance(a, da.Array) for a in lazy))
    wrt = tuple(positions) if len(positions) > 1 else positions[0]
    rng = np.random.default_rng(7)
    dout = _random_like(func(*args), rng)
    want = srcgrad.vjp(func, wrt=wrt)(*args, dout)
    got = srcgrad.vjp(func, wrt=wrt)(*lazy, _lazy_arg(dout))
    assert_lazy_close(got, want, **tol)
    _jvp_matches_numpy(func, wrt, args, lazy, positions, rng, tol)


def _jvp_matches_numpy(func, wrt, args, lazy, positions, rng, tol):
    """The jvp on the ``lazy`` arguments, with random tangents for ``positions`` (dask
    arrays where numpy's are float arrays), computes to the jvp on ``args``."""
    tangents = [_random_like(args[i], rng) for i in positions]
    value, want = srcgrad.jvp(func, wrt=wrt)(*args, *tangents)
    lazy_value, got = srcgrad.jvp(func, wrt=wrt)(*lazy, *map(_lazy_arg, tangents))
    for g, w in ((lazy_value, value), (got, want)):
        if type(w) in (float, int):  # no array reached it (a loop of no trips, an empty
            # list summed): a number
            np.testing.assert_allclose(np.asarray(g), w, **tol)
        else:
            assert_lazy_close(g, w, **tol)


def _binary(func, xdom, ydom, ints="xy", operand=None):
    """test_rules.test_binary's draws (test_rules_elementwise's with its ``operand``)."""
    from srcgrad.testing import broadcastable_shapes

    def draw(data):
        import rule_checks

        make = operand or rule_checks.operand
        sx, sy = data.draw(broadcastable_shapes(num_shapes=2))
        scalar_side = data.draw(st.sampled_from([None, "x", "y"]))
        sx, sy = (() if scalar_side == "x" else sx), (() if scalar_side == "y" else sy)
        int_side = data.draw(st.sampled_from(["x", "y"]))
        x = make(data, sx, xdom, F64, ints=int_side == "x" and "x" in ints)
        y = make(data, sy, ydom, F64, ints=int_side == "y" and "y" in ints)
        return func, (x, y)

    return draw


def _multi_rows():
    """(name, draw) for every row; ``draw(data)`` gives ``(func, args)``."""
    import functions_elementwise as fe
    import functions_for_rules as fr
    import functions_reductions as fred
    import hypothesis.extra.numpy as hnp
    import test_rules
    import test_rules_elementwise as te
    import test_rules_linalg as tl
    import test_rules_numeric as tn
    import test_rules_reductions as trd
    import test_rules_shapes as ts
    from rule_checks import ANY, AWAY_FROM_0, POSITIVE, operand, shapes, values

    from srcgrad.testing import broadcastable_shapes

    rows = []
    for name, func, xdom, ydom in test_rules.BINARY:
        rows.append((name, _binary(func, xdom, ydom)))

    def where(data):
        sc, sx, sy = data.draw(broadcastable_shapes(num_shapes=3))
        c = data.draw(hnp.arrays(bool, sc))
        return fr.np_where, (c, operand(data, sx, ANY, F64, ints=True), operand(data, sy, ANY, F64))

    rows.append(("np.where", where))

    def reduction(func):
        def draw(data):
            shape = data.draw(shapes())
            x = data.draw(values(shape, ANY, F64))
            return func, (x, data.draw(test_rules.axes(len(shape))), data.draw(st.booleans()))

        return draw

    rows += [(f.__name__, reduction(f)) for f in test_rules.REDUCTIONS]

    def matmul(name, func, ranks):
        def draw(data):
            n, k, m = (data.draw(st.integers(1, 4)) for _ in range(3))
            batch = data.draw(st.integers(1, 3))
            ra, rb = ranks
            sa = {0: (), 1: (k,), 2: (n, k), 3: (data.draw(st.sampled_from([1, batch])), n, k)}
            sb = {0: (), 1: (k,), 2: (k, m), 3: (data.draw(st.sampled_from([1, batch])), k, m)}
            a = operand(data, sa[ra], ANY, F64, scalars=name == "np.dot")
            b = operand(data, sb[rb], ANY, F64, scalars=name == "np.dot")
            return func, (a, b)

        return draw

    for row in test_rules.MATMULS:
        name, func, ranks = row
        ranks = ranks.values[0] if hasattr(ranks, "values") else ranks
        rows.append((test_rules._matmul_id(row), matmul(name, func, ranks)))

    def transpose(data):
        shape = data.draw(shapes())
        x = data.draw(values(shape, ANY, F64))
        return fr.transpose_dynamic, (x, data.draw(st.permutations(range(len(shape))).map(tuple)))

    def reshape(func):
        def draw(data):
            shape = data.draw(shapes())
            x = data.draw(values(shape, ANY, F64))
            return func, (x, data.draw(test_rules.target_shapes(shape)))

        return draw

    def index(data):
        shape = data.draw(shapes(1))
        x = data.draw(values(shape, ANY, F64))
        i = data.draw(st.integers(-shape[0], shape[0] - 1))
        i = data.draw(
            st.sampled_from(
                [i, np.int64(i), slice(i, None), slice(None, None, -1), (Ellipsis, 0), (None, i)]
            )
        )
        return fr.index_dynamic, (x, i)

    rows += [
        ("transpose_dynamic", transpose),
        ("reshape_dynamic", reshape(fr.reshape_dynamic)),
        ("method_reshape_dynamic", reshape(fr.method_reshape_dynamic)),
        ("index_dynamic", index),
    ]

    # test_rules_elementwise
    for row in te.BINARY:
        rows.append((row.name, _binary(row.func, row.xdom, row.ydom, row.ints, te.draw_operand)))

    def clip(func, bounds):
        def draw(data):
            sizes = data.draw(broadcastable_shapes(num_shapes=1 + len(bounds)))
            x = te.draw_operand(data, sizes[0], te.CLIP_X, F64, python=False)
            rest = [te.draw_operand(data, s, b, F64) for s, b in zip(sizes[1:], bounds)]
            return func, (x, *rest)

        return draw

    rows += [
        ("np.clip", clip(fe.clip, (te.CLIP_LO, te.CLIP_HI))),
        (".clip()", clip(fe.method_clip, (te.CLIP_LO, te.CLIP_HI))),
        ("np.clip(x, a_min=lo, a_max=2.0)", clip(fe.clip_keywords, (te.CLIP_LO,))),
        ("np.clip(x, min=-1.0, max=hi)", clip(fe.clip_min_max, (te.CLIP_HI,))),
    ]

    # test_rules_reductions
    def matrix_norm(row):
        def draw(data):
            return row.func, (data.draw(trd.distinct(data.draw(row.shapes), F64, lines=True)),)

        return draw

    rows += [(row.name, matrix_norm(row)) for row in trd.MATRIX_NORMS]

    def dynamic(func, domain):
        def draw(data):
            shape = data.draw(trd.FEW if domain is trd.SMALL else shapes())
            if domain == "distinct":
                x = data.draw(trd.distinct(shape, F64))
            else:
                x = data.draw(values(shape, domain, F64))
            return func, (x, data.draw(trd.axes(len(shape))), data.draw(st.booleans()))

        return draw

    rows += [(func.__name__, dynamic(func, domain)) for func, domain in trd.DYNAMIC]

    def moment(func):
        def draw(data):
            shape = data.draw(shapes())
            x = data.draw(trd.distinct(shape, F64))
            axis = data.draw(trd.axes(len(shape)))
            ddof = data.draw(st.sampled_from([0, 1] if trd.reduced_size(shape, axis) > 1 else [0]))
            return func, (x, axis, data.draw(st.booleans()), ddof)

        return draw

    rows += [(f.__name__, moment(f)) for f in (fred.var_dynamic, fred.std_dynamic)]
    rows.append(("method_std_dynamic", moment(fred.method_std_dynamic)))

    def cumulative(func, domain):
        def draw(data):
            shape = data.draw(shapes(1, max_side=3))
            x = data.draw(values(shape, domain, F64))
            rank = len(shape)
            return func, (x, data.draw(st.none() | st.integers(-rank, rank - 1)))

        return draw

    rows += [
        ("cumsum_dynamic", cumulative(fred.cumsum_dynamic, ANY)),
        ("cumprod_dynamic", cumulative(fred.cumprod_dynamic, trd.SMALL)),
        ("method_cumprod_dynamic", cumulative(fred.method_cumprod_dynamic, trd.SMALL)),
    ]

    def norm(data):
        shape = data.draw(shapes(1))
        rank = len(shape)
        kind = data.draw(st.sampled_from(["flat", "vector", "matrix"] if rank > 1 else ["vector"]))
        if kind == "flat":
            ord, axis, x = None, None, data.draw(trd.distinct(shape, F64))
        elif kind == "vector":
            ord = data.draw(st.sampled_from(trd.VECTOR_ORDS))
            axis = data.draw(st.integers(-rank, rank - 1) | st.just(None if rank == 1 else -1))
            x = data.draw(trd.distinct(shape, F64))
        else:
            ord = data.draw(st.sampled_from(trd.MATRIX_ORDS))
            first = data.draw(st.integers(0, rank - 2))
            axis = (first, -1) if ord in (1, -1, None, "fro") else (-1, first)
            x = data.draw(trd.distinct(shape, F64, lines=True))
        # (ord in a tuple: srcgrad refuses to differentiate with respect to it)
        return fred.norm_dynamic_boxed, (x, (ord,), axis, data.draw(st.booleans()))

    def trace(data):
        shape = data.draw(shapes(2, 3))
        x = data.draw(values(shape, ANY, F64))
        rank = len(shape)
        axis1, axis2 = data.draw(st.permutations(range(rank)))[:2]
        axis1 -= data.draw(st.sampled_from([0, rank]))
        return fred.trace_dynamic, (x, data.draw(st.integers(-2, 2)), axis1, axis2)

    def weighted(data):
        func, layout = data.draw(st.sampled_from(trd.WEIGHTED))
        sx, sw = layout(data.draw(shapes(2)))
        return func, (data.draw(values(sx, ANY, F64)), data.draw(values(sw, POSITIVE, F64)))

    def weighted_dynamic(data):
        shape = data.draw(shapes(1))
        rank = len(shape)
        axis = data.draw(st.none() | st.integers(-rank, rank - 1) | trd.axes(rank))
        sw = shape
        if axis is not None and data.draw(st.booleans()):
            sw = tuple(shape[a] for a in (axis if isinstance(axis, tuple) else (axis,)))
        x = data.draw(values(shape, ANY, F64))
        w = data.draw(values(sw, POSITIVE, F64))
        return fred.average_dynamic, (x, w, axis, data.draw(st.booleans()))

    def nan_skipping(func):
        def draw(data):
            x = data.draw(values(data.draw(shapes(1)), AWAY_FROM_0, F64))
            x[0] = np.abs(x[0])
            return func, (x,)

        return draw

    def with_zeros(func):
        def draw(data):
            shape = data.draw(shapes(1, max_side=3))
            x = data.draw(values(shape, trd.SMALL, F64))
            return func, (np.where(data.draw(hnp.arrays(bool, shape)), 0.0, x),)

        return draw

    rows += [
        ("norm_dynamic", norm),
        ("trace_dynamic", trace),
        ("average_weighted", weighted),
        ("average_dynamic", weighted_dynamic),
        ("nansum_of_masked", nan_skipping(fred.nansum_of_masked)),
        ("nanmean_of_masked", nan_skipping(fred.nanmean_of_masked)),
        *[
            (f"{f.__name__}-zeros", with_zeros(f))
            for f in (fred.prod_axis0, fred.prod_all, fred.cumprod_axis0, fred.cumprod_flat)
        ],
    ]

    # test_rules_shapes: arguments drawn per example
    rows += [(name, lambda data, case=case: case(data, F64)) for name, case in ts.CASES.items()]

    # test_rules_linalg
    rows += [
        (f"linalg {name}", lambda data, func=func, args=args: (func, args(data, F64)))
        for name, func, args in tl.ROWS
    ]

    # test_rules_numeric
    rows += [
        (f"numeric {name}", lambda data, func=func, args=args: (func, args(data, F64)))
        for name, func, args in tn.ROWS
    ]
    return rows


MULTI_UNSUPPORTED = {  # row name: why it cannot run on dask
    **dict.fromkeys(
        ["np.dot-0d-0d", "np.dot-0d-1d", "np.dot-2d-0d"],
        "dask.array.dot takes no 0-d operand (numpy multiplies by it)",
    ),
    **dict.fromkeys(
        ["np.clip(x, a_min=lo, a_max=2.0)", "np.clip(x, min=-1.0, max=hi)"],
        "dask.array.clip takes its bounds by position only",
    ),
    "ptp_dynamic": "dask.array.ptp has no keepdims",
    "np.column_stack": "dask.array has no column_stack",
    "np.take mode": "dask.array.take has no mode",
    **dict.fromkeys(["np.sort", "np.take_along_axis"], "dask.array has no sort or take_along_axis"),
    **dict.fromkeys(
        ["np.arange start and step", "np.arange stop"],
        "Python and numpy scalars only: no argument is a dask array",
    ),
    **dict.fromkeys(
        [f"linalg np.inner-{r}" for r in ("1d-1d", "2d-2d", "2d-1d", "1d-2d", "3d-2d", "0d-2d")],
        "dask.array has no inner",
    ),
    **dict.fromkeys(
        [f"linalg np.kron-{r}" for r in ("1d-1d", "2d-2d", "1d-3d")], "dask.array has no kron"
    ),
    **dict.fromkeys(
        [
            "linalg det",
            "linalg slogdet",
            "linalg slogdet-sign-times",
            "linalg slogdet-index",
            "linalg slogdet-.logabsdet",
            "linalg eigh-values",
            "linalg eigh-vectors",
            "linalg eigh-UPLO-index",
            "linalg eigh-attributes",
            "linalg pinv",
        ],
        "dask.array.linalg has no det, slogdet, eigh or pinv",
    ),
    **dict.fromkeys(
        ["linalg svd-values", "linalg svd-vectors", "linalg svd-square", "linalg svd-s-of-triple"],
        "dask.array.linalg.svd takes 2-d arrays chunked along one axis only (tall-and-skinny), "
        "and has no compute_uv",
    ),
    **dict.fromkeys(
        ["linalg qr-q", "linalg qr-r", "linalg qr-both"],
        "dask.array.linalg.qr takes 2-d arrays with one row of chunks only, and has no mode",
    ),
    "linalg .diagonal()": "a dask array has no diagonal method (the primal fails on dask)",
    "np.row_stack": "dask.array has no row_stack (vstack's old name)",
    "np.r_, np.c_": "dask.array has no r_ or c_ (the function itself fails on dask)",
    **dict.fromkeys(
        ["linalg qr-wide-q", "linalg qr-wide-r", "linalg qr-wide-both"],
        "dask.array.linalg.qr takes 2-d arrays with one row of chunks only, and has no mode",
    ),
    **dict.fromkeys(
        ["linalg norm-ord-2", "linalg norm-ord-2-transposed", "linalg norm-ord--2"],
        "dask.array.linalg.norm takes ord 2 and -2 for 2-d arrays only, and the derivative's "
        "dask.array.linalg.svd 2-d arrays chunked along one axis only",
    ),
    **{
        f"numeric {name}": f"dask.array has no {name.split('-')[0]}"
        for name in (
            "np.convolve",
            "np.convolve-same",
            "np.convolve-valid",
            "np.convolve-dynamic",
            "np.convolve-self",
            "np.trapezoid",
            "np.trapezoid-x",
            "np.trapezoid-x-axis0",
            "np.trapezoid-dx",
            "np.trapezoid-dynamic",
            "np.trapezoid-of-square",
            "np.interp",
            "np.interp-left-right",
            "np.interp-of-sine",
            "np.interp-period",
            "np.interp-period-negative",
            "np.interp-period-of-sine",
            "np.interp-period-dynamic",
            "np.correlate",
            "np.correlate-same",
            "np.correlate-full",
            "np.correlate-dynamic",
            "np.correlate-self",
            "np.polyval",
            "np.polyval-polyder",
            "np.polyder",
            "np.polyder-twice",
            "np.polyder-dynamic",
            "np.cross",
            "np.cross-axes",
            "np.cross-axis",
            "np.cross-dynamic",
            "np.cross-self",
        )
    },
    **dict.fromkeys(
        [
            "numeric np.gradient",
            "numeric np.gradient-spacing",
            "numeric np.gradient-axis",
            "numeric np.gradient-coordinates",
            "numeric np.gradient-all-axes",
            "numeric np.gradient-unpacked",
            "numeric np.gradient-dynamic",
        ],
        "dask.array.gradient needs chunks longer than edge_order + 1 along each axis it "
        "differentiates (these rows' arrays come in chunks of 2: the primal fails on dask)",
    ),
}


def _index_arrays(index) -> list:
    parts = index if isinstance(index, tuple) else (index,)
    return [p for p in parts if isinstance(p, (np.ndarray, list))]


def _slices_from_before_start(x, index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(
        isinstance(p, slice)
        and (p.step or 1) < 0
        and p.start is not None
        and p.start < -min(x.shape)
        for p in parts
    )


def _not_one_square_matrix(a) -> bool:
    return a.ndim != 2 or (a.shape[-1] > CHUNKS and a.shape[-1] % CHUNKS != 0)


def _negative_axes(axes) -> bool:
    flat = [] if isinstance(axes, int) else [a for part in axes for a in np.atleast_1d(part)]
    return any(a < 0 for a in flat)


def _differs_on_dask(func, args) -> bool:
    """Whether the function itself (no srcgrad) fails on dask arrays, or gives an output
    of another shape than on numpy."""
    try:
        return np.shape(func(*map(_lazy_arg, args))) != np.shape(func(*args))
    except Exception:
        return True


#: row name: (draws dask cannot run, why); the row runs on the other draws
MULTI_PARTLY = {
    **dict.fromkeys(
        ["reshape_dynamic", "method_reshape_dynamic"],
        (_differs_on_dask, "dask reshapes only by merging or splitting dimensions evenly"),
    ),
    "np.pad": (
        _differs_on_dask,
        "dask.array.pad takes no ((n,), ...) widths, and pads with mode='wrap' wider than "
        "the array to another shape than numpy",
    ),
    "norm_dynamic": (
        lambda f, a: a[2] is None and np.ndim(a[0]) > 2,
        "dask.array.linalg.norm with no axis takes 1-d and 2-d arrays only",
    ),
    **dict.fromkeys(
        ["average_weighted", "average_dynamic"],
        (
            lambda f, a: np.shape(a[1]) != np.shape(a[0]) and np.ndim(a[1]) != 1,
            "dask.array.average takes weights shaped like the array or 1-d only",
        ),
    ),
    "np.roll": (
        lambda f, a: isinstance(a[2], tuple) and not isinstance(a[1], tuple),
        "dask.array.roll takes one shift per axis (numpy repeats a single shift)",
    ),
    "np.repeat": (
        lambda f, a: not isinstance(a[1], int),
        "dask.array.repeat takes one integer count only",
    ),
    "np.hstack": (
        lambda f, a: any(np.ndim(v) == 0 for v in a),
        "dask.array.hstack cannot join 0-d arrays",
    ),
    "np.take": (
        lambda f, a: not isinstance(a[1], int) and np.ndim(a[1]) != 1,
        "dask.array.take takes an int or 1-d integer indices only",
    ),
    "fancy indexing and masks": (
        lambda f, a: any(np.ndim(i) != 1 for i in a[1:]) or len(a) > 2,
        "dask indexes with one 1-d integer array or 1-d mask (a 0-d or n-d index array, or "
        "two of them, fail; an n-d mask gives unknown chunk sizes)",
    ),
    "slices and indices as arguments": (
        lambda f, a: (
            any(np.ndim(i) != 1 for i in _index_arrays(a[1])) or _slices_from_before_start(*a)
        ),
        "dask indexes with 1-d integer arrays only, and a negative step from a start before "
        "the first element gives the whole axis on dask (numpy: none of it)",
    ),
    "np.linspace": (
        lambda f, a: any(np.ndim(v) > 0 for v in a) or f.__name__ == "linspace_options",
        "dask.array.linspace takes a 0-d start and stop only, and has no axis",
    ),
    "linalg np.tensordot-dynamic": (
        lambda f, a: _negative_axes(a[2]),
        "dask's tensordot with a negative axis of a 3-d operand computes a result of the "
        "wrong shape (the function itself is wrong on dask)",
    ),
    **dict.fromkeys(
        ["linalg inv", "linalg cholesky-symmetrised"],
        (
            lambda f, a: _not_one_square_matrix(a[0]),
            "dask.array.linalg takes one 2-d matrix with square chunks only",
        ),
    ),
    "linalg cholesky-gram": (
        lambda f, a: a[0].ndim != 2 or _not_one_square_matrix(a[0] @ a[0].T),
        "dask.array.linalg takes one 2-d matrix with square chunks only",
    ),
    "linalg solve": (
        lambda f, a: _not_one_square_matrix(a[0]) or a[1].ndim > 2,
        "dask.array.linalg takes one 2-d matrix with square chunks only (and a 1-d or 2-d b)",
    ),
}


def _multi_params():
    params = []
    for name, draw in _multi_rows():
        reason = MULTI_UNSUPPORTED.get(name)
        marks = [pytest.mark.skip(reason=f"not on dask: {reason}")] if reason else []
        params.append(pytest.param(name, draw, id=name, marks=marks))
    return params


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name, draw", _multi_params())
@settings(max_examples=2, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_multi_argument_rows_on_dask_match_numpy(name, draw, data):
    func, args = draw(data)
    if name in MULTI_PARTLY:  # draws dask cannot run (MULTI_PARTLY says why)
        assume(not MULTI_PARTLY[name][0](func, args))
    _check_on_dask(func, args, {"rtol": 1e-9, "atol": 1e-12})


# -- the control-flow corpus (corpus_control_flow.py), on dask ----------------------------
#
# Every point of every case with an array argument: its arrays as dask arrays (Python
# numbers stay numbers). The reverse-mode gradient, and the jvp (forward mode) with random
# tangents, are dask arrays that compute to numpy's. (A jvp runs the same forward-mode code
# as grad(mode="forward"), which takes one jvp per element: the CASES above check that.)
# A data-dependent ``if`` or ``while`` computes its condition (bool() of a dask array), in
# the derivative as in the function itself.


def _corpus_params():
    import corpus_control_flow as cf

    params = []
    for case in cf.CASES:
        for k, point in enumerate(case.points):
            if any(isinstance(_lazy_arg(a), da.Array) for a in point):
                name = f"{case.func.__name__}-{k}"
                params.append(pytest.param(case.func, point, case.wrt, id=name))
    return params


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("func, args, wrt", _corpus_params())
def test_control_flow_corpus_on_dask(func, args, wrt):
    tol = {"rtol": 1e-9, "atol": 1e-12}
    lazy = [_lazy_arg(a) for a in args]
    want = srcgrad.grad(func, wrt=wrt)(*args)
    assert_lazy_close(srcgrad.grad(func, wrt=wrt)(*lazy), want, **tol)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    _jvp_matches_numpy(func, wrt, args, lazy, positions, np.random.default_rng(3), tol)


def mixed_log_loss(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def test_numpy_arguments_beside_dask_ones_are_not_written_into():
    """``y`` a numpy array, ``X`` a dask one: ``z_bar`` starts as ``-level * y`` (numpy)
    and then takes a dask term, which numpy cannot add into its array in place; the
    code for dask keeps ``z_bar = z_bar + ...`` (the in-place passes run for numpy's
    arrays only)."""
    rng = np.random.default_rng(11)
    X, y, w = rng.standard_normal((40, 3)), (rng.random(40) < 0.5) * 1.0, rng.standard_normal(3)
    derivative = srcgrad.value_and_grad(mixed_log_loss, wrt=("w", "b"))
    want = derivative(w, 0.3, X, y)
    assert "z_bar += " in derivative.source  # (numpy's code: in place)
    got = derivative(w, 0.3, da.from_array(X, chunks=10), y)
    assert "z_bar += " not in derivative.source
    assert isinstance(got[1][0], da.Array)
    assert_lazy_close(got[0], want[0], **TOL)
    assert_lazy_close(got[1], want[1], **TOL)
