"""Issue 18, leftover item 1: closures made by a factory (``step = make_step(h)``, a
factory returning a lambda) and called in the function differentiated. The factory's
closure is written out as a nested function, its captured parameters bound to the
call's arguments (``normalize.factories``): captured values that depend on the
arguments (active ones) are differentiated too. Checked against autograd running the
same source and against finite differences, in both modes and to second order; a
factory srcgrad cannot follow (branches choosing between closures, several closures,
``*args``) and closures taken out of a container by an index computed at run time are
refused at the user's line, with what to write instead."""

from __future__ import annotations

import autograd
import functions_factories as ff
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

THETA = np.array([0.7, 0.3])
Y0 = np.array([0.5, 1.0, -0.4])
X = np.array([0.3, -0.5, 1.2])
P = np.array([0.2, 0.8])
MODES = ("reverse", "forward")
HERE = r"functions_factories.py:\d+:\n"  # (the user's file and line start each message)

CASES = [
    (ff.fit_euler, (THETA, Y0)),
    (ff.fit_rk4, (THETA, Y0)),
    (ff.scaled_sine, (X,)),
    (ff.captured_active, (X,)),
    (ff.gauss_fit, (P,)),
    (ff.two_steps, (THETA, Y0)),
    (ff.step_size_active, (THETA, Y0)),
    (ff.loss_calling_a_helper, (THETA, Y0)),
]


@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_closures_of_factories_differentiate_as_autograd_does(f, args):
    twin = autograd_twin(f)
    expected = autograd.grad(twin)(*args)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(*args), expected, rtol=1e-10)
    hessian = autograd.hessian(twin)(*args)
    np.testing.assert_allclose(srcgrad.hessian(f)(*args), hessian, rtol=1e-9, atol=1e-12)
    check_grads(f, args, wrt=0, order=2)


def test_the_closure_is_written_out_with_what_it_captures():
    """The step size, a constant, is written where the closure reads it; the captured
    function is called by its name (its own derivative is generated)."""
    derivative = srcgrad.grad(ff.fit_rk4)
    derivative(THETA, Y0)
    source = derivative.source
    own = source[source.index("def grad_fit_rk4") : source.index("def rhs_fwd")]
    code = [line.strip() for line in own.splitlines() if not line.strip().startswith("#")]
    assert not any("make_rk4" in line or "step" in line for line in code), source
    assert "rhs_fwd(" in source and "rhs_bwd(" in source, source
    assert "half = 0.025" in code, source  # (the factory's own variable, computed once)
    assert "# grad of: k4 = f(y + dt * k3, th)" in source, source  # (the factory's line)
    forward = srcgrad.jvp(ff.scaled_sine)
    forward(X, X)
    # (the captured 2.0 is a literal in the code, whether the product is written
    # `2.0 * np.sin(x)` or, after buffer reuse, `t = np.sin(x)` then `t *= 2.0`)
    lines = [line.strip() for line in forward.source.splitlines()]
    assert "2.0 * np.sin(" in forward.source or "*= 2.0" in forward.source, forward.source
    code = [line for line in lines if not line.startswith(("#", '"""'))]
    assert not any("scaled(" in line for line in code), forward.source


def test_an_active_captured_value_is_computed_once_where_the_factory_is_called():
    derivative = srcgrad.grad(ff.captured_active)
    derivative(X)
    code = [line.strip() for line in derivative.source.splitlines()]
    assert "a = x[0] * x[1]" in code, derivative.source
    assert sum(line.startswith("a = ") for line in code) == 1, derivative.source


# -- a factory of another module, whose names the function binds to other objects -------

rhs = None  # (this module's `rhs` is not the factory's: the closure reads the factory's)
np_other = np


def fit_euler_here(theta, y0):
    rhs = theta * 2.0  # noqa: F841 (a variable named like the factory's global)
    step = ff.make_euler(0.1)
    y = step(y0, theta)
    return np.sum(y * y)


def test_the_factorys_names_are_read_from_its_module():
    twin = autograd_twin(ff.fit_euler)
    expected = autograd.grad(twin)(THETA, Y0)  # (five steps: recompute one below)
    assert expected is not None
    y = Y0 + 0.1 * ff.rhs(Y0, THETA)
    value = srcgrad.value_and_grad(fit_euler_here)(THETA, Y0)[0]
    assert value == pytest.approx(np.sum(y * y), rel=1e-12)
    for mode in MODES:
        got = srcgrad.grad(fit_euler_here, mode=mode)(THETA, Y0)
        ag = autograd.grad(lambda t: _euler_once(t, Y0))(THETA)
        np.testing.assert_allclose(got, ag, rtol=1e-10)
    check_grads(fit_euler_here, (THETA, Y0), wrt=0, order=2)


def _euler_once(theta, y0):
    anp = autograd.numpy
    y = y0 + 0.1 * (-theta[0] * y0 + theta[1] * anp.sin(y0))
    return anp.sum(y * y)


