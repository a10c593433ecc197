"""Custom rules: ``srcgrad.primitive`` with ``defvjp``/``defjvp``, and ``stop_gradient``."""

from __future__ import annotations

import functions_for_custom as fc
import numpy as np
import pytest

import srcgrad
from srcgrad.errors import NoDerivativeError
from srcgrad.testing import check_grads

X = np.array([0.3, -0.5, 1.2])


def test_primitive_rules_are_used_in_both_modes():
    check_grads(fc.uses_lse, [X])


def test_generated_code_calls_the_users_rules():
    reverse = srcgrad.grad(fc.uses_lse)
    reverse(X)
    assert "logsumexp.vjp(" in reverse.source
    forward = srcgrad.jvp(fc.uses_lse)
    forward(X, np.ones(3))
    assert "logsumexp.jvp((" in forward.source


def test_a_deliberately_scaled_rule_is_picked_up():
    # the true derivative of sum(2 * x) is 2; the rule says 3, and srcgrad must use it
    np.testing.assert_allclose(srcgrad.grad(fc.uses_wrong)(X), 3.0 * np.ones(3))


def test_primitive_with_several_arguments():
    check_grads(fc.uses_scaled, [X, X + 1.0], wrt=(0, 1), modes=("reverse",))
    check_grads(fc.uses_scaled, [X, X + 1.0], wrt=1, modes=("reverse",))


def test_primitive_of_inactive_arguments_needs_no_rule_call():
    g = srcgrad.grad(fc.inactive_primitive)
    np.testing.assert_allclose(g(X, X), np.full(3, fc.logsumexp(X)))
    assert ".vjp(" not in g.source


def test_only_a_forward_rule_is_an_error_in_reverse_mode():
    check_grads(fc.uses_forward_only, [X], modes=("forward",))
    with pytest.raises(NoDerivativeError, match=r"no reverse-mode rule.*@forward_only\.defvjp"):
        srcgrad.grad(fc.uses_forward_only)(X)


def test_only_a_reverse_rule_is_an_error_in_forward_mode():
    with pytest.raises(NoDerivativeError, match=r"no forward-mode rule.*@scaled\.defjvp") as info:
        srcgrad.jvp(fc.uses_scaled)(X, X, np.ones(3))
    assert "functions_for_custom.py" in str(info.value)
    assert "return np.sum(scaled(x, y))" in str(info.value)


def test_a_primitive_without_rules_is_an_error_in_both_modes():
    with pytest.raises(NoDerivativeError, match="no reverse-mode rule"):
        srcgrad.grad(fc.uses_no_rules)(X)
    with pytest.raises(NoDerivativeError, match="no forward-mode rule"):
        srcgrad.jvp(fc.uses_no_rules)(X, np.ones(3))


def test_a_vjp_rule_with_the_wrong_number_of_cotangents_is_a_clear_error():
    with pytest.raises(TypeError, match="one cotangent per argument .2: x, y. as a tuple"):
        srcgrad.grad(fc.uses_bad_arity)(X, X)


def test_primitive_is_callable_and_keeps_its_name():
    assert fc.logsumexp(np.zeros(2)) == pytest.approx(np.log(2.0))
    assert fc.logsumexp.__name__ == "logsumexp"
    assert repr(fc.logsumexp) == "<srcgrad.primitive logsumexp with rules: jvp, vjp>"


def test_primitive_needs_positional_parameters():
    with pytest.raises(TypeError, match="named positional parameters"):
        srcgrad.primitive(lambda *xs: xs)


def test_stop_gradient_blocks_the_derivative_in_both_modes():
    np.testing.assert_allclose(srcgrad.grad(fc.uses_stop)(X), X)
    _, tangent = srcgrad.jvp(fc.uses_stop)(X, np.ones(3))
    assert tangent == pytest.approx(np.sum(X))
    assert srcgrad.stop_gradient(X) is X
