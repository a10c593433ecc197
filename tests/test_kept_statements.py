"""Issue 18, item 4: statements people leave in numerical code are kept in the derivative
as they are, never differentiated: ``assert`` (a check in the primal, its message
computed only when it fails), ``raise`` (under a branch on the function's values), and
``print`` and ``warnings.warn``; f-strings are strings, spelled out as the ``format``
calls Python makes. Derivatives are compared with autograd running the same source."""

from __future__ import annotations

import warnings

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin
from functions_kept import (
    checked,
    checked_in_a_loop,
    formats,
    formats_then_reads,
    import_in_a_branch,
    imports_inside,
    prints,
    rebinds_format,
    warns,
)

import srcgrad

X = np.array([0.3, -0.5, 1.2])
MODES = ("reverse", "forward")


@pytest.mark.parametrize(
    "f, args",
    [
        (checked, (X, 2)),
        (checked_in_a_loop, (X,)),
        (prints, (X,)),
        (imports_inside, (X,)),
        (warns, (X,)),
    ],
    ids=lambda v: getattr(v, "__name__", "args"),
)
@pytest.mark.filterwarnings("ignore:y is positive")
def test_kept_statements_leave_the_derivative_as_autograd_has_it(f, args):
    twin = autograd_twin(f)
    expected = autograd.grad(twin)(*args)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(*args), expected, rtol=1e-10)
    hessian = autograd.hessian(twin)(*args)
    np.testing.assert_allclose(srcgrad.hessian(f)(*args), hessian, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_assert_raises_with_its_message(mode):
    with pytest.raises(AssertionError, match="n must be positive, got -1"):
        srcgrad.grad(checked, mode=mode)(X, -1)
    with pytest.raises(AssertionError, match="n must be positive, got -1"):
        srcgrad.hessian(checked)(X, -1)


@pytest.mark.parametrize("mode", MODES)
def test_a_raise_under_a_branch_raises(mode):
    with pytest.raises(ValueError, match="too big"):
        srcgrad.grad(checked, mode=mode)(X * 100.0, 200)


def test_print_runs_once_per_primal_in_reverse_mode(capsys):
    srcgrad.grad(prints)(X)
    assert capsys.readouterr().out == f"y: {np.round(np.exp(X) * 0.5, 3)}\n"


def test_kept_statements_in_the_generated_code():
    derivative = srcgrad.grad(checked)
    derivative(X, 2)
    source = derivative.source
    assert "raise AssertionError(f'n must be positive, got {n}')" in source, source
    assert "raise ValueError('too big')" in source, source


def test_imports_inside_the_function_bind_for_the_whole_function():
    derivative = srcgrad.grad(imports_inside)
    derivative(X)
    assert "import numpy as np" in derivative.source


def test_an_import_under_a_branch_is_refused():
    for mode in MODES:
        with pytest.raises(srcgrad.UnsupportedSyntaxError, match="only at its top level"):
            srcgrad.grad(import_in_a_branch, mode=mode)(X)


@pytest.mark.parametrize("mode", MODES)
def test_warnings_warn_is_kept_and_warns_once_per_call(mode):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        srcgrad.grad(warns, mode=mode)(X)
    assert [str(w.message) for w in caught] == ["y is positive"]


@pytest.mark.parametrize("mode", MODES)
def test_an_f_string_is_a_string_and_nothing_in_it_is_differentiated(mode):
    y = np.sin(X) * X
    primal = formats(X)
    ratio = primal / np.sum(y * y)  # len(padded) / len(label), as Python formats them
    expected = 2 * y * (np.cos(X) * X + np.sin(X)) * ratio
    np.testing.assert_allclose(srcgrad.grad(formats, mode=mode)(X), expected, rtol=1e-12)
    value, _ = srcgrad.value_and_grad(formats, mode=mode)(X)
    assert value == primal


def test_an_f_string_is_spelled_out_as_pythons_format_calls():
    derivative = srcgrad.grad(formats)
    derivative(X)
    assert "format(repr(x[0]), '>12')" in derivative.source, derivative.source
    assert "format(label, '<' + format(width))" in derivative.source, derivative.source


@pytest.mark.parametrize("mode", MODES)
def test_a_number_read_back_from_an_f_string_is_refused(mode):
    with pytest.raises(srcgrad.NoDerivativeError, match="builtins.format"):
        srcgrad.grad(formats_then_reads, mode=mode)(X)


def test_an_f_string_where_format_is_rebound_is_refused():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="rebinds `format`"):
        srcgrad.grad(rebinds_format)(X)
