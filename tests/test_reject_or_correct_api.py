"""Reject or be correct, at the API: issue 16, families 6, 8, 11, 12, 14 and 17.

Each test attacks one mechanism from several sides, and expects either the right
number from an oracle srcgrad did not produce (autograd, run on the same source with
``np`` rebound to ``autograd.numpy``; closed forms; finite differences) or a clear
error naming what is wrong and what to write instead.

- 6: derivatives of derivatives with respect to every argument, cotangents and
  tangents included (the outer ``wrt`` names the inner code's parameters by position);
- 8: arguments of array types with other semantics (np.matrix, masked arrays, other
  ndarray subclasses and array libraries) are refused, wrt or not;
- 11: recursion over argument structures that never repeat ends; derivatives that run
  the function once per element refuse random number generators and check each pass;
- 12: iterating a dict iterates its keys, in both modes;
- 14: results never share memory with the caller's arrays or with each other, and no
  derivative runs the function on the caller's arrays;
- 17: messages for a forgotten tangent, a tuple without has_aux, a bound method or a
  partial, errors inside generated code of higher order.
"""

from __future__ import annotations

import fractions
import functools
import inspect
import pathlib
import re

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd import make_jvp, make_vjp

import srcgrad
from srcgrad.compiler.transform.callees import SPECIALIZATIONS
from srcgrad.passes import FORWARD_LANES


def autograd_version(func, *callees):
    """``func`` run by autograd: its own source (and its ``callees``'), with ``np``
    rebound to autograd.numpy."""
    namespace = {**func.__globals__, "np": anp}
    for f in (*callees, func):
        exec(compile(inspect.getsource(f), inspect.getsourcefile(f), "exec"), namespace)
    return namespace[func.__name__]


def assert_close(got, want, tol=1e-9):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# -- 6: derivatives of derivatives with respect to every argument ------------------------------
def scalar_out(x, y):
    return np.sum(np.sin(x) * y * x)


def array_out(x, y):
    return np.sin(x) * y * x


def floats_out(a, b):
    return a**3 * b + np.sin(a * b)


X = np.array([1.0, 1.5, 2.0])
Y = np.array([0.5, 2.0, -1.0])
POINTS = {scalar_out: (X, Y), array_out: (X, Y), floats_out: (0.7, -1.3)}


def inner_pair(kind, func, k):
    """An inner derivative, its autograd twin (tangent output for a jvp) and its arguments."""
    f_ag = autograd_version(func)
    args = POINTS[func]
    out = f_ag(*args)
    if kind == "grad":
        return srcgrad.grad(func, wrt=k), autograd.grad(f_ag, k), args
    if kind == "vjp":
        dout = np.linspace(0.3, -0.4, np.size(out)).reshape(np.shape(out))
        dout = float(dout) if np.ndim(out) == 0 else dout
        twin = lambda *a: make_vjp(f_ag, k)(*a[:-1])[0](a[-1])  # noqa: E731
        return srcgrad.vjp(func, wrt=k), twin, (*args, dout)
    tangent = np.array([1.0, 2.0, -1.0]) if np.ndim(args[k]) else 0.9
    twin = lambda *a: make_jvp(f_ag, k)(*a[:-1])(a[-1])[1]  # noqa: E731
    return srcgrad.jvp(func, wrt=k), twin, (*args, tangent)


OUTERS = ["jvp", "grad", "grad_forward", "value_and_grad", "vjp", "jacobian_reverse"]
OUTERS += ["jacobian_forward", "hessian", "hvp"]


def _higher_order_cases():
    for func in POINTS:
        kinds = ["vjp", "jvp"] + (["grad"] if func is not array_out else [])
        for kind in kinds:
            for k in (0, 1):
                count = 2 + (kind != "grad")
                for j in range(count):
                    for outer in OUTERS:
                        name = f"{outer}-of-{kind}({func.__name__},wrt={k})-wrt={j}"
                        yield pytest.param(outer, kind, func, k, j, id=name)


def _refusal(outer, kind, func, j, args, twin):
    """The error a combination is refused with (type, message fragment), or None."""
    reverse_inner = kind in ("grad", "vjp")
    # (reverse mode over a gradient or a vjp is reverse mode over the function's
    # forward-mode code, with respect to the function's arguments, not a vjp's cotangent)
    if outer in ("vjp", "jacobian_reverse") and kind == "vjp" and j == 2:
        return TypeError, "not its cotangent"
    scalar = np.ndim(twin(*args)) == 0
    if outer in ("grad", "grad_forward", "value_and_grad", "hvp") and not scalar:
        return (TypeError, ValueError), "scalar"
    if outer == "hessian" and not scalar and np.ndim(args[j]) != 0:
        return (TypeError, ValueError), "scalar"  # (of a scalar wrt: a Jacobian's Jacobian)
    if outer in ("hessian", "hvp") and reverse_inner and np.ndim(args[j]) != 0:
        return TypeError, "one scalar argument"  # (forward mode over forward-mode code)
    return None


