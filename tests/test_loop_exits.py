"""Loops with ``break`` (issue 19): where the break comes first in the body, reverse mode
counts the trips that ran the rest and records no flag per trip; integer counters
(``i += 1`` from ``i = 0``) are stepped back down in the adjoint, not recorded, and what
is read through them (``x[i]``, ``np.sin(x[i])``) is computed again.

Values against autograd running the same source (``autograd_oracle.autograd_twin``) and
central differences, in both modes and to second order, on the shapes the tape plan
changes and on those it must leave to the general path (a break after an active update,
a float counter, a counter stepped by something else, a value read after its counter's
step, nested loops, ``continue``); the generated text of the two shapes against the text
a person writes.
"""

from __future__ import annotations

import ast
import re
import textwrap

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads


def while_break(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        if x[i] > t:
            break
        s = s + np.sin(x[i]) * x[i]
        i += 1
    return s


def for_break(x, t):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > t:
            break
        s = s + np.sin(x[i]) * x[i]
    return s


def break_at_end(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        s = s + x[i] * x[i]
        i += 1
        if s > t:
            break
    return s


def break_between_updates(x, t):
    i = 0
    s = 1.0
    while i < x.shape[0]:
        s = s + np.cos(x[i])
        if s > t:
            break
        s = s * x[i]
        i += 1
    return s


def float_counter(x, t):
    c = 0.0
    s = 0.0
    while c < 3.0:
        if s > t:
            break
        s = s + np.sin(x[0] * c) * x[1]
        c += 0.5
    return s


def counter_jumps(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        if x[i] > t:
            break
        s = s + np.sin(x[i]) * x[i]
        i = 2 * i + 1
    return s


def two_steps(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        if x[i] > t:
            break
        s = s + np.exp(x[i]) * s + x[i]
        if x[i] < 0.2:
            i += 2
        else:
            i += 1
    return s


def read_after_step(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        if x[i] > t:
            break
        v = x[i]
        w = np.sin(v)
        i += 1
        s = s + v * w
    return s


def step_before_break(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        i += 1
        if x[i - 1] > t:
            break
        s = s + np.sin(x[i - 1]) * x[i - 1]
    return s


def nested_break(X, t):
    s = 0.0
    for r in range(X.shape[0]):
        j = 0
        while j < X.shape[1]:
            if X[r, j] > t:
                break
            s = s + X[r, j] * np.cos(X[r, j]) * s + X[r, j]
            j += 1
    return s


def continue_and_break(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        i += 1
        if x[i - 1] < 0.1:
            continue
        if x[i - 1] > t:
            break
        s = s + x[i - 1] ** 3 * s + x[i - 1]
    return s


def break_then_product(x, t):
    p = 1.0
    for i in range(x.shape[0]):
        if p > t:
            break
        p = p * np.sin(x[i] + 1.0)
    return p


X = np.array([0.3, -0.5, 0.8, 1.4, 0.2, 0.6])
M = np.array([[0.3, 0.5, 1.5, 0.2], [0.9, 0.1, 0.4, 0.7], [1.2, 0.3, 0.2, 0.1]])
CASES = [
    (while_break, (X, 1.0)),  # breaks on the fourth trip
    (while_break, (X, 0.1)),  # breaks on the first trip
    (while_break, (X, 5.0)),  # no break
    (for_break, (X, 1.0)),
    (for_break, (X, 0.1)),
    (for_break, (X, 5.0)),
    (break_at_end, (X, 0.5)),
    (break_at_end, (X, 50.0)),
    (break_between_updates, (X, 1.5)),
    (break_between_updates, (X, 50.0)),
    (float_counter, (X, 0.4)),
    (float_counter, (X, 50.0)),
    (counter_jumps, (X, 1.0)),
    (counter_jumps, (X, 0.5)),
    (two_steps, (X, 1.0)),
    (read_after_step, (X, 1.0)),
    (step_before_break, (X, 1.0)),
    (step_before_break, (X, 0.1)),
    (nested_break, (M, 1.0)),
    (nested_break, (M, 0.25)),
    (continue_and_break, (X, 1.0)),
    (continue_and_break, (X, 50.0)),
    (break_then_product, (X, 0.5)),
    (break_then_product, (X, -1.0)),  # breaks on the first trip
]
IDS = [f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)]


@pytest.mark.parametrize("func, args", CASES, ids=IDS)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_gradient_agrees_with_autograd(func, args, mode):
    twin = autograd_twin(func)
    expected = autograd.grad(twin)(*args)
    np.testing.assert_allclose(srcgrad.grad(func, mode=mode)(*args), expected, rtol=1e-10)
    value, gradient = srcgrad.value_and_grad(func)(*args)
    np.testing.assert_allclose(value, twin(*args), rtol=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-10)


@pytest.mark.parametrize("func, args", CASES, ids=IDS)
def test_hessian_agrees_with_autograd(func, args):
    expected = autograd.hessian(autograd_twin(func))(*args)
    np.testing.assert_allclose(srcgrad.hessian(func)(*args), expected, rtol=1e-9, atol=1e-12)
    inner = srcgrad.grad(func)
    np.testing.assert_allclose(srcgrad.jacobian(inner)(*args), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("func, args", CASES, ids=IDS)
def test_finite_differences_to_second_order(func, args):
    check_grads(func, args, order=2)


@pytest.mark.parametrize("func", [while_break, for_break])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_zero_trips(func, mode):
    empty = np.zeros(0)
    assert srcgrad.grad(func, mode=mode)(empty, 1.0).shape == (0,)
    assert srcgrad.value_and_grad(func)(empty, 1.0)[0] == 0.0


EXPECTED_WHILE = """
def grad_while_break(x, t):
    i = 0
    trips = 0
    while i < x.shape[0]:
        if x[i] > t:
            break
        trips = trips + 1
        i = i + 1
    x_bar = np.zeros_like(x)
    for _ in range(trips):
        i = i - 1
        x_bar[i] += np.sin(x[i])
        x_bar[i] += x[i] * np.cos(x[i])
    return x_bar
"""

EXPECTED_FOR = """
def grad_for_break(x, t):
    t3 = range(x.shape[0])
    trips = 0
    for i in t3:
        if x[i] > t:
            break
        trips = trips + 1
    x_bar = np.zeros_like(x)
    for i in reversed(t3[:trips]):
        x_bar[i] += np.sin(x[i])
        x_bar[i] += x[i] * np.cos(x[i])
    return x_bar
"""


def _function(source: str, name: str) -> str:
    """One function of a module, as ``ast.unparse`` writes it (comments left out)."""
    tree = ast.parse(source)
    (found,) = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name]
    return ast.unparse(found)


@pytest.mark.parametrize(
    "func, expected", [(while_break, EXPECTED_WHILE), (for_break, EXPECTED_FOR)]
)
def test_written_as_by_hand(func, expected):
    g = srcgrad.grad(func)
    g(X, 1.0)
    name = f"grad_{func.__name__}"
    assert _function(g.source, name) == _function(textwrap.dedent(expected), name)
    assert "tape" not in g.source
    assert "# grad of: s = s + np.sin(x[i]) * x[i]" in g.source


def _pushes(func, args) -> int:
    g = srcgrad.grad(func)
    g(*args)
    return g.source.count(".append(")


def test_the_general_path_records_what_it_must():
    # a value read after its counter's step is recorded, not read again through i
    assert _pushes(read_after_step, (X, 1.0)) >= 1
    # a counter stepped by something other than a constant is recorded
    assert _pushes(counter_jumps, (X, 1.0)) >= 1
    # an active update before the break: s is recorded (twice a trip), the guard's flag
    # not (restored to True: every trip but the last passed it)
    assert _pushes(break_between_updates, (X, 1.5)) == 2


def nested_update_before_break(X, t):
    s = 0.0
    for r in range(X.shape[0]):
        j = 0
        while j < X.shape[1]:
            s = s + X[r, j] * np.cos(X[r, j])
            if s > t:
                break
            j += 1
    return s * s


def test_a_guard_flag_is_restored_to_true_not_recorded():
    """The guard's test ``t = not broke`` is the flag itself: the loop keeps its
    ``break`` (``broke = True; break``), the adjoint tests ``not broke`` and restores
    ``broke = False`` after each reversed trip, and neither is recorded."""
    g = srcgrad.grad(break_between_updates)
    g(X, 1.5)
    primal, adjoint = g.source.split("for _ in range(trips)")
    assert re.search(r"^ +broke = True\n +break$", primal, re.M), primal
    assert re.search(r"^ +broke = False$", adjoint, re.M) and "if not broke:" in adjoint
    assert "not broke" not in primal and not re.search(r"\bt\d+\b", primal + adjoint)
    assert adjoint.count(".pop()") == 2  # (s's two values a trip)


@pytest.mark.parametrize("t", [0.5, 1.0, 100.0])  # (breaks early, late, never)
def test_a_guard_flag_in_an_inner_loop_is_recorded(t):
    """The flag of an inner loop's last trip is overwritten by the next outer trip's:
    restoring True there would be wrong, so it is recorded."""
    g = srcgrad.grad(nested_update_before_break)
    expected = autograd.grad(autograd_twin(nested_update_before_break))(M, t)
    np.testing.assert_allclose(g(M, t), expected, rtol=1e-12, atol=1e-12)
    assert not re.search(r"^ +t\d+ = True$", g.source, re.M)
    for case in [(X, 1.5), (X, 0.1), (X, 100.0)]:  # (and the loop in no other loop)
        want = autograd.grad(autograd_twin(break_between_updates))(*case)
        np.testing.assert_allclose(srcgrad.grad(break_between_updates)(*case), want, rtol=1e-12)
