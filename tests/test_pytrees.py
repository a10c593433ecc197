"""Pytrees: wrt arguments that are (nested) dicts, lists and tuples of arrays and floats.

Each gradient of a pytree is compared with the gradient of the same function written
over the flattened leaves (itself checked against finite differences), in both modes,
on hypothesis-drawn layer counts, sizes and values.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import srcgrad
from srcgrad.testing import check_grads


# -- functions of pytrees, and the same functions of their leaves -------------------------------
def mlp(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.sum(h * h)


def mlp_flat1(w1, b1, x):
    return np.sum(np.tanh(x @ w1 + b1) ** 2)


def mlp_flat2(w1, b1, w2, b2, x):
    h = np.tanh(x @ w1 + b1)
    return np.sum(np.tanh(h @ w2 + b2) ** 2)


def mlp_flat3(w1, b1, w2, b2, w3, b3, x):
    h = np.tanh(x @ w1 + b1)
    h = np.tanh(h @ w2 + b2)
    return np.sum(np.tanh(h @ w3 + b3) ** 2)


def flat_gradient(layers, x):
    leaves = flat(layers)
    mlp_flat = [mlp_flat1, mlp_flat2, mlp_flat3][len(layers) - 1]
    return srcgrad.grad(mlp_flat, wrt=tuple(range(len(leaves))))(*leaves, x)


def affine(p, x):
    return x @ p["W"] + p["b"]


def mlp_with_helper(params, x):
    h = np.tanh(affine(params["hidden"], x))
    return np.sum(affine(params["out"], h) ** 2) * params["scale"]


def indexed(ws, x):
    w0, w1 = ws
    return np.sum(np.sin(x @ w0) @ ws[1] + w1[0])


def loss_and_logits(params, x):
    logits = x @ params["W"]
    return np.sum(logits**2), logits


layer_sizes = st.lists(st.integers(1, 4), min_size=2, max_size=4)


def make_layers(sizes, rng):
    return [
        {"W": rng.standard_normal((m, n)), "b": rng.standard_normal(n)}
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def flat(layers):
    return [leaf for layer in layers for leaf in (layer["W"], layer["b"])]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@given(sizes=layer_sizes, seed=st.integers(0, 2**16))
def test_list_of_dicts_matches_flattened_gradient(mode, sizes, seed):
    rng = np.random.default_rng(seed)
    layers = make_layers(sizes, rng)
    x = rng.standard_normal((2, sizes[0]))
    grads = srcgrad.grad(mlp, mode=mode)(layers, x)
    expected = flat_gradient(layers, x)
    assert isinstance(grads, list) and len(grads) == len(layers)
    for g, layer in zip(grads, layers):
        assert isinstance(g, dict) and list(g) == ["W", "b"]
        assert g["W"].shape == layer["W"].shape and g["b"].shape == layer["b"].shape
    np.testing.assert_allclose(
        np.concatenate([np.ravel(v) for v in flat(grads)]),
        np.concatenate([np.ravel(v) for v in expected]),
        rtol=1e-10,
    )


def test_flattened_reference_is_right():
    rng = np.random.default_rng(0)
    leaves = flat(make_layers([3, 2, 2], rng))
    check_grads(mlp_flat2, (*leaves, rng.standard_normal((2, 3))), wrt=tuple(range(4)))


def test_a_leaf_of_a_pytree_against_finite_differences():
    rng = np.random.default_rng(1)
    params = {
        "hidden": {"W": rng.standard_normal((3, 4)), "b": rng.standard_normal(4)},
        "out": {"W": rng.standard_normal((4, 2)), "b": rng.standard_normal(2)},
        "scale": 0.7,
    }
    x = rng.standard_normal((5, 3))
    for mode in ("reverse", "forward"):
        g = srcgrad.grad(mlp_with_helper, mode=mode)(params, x)
        assert isinstance(g["scale"], float)
        eps = 1e-6
        for path in (("hidden", "W"), ("out", "b")):
            leaf = params[path[0]][path[1]]
            numeric = np.zeros_like(leaf)
            for index in np.ndindex(leaf.shape):
                for sign in (1, -1):
                    leaf[index] += sign * eps
                    numeric[index] += sign * mlp_with_helper(params, x) / (2 * eps)
                    leaf[index] -= sign * eps
            np.testing.assert_allclose(g[path[0]][path[1]], numeric, rtol=1e-6, atol=1e-8)
        up = dict(params, scale=0.7 + eps)
        down = dict(params, scale=0.7 - eps)
        numeric = (mlp_with_helper(up, x) - mlp_with_helper(down, x)) / (2 * eps)
        assert g["scale"] == pytest.approx(numeric, rel=1e-6)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_tuples_unpacked_and_indexed(mode):
    rng = np.random.default_rng(2)
    ws = (rng.standard_normal((3, 3)), rng.standard_normal((3, 2)))
    x = rng.standard_normal((4, 3))
    g = srcgrad.grad(indexed, mode=mode)(ws, x)
    assert isinstance(g, tuple) and len(g) == 2

    def flat_indexed(w0, w1, x):
        return np.sum(np.sin(x @ w0) @ w1 + w1[0])

    expected = srcgrad.grad(flat_indexed, wrt=(0, 1))(*ws, x)
    for a, b in zip(g, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_jvp_and_vjp_take_pytree_tangents_and_give_pytree_adjoints():
    rng = np.random.default_rng(3)
    layers = make_layers([3, 2], rng)
    x = rng.standard_normal((2, 3))
    tangent = [{"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}]
    value, dot = srcgrad.jvp(mlp)(layers, x, tangent)
    grads = srcgrad.vjp(mlp)(layers, x, 1.0)
    assert value == pytest.approx(mlp(layers, x))
    inner = sum(np.sum(g * t) for g, t in zip(flat(grads), flat(tangent)))
    assert dot == pytest.approx(inner)


def test_a_tangent_of_another_structure_is_a_clear_error():
    layers = make_layers([3, 2], np.random.default_rng(4))
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"structure of the argument \(a dict with keys"):
        srcgrad.jvp(mlp)(layers, x, [{"W": np.ones((3, 2))}])


def test_non_float_leaves_are_a_clear_error():
    with pytest.raises(TypeError, match=r"layers\[0\]\['b'\]\": it is an integer"):
        srcgrad.grad(mlp)([{"W": np.ones((2, 2)), "b": 1}], np.ones(2))


def test_has_aux_with_a_pytree():
    params = {"W": np.array([[1.0, 2.0], [0.5, -1.0]])}
    x = np.array([[1.0, -1.0]])
    g, logits = srcgrad.grad(loss_and_logits, has_aux=True)(params, x)
    np.testing.assert_allclose(g["W"], 2 * x.T @ (x @ params["W"]))
    np.testing.assert_allclose(logits, x @ params["W"])


def test_a_new_structure_gets_code_of_its_own():
    rng = np.random.default_rng(5)
    d = srcgrad.grad(mlp)
    x = rng.standard_normal((2, 3))
    for sizes in ([3, 2], [3, 4, 2], [3, 2]):
        layers = make_layers(sizes, rng)
        expected = flat_gradient(layers, x)
        np.testing.assert_allclose(flat(d(layers, x))[0], expected[0])


def test_generated_code_reads_the_pytree_as_the_user_wrote_it():
    layers = make_layers([3, 2], np.random.default_rng(6))
    d = srcgrad.grad(mlp)
    d(layers, np.ones((2, 3)))
    assert "layer['W']" in d.source
    assert "layers_bar" in d.source


def test_hvp_takes_pytrees_and_reverse_mode_jacobian_says_it_does_not():
    params = {"W": np.array([[0.3, -0.2], [0.1, 0.4]])}
    x = np.array([[1.0, 0.5], [-0.5, 2.0]])
    v = {"W": np.array([[1.0, 0.0], [0.5, -1.0]])}
    product = srcgrad.hvp(loss_and_logits_first)(params, x, v)

    def flat_loss(w, x):
        return np.sum((x @ w) ** 2)

    expected = srcgrad.hvp(flat_loss)(params["W"], x, v["W"])
    np.testing.assert_allclose(product["W"], expected)
    with pytest.raises(TypeError, match="jacobian in reverse mode takes arrays"):
        srcgrad.jacobian(loss_and_logits_first)(params, x)


def loss_and_logits_first(params, x):
    return np.sum((x @ params["W"]) ** 2)


def test_list_of_dicts_records_one_value_per_step():
    # layer = layers[i] and layer["W"] are views of an argument: the backward loop reads
    # them again (layers[i]["W"]) instead of recording them; only h is on the tape, with
    # tanh's argument (its derivative 1 / cosh(x)**2 reads it)
    rng = np.random.default_rng(0)
    layers = make_layers([3, 4, 2], rng)
    d = srcgrad.grad(mlp)
    d(layers, rng.standard_normal((2, 3)))
    assert d.source.count(".append(") == 2 and ".append(h)" in d.source
    assert "layers[i]['W']" in d.source


def reads_a_view_after_the_loop(ws, x):
    for i in range(len(ws)):
        w = ws[i]
        x = np.tanh(x * w)
    return np.sum(x * w)  # the last trip's w, after the loop: recorded, not read again


def reads_three_after_the_loop(w0, w1, w2, x):
    for w in (w0, w1, w2):
        x = np.tanh(x * w)
    return np.sum(x * w2)


def test_a_view_read_after_its_loop_is_not_read_again():
    ws = [np.array([0.5, -0.3]), np.array([1.2, 0.7]), np.array([-0.4, 0.9])]
    x = np.array([0.3, -0.8])
    check_grads(reads_three_after_the_loop, (*ws, x), wrt=(0, 1, 2, 3))
    want = srcgrad.grad(reads_three_after_the_loop, wrt=(0, 1, 2, 3))(*ws, x)
    got_ws, got_x = srcgrad.grad(reads_a_view_after_the_loop, wrt=(0, 1))(ws, x)
    for g, w in zip([*got_ws, got_x], want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_hvp_of_the_list_of_dicts_mlp_matches_differences_of_its_gradient():
    # its gradient takes each layer's adjoint out of layers_bar and puts it back (set_at):
    # forward mode over that code needs set_at's own rule
    rng = np.random.default_rng(5)
    layers = make_layers([3, 4, 2], rng)
    x = rng.standard_normal((2, 3))
    v = make_layers([3, 4, 2], rng)
    grad = srcgrad.grad(mlp)
    assert "set_at(" in (grad(layers, x), grad.source)[1]

    def shifted(eps):
        moved = [{k: layer[k] + eps * d[k] for k in layer} for layer, d in zip(layers, v)]
        return flat(grad(moved, x))

    eps = 1e-6
    expected = [(a - b) / (2 * eps) for a, b in zip(shifted(eps), shifted(-eps))]
    product = srcgrad.hvp(mlp)(layers, x, v)
    for got, want in zip(flat(product), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("sizes", [[3, 4, 2], [3, 1, 2], [1, 4, 1]], ids=str)
def test_leaves_with_no_axis_of_length_one_need_no_unbroadcast(sizes):
    # the cache key notes, for each leaf, which axes are never 1 (as for array arguments):
    # then h @ layer["W"] cannot broadcast against layer["b"]'s sum, and the generated code
    # says so; with a length-1 axis somewhere it sums back down, and is right either way
    rng = np.random.default_rng(7)
    layers = make_layers(sizes, rng)
    x = rng.standard_normal((5, sizes[0]))
    grad = srcgrad.grad(mlp)
    got = grad(layers, x)
    for g, w in zip(flat(got), flat_gradient(layers, x)):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    assert ("matmul_shape(" not in grad.source) == (1 not in sizes)


def gp_like(params, x):
    k = params["amplitude"] * np.exp(-((x[:, None] - x[None, :]) ** 2) * params["scales"][0])
    return np.sum(np.tanh(k)) + params["scales"][1] * params["amplitude"] ** 2


GP_PARAMS = {"amplitude": 0.7, "scales": np.array([0.5, 1.5])}
GP_X = np.array([0.1, 0.4, -0.3])


def _gradient_differences(f, params, x, key, index, eps=1e-6):
    """Central differences of srcgrad's gradient (a dict) in one parameter element."""
    moved = []
    for sign in (1.0, -1.0):
        p = {k: np.array(v, dtype=float) for k, v in params.items()}
        if np.ndim(params[key]):
            p[key][index] += sign * eps
        else:
            p[key] = params[key] + sign * eps
        moved.append(srcgrad.grad(f)(p, x))
    return {k: (np.asarray(moved[0][k]) - np.asarray(moved[1][k])) / (2 * eps) for k in params}


