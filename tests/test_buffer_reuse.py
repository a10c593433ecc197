"""The optimizer pass ``reuse_dead_buffers`` (``srcgrad/compiler/optimize/buffers.py``):
``v = t * a`` written ``t *= a`` only where ``t``'s array is the function's own, dead
after, and ``a`` neither broadcasts into it nor widens its dtype.

Hostile bodies first (the pass must leave each as it is: an alias of an argument, a
temporary returned or read again, integer dtypes, broadcasting, a loop), each also run
to show what writing in place would have broken; then the rewrites it makes, run before
and after on float64 and float32 arrays (the same bits, the arguments untouched); then
user functions whose generated code has the rewrite, against finite differences (both
modes, second order) and autograd."""

from __future__ import annotations

import ast
import textwrap

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
import srcgrad.cache
import srcgrad.compiler.optimize as optimize_package
from srcgrad.compiler.optimize import Context, reuse_dead_buffers
from srcgrad.testing import check_grads


def _ctx(arguments: str, floats: str) -> Context:
    names = frozenset(arguments.split())
    return Context(
        params=names,
        arguments=names,
        xp="np",
        temporaries=frozenset(),
        floats=frozenset(floats.split()),
    )


def _pass(code: str, arguments: str = "x y n", floats: str = "x y") -> str:
    body = ast.parse(textwrap.dedent(code)).body
    body, _ = reuse_dead_buffers(body, _ctx(arguments, floats))
    return ast.unparse(ast.Module(body=body, type_ignores=[]))


def _function(code: str, arguments: str) -> object:
    namespace: dict = {"np": np}
    source = f"def f({', '.join(arguments.split())}):\n" + textwrap.indent(code, "    ")
    exec(compile(source, "<test>", "exec"), namespace)
    return namespace["f"]


#: (why, body): bodies the pass must leave as they are
LEFT_ALONE = [
    ("t is a view of an argument (.T)", "t = x.T\nv = t * 2.0\nreturn v"),
    ("t is a view of an argument (x[:])", "t = x[:]\nv = t * 2.0\nreturn v"),
    ("t is the argument (np.asarray)", "t = np.asarray(x)\nv = t * 2.0\nreturn v"),
    ("t is a view of an argument (reshape)", "t = x.reshape(-1)\nv = t * 2.0\nreturn v"),
    ("t is a view of an argument (np.reshape)", "t = np.reshape(x, -1)\nv = t + 1.0\nreturn v"),
    ("t is returned", "t = x * 2.0\nv = t * 3.0\nreturn (v, t)"),
    ("t is read again through a view", "t = x * 2.0\ns = t[1:]\nv = t * 3.0\nreturn (v, s)"),
    ("t is put in a list", "t = x * 2.0\nl = [t]\nv = t * 3.0\nreturn (v, l)"),
    ("t is an integer array", "t = n * 2\nv = t * 3\nreturn v"),
    ("t is an integer array, v a float one", "t = n - 1\nv = t / 2\nreturn v"),
    ("an integer operand with a float would widen t", "t = x * 2.0\nv = t * (n * 1.0)\nreturn v"),
    ("an integer operand's dtype may be wider", "t = x * 2.0\nv = t * n\nreturn v"),
    ("another argument may broadcast into t", "t = x * 2.0\nv = t * y\nreturn v"),
    ("the operand has more rows", "t = x[1:] * 2.0\nv = t * x\nreturn v"),
    ("x[:0] has no rows", "t = x * 2.0\nv = t * x[:0]\nreturn v"),
    ("rows cut differently", "t = x[1:] * 2.0\nv = t * x[:-2]\nreturn v"),
    ("a division in the operand may widen t", "t = x * 2.0\nv = t * (y / 3.0)\nreturn v"),
    ("in a loop", "for i in range(2):\n    t = x * 2.0\n    v = t * 3.0\nreturn v"),
    ("v is an argument", "t = x * 2.0\ny = t * 3.0\nreturn y"),
    ("v is read before", "v = x * 1.0\nw = v + 1.0\nt = x * 2.0\nv = t * 3.0\nreturn (v, w)"),
    # (the original raises UnboundLocalError; named v early, t's value would be read)
    ("v is read before it is given a value", "t = x * 2.0\nw = v + 1.0\nv = t * 3.0\nreturn w"),
    ("t on the right of a subtraction", "t = x * 2.0\nv = 3.0 - t\nreturn v"),
    ("t given two values", "t = x * 2.0\nt = t + 1.0\nv = t * 3.0\nreturn v"),
    ("a matrix product: shape unknown", "t = x @ y\nv = t * 2.0\nreturn v"),
    # (a callee's fused function, cut here into f_fwd and f_bwd: t would be in the record)
    (
        "t crosses the cut between primal and adjoint",
        "t = x * 2.0\nout = np.sum(x)\n__srcgrad_adjoint_sweep__(out)\nv = t * 3.0\nreturn v",
    ),
]


@pytest.mark.parametrize("why, code", LEFT_ALONE, ids=[w for w, _ in LEFT_ALONE])
def test_left_alone(why: str, code: str) -> None:
    assert _pass(code) == ast.unparse(ast.parse(code)), why


