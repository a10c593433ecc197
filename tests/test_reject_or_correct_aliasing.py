"""Reject or be correct: aliases, views, in-place writes and repeated indices (issue 16,
families 1, 2 and 3, and the parts of 14, 16 and 17 they touch).

One row per variant. A row either expects the right derivative, checked against an oracle
that did not come from srcgrad (central finite differences of the user's function, run by
numpy alone, or a number derived by hand), in both modes; or a clear error: its class, a
fragment of its message, and the user's line it names.

1. Generated code must never let an adjoint share memory with an array that the backward
   sweep later writes into in place (``x_bar = y`` folded from ``1.0 * y``, then
   ``y[0] = y_old``).
2. Aliases and views under in-place operations follow numpy's semantics or are refused.
3. Writes through repeated indices: the last write wins (and ``+=`` adds once).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import srcgrad
from srcgrad.compiler.optimize import shares, written_in_place

X3 = np.array([1.0, 1.5, 2.0])
A3 = np.array([[1.0, 1.5, 2.0], [0.5, -1.0, 3.0], [2.0, 0.3, -0.7]])
MODES = ("reverse", "forward")


def numeric_grad(f, args: tuple, wrt: int = 0, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of ``f`` in argument ``wrt``, on copies of the arguments
    (the function may write into its own arrays, never into these)."""
    x = np.asarray(args[wrt], dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        values = []
        for sign in (1, -1):
            moved = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
            moved[wrt] = x + sign * step
            values.append(f(*moved))
        out[i] = (values[0] - values[1]) / (2 * eps)
    return out


@dataclass
class Right:
    """A row expecting the right gradient (by hand where given, else finite differences)."""

    func: Any
    args: tuple
    expected: Any = None
    wrt: int = 0
    modes: tuple[str, ...] = MODES

    @property
    def id(self) -> str:
        return self.func.__name__


@dataclass
class Refused:
    """A row expecting a clear error at the user's line holding ``line``."""

    func: Any
    args: tuple
    error: type
    fragment: str
    line: str
    wrt: int = 0
    modes: tuple[str, ...] = MODES

    @property
    def id(self) -> str:
        return self.func.__name__


def check_right(row: Right, mode: str) -> None:
    args = tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in row.args)
    expected = row.expected
    if expected is None:
        expected = numeric_grad(row.func, row.args, row.wrt)
    got = srcgrad.grad(row.func, wrt=row.wrt, mode=mode)(*args)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    for before, after in zip(row.args, args):  # the caller's arrays are untouched
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(before, after)


def check_refused(row: Refused, mode: str) -> None:
    with pytest.raises(row.error) as info:
        srcgrad.grad(row.func, wrt=row.wrt, mode=mode)(*row.args)
    message = str(info.value)
    assert row.fragment in message, message
    source, first = inspect.getsourcelines(row.func)
    numbers = [first + k for k, text in enumerate(source) if row.line in text]
    assert numbers, f"{row.line!r} is not in {row.func.__name__}'s source"
    assert any(f":{n}" in message for n in numbers), message
    assert row.line in message, message
    for temporary in ("t1", "t2", "t3", "t22"):  # never srcgrad's own names
        assert f"`{temporary}`" not in message and f"'{temporary}'" not in message, message


def run_rows(rows: list, name: str):
    """pytest parameters: every row in each of its modes."""
    return pytest.mark.parametrize(
        name,
        [pytest.param(row, mode, id=f"{row.id}-{mode}") for row in rows for mode in row.modes],
    )


# -- 1. adjoints never share memory with an array the backward sweep writes into ----------


def copy_then_write(x):
    y = x.copy()
    y[0] = 0.0
    return np.dot(y, x)


def mask_write(x):
    y = x.copy()
    y[x > 1.2] = 0.0
    return np.dot(y, x)


def augmented_write(x):
    y = x.copy()
    y[0] += 3.0 * x[1]
    return np.dot(y, x)


def maximum_after_write(x):
    y = x.copy()
    y[1] = 0.5
    return np.sum(np.maximum(y, 1.0) * x)


def matmul_after_write(x):
    y = x * 1.0
    y[2] = x[0]
    return y @ x


def transpose_view(A):
    y = A.copy()
    z = y.T
    s = np.sum(z * A)
    y[0, 0] = 0.0
    return s + np.sum(y)


def write_in_loop(x):
    y = x.copy()
    s = 0.0
    for i in range(3):
        s = s + np.dot(y, x)
        y[i] = 0.0
    return s


def slice_view_read_before(x):
    y = x.copy()
    s = np.dot(y[0:2], x[0:2])
    y[0:2] = 1.0
    return s + np.sum(y * x)


def reshape_view(x):
    y = x.copy()
    s = np.dot(y.reshape(3), x)
    y[1] = 0.0
    return s + np.sum(y)


def product_by_one(x):
    y = x.copy()
    t = y * 1.0
    y[0] = 5.0
    return np.sum(t * x) + np.sum(y)


def double_negation(x):
    y = x.copy()
    s = np.sum(-(-y) * x)  # noqa: B002 (a double negation on purpose)
    y[0] = 5.0
    return s + np.sum(y * x)


def tuple_write_then_read(x):
    y = x.copy()
    y[0], z = 5.0, y * x
    return np.sum(z * x) + np.sum(y)


def vector_dot_of_written(x):
    y = x * 2.0
    y[0] = 0.0
    return np.sum(y * x)


def old_value_written_after_rebinding(x):
    y = x * 1.0
    s = 0.0
    for i in range(3):
        prev = y
        y = y * x
        prev[i] = x[i] * 2.0
        s = s + np.sum(prev * y)
    return s


def recorded_value_written_later(x):
    v0 = x * 1.5
    v1 = x * 1.25
    for i in range(3):
        v1 = v0
        v0 = np.sin(v0) * x
        v1[i] = x[i] * 2.0
    return np.sum(x * x) + np.sum(v0 * x)


def recorded_list_appended_later(x):
    xs = [x * 1.0]
    s = 0.0
    for _ in range(3):
        prev = xs
        xs = [np.sin(xs[0]) * x]
        s = s + np.sum(prev[0] * x)
        prev.append(x)
    return s + np.sum(xs[0])


def list_rebuilt_in_loop(x):
    xs = [x * 1.0]
    for _ in range(3):
        xs = [np.sin(xs[0]) * x]
    return np.sum(xs[0])