def test_a_rebound_global_of_the_factory_makes_the_code_again(monkeypatch):
    """The factory's free names are checked on each call, as the function's are."""
    derivative = srcgrad.grad(ff.fit_euler)
    before = derivative(THETA, Y0)
    monkeypatch.setattr(ff, "rhs", lambda y, th: -th[0] * y)
    after = derivative(THETA, Y0)
    assert not np.allclose(before, after)
    twin = autograd_twin(ff.fit_euler)
    np.testing.assert_allclose(after, autograd.grad(twin)(THETA, Y0), rtol=1e-10)
    for mode in MODES:
        check_grads(ff.fit_euler, (THETA, Y0), wrt=0, modes=(mode,))


def test_a_new_code_of_the_factory_makes_the_code_again(monkeypatch):
    derivative = srcgrad.grad(ff.scaled_sine)
    np.testing.assert_allclose(derivative(X), 2.0 * (np.sin(X) + X * np.cos(X)), rtol=1e-12)
    monkeypatch.setattr(ff.scaled, "__code__", (lambda a: lambda x: a * np.cos(x)).__code__)
    np.testing.assert_allclose(derivative(X), 2.0 * (np.cos(X) - X * np.sin(X)), rtol=1e-12)


def test_a_factory_in_a_function_called_is_checked_with_it(monkeypatch):
    """``simulate``, called by the function differentiated, uses ``make_rk4``: a new code
    of the factory makes the code again (``Derived.is_current``)."""
    derivative = srcgrad.grad(ff.loss_calling_a_helper)
    before = derivative(THETA, Y0)
    derivative(THETA, Y0)  # (the quick path)
    monkeypatch.setattr(ff.make_rk4, "__code__", ff.make_euler_of.__code__)
    after = derivative(THETA, Y0)
    twin = autograd_twin(ff.loss_calling_a_helper)
    np.testing.assert_allclose(after, autograd.grad(twin)(THETA, Y0), rtol=1e-10)
    assert not np.allclose(before, after)


# -- refused ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "f, args, match",
    [
        (
            ff.branching_factory,
            (X,),
            HERE + r'.*make_branching\("sin"\)\n.*an `if` \(functions_factories.py:\d+: a '
            r"branch.*Write the closure's body where it is called",
        ),
        (
            ff.starred_factory,
            (X,),
            HERE + r".*make_many\(1.0, 2.0\)\n.*takes \*args or \*\*kwargs: name its param",
        ),
        (ff.pair_factory, (X,), HERE + r".*f\(x\) \+ g\(x\)\)\n.*`f` is a variable here.*"),
        (ff.closures_in_a_list, (X, 1), HERE + r".*fs\[i\]\(x\).*\n.*constant"),
        (ff.factory_in_a_loop, (X,), HERE + r".*scaled\(k \+ 1.0\)\n.*at the top level"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused(f, args, match, mode):
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=match):
        srcgrad.grad(f, mode=mode)(*args)


# -- issue 18, leftover item 2: tuples, lists and dicts of functions ---------------------

TABLES = [
    (ff.loop_over_a_display, (X,)),
    (ff.tuple_by_constant_index, (X,)),
    (ff.dict_by_constant_key, (X,)),
    (ff.loop_over_dict_items, (X, THETA)),
    (ff.lambdas_and_closures_in_a_list, (X,)),
    (ff.nested_defs_in_a_table, (X, X[::-1].copy())),
    (ff.functions_passed_through_a_table, (THETA, Y0)),
]


@pytest.mark.parametrize("f, args", TABLES, ids=lambda v: getattr(v, "__name__", ""))
def test_tables_of_functions_differentiate_as_autograd_does(f, args):
    twin = autograd_twin(f)
    for wrt in range(len(args)):
        expected = autograd.grad(twin, wrt)(*args)
        for mode in MODES:
            got = srcgrad.grad(f, wrt=wrt, mode=mode)(*args)
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    hessian = autograd.hessian(twin)(*args)
    np.testing.assert_allclose(srcgrad.hessian(f)(*args), hessian, rtol=1e-9, atol=1e-12)
    check_grads(f, args, wrt=tuple(range(len(args))), order=2)


def test_a_loop_over_functions_is_written_out_once_per_function():
    derivative = srcgrad.jvp(ff.loop_over_a_display)
    derivative(X, X)
    source = derivative.source
    assert "for " not in source, source
    assert "np.sin(x)" in source and "np.cos(x)" in source and "jvp_cube(x, x_dot)" in source
    derivative = srcgrad.grad(ff.dict_by_constant_key)
    derivative(X)
    code = [s for s in derivative.source.splitlines() if not s.strip().startswith("#")]
    assert not any("activations" in line for line in code), derivative.source
    assert any("np.cosh(x)" in line for line in code), derivative.source


@pytest.mark.parametrize(
    "f, match",
    [
        (ff.loop_with_a_break, HERE + r".*for f in \(np.sin, np.cos\):\n.*`break`, `continue`"),
        (ff.table_changed, HERE + r".*fs\[0\]\(x\)\)\n.*never changed or passed on"),
        (
            ff.loop_variable_read_after,
            HERE + r".*for f in \(np.sin, np.cos\):\n.*`f` is read outside",
        ),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_tables_that_are_refused(f, match, mode):
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=match):
        srcgrad.grad(f, mode=mode)(X)
