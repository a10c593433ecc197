"""Issue 18, items 3-5 (2): functions defined inside the function differentiated, a
nested ``def`` (a closure reading the function's variables, active ones too) and a
lambda bound to a name, each called there. Each call is written out where it stands
(``normalize.nested``), which computes what the closure computes: it reads the
variables as they are at the call. Checked against autograd running the same closures
and finite differences, in both modes and to second order; what cannot be written out
(a closure returned, defined under an ``if``, recursive...) is refused at the user's
line with what to write instead. A closure or lambda passed to a module function is
written out with it: the module function's body where it is called, the closure where
that body calls its parameter."""

from __future__ import annotations

import autograd
import functions_everyday as fe
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

X = np.array([0.3, -0.5, 1.2])
W = np.array([[0.5, 0.1, -0.3], [0.2, 0.4, 0.1], [-0.2, 0.3, 0.6]])
MODES = ("reverse", "forward")
HERE = r"functions_everyday.py:\d+:\n"  # (the user's file and line start each message)

CASES = [
    (fe.closure_layers, (X, W), (0, 1)),
    (fe.closure_late_binding, (X,), 0),
    (fe.closure_shadowing, (X,), 0),
    (fe.closure_with_control_flow, (X, 4), 0),
    (fe.closure_in_a_comprehension, (X, W[0]), (0, 1)),
    (fe.closure_passed_on, (X,), 0),
    (fe.lambda_passed_on, (X,), 0),
    (fe.closure_passed_two_levels_down, (0.7, X), (0, 1)),
    (fe.lambdas_passed_in_a_loop, (X * X + 0.5,), 0),
    (fe.lambda_passed_to_another_module, (X,), 0),
    (fe.lambda_passed_by_keyword_reads_late, (X,), 0),
]


@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_nested_functions_differentiate_as_autograd_does(f, args, wrt):
    twin = autograd_twin(f)
    expected = autograd.grad(twin, wrt)(*args)
    for mode in MODES:
        got = srcgrad.grad(f, wrt=wrt, mode=mode)(*args)
        for g, e in zip(
            got if isinstance(wrt, tuple) else [got],
            expected if isinstance(wrt, tuple) else [expected],
        ):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-14)
    first = wrt[0] if isinstance(wrt, tuple) else wrt
    hessian = autograd.hessian(twin, first)(*args)
    np.testing.assert_allclose(srcgrad.hessian(f, wrt=first)(*args), hessian, rtol=1e-9, atol=1e-12)
    check_grads(f, args, wrt=wrt, order=2)


def test_the_closure_reads_the_variables_as_they_are_when_called():
    """``scale`` changes between the two calls: the second reads ``sin(x)``."""
    x = X
    value, gradient = srcgrad.value_and_grad(fe.closure_late_binding)(x)
    assert value == pytest.approx(fe.closure_late_binding(x))
    expected = 6 * x**2 + np.cos(x) * x**3 + np.sin(x) * 3 * x**2
    np.testing.assert_allclose(gradient, expected, rtol=1e-12)


def test_a_lambda_passed_to_another_module_reads_the_names_where_each_is_written():
    """The lambda's ``k`` and ``SCALE`` are the caller's (3.0, 2.0); the callee's own
    ``k`` (10.0) and ``SCALE`` (0.5, its module's) are not."""
    for mode in MODES:
        got = srcgrad.grad(fe.lambda_passed_to_another_module, mode=mode)(X)
        np.testing.assert_allclose(got, np.cos(X) * 3.0 * 2.0 * 0.5, rtol=1e-12)
        got = srcgrad.grad(fe.lambda_passed_by_keyword_reads_late, mode=mode)(X)
        np.testing.assert_allclose(got, np.full(3, 3.0 * 0.5), rtol=1e-12)


def test_a_lambda_passed_on_is_written_out_where_the_callee_calls_it():
    derivative = srcgrad.grad(fe.lambda_passed_on)
    derivative(X)
    source = derivative.source
    code = [line for line in source.splitlines() if not line.strip().startswith(("#", '"""'))]
    assert not any("lambda t" in line or "apply_to" in line for line in code), source
    assert any("np.sin(" in line for line in code), source


def test_the_written_out_body_in_the_generated_code():
    derivative = srcgrad.grad(fe.closure_layers, wrt=1)
    derivative(X, W)
    source = derivative.source
    assert "def layer" not in source and "lambda" not in source, source
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert sum(line.endswith(" @ w") for line in code) == 2, source  # (one per call)
    assert "# grad of: z = h @ w" in source, source  # (comments name the nested line)


@pytest.mark.parametrize(
    "f, match",
    [
        (fe.closure_returned, HERE + r".*return g\n.*`g` is used as a value"),
        (
            fe.closure_passed_to_one_that_rebinds_it,
            HERE + r".*assigns_its_parameter\(lambda.*\n.*`assigns_its_parameter` assigns to "
            r"its parameter `g`.*module level",
        ),
        (fe.closure_in_a_branch, HERE + r".*def g\(y\):\n.*at the top level of the function"),
        (fe.closure_recursive, HERE + r".*g\(y \* y, n - 1\)\n.*in a statement of its own"),
        (fe.closure_default_computed, HERE + r".*by=s\):\n.*constant defaults only"),
        (fe.closure_early_return, HERE + r".*return y\n.*its one `return` at its end"),
        (fe.closure_nonlocal, HERE + r".*nonlocal total\n.*return the new value"),
        (fe.closure_called_conditionally, HERE + r".*g\(x\) if.*\n.*in a statement of its own"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused(f, match, mode):
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=match):
        srcgrad.grad(f, mode=mode)(X)


# -- issue 18, leftover items 1-2: closures a factory makes, and a list of lambdas
# iterated, are written out (see test_function_factories.py) --------------------------
def _make_scaler(s):
    def g(y):
        return y * s

    return g


def closure_made_by_a_factory(x):
    g = _make_scaler(3.0)
    return np.sum(g(x))


def closure_capturing_an_active_value(x):
    g = _make_scaler(x[0])  # (s depends on x: never a constant)
    return np.sum(g(x))


def lambdas_in_a_list(x):
    fs = [lambda y: y * 2, lambda y: y**2]
    return sum(np.sum(f(x)) for f in fs)


@pytest.mark.parametrize(
    "f",
    [closure_made_by_a_factory, closure_capturing_an_active_value, lambdas_in_a_list],
    ids=lambda f: f.__name__,
)
def test_closures_made_by_a_factory_or_stored_in_this_module(f):
    twin = autograd_twin(f)
    for mode in MODES:
        np.testing.assert_allclose(
            srcgrad.grad(f, mode=mode)(X), autograd.grad(twin)(X), rtol=1e-10
        )
    np.testing.assert_allclose(srcgrad.hessian(f)(X), autograd.hessian(twin)(X), atol=1e-12)
    check_grads(f, (X,), order=2)