@pytest.mark.parametrize("outer, kind, func, k, j", list(_higher_order_cases()))
def test_derivatives_of_derivatives_with_respect_to_every_argument(outer, kind, func, k, j):
    inner, twin, args = inner_pair(kind, func, k)
    refused = _refusal(outer, kind, func, j, args, twin)
    t = np.array([0.4, -1.0, 2.0]) if np.ndim(args[j]) else 1.3

    def run():
        if outer == "jvp":
            _, tangent = srcgrad.jvp(inner, wrt=j)(*args, t)
            return tangent[1] if kind == "jvp" else tangent, make_jvp(twin, j)(*args)(t)[1]
        if outer in ("grad", "grad_forward"):
            mode = "forward" if outer == "grad_forward" else "reverse"
            return srcgrad.grad(inner, wrt=j, mode=mode)(*args), autograd.grad(twin, j)(*args)
        if outer == "value_and_grad":
            value, g = srcgrad.value_and_grad(inner, wrt=j)(*args)
            assert_close(value, twin(*args))  # (of a jvp: its tangent, as differentiated)
            return g, autograd.grad(twin, j)(*args)
        if outer == "vjp":
            cotangent = np.ones_like(twin(*args))
            got = srcgrad.vjp(inner, wrt=j)(*args, cotangent)
            return got, make_vjp(twin, j)(*args)[0](cotangent)
        if outer.startswith("jacobian"):
            mode = outer.split("_")[1]
            got = srcgrad.jacobian(inner, wrt=j, mode=mode)(*args)
            return got, autograd.jacobian(twin, j)(*args)
        if outer == "hessian":
            return srcgrad.hessian(inner, wrt=j)(*args), autograd.hessian(twin, j)(*args)
        got = srcgrad.hvp(inner, wrt=j)(*args, t)
        return got, make_jvp(autograd.grad(twin, j), j)(*args)(t)[1]

    if refused is None:
        got, want = run()
        assert_close(got, want)
    else:
        error, fragment = refused
        with pytest.raises(error, match=re.escape(fragment)):
            run()


def of_a_pytree(p, s):
    return np.sum(np.sin(p["a"]) * p["b"]) * s


def test_derivatives_of_derivatives_with_respect_to_several_arguments_and_pytrees():
    d, t1, t2 = np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -1.0]), np.array([0.5, 0.1, 2])
    f_ag = autograd_version(array_out)
    twin = lambda x, y, d: make_vjp(f_ag, 0)(x, y)[0](d)  # noqa: E731
    _, tangent = srcgrad.jvp(srcgrad.vjp(array_out), wrt=(0, 2))(X, Y, d, t1, t2)
    assert_close(tangent, make_jvp(twin, 0)(X, Y, d)(t1)[1] + make_jvp(twin, 2)(X, Y, d)(t2)[1])
    g = srcgrad.grad(srcgrad.jvp(scalar_out), wrt=(0, 2))(X, Y, t1)
    tangent_ag = lambda x, y, t: make_jvp(autograd_version(scalar_out), 0)(x, y)(t)[1]  # noqa: E731
    assert_close(g[0], autograd.grad(tangent_ag, 0)(X, Y, t1))
    assert_close(g[1], autograd.grad(tangent_ag, 2)(X, Y, t1))
    # a pytree argument, and the cotangent of a function of one
    p = {"a": np.array([0.3, 1.2]), "b": np.array([2.0, -1.0])}
    v = srcgrad.vjp(of_a_pytree)
    _, by_dout = srcgrad.jvp(v, wrt=2)(p, 1.5, 2.0, 1.0)
    _, by_p = srcgrad.jvp(v, wrt=0)(p, 1.5, 2.0, {"a": np.ones(2), "b": np.zeros(2)})
    pt_ag = autograd_version(of_a_pytree)
    twin_p = lambda p, s, d: make_vjp(pt_ag, 0)(p, s)[0](d)  # noqa: E731
    want_dout = make_jvp(twin_p, 2)(p, 1.5, 2.0)(1.0)[1]
    want_p = make_jvp(twin_p, 0)(p, 1.5, 2.0)({"a": np.ones(2), "b": np.zeros(2)})[1]
    for key in "ab":
        assert_close(by_dout[key], want_dout[key])
        assert_close(by_p[key], want_p[key])


def sin_times_x(x):
    return np.sin(x) * x