def test_writing_in_place_would_have_broken_them() -> None:
    """The refusals matter: the same bodies written in place by hand change a caller's
    array, a returned value, or a result's dtype or shape."""
    x = np.arange(6.0).reshape(2, 3)
    kept = x.copy()
    t = x.T
    t *= 2.0  # (t = x.T; v = t * 2.0 in place)
    assert not np.array_equal(x, kept)
    t = np.arange(3) * 2  # an integer array: the float step cannot go in place
    with pytest.raises(TypeError):  # (numpy's UFuncTypeError)
        t /= 2
    t = np.ones(3, dtype=np.float32) * 2.0
    wide = t * (np.arange(3, dtype=np.int8) * 1.0)
    t *= np.arange(3, dtype=np.int8) * 1.0  # float64 operand, cast down into float32
    assert wide.dtype == np.float64 and t.dtype == np.float32
    t = np.ones(3) * 2.0
    with pytest.raises(ValueError):
        t *= np.ones((2, 3))  # broadcasting grows the result: no room in t


#: (body, arguments, what the pass writes)
REWRITTEN = [
    (
        "t = x * 2.0\nv = t * x\nreturn v",
        "x",
        "v = x * 2.0\nv *= x\nreturn v",
    ),
    (
        "t = x[1:] * 2.0\nv = t * x[:-1] - x[1:]\nreturn v",
        "x",
        "v = x[1:] * 2.0\nv *= x[:-1]\nv -= x[1:]\nreturn v",
    ),
    (
        "t = np.exp(x)\nv = 3.0 * t\nw = v / 2.0\nreturn w",
        "x",
        "w = np.exp(x)\nw *= 3.0\nw /= 2.0\nreturn w",
    ),
    (
        "v = 1.0 / (1.0 + x * x) * x * 2\nreturn v",
        "x",
        "v = 1.0 / (1.0 + x * x)\nv *= x\nv *= 2\nreturn v",
    ),
    (
        "v = (x - 1.0) ** 2\nreturn v",
        "x",
        "v = x - 1.0\nv **= 2\nreturn v",
    ),
]


@pytest.mark.parametrize("code, arguments, after", REWRITTEN)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rewritten_same_bits(code: str, arguments: str, after: str, dtype: type) -> None:
    got = _pass(code, arguments, floats=arguments)
    assert got == ast.unparse(ast.parse(after))
    before_f, after_f = _function(code, arguments), _function(got, arguments)
    rng = np.random.default_rng(0)
    args = [rng.uniform(0.5, 1.5, 7).astype(dtype) for _ in arguments.split()]
    kept = [a.copy() for a in args]
    want, have = before_f(*args), after_f(*args)
    assert have.dtype == want.dtype and have.shape == want.shape
    np.testing.assert_array_equal(have, want)
    for a, k in zip(args, kept):
        np.testing.assert_array_equal(a, k)


def test_the_users_variable_keeps_its_name() -> None:
    """A variable of the user's is neither renamed into the adjoint that reuses its
    array nor computed in steps: the user's lines stay as written (the compiler's
    temporaries and adjoints are rewritten)."""
    code = "c = x * 2.0\nv = c * 3.0\nreturn v"
    body = ast.parse(code).body
    ctx = _ctx("x", "x")
    users = Context(params=ctx.params | {"c"}, arguments=ctx.arguments, xp="np", floats=ctx.floats)
    kept, changed = reuse_dead_buffers(body, users)
    assert not changed
    assert ast.unparse(ast.Module(body=kept, type_ignores=[])) == code
    assert _pass(code, "x", "x") == "v = x * 2.0\nv *= 3.0\nreturn v"
    for code in ("t1 = x * 2.0\nc = t1 * 3.0\nreturn c", "c = (x + 1.0) * 2.0\nreturn c"):
        kept, changed = reuse_dead_buffers(ast.parse(code).body, users)
        assert not changed, code


def test_not_a_float_argument_no_float_operand() -> None:
    """Without the proof that ``x`` holds floats, ``x`` may be an integer array that a
    float operand would widen: only number constants go in place then."""
    assert _pass("t = x * 2.0\nv = t * x\nreturn v", "x", floats="") == (
        "t = x * 2.0\nv = t * x\nreturn v"
    )
    assert _pass("t = x * 2.0\nv = t * 3\nreturn v", "x", floats="") == (
        "v = x * 2.0\nv *= 3\nreturn v"
    )


# -- user functions whose generated code writes in place ---------------------------------


def squared_steps(x):
    a = x[1:] - x[:-1]
    return np.sum(np.log(1.0 + a * a))


def shifted_cube(x):
    return np.sum((x - 1.0) ** 3 / 3.0)


def product_of_neighbours(x):
    return np.sum(np.exp(1.0 - x[1:] * x[:-1]) * 0.5)


def returns_its_input_scaled(x):
    y = x * 2.0
    return np.sum(y * y) + np.sum(x)


def calls_a_helper(x):
    return squared_steps(x) + squared_steps(2.0 * x)


