"""The dask backend: generated code compiled against dask.array by module rebinding.

Gradients of functions of dask arrays are dask arrays (lazy graphs): each test checks
the type before it calls ``.compute()``, and compares the computed values with the
same computation on numpy arrays. One test runs a gradient on a dask.distributed
cluster started inside the test (loopback only, shut down at the end). The rule
table's one-argument rows (``test_rules*.py``) run on dask too, in float64: the
vjp and the jvp on dask match numpy's; rows dask.array cannot run are skipped, saying why.
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
    "np.ptp(x, axis=(0, -1), keepdims=True)": "dask.array.ptp has no keepdims",
    "np.linalg.norm(x)": "dask.array.linalg.norm with no axis takes 1-d and 2-d arrays only",
    "np.pad(x, 3, mode='wrap')": "dask pads with mode='wrap' to a different shape than numpy",
    "np.take(x, [[1, 0], [1, 1]], axis=1)": "dask indexes with 1-d integer arrays only",
    **dict.fromkeys(
        [
            "np.trace(x)",
            "np.trace(x, 1)",
            "np.trace(x, offset=-1, axis1=2, axis2=0)",
            "x.trace()",
            "x.trace(0, -1, 1)",
        ],
        "the adjoint assigns to a diagonal (two integer arrays): dask's __setitem__ cannot",
    ),
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