def test_tangent_of_the_cotangent_reads_the_cotangent():
    # issue 16's reproducer: jvp of a vjp with respect to the cotangent gave zeros
    x, d, d_dot = X, np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -1.0])
    value, tangent = srcgrad.jvp(srcgrad.vjp(sin_times_x), wrt=1)(x, d, d_dot)
    assert_close(value, d * (np.sin(x) + x * np.cos(x)))
    assert_close(tangent, d_dot * (np.sin(x) + x * np.cos(x)))
    by_name = srcgrad.jvp(srcgrad.vjp(sin_times_x), wrt="dout")(x, d, d_dot)
    assert_close(by_name[1], tangent)


def test_a_jvp_of_a_jvp_of_a_jvp_names_its_tangents_afresh():
    d3 = srcgrad.jvp(srcgrad.jvp(srcgrad.jvp(sin_times_x)))
    # the arguments of what it differentiates (then its own tangent, as any jvp's)
    assert list(inspect.signature(d3).parameters) == ["x", "x_dot", "x_dot_1"]
    t1, t2, t3 = np.array([1.0, 2.0, -1.0]), np.array([0.5, 0.5, 2.0]), np.array([1.0, -3.0, 1])
    nested = d3(X, t1, t2, t3)
    third = -3 * np.sin(X) - X * np.cos(X)  # (x sin x)'''
    assert_close(nested[1][1][1], third * t1 * t2 * t3)
    f_ag = autograd_version(sin_times_x)
    d1 = autograd.elementwise_grad(f_ag)
    assert_close(third, autograd.elementwise_grad(autograd.elementwise_grad(d1))(X))


def adds(x, y):
    return np.add(x, y)


def test_the_tangent_of_a_folded_tuple_of_gradients_is_a_tuple_of_zeros():
    # the gradient of x + y folds to the constant (1.0, 1.0); its tangent was
    # np.zeros_like((1.0, 1.0)), one array of two zeros, not a zero per gradient
    g = srcgrad.grad(adds, wrt=(0, 1))
    x, y = np.array(0.5), np.array(-1.0)
    value, tangent = srcgrad.jvp(g, wrt=(0, 1))(x, y, np.array(1.0), np.array(2.0))
    assert isinstance(tangent, tuple) and len(value) == len(tangent) == 2
    assert all(np.shape(t) == () and t == 0.0 for t in tangent)
    hv = srcgrad.hvp(adds, wrt=(0, 1))(x, y, np.array(1.0), np.array(2.0))
    assert (
        isinstance(hv, tuple) and len(hv) == 2 and all(np.shape(t) == () and t == 0.0 for t in hv)
    )


def with_a_dout_parameter(x, dout):
    return np.sum(np.sin(x) * dout)


def test_the_cotangent_of_a_function_with_a_dout_parameter_has_a_name_of_its_own():
    v = srcgrad.vjp(with_a_dout_parameter)
    outer = srcgrad.jvp(v, wrt=2)
    assert list(inspect.signature(outer).parameters) == ["x", "dout", "dout_1"]
    dout = np.array([1.0, -2.0, 0.5])
    _, tangent = outer(X, dout, 0.7, 2.0)
    assert_close(tangent, 2.0 * np.cos(X) * dout)
    tangent_grad = srcgrad.grad(srcgrad.jvp(with_a_dout_parameter, wrt=1), wrt=2)
    assert_close(tangent_grad(X, dout, Y), np.sin(X))


def test_calling_a_derivative_inside_a_differentiated_function_says_what_to_write():
    vj = srcgrad.vjp(sin_times_x)
    d = np.array([0.3, -0.2, 0.5])
    with pytest.raises(srcgrad.NoDerivativeError, match="a derivative srcgrad made") as info:
        srcgrad.grad(lambda x, d: np.sum(vj(x, d)))(X, d)
    assert "test_reject_or_correct_api.py" in str(info.value)
    assert "srcgrad.jvp(d)" in str(info.value)
    jac = srcgrad.jacobian(vj, mode="forward")(X, d)  # what the message suggests
    want = autograd.jacobian(lambda x: make_vjp(autograd_version(sin_times_x))(x)[0](d))(X)
    assert_close(jac, want)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_the_jacobian_of_a_jvp_is_that_of_its_tangent(mode):
    inner = srcgrad.jvp(array_out)
    t = np.array([1.0, 2.0, -1.0])
    got = srcgrad.jacobian(inner, wrt=1, mode=mode)(X, Y, t)
    f_ag = autograd_version(array_out)
    want = autograd.jacobian(lambda y: make_jvp(f_ag, 0)(X, y)(t)[1])(Y)
    assert_close(got, want)


def returns_two(x):
    return np.sin(x), np.cos(x)


def test_the_reverse_jacobian_of_a_function_returning_a_tuple_is_refused():
    with pytest.raises(TypeError, match="returning one array; 'returns_two' returns a tuple"):
        srcgrad.jacobian(returns_two)(X)


def returns_two_of_two(x, y):
    return np.sin(x) * y, np.sum(x * x) * y


