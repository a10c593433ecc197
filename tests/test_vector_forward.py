"""Forward mode with several input elements in one pass (the vector JVP) and
``mode="auto"``.

``grad(f, wrt=..., mode="forward")`` with up to ``FORWARD_LANES`` input elements runs
one generated function that computes the primal once and carries one tangent per
input element beside every active value (``x_dot_k``, ``x_dot_c``); above it, one
Jacobian-vector product per element, as before. Each function of the corpus below is
checked in the vector form against the per-element form (``FORWARD_LANES`` set to 0),
reverse mode, autograd running the same source and central finite differences; the
generated source is checked to compute each primal statement once; second order
(``hessian``, grad of a forward-mode grad) is checked against autograd. ``mode="auto"``
is forward mode for up to ``AUTO_FORWARD`` numbers and reverse mode otherwise.
"""

from __future__ import annotations

import ast
import re

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
import srcgrad.passes
from srcgrad.passes import AUTO_FORWARD, FORWARD_LANES

# -- the corpus -------------------------------------------------------------------------


def euler2(k, c, x0, v0, dt, n):
    x = x0
    v = v0
    for _ in range(n):
        a = -k * x - c * v
        x = x + dt * v
        v = v + dt * a
    return x * x


def two_scalars(a, b):
    return np.sin(a) * b + a / (1.0 + b * b)


def three_scalars(a, b, c):
    s = a * b
    t = np.exp(-c * s)
    return s * t + np.log(1.0 + c * c) * a


def four_scalars(a, b, c, d):
    return np.tanh(a * b - c) * d + a * d * d


def small_array(x, y):
    return np.sum(np.sin(x) * y) + np.prod(x) * y * y


def matrix(w, b):
    h = np.tanh(w @ np.array([0.5, -1.0]) + b)
    return np.sum(h * h)


def branches(a, b):
    if a > b:
        y = a * a * b
    else:
        y = np.cos(a) + b * 3.0
    if a * b > 0.5:
        y = y * b
    return y


def while_loop(a, b):
    s = a
    i = 0
    while s < 10.0:
        s = s * (1.0 + b) + a
        i = i + 1
    return s * i


def scale(u, v):
    return u * np.exp(v)


def nested(u, v):
    return scale(u, v) + scale(v, u) * u


def calls(a, b, c):
    return nested(a, b) * c + scale(c, a)


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def recursion(a, b):
    return power(a, 3) * b + power(b, 2)


def aux(a, b):
    y = a * a * b
    return y + np.sin(b), {"y": y}


def inactive_direction(a, b):
    # the output depends on b alone in one branch: a's tangent is zero there
    if b > 0:
        return b * b
    return a * b


def a_list(a, b):
    xs = []
    for i in range(3):
        xs.append(a * i + b)
    return xs[0] * xs[1] + xs[2] * a


def item_write(x, a):
    y = np.zeros_like(x)
    y[0] = x[1] * a
    y[1] = x[0] + a
    return np.sum(y * y)


CORPUS = [
    (euler2, (2.0, 0.1, 1.0, 0.0, 0.01, 200), (0, 1)),
    (euler2, (2.0, 0.1, 1.0, 0.0, 0.01, 200), (0, 1, 2, 3)),
    (two_scalars, (0.7, -1.3), (0, 1)),
    (three_scalars, (0.7, -1.3, 0.4), (0, 1, 2)),
    (four_scalars, (0.7, -1.3, 0.4, 1.1), (0, 1, 2, 3)),
    (four_scalars, (0.7, -1.3, 0.4, 1.1), (3, 1)),
    (small_array, (np.array([0.3, -0.5, 0.9]), 1.7), (0, 1)),
    (small_array, (np.array([0.3, -0.5, 0.9]), 1.7), 0),
    (matrix, (np.array([[0.1, 0.2], [-0.3, 0.4], [0.5, 0.6]]), np.array([0.1, 0.2, 0.3])), 0),
    (matrix, (np.array([[0.1, 0.2], [-0.3, 0.4]]), np.array([0.1, -0.2])), (0, 1)),
    (branches, (1.5, 0.7), (0, 1)),
    (branches, (0.2, 0.9), (0, 1)),
    (branches, (0.2, -0.9), (0, 1)),
    (while_loop, (0.5, 0.3), (0, 1)),
    (calls, (0.3, -0.4, 0.8), (0, 1, 2)),
    (calls, (0.3, -0.4, 0.8), (2, 0)),
    (recursion, (0.6, 1.4), (0, 1)),
    (inactive_direction, (0.6, 1.4), (0, 1)),
    (inactive_direction, (0.6, -1.4), (0, 1)),
    (a_list, (0.6, 1.4), (0, 1)),
    (item_write, (np.array([0.3, -0.5]), 1.2), (0, 1)),
]


