"""Calls to user functions, in both modes: module helpers, helpers in other
modules, closures, default and keyword arguments, tuple results, recursion and
mutual recursion. Each is checked against finite differences with
``check_grads``; the generated code calls each callee's own derivative."""

from __future__ import annotations

import helpers_for_calls as other
import numpy as np
import pytest
from helpers_for_calls import smooth_step

import srcgrad
from srcgrad.errors import UnsupportedSyntaxError
from srcgrad.testing import check_grads


# -- the user's code ---------------------------------------------------------------------
def square_plus(x, c=1.0):
    return x * x + c


def calls_helper(x):
    return np.sum(square_plus(x) * np.sin(x))


def calls_with_keyword(x, y):
    return np.sum(square_plus(c=y, x=x))


def calls_other_module(x):
    return np.sum(smooth_step(x) + other.smooth_step(x, sharpness=3.0))


def calls_tuple_helper(x):
    kinetic, potential = other.split_energy(x)
    return kinetic * potential


def indexes_tuple_result(x):
    parts = other.split_energy(x)
    return parts[0] - 2.0 * parts[1]


def make_model(weight, bias):
    def model(x):
        return np.tanh(weight * x + bias)

    def loss(x):
        return np.sum(model(x) ** 2)

    return loss


closure_loss = make_model(np.array([0.5, -1.5]), 0.25)


def power(x, n):
    if n == 0:
        return x * 0.0 + 1.0
    return x * power(x, n - 1)


def uses_power(x, n):
    return np.sum(power(x, n))


def even_sum(x, n):
    if n == 0:
        return np.sum(x)
    return np.sum(np.sin(x)) + odd_sum(0.9 * x, n - 1)


def odd_sum(x, n):
    if n == 0:
        return np.sum(x * x)
    return even_sum(np.cos(x), n - 1)


def tree_sum(x, depth):
    """Two recursive calls per level: a binary tree of calls."""
    if depth == 0:
        return np.sum(np.sin(x))
    return tree_sum(0.5 * x, depth - 1) + tree_sum(x * x, depth - 1)


def helper_in_loop(x):
    total = 0.0
    for k in range(3):
        total = total + np.sum(square_plus(x, c=0.1 * k))
    return total


def helper_in_branch(x):
    if np.sum(x) > 0:
        y = square_plus(x)
    else:
        y = smooth_step(x)
    return np.sum(y)


def pair_ignoring_v(u, v):
    return np.tanh(u), np.sin(2.0)


def tuple_result_not_depending_on_wrt(x, z):
    """The callee gets an active argument but returns values that do not depend on it."""
    a, b = pair_ignoring_v(np.tanh(x), np.sum(z))
    return np.sum(a * b) + np.sum(z * z)


def pair_with_early_return(u, v):
    a = np.sin(u)
    if np.mean(a) > 1.0:
        return np.tanh(u), np.tanh(v)
    return 0.5 * a, 0.5 * 2.0


def early_return_tuple_not_depending_on_wrt(x, y):
    b = np.tanh(np.sum(x))
    a, b = pair_with_early_return(y, b)
    return np.mean(a) + np.sum(x * x)


def reassigns_its_parameter(u, v):
    b = np.tanh(np.sum(u))
    for _ in range(2):
        v = 0.5 * b * v + 0.1
    if np.sum(u) > 10.0:
        u = u * 2.0
    return v * v + np.sum(u)


def calls_a_helper_that_reassigns_its_parameter(x):
    """The adjoint must see the parameter's final value, not the one passed in."""
    return np.sum(reassigns_its_parameter(x, 0.3))


def nested_def(x):
    def g(y):
        return y * y

    return np.sum(g(x))


X = np.array([0.3, -0.7, 1.1])
CASES = [
    (calls_helper, (X,), 0),
    (calls_with_keyword, (X, 0.5), (0, 1)),
    (calls_other_module, (X,), 0),
    (calls_tuple_helper, (X,), 0),
    (indexes_tuple_result, (X,), 0),
    (closure_loss, (X[:2],), 0),
    (uses_power, (X, 0), 0),
    (uses_power, (X, 4), 0),
    (even_sum, (X, 5), 0),
    (even_sum, (X, 6), 0),
    (tree_sum, (X, 3), 0),
    (helper_in_loop, (X,), 0),
    (helper_in_branch, (X,), 0),
    (helper_in_branch, (-X - 1.0,), 0),
    (tuple_result_not_depending_on_wrt, (X, X[:2]), 1),
    (early_return_tuple_not_depending_on_wrt, (X, X), 0),
    (calls_a_helper_that_reassigns_its_parameter, (X,), 0),
    (calls_a_helper_that_reassigns_its_parameter, (X + 5.0,), 0),
]


@pytest.mark.parametrize(
    "func, args, wrt",
    CASES,
    ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CASES)],
)
def test_calls_check_grads(func, args, wrt):
    check_grads(func, args, wrt=wrt)