def test_the_forward_jacobian_of_a_function_returning_a_tuple_has_one_for_each():
    """One Jacobian for each output (against autograd), each a tuple for a tuple wrt."""
    y = np.array([0.5, -1.0, 2.0])
    (a_x, a_y), (b_x, b_y) = srcgrad.jacobian(returns_two_of_two, wrt=(0, 1), mode="forward")(X, y)
    f_ag = autograd_version(returns_two_of_two)
    for got, k, p in ((a_x, 0, 0), (a_y, 0, 1), (b_x, 1, 0), (b_y, 1, 1)):
        want = autograd.jacobian(lambda *a, k=k: f_ag(*a)[k], p)(X, y)
        assert_close(got, want)
    single = srcgrad.jacobian(returns_two, mode="forward")(X)
    assert isinstance(single, tuple) and len(single) == 2
    assert_close(single[0], np.diag(np.cos(X)))
    assert_close(single[1], np.diag(-np.sin(X)))


def nested_returns(x):
    return (np.sin(x), np.cos(x)), x


def test_the_forward_jacobian_of_nested_outputs_is_refused():
    with pytest.raises(TypeError, match="or a tuple of arrays"):
        srcgrad.jacobian(nested_returns, mode="forward")(X)


def test_hessian_with_a_tuple_wrt_gives_its_blocks():
    """H[i][j] is d/d(arg j) of the gradient for arg i (jax.hessian's layout), against
    autograd's Hessian of the function of both arguments at once."""
    y = np.array([0.5, -1.0, 2.0])
    H = srcgrad.hessian(weighted_pair, wrt=(0, 1))(X, y)
    f_ag = autograd_version(weighted_pair)
    both = autograd.hessian(lambda v: f_ag(v[:3], v[3:]))(np.concatenate([X, y]))
    for i, rows in enumerate((slice(0, 3), slice(3, 6))):
        for j, cols in enumerate((slice(0, 3), slice(3, 6))):
            assert_close(H[i][j], both[rows, cols])


def weighted_pair(x, y):
    return np.sum(np.sin(x) * y * y) + np.sum(x * x * x)


# -- 8: arguments of other array types ----------------------------------------------------------
def weighted(x, w):
    return np.sum(x * w * x)


class Subclass(np.ndarray):
    pass


class LooksLikeAnArray:
    """Another library's array: it converts to numpy, and has a shape and a dtype."""

    shape, dtype = (3,), np.dtype(float)

    def __array__(self, dtype=None, copy=None):
        return np.array([1.0, 2.0, 3.0])


class FromCupy:
    """A type whose module is cupy's (cupy is not installed here)."""


FromCupy.__module__ = "cupy._core.core"


class Squares:
    """An object whose arithmetic is its own: ``x * Squares()`` is ``x ** 2``."""

    def __rmul__(self, x):
        return x**2


OTHER_TYPES = {
    "matrix": (np.matrix([[1.0, 2.0, 3.0]]), "numpy.matrix", "matrix products"),
    "masked": (np.ma.masked_array([1.0, 2.0, 3.0], [0, 1, 0]), "MaskedArray", "masked"),
    "subclass": (np.arange(3.0).view(Subclass), "Subclass", "ndarray subclass"),
    "array-like": (LooksLikeAnArray(), "LooksLikeAnArray", "semantics of its own"),
    "fraction": (fractions.Fraction(1, 3), "Fraction", "float("),
    "cupy-without-cupy": (FromCupy(), "FromCupy", "cannot be imported"),
    "own-arithmetic": (Squares(), "Squares", "defines __rmul__"),
}


def _transforms():
    def jac(f, wrt):
        return srcgrad.jacobian(f, wrt=wrt)

    return {
        "grad": lambda f, wrt: srcgrad.grad(f, wrt=wrt),
        "grad-forward": lambda f, wrt: srcgrad.grad(f, wrt=wrt, mode="forward"),
        "value_and_grad": lambda f, wrt: srcgrad.value_and_grad(f, wrt=wrt),
        "jacobian": jac,
        "hessian": lambda f, wrt: srcgrad.hessian(f, wrt=wrt),
    }


@pytest.mark.parametrize("transform", list(_transforms()))
@pytest.mark.parametrize("which", list(OTHER_TYPES))
@pytest.mark.parametrize("position", [0, 1])
def test_arguments_of_other_array_types_are_refused_wrt_or_not(transform, which, position):
    value, type_name, why = OTHER_TYPES[which]
    args = [np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 2.0])]
    args[position] = value
    name = ["x", "w"][position]
    derivative = _transforms()[transform](weighted, 0)
    with pytest.raises(TypeError, match=re.escape(f"argument {name!r}")) as info:
        derivative(*args)
    assert type_name in str(info.value) and why in str(info.value)