ADJOINT_ROWS = [
    Right(copy_then_write, (X3,), np.array([0.0, 3.0, 4.0])),
    Right(mask_write, (X3,), np.array([2.0, 0.0, 0.0])),
    Right(augmented_write, (X3,), np.array([6.5, 6.0, 4.0])),
    Right(maximum_after_write, (X3,)),
    Right(matmul_after_write, (X3,), np.array([4.0, 3.0, 1.0])),
    Right(transpose_view, (A3,)),
    Right(write_in_loop, (X3,)),
    Right(slice_view_read_before, (X3,), np.array([3.0, 4.0, 4.0])),
    Right(reshape_view, (X3,)),
    Right(product_by_one, (X3,), np.array([2.0, 4.0, 5.0])),
    Right(double_negation, (X3,), np.array([7.0, 6.0, 8.0])),
    Right(tuple_write_then_read, (X3,), np.array([3.0, 7.75, 13.0])),
    Right(vector_dot_of_written, (X3,), np.array([0.0, 6.0, 8.0])),
    Right(old_value_written_after_rebinding, (X3,)),
    Right(recorded_value_written_later, (X3,)),
    Right(recorded_list_appended_later, (X3,)),
    Right(list_rebuilt_in_loop, (X3,)),
]


@run_rows(ADJOINT_ROWS, "row, mode")
def test_adjoints_do_not_share_written_arrays(row: Right, mode: str) -> None:
    check_right(row, mode)


def read_then_written(x):
    y = x.copy()
    z = np.sum(y * x)  # (its adjoint reads y as it was here: the write is undone)
    y[0] = 0.0
    return np.dot(y, x) + z


def test_fold_keeps_new_array_where_restored() -> None:
    """``x_bar = 1.0 * y`` stays a product where the adjoint sweep restores ``y`` in place;
    the source reads no adjoint that is ``y`` itself. (Where nothing reads ``y`` as it
    was before the write, as in ``copy_then_write``, nothing is restored, and the fold
    is safe.)"""
    derivative = srcgrad.grad(read_then_written)
    np.testing.assert_allclose(derivative(X3), 2 * X3 + 2 * X3 * [0.0, 1.0, 1.0])
    source = derivative.source
    writes = [line for line in source.splitlines() if line.strip().startswith("y[0] = ")]
    assert len(writes) == 2  # (the write, and the sweep's restore)
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id.endswith("_bar"):
                assert "y" not in shares(node.value), ast.unparse(node)


def test_written_in_place_groups() -> None:
    """Names sharing memory with an array written into, through copies, views and tapes;
    a write right after a new array was made reaches nobody else."""
    body = ast.parse(
        "a = y\nb = a.T\nc = b * 2.0\ntape.append(c)\nd = tape.pop()\ny[0] = 1.0\n"
        "g = h.copy()\ng[0] = 0.0\nk = g\nm = np.reshape(q, s)\n"
    ).body
    hazards = written_in_place(body, {"y", "h", "q"})
    assert {"a", "b", "y"} <= hazards
    assert not {"c", "d", "g", "h", "k", "m", "q", "np"} & hazards


def test_shares() -> None:
    def of(text: str) -> set[str]:
        return shares(ast.parse(text, mode="eval").body)

    assert of("y") == {"y"}
    assert of("y.T") == of("y[0:2]") == of("y.reshape(3)") == {"y"}
    assert of("np.reshape(y, s)") == {"np", "y", "s"}  # (np never joins a group)
    assert of("unbroadcast(g, x)") == {"g", "x"}
    assert of("y * 1.0") == of("np.exp(y)") == of("y.copy()") == of("np.sum(y)") == set()
    assert of("y.shape") == set()


# -- 3. writes through repeated indices: the last write wins --------------------------------

W3 = np.array([1.0, 2.0, 3.0])
W33 = np.arange(9.0).reshape(3, 3)


def repeated_set(x):
    y = np.zeros(3)
    y[[0, 0]] = x[:2]
    return np.sum(y)


def repeated_add(x):
    y = np.zeros(3)
    y[[0, 0]] += x[:2]
    return np.sum(y)


def repeated_add_weighted(x):
    y = x * 2.0
    y[[0, 0]] += x[:2]
    return np.sum(y * W3)


def repeated_index_array(x):
    idx = np.array([2, 0, 2])
    y = np.zeros(3)
    y[idx] = x * x
    return np.sum(y * W3)


def repeated_index_argument(x, idx):
    y = np.zeros(3)
    y[idx] = x * x
    return np.sum(y * W3)


def repeated_broadcast_value(x):
    y = np.zeros(3)
    y[[0, 0, 1]] = x[0] * x[1]
    return np.sum(y * W3)


def repeated_rows(A):
    Y = np.zeros((3, 3))
    Y[[0, 0]] = A[:2] * A[:2]
    return np.sum(Y * W33)


def repeated_pairs(x):
    Y = np.zeros((2, 2))
    Y[[0, 0], [1, 1]] = x[:2]
    return np.sum(Y * W33[:2, :2])


def repeated_columns(A):
    Y = np.zeros((3, 3))
    Y[:, [1, 1]] = A[:, :2]
    return np.sum(Y * W33)


def repeated_negative(x):
    y = np.zeros(3)
    y[[0, -3]] = x[1:] * 3.0
    return np.sum(y * W3)


def repeated_in_loop(x):
    y = np.zeros(3)
    for k in range(2):
        y[[k, k, 2]] += x * (k + 1.0)
    return np.sum(y * W3)


def distinct_indices(x):
    y = np.zeros(3)
    y[[2, 0]] = x[:2]
    return np.sum(y * W3)


def mask_set(x):
    y = x * 2.0
    y[x > 1.2] = x[0]
    return np.sum(y * x)


def mask_of_masks(x):
    y = x * 2.0
    m = (x > 1.2) & (x < 1.8)
    y[m] = 7.0 * x[2]
    return np.sum(y * x)


def repeated_read_after(x):
    y = np.zeros(3)
    y[[1, 1]] = x[1:] * x[1:]
    return np.sum(y * x)


REPEATED_ROWS = [
    Right(repeated_set, (X3,), np.array([0.0, 1.0, 0.0])),
    Right(repeated_add, (X3,), np.array([0.0, 1.0, 0.0])),
    Right(repeated_add_weighted, (X3,), np.array([2.0, 5.0, 6.0])),
    Right(repeated_index_array, (X3,), np.array([0.0, 3.0, 12.0])),
    Right(repeated_index_argument, (X3, np.array([1, 1, 0])), np.array([0.0, 6.0, 4.0])),
    Right(repeated_broadcast_value, (X3,), np.array([4.5, 3.0, 0.0])),
    Right(repeated_rows, (A3,)),
    Right(repeated_pairs, (X3,), np.array([0.0, 1.0, 0.0])),
    Right(repeated_columns, (A3,)),
    Right(repeated_negative, (X3,), np.array([0.0, 0.0, 3.0])),
    Right(repeated_in_loop, (X3,), np.array([0.0, 5.0, 9.0])),
    Right(distinct_indices, (X3,), np.array([3.0, 1.0, 0.0])),
    Right(mask_set, (X3,)),
    Right(mask_of_masks, (X3,)),
    Right(repeated_read_after, (X3,)),
]