def test_deep_recursion():
    x = np.array([0.99, 1.01])
    g = srcgrad.grad(uses_power)(x, 300)
    np.testing.assert_allclose(g, 300 * x**299, rtol=1e-10)
    _, t = srcgrad.jvp(uses_power)(x, 300, np.ones(2))
    np.testing.assert_allclose(t, np.sum(300 * x**299), rtol=1e-10)


def test_each_callee_gets_its_own_derivative_in_the_module():
    reverse = srcgrad.grad(uses_power)
    reverse(X, 2)
    assert "def power_fwd(x, n):" in reverse.source
    assert "def power_bwd(x, n, rec, result_bar):" in reverse.source
    assert "power_bwd(x, n - 1, t4_rec, " in reverse.source  # the recursive adjoint call
    forward = srcgrad.jvp(uses_power)
    forward(X, 2, np.ones(3))
    assert "def jvp_power(" in forward.source


def test_mutual_recursion_generates_both_functions():
    reverse = srcgrad.grad(even_sum)
    reverse(X, 3)
    for name in ("even_sum_fwd", "even_sum_bwd", "odd_sum_fwd", "odd_sum_bwd"):
        assert f"def {name}(" in reverse.source


def test_a_nested_def_is_written_out_where_it_is_called():
    """(Refused before issue 18; ``test_nested_functions.py`` has the cases.)"""
    for mode in ("reverse", "forward"):
        np.testing.assert_allclose(srcgrad.grad(nested_def, mode=mode)(X), 2 * X, rtol=1e-12)


def loss_and_aux(x):
    loss = np.sum(np.sin(x) ** 2)
    aux = np.cos(x)
    return loss, aux


def test_vjp_and_jvp_of_a_function_returning_a_tuple():
    x = np.array([0.3, -0.5])
    vjp = srcgrad.vjp(loss_and_aux)
    np.testing.assert_allclose(vjp(x, (1.0, np.zeros(2))), 2 * np.sin(x) * np.cos(x))
    np.testing.assert_allclose(vjp(x, (0.0, np.ones(2))), -np.sin(x))
    with pytest.raises(ValueError, match="pass a tuple of 2 cotangents"):
        vjp(x, 1.0)
    (loss, aux), (loss_dot, aux_dot) = srcgrad.jvp(loss_and_aux)(x, np.ones(2))
    assert loss_dot == pytest.approx(np.sum(2 * np.sin(x) * np.cos(x)))
    np.testing.assert_allclose(aux_dot, -np.sin(x))


def loss_with_aux_in_branches(x, n):
    y = np.tanh(x)
    if n > 2:
        return np.sum(y * y), (n, np.mean(y))
    for _ in range(n):
        y = y * 0.5
    return np.sum(y), (n, np.mean(y))


def no_pair(x):
    return np.sum(x)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_has_aux_differentiates_the_first_element_and_returns_the_second(mode):
    x = np.array([0.3, -0.5])
    g, aux = srcgrad.grad(loss_and_aux, has_aux=True, mode=mode)(x)
    np.testing.assert_allclose(g, 2 * np.sin(x) * np.cos(x))
    np.testing.assert_allclose(aux, np.cos(x))
    (value, aux), g = srcgrad.value_and_grad(loss_and_aux, has_aux=True, mode=mode)(x)
    assert value == pytest.approx(np.sum(np.sin(x) ** 2))
    np.testing.assert_allclose(aux, np.cos(x))
    y = np.tanh(x)
    for n, expected in ((1, 0.5 * (1 - y * y)), (3, 2 * y * (1 - y * y))):
        g, aux = srcgrad.grad(loss_with_aux_in_branches, has_aux=True, mode=mode)(x, n)
        np.testing.assert_allclose(g, expected)
        assert aux == loss_with_aux_in_branches(x, n)[1]
        check_grads(lambda_free_first(n), [x])


def lambda_free_first(n):
    def first(x):
        return loss_with_aux_in_branches(x, n)[0]

    return first


def test_has_aux_needs_a_pair_and_a_python_function():
    with pytest.raises(UnsupportedSyntaxError, match="return a pair"):
        srcgrad.grad(no_pair, has_aux=True)(X)
    with pytest.raises(TypeError, match="needs a Python function, not a derivative"):
        srcgrad.grad(srcgrad.grad(no_pair), has_aux=True)


# -- the quick call path: a call like an earlier one reuses its code ----------------------
# (each test calls more than once: the first call generates the code, the later ones take
# the quick path, which checks only that the functions the code was made from are unchanged)
WEIGHT = 2.0


def weighted_squares(x):
    return np.sum(WEIGHT * x * x)


def times_length(x):
    return np.sum(x) * len(x)


def squares(x):
    return np.sum(x * x)


def cubes(x):
    return np.sum(x * x * x)


def five(x):
    return 5


def dot(x, y):
    return np.sum(x * y)