@pytest.mark.parametrize("which", list(OTHER_TYPES))
def test_tangents_and_cotangents_of_other_array_types_are_refused(which):
    value = OTHER_TYPES[which][0]
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="the tangent for 'x'"):
        srcgrad.jvp(array_out)(x, x, value)
    with pytest.raises(TypeError, match="the cotangent dout"):
        srcgrad.vjp(array_out)(x, x, value)
    with pytest.raises(TypeError, match=r"argument \"y\['w'\]\""):
        srcgrad.grad(scalar_out)(x, {"w": value})


def with_options(x, mode, rng, scale, flag, nothing, callback):
    y = x * scale if flag else x
    if mode == "double":
        y = y * 2.0
    return np.sum(y * y)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_options_that_are_not_arrays_still_pass(mode):
    # strings, None, a generator, numbers of every kind, a callable, a memmap: options
    rng = np.random.default_rng(0)
    x = np.array([1.0, -2.0])
    for scale in (3, 3.0, np.float32(3.0), True, np.int64(3)):
        g = srcgrad.grad(with_options, mode=mode)(x, "double", rng, scale, True, None, abs)
        assert_close(g, 8 * float(scale) ** 2 * x)
    for option in (b"bytes", {"a"}, frozenset(), range(3), pathlib.Path("."), np, inspect):
        g = srcgrad.grad(with_options, mode=mode)(x, "double", rng, 1.0, False, option, abs)
        assert_close(g, 8 * x)


def test_a_memmap_is_an_ndarray(tmp_path):
    m = np.memmap(tmp_path / "x.dat", dtype=float, mode="w+", shape=(3,))
    m[:] = [1.0, 2.0, 3.0]
    assert_close(srcgrad.grad(weighted)(m, np.ones(3)), 2 * np.array([1.0, 2.0, 3.0]))
    assert_close(srcgrad.grad(weighted)(np.ones(3), m), 2 * np.array([1.0, 2.0, 3.0]))


# -- 14: results share memory with nothing the caller holds, nor with each other ----------------
def add_two(x, y):
    return np.sum(x + y)


def transposed(x):
    return x.T


def identity(x):
    return x


def first_row(x):
    return x[0]


def _shares(a, b):
    return np.shares_memory(np.asarray(a), np.asarray(b))


def test_two_gradients_are_two_arrays():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    for mode in ("reverse", "forward"):
        gx, gy = srcgrad.grad(add_two, (0, 1), mode=mode)(x, y)
        assert gx is not gy and not _shares(gx, gy)
        gx[0] = 99.0
        assert gy[0] == 1.0


@pytest.mark.parametrize("func", [transposed, identity, first_row])
def test_jvp_and_vjp_results_are_not_views_of_the_caller_s_arrays(func):
    x = np.arange(6.0).reshape(2, 3)
    tangent = np.ones((2, 3))
    value, out_tangent = srcgrad.jvp(func)(x, tangent)
    for result in (value, out_tangent):
        assert not _shares(result, x) and not _shares(result, tangent)
    assert not _shares(value, out_tangent)
    cotangent = np.ones_like(func(x))
    g = srcgrad.vjp(func)(x, cotangent)
    assert not _shares(g, cotangent) and not _shares(g, x)
    g[...] = -1.0
    assert (cotangent == 1.0).all()


def writes_into_its_argument(x):
    x[0] = 5.0
    return x * 2.0


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_never_runs_the_function_on_the_caller_s_arrays(mode):
    """The function writes into its argument: its derivative works on its own copy (the
    Jacobian of x -> 2 * (x with x[0] = 5), and the caller's array stays as it was."""
    a = np.array([1.0, 2.0])
    jacobian = srcgrad.jacobian(writes_into_its_argument, mode=mode)(a)
    np.testing.assert_array_equal(jacobian, [[0.0, 0.0], [0.0, 2.0]])
    assert (a == [1.0, 2.0]).all()


def pick(xs, y):
    return np.sum(xs[0] * y)


def test_pytree_gradients_share_memory_with_no_input():
    xs = [np.array([1.0, 2.0]), np.array([3.0])]
    y = np.array([5.0, 6.0])
    g = srcgrad.grad(pick)(xs, y)
    assert not any(_shares(leaf, y) for leaf in g)
    gy = srcgrad.grad(pick, wrt=1)(xs, y)
    assert not _shares(gy, xs[0])


# -- 17: messages -------------------------------------------------------------------------------
def pair(x):
    return np.sum(x), np.sum(x**2)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_tuple_returned_without_has_aux_suggests_has_aux(mode):
    with pytest.raises(ValueError, match="has_aux=True") as info:
        srcgrad.grad(pair, mode=mode)(X)
    assert "tuple" in str(info.value) and "shape (2,)" not in str(info.value)
    (g, aux) = srcgrad.grad(pair, has_aux=True, mode=mode)(X)
    assert_close(g, np.ones(3))


def two_args(x, y):
    return np.sum(x * y)


