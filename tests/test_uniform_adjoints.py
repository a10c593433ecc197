"""Adjoints equal in every element (``np.sum(t)``'s gradient is ``g`` everywhere) held as
one number inside loops and branches too, not only at the top level (issue 19): a loop
of ``s = s + np.sum(w * X[i])`` adds ``X[i]`` into ``w_bar`` each trip, with no array
of ones built and multiplied; and an accumulation ``v = v - e`` into an array no one else
sees is written in place (``v -= e``), as ``v = v + e`` already was, also where ``v`` is
read into new values (``t5_bar = u_bar * 0.1``; never into a view, the array itself, or
a user's function). The generated text, then values against autograd running the same
source and against central differences, to second order; the pass alone on small
blocks."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin, second_order_agrees

import srcgrad

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from workloads import rows as rows_squashed  # noqa: E402  (the benchmark's rows workload)

RNG = np.random.default_rng(19)


def rows_summed(w, X):
    s = 0.0
    for i in range(X.shape[0]):
        s = s + np.sum(w * X[i])
    return s


def branch_of_sums(x, w):
    a = np.sum(x * w)
    if a > 0:
        r = a - np.sum(w * w)
    else:
        r = np.sum(x * x) + a
    return r


def summed_twice(w, X):
    """``np.sum(t)`` of a ``t`` that is read twice: its adjoint is an array."""
    s = 0.0
    for i in range(X.shape[0]):
        t = w * X[i]
        s = s + np.sum(t) + np.sum(t * t)
    return s


def broadcast_rows(w, X):
    """``w`` of one element broadcast against a row: its adjoint sums, never a number
    standing for an array of the row's shape."""
    s = 0.0
    for i in range(X.shape[0]):
        s = s + np.sum(w * X[i])
    return s


def _function(source: str, name: str) -> ast.FunctionDef:
    tree = ast.parse(source)
    (found,) = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name]
    return found


def _loop_body(fn: ast.FunctionDef) -> list[str]:
    loops = [s for s in fn.body if isinstance(s, ast.For)]
    return [ast.unparse(s) for s in loops[-1].body]


def test_a_loop_of_sums_adds_the_row():
    g = srcgrad.grad(rows_summed)
    g(RNG.standard_normal(3), RNG.standard_normal((4, 3)))
    fn = _function(g.source, "grad_rows_summed")
    assert _loop_body(fn) == ["w_bar += X[i]"], g.source
    assert "full_like" not in g.source


def test_a_squashed_sum_multiplies_by_its_number():
    g = srcgrad.grad(rows_squashed)
    g(RNG.standard_normal(3), RNG.standard_normal((4, 3)))
    fn = _function(g.source, "grad_rows")
    assert _loop_body(fn)[-1] == "w_bar += level * X[i]", g.source
    assert "full_like" not in g.source
    assert "broadcast_shapes" not in g.source


def test_branches_subtract_in_place():
    g = srcgrad.grad(branch_of_sums, wrt=(0, 1))
    g(RNG.standard_normal(3), RNG.standard_normal(3))
    fn = _function(g.source, "grad_branch_of_sums")
    text = ast.unparse(fn)
    assert "w_bar -= w" in text and "w_bar = w_bar" not in text, text
    assert "full_like" not in text


CASES = [
    (rows_summed, (RNG.standard_normal(3), RNG.standard_normal((4, 3))), (0, 1)),
    (rows_squashed, (RNG.standard_normal(3), RNG.standard_normal((4, 3))), (0, 1)),
    (branch_of_sums, (np.array([0.5, 1.0, 2.0]), np.array([1.0, 0.5, 0.2])), (0, 1)),
    (branch_of_sums, (np.array([-0.5, 1.0, -2.0]), np.array([1.0, 0.5, 0.2])), (0, 1)),
    (summed_twice, (RNG.standard_normal(3), RNG.standard_normal((4, 3))), (0, 1)),
    (broadcast_rows, (np.array([0.7]), RNG.standard_normal((4, 3))), (0, 1)),
]