def sine(x):
    return np.sin(x)


def plus_bias(x, b):
    return np.sum(x + b)


def make_scaled_sine(scale):
    def scaled_sine(x):
        return np.sum(scale * np.sin(x))

    def set_scale(value):
        nonlocal scale
        scale = value

    return scaled_sine, set_scale


def test_calls_with_a_new_batch_size_each_time_reuse_the_code_and_bound_the_cache():
    from srcgrad import cache
    from srcgrad.compiler import driver

    d = srcgrad.grad(weighted_squares)
    d(np.ones(2))
    emitted = driver.RUNS["emit"]
    sizes = range(2, cache._QUICK_LIMIT + 20)
    for n in (*sizes, *sizes, 2):
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_allclose(d(x), 2 * WEIGHT * x)
        assert len(d._quick) <= cache._QUICK_LIMIT
    assert len(d._quick_by_code) == 1
    assert driver.RUNS["emit"] == emitted  # one code for every length


def test_an_input_the_generated_code_returns_is_copied_on_every_call():
    x, y = np.array([1.0, 2.0]), np.array([3.0, -4.0])
    for d, want in ((srcgrad.grad(dot), y), (srcgrad.grad(dot, wrt=1), x)):
        for _ in range(3):
            g = d(x, y)
            np.testing.assert_array_equal(g, want)
            assert g is not want and not np.shares_memory(g, want)
    value_and_grad = srcgrad.value_and_grad(dot)
    vjp = srcgrad.vjp(lambda v: v)
    for _ in range(3):
        value, g = value_and_grad(x, y)
        assert value == pytest.approx(-5.0) and g is not y and not np.shares_memory(g, y)
        v = vjp(x, y)
        np.testing.assert_array_equal(v, y)
        assert v is not y and not np.shares_memory(v, y)


def test_every_call_gives_the_gradient_the_type_and_dtype_of_its_argument():
    d = srcgrad.grad(sine)
    for _ in range(3):  # the generated code returns a numpy float for a float argument
        g = d(0.5)
        assert type(g) is float and g == pytest.approx(np.cos(0.5))
        g = d(np.float32(0.5))
        assert type(g) is np.float32
        value, g = srcgrad.value_and_grad(sine)(0.5)
        assert type(g) is float and value == pytest.approx(np.sin(0.5))
    d = srcgrad.grad(weighted_squares)
    for dtype in ("<f8", ">f8", "<f4", "<f8", ">f8"):
        x = np.arange(3.0).astype(dtype)
        g = d(x)
        assert g.dtype == x.dtype and g.flags.writeable
        np.testing.assert_allclose(g, 2 * WEIGHT * x, rtol=1e-6)


def test_the_quick_path_sees_a_rebound_global_closure_cell_or_shadowed_builtin(monkeypatch):
    x = np.array([0.5, -1.0, 2.0])
    d = srcgrad.grad(weighted_squares)
    for weight in (2.0, 2.0, 3.0, 3.0, 2.0, 2.0):  # back to the first: still right
        monkeypatch.setitem(globals(), "WEIGHT", weight)
        np.testing.assert_allclose(d(x), 2 * weight * x)

    scaled_sine, set_scale = make_scaled_sine(2.0)
    d = srcgrad.grad(scaled_sine)
    for scale in (2.0, 2.0, -1.0, -1.0):
        set_scale(scale)
        np.testing.assert_allclose(d(x), scale * np.cos(x))

    d = srcgrad.grad(times_length)
    np.testing.assert_allclose(d(x), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(d(x), [3.0, 3.0, 3.0])
    monkeypatch.setitem(globals(), "len", five)  # a global hides the builtin
    assert times_length(np.ones(3)) == 15.0
    np.testing.assert_allclose(d(x), [5.0, 5.0, 5.0])
    np.testing.assert_allclose(d(x), [5.0, 5.0, 5.0])

    d = srcgrad.grad(squares)  # new code for the function itself
    np.testing.assert_allclose(d(x), 2 * x)
    np.testing.assert_allclose(d(x), 2 * x)
    monkeypatch.setattr(squares, "__code__", cubes.__code__)
    np.testing.assert_allclose(d(x), 3 * x * x)

    # a rebound global in a function the differentiated one calls: its module's SCALE
    d = srcgrad.grad(calls_other_module)
    before = d(x)
    np.testing.assert_array_equal(d(x), before)
    monkeypatch.setattr(other, "SCALE", 2 * other.SCALE)
    np.testing.assert_allclose(d(x), 2 * before)


def test_source_is_the_code_of_the_most_recent_call():
    d = srcgrad.grad(plus_bias, wrt=1)
    x = np.array([1.0, 2.0])
    d(x, 0.5)
    scalar_source = d.source
    d(x, np.array([0.5, 0.5]))
    assert d.source != scalar_source
    d(x, 0.5)  # the quick path
    assert d.source == scalar_source