def test_a_forgotten_tangent_says_how_jvp_is_called():
    with pytest.raises(TypeError, match=r"takes the arguments of two_args \(x, y\), then one") as e:
        srcgrad.jvp(two_args)(X, Y)
    assert "got 2" in str(e.value) and "missing" not in str(e.value)
    with pytest.raises(TypeError, match="then the cotangent dout"):
        srcgrad.vjp(two_args)(X)


class Model:
    def __init__(self) -> None:
        self.w = np.array([2.0, 3.0, 4.0])

    def loss(self, x):
        return np.sum(self.w * x**2)

    def __call__(self, x):
        return np.sum(self.w * x**2)


def model_loss(x):
    return Model.loss(MODEL, x)


MODEL = Model()


@pytest.mark.parametrize(
    "func, fragment",
    [
        (MODEL.loss, "bound method Model.loss of a Model object"),
        (MODEL, "an instance of Model, a callable object"),
        (functools.partial(two_args, y=Y), "functools.partial of two_args"),
        (np.sin, "no Python source"),
    ],
)
def test_callables_that_are_not_functions_are_named_for_what_they_are(func, fragment):
    for make in (srcgrad.grad, srcgrad.jvp, srcgrad.hessian, srcgrad.jacobian, srcgrad.hvp):
        with pytest.raises(TypeError, match=re.escape(fragment)) as info:
            make(func)
        assert "builtin" not in str(info.value) or func is np.sin


def test_what_the_bound_method_message_suggests_works():
    assert_close(srcgrad.grad(model_loss)(X), 2 * MODEL.w * X)


# -- 11: functions that give other values each time they run -------------------------------------
def noisy(x, rng):
    return np.sum(x * x) + rng.normal()


def noisy_global(x):
    return np.sum(x * x * np.random.normal())


def unseeded(x):
    rng = np.random.default_rng()
    return np.sum(x * x) * rng.uniform(1.0, 2.0)


def seeded(x):
    rng = np.random.default_rng(0)
    return np.sum(x * x) * rng.uniform(1.0, 2.0)


def _many_pass_derivatives():
    return {
        "grad-forward": lambda f: srcgrad.grad(f, mode="forward"),
        "value_and_grad-forward": lambda f: srcgrad.value_and_grad(f, mode="forward"),
        "jacobian-forward": lambda f: srcgrad.jacobian(f, mode="forward"),
        "hessian": srcgrad.hessian,
    }


def evaluate(node, theta):
    """A small expression tree of nested tuples, walked recursively over ``theta``."""
    op = node[0]
    if op == "c":
        return theta[node[1]]
    if op == "x":
        return np.sin(theta[node[1]])
    if op == "add":
        return evaluate(node[1], theta) + evaluate(node[2], theta)
    return evaluate(node[1], theta) * evaluate(node[2], theta)


def tree_value(theta, tree):
    return evaluate(tree, theta)


def grown(node, depth, theta):
    # each call passes a deeper tree: a new argument structure every time
    if depth == 0:
        return evaluate(node, theta)
    return grown(("mul", node, ("add", ("c", depth % 3), ("x", 0))), depth - 1, theta)


TREE = ("add", ("mul", ("c", 0), ("x", 1)), ("add", ("c", 2), ("mul", ("x", 0), ("c", 0))))
THETA = np.array([0.7, 1.3, -0.4])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_recursive_tree_evaluator_is_differentiated(mode):
    # issue 16: this hung, its memory growing (ranks of node[1] of a number: -1, -2, ...)
    want = autograd.grad(autograd_version(tree_value, evaluate))(THETA, TREE)
    assert_close(srcgrad.grad(tree_value, mode=mode)(THETA, TREE), want)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("depth", [3, 20])
def test_a_recursion_over_ever_new_structures_ends(mode, depth):
    # past callees.SPECIALIZATIONS structures, the code is for arguments of any structure
    f_ag = autograd_version(grown, evaluate)
    want = autograd.grad(f_ag, 2)(("c", 1), depth, THETA)
    got = srcgrad.grad(grown, wrt=2, mode=mode)(("c", 1), depth, THETA)
    assert_close(got, want, tol=1e-8)
    d = srcgrad.grad(grown, wrt=2)
    d(("c", 1), depth, THETA)
    limit = SPECIALIZATIONS + 1
    assert d.source.count("def grown_fwd") <= limit
    assert d.source.count("def evaluate_fwd") <= limit


#: more input elements than a forward-mode gradient carries in one pass: one pass each
X_MANY = np.linspace(1.0, 2.0, FORWARD_LANES + 1)


