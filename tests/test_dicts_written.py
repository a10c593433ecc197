"""Issue 18, leftover item 3: dicts built step by step in the function (``d = {}``,
``d["a"] = v``, ``d["a"] += v``), read back by constant keys (``d["a"]``, ``d.get``,
``"a" in d``, ``len(d)``), iterated, written out of by a comprehension, or returned
whole. Each key's value is a variable of its own, assigned where the dict is written
(``normalize/dicts.py``). Checked against autograd running the same source, both modes,
second order, and central differences; a write srcgrad does not follow (in a loop, under
an ``if``, by a computed key, through another name) is refused at the user's line."""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin, check_against_twin

import srcgrad
from srcgrad.testing import check_grads

X = np.array([0.3, -0.5, 1.2])
W = np.array([0.5, -0.2, 0.1])
A = np.array([[1.0, 2.0, 0.5], [0.3, -0.1, 0.2]])
MODES = ("reverse", "forward")


def written_one_key_at_a_time(x):
    d = {}
    d["a"] = x * 2
    d["b"] = x**2
    return np.sum(d["a"] + d["b"])


def overwritten_and_updated(x):
    d = {"a": x * 2}
    d["b"] = np.sin(x)
    d["a"] = d["a"] * d["b"]
    d["a"] += x**2
    scale = d.get("c", 0.5) + d.get("b", 0.0)[0]
    if "b" in d and "c" not in d:
        scale = scale * len(d)
    return np.sum(d["a"] * scale)


def comprehension_over_a_built_dict(x):
    params = {}
    params["w"] = x * 2.0
    params[0] = np.cos(x)
    scaled = {k: v * 3.0 for k, v in params.items() if k != 1}
    total = 0.0
    for k, v in scaled.items():
        total = total + np.sum(v**2) * len(scaled) * (2.0 if k == "w" else 1.0)
    return total


def read_between_writes(x):
    d = {}
    d["h"] = np.tanh(x)
    first = np.sum(d["h"])
    d["h"] = d["h"] * x
    for k, v in d.items():
        first = first * np.sum(v) * len(k)
    return first


FUNCTIONS = [
    written_one_key_at_a_time,
    overwritten_and_updated,
    comprehension_over_a_built_dict,
    read_between_writes,
]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_written_step_by_step_as_autograd_runs_it(f):
    check_against_twin(f, X)
    check_grads(f, (X,), order=2)


def metrics_built_step_by_step(w, x):
    metrics = {}
    loss = np.sum(np.sin(x @ w) ** 2)
    metrics["loss"] = loss
    metrics["norm"] = np.sqrt(np.sum(w * w))
    return loss, metrics


def test_a_dict_built_step_by_step_returned_as_aux():
    f = metrics_built_step_by_step
    expected = autograd.grad(lambda w, x: autograd_twin(f)(w, x)[0])(W, A)
    _, metrics = f(W, A)
    for mode in MODES:
        grad, aux = srcgrad.grad(f, has_aux=True, mode=mode)(W, A)
        np.testing.assert_allclose(grad, expected, rtol=1e-10)
        assert list(aux) == ["loss", "norm"]
        assert aux["norm"] == pytest.approx(metrics["norm"])


def test_the_generated_code_has_a_variable_per_key():
    derivative = srcgrad.grad(written_one_key_at_a_time, mode="forward")
    derivative(X)
    source = derivative.source
    assert "d_a = x * 2" in source and "d_b = x ** 2" in source, source
    assert "{}" not in source and "dict(" not in source, source


def written_in_a_branch(x):
    d = {}
    if x[0] > 0:
        d["a"] = x * 2
    else:
        d["a"] = x
    return np.sum(d["a"])


def written_by_a_computed_key(x):
    d = {"a": x}
    for k in ("a",):
        d[k] = x * 2
    return np.sum(d["a"])


def read_before_written(x):
    d = {}
    y = d["a"]
    d["a"] = x
    return np.sum(y)


def read_on_a_path_that_does_not_run(x):
    d = {"a": x}
    if "b" in d:
        return np.sum(d["b"])
    return np.sum(d["a"] ** 2)


def test_a_key_missing_on_a_path_that_does_not_run():
    for mode in MODES:
        derivative = srcgrad.grad(read_on_a_path_that_does_not_run, mode=mode)
        np.testing.assert_allclose(derivative(X), 2 * X)


def written_through_another_name(x):
    d = {"a": x}
    e = d
    e["a"] = x * 2
    return np.sum(d["a"])


def deleted(x):
    d = {"a": x, "b": x}
    del d["b"]
    return np.sum(d["a"])


@pytest.mark.parametrize(
    "f, error, match",
    [
        (
            written_in_a_branch,
            srcgrad.UnsupportedSyntaxError,
            r'd\["a"\] = x \* 2\n.*does not follow writes into here',
        ),
        (
            written_by_a_computed_key,
            srcgrad.UnsupportedSyntaxError,
            r"d\[k\] = x \* 2\n.*does not follow writes into here",
        ),
        (
            read_before_written,
            srcgrad.UnsupportedSyntaxError,
            r"y = d\[\"a\"\]\n.*`d` has no key 'a' here",
        ),
        (
            written_through_another_name,
            srcgrad.NoDerivativeError,
            r'd = \{"a": x\}\n.*a dict built in the function carries a derivative',
        ),
        (deleted, srcgrad.UnsupportedSyntaxError, r'del d\["b"\]\n.*does not follow writes'),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused_at_the_users_line(f, error, match, mode):
    with pytest.raises(error, match=match) as info:
        srcgrad.grad(f, mode=mode)(X)
    assert f"{__file__}:" in str(info.value)
