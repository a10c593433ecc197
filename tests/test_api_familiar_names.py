"""The names JAX and autograd users try first: ``argnums=``, ``jacfwd``/``jacrev``,
``elementwise_grad``, ``vjp(..., return_fn=True)``, ``tree_map``/``tree_leaves``.

Each is compared with autograd running the same function (``autograd_twin``) or with
central finite differences, in both modes where the name has a mode, and to second
order where it has one.
"""

from __future__ import annotations

import collections
import dataclasses

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

# -- functions under test ------------------------------------------------------------------


def mixed(x, y, scale=2.0):
    return np.sum(np.sin(x) * y**2) * scale


def mixed_vector(x, y):
    return np.tanh(x) * y + x**2


def poly(x):
    return x**3 - 2.0 * x**2 + np.sin(x)


def smooth_step(x):
    return np.tanh(3.0 * x) + 0.5 * x * x


def mixing(x, A):
    return A @ np.sin(x) + np.exp(x[0]) * np.ones(A.shape[0])


def pair(x):
    return np.sin(x), x * 2


def third(x):
    return np.tanh(x)


def writes_its_argument(x):
    x = x * 1.0
    x[0] = x[0] * 3.0
    return np.cos(x) * x


def mlp(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return np.sum(h * h)


RNG = np.random.default_rng(7)
X = RNG.standard_normal(4)
Y = RNG.standard_normal(4)
A = RNG.standard_normal((3, 4))
XS = np.linspace(-2.0, 2.0, 9)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# -- argnums= ------------------------------------------------------------------------------

#: every transformation taking wrt, with arguments for mixed_vector or mixed
TRANSFORMS = {
    "grad": (lambda **o: srcgrad.grad(mixed, **o), (X, Y)),
    "grad forward": (lambda **o: srcgrad.grad(mixed, mode="forward", **o), (X, Y)),
    "value_and_grad": (lambda **o: srcgrad.value_and_grad(mixed, **o), (X, Y)),
    "jvp": (lambda **o: srcgrad.jvp(mixed_vector, **o), (X, Y, Y)),
    "vjp": (lambda **o: srcgrad.vjp(mixed_vector, **o), (X, Y, X)),
    "jacobian": (lambda **o: srcgrad.jacobian(mixed_vector, **o), (X, Y)),
    "jacobian forward": (lambda **o: srcgrad.jacobian(mixed_vector, mode="forward", **o), (X, Y)),
    "jacfwd": (lambda **o: srcgrad.jacfwd(mixed_vector, **o), (X, Y)),
    "jacrev": (lambda **o: srcgrad.jacrev(mixed_vector, **o), (X, Y)),
    "hessian": (lambda **o: srcgrad.hessian(mixed, **o), (X, Y)),
    "hvp": (lambda **o: srcgrad.hvp(mixed, **o), (X, Y, X)),
    "elementwise_grad": (lambda **o: srcgrad.elementwise_grad(mixed_vector, **o), (X, Y)),
    "elementwise_grad forward": (
        lambda **o: srcgrad.elementwise_grad(mixed_vector, mode="forward", **o),
        (X, Y),
    ),
}


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for p, q in zip(a, b):
            _same(p, q)
    else:
        close(a, b, 0.0)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("which", [1, "y", 0])
def test_argnums_is_a_synonym_of_wrt(name, which):
    make, args = TRANSFORMS[name]
    _same(make(argnums=which)(*args), make(wrt=which)(*args))


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_argnums_differs_from_the_default(name):
    # (a test that cannot fail otherwise: the first argument is the default)
    make, args = TRANSFORMS[name]
    if name.startswith(("jvp", "vjp", "hvp")):
        args = (*args[:2], Y if name.startswith("jvp") else args[2])
    got, default = make(argnums=1)(*args), make()(*args)
    assert not np.allclose(np.ravel(got[-1] if name == "value_and_grad" else got)[:4], 0.0)
    with pytest.raises(AssertionError):
        _same(got, default)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_wrt_and_argnums_together_is_a_type_error(name):
    make, _ = TRANSFORMS[name]
    with pytest.raises(TypeError, match=r"wrt or argnums .*not both: got wrt=1 and argnums=1"):
        make(wrt=1, argnums=1)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_argnums_tuple_in_both_modes_against_autograd(mode):
    got = srcgrad.grad(mixed, argnums=(0, 1), mode=mode)(X, Y)
    want = autograd.grad(autograd_twin(mixed), (0, 1))(X, Y)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        close(g, w)


def test_argnums_in_the_decorator_form_and_check_grads():
    @srcgrad.grad(argnums=1)
    def decorated(x, y):
        return np.sum(np.sin(x) * y**2)

    close(decorated(X, Y), 2 * np.sin(X) * Y)
    check_grads(mixed, (X, Y), argnums=1, order=2)
    with pytest.raises(TypeError, match="not both"):
        check_grads(mixed, (X, Y), 1, argnums=1)


def test_argnums_out_of_range_is_the_error_wrt_gives():
    with pytest.raises(ValueError, match="out of range"):
        srcgrad.grad(mixed, argnums=5)


# -- jacfwd / jacrev -----------------------------------------------------------------------


@pytest.mark.parametrize("jac", [srcgrad.jacfwd, srcgrad.jacrev])
def test_jacfwd_and_jacrev_against_autograd(jac):
    want = autograd.jacobian(autograd_twin(mixed_vector), 1)(X, Y)
    got = jac(mixed_vector, argnums=1)(X, Y)
    assert isinstance(got, np.ndarray) and got.shape == (4, 4)
    close(got, want)
    got = jac(mixing)(X, A)  # (not elementwise: a full Jacobian)
    close(got, autograd.jacobian(autograd_twin(mixing))(X, A))


@pytest.mark.parametrize("jac", [srcgrad.jacfwd, srcgrad.jacrev])
def test_a_tuple_argnums_gives_a_tuple_even_of_one_as_jax(jac):
    one = jac(mixed_vector, argnums=(1,))(X, Y)
    assert isinstance(one, tuple) and len(one) == 1
    close(one[0], jac(mixed_vector, argnums=1)(X, Y))
    both = jac(mixed_vector, argnums=(0, 1))(X, Y)
    assert isinstance(both, tuple) and len(both) == 2
    for k in range(2):
        close(both[k], autograd.jacobian(autograd_twin(mixed_vector), k)(X, Y))


@pytest.mark.parametrize("jac", [srcgrad.jacfwd, srcgrad.jacrev])
def test_jacfwd_and_jacrev_of_a_gradient_are_the_hessian(jac):
    # JAX's jax.hessian is jacfwd(jacrev(f)); srcgrad's is a Jacobian of its gradient
    want = autograd.hessian(autograd_twin(mixed))(X, Y)
    close(jac(srcgrad.grad(mixed))(X, Y), want)
    close(srcgrad.hessian(mixed, argnums=0)(X, Y), want)


def test_jacfwd_of_jacrev_is_a_clear_error():
    with pytest.raises(TypeError, match=r"does not differentiate again.*srcgrad.hessian\(f\)"):
        srcgrad.jacfwd(srcgrad.jacrev(mixed_vector))


def test_jacrev_of_a_tuple_output_says_to_use_forward_mode():
    first, second = srcgrad.jacfwd(pair)(X)
    close(first, np.diag(np.cos(X)))
    close(second, 2 * np.eye(4))
    with pytest.raises(TypeError, match="mode='forward'"):
        srcgrad.jacrev(pair)(X)


# -- elementwise_grad ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("func", [poly, smooth_step, third])
def test_elementwise_grad_against_autograd_and_finite_differences(func, mode):
    got = srcgrad.elementwise_grad(func, mode=mode)(XS)
    close(got, autograd.elementwise_grad(autograd_twin(func))(XS))
    eps = 1e-6
    close(got, (func(XS + eps) - func(XS - eps)) / (2 * eps), 1e-7)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("func", [poly, smooth_step, third])
def test_elementwise_grad_to_second_order_against_autograd(func, mode):
    twin = autograd_twin(func)
    got = srcgrad.elementwise_grad(srcgrad.elementwise_grad(func, mode=mode), mode=mode)(XS)
    close(got, autograd.elementwise_grad(autograd.elementwise_grad(twin))(XS))
    eps = 1e-5
    first = srcgrad.elementwise_grad(func)
    close(got, (first(XS + eps) - first(XS - eps)) / (2 * eps), 1e-6)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_elementwise_grad_of_a_function_that_is_not_elementwise_sums_the_rows(mode):
    # autograd's definition: ones @ J, whatever J is
    got = srcgrad.elementwise_grad(mixing, mode=mode)(X, A)
    close(got, autograd.elementwise_grad(autograd_twin(mixing))(X, A))
    close(got, np.ones(3) @ srcgrad.jacobian(mixing)(X, A))
    second = srcgrad.elementwise_grad(srcgrad.elementwise_grad(mixing, mode=mode))(X, A)
    twin = autograd_twin(mixing)
    close(second, autograd.elementwise_grad(autograd.elementwise_grad(twin))(X, A))


def scaled_tanh(p, x):
    return np.tanh(p["a"] * x) + p["b"] * x


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_elementwise_grad_of_a_pytree_to_second_order(mode):
    params = {"a": np.array([0.5, 1.0, 2.0]), "b": 0.3}
    x = np.array([1.0, -2.0, 0.5])
    twin = autograd_twin(scaled_tanh)
    first = srcgrad.elementwise_grad(scaled_tanh, mode=mode)
    got = first(params, x)
    want = autograd.elementwise_grad(twin)(params, x)
    assert list(got) == ["a", "b"] and type(got["b"]) is float
    for key in params:
        close(got[key], want[key])
    got = srcgrad.elementwise_grad(first)(params, x)
    want = autograd.elementwise_grad(autograd.elementwise_grad(twin))(params, x)
    for key in params:
        close(got[key], want[key])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_elementwise_grad_keeps_the_type_and_dtype_of_its_argument(mode):
    d = srcgrad.elementwise_grad(third, mode=mode)
    value = d(0.5)
    assert type(value) is float and value == pytest.approx(1 - np.tanh(0.5) ** 2)
    assert d(XS.astype(np.float32)).dtype == np.float32
    assert type(d(np.float32(0.5))) is np.float32


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_elementwise_grad_leaves_the_callers_arrays_alone(mode):
    x = XS.copy()
    got = srcgrad.elementwise_grad(writes_its_argument, mode=mode)(x)
    np.testing.assert_array_equal(x, XS)
    close(got, autograd.elementwise_grad(lambda v: _writes_twin(v))(XS))


def _writes_twin(x):
    import autograd.numpy as anp

    scale = anp.where(anp.arange(x.shape[0]) == 0, 3.0, 1.0)
    x = x * scale
    return anp.cos(x) * x


def test_elementwise_grad_refuses_what_it_cannot_do():
    with pytest.raises(TypeError, match="one argument"):
        srcgrad.elementwise_grad(mixed_vector, argnums=(0, 1))
    with pytest.raises(TypeError, match="returns a tuple"):
        srcgrad.elementwise_grad(pair)(X)
    second = srcgrad.elementwise_grad(srcgrad.elementwise_grad(third))
    with pytest.raises(TypeError, match="second derivative"):
        srcgrad.elementwise_grad(second)
    with pytest.raises(TypeError, match="with respect to one argument"):
        srcgrad.elementwise_grad(srcgrad.elementwise_grad(mixed_vector), argnums=1)
    with pytest.raises(TypeError, match="does not differentiate again"):
        srcgrad.grad(srcgrad.elementwise_grad(third))
    with pytest.raises(ValueError, match="mode"):
        srcgrad.elementwise_grad(third, mode="auto")


def test_elementwise_grad_shows_its_code():
    d = srcgrad.elementwise_grad(third)
    d(XS)
    assert "def vjp_third(x, out_bar):" in d.source
    second = srcgrad.elementwise_grad(d)
    second(XS)
    assert "def jvp_vjp_third(x, out_bar, x_dot):" in second.source
    assert "elementwise_grad of elementwise_grad of third" in repr(second)


@pytest.mark.parametrize(
    "make",
    [
        lambda: srcgrad.elementwise_grad(third),
        lambda: srcgrad.elementwise_grad(third, mode="forward"),
        lambda: srcgrad.vjp(third, return_fn=True),
        lambda: srcgrad.jacfwd(third),
    ],
)
def test_show_and_export_take_the_new_objects(make, capsys, tmp_path):
    d = make()
    d(XS)
    srcgrad.show(d)
    assert "np.cosh(x)" in capsys.readouterr().out
    path = srcgrad.export(d, tmp_path / "derivative.py")
    assert path.read_text() == d.source + ("" if d.source.endswith("\n") else "\n")


# -- vjp(..., return_fn=True) --------------------------------------------------------------


def test_vjp_returning_its_function_as_jax():
    out, vjp_fn = srcgrad.vjp(mixed_vector, argnums=(0, 1), return_fn=True)(X, Y)
    close(out, mixed_vector(X, Y))
    u = RNG.standard_normal(4)
    got = vjp_fn(u)
    assert isinstance(got, tuple) and len(got) == 2
    for k in range(2):
        want = autograd.make_vjp(autograd_twin(mixed_vector), k)(X, Y)[0](u)
        close(got[k], want)
    close(vjp_fn(2 * u)[1], 2 * got[1])  # (called again, with another cotangent)
    single = srcgrad.vjp(mixed_vector, return_fn=True)(X, Y)[1](u)
    close(single, got[0])  # an int wrt: one product, as srcgrad.vjp gives


def test_vjp_fn_keeps_the_arguments_of_its_call():
    x, y = X.copy(), Y.copy()
    make = srcgrad.vjp(return_fn=True)(mixed_vector)  # the decorator form
    out, vjp_fn = make(x, y=y)
    x[:] = 100.0  # the caller reuses its arrays
    y[:] = 100.0
    close(vjp_fn(np.ones(4)), srcgrad.vjp(mixed_vector)(X, Y, np.ones(4)))
    out, vjp_fn = srcgrad.vjp(writes_its_argument, return_fn=True)(X.copy())
    close(out, writes_its_argument(X.copy()))


def test_vjp_with_return_fn_of_a_gradient_is_a_hessian_vector_product():
    v = RNG.standard_normal(4)
    # (scale given: vjp(grad(f)) does not fill in f's defaults yet, a clear TypeError)
    out, vjp_fn = srcgrad.vjp(srcgrad.grad(mixed), return_fn=True)(X, Y, 2.0)
    close(out, srcgrad.grad(mixed)(X, Y))
    close(vjp_fn(v), autograd.hessian(autograd_twin(mixed))(X, Y) @ v)


def test_vjp_with_return_fn_is_not_differentiated_again():
    made = srcgrad.vjp(mixed_vector, return_fn=True)
    assert "return_fn=True" in repr(made) and "def vjp_mixed_vector" in made.source
    with pytest.raises(TypeError, match="does not differentiate again"):
        srcgrad.grad(made)


# -- tree_map / tree_leaves ----------------------------------------------------------------

Pair = collections.namedtuple("Pair", "w b")


@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: float


def test_tree_leaves_in_srcgrads_order():
    tree = {"z": [1.0, (2.0, 3.0)], "a": Pair(4.0, 5.0), "m": Layer(6.0, 7.0), "n": None}
    assert srcgrad.tree_leaves(tree) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, None]
    assert srcgrad.tree_leaves(X) == [X]