@run_rows(REPEATED_ROWS, "row, mode")
def test_repeated_indices(row: Right, mode: str) -> None:
    check_right(row, mode)


def test_repeated_indices_vjp_and_jacobian() -> None:
    """Every argument's derivative, as numpy computes: the vjp of ``y[[0, 0]] = x[:2]``
    (``y`` returned) gives ``x[0]`` nothing; the jacobian agrees with both modes."""

    def f(x):
        y = np.zeros(3)
        y[[0, 0]] = x[:2] * 2.0
        return y

    expected = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(srcgrad.vjp(f)(X3, np.array([1.0, 0.0, 0.0])), expected[0])
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.jacobian(f, mode=mode)(X3), expected)


def test_cheap_adjoint_where_indices_cannot_repeat() -> None:
    """Numbers, slices and boolean masks name each element once: their adjoint is
    ``y_bar[index]`` itself, no helper; an index array gets ``kept_writes``."""
    for func in (mask_set, mask_of_masks, copy_then_write, write_in_loop, slice_view_read_before):
        source = srcgrad.grad(func)
        source(A3 if func is transpose_view else X3)
        assert "kept_writes" not in source.source, source.source
    d = srcgrad.grad(repeated_set)
    d(X3)
    assert "kept_writes(" in d.source


# -- 2. aliases and views under in-place changes: numpy's meaning, or a clear error --------

G_ARRAY = np.array([1.0, 2.0, 3.0])
G_LIST = [np.ones(3)]


def ident(a):
    return a


def double(a):
    return a * 2.0


def first(xs):
    return xs[0]


def deep(a, n):
    if n == 0:
        return a
    return deep(a, n - 1)


def pair(u):
    return np.tanh(u), np.tanh(0.5) * u


def alias_then_argument_update(x):
    y = x
    x += 1
    return np.sum(y * y)


def alias_then_local_update(x):
    a = x * 2.0
    y = a
    a += 1
    return np.sum(y * y)


def view_of_copy_updated(x):
    y = x.copy()
    z = y[0:2]
    z *= 3
    return np.sum(y * x)


def view_of_argument_updated(x):
    z = x[0:2]
    z *= 3
    return np.sum(z)


def list_through_two_names(x):
    a = []
    b = a
    b.append(x)
    return np.sum(a[0])


def transpose_then_update(x):
    A = np.outer(x, x)
    B = A.T
    A += 1.0
    return np.sum(B * x)


def reshape_view_then_write(x):
    y = x * 2.0
    z = y.reshape(3)
    y[0] = 0.0
    return np.sum(z * x)


def asarray_then_write(x):
    y = np.asarray(x)
    y[0] = 0.0
    return np.sum(y)


def element_updated(x):
    ys = [x * 2.0]
    z = ys[0]
    z += 1.0
    return np.sum(ys[0] * x)


def written_while_in_list(x):
    y = x * 2.0
    ys = []
    ys.append(y)
    y[0] = 0.0
    return np.sum(np.stack(ys) * x)


def helper_returns_argument(x):
    y = x * 2.0
    z = ident(y)
    z *= 3.0
    return np.sum(y * x)


def helper_returns_element(x):
    y = x * 2.0
    ys = [y, x]
    z = first(ys)
    z *= 3.0
    return np.sum(y * x)


def recursive_helper_returns_argument(x):
    y = x * 2.0
    z = deep(y, 2)
    z *= 3.0
    return np.sum(y * x)


def argument_updated(x):
    x += 1.0
    return np.sum(x * x)


def argument_list_appended(x, xs):
    xs.append(x * 2.0)
    return np.sum(xs[-1] * xs[0])


def argument_list_popped(x, xs):
    last = xs.pop()
    return np.sum(last * x)


def alias_on_one_branch(x, c):
    y = x * 2.0
    if c > 0:
        z = y
    else:
        z = y * 1.0
    y += 1.0
    return np.sum(z * x)


def alias_carried_by_loop(x):
    y = x * 1.0
    prev = y
    for i in range(2):
        prev = y
        y[0] = x[1] * i
    return np.sum(prev * x)


def zero_d_array_shared(x):
    t = np.zeros(())
    u = t
    t += x[0]
    return u * x[1]


def global_array_written(x):
    y = G_ARRAY
    y[0] = x[0]
    return np.sum(y * x)


def global_list_appended(x):
    G_LIST.append(x)
    return np.sum(G_LIST[-1])


def global_list_appended_by_name(x):
    ys = G_LIST
    ys.append(x)
    return np.sum(ys[-1])


def tuple_element_updated(x):
    t = pair(x)
    a = t[0]
    a *= np.cos(x)
    return np.sum(t[0] + a)


def write_into_list(x):
    ys = [x * 1.0, x * 2.0]
    ys[0] = x * 3.0
    return np.sum(ys[0])


def fill(a):
    a[0] = 1.0
    return 0.0


def fill_through_alias(a):
    b = a
    b[1] = 2.0
    return 0.0


def fill_through_callee(a):
    return fill(a)


def fill_opaquely(a):
    try:  # (srcgrad cannot analyze this function: its code is read for writes)
        a[0] = 1.0
    except ValueError:
        pass
    return 0.0


def read_opaquely(a):
    try:
        v = float(a[0])
    except ValueError:
        v = 0.0
    return v


def callee_writes_inactive_argument(x, buf):
    s = np.sum(x * buf)
    t = fill(buf)
    return s + t + np.sum(x * buf)


def callee_writes_local(x):
    y = x * 2.0
    t = fill(y)
    return np.sum(y * x) + t


def callee_writes_through_alias(x):
    y = x * 2.0
    t = fill_through_alias(y)
    return np.sum(y * x) + t


def callee_writes_through_its_callee(x):
    y = x * 2.0
    t = fill_through_callee(y)
    return np.sum(y * x) + t


def opaque_callee_writes(x, buf):
    t = fill_opaquely(buf)
    return np.sum(x * buf) + t


def opaque_callee_reads(x, buf):
    t = read_opaquely(buf)
    return np.sum(x * buf) + t


def astype_without_copy(x):
    y = x * 2.0
    z = y.astype(float, copy=False)
    z[0] = 0.0
    return np.sum(y * x)


def out_argument(x):
    y = np.zeros(3)
    z = np.multiply(x, 2.0, out=y)
    return np.sum(y * x) + np.sum(z)


def out_into_inactive(x, buf):
    s = np.sum(x * buf)
    z = np.multiply(buf, 2.0, out=buf)
    return s + np.sum(x * buf) + np.sum(z)


def sort_method_assigned(x):
    y = x * 1.0
    _ = y.sort()
    return np.sum(y * x)


def fill_diagonal_assigned(x):
    D = np.outer(x, x)
    _ = np.fill_diagonal(D, 1.0)
    return np.sum(D * D)


