"""``drop_read_only_copies``: a copy goes only where no one could tell it was a copy.

The pass runs alone on small functions (dropped where nothing writes while the copy is
read; kept where the copy or its source is written into, through an alias, in a later
trip, or where the copy goes somewhere else), and end to end on gradients whose code it
changes: the values of finite differences, and results that share no memory with the
arguments or with each other."""

from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest

import srcgrad
from srcgrad.compiler.optimize import Context, drop_read_only_copies
from srcgrad.testing import check_grads


def _run(source: str) -> str:
    """The pass alone on the body of the function ``source``."""
    func = ast.parse(textwrap.dedent(source)).body[0]
    arguments = frozenset(a.arg for a in func.args.args)
    ctx = Context(
        params=arguments, arguments=arguments, xp="np", helpers={"unbroadcast": "unbroadcast"}
    )
    body, _ = drop_read_only_copies(func.body, ctx)
    func.body = body
    return ast.unparse(func)


def _dropped(source: str) -> bool:
    return ".copy()" not in _run(source)


def test_a_copy_read_before_any_write_is_the_value():
    source = """
    def f(u_bar, t8, r):
        for _ in range(3):
            t9_bar = u_bar[1:-1].copy()
            r_bar = np.sum(t9_bar * t8)
            t8_bar = t9_bar * r
            u_bar[:-2] += t8_bar
            u_bar[1:-1] += t8_bar * -2.0
        return (u_bar, r_bar)
    """
    assert "t9_bar = u_bar[1:-1]\n" in _run(source)


def test_a_copy_written_into_stays():
    assert not _dropped(
        """
    def f(y_bar, i):
        g = y_bar[i].copy()
        y_bar[i] = 0.0
        g[0] = 1.0
        return np.sum(g)
    """
    )
    assert not _dropped(
        """
    def f(y_bar):
        g = y_bar.copy()
        g += 1.0
        return np.sum(g)
    """
    )


def test_a_source_written_before_the_last_read_keeps_its_copy():
    assert not _dropped(
        """
    def f(y_bar, i):
        g = y_bar[i].copy()
        y_bar[i] = 0.0
        return np.sum(g * 2.0)
    """
    )


def test_a_write_through_an_alias_of_the_source_keeps_the_copy():
    assert not _dropped(
        """
    def f(y_bar, i):
        view = y_bar.T
        g = y_bar[i].copy()
        view[0] = 0.0
        return np.sum(g * 2.0)
    """
    )
    assert not _dropped(  # (the alias made after the copy, through a list)
        """
    def f(y_bar, i):
        g = y_bar[i].copy()
        tape = []
        tape.append(y_bar)
        z = tape.pop()
        z[0] = 0.0
        return np.sum(g * 2.0)
    """
    )


def test_a_write_by_a_call_keeps_the_copy():
    for write in (
        "np.copyto(y_bar, 0.0)",
        "np.add(y_bar, 1.0, out=y_bar)",
        "np.add(y_bar, 1.0, y_bar)",
        "y_bar.fill(0.0)",
        "user_function(y_bar)",
        "np.random.shuffle(y_bar)",
    ):
        source = f"""
        def f(y_bar):
            g = y_bar.copy()
            {write}
            return np.sum(g * 2.0)
        """
        assert not _dropped(source), write


def test_a_copy_that_goes_elsewhere_stays():
    for escape in (
        "c = g[1:]",
        "c = g",
        "tape.append(g)",
        "return g",
        "return (g, y_bar)",
        "c = list(g)",
        "tape += [g]",
        "for row in g: c = row",
    ):
        source = f"""
        def f(y_bar, tape):
            g = y_bar.copy()
            {escape}
            return c
        """
        assert not _dropped(source), escape


def test_in_a_loop_a_copy_read_in_the_next_trip_stays():
    source = """
    def f(y_bar, n):
        for i in range(n):
            if i > 0:
                s = np.sum(g)
            g = y_bar.copy()
            y_bar[0] = s
        return s
    """
    assert not _dropped(source)
    source = """
    def f(y_bar, n):
        for i in range(n):
            g = y_bar.copy()
        y_bar[0] = 1.0
        return np.sum(g)
    """
    assert not _dropped(source)  # (read after the loop)


def test_a_write_in_a_loop_among_the_reads_keeps_the_copy():
    source = """
    def f(y_bar, n):
        g = y_bar[0].copy()
        s = 0.0
        for i in range(n):
            s = s + np.sum(g)
            y_bar[0] = s
        return s
    """
    assert not _dropped(source)


def test_np_copy_and_a_module_array_stay():
    # (np.copy makes an array of a list or a number, which the value may be)
    kept = _run(
        """
    def f(y_bar):
        g = np.copy(y_bar)
        return np.sum(g * 2.0)
    """
    )
    assert "np.copy(y_bar)" in kept
    assert not _dropped(
        """
    def f(x):
        g = TABLE.copy()
        return np.sum(g * x)
    """
    )


# -- end to end -----------------------------------------------------------------------------


def heat(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def rows_written(a, w):
    out = a.copy()
    for i in range(a.shape[0]):
        out[i] = out[i] * w + out[i]
    return np.sum(out * out)


def read_copy(x, y):
    z = x.copy()
    return np.sum(z * y) + np.sum(np.sin(z))


@pytest.mark.parametrize(
    "f, args, wrt",
    [
        (heat, (np.linspace(-1.0, 1.0, 9) ** 2, 0.2, 4), (0, 1)),
        (rows_written, (np.arange(12.0).reshape(4, 3) / 10, np.array([0.5, -1.0, 2.0])), (0, 1)),
        (read_copy, (np.linspace(0.0, 1.0, 5), np.linspace(1.0, 2.0, 5)), (0, 1)),
    ],
)
def test_gradients_match_finite_differences_and_share_no_memory(f, args, wrt):
    """(autograd takes no item writes: finite differences, both modes, second order.)"""
    check_grads(f, args, wrt=wrt, modes=("forward", "reverse"), order=2)
    before = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    got = srcgrad.grad(f, wrt=wrt)(*args)
    for a, b in zip(args, before):  # (nothing written into the arguments)
        np.testing.assert_array_equal(a, b)
    arrays = [g for g in got if isinstance(g, np.ndarray)]
    for k, g in enumerate(arrays):
        assert not any(np.shares_memory(g, a) for a in args if isinstance(a, np.ndarray))
        assert not any(np.shares_memory(g, h) for h in arrays[k + 1 :])


def test_the_heat_gradient_reads_u_bar_without_a_copy():
    g = srcgrad.grad(heat, wrt=(0, 1))
    g(np.linspace(0.0, 1.0, 8), 0.25, 3)
    assert ".copy()" not in g.source.split("reversed")[1]
    assert "unbroadcast" not in g.source


def test_a_row_zeroed_after_it_is_read_keeps_its_copy():
    g = srcgrad.grad(rows_written, wrt=(0, 1))
    g(np.ones((3, 2)), np.ones(2))
    assert "out_bar[i].copy()" in g.source
