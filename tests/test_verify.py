"""srcgrad.testing.verify: seeded bugs in hand-written gradients are found, shrunk and
reported with the components that disagree; correct gradients give no report."""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from corpus_control_flow import CASES

import srcgrad
from srcgrad.testing import gradient_test, verify, verify_rule
from srcgrad.verify import domains


def _report(f, args, **options) -> str:
    with pytest.raises(AssertionError) as caught:
        verify(f, args, max_examples=25, **options)
    return str(caught.value)


def mlp(W1, W2, x):
    h = np.tanh(x @ W1)
    return np.sum((h @ W2) ** 2)


def mlp_grad_transposed(W1, W2, x):  # the bug: W2 where W2.T belongs
    h = np.tanh(x @ W1)
    do = 2 * (h @ W2)
    dh = do @ W2
    return x.T @ (dh * (1 - h**2))


def mlp_grad(W1, W2, x):
    h = np.tanh(x @ W1)
    do = 2 * (h @ W2)
    dh = do @ W2.T
    return x.T @ (dh * (1 - h**2))


def two_layer(W1, b1, W2, X, Y):
    H = np.tanh(X @ W1 + b1)
    P = H @ W2
    return 0.5 * np.sum((P - Y) ** 2)


def two_layer_backprop(W1, b1, W2, X, Y):
    H = np.tanh(X @ W1 + b1)
    P = H @ W2
    dP = P - Y
    dW2 = H.T @ dP
    dH = dP @ W2.T
    dZ = dH * (1 - H)  # the bug: tanh' is 1 - H**2
    dW1 = X.T @ dZ
    db1 = np.sum(dZ, axis=0)
    return dW1, db1, dW2


def test_the_first_wrong_line_is_located():
    args = (np.full((1, 2), 0.5), np.ones(2), np.ones((2, 1)), np.ones((1, 1)), np.ones((1, 1)))
    text = _report(two_layer, args, gradient=two_layer_backprop, wrt=(0, 1, 2))
    start = inspect.getsourcelines(two_layer_backprop)[1]
    assert f"line {start + 5}: dH = dP @ W2.T" in text and "agrees with the adjoint of H" in text
    lines = re.search(r"the first wrong value is made in lines (\d+)-(\d+)", text).groups()
    low, high = map(int, lines)
    assert low <= start + 6 <= high  # dZ's line
    assert high - low <= 3


def test_transposed_matrix_found_and_shrunk():
    args = (np.full((3, 3), 0.3), np.full((3, 3), 0.2), np.ones((2, 3)))
    text = _report(mlp, args, gradient=mlp_grad_transposed)
    assert "gradients of mlp disagree at" in text
    assert "your gradient:" in text and "relative error" in text
    assert re.search(r"W1\[\d, \d\]: yours", text)  # the components, by name and index
    shown = re.search(r"W1 = (array\(\[\[.*?\]\]\))", text, re.S).group(1)
    assert shown.count("[") <= 4  # shrunk: two rows at most (3x3 given)
    verify(mlp, args, gradient=mlp_grad, max_examples=10)


def square(x):
    return np.sum(x * x)


def test_missing_factor_two_shrinks_to_one_element():
    text = _report(square, (np.ones(3),), gradient=lambda x: x)
    assert "x = array([" in text and text.count("yours") == 1  # one element left
    assert re.search(r"x\[0\]: yours (\S+), expected (\S+)", text)
    yours, expected = map(float, re.search(r"yours (\S+), expected (\S+)", text).groups())
    assert math.isclose(expected, 2 * yours)


def test_sign_error_found():
    def f(x, y):
        return np.sum(np.sin(x) * y)

    text = _report(f, (np.ones(2), np.ones(2)), gradient=lambda x, y: -np.cos(x) * y)
    assert "x[0]: yours" in text


def test_broadcast_not_summed_is_a_shape_report():
    def f(w, x):
        return np.sum(np.tanh(x + w))

    text = _report(f, (np.ones(3), np.ones((4, 3))), gradient=lambda w, x: 1 - np.tanh(x + w) ** 2)
    assert "your gradient for w has shape" in text and "a broadcast not summed back?" in text


def piece(x):
    if x < 1.0:
        return x * x
    return 2.0 * x - 1.0


def test_wrong_on_one_side_of_a_branch():
    text = _report(piece, (0.5,), gradient=lambda x: 2.0 * x if x < 1.0 else 3.0)
    assert "x: yours 3, expected 2" in text


def test_kinks_are_not_false_alarms():
    verify(lambda_free_abs, (np.ones(4),), gradient=lambda x: np.sign(x) + (x > 0), max_examples=15)


def lambda_free_abs(x):
    return np.sum(np.abs(x)) + np.sum(np.maximum(x, 0.0))


def test_tuple_wrt_and_srcgrad_checked_without_a_gradient():
    def f(a, b):
        return np.sum(a * np.exp(b))

    verify(f, (np.ones(2), np.ones(2)), wrt=(0, 1), max_examples=10)

    def mine(a, b):
        return np.full_like(a, np.exp(b)), 0.0  # (the bug: d/db forgotten)

    text = _report(f, (np.ones(2), 0.5), wrt=(0, 1), gradient=mine)
    assert "b: yours 0, expected" in text


