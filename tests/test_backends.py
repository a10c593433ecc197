"""Backends: numpy, and cupy on a CUDA GPU through module rebinding.

The cupy tests skip, saying why, when cupy is not installed or no GPU is
present; where both are, they run grad, jvp and vjp on cupy arrays and
compare with the same computation in numpy.
"""

import numpy as np
import pytest
from gpu import cupy_or_skip

import srcgrad
from srcgrad.backends import NUMPY, Backend, backend_of

# -- functions under test ------------------------------------------------------------------


def loss(w, x, y):
    p = 1 / (1 + np.exp(-(x @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def elementwise(x, y):
    return np.tanh(x) * np.sqrt(y * y + 1.0) + np.maximum(x, 0.0)


def broadcast_sum(x, b):
    return np.sum(np.sin(x) * b)


def reduce_mean(x):
    return np.mean(np.exp(x) * x, axis=0).sum()


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture
def cp():
    """The cupy module, or skip: no cupy, or no CUDA GPU."""
    return cupy_or_skip()


def loss_data(seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(4).astype(dtype)
    x = rng.standard_normal((8, 4)).astype(dtype)
    y = (rng.random(8) > 0.5).astype(dtype)
    return w, x, y


def to_gpu(cp, arrays):
    return [cp.asarray(a) for a in arrays]


def assert_close_on_gpu(cp, got, want, rtol=1e-10, atol=1e-12):
    assert isinstance(got, cp.ndarray), type(got)
    assert got.shape == np.shape(want)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(cp.asnumpy(got), want, rtol=rtol, atol=atol)


# -- numpy ---------------------------------------------------------------------------------


def test_backend_of_numpy_arguments_is_numpy():
    backend = backend_of([np.ones(3), np.ones((2, 2), dtype=np.float32), 2.0, 3], list("abcd"))
    assert backend is NUMPY
    assert backend.name == "numpy" and backend.module is np
    assert backend_of([1.5, np.float64(2.0)], ["a", "b"]) is NUMPY
    assert backend_of([], []) is NUMPY


def test_numpy_backend_leaves_values_alone():
    for value in (np, np.sin, np.sum, 2.0, loss):
        assert NUMPY.rebind(value) is value
    assert NUMPY.is_array(np.ones(2)) and not NUMPY.is_array(2.0)


def test_numpy_call_generates_numpy_code():
    d = srcgrad.grad(loss)
    d(*loss_data())
    assert "import numpy as np" in d.source
    assert "cupy" not in d.source


# -- cupy ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grad_on_cupy_matches_numpy(cp, dtype):
    args = loss_data(dtype=dtype)
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-4, "atol": 1e-6}
    want = srcgrad.grad(loss, wrt=(0, 1))(*args)
    got = srcgrad.grad(loss, wrt=(0, 1))(*to_gpu(cp, args))
    for g, w in zip(got, want):
        assert_close_on_gpu(cp, g, w, **tol)


def test_generated_code_for_cupy_uses_cupy(cp):
    d = srcgrad.grad(loss)
    d(*to_gpu(cp, loss_data()))
    assert "cupy" in d.source
    assert "import numpy" not in d.source


def test_value_and_grad_on_cupy_matches_numpy(cp):
    args = loss_data(seed=1)
    value, grad = srcgrad.value_and_grad(loss)(*args)
    gpu_value, gpu_grad = srcgrad.value_and_grad(loss)(*to_gpu(cp, args))
    assert float(gpu_value) == pytest.approx(float(value), rel=1e-10)
    assert_close_on_gpu(cp, gpu_grad, grad)


def test_forward_mode_grad_on_cupy_matches_numpy(cp):
    args = loss_data(seed=2)
    want = srcgrad.grad(loss, mode="forward")(*args)
    got = srcgrad.grad(loss, mode="forward")(*to_gpu(cp, args))
    assert_close_on_gpu(cp, got, want)


def test_jvp_on_cupy_matches_numpy(cp):
    rng = np.random.default_rng(3)
    x, y, tx, ty = (rng.standard_normal((3, 5)) for _ in range(4))
    value, tangent = srcgrad.jvp(elementwise, wrt=(0, 1))(x, y, tx, ty)
    gpu_value, gpu_tangent = srcgrad.jvp(elementwise, wrt=(0, 1))(*to_gpu(cp, (x, y, tx, ty)))
    assert_close_on_gpu(cp, gpu_value, value)
    assert_close_on_gpu(cp, gpu_tangent, tangent)


def test_vjp_on_cupy_matches_numpy(cp):
    rng = np.random.default_rng(4)
    x, y, dout = (rng.standard_normal((3, 5)) for _ in range(3))
    want = srcgrad.vjp(elementwise, wrt=(0, 1))(x, y, dout)
    got = srcgrad.vjp(elementwise, wrt=(0, 1))(*to_gpu(cp, (x, y, dout)))
    for g, w in zip(got, want):
        assert_close_on_gpu(cp, g, w)


def test_reductions_and_broadcasting_on_cupy(cp):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3))
    want = srcgrad.grad(reduce_mean)(x)
    assert_close_on_gpu(cp, srcgrad.grad(reduce_mean)(cp.asarray(x)), want)
    b = rng.standard_normal(3)
    want = srcgrad.grad(broadcast_sum, wrt=(0, 1))(x, b)
    got = srcgrad.grad(broadcast_sum, wrt=(0, 1))(cp.asarray(x), cp.asarray(b))
    for g, w in zip(got, want):
        assert_close_on_gpu(cp, g, w)


def test_cupy_and_numpy_code_are_cached_apart(cp):
    args = loss_data(seed=6)
    d = srcgrad.grad(loss)
    numpy_grad = d(*args)
    gpu_grad = d(*to_gpu(cp, args))
    again = d(*args)
    assert isinstance(numpy_grad, np.ndarray) and isinstance(again, np.ndarray)
    assert isinstance(gpu_grad, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(gpu_grad), numpy_grad, rtol=1e-10)


def test_backend_of_cupy_arguments_is_cupy(cp):
    backend = backend_of([cp.ones(3), 2.0], ["x", "y"])
    assert isinstance(backend, Backend)
    assert backend.name == "cupy" and backend.module is cp
    assert backend.rebind(np) is cp
    assert backend.rebind(np.exp) is cp.exp


def test_mixing_numpy_and_cupy_arrays_is_a_type_error(cp):
    w, x, y = loss_data()
    with pytest.raises(TypeError) as info:
        srcgrad.grad(loss)(cp.asarray(w), x, cp.asarray(y))
    text = str(info.value)
    assert "cupy" in text and "numpy" in text
    assert "'w'" in text and "'x'" in text
    with pytest.raises(TypeError):
        srcgrad.jvp(loss)(w, cp.asarray(x), y, w)


def test_callers_cupy_arrays_are_not_modified(cp):
    args = to_gpu(cp, loss_data(seed=7))
    saved = [a.copy() for a in args]
    srcgrad.grad(loss, wrt=(0, 1, 2))(*args)
    srcgrad.jvp(loss)(*args, cp.ones(4))
    for a, s in zip(args, saved):
        assert bool(cp.all(a == s))
