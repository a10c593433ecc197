"""Issue 18, leftover item 4: ``srcgrad.testing.check_grads`` on pytree arguments (a
dict of parameters, a list inside it, a dataclass): finite differences move each leaf
along a random direction of the argument's structure, and forward and reverse mode are
compared leaf by leaf, element by element. A rule made wrong on purpose (a primitive
whose vjp or jvp is off by a factor) must make it fail, whichever leaf it touches."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import srcgrad
from srcgrad.testing import check_grads

W = np.array([0.4, -0.3, 0.8])
B = np.array([0.2, -0.1])
X = np.array([1.0, 2.0, -0.5])


def gp_like(params, x):
    """A dict of parameters, as a model's ``params``."""
    scale = np.exp(params["log_scale"])
    return scale * np.sum(np.tanh(params["w"] * x)) ** 2 + np.sum(params["b"] ** 2)


def nested(params, x):
    """A dict holding a list of layers and a number."""
    h = x
    for layer in params["layers"]:
        h = np.tanh(layer * h)
    return params["gain"] * np.sum(h * h)


@dataclasses.dataclass
class Line:
    slope: float
    offset: np.ndarray


def fit_line(line, x):
    return np.sum((line.slope * x + line.offset) ** 2)


PARAMS = {"w": W, "b": B, "log_scale": 0.3}
LAYERS = {"layers": [W, W[::-1].copy()], "gain": 1.5}


@pytest.mark.parametrize(
    "f, args, wrt",
    [
        (gp_like, (PARAMS, X), 0),
        (gp_like, (PARAMS, X), (0, 1)),
        (nested, (LAYERS, X), 0),
        (fit_line, (Line(0.7, X * 0.1), X), 0),
    ],
    ids=["dict", "dict-and-array", "dict-of-a-list", "dataclass"],
)
@pytest.mark.parametrize("order", [1, 2])
def test_check_grads_takes_pytree_arguments(f, args, wrt, order):
    check_grads(f, args, wrt=wrt, order=order)


def test_the_caller_arguments_are_left_as_they_were():
    params = {"w": W.copy(), "b": B.copy(), "log_scale": 0.3}
    check_grads(gp_like, (params, X), wrt=0, order=2)
    np.testing.assert_array_equal(params["w"], W)
    np.testing.assert_array_equal(params["b"], B)
    assert params["log_scale"] == 0.3


def test_single_precision_leaves_choose_the_single_precision_tolerances():
    params = {"w": W.astype(np.float32), "b": B.astype(np.float32), "log_scale": 0.3}
    check_grads(gp_like, (params, X.astype(np.float32)), wrt=0)


@srcgrad.primitive
def cube(v):
    return v**3


@cube.defvjp
def _cube_vjp(dout, result, v):
    return dout * 3.0 * v**2 * WRONG["vjp"]


@cube.defjvp
def _cube_jvp(tangents, result, v):
    (dv,) = tangents
    return 3.0 * v**2 * dv * WRONG["jvp"]


WRONG = {"vjp": 1.0, "jvp": 1.0}


def cubed_bias(params, x):
    return np.sum(params["w"] * x) + np.sum(cube(params["b"]))


@pytest.mark.parametrize("which", ["vjp", "jvp"])
def test_a_wrong_rule_on_one_leaf_fails_the_check(which, monkeypatch):
    check_grads(cubed_bias, (PARAMS, X), wrt=0)  # (right: passes)
    monkeypatch.setitem(WRONG, which, 1.5)
    with pytest.raises(AssertionError, match="directional derivative|differs between modes"):
        check_grads(cubed_bias, (PARAMS, X), wrt=0)


def test_a_gradient_of_the_wrong_structure_is_reported():
    from srcgrad.testing import _assert_shape

    with pytest.raises(AssertionError, match="has shape"):
        _assert_shape("gradient", {"w": W, "b": B[:1], "log_scale": 0.3}, PARAMS)