def test_hessian_of_a_dict_of_parameters_has_jaxs_structure():
    """``hessian(f)(params, x)`` with a dict ``params``: ``H[a][b]`` is the derivative of
    the gradient's ``a`` entry with respect to ``params[b]``, of shape ``a.shape +
    b.shape`` (as ``jax.hessian`` gives); checked against differences of the gradient."""
    H = srcgrad.hessian(gp_like)(GP_PARAMS, GP_X)
    assert list(H) == ["amplitude", "scales"]
    assert all(list(H[a]) == ["amplitude", "scales"] for a in H)
    assert np.shape(H["scales"]["scales"]) == (2, 2) and np.shape(H["amplitude"]["scales"]) == (2,)
    for key, value in GP_PARAMS.items():
        for index in np.ndindex(np.shape(value)):
            column = _gradient_differences(gp_like, GP_PARAMS, GP_X, key, index)
            for out_key in GP_PARAMS:
                block = np.asarray(H[out_key][key])
                got = block[(Ellipsis, *index)] if np.ndim(value) else block
                np.testing.assert_allclose(got, column[out_key], rtol=1e-5, atol=1e-7)


def test_hessian_of_a_dict_and_an_array_is_blocks_of_both():
    H = srcgrad.hessian(gp_like, wrt=(0, 1))(GP_PARAMS, GP_X)
    assert isinstance(H, tuple) and isinstance(H[0], dict) and isinstance(H[1], tuple)
    assert np.shape(H[0]["scales"][1]) == (2, 3)  # d grad_scales / d x
    assert np.shape(H[1][0]["scales"]) == (3, 2)  # d grad_x / d scales
    np.testing.assert_allclose(H[0]["scales"][1], np.moveaxis(H[1][0]["scales"], 0, -1))