def fill_diagonal_statement(x):
    D = np.outer(x, x)
    np.fill_diagonal(D, 1.0)
    return np.sum(D * D)


def copyto_statement(x, buf):
    np.copyto(buf, x)
    return np.sum(x * buf)


def ufunc_at_into_inactive(x, buf):
    s = np.sum(x * buf)
    _ = np.add.at(buf, [0, 0], 1.0)
    return s + np.sum(x * buf)


def shuffled_by_generator(x, rng):
    y = x * 2.0
    _ = rng.shuffle(y)
    return np.sum(y * x)


R = srcgrad.UnsupportedSyntaxError
B3 = np.array([3.0, 4.0, 5.0])
ALIAS_REFUSED = [
    Refused(alias_then_argument_update, (X3,), R, "`y` shares that memory (`y = x`)", "x += 1"),
    Refused(alias_then_local_update, (X3,), R, "`y = a.copy()`", "a += 1"),
    Refused(view_of_copy_updated, (X3,), R, "(`z = y[0:2]`)", "z *= 3"),
    Refused(view_of_argument_updated, (X3,), R, "the argument `x`", "z *= 3"),
    Refused(list_through_two_names, (X3,), R, "one name for the list", "b.append(x)"),
    Refused(transpose_then_update, (X3,), R, "`B = A.T.copy()`", "A += 1.0"),
    Refused(reshape_view_then_write, (X3,), R, "`z` changes too", "y[0] = 0.0"),
    Refused(asarray_then_write, (X3,), R, "the argument `x`", "y[0] = 0.0"),
    Refused(element_updated, (X3,), R, "`ys` holds that array", "z += 1.0"),
    Refused(written_while_in_list, (X3,), R, "`ys` holds that array", "y[0] = 0.0"),
    Refused(helper_returns_argument, (X3,), R, "(`z = ident(y)`)", "z *= 3.0"),
    Refused(helper_returns_element, (X3,), R, "`x` changes too", "z *= 3.0"),
    Refused(recursive_helper_returns_argument, (X3,), R, "`y` changes too", "z *= 3.0"),
    Refused(argument_updated, (X3,), R, "write `x = x + 1.0`", "x += 1.0"),
    Refused(argument_list_appended, (X3, [np.ones(3)]), R, "list of the argument", "xs.append"),
    Refused(argument_list_popped, (X3, [np.ones(3)]), R, "list of the argument", "xs.pop()"),
    Refused(alias_on_one_branch, (X3, 1.0), R, "`z = y.copy()`", "y += 1.0"),
    Refused(alias_carried_by_loop, (X3,), R, "`prev = y.copy()`", "y[0] = x[1] * i"),
    Refused(zero_d_array_shared, (X3,), R, "`u` shares that memory", "t += x[0]"),
    Refused(global_array_written, (X3,), R, "the global `G_ARRAY`", "y[0] = x[0]"),
    Refused(global_list_appended, (X3,), R, "result is not used", "G_LIST.append(x)"),
    Refused(global_list_appended_by_name, (X3,), R, "the global `G_LIST`", "ys.append(x)"),
    Refused(tuple_element_updated, (X3,), R, "`t` changes too", "a *= np.cos(x)"),
    Refused(write_into_list, (X3,), R, "holds a list or tuple", "ys[0] = x * 3.0"),
    Refused(callee_writes_inactive_argument, (X3, B3), R, "(given `buf`)", "t = fill(buf)"),
    Refused(callee_writes_local, (X3,), R, "changes its argument `a`", "t = fill(y)"),
    Refused(callee_writes_through_alias, (X3,), R, "fill_through_alias", "t = fill_through"),
    Refused(callee_writes_through_its_callee, (X3,), R, "fill_through_callee", "t = fill_th"),
    Refused(opaque_callee_writes, (X3, B3), R, "fill_opaquely", "t = fill_opaquely(buf)"),
    Refused(astype_without_copy, (X3,), R, "`y` changes too", "z[0] = 0.0"),
    Refused(out_argument, (X3,), R, "changes `y` in place", "z = np.multiply(x, 2.0, out=y)"),
    Refused(out_into_inactive, (X3, B3), R, "changes `buf` in place", "out=buf)"),
    Refused(sort_method_assigned, (X3,), R, "`np.sort(y)`", "_ = y.sort()"),
    Refused(fill_diagonal_assigned, (X3,), R, "changes `D` in place", "_ = np.fill_diagonal"),
    Refused(fill_diagonal_statement, (X3,), R, "`D = D.copy()`", "np.fill_diagonal(D, 1.0)"),
    Refused(copyto_statement, (X3, B3), R, "is a call whose result is not used", "np.copyto"),
    Refused(ufunc_at_into_inactive, (X3, B3), R, "changes `buf` in place", "np.add.at"),
    Refused(
        shuffled_by_generator, (X3, np.random.default_rng(0)), R, "`y` in place", "rng.shuffle"
    ),
]


def view_by_none_index_written(x):
    y = x * 1.0
    k = None  # a name of rank 0 that names no element: y[k] is a view of y
    z = y[k]
    y[0] = 5.0
    return np.sum(z * x)


def view_by_ellipsis_index_written(x):
    y = x * 1.0
    k = ...
    z = y[k]
    y[0] = 5.0
    return np.sum(z * x)


ALIAS_REFUSED += [
    Refused(view_by_none_index_written, (X3,), R, "`z` shares that memory", "y[0] = 5.0"),
    Refused(view_by_ellipsis_index_written, (X3,), R, "`z` shares that memory", "y[0] = 5.0"),
]


@run_rows(ALIAS_REFUSED, "row, mode")
def test_aliases_refused(row: Refused, mode: str) -> None:
    check_refused(row, mode)


def test_refused_in_every_kind() -> None:
    """The same error from every transformation, before any of the caller's data changes.
    (``jacobian`` runs the function itself first, which appends: issue 14's part.)"""
    with pytest.raises(R, match="list of the argument"):
        srcgrad.jacobian(argument_list_appended)(X3, [np.ones(3)])
    xs = [np.ones(3)]
    for make in (srcgrad.grad, srcgrad.value_and_grad):
        with pytest.raises(R, match="list of the argument"):
            make(argument_list_appended)(X3, xs)
    with pytest.raises(R, match="list of the argument"):
        srcgrad.jvp(argument_list_appended)(X3, xs, np.ones(3))
    with pytest.raises(R, match="list of the argument"):
        srcgrad.vjp(argument_list_appended)(X3, xs, 1.0)
    with pytest.raises(R, match="list of the argument"):
        srcgrad.grad(argument_list_appended, wrt=(0, 1), mode="forward")(X3, xs)
    assert len(xs) == 1 and np.array_equal(xs[0], np.ones(3))