@pytest.mark.parametrize("make", list(_many_pass_derivatives()))
def test_a_generator_argument_is_refused_where_the_function_runs_once_per_element(make):
    derivative = _many_pass_derivatives()[make](noisy)
    with pytest.raises(TypeError, match="its argument 'rng' is a Generator") as info:
        derivative(X_MANY, np.random.default_rng(0))
    assert "runs it once per" in str(info.value)
    assert f"{X_MANY.size} passes" in str(info.value)
    with pytest.raises(TypeError, match=r"np\.random\.normal .*draws from a RandomState"):
        _many_pass_derivatives()[make](noisy_global)(X_MANY)


def test_derivatives_that_run_the_function_once_take_a_generator():
    rng = np.random.default_rng(0)
    assert_close(srcgrad.grad(noisy)(X, rng), 2 * X)
    assert_close(srcgrad.hvp(noisy)(X, rng, np.ones(3)), 2 * np.ones(3))
    assert_close(srcgrad.grad(noisy, mode="forward")(np.array([1.5]), rng), [3.0])  # one pass
    # up to FORWARD_LANES elements, one pass of the vector JVP
    assert_close(srcgrad.grad(noisy, mode="forward")(X, rng), 2 * X)
    assert_close(srcgrad.grad(noisy, mode="auto")(X, rng), 2 * X)  # (reverse mode)
    assert_close(srcgrad.jvp(noisy)(X, rng, np.ones(3))[1], np.sum(2 * X))


def test_a_function_giving_other_values_each_pass_is_an_error():
    with pytest.raises(ValueError, match="computed a different value in pass 2 than in pass 1"):
        srcgrad.grad(unseeded, mode="forward")(X_MANY)
    with pytest.raises(ValueError, match="computed a different value in pass 2"):
        srcgrad.jacobian(unseeded, mode="forward")(X)
    g = srcgrad.grad(seeded, mode="forward")(X)  # the same numbers each pass: fine
    assert_close(g, srcgrad.grad(seeded)(X))


# -- 12: iterating a dict iterates its keys -----------------------------------------------------
def dict_keys_loop(params):
    s = 0.0
    for k in params:
        s = s + np.sum(params[k] ** 2)
    return s


def dict_items_loop(params, scale):
    s = 0.0
    for _k, v in params.items():
        s = s + scale * np.sum(np.sin(v) * v)
    return s


def dict_values_loop(params):
    s = 1.0
    for v in params.values():
        s = s * np.sum(v)
    return s


def dict_keys_method_loop(params):
    s = 0.0
    for k in params.keys():
        s = s + np.sum(params[k] * params[k] * params[k])
    return s


def dict_enumerate_loop(params):
    s = 0.0
    for i, k in enumerate(params):
        s = s + (i + 1.0) * np.sum(params[k])
    return s


def dict_reversed_loop(params):
    s = 0.0
    for k in reversed(params):
        s = s * 2.0 + np.sum(params[k])
    return s


def dict_zip_loop(params, weights):
    s = 0.0
    for k, w in zip(params, weights):
        s = s + np.sum(params[k] * weights[w])
    return s


def int_keys_loop(params):
    s = 0.0
    for k in params:
        s = s + k * np.sum(params[k] ** 2)  # the keys are numbers: constants
    return s


def list_of_dicts_loop(layers):
    s = 0.0
    for layer in layers:
        for k in layer:
            s = s + np.sum(np.tanh(layer[k]))
    return s


def list_of_dicts_items_loop(layers):
    s = 0.0
    for layer in layers:
        for _k, v in layer.items():
            s = s + np.sum(v * v)
    return s


def dict_of_dicts_loop(params):
    s = 0.0
    for name in params:
        layer = params[name]
        for k in layer:
            s = s + np.sum(layer[k] ** 2) * len(name)
    return s


def dict_of_dicts_items_loop(params):
    s = 0.0
    for _name, layer in params.items():
        for _k, v in layer.items():
            s = s + np.sum(np.exp(v))
    return s


def sum_of_dict(d):
    s = 0.0
    for k in d:
        s = s + np.sum(d[k] ** 3)
    return s


def calls_a_dict_loop(params, x):
    return sum_of_dict(params) * np.sum(x)


GLOBAL_WEIGHTS = {"a": 1.0, "b": -2.0}


def global_dict_loop(x):
    s = 0.0
    for k in GLOBAL_WEIGHTS:
        s = s + GLOBAL_WEIGHTS[k] * np.sum(x**2)
    for _key, w in GLOBAL_WEIGHTS.items():
        s = s + w * np.sum(x)
    return s


def options_dict_loop(x, options):
    s = np.sum(x)
    for name in options:
        s = s * options[name]
    return s