#: autograd cannot run these (``y[i] = v`` on its boxes): reverse mode and finite
#: differences are their referees
NO_AUTOGRAD = {item_write}


def _id(case) -> str:
    func, _, wrt = case
    return f"{func.__name__}-{wrt}"


def _count(args, wrt) -> int:
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    return sum(np.size(args[i]) for i in wrt)


def _as_tuple(g, wrt):
    return g if isinstance(wrt, tuple) else (g,)


def _per_element(monkeypatch, make):
    """What ``make()`` gives with one pass per input element (the form before)."""
    with monkeypatch.context() as m:
        m.setattr(srcgrad.passes, "FORWARD_LANES", 0)
        return make()


def _finite_differences(f, args, wrt, eps=1e-6):
    grads = []
    for i in wrt if isinstance(wrt, tuple) else (wrt,):
        x = np.asarray(args[i], dtype=float)
        g = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            plus, minus = list(args), list(args)
            xp, xm = x.copy(), x.copy()
            xp[index] += eps
            xm[index] -= eps
            plus[i] = xp if x.ndim else float(xp)
            minus[i] = xm if x.ndim else float(xm)
            g[index] = (f(*plus) - f(*minus)) / (2 * eps)
        grads.append(g)
    return tuple(grads)


def assert_same_kind(got, want):
    """Same types, shapes and dtypes, element by element of a tuple."""
    assert type(got) is type(want), (type(got), type(want))
    assert np.shape(got) == np.shape(want)
    assert getattr(got, "dtype", None) == getattr(want, "dtype", None)


# -- the vector form against the per-element form, reverse mode, autograd, differences ---


@pytest.mark.parametrize("case", CORPUS, ids=_id)
def test_the_vector_form_gives_what_one_pass_per_element_gives(case, monkeypatch):
    func, args, wrt = case
    assert 1 < _count(args, wrt) <= FORWARD_LANES
    d = srcgrad.grad(func, wrt=wrt, mode="forward")
    got = d(*args)
    assert "directions at once" in d.source  # (the vector form ran)
    before = _per_element(monkeypatch, lambda: srcgrad.grad(func, wrt=wrt, mode="forward")(*args))
    for g, w in zip(_as_tuple(got, wrt), _as_tuple(before, wrt)):
        assert_same_kind(g, w)
        # equal to rounding: a direction leaves out the terms of the others' (zero) tangents
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("case", CORPUS, ids=_id)
def test_the_vector_form_agrees_with_reverse_mode_autograd_and_differences(case):
    func, args, wrt = case
    got = srcgrad.grad(func, wrt=wrt, mode="forward")(*args)
    reverse = srcgrad.grad(func, wrt=wrt)(*args)
    oracle = reverse if func in NO_AUTOGRAD else autograd.grad(autograd_twin(func), wrt)(*args)
    fd = _finite_differences(func, args, wrt)
    for g, r, o, f in zip(*(_as_tuple(x, wrt) for x in (got, reverse, oracle)), fd):
        assert_same_kind(g, r)
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, o, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, f, rtol=1e-5, atol=1e-7)


def test_value_and_grad_and_has_aux(monkeypatch):
    args = (0.8, -0.6)
    value, (ga, gb) = srcgrad.value_and_grad(aux, wrt=(0, 1), mode="forward", has_aux=True)(*args)
    (value_r, aux_r), (ra, rb) = srcgrad.value_and_grad(aux, wrt=(0, 1), has_aux=True)(*args)
    assert value[0] == value_r and value[1] == aux_r
    np.testing.assert_allclose([ga, gb], [ra, rb], rtol=1e-13)
    (ga, gb), extra = srcgrad.grad(aux, wrt=(0, 1), mode="forward", has_aux=True)(*args)
    assert extra == aux_r
    np.testing.assert_allclose([ga, gb], [ra, rb], rtol=1e-13)
    v, g = srcgrad.value_and_grad(small_array, wrt=(0, 1), mode="forward")(np.ones(3), 2.0)
    v_r, g_r = srcgrad.value_and_grad(small_array, wrt=(0, 1))(np.ones(3), 2.0)
    assert v == v_r
    np.testing.assert_allclose(g[0], g_r[0], rtol=1e-13)
    np.testing.assert_allclose(g[1], g_r[1], rtol=1e-13)


