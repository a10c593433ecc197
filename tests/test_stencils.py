"""In-place slice stencils in loops, recursion records and callees with a break (issue
19): reverse mode records only what its adjoint reads, so the code it generates can be
differentiated again.

A view read only for its shape (``u[2:]`` in ``u[1:-1] = u[1:-1] + r * (u[2:] - ...)``)
is never recorded: its shape is taken again from ``u``, which writes into items keep.
A view read for its value is taken again where the adjoint reads it (the writes after it
undone by then). A loop reading items of an array it increments adds their adjoints into
``u_bar``'s items in place. A callee's record leaves out a product of values it holds
anyway, and its adjoint pops a copy of the record's tape.

Values against autograd (a functional twin where the function writes into items, which
autograd cannot) and central differences, both modes, to second order; the generated
code's tape pushes per trip; and hostile shapes (an array rebound in the loop, so its
views change shape; a view passed to a callee before a write) against finite
differences.
"""

from __future__ import annotations

import ast
import textwrap

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

# -- stencils, each with a twin autograd can run (no writes into items) -------------------


def heat(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def heat_twin(u0, r, steps):
    u = u0
    for _ in range(steps):
        u = anp.concatenate([u[:1], u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]), u[-1:]])
    return anp.sum(u * u)


def wide(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        u[2:-2] += r * (u[4:] - 2.0 * u[2:-2] + u[:-4])
    return np.sum(u * u * u)


def wide_twin(u0, r, steps):
    u = u0
    for _ in range(steps):
        u = anp.concatenate([u[:2], u[2:-2] + r * (u[4:] - 2.0 * u[2:-2] + u[:-4]), u[-2:]])
    return anp.sum(u * u * u)


def cubic(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]) - 0.1 * u[1:-1] ** 3
    return np.sum(np.sin(u))


def cubic_twin(u0, r, steps):
    u = u0
    for _ in range(steps):
        inner = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]) - 0.1 * u[1:-1] ** 3
        u = anp.concatenate([u[:1], inner, u[-1:]])
    return anp.sum(anp.sin(u))