def test_tree_map_keeps_the_structure_and_types():
    tree = {"a": [1.0, 2.0], "p": Pair(3.0, 4.0), "l": Layer(np.ones(2), 5.0)}
    doubled = srcgrad.tree_map(lambda v: v * 2, tree)
    assert list(doubled) == ["a", "p", "l"] and doubled["a"] == [2.0, 4.0]
    assert doubled["p"] == Pair(6.0, 8.0) and isinstance(doubled["p"], Pair)
    assert isinstance(doubled["l"], Layer) and doubled["l"].b == 10.0
    np.testing.assert_array_equal(tree["l"].W, np.ones(2))  # (the input is untouched)
    summed = srcgrad.tree_map(lambda p, q: p + q, tree, doubled)
    assert summed["p"] == Pair(9.0, 12.0)
    with pytest.raises(ValueError, match=r"structure"):
        srcgrad.tree_map(lambda p, q: p + q, tree, {"a": [1.0], "p": Pair(1, 2), "l": 0})


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_gradient_step_with_tree_map(mode):
    params = {"W": RNG.standard_normal((4, 3)), "b": RNG.standard_normal(3)}
    x = RNG.standard_normal((5, 4))
    grads = srcgrad.grad(mlp, mode=mode)(params, x)
    step = srcgrad.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    want = autograd.grad(autograd_twin(mlp))(params, x)
    for key in params:
        close(step[key], params[key] - 0.1 * want[key])
    assert srcgrad.tree_leaves(step)[0].shape == (4, 3)