def pytree_of_scalars(p, x):
    return p["a"] * np.sin(x * p["b"]) + p["c"][0] * p["c"][1]


def test_a_pytree_of_scalars_and_small_arrays():
    p = {"a": 1.3, "b": np.array([0.2, -0.4]), "c": (0.5, 2.0)}
    d = srcgrad.grad(lambda p, x: np.sum(pytree_of_scalars(p, x)), mode="forward")
    got = d(p, np.array([1.0, 2.0]))
    assert "5 directions at once" in d.source
    want = srcgrad.grad(lambda p, x: np.sum(pytree_of_scalars(p, x)))(p, np.array([1.0, 2.0]))
    assert set(got) == set(want) and type(got["c"]) is type(want["c"])
    for key in got:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-13)
        assert_same_kind(got[key], want[key])


@pytest.mark.parametrize(
    "args",
    [
        (np.float32(0.7), np.float32(-1.3)),
        (np.array(0.7), np.array(-1.3)),
        (0.7, np.float64(-1.3)),
    ],
    ids=["float32", "0-d", "float-and-float64"],
)
def test_the_gradients_have_the_types_and_dtypes_of_before(args, monkeypatch):
    got = srcgrad.grad(two_scalars, wrt=(0, 1), mode="forward")(*args)
    before = _per_element(
        monkeypatch, lambda: srcgrad.grad(two_scalars, wrt=(0, 1), mode="forward")(*args)
    )
    for g, w in zip(got, before):
        assert_same_kind(g, w)
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_float32_arrays_keep_their_dtype(monkeypatch):
    x = np.array([0.3, -0.5, 0.9], dtype=np.float32)
    got = srcgrad.grad(small_array, mode="forward")(x, np.float32(1.5))
    before = _per_element(
        monkeypatch, lambda: srcgrad.grad(small_array, mode="forward")(x, np.float32(1.5))
    )
    assert got.dtype == before.dtype == np.float32
    np.testing.assert_allclose(got, before, rtol=1e-6)


# -- the generated code ----------------------------------------------------------------