def plate(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + r * (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        )
    return np.sum(u * u)


def plate_twin(u0, r, steps):
    u = u0
    for _ in range(steps):
        inner = u[1:-1, 1:-1] + r * (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        )
        middle = anp.concatenate([u[1:-1, :1], inner, u[1:-1, -1:]], axis=1)
        u = anp.concatenate([u[:1], middle, u[-1:]], axis=0)
    return anp.sum(u * u)


def shrinking(u0, r, steps):
    u = u0.copy()
    for i in range(steps):
        u[i + 1 :] = u[i + 1 :] + r * u[i:-1] * u[i + 1 :]
    return np.sum(u * u)


def shrinking_twin(u0, r, steps):
    u = u0
    for i in range(steps):
        u = anp.concatenate([u[: i + 1], u[i + 1 :] + r * u[i:-1] * u[i + 1 :]])
    return anp.sum(u * u)


RNG = np.random.default_rng(19)
STENCILS = [
    (heat, heat_twin, RNG.standard_normal(8), 3),
    (heat, heat_twin, RNG.standard_normal(5), 1),
    (wide, wide_twin, RNG.standard_normal(9), 3),
    (cubic, cubic_twin, RNG.standard_normal(7), 3),
    (plate, plate_twin, RNG.standard_normal((5, 6)), 2),
    (shrinking, shrinking_twin, RNG.standard_normal(6), 4),
]
IDS = [f"{f.__name__}-{steps}" for f, _, _, steps in STENCILS]


@pytest.mark.parametrize("f, twin, u0, steps", STENCILS, ids=IDS)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_gradient_agrees_with_autograd(f, twin, u0, steps, mode):
    args = (u0, 0.2, steps)
    got = srcgrad.grad(f, wrt=(0, 1), mode=mode)(*args)
    want = autograd.grad(twin, (0, 1))(*args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f, twin, u0, steps", STENCILS, ids=IDS)
def test_second_order_agrees_with_autograd(f, twin, u0, steps):
    args = (u0, 0.2, steps)
    want = autograd.hessian(twin, 0)(*args)
    np.testing.assert_allclose(srcgrad.hessian(f)(*args), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        srcgrad.hessian(f, wrt=1)(*args), autograd.hessian(twin, 1)(*args), rtol=1e-10, atol=1e-12
    )
    v = RNG.standard_normal(u0.shape)
    product = np.tensordot(want, v, axes=v.ndim)
    np.testing.assert_allclose(srcgrad.hvp(f)(*args, v), product, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f, twin, u0, steps", STENCILS[:1] + STENCILS[3:], ids=IDS[:1] + IDS[3:])
def test_finite_differences_to_second_order(f, twin, u0, steps):
    check_grads(f, (u0, 0.2, steps), wrt=(0, 1), modes=("forward", "reverse"), order=2)


def test_the_heat_equation_records_one_array_per_step():
    """The stencil's views are read only for their shapes: the tape holds each step's
    stencil (r's adjoint reads it) and nothing else; no old value of ``u`` is kept, and
    the reads of ``u[2:]``, ``u[1:-1]``, ``u[:-2]`` add into ``u_bar``'s items in place."""
    g = srcgrad.grad(heat, wrt=(0, 1))
    g(RNG.standard_normal(8), 0.25, 3)
    source = g.source
    assert source.count(".append(") == 1
    assert "tape.append(t8)" in source
    assert "np.copy(u[" not in source  # (no write into u undone)
    assert "u[1:-1] = tape.pop()" not in source
    assert "index_adjoint(" not in source
    for read in ("u_bar[:-2] += ", "u_bar[1:-1] += ", "u_bar[2:] += "):
        assert read in source


def test_a_view_read_for_its_value_is_taken_again():
    """``u[1:-1] ** 3`` reads the view's values: the write into ``u`` is undone (the one
    array per step recorded) and the view is taken again after it, not recorded; the
    temporaries whose shapes alone are read are not recorded either."""
    g = srcgrad.grad(cubic)
    g(RNG.standard_normal(7), 0.2, 3)
    source = g.source
    assert source.count(".append(") == 1
    assert "tape.append(np.copy(u[1:-1]))" in source
    assert "u[1:-1] ** 2" in source  # (the cube's derivative reads the view again)


# -- hostile: views whose array changes shape, or which a callee keeps ------------------


def growing(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        v = u[1:] * r
        u = np.concatenate([u, v[-1:] * u[:1]])
        u[0] = u[0] + np.sum(v)
    return np.sum(u * u)


def _scaled(v, r):
    return v * r


def view_to_callee(u0, r):
    u = u0.copy()
    w = _scaled(u[1:], r)
    u[1:] = u[1:] * 2.0
    return np.sum(w * w) + np.sum(u[1:] * w)


def slice_by_counter(u0, r, steps):
    u = u0.copy()
    k = 1
    for _ in range(steps):
        u[k:] = u[k:] + r * u[: u.shape[0] - k]
        k = k + 1
    return np.sum(u * u)


def element_across_write(u0, r):
    u = u0.copy()
    s = 0.0
    for i in range(1, u.shape[0]):
        a = u[i - 1 : i + 1].copy()
        b = u[i - 1]
        u[i - 1 : i + 1] = u[i - 1 : i + 1] * r
        s = s + np.sum(a * u[i - 1 : i + 1]) + b * u[i]
    return s


@pytest.mark.parametrize(
    "f, args",
    [
        (element_across_write, (np.linspace(0.1, 0.7, 5), 0.3)),
        (growing, (np.linspace(0.1, 0.7, 5), 0.3, 3)),
        (view_to_callee, (np.linspace(0.1, 0.7, 5), 0.3)),
        (slice_by_counter, (np.linspace(0.1, 0.7, 6), 0.3, 3)),
    ],
    ids=["read-after-write", "rebound", "callee", "counter"],
)
def test_views_of_changing_arrays(f, args):
    """Right to first order; to second, right or refused (a view recorded where its array
    changes shape, or its slice bounds change, as before), never wrong."""
    check_grads(f, args, wrt=(0, 1), modes=("forward", "reverse"))
    try:
        check_grads(f, args, wrt=(0, 1), modes=("forward", "reverse"), order=2)
    except srcgrad.UnsupportedSyntaxError as exc:
        assert "shares that memory" in str(exc)


# -- recursion: the record holds what the adjoint reads -----------------------------------


def power(x, n):
    if n == 0:
        return np.ones_like(x)
    h = power(x, n // 2)
    if n % 2 == 0:
        return h * h
    return x * h * h


def power_loss(x, n):
    return np.sum(power(x, n))


def test_the_power_record_holds_h_and_its_record():
    g = srcgrad.grad(power_loss)
    g(np.linspace(0.9, 1.1, 4), 13)
    assert "return (result, (h, h_rec))" in g.source
    assert "result_bar * (x * h)" in g.source  # (t5 = x * h read again, not recorded)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 13])
def test_power_to_second_order(n):
    x = np.linspace(0.8, 1.1, 4)
    twin = autograd_twin(power_loss)
    np.testing.assert_allclose(
        srcgrad.grad(power_loss)(x, n), autograd.grad(twin)(x, n), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        srcgrad.hessian(power_loss)(x, n), autograd.hessian(twin)(x, n), rtol=1e-10, atol=1e-12
    )


def _written(x):
    y = x * 1.0
    t = np.sin(y * x)
    y[0] = 5.0
    return np.sum(t * y)


def _calls_written(x):
    return _written(x) * 2.0


def test_a_product_of_a_written_array_is_recorded():
    """Where the callee writes into an array, a product of it is recorded, not read again
    (the write changes an operand between the product and its adjoint)."""
    x = np.linspace(0.2, 0.9, 4)
    check_grads(_calls_written, (x,), modes=("forward", "reverse"))
    g = srcgrad.grad(_calls_written)
    g(x)
    assert "np.cos(y * x)" not in g.source


# -- a callee with a while loop and a break, to second order ------------------------------


def walk(x, c):
    s = 0.0
    i = 0
    while i < x.shape[0]:
        s = s + np.sin(x[i]) * c
        if s > 2.0:
            break
        i += 1
    return s


def walk_squared(x, c):
    return walk(x, c) ** 2


@pytest.mark.parametrize("c", [0.3, 1.0, 5.0])
def test_callee_with_break_to_second_order(c):
    x = np.linspace(0.1, 1.0, 6)
    twin = autograd_twin(walk_squared)
    for wrt in (0, 1):
        np.testing.assert_allclose(
            srcgrad.hessian(walk_squared, wrt=wrt)(x, c),
            autograd.hessian(twin, wrt)(x, c),
            rtol=1e-10,
            atol=1e-12,
        )
    check_grads(walk_squared, (x, c), wrt=(0, 1), modes=("reverse",), order=2)


def test_callee_adjoint_leaves_its_record_as_it_was():
    """The record holds numbers only (the break flag, the counter, the trip count: the
    flag of every trip but the last is False, not recorded), which no adjoint changes."""
    g = srcgrad.grad(walk_squared)
    g(np.linspace(0.1, 1.0, 6), 1.0)
    assert "tape" not in g.source
    assert "return (s, (broke, i, trips))" in g.source


# -- a write's index the adjoint computes again ------------------------------------------


def scatter(x, w, idx):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[idx[i]] += w * x[i]
    return np.sum(y * y)


def shifted_writes(x, r):
    y = x.copy()
    for i in range(x.shape[0] - 1):
        y[i + 1] = y[i + 1] + r * np.sin(y[i])
    return np.sum(y * y)


def test_a_write_index_is_computed_again_not_recorded():
    """``y[idx[i]] += v``: the adjoint reads ``y_bar[idx[i]]`` (idx and i hold), so the
    scatter records nothing per trip, as a person writes it."""
    x, idx = np.linspace(-1.0, 1.0, 6), np.array([0, 2, 2, 5, 1, 0])
    g = srcgrad.grad(scatter, wrt=(0, 1))
    g(x, 0.5, idx)
    assert "tape" not in g.source
    assert "y_bar[idx[i]]" in g.source
    check_grads(scatter, (x, 0.5, idx), wrt=(0, 1), modes=("forward", "reverse"), order=2)


def test_a_shifted_write_to_second_order():
    x = np.linspace(-1.0, 1.0, 6)
    g = srcgrad.grad(shifted_writes, wrt=(0, 1))
    g(x, 0.3)
    assert "y_bar[i + 1]" in g.source  # (i + 1 is computed again, not recorded)
    assert g.source.count(".append(") == 2  # (y[i] and its sine: numbers)
    check_grads(shifted_writes, (x, 0.3), wrt=(0, 1), modes=("forward", "reverse"), order=2)


EXPECTED_HEAT = """
def grad_heat(u0, r, steps):
    tape = []
    t8 = None
    u = u0.copy()
    t1 = range(steps)
    for _ in t1:
        tape.append(t8)
        t8 = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u[1:-1] = u[1:-1] + r * t8
    r_bar = 0.0
    u_bar = u * 2
    for _ in reversed(t1):
        t9_bar = u_bar[1:-1]
        r_bar += np.vdot(t9_bar, t8)
        t8_bar = t9_bar * r
        t8 = tape.pop()
        u_bar[:-2] += t8_bar
        u_bar[1:-1] += t8_bar * -2.0
        u_bar[2:] += t8_bar
    return (u_bar, r_bar)
"""


def test_the_heat_gradient_as_written():
    """The generated text, against what it should be (comments left out): one push per
    step, no unbroadcast (r, a number, takes a dot product: one pass, no product array),
    reads added into u_bar's items in place, and the item of u_bar the step reads not
    copied (nothing writes into u_bar until its last read)."""
    g = srcgrad.grad(heat, wrt=(0, 1))
    g(RNG.standard_normal(8), 0.25, 3)
    tree = ast.parse(g.source)
    (found,) = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "grad_heat"]
    assert ast.unparse(found) == ast.unparse(ast.parse(textwrap.dedent(EXPECTED_HEAT)))


# -- a loop's if test computed again, not recorded -----------------------------------------


def leaky(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] * w > 0.0:
            s = s + x[i] * w
        else:
            s = s + 0.1 * x[i] * w
    return s


def step_in_branch(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0] - 1:
        if x[i] > t:
            s = s + x[i] * x[i + 1]
            i += 2
        else:
            s = s + np.sin(x[i])
            i += 1
    return s


def test_a_loop_test_is_computed_again():
    x = np.linspace(-1.0, 1.0, 7)
    g = srcgrad.grad(leaky, wrt=(0, 1))
    g(x, 0.7)
    assert "tape" not in g.source
    assert "if x[i] * w > 0.0:" in g.source
    assert "for i in t" not in g.source.split("reversed")[0]  # (no empty primal loop)
    twin = autograd_twin(leaky)
    for got, want in zip(g(x, 0.7), autograd.grad(twin, (0, 1))(x, 0.7), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("t", [-2.0, 0.0, 0.4, 2.0])
def test_a_test_whose_branch_steps_its_counter(t):
    """``x[i] > t`` with ``i`` stepped inside the branch: computed again after the step
    is undone, or recorded; right either way."""
    x = np.linspace(-1.0, 1.0, 8)
    twin = autograd_twin(step_in_branch)
    for mode in ("reverse", "forward"):
        got = srcgrad.grad(step_in_branch, mode=mode)(x, t)
        np.testing.assert_allclose(got, autograd.grad(twin)(x, t), rtol=1e-12, atol=1e-12)
    check_grads(step_in_branch, (x, t), modes=("reverse",), order=2)