def view_of_copy_not_read_again(x):
    y = x.copy()
    z = y[0:2]
    z *= 3
    return np.sum(z * x[0:2])


def view_written_base_dead(x):
    y = x * 2.0
    z = y[0:2]
    z[0] = x[2] * x[2]
    return np.sum(z * x[:2])


def scalar_accumulator(x):
    s = 0.0
    for i in range(3):
        s += x[i] * x[i]
    return s


def array_accumulator(x):
    acc = np.zeros(3)
    for i in range(3):
        acc += x * i
    acc[0] = x[1]
    return np.sum(acc * acc)


def copy_updated_then_written(x):
    y = x.copy()
    y *= 2
    y[0] = 1
    return np.sum(y * x)


def reassigned_then_written(x):
    ys = [x * 2.0]
    x = x * x
    s = np.sum(x)
    x = np.zeros(4)
    x[:2] = ys[0][:2]
    return np.sum(x * x) + s


def loop_keeps_previous(x):
    y = x * 1.0
    prev = y
    for _ in range(2):
        prev = y
        y = y * 2.0
        y[0] = 1.0
    return np.sum(prev * x + y)


def helper_makes_new(x):
    y = x * 2.0
    z = double(y)
    z *= 3.0
    z[1] = y[0]
    return np.sum(y * x + z)


def tuple_result_updated(x):
    a, b = pair(x)
    a *= np.cos(x)
    return np.sum(a + b)


def eigenvalues_updated(x):
    A = np.outer(x, x) + np.eye(3)
    w, V = np.linalg.eigh(A)
    w *= 2.0
    return np.sum(w) + np.sum(V * V)


def number_shared(x):
    t = np.sum(x)
    u = t
    t += x[0]
    return u * x[1] + t


def number_argument_updated(x, n):
    n += 1
    return np.sum(x * n)


def local_product_updated(x):
    y = x * x
    y += np.sin(x)
    y[2] = y[0]
    return np.sum(y * x)


def element_read_then_written(x):
    y = x * 2.0
    s = y[0]
    y[0] = x[1] * x[2]
    return s * np.sum(y * x)


def none_index_read(x):
    k = None  # y[k] is y with a new axis: a view, not an element
    z = x[k]
    return np.sum(np.sin(z) * x)


def ellipsis_index_read(x):
    k = ...
    z = x[k, 1:]
    return np.sum(z * z)


ALIAS_RIGHT = [
    Right(view_of_copy_not_read_again, (X3,)),
    Right(view_written_base_dead, (X3,), np.array([4.0, 6.0, 4.0])),
    Right(scalar_accumulator, (X3,), 2 * X3),
    Right(array_accumulator, (X3,)),
    Right(copy_updated_then_written, (X3,), np.array([1.0, 6.0, 8.0])),
    Right(reassigned_then_written, (X3,)),
    Right(loop_keeps_previous, (X3,)),
    Right(helper_makes_new, (X3,)),
    Right(tuple_result_updated, (X3,)),
    Right(eigenvalues_updated, (X3,)),
    Right(number_shared, (X3,)),
    Right(number_argument_updated, (X3, 2)),
    Right(local_product_updated, (X3,)),
    Right(opaque_callee_reads, (X3, B3), B3),
    Right(element_read_then_written, (X3,)),
    Right(none_index_read, (X3,)),
    Right(ellipsis_index_read, (X3,), np.array([0.0, 3.0, 4.0])),
]


@run_rows(ALIAS_RIGHT, "row, mode")
def test_aliases_followed(row: Right, mode: str) -> None:
    check_right(row, mode)


# A user's function that returns a tuple display: each position shares what its own
# element shares, not what any element does (an int cast of one argument at one
# position, a new array at another, was refused; found by the thorough random programs).


def new_and_argument(u, v):
    return np.tanh(u), v


def swapped(u, v):
    return v, u


def array_and_number(u):
    return np.tanh(u), 3


def positions_cast_beside_new(x, s):
    a, b = new_and_argument(x, np.asarray(s, dtype=int))
    a -= 0.5 * a
    return np.sum(a) + s


def positions_new_updated(x, y):
    a, b = new_and_argument(x, y)
    a *= 2.0
    return np.sum(a * y) + np.sum(b * x)


def positions_swapped_local_updated(x):
    y = x * 2.0
    a, b = swapped(y, x)
    b *= 2.0
    return np.sum(b * x)


def positions_with_constant(x):
    a, k = array_and_number(x)
    a *= k
    return np.sum(a * x)


def positions_in_loop(x, y):
    s = 0.0
    for i in range(3):
        a, b = new_and_argument(x * i, y)
        a *= 2.0
        s = s + np.sum(a * b)
    return s


def positions_argument_updated(x, y):
    a, b = new_and_argument(x, y)
    b += 1.0
    return np.sum(a * b)


def positions_swapped_argument_updated(x):
    y = x * 2.0
    a, b = swapped(y, x)
    a *= 2.0
    return np.sum(a * y)


def positions_swapped_read_after(x):
    y = x * 2.0
    a, b = swapped(y, x)
    b *= 2.0
    return np.sum(b * x) + np.sum(y)


def positions_tuple_kept(x):
    t = new_and_argument(x * 2.0, x)
    a = t[0]
    a *= 3.0
    return np.sum(t[0] * x)


def int_copy_then_update(x):
    a = np.tanh(x)
    t = np.asarray(x if np.sum(a) >= -1.0 else a, dtype=int)  # of floats: a copy
    a *= np.cos(x)
    return np.sum(a * x) + np.sum(np.tanh(t) * x)


def same_dtype_view_then_update(x):
    a = np.tanh(x)
    t = np.asarray(a, dtype=float)  # a float array to float: `a` itself
    a *= np.cos(x)
    return np.sum(t * x)


POSITION_RIGHT = [
    Right(positions_cast_beside_new, (X3, 0.3)),
    Right(positions_new_updated, (X3, B3)),
    Right(positions_swapped_local_updated, (X3,), 8.0 * X3),
    Right(positions_with_constant, (X3,)),
    Right(positions_in_loop, (X3, B3)),
    Right(int_copy_then_update, (np.array([0.3, 1.4, -0.6]),)),
]
POSITION_REFUSED = [
    Refused(positions_argument_updated, (X3, B3), R, "the argument `y`", "b += 1.0"),
    Refused(positions_swapped_argument_updated, (X3,), R, "the argument `x`", "a *= 2.0"),
    Refused(positions_swapped_read_after, (X3,), R, "`y` changes too", "b *= 2.0"),
    Refused(positions_tuple_kept, (X3,), R, "`t` changes too", "a *= 3.0"),
    Refused(same_dtype_view_then_update, (X3,), R, "`t` changes too", "a *= np.cos(x)"),
]


@run_rows(POSITION_RIGHT, "row, mode")
def test_tuple_result_positions_followed(row: Right, mode: str) -> None:
    check_right(row, mode)