def _assigned(func: ast.FunctionDef) -> list[str]:
    """The names given a value, once per assignment (``x_dot += e`` too)."""
    return [
        t.id
        for node in ast.walk(func)
        if isinstance(node, (ast.Assign, ast.AugAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        for t in ast.walk(target)
        if isinstance(t, ast.Name)
    ]


def _function(source: str, name: str) -> ast.FunctionDef:
    return next(
        n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name
    )


def test_the_vector_jvp_computes_the_primal_once():
    d = srcgrad.grad(euler2, wrt=(0, 1), mode="forward")
    d(2.0, 0.1, 1.0, 0.0, 0.01, 10)
    func = _function(d.source, "jvp_euler2")
    assert [a.arg for a in func.args.args][-2:] == ["k_dot_k", "c_dot_c"]
    names = _assigned(func)
    primal = [n for n in names if "_dot_" not in n]
    assert primal.count("a") == 1 and primal.count("x") == primal.count("v") == 2  # (x = x0)
    # each tangent in each direction as often as its primal: dx/dk and dx/dc side by side
    for v in ("x", "v", "a"):
        assert names.count(f"{v}_dot_k") == names.count(f"{v}_dot_c") == primal.count(v)
    plain = srcgrad.jvp(euler2, wrt=(0, 1))
    plain(2.0, 0.1, 1.0, 0.0, 0.01, 10, 1.0, 0.0)
    plain_primal = [n for n in _assigned(_function(plain.source, "jvp_euler2")) if "_dot" not in n]
    assert sorted(primal) == sorted(plain_primal)  # the primal of one jvp, no more
    # k's direction reads no tangent of c, and c's none of k
    for line in d.source.splitlines():
        if re.match(r"\s*\w+_dot_k [+-]?= ", line):
            assert "_dot_c" not in line, line
        if re.match(r"\s*\w+_dot_c [+-]?= ", line):
            assert "_dot_k" not in line, line


def test_a_callee_gets_a_vector_jvp_of_the_directions_its_arguments_carry():
    d = srcgrad.grad(calls, wrt=(0, 1, 2), mode="forward")
    d(0.3, -0.4, 0.8)
    # each call is made once, carrying the directions its arguments carry
    entry = _function(d.source, "jvp_calls")
    assert "t1, t1_dot_a, t1_dot_b = jvp_nested(a, b, a_dot_a, b_dot_b)" in ast.unparse(entry)
    assert "t3, t3_dot_a, t3_dot_c = jvp_scale(c, a, a_dot_a, c_dot_c)" in ast.unparse(entry)
    nested_jvp = ast.unparse(_function(d.source, "jvp_nested"))
    assert nested_jvp.count("= jvp_scale") == 2
    assert "return (out, out_dot_a, out_dot_b)" in nested_jvp


def test_a_factor_the_directions_share_is_computed_once():
    d = srcgrad.grad(small_array, wrt=(0, 1), mode="forward")
    d(np.array([0.3, -0.5, 0.9]), 1.7)
    body = ast.unparse(_function(d.source, "jvp_small_array"))
    assert body.count("np.cos(x)") == 1 and body.count("prod_others(x)") == 1


def test_more_elements_than_forward_lanes_run_one_pass_each():
    x = np.linspace(0.1, 1.0, FORWARD_LANES + 1)
    d = srcgrad.grad(small_array, mode="forward")
    got = d(x, 1.5)
    assert "Forward mode (Jacobian-vector product)" in d.source
    np.testing.assert_allclose(got, srcgrad.grad(small_array)(x, 1.5), rtol=1e-12)
    got = d(x[:3], 1.5)  # and the same derivative with few: the vector form
    assert "3 directions at once" in d.source
    np.testing.assert_allclose(got, srcgrad.grad(small_array)(x[:3], 1.5), rtol=1e-12)


def test_one_element_is_the_plain_jvp():
    d = srcgrad.grad(small_array, wrt=1, mode="forward")
    d(np.ones(3), 2.0)
    assert "Forward mode (Jacobian-vector product)" in d.source


# -- second order -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "func, args",
    [(two_scalars, (0.7, -1.3)), (three_scalars, (0.7, -1.3, 0.4)), (calls, (0.3, -0.4, 0.8))],
    ids=["two", "three", "calls"],
)
def test_second_order_over_forward_mode_gradients(func, args):
    twin = autograd_twin(func)
    for i in range(len(args)):
        inner = srcgrad.grad(func, wrt=i, mode="forward")
        for j in range(len(args)):
            got = srcgrad.grad(inner, wrt=j)(*args)
            want = autograd.grad(autograd.grad(twin, i), j)(*args)
            np.testing.assert_allclose(got, want, rtol=1e-10)
    x = np.array([0.3, -0.5, 0.9])
    h = srcgrad.hessian(small_array)(x, 1.7)
    np.testing.assert_allclose(h, autograd.hessian(autograd_twin(small_array))(x, 1.7), rtol=1e-10)
    # the forward-mode gradient of a tuple wrt, after its vector form ran, still works
    srcgrad.grad(func, wrt=tuple(range(len(args))), mode="forward")(*args)


# -- mode="auto" ------------------------------------------------------------------------


def test_auto_is_forward_mode_for_up_to_auto_forward_numbers():
    assert AUTO_FORWARD == 2  # (the cases below are chosen around it)
    d = srcgrad.grad(euler2, wrt=(0, 1), mode="auto")
    args = (2.0, 0.1, 1.0, 0.0, 0.01, 50)
    got = d(*args)
    assert "2 directions at once" in d.source
    np.testing.assert_allclose(got, srcgrad.grad(euler2, wrt=(0, 1))(*args), rtol=1e-12)
    d = srcgrad.grad(euler2, wrt=(0, 1, 2), mode="auto")  # three numbers: reverse mode
    got = d(*args)
    assert "Reverse-mode gradient" in d.source
    np.testing.assert_allclose(got, srcgrad.grad(euler2, wrt=(0, 1, 2))(*args), rtol=1e-12)


def test_auto_is_reverse_mode_for_arrays_and_each_call_decides():
    d = srcgrad.grad(small_array, wrt=(0, 1), mode="auto")
    x = np.array([0.3, -0.5, 0.9])
    got = d(x, 1.7)
    assert "Reverse-mode gradient" in d.source
    np.testing.assert_allclose(got[0], srcgrad.grad(small_array)(x, 1.7), rtol=1e-12)
    d(np.array([0.3]), 1.7)  # one element of a 1-d array: reverse mode too
    assert "Reverse-mode gradient" in d.source
    x0 = np.array(0.3)  # a 0-d array and a number: forward mode, the cache keeps both
    got = d(x0, 1.7)
    assert "2 directions at once" in d.source
    want = srcgrad.grad(small_array, wrt=(0, 1))(x0, 1.7)
    for g, w in zip(got, want):
        assert_same_kind(g, w)
        np.testing.assert_allclose(g, w, rtol=1e-12)
    d(x, 1.7)
    assert "Reverse-mode gradient" in d.source
    assert repr(d).endswith("mode='auto'>")


def test_auto_with_one_scalar_is_the_plain_jvp_and_agrees():
    d = srcgrad.value_and_grad(euler2, mode="auto")
    value, g = d(2.0, 0.1, 1.0, 0.0, 0.01, 50)
    assert "Forward mode (Jacobian-vector product)" in d.source
    want = srcgrad.value_and_grad(euler2)(2.0, 0.1, 1.0, 0.0, 0.01, 50)
    assert value == want[0]
    np.testing.assert_allclose(g, want[1], rtol=1e-12)


def test_auto_takes_keywords_has_aux_and_pytrees_of_numbers():
    d = srcgrad.grad(aux, wrt=(0, 1), mode="auto", has_aux=True)
    (ga, gb), extra = d(b=-0.6, a=0.8)
    assert "directions at once" in d.source
    (ra, rb), _ = srcgrad.grad(aux, wrt=(0, 1), has_aux=True)(0.8, -0.6)
    np.testing.assert_allclose([ga, gb], [ra, rb], rtol=1e-13)

    def f(p):
        return p["a"] * np.sin(p["c"][0]) * p["c"][1]

    p = {"a": 1.3, "c": (0.5, 2.0)}
    got = srcgrad.grad(f, mode="auto")(p)  # three numbers: reverse mode
    want = srcgrad.grad(f)(p)
    assert got == want and type(got["c"]) is tuple
    q = {"a": 1.3, "c": 0.5}
    g = srcgrad.grad(lambda q: q["a"] * np.sin(q["c"]), mode="auto")
    got = g(q)
    assert "2 directions at once" in g.source
    assert got == srcgrad.grad(lambda q: q["a"] * np.sin(q["c"]))(q)


def test_auto_is_reverse_mode_for_complex_arguments():
    def f(z):
        return np.sum(np.abs(z) ** 2)

    z = np.array([1.0 + 2.0j, -0.5j])
    d = srcgrad.grad(f, mode="auto")
    np.testing.assert_allclose(d(z), srcgrad.grad(f)(z))
    assert "Reverse-mode" in d.source


def test_auto_under_a_second_derivative_differentiates_reverse_mode_code():
    inner = srcgrad.grad(two_scalars, mode="auto")
    got = srcgrad.grad(inner)(0.7, -1.3)
    want = autograd.grad(autograd.grad(autograd_twin(two_scalars)))(0.7, -1.3)
    np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("make", [srcgrad.grad, srcgrad.value_and_grad])
def test_a_bad_mode_names_the_three(make):
    with pytest.raises(ValueError, match="'reverse', 'forward' or 'auto', not 'fast'"):
        make(two_scalars, mode="fast")


def test_jacobian_has_no_auto_mode_and_says_so():
    with pytest.raises(ValueError, match=r"mode='auto' is grad's and value_and_grad's"):
        srcgrad.jacobian(two_scalars, mode="auto")


def test_the_vector_form_of_a_gradient_of_a_jvp():
    j = srcgrad.jvp(two_scalars, wrt=0)
    forward = srcgrad.grad(j, wrt=(0, 1), mode="forward")
    got = forward(0.7, -1.3, 1.0)
    assert "2 directions at once" in forward.source
    want = autograd.grad(autograd.grad(autograd_twin(two_scalars), 0), (0, 1))(0.7, -1.3)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got, srcgrad.grad(j, wrt=(0, 1))(0.7, -1.3, 1.0), rtol=1e-13)
