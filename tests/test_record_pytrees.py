"""Issue 18, items 3-5 (5): namedtuple and dataclass parameters as pytrees. The code
reads their fields as attributes (``p.w``); the gradient (and a jvp's tangent, and the
rows of a Hessian) has the argument's own type, as JAX gives for registered types.
Generated code reads a namedtuple's field by its index and is given a dataclass as the
dict of its fields. Checked against finite differences and against the same function
given the fields as a dict or a tuple, both modes, to second order."""

from __future__ import annotations

import functions_everyday as fe
import numpy as np
import pytest

import srcgrad
from srcgrad import pytree

X = np.array([[1.0, 2.0], [0.3, -0.1], [0.5, 0.4]])
W = np.array([0.5, -0.2])
MODES = ("reverse", "forward")
HERE = r"functions_everyday.py:\d+:\n"  # (the user's file and line start each message)
RECORDS = [fe.Layer(W, 0.3), fe.Dense(W, 0.3)]


def _by_hand(w, b, x):  # (layer_loss's gradient)
    z = x @ w + b
    g = 2 * np.tanh(z) / np.cosh(z) ** 2
    return x.T @ g, float(np.sum(g))


@pytest.mark.parametrize("p", RECORDS, ids=lambda p: type(p).__name__)
def test_the_gradient_has_the_type_of_the_argument(p):
    w_bar, b_bar = _by_hand(W, 0.3, X)
    for mode in MODES:
        grad = srcgrad.grad(fe.layer_loss, mode=mode)(p, X)
        assert type(grad) is type(p)
        np.testing.assert_allclose(grad.w, w_bar, rtol=1e-12)
        assert grad.b == pytest.approx(b_bar, rel=1e-12) and type(grad.b) is float
    _against_finite_differences(fe.layer_loss, p, X)


@pytest.mark.parametrize("p", RECORDS, ids=lambda p: type(p).__name__)
def test_the_hessian_has_rows_and_blocks_of_the_type(p):
    """``H.w.b`` is the block of ``d(grad.w)/db``, as ``jax.hessian`` nests them."""
    hessian = srcgrad.hessian(fe.layer_loss)(p, X)
    assert type(hessian) is type(p) and type(hessian.w) is type(p)
    z = X @ W + 0.3
    second = 2 * (1 - 2 * np.sinh(z) ** 2) / np.cosh(z) ** 4  # (d2/dz2 of tanh(z)**2)
    np.testing.assert_allclose(hessian.w.w, X.T @ (second[:, None] * X), rtol=1e-10)
    np.testing.assert_allclose(hessian.w.b, X.T @ second, rtol=1e-10)
    np.testing.assert_allclose(hessian.b.w, X.T @ second, rtol=1e-10)


@pytest.mark.parametrize("p", RECORDS, ids=lambda p: type(p).__name__)
def test_a_jvp_takes_a_tangent_of_the_type(p):
    tangent = type(p)(np.array([1.0, 0.5]), 2.0)
    value, derivative = srcgrad.jvp(fe.layer_loss)(p, X, tangent)
    w_bar, b_bar = _by_hand(W, 0.3, X)
    assert value == pytest.approx(fe.layer_loss(p, X))
    assert derivative == pytest.approx(w_bar @ tangent.w + b_bar * 2.0, rel=1e-12)


@pytest.mark.parametrize("p", RECORDS, ids=lambda p: type(p).__name__)
def test_records_passed_to_helpers_and_in_lists(p):
    settings = fe.Settings(scale=1.5, power=3)
    _against_finite_differences(fe.layers_through_a_helper, p, X, settings)
    layers = [type(p)(np.eye(2) * 0.5, 0.1), type(p)(np.array([[0.3, -0.2], [0.1, 0.4]]), -0.2)]
    _against_finite_differences(fe.stacked_layers, layers, X)
    as_dicts = [{"w": layer.w, "b": layer.b} for layer in layers]
    twin = srcgrad.grad(_stacked_dicts)(as_dicts, X)
    twin_hessian = srcgrad.hessian(_stacked_dicts)(as_dicts, X)
    hessian = srcgrad.hessian(fe.stacked_layers)(layers, X)
    for mode in MODES:
        grads = srcgrad.grad(fe.stacked_layers, mode=mode)(layers, X)
        assert [type(g) for g in grads] == [type(p)] * 2
        for g, d in zip(grads, twin):
            np.testing.assert_allclose(g.w, d["w"], rtol=1e-12)
            assert g.b == pytest.approx(d["b"], rel=1e-12)
    for i in range(2):
        for j in range(2):
            for a in ("w", "b"):
                for b in ("w", "b"):
                    got = getattr(getattr(hessian[i], a)[j], b)
                    np.testing.assert_allclose(got, twin_hessian[i][a][j][b], rtol=1e-12)


def _against_finite_differences(f, p, *rest, eps=1e-6):
    """Each leaf's gradient from both modes against central differences."""
    grads = [srcgrad.grad(f, mode=mode)(p, *rest) for mode in MODES]
    flat = pytree.leaves(p)
    for k, leaf in enumerate(flat):
        for index in np.ndindex(np.shape(leaf)):

            def moved(step, k=k, index=index):
                leaves = [np.array(v, dtype=float) for v in flat]
                leaves[k][index] += step
                new = [v if np.ndim(old) else float(v) for v, old in zip(leaves, flat)]
                return f(_unflatten(p, new), *rest)

            expected = (moved(eps) - moved(-eps)) / (2 * eps)
            for grad in grads:
                got = np.asarray(pytree.leaves(grad)[k])[index]
                assert got == pytest.approx(expected, rel=1e-6, abs=1e-8)


def _unflatten(tree, leaves):
    items = iter(leaves)
    return pytree.map_leaves(lambda _: next(items), tree)


def _stacked_dicts(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer["w"] + layer["b"])
    return np.sum(h * h)


def test_the_fields_in_the_generated_code():
    derivative = srcgrad.grad(fe.layer_loss)
    derivative(fe.Dense(W, 0.3), X)
    assert "x @ p['w'] + p['b']" in derivative.source, derivative.source
    derivative(fe.Layer(W, 0.3), X)
    assert "x @ p[0] + p[1]" in derivative.source, derivative.source


@pytest.mark.parametrize(
    "f, match",
    [
        (fe.dataclass_method, HERE + r".*p\.apply\(x\).*\n.*calls its method `\.apply"),
        (fe.dataclass_not_a_field, HERE + r".*p\.missing.*\n.*reads `\.missing`, not a field"),
        (fe.dataclass_used_whole, HERE + r".*isinstance\(p, Dense\).*\n.*used whole otherwise"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused(f, match, mode):
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=match):
        srcgrad.grad(f, mode=mode)(fe.Dense(W, 0.3), X)