@run_rows(POSITION_REFUSED, "row, mode")
def test_tuple_result_positions_refused(row: Refused, mode: str) -> None:
    check_refused(row, mode)


def test_alias_analysis_result() -> None:
    """The analysis is a plain result: places before each in-place change."""
    from srcgrad.compiler.analyze import analyze
    from srcgrad.compiler.analyze.aliases import aliases
    from srcgrad.compiler.analyze.facts import is_setitem
    from srcgrad.compiler.driver import front

    norm = front(reshape_view_then_write)
    with pytest.raises(R):
        analyze(norm, ["x"], {"x": 1})
    facts = analyze(front(view_written_base_dead), ["x"], {"x": 1})
    norm = front(view_written_base_dead)
    facts = analyze(norm, ["x"], {"x": 1})
    found = aliases(norm, facts)
    (write,) = [s for s in facts.ops if is_setitem(s)]
    assert found.shared(write, "z", "y") and not found.shared(write, "z", "x")
    assert found.problems == []


# -- 2b. names that trade arrays (swaps, rotations, temporaries) never share one ------------


def two_new(u, s):
    return np.tanh(u), np.cos(u) + s


def swap_in_loop_then_update(x):
    a = np.tanh(x)
    c = np.cos(x)
    for _ in range(3):
        a, c = c, a
    a *= np.sin(c)
    return np.sum(a * c)


def swap_then_update_in_loop(x):
    a = x * 2.0
    c = np.sin(x)
    for _ in range(3):
        a, c = c, a
        a *= c + 1.0
    return np.sum(a * c)


def swap_after_tuple_call(x):
    a = np.tanh(x)
    b = np.sin(x)
    c = np.cos(x)
    for _ in range(2):
        a, b = two_new(x, -0.5)
        a, c = c, a
    for _ in range(2):
        a *= np.cos(c)
    return np.sum(a * b * c)


def rotation_in_loop(x):
    a = x * 1.0
    b = np.sin(x)
    c = np.cos(x)
    for i in range(3):
        a, b, c = b, c, a
        b[i] = a[i] * c[2 - i]
    a += b
    return np.sum(a * b * c)


def swap_on_a_branch(x, flag):
    a = np.exp(x)
    c = x * x
    if flag > 0:
        a, c = c, a
    a[1] = c[0] * 2.0
    return np.sum(a * c)


def permuted_on_branches(x, flag):
    a, b, c = np.sin(x), np.cos(x), x * x
    for i in range(3):
        if flag * i > 0.5:
            a, b, c = c, a, b
        else:
            a, b = b, a
        b[i] = a[i] + c[i]
    return np.sum(a * b + c)


def exchange_through_temporary(x):
    a = np.sin(x)
    c = np.cos(x)
    for i in range(3):
        t = a
        a = c
        c = t
        c[i] = a[i] * 0.5
    return np.sum(a * c)


def swap_in_while_with_break(x):
    a = x * 3.0
    c = np.sin(x)
    k = 0
    while k < 5:
        a, c = c, a
        if k == 2:
            break
        k += 1
    c *= a
    return np.sum(c + a)


def view_dies_before_swap(x):
    a = x * 2.0
    c = np.sin(x)
    for _ in range(3):
        v = a[0:2]
        s = np.sum(v)
        a, c = c, a
        a *= s
    return np.sum(a * c)


def swap_in_nested_loops(x):
    a = np.sin(x)
    b = np.cos(x)
    c = x * 0.5
    for i in range(2):
        for j in range(2):
            a, b = b, a
            b *= 1.0 + 0.1 * j
        c, a = a, c
        c[i] = b[i] * a[i]
    return np.sum(a * b * c)


def lists_swapped(x):
    xs = [x * 1.0]
    ys = [np.sin(x)]
    for _ in range(3):
        xs, ys = ys, xs
    xs.append(x * 2.0)
    return np.sum(xs[0] * ys[0]) + np.sum(xs[-1] * x)


def alias_survives_swap_loop(x, n):
    a = x * 2.0
    b = a
    c = np.sin(x)
    for _ in range(n):
        a, c = c, a
    a *= 3.0
    return np.sum(b * c)


def view_survives_swap(x):
    a = x * 2.0
    c = np.sin(x)
    v = a[0:2]
    for _ in range(3):
        a, c = c, a
    c[0] = 1.0
    return np.sum(v * x[0:2]) + np.sum(c * x)


def list_holds_after_swap(x):
    a = x * 2.0
    c = np.sin(x)
    ys = [a]
    for _ in range(2):
        a, c = c, a
    a[0] = 0.0
    return np.sum(ys[0] * x) + np.sum(a * c)


def alias_on_other_branch(x, flag):
    a = np.exp(x)
    c = x * x
    if flag > 0:
        a, c = c, a
    else:
        c = a
    a *= 2.0
    return np.sum(a * c)


def rotation_duplicates(x):
    a, b, c = x * 1.0, np.sin(x), np.cos(x)
    for _ in range(2):
        a, b, c = b, c, b
    a[0] = 0.0
    return np.sum(a * b * c)


def temporary_kept(x):
    a = np.sin(x)
    c = np.cos(x)
    for _ in range(2):
        t = a
        a = c
        c = t
    c *= 2.0
    return np.sum(t * a)


def helper_swaps_alias(x):
    a = x * 2.0
    b = a
    c = np.sin(x)
    for _ in range(3):
        a, c = swapped(a, c)
    c *= 2.0
    return np.sum(b * x) + np.sum(c)


def swap_with_argument(x):
    a = x
    c = np.sin(x)
    for _ in range(3):
        a, c = c, a
    c *= 2.0
    return np.sum(a * c)


SWAP_RIGHT = [
    Right(swap_in_loop_then_update, (X3,)),
    Right(swap_then_update_in_loop, (X3,)),
    Right(swap_after_tuple_call, (X3,)),
    Right(rotation_in_loop, (X3,)),
    Right(swap_on_a_branch, (X3, 1.0)),
    Right(swap_on_a_branch, (X3, -1.0)),
    Right(permuted_on_branches, (X3, 1.0)),
    Right(permuted_on_branches, (X3, -1.0)),
    Right(exchange_through_temporary, (X3,)),
    Right(swap_in_while_with_break, (X3,)),
    Right(view_dies_before_swap, (X3,)),
    Right(swap_in_nested_loops, (X3,)),
    Right(lists_swapped, (X3,)),
]
SWAP_REFUSED = [
    Refused(alias_survives_swap_loop, (X3, 2), R, "`b` shares that memory", "a *= 3.0"),
    Refused(view_survives_swap, (X3,), R, "`v` changes too", "c[0] = 1.0"),
    Refused(list_holds_after_swap, (X3,), R, "`ys` holds that array", "a[0] = 0.0"),
    Refused(alias_on_other_branch, (X3, 1.0), R, "`c` shares that memory", "a *= 2.0"),
    Refused(rotation_duplicates, (X3,), R, "`c` shares that memory", "a[0] = 0.0"),
    Refused(temporary_kept, (X3,), R, "`t` shares that memory", "c *= 2.0"),
    Refused(helper_swaps_alias, (X3,), R, "`b` shares that memory", "c *= 2.0"),
    Refused(swap_with_argument, (X3,), R, "the argument `x`", "c *= 2.0"),
]