def calls_in_a_loop(x):
    s = 0.0
    for k in range(3):
        s = s + squared_steps(x * (k + 1.0))
    return s


# (the last two: squared_steps's pair, squared_steps_fwd and _bwd, writes in place)
USER = [squared_steps, shifted_cube, product_of_neighbours, calls_a_helper, calls_in_a_loop]


def _source(f, *args, **kw) -> str:
    d = srcgrad.grad(f, **kw)
    d(*args)
    return d.source


def _augmented(source: str) -> int:
    """How many statements of ``source`` are ``v op= e`` on a plain name."""
    found = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.AugAssign)]
    return sum(isinstance(n.target, ast.Name) for n in found)


@pytest.mark.parametrize("f", USER, ids=lambda f: f.__name__)
def test_generated_code_writes_in_place(f, monkeypatch) -> None:
    """The pass rewrites these functions' code (each test below would pass without it)."""
    x = np.linspace(0.2, 0.9, 6)
    srcgrad.cache._CACHE.clear()
    with_pass = _source(f, x)
    after = tuple(p for p in optimize_package.AFTER if p is not reuse_dead_buffers)
    monkeypatch.setattr(optimize_package, "AFTER", after)
    srcgrad.cache._CACHE.clear()
    without = _source(f, x)
    srcgrad.cache._CACHE.clear()
    assert _augmented(with_pass) > _augmented(without)


@pytest.mark.parametrize("f", USER, ids=lambda f: f.__name__)
def test_against_finite_differences_to_second_order(f) -> None:
    x = np.linspace(0.2, 0.9, 6)
    check_grads(f, (x,), modes=("forward", "reverse"), order=2)


@pytest.mark.parametrize("f", USER, ids=lambda f: f.__name__)
def test_against_autograd(f) -> None:
    x = np.linspace(0.2, 0.9, 6)
    twin = autograd_twin(f)
    want = autograd.grad(twin)(x)
    np.testing.assert_allclose(srcgrad.grad(f)(x), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(srcgrad.grad(f, mode="forward")(x), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        srcgrad.hessian(f)(x), autograd.hessian(twin)(x), rtol=1e-10, atol=1e-12
    )


def through_transpose(x):
    t = x.T
    v = t * 2.0
    return np.sum(v * x.T)


def through_view(x):
    t = x[:]
    v = t * 2.0 + x
    return np.sum(np.sin(v) * t)


def through_asarray(x):
    t = np.asarray(x)
    v = (t - 1.0) * 2.0
    return np.sum(v * v * t)


def through_reshape(x):
    t = x.reshape(-1)
    v = (t + 1.0) * t
    return np.sum(v * t) + np.sum(x)


def with_integers(x, n):
    t = n * 2
    v = t * 3
    return np.sum(x * v * (x - 1.0) * 2.0)


def broadcasting(x, y):
    t = x * 2.0
    v = (t + 1.0) * y
    return np.sum(v * v)


def _args(f, dtype):
    x = np.linspace(0.2, 0.9, 6).astype(dtype)
    if f is through_transpose or f is through_reshape:
        x = x.reshape(2, 3)
    if f is with_integers:
        return (x, np.arange(6))
    if f is broadcasting:
        return (x.reshape(6, 1), np.linspace(1.0, 2.0, 4).astype(dtype).reshape(1, 4))
    return (x,)


HOSTILE = [through_transpose, through_view, through_asarray, through_reshape]
HOSTILE += [with_integers, broadcasting]


@pytest.mark.parametrize("f", HOSTILE, ids=lambda f: f.__name__)
def test_hostile_against_finite_differences_and_autograd(f) -> None:
    args = _args(f, np.float64)
    check_grads(f, args, modes=("forward", "reverse"), order=2)
    if f is not through_asarray:  # (autograd has no derivative of np.asarray)
        twin = autograd_twin(f)
        want = autograd.grad(twin)(*args)
        np.testing.assert_allclose(srcgrad.grad(f)(*args), want, rtol=1e-12)


ALL = [*USER, returns_its_input_scaled, *HOSTILE]


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_same_bits_as_without_the_pass(f, dtype, mode, monkeypatch) -> None:
    """The gradient with the pass is the gradient without it, bit for bit, and neither
    changes the caller's arrays or returns one of them."""
    args = _args(f, dtype)
    kept = [a.copy() for a in args]
    srcgrad.cache._CACHE.clear()
    with_pass = srcgrad.grad(f, mode=mode)(*args)
    srcgrad.cache._CACHE.clear()
    after = tuple(p for p in optimize_package.AFTER if p is not reuse_dead_buffers)
    monkeypatch.setattr(optimize_package, "AFTER", after)
    without = srcgrad.grad(f, mode=mode)(*args)
    monkeypatch.undo()
    srcgrad.cache._CACHE.clear()
    assert with_pass.dtype == without.dtype
    np.testing.assert_array_equal(with_pass, without)
    for a, k in zip(args, kept):
        np.testing.assert_array_equal(a, k)
        assert not np.shares_memory(with_pass, a)