@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_against_autograd(f, args, wrt, mode):
    twin = autograd_twin(f)
    got = srcgrad.grad(f, wrt=wrt, mode=mode)(*args)
    for k, g in zip(wrt, got):
        np.testing.assert_allclose(g, autograd.grad(twin, k)(*args), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_second_order(f, args, wrt):
    second_order_agrees(f, autograd_twin(f), args, wrt)


# -- v = v + e in place, where v's array is read only into new values --------------------------
def _in_place(source: str, primal_of: dict[str, str] | None = None) -> str:
    from srcgrad.compiler.optimize import Context, accumulate_in_place

    body = ast.parse(source).body
    ctx = Context(
        params=frozenset({"u", "k", "keep", "x", "w"}),
        arguments=frozenset({"u", "k", "keep", "x", "w"}),
        xp="np",
        helpers={"index_adjoint": "index_adjoint", "zero_adjoint": "zero_adjoint"},
        primal_of=primal_of or {},
    )
    body, _ = accumulate_in_place(body, ctx)
    return ast.unparse(ast.Module(body=body, type_ignores=[]))


ACCUMULATED = """
u_bar = u * 2
t5_bar = {read}
u_bar = u_bar - t5_bar * k
return (u_bar, t5_bar)
"""


@pytest.mark.parametrize(
    "read, in_place",
    [
        ("u_bar * 0.1", True),  # a new array
        ("np.cos(u_bar)", True),  # a new array, by the array module
        ("u_bar[1:]", False),  # a view: the write in place would change it
        ("u_bar", False),  # the array itself
        ("np.asarray(u_bar)", False),  # the array itself, through a call
        ("keep(u_bar) * 2", False),  # a user's function may keep the array
    ],
)
def test_a_read_blocks_writing_in_place_unless_it_makes_a_new_array(read, in_place):
    text = _in_place(ACCUMULATED.format(read=read))
    assert ("u_bar -= t5_bar * k" in text) is in_place, text


def test_a_zero_of_a_kind_not_known_is_not_written_into():
    """``zero_adjoint(x)`` of a number is a 0-d array, which a loop's array tangent
    cannot be added into in place (``invariant_in_loop`` of the corpus, forward mode)."""
    text = _in_place("x_dot = zero_adjoint(x)\nfor _ in t1:\n    x_dot = x_dot + a * 0.1")
    assert "x_dot = x_dot + a * 0.1" in text, text


def _as_ints(v):
    return np.asarray(v * 2.0, dtype=int)


CAST_ON_ONE_PATH = """
import numpy as np


def f(x, y, n):
    c = np.sin(y)
    if n > 2:
        return np.sum(c * x)
    if np.mean(c) < 1.0 or n < 0:
        y = {cast}
    return np.mean(x / (1.0 + y * y))
"""


def _cast_on_one_path(cast: str, directory: Path):
    """``f`` of CAST_ON_ONE_PATH with ``cast``, from a file (srcgrad reads the source)."""
    import importlib.util

    name = "cast_on_one_path"
    path = directory / f"{name}.py"
    path.write_text(CAST_ON_ONE_PATH.format(cast=cast))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module._as_ints = _as_ints
    spec.loader.exec_module(module)
    return module.f


@pytest.mark.parametrize(
    "cast, made",
    [
        ("np.asarray(y * y, dtype=int)", lambda y: np.trunc(y * y)),
        ("np.round(y * y).astype(np.int64)", lambda y: np.round(y * y)),
        ("_as_ints(y)", lambda y: np.trunc(y * 2.0)),  # a helper's integers
        ("y > 0.5", lambda y: (y > 0.5).astype(float)),  # a mask
    ],
    ids=["asarray", "astype", "helper", "mask"],
)
@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_zero_made_like_an_integer_cast_is_not_written_into(cast, made, n, mode, tmp_path):
    """``y_bar = np.zeros_like(y)`` where a cast gives ``y`` integers on one path is an
    integer array there: ``y_bar += t_bar * y`` raised (found by the thorough random
    programs); a bool ``y``'s zero tangent was a bool array, which ``-`` refuses. The
    derivative through the integer ``y`` is zero; through the float one, kept."""
    f = _cast_on_one_path(cast, tmp_path)
    x, y = np.array([0.5, -1.5]), np.array([1.8, -1.2])
    g = srcgrad.grad(f, wrt=(0, 1), mode=mode)
    gx, gy = g(x, y, n)
    if n > 2:
        want_x, want_y = np.sin(y), np.cos(y) * x
    else:
        want_x, want_y = 1.0 / (2 * (1.0 + made(y) ** 2)), np.zeros(2)
    np.testing.assert_allclose(gx, want_x, rtol=1e-12)
    np.testing.assert_allclose(gy, want_y, rtol=1e-12)
    if mode == "reverse":
        assert "y_bar += " not in g.source, g.source
    for k in (0, 1):
        h = srcgrad.hessian(f, wrt=k)(x, y, n)
        want = np.diag(-np.sin(y) * x) if n > 2 and k == 1 else np.zeros((2, 2))
        np.testing.assert_allclose(h, want, atol=1e-12)


# -- np.full_like(x, g) added into x's adjoint: g, broadcast by the addition ------------------
@pytest.mark.parametrize(
    "start, added, expected",
    [
        ("np.zeros_like(x)", "np.full_like(x, g)", "x_bar += g"),
        ("np.zeros_like(x)", "np.full_like(x, g) * i", "x_bar += g * i"),
        ("np.zeros_like(x)", "np.full_like(w, g)", "x_bar += np.full_like(w, g)"),  # not x's
        ("np.zeros_like(x)", "np.sum(np.full_like(x, g))", "x_bar += np.sum(np.full_like(x, g))"),
        # a product may be a number, or an array of another shape: the full array stays
        ("g * w", "np.full_like(x, g)", "x_bar += np.full_like(x, g)"),
    ],
)
def test_a_fill_added_into_its_arrays_adjoint_is_its_value(start, added, expected):
    source = f"x_bar = {start}\nx_bar = x_bar + {added}\nreturn x_bar"
    text = _in_place(source, {"x_bar": "x", "w_bar": "w"})
    assert expected in text, text


def columns(X):
    s = np.sum(X)
    for j in range(X.shape[1]):
        s = s + np.sum(np.sin(X[:, j]))
    return s


def test_a_sum_beside_a_loop_adds_its_number():
    g = srcgrad.grad(columns)
    X = RNG.standard_normal((3, 4))
    g(X)
    text = ast.unparse(_function(g.source, "grad_columns"))
    assert "X_bar += 1.0" in text and "full_like" not in text, text
    second_order_agrees(columns, autograd_twin(columns), (X,), (0,))


# -- a float constant times a mask is not the mask -------------------------------------------
def masks_scaled(x, y):
    b = np.tanh(np.sum(y))
    m = x > 0.25
    s = np.sum(np.sin(-1.0 * (b > 0.25)) * x) + np.sum(np.sin(1.0 * m) * x)
    return s + np.sum(-1.0 * m * x)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_float_constant_times_a_mask_stays(mode):
    """``-1.0 * (b > 0.25)`` was folded to ``-(b > 0.25)``, which numpy refuses for bools
    (found by the thorough random programs, which draw masks); ``1.0 * m`` to ``m``, whose
    sine is a float16."""
    x, y = np.array([0.1, 0.5, 0.9]), np.array([0.3, 0.4, 0.2])
    value, (gx, gy) = srcgrad.value_and_grad(masks_scaled, wrt=(0, 1), mode=mode)(x, y)
    assert value == masks_scaled(x, y)
    np.testing.assert_allclose(gx, np.sin(-1.0) + np.sin(1.0 * (x > 0.25)) - (x > 0.25))
    np.testing.assert_array_equal(gy, np.zeros(3))
    np.testing.assert_array_equal(srcgrad.hessian(masks_scaled)(x, y), np.zeros((3, 3)))
    twin = autograd_twin(masks_scaled)
    np.testing.assert_allclose(gx, autograd.grad(twin)(x, y), rtol=1e-12)


def integers_scaled(x, k):
    return np.sum(x * (1.0 * k) ** -1)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_float_constant_times_an_integer_array_stays(mode):
    """``(1.0 * k) ** -1`` was folded to ``k ** -1``, which numpy refuses for integers."""
    x, k = np.array([0.5, 1.0]), np.array([2, 4])
    np.testing.assert_allclose(srcgrad.grad(integers_scaled, mode=mode)(x, k), 1.0 / k)