@run_rows(SWAP_RIGHT, "row, mode")
def test_swaps_followed(row: Right, mode: str) -> None:
    check_right(row, mode)


@run_rows(SWAP_REFUSED, "row, mode")
def test_real_aliases_survive_swaps(row: Refused, mode: str) -> None:
    check_refused(row, mode)


@pytest.mark.parametrize(
    "func",
    [
        swap_in_loop_then_update,
        swap_then_update_in_loop,
        swap_after_tuple_call,
        swap_in_while_with_break,
        view_dies_before_swap,
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_swaps_against_autograd(func, mode: str) -> None:
    """The same source run by autograd (``np`` rebound to autograd.numpy; there ``a *= v``
    rebinds ``a``, numpy's meaning where no other name shares the array)."""
    import autograd
    import autograd.numpy as anp

    namespace = {**func.__globals__, "np": anp}
    for f in (two_new, func):
        exec(compile(inspect.getsource(f), inspect.getsourcefile(f), "exec"), namespace)
    expected = autograd.grad(namespace[func.__name__])(X3.copy())
    got = srcgrad.grad(func, mode=mode)(X3.copy())
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


# -- 2c. names that pass lists around a loop hold lists -------------------------------------


def list_copied_in_loop_then_appended(x):
    xs = [np.sin(x)]
    ys = [x * 1.0]
    for _ in range(2):
        zs = xs
        xs = zs
    xs.append(x * 2.0)
    return np.sum(xs[0] * ys[0]) + np.sum(xs[-1] * x)


def lists_traded_in_loop_read_twice(x):
    xs = [np.sin(x)]
    ys = [x * 2.0]
    for _ in range(3):
        xs, ys = ys, xs
    return np.sum(xs[0] * x) + np.sum(xs[0] * ys[0])


def list_rebuilt_from_copy_in_loop(x):
    xs = [np.sin(x), x * 1.0]
    for _ in range(2):
        ys = xs
        xs = [ys[1] * x, ys[0]]
    return np.sum(xs[0] * x) + np.sum(xs[1] * xs[0])


def list_concatenated_in_loop(x):
    xs = [np.sin(x)]
    for _ in range(2):
        xs = xs + [x * 2.0]
    return np.sum(xs[0] * xs[-1])


def list_or_array_concatenated(x, flag):
    if flag > 0:
        xs = [x * 2.0]
    else:
        xs = x * 3.0
    ys = xs
    zs = ys + ys
    return np.sum(np.asarray(zs) * x)


LOOP_LIST_RIGHT = [
    Right(list_copied_in_loop_then_appended, (X3,)),
    Right(lists_traded_in_loop_read_twice, (X3,)),
    Right(list_rebuilt_from_copy_in_loop, (X3,)),
]
LOOP_LIST_REFUSED = [
    Refused(list_concatenated_in_loop, (X3,), R, "arithmetic on lists", "xs = xs + [x * 2.0]"),
    Refused(list_or_array_concatenated, (X3, 1.0), R, "arithmetic on lists", "zs = ys + ys"),
]


@run_rows(LOOP_LIST_RIGHT, "row, mode")
def test_lists_passed_around_loops(row: Right, mode: str) -> None:
    """A name given a list only by copies of names holding lists (``xs, ys = ys, xs``,
    ``zs = xs; xs = zs`` in a loop) holds a list: its adjoint adds element by element."""
    check_right(row, mode)


@run_rows(LOOP_LIST_REFUSED, "row, mode")
def test_list_arithmetic_on_some_path_refused(row: Refused, mode: str) -> None:
    check_refused(row, mode)


# -- random programs: aliases, views, in-place changes, repeated indices ------------------

#: the module a random program lives in: a boolean mask and an index with repeats
PROGRAM_HEADER = (
    "import numpy as np\n\n"
    "M = np.array([True, False, True, False])\n"
    "I = np.array([3, 0, 3, 1])\n\n\n"
)


@st.composite
def alias_programs(draw: Any) -> str:
    """A straight-line function of ``x`` (4 numbers) over arrays of 4 that makes new
    arrays, aliases and views of them, changes them in place (``+=``, ``[...] =`` through
    numbers, slices, masks and repeated indices, also through aliases and views), puts
    them in lists (some reached through two names), and returns a sum of products."""
    names = ["x"]
    lists: dict[str, int] = {}  # list name -> how many items it holds
    lines = ["v0 = x * 1.5"]
    names.append("v0")

    def pick() -> str:
        return draw(st.sampled_from(names))

    def local() -> str:
        return draw(st.sampled_from(names[1:]))

    for k in range(1, draw(st.integers(2, 9))):
        kind = draw(
            st.sampled_from(
                ["new", "new", "alias", "view", "view", "update", "update", "write", "write"]
                + ["rebind", "list", "loop", "argument", "swap", "swap"]
            )
        )
        a, b = pick(), pick()
        v = f"v{k}"
        if kind == "new":
            expr = draw(
                st.sampled_from(
                    [f"{a} * 1.25", f"np.sin({a})", f"{a}.copy()", "np.zeros(4)"]
                    + [f"{a} * {b} + 0.5", f"np.tanh({a}) * x"]
                )
            )
            lines.append(f"{v} = {expr}")
            names.append(v)
        elif kind == "alias":
            lines.append(f"{v} = {a}")
            names.append(v)
        elif kind == "view":
            view = draw(
                st.sampled_from(
                    [f"{a}[:]", f"{a}[::1]", f"{a}.reshape(4)", f"{a}.T", f"np.asarray({a})"]
                    + [f"{a}.ravel()", f"{a}[::-1]"]
                )
            )
            lines.append(f"{v} = {view}")
            names.append(v)
        elif kind == "rebind":  # a name given a new value (what aliased it keeps the old)
            c = draw(st.sampled_from(names))
            lines.append(
                draw(st.sampled_from([f"{c} = {c} * 1.0", f"{c} = {b} * x", f"{c} = np.sin({b})"]))
            )
        elif kind == "update":
            c = local()
            lines.append(
                draw(st.sampled_from([f"{c} += {b}", f"{c} *= 1.25", f"{c} -= np.sin({b})"]))
            )
        elif kind == "write":
            c = local()
            lines.append(
                draw(
                    st.sampled_from(
                        [
                            f"{c}[1] = {b}[2] * x[0]",
                            f"{c}[1:3] = {b}[0:2]",
                            f"{c}[M] = {b}[M] * 2.0",
                            f"{c}[[0, 0, 2]] = {b}[:3] * x[1]",
                            f"{c}[[1, 1]] += {b}[:2]",
                            f"{c}[I] = {b} * x[2]",
                            f"{c}[I] += {b}",
                        ]
                    )
                )
            )
        elif kind == "list":
            if not lists or draw(st.booleans()):
                name = f"L{len(lists)}"
                lines.append(f"{name} = []")
                lists[name] = 0
                if draw(st.booleans()):
                    twin = f"{name}b"
                    lines.append(f"{twin} = {name}")
            name = draw(st.sampled_from(sorted(lists)))
            target = (
                draw(st.sampled_from([name, f"{name}b"])) if f"{name}b = {name}" in lines else name
            )
            lines.append(f"{target}.append({a})")
            lists[name] += 1
            lines.append(f"{v} = {name}[{draw(st.integers(0, lists[name] - 1))}]")
            names.append(v)
        elif kind == "loop":
            c = local()
            body = draw(
                st.sampled_from(
                    [f"{c} += {b} * 0.5", f"{c}[i] = {b}[3 - i] * 0.5"]
                    + [f"{b} = {c}\n        {c} = np.sin({c}) * x\n        {b}[i] = x[i] * 2.0"]
                )
            )
            lines.append(f"for i in range(3):\n        {body}")
        elif kind == "swap":  # names trading arrays: straight, in a loop, on a branch
            c, d, e = pick(), pick(), pick()
            trade = draw(
                st.sampled_from(
                    [f"{c}, {d} = {d}, {c}", f"{c}, {d}, {e} = {d}, {e}, {c}"]
                    + [f"{c}, {d} = {d}, {e}", f"t = {c}\n{c} = {d}\n{d} = t"]
                )
            )
            after = draw(
                st.sampled_from(["", f"{c} *= 1.25", f"{d}[i] = {e}[3 - i] * 0.5", f"{e} += x"])
            )
            where = draw(st.sampled_from(["", "for i in range(3):", "if np.sum(x) > 0.0:"]))
            body = trade.split("\n") + ([after] if after and where.startswith("for") else [])
            if where:
                lines.append(where + "".join(f"\n        {line}" for line in body))
            else:
                lines.extend(body)
            if after and not where.startswith("for") and "[i]" not in after:
                lines.append(after)
        else:
            lines.append(draw(st.sampled_from(["x += 0.5", "x *= 1.5"])))
    a, b, c = pick(), pick(), pick()
    lines.append(f"return np.sum({a} * {b}) + np.sum({c} * x)")
    return PROGRAM_HEADER + "def f(x):\n" + "".join(f"    {line}\n" for line in lines)


_programs = iter(range(10**9))


@pytest.fixture(scope="module")
def program_directory(tmp_path_factory: Any) -> Any:
    return tmp_path_factory.mktemp("alias_programs")


@settings(max_examples=max(60, settings.default.max_examples * 6))
@given(source=alias_programs(), seed=st.integers(0, 2**16))
def test_random_alias_programs(program_directory: Any, source: str, seed: int) -> None:
    """Each program is differentiated right in both modes (against finite differences of
    the same numpy code) or refused with a clear error at one of its lines; the caller's
    ``x`` never changes."""
    name = f"alias_program_{next(_programs)}"
    path = program_directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        x = np.random.default_rng(seed).uniform(-1.0, 1.0, 4)
        expected = numeric_grad(module.f, (x,))
        for mode in MODES:
            given_x = x.copy()
            try:
                got = srcgrad.grad(module.f, mode=mode)(given_x)
            except srcgrad.SrcgradError as exc:
                event(f"refused: {type(exc).__name__}")
                assert exc.filename == str(path) and exc.lineno is not None, str(exc)
                assert exc.source_line and exc.source_line.strip() in source, str(exc)
                continue
            event("differentiated")
            scale = max(1.0, float(np.max(np.abs(expected))))
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * scale, err_msg=source)
            np.testing.assert_array_equal(given_x, x)
    finally:
        sys.modules.pop(name, None)


# -- what the function returns besides its value is not changed by the backward sweep -----


def aux_written_array(x):
    y = x * 2.0
    y[0] = x[1] * 3.0
    return np.sum(y * y), y


def restored_in_callee(x):
    y = x * 2.0
    s = np.sum(np.sin(y))
    y[0] = s
    return y


def aux_from_callee(x):
    z = restored_in_callee(x)
    return np.sum(z * z), z


def aux_list_of_written(x):
    y = x * 2.0
    y[0] = x[1] * 3.0
    return np.sum(y * y), [y, x]


@pytest.mark.parametrize("func", [aux_written_array, aux_from_callee])
@pytest.mark.parametrize("mode", MODES)
def test_aux_is_what_the_function_returned(func, mode: str) -> None:
    """has_aux: the auxiliary array is the one the function returns (the backward sweep
    restores arrays in place; it gets a copy taken before), and the gradient is right."""
    value, aux = func(X3.copy())
    (got_value, got_aux), gradient = srcgrad.value_and_grad(func, has_aux=True, mode=mode)(X3)
    np.testing.assert_allclose(got_value, value)
    np.testing.assert_allclose(got_aux, aux)
    np.testing.assert_allclose(
        gradient, numeric_grad(lambda x: func(x)[0], (X3,)), rtol=1e-6, atol=1e-6
    )
    gradient, got_aux = srcgrad.grad(func, has_aux=True, mode=mode)(X3)
    np.testing.assert_allclose(got_aux, aux)


def aux_list_of_restored(x):
    y = x * 2.0
    z = np.sin(y)  # (its adjoint reads y before the write: the write is undone)
    y[0] = x[1] * 3.0
    return np.sum(y * y) + np.sum(z), [y, x]


def test_aux_list_holding_a_restored_array_is_refused() -> None:
    with pytest.raises(R, match=r"return a copy of that array") as info:
        srcgrad.grad(aux_list_of_restored, has_aux=True)(X3)
    assert "return np.sum(y * y) + np.sum(z), [y, x]" in str(info.value)


def test_aux_list_holding_a_written_array_no_adjoint_restores() -> None:
    """The list the function returns shares y's memory, but no adjoint reads y's value
    before the write into it: the write is not undone, and the list is what the
    function returned."""
    value, aux = aux_list_of_written(X3.copy())
    gradient, got_aux = srcgrad.grad(aux_list_of_written, has_aux=True)(X3)
    np.testing.assert_allclose(got_aux[0], aux[0])
    np.testing.assert_allclose(
        gradient,
        numeric_grad(lambda x: aux_list_of_written(x)[0], (X3,)),
        rtol=1e-6,
        atol=1e-6,
    )
