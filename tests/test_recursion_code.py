"""Recursive functions (issue 19): the entry point's derivative calls the generated pair
(``f_fwd``/``f_bwd`` in reverse mode, ``jvp_f`` in forward mode) instead of repeating its
body; the record holds only what the adjoint cannot compute again from its parameters
(not ``n == 0`` nor ``n - 1``); the rank of a recursive call's value is the rank the
function returns (no ``check_scalar``/``unbroadcast`` on floats).

Values against autograd running the same source (``autograd_oracle.autograd_twin``:
the recursive calls run the twin too) and against central differences, in both modes
and to second order; the generated text of ``power`` against the text a person writes.
"""

from __future__ import annotations

import ast
import textwrap

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def sines(x, n):
    return x if n == 0 else np.sin(sines(x, n - 1)) * x


def sines_sum(x, n):
    return np.sum(sines(x, n))


def slice_sum(v):
    if v.shape[0] == 1:
        return np.sin(v[0]) * v[0]
    return np.cos(v[0]) * v[-1] + slice_sum(v[1:])


def even(x, n):
    if n == 0:
        return np.sum(x * x)
    return np.sum(np.sin(x)) + odd(0.9 * x, n - 1)


def odd(x, n):
    if n == 0:
        return np.sum(np.cos(x))
    return even(x * x, n - 1)


def halves(v):
    n = v.shape[0]
    if n == 1:
        return np.exp(v[0]) * v[0]
    half = n // 2
    return halves(v[:half]) * halves(v[half:])


def shrink(x, k):
    """A recursion whose calls take arguments of other ranks (2, 1, 0)."""
    if k == 0:
        return x * x
    return shrink(np.sum(np.sin(x), axis=0), k - 1)


def reassigns(x, n):
    """``m < 0`` and ``m`` are computed from the first ``n``, which a later line may
    change: not from the ``n`` the adjoint reads (the last one, from the record)."""
    m = n - 1
    if n > 1:
        n = n - 10
    if m < 0:
        return x * n
    return np.sin(x) * reassigns(x, m) + x * n