A1, B1 = np.array([1.0, -2.0]), np.array([0.5])
DICT_CASES = [
    (dict_keys_loop, ({"a": A1, "b": B1},), 0),
    (dict_items_loop, ({"a": A1, "b": B1}, 1.5), 0),
    (dict_values_loop, ({"a": A1, "b": B1, "c": A1 * 2},), 0),
    (dict_keys_method_loop, ({"a": A1, "b": B1},), 0),
    (dict_enumerate_loop, ({"a": A1, "b": B1},), 0),
    (dict_zip_loop, ({"a": A1, "b": B1}, {"u": A1 + 1, "v": B1 * 3}), 0),
    (dict_zip_loop, ({"a": A1, "b": B1}, {"u": A1 + 1, "v": B1 * 3}), 1),
    (int_keys_loop, ({1: A1, 3: B1},), 0),
    (list_of_dicts_loop, ([{"W": A1, "b": B1}, {"W": A1 * 3, "b": B1 - 1}],), 0),
    (list_of_dicts_items_loop, ([{"W": A1, "b": B1}, {"W": A1 * 3, "b": B1 - 1}],), 0),
    (dict_of_dicts_loop, ({"l1": {"W": A1, "b": B1}, "l22": {"W": A1 * 2, "b": B1 * 3}},), 0),
    (dict_of_dicts_items_loop, ({"l1": {"W": A1, "b": B1}, "l2": {"W": -A1, "b": B1}},), 0),
    (calls_a_dict_loop, ({"a": A1, "b": B1}, A1), 0),
    (calls_a_dict_loop, ({"a": A1, "b": B1}, A1), 1),
    (global_dict_loop, (A1,), 0),
    (options_dict_loop, (A1, {"double": 2.0, "triple": 3.0}), 0),
]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize(
    "func, args, wrt", DICT_CASES, ids=[f"{c[0].__name__}-wrt{c[2]}" for c in DICT_CASES]
)
def test_iterating_a_dict_iterates_its_keys(func, args, wrt, mode):
    got = srcgrad.grad(func, wrt=wrt, mode=mode)(*args)
    want = autograd.grad(autograd_version(func, sum_of_dict), wrt)(*args)
    assert type(got) is type(want)
    for g, w in zip(_leaves(got), _leaves(want)):
        assert_close(g, w)
    assert func(*args) == pytest.approx(srcgrad.value_and_grad(func, wrt=wrt)(*args)[0])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_reversed_of_a_dict_runs_over_its_keys_backwards(mode):
    # (autograd's dicts cannot be reversed: a closed form) s = sum(a) + 2 sum(b) + 4 sum(c)
    params = {"a": A1, "b": B1, "c": B1 + 1}
    got = srcgrad.grad(dict_reversed_loop, mode=mode)(params)
    assert list(got) == ["a", "b", "c"]
    for key, scale in zip("abc", (1.0, 2.0, 4.0)):
        assert_close(got[key], scale * np.ones_like(params[key]))


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in _leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in _leaves(v)]
    return [tree]


def test_the_loop_over_a_dict_reads_its_keys_in_the_generated_code():
    d = srcgrad.grad(dict_keys_loop)
    d({"a": A1, "b": B1})
    assert "('a', 'b')" in d.source
    d({"x": A1, "y": B1, "z": B1})  # other keys: other code
    assert "('x', 'y', 'z')" in d.source


@srcgrad.primitive
def soft_max_value(x):
    return np.log(np.sum(np.exp(x)))


@soft_max_value.defvjp
def soft_max_value_vjp(dout, result, x):
    return dout * np.exp(x - result)


@srcgrad.primitive
def cubed(x):
    return x**3


@cubed.defjvp
def cubed_jvp(tangents, result, x):
    (dx,) = tangents
    return 3 * x**2 * dx


def uses_soft_max_value(x):
    y = np.sin(x)
    return soft_max_value(y) * 2.0


def uses_cubed(x):
    y = np.sin(x)
    z = cubed(y)
    return np.sum(z)


def _line_of(func, text):
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize(
    "make, func, text, count",
    [
        (srcgrad.hessian, uses_soft_max_value, "return soft_max_value(y) * 2.0", 1),
        (srcgrad.hvp, uses_soft_max_value, "return soft_max_value(y) * 2.0", 2),
        (lambda f: srcgrad.grad(srcgrad.jvp(f)), uses_cubed, "z = cubed(y)", 2),
        (lambda f: srcgrad.jacobian(srcgrad.jvp(f)), uses_cubed, "z = cubed(y)", 2),
    ],
    ids=["hessian", "hvp", "grad-of-jvp", "jacobian-of-jvp"],
)
def test_errors_in_code_differentiated_again_point_at_the_user_s_line(make, func, text, count):
    x = np.array([0.3, -0.5])
    derivative = make(func)
    args = (x,) * count
    with pytest.raises(srcgrad.NoDerivativeError) as info:
        derivative(*args)
    err = info.value
    assert err.filename == __file__ and err.lineno == _line_of(func, text), str(err)
    assert text in str(err) and "srcgrad was differentiating again the code" in str(err)
    assert "srcgrad.primitive once" in str(err)