def test_a_function_srcgrad_refuses_is_checked_by_finite_differences():
    def f(x):
        return np.sum(np.vectorize(math.sin)(x))  # (np.vectorize: srcgrad refuses it)

    text = _report(f, (np.ones(2),), gradient=lambda x: -np.cos(x))
    assert "srcgrad does not differentiate it" in text
    assert "disagree with finite differences'" in text


@pytest.mark.parametrize("case", CASES[::12], ids=lambda c: c.func.__name__)
def test_no_false_alarm_on_the_corpus(case):
    verify(case.func, case.points[0], wrt=case.wrt, max_examples=5)


def test_domains_read_from_the_source():
    def f(x, y, z, w, v):
        v = v + 1.0
        return np.log(x - 1) + np.sqrt(2 - y) + np.arcsin(z / 2) + np.sum(w**0.5) + np.log(v)

    assert domains(f) == {"x": (1.0, math.inf), "y": (-math.inf, 2.0), "z": (-2.0, 2.0)} | {
        "w": (0.0, math.inf)
    }
    # an example outside the domain: inputs are drawn inside it (else none is a test case)
    calls = []

    def g(x):
        calls.append(x)
        return np.log(x - 1)

    verify(g, (0.0,), gradient=lambda x: 1 / (x - 1), max_examples=10)
    assert all(x > 1 for x in calls)


_MODEL = """import numpy as np


def loss(W, x):
    return np.sum(np.tanh(x @ W) ** 2)


def my_grad(W, x):
    t = np.tanh(x @ W)
    return x.T @ (2 * t * (1 - t))  # the bug: 1 - t where 1 - t**2 belongs
"""


def test_command_line_check(tmp_path, capsys):
    from srcgrad.cli import main

    path = tmp_path / "model_for_check.py"
    path.write_text(_MODEL)
    target = f"{path}:loss"
    assert main(["check", target, "--shape", "W=3,2", "x=4,3", "--examples", "10"]) == 0
    assert "no disagreement found" in capsys.readouterr().out
    options = ["--shape", "W=2,1", "x=1,2", "--gradient", "my_grad", "--examples", "10"]
    status = main(["check", target, *options])
    out = capsys.readouterr().out
    assert status == 1 and "gradients of loss disagree at" in out and "W[0, 0]: yours" in out
    assert main(["check", target, "--shape", "Q=3"]) == 2
    assert "expected NAME=N,M with NAME one of ['W', 'x']" in capsys.readouterr().err


test_gradient_of_square = gradient_test(square, (np.ones(2),), gradient=lambda x: 2 * x)


def test_gradient_test_is_a_test_that_fails_on_a_bug():
    assert test_gradient_of_square.__name__ == "test_gradient_of_square"
    with pytest.raises(AssertionError, match="yours 1, expected 2"):
        gradient_test(square, (np.ones(2),), gradient=lambda x: x, max_examples=10)()


def test_the_pytest_plugin_fixture(verify_gradient, pytestconfig):
    assert verify_gradient is verify
    assert pytestconfig.getoption("srcgrad_examples") is None  # (the option is registered)


@srcgrad.primitive
def lse(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@lse.defvjp
def _lse_vjp(dout, result, x):
    return dout * np.exp(x - result)


def _lse_jvp_right(tangents, result, x):
    (dx,) = tangents
    return np.sum(np.exp(x - result) * dx)


def _lse_jvp_sign(tangents, result, x):
    return -_lse_jvp_right(tangents, result, x)


def test_custom_rules_checked_against_each_other_and_finite_differences(monkeypatch):
    monkeypatch.setattr(lse, "jvp_rule", _lse_jvp_right)
    verify_rule(lse, (np.ones(3),), max_examples=10)
    monkeypatch.setattr(lse, "jvp_rule", _lse_jvp_sign)
    with pytest.raises(AssertionError) as caught:
        verify_rule(lse, (np.ones(3),), max_examples=10)
    text = str(caught.value)
    assert "the rules of lse disagree at" in text and "x = array([" in text
    assert re.search(r"your jvp rule: +\S+  <u, jvp\(v\)>  relative error 2", text)
    assert "your vjp rule" in text and "relative error" not in text.split("your vjp rule")[1][:60]


def test_rules_checked_as_generated_code_calls_them(monkeypatch):
    from srcgrad import custom

    lse.defjvp(_lse_jvp_sign)  # (the template for forward mode, then the wrong rule)
    monkeypatch.setattr(lse, "_checked", set())

    def f(x):
        return lse(x * 2.0)

    srcgrad.grad(f, mode="forward")(np.ones(2))  # (not checked: no flag)
    monkeypatch.setattr(custom, "CHECK_RULES", True)
    with pytest.raises(AssertionError, match="the rules of lse disagree"):
        srcgrad.grad(f, mode="forward")(np.full(2, 0.5))
    lse.defjvp(_lse_jvp_right)