#: (function, arguments): the first argument is differentiated
CASES = [
    (power, (1.3, 4)),
    (power, (0.7, 0)),
    (sines_sum, (np.array([0.3, -0.8, 1.1]), 3)),
    (sines, (0.4, 5)),
    (slice_sum, (np.array([0.5, -1.2, 0.9, 2.0]),)),
    (even, (np.array([0.2, -0.4, 0.6]), 3)),
    (even, (np.array([0.2, -0.4]), 4)),
    (halves, (np.array([0.1, 0.2, -0.3, 0.4, 0.5]),)),
    (shrink, (np.array([[0.1, 0.2], [-0.3, 0.4], [0.5, 0.6]]), 2)),
    (reassigns, (0.8, 3)),
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
    direction = np.ones_like(args[0]) * 0.5
    _, tangent = srcgrad.jvp(func)(*args, direction)
    np.testing.assert_allclose(tangent, np.sum(expected * direction), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("func, args", CASES, ids=IDS)
def test_hessian_agrees_with_autograd(func, args):
    expected = autograd.hessian(autograd_twin(func))(*args)
    np.testing.assert_allclose(srcgrad.hessian(func)(*args), expected, rtol=1e-9, atol=1e-12)
    inner = srcgrad.grad(func)
    np.testing.assert_allclose(srcgrad.jacobian(inner)(*args), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("func, args", CASES, ids=IDS)
def test_finite_differences_to_second_order(func, args):
    check_grads(func, args, order=2)


def test_vjp_of_an_array_valued_recursion():
    x = np.array([0.3, -0.8, 1.1])
    cotangent = np.array([1.0, -2.0, 0.5])
    got = srcgrad.vjp(sines)(x, 3, cotangent)
    pullback, _ = autograd.make_vjp(autograd_twin(sines))(x, 3)
    np.testing.assert_allclose(got, pullback(cotangent), rtol=1e-10)
    with pytest.raises(ValueError, match="cotangent"):
        srcgrad.vjp(sines)(x, 3, np.ones(2))


def test_a_float_is_scalar_and_an_array_is_refused():
    with pytest.raises(ValueError, match="scalar"):
        srcgrad.grad(sines)(np.array([0.3, -0.8]), 2)


EXPECTED_POWER = '''
def grad_power(x, n):
    _, rec = power_fwd(x, n)
    return power_bwd(x, n, rec, 1.0)

def power_fwd(x, n):
    """Value of power(x, n) and the record its adjoint needs."""
    t3 = None
    t3_rec = None
    if n == 0:
        result = 1.0
    else:
        t3, t3_rec = power_fwd(x, n - 1)
        result = x * t3
    return (result, (t3, t3_rec))

def power_bwd(x, n, rec, result_bar):
    """Adjoint of power(x, n) for the output adjoint result_bar."""
    t3, t3_rec = rec
    x_bar = 0.0
    if n != 0:
        x_bar += result_bar * t3
        x_bar += power_bwd(x, n - 1, t3_rec, result_bar * x)
    return x_bar
'''


def _functions(source: str) -> dict[str, str]:
    """Each function of a module, as ``ast.unparse`` writes it (comments left out)."""
    tree = ast.parse(source)
    return {f.name: ast.unparse(f) for f in tree.body if isinstance(f, ast.FunctionDef)}


def test_power_is_written_as_by_hand():
    g = srcgrad.grad(power)
    assert g(2.0, 3) == 12.0
    got = _functions(g.source)
    want = _functions(textwrap.dedent(EXPECTED_POWER))
    for name, text in want.items():
        assert got[name] == text, name
    assert "check_scalar" not in got and "unbroadcast" not in got
    assert "# grad of: return x * power(x, n - 1)" in g.source


def test_the_record_holds_the_recursive_value_and_its_record():
    fwd = _power_pair()["power_fwd"]
    *_, rec = fwd(2.0, 2)
    value, inner = rec  # (the value of power(x, 1) and its record)
    assert value == 2.0
    assert inner[0] == 1.0 and inner[1] == (None, None)


def _power_pair() -> dict:
    g = srcgrad.grad(power)
    g(2.0, 2)
    namespace = {"np": np}
    exec(compile(g.source, "<power>", "exec"), namespace)
    return {k: namespace[k] for k in ("power_fwd", "power_bwd")}


def test_value_and_grad_and_vjp_call_the_pair():
    for derivative, args, entry in (
        (srcgrad.value_and_grad(power), (2.0, 3), "value_and_grad_power"),
        (srcgrad.vjp(power), (2.0, 3, 1.0), "vjp_power"),
    ):
        assert derivative(*args) in ((8.0, 12.0), 12.0)
        functions = _functions(derivative.source)
        assert functions[entry].count("\n") <= 3, functions[entry]
        assert "power_fwd(x, n)" in functions[entry]
        assert "power_bwd(x, n, rec, " in functions[entry]


def test_forward_mode_has_one_jvp_of_power():
    d = srcgrad.jvp(power)
    assert d(2.0, 3, 1.0) == (8.0, 12.0)
    names = [f.name for f in ast.parse(d.source).body if isinstance(f, ast.FunctionDef)]
    assert names.count("jvp_power") == 1
    assert not any(n.startswith("jvp_power_") for n in names)
    assert "# grad of: return x * power(x, n - 1)" in d.source


def test_every_branch_of_a_jvp_names_its_line():
    d = srcgrad.grad(sines_sum, mode="forward")
    d(np.array([0.2, -0.4]), 3)
    body = d.source[d.source.index("def jvp_sines(") :]
    assert body.count("# grad of: return x if n == 0 else np.sin(sines(x, n - 1)) * x") == 2


def test_mutual_recursion_enters_through_its_own_pair():
    g = srcgrad.grad(even)
    g(np.array([0.2, -0.4]), 3)
    entry = _functions(g.source)["grad_even"]
    assert "even_fwd(x, n)" in entry and "even_bwd(x, n, rec, 1.0)" in entry


def test_a_call_with_other_argument_kinds_keeps_its_body():
    """The entry point takes an array, its recursive calls a float: no pair has the
    entry point's signature, so its body stays (and the values are right)."""

    def outer(x, n):
        if n == 0:
            return np.sum(x)
        return outer(np.sum(x) * 0.5, n - 1) * 2.0

    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(srcgrad.grad(outer)(x, 2), np.ones(2))
