"""Issue 18, items 3-5 (1): ``with np.errstate(...)`` blocks. numpy's errstate changes
which floating-point errors warn, never a value: the block's body is differentiated where
it stands, and the derivative runs under the same settings, so warnings the user silenced
stay silent in the adjoint statements too. Settings that change what the function does
(``"raise"``, ``"call"``) and other context managers are refused at the user's line.
Checked against autograd running the same source and finite differences, in both modes
and to second order."""

from __future__ import annotations

import warnings

import autograd
import functions_everyday as fe
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

X = np.array([0.4, 1.3, 2.1])
Y = np.array([1.0, -0.5, 2.0])
MODES = ("reverse", "forward")
HERE = r"functions_everyday.py:\d+:\n"  # (the user's file and line start each message)

CASES = [
    (fe.safe_log_loss, (X, Y)),
    (fe.errstate_in_a_loop_and_a_helper, (X,)),
    (fe.errstate_around_the_return, (X,)),
]


@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", "args"))
def test_errstate_blocks_differentiate_as_autograd_does(f, args):
    twin = autograd_twin(f)
    expected = autograd.grad(twin)(*args)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(*args), expected, rtol=1e-10)
    hessian = autograd.hessian(twin)(*args)
    np.testing.assert_allclose(srcgrad.hessian(f)(*args), hessian, rtol=1e-9, atol=1e-12)
    check_grads(f, args, order=2)


@pytest.mark.parametrize("mode", MODES)
def test_the_warnings_silenced_stay_silent_in_the_derivative(mode):
    """At 0, ``log`` divides by zero in the primal and its adjoint ``1 / x`` in the
    derivative, as does ``1 / x``: none warns (the test fails on any warning)."""
    x = np.array([0.0, 1.3, 2.1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fe.safe_log_loss(x, Y)
        srcgrad.grad(fe.safe_log_loss, mode=mode)(x, Y)
        srcgrad.grad(fe.errstate_around_the_return, mode=mode)(x)
        srcgrad.hessian(fe.safe_log_loss)(x, Y)


def test_errstate_in_the_generated_code():
    derivative = srcgrad.grad(fe.errstate_in_a_loop_and_a_helper)
    derivative(X)
    source = derivative.source
    head = "def grad_errstate_in_a_loop_and_a_helper(x):\n    with np.errstate(under='ignore'):\n"
    assert head in source, source
    assert source.count("with np.errstate(over='ignore'):") == 2, source  # _softplus's pair
    jvp = srcgrad.jvp(fe.safe_log_loss)
    jvp(X, Y, X)
    assert "with np.errstate(divide='ignore', invalid='ignore'):" in jvp.source, jvp.source


@pytest.mark.parametrize(
    "f, args, match",
    [
        (fe.errstate_raising, (X,), HERE + r'.*divide="raise".*\n.*only where it'),
        (fe.errstate_named, (X,), HERE + r".*as state.*\n.*keywords alone and no `as`"),
        (fe.another_context, (X, "nothing"), r"open\(path\).*\n.*other than `with np.errstate"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused(f, args, match, mode):
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=match):
        srcgrad.grad(f, mode=mode)(*args)
