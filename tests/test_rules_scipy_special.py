"""The ``scipy.special`` rules (``srcgrad/rules/scipy_special.py``), tested like
``test_rules.py`` tests the numpy rules: hypothesis draws shapes, axes and values
inside each function's domain, float64 and float32, and :func:`check` runs
forward mode, reverse mode and finite differences, checks dtypes and that no
input changes. The conventions at delicate points documented in the rule module
are pinned down at the end.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("scipy", reason="the scipy.special rules are registered only with SciPy")

import functions_scipy_special as fn  # noqa: E402
import numpy as np  # noqa: E402
import rule_checks  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from rule_checks import (  # noqa: E402
    ANY,
    DTYPES,
    POSITIVE,
    Domain,
    Row,
    check,
    ones_like,
    operand,
    shapes,
    values,
)

import srcgrad  # noqa: E402
import srcgrad.errors  # noqa: E402
from srcgrad.testing import broadcastable_shapes, check_grads  # noqa: E402

UNIT = Domain(0.0625, 0.9375)  # logit (bounds exact in float32)
NEGATIVE_NONINTEGER = Domain(-3.0, 0.0, frac=(0.3, 0.7))  # gammaln away from its poles
WEIGHTS = Domain(0.25, 2.0)  # logsumexp's b
RANK3 = shapes(3, 3, max_side=3)

# -- one-argument rows ----------------------------------------------------------------------
UNARY = [
    Row("sp.expit", fn.sp_expit),
    Row("expit", fn.expit_imported),
    Row("logit", fn.logit_imported, UNIT),
    Row("erf", fn.erf_imported),
    Row("erfc", fn.erfc_imported),
    Row("gammaln", fn.gammaln_imported, POSITIVE),
    Row("sp.gammaln-negative", fn.sp_gammaln, NEGATIVE_NONINTEGER),
    Row("digamma", fn.digamma_imported, POSITIVE),
    Row("psi", fn.psi_imported, POSITIVE),
    Row("scipy.special.digamma", fn.dotted_digamma, Domain(0.5, 3.0)),
    Row("polygamma(2, x)", fn.polygamma_2, POSITIVE),
    Row("-log(expit(x))", fn.logistic_loss),
    Row("xlogy(x, 2.5)", fn.xlogy_const_y),
    Row("-sum(xlogy(p, p))", fn.entropy, Domain(0.125, 1.0)),
    # logsumexp: axis None, int, negative, positional, tuple; keepdims; a constant b
    Row("logsumexp(a)", fn.logsumexp_all),
    Row("sp.logsumexp(a, axis=0)", fn.sp_logsumexp_axis0, shapes=shapes(1)),
    Row("logsumexp(a, axis=-1)", fn.logsumexp_axis_neg1, shapes=shapes(1)),
    Row("logsumexp(a, 1)", fn.logsumexp_positional_axis, shapes=shapes(2)),
    Row("logsumexp(a, axis=(0, 2))", fn.logsumexp_tuple_axis, shapes=RANK3),
    Row("logsumexp(a, keepdims=True)", fn.logsumexp_keepdims),
    Row("logsumexp(a, axis=-1, keepdims=True)", fn.logsumexp_axis_keepdims, shapes=shapes(1)),
    Row("logsumexp(a, b=0.5)", fn.logsumexp_b_const),
    Row("logsumexp(a, axis=-1, b=None)", fn.logsumexp_b_maybe_none, shapes=shapes(1)),
    # softmax and log_softmax
    Row("softmax(x)", fn.softmax_all),
    Row("sp.softmax(x, axis=-1)", fn.sp_softmax_last, shapes=shapes(1)),
    Row("softmax(x, 0)", fn.softmax_positional_axis, shapes=shapes(1)),
    Row("softmax(x, axis=(0, 1))", fn.softmax_tuple_axis, shapes=shapes(2)),
    Row("log_softmax(x)", fn.log_softmax_all),
    Row("sp.log_softmax(x, axis=-1)", fn.sp_log_softmax_last, shapes=shapes(1)),
    Row("log_softmax(x, axis=(0, -1))", fn.log_softmax_tuple_axis, shapes=shapes(2)),
    # Bessel functions (y, k: for x > 0; i0e, i1e: away from their kink at 0)
    Row("i0(x) + 2 * i1(x)", fn.bessel_i),
    Row("i0e(x) - i1e(x)", fn.bessel_i_scaled, Domain(exclude=(-0.1, 0.1))),
    Row("j0(x) * j1(x)", fn.bessel_j),
    Row("y0(x) + y1(x) ** 2", fn.bessel_y, POSITIVE),
    Row("k0(x) - 3 * k1(x)", fn.bessel_k, POSITIVE),
]


def unary_params() -> list:
    return [
        pytest.param(row, dtype, id=f"{row.name}-f{np.dtype(dtype).itemsize * 8}")
        for row in UNARY
        for dtype in (np.float64, np.float32)
    ]


@pytest.mark.parametrize("row, dtype", unary_params())
@given(data=st.data())
def test_unary(row, dtype, data):
    shape = data.draw(row.shapes)
    x = operand(data, shape, row.domain, dtype, scalars=row.scalars)
    check(row.func, (x,))


# -- xlogy: both operands, broadcasting, scalars of every kind --------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", [fn.xlogy_imported, fn.sp_xlogy], ids=lambda f: f.__name__)
@given(data=st.data())
def test_xlogy(func, dtype, data):
    sx, sy = data.draw(broadcastable_shapes(num_shapes=2))
    scalar_side = data.draw(st.sampled_from([None, "x", "y"]))
    sx, sy = (() if scalar_side == "x" else sx), (() if scalar_side == "y" else sy)
    int_side = data.draw(st.sampled_from(["x", "y"]))
    x = operand(data, sx, ANY, dtype, ints=int_side == "x")
    y = operand(data, sy, Domain(0.25, 3.0), dtype, ints=int_side == "y")
    check(func, (x, y))


# -- axes that arrive as arguments --------------------------------------------------------------
def axes(rank: int) -> Any:
    """None, an int or a tuple of distinct axes of an array of ``rank``, some negative."""
    if rank == 0:
        return st.sampled_from([None, ()])
    signed = st.sampled_from(range(rank)).flatmap(lambda a: st.sampled_from([a, a - rank]))
    tuples = st.lists(signed, max_size=rank, unique_by=lambda a: a % rank).map(tuple)
    return st.none() | signed | tuples


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_logsumexp_dynamic_axis(dtype, data):
    shape = data.draw(shapes())
    a = data.draw(values(shape, ANY, dtype))
    check(fn.logsumexp_dynamic, (a, data.draw(axes(len(shape))), data.draw(st.booleans())))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "func", [fn.softmax_dynamic, fn.log_softmax_dynamic], ids=lambda f: f.__name__
)
@given(data=st.data())
def test_softmax_dynamic_axis(func, dtype, data):
    shape = data.draw(shapes())
    x = data.draw(values(shape, ANY, dtype))
    check(func, (x, data.draw(axes(len(shape)))))


# -- logsumexp with weights b: a and b broadcast together, both differentiated ----------------
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_logsumexp_weights(dtype, data):
    sa, sb = data.draw(broadcastable_shapes(num_shapes=2))
    a = operand(data, sa, ANY, dtype)
    b = operand(data, sb, WEIGHTS, dtype)
    if np.ndim(a) or np.ndim(b):  # axis=0 needs an axis
        check(fn.logsumexp_b_axis, (a, b))
    check(fn.logsumexp_b, (a, b))
    rank = max(len(sa), len(sb))
    check(fn.logsumexp_b_dynamic, (a, b, data.draw(axes(rank)), data.draw(st.booleans())))


def test_logsumexp_b_passed_as_none():
    check(fn.logsumexp_b_maybe_none, (np.linspace(-1.0, 1.0, 6).reshape(2, 3), None))


@pytest.mark.parametrize("n", [0, 1, 2])
def test_polygamma_order_as_argument(n):
    check(fn.sp_polygamma_dynamic, (n, np.linspace(0.5, 3.0, 5)))
    check(fn.sp_polygamma_dynamic, (n, np.linspace(0.5, 3.0, 5, dtype=np.float32)))


# -- Bessel functions of an order passed in: integer orders for any x, others for x > 0 -------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "func, domain",
    [
        # (SciPy's iv(v, x) is nan for a subnormal x and v != 0: kept away from 0)
        (fn.iv_order, Domain(exclude=(-1e-3, 1e-3))),
        (fn.ive_order, Domain(exclude=(-0.1, 0.1))),
        (fn.jv_order, ANY),
        (fn.yv_order, POSITIVE),
        (fn.kv_order, POSITIVE),
    ],
    ids=lambda a: getattr(a, "__name__", ""),
)
@given(data=st.data())
def test_bessel_of_order(func, domain, dtype, data):
    shape = data.draw(shapes())
    x = operand(data, shape, domain, dtype)
    v = data.draw(st.sampled_from([0, 1, 2, 3, -1]))
    check(func, (v, x))
    if domain is POSITIVE or func is fn.jv_order:  # non-integer orders, for x > 0
        x = operand(data, shape, POSITIVE, dtype)
        v = data.draw(st.sampled_from([0.5, 1.5, 2.25]))  # a float, not differentiated
        order = 1 if rule_checks.single_precision((x,)) else 2
        tol = dict(eps=1e-3, atol=1e-2, rtol=1e-2) if order == 1 else {}
        check_grads(func, (v, x), wrt=1, order=order, **tol)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_bessel_order_is_not_differentiated(mode):
    with pytest.raises(srcgrad.errors.NoDerivativeError) as info:
        srcgrad.grad(fn.iv_in_order, mode=mode)(1.5, np.array([0.5, 1.0]))
    assert "in x only, not in its order v" in str(info.value)
    assert "return np.sum(sp.iv(v * 2.0, x))" in str(info.value)


def test_von_mises_agrees_with_the_closed_form():
    """d/dkappa log i0(kappa) = i1(kappa) / i0(kappa)."""
    kappa, x = 2.5, np.array([0.1, -0.4, 1.2])
    import scipy.special as sps

    expected = np.sum(np.cos(x)) - 3 * sps.i1(kappa) / sps.i0(kappa)
    for mode in ("reverse", "forward"):
        assert srcgrad.grad(fn.von_mises_loglik, mode=mode)(kappa, x) == pytest.approx(expected)
    check(fn.von_mises_loglik, (kappa, x))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_cross_entropy(dtype, data):
    batch, classes = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    logits = data.draw(values((batch, classes), ANY, dtype))
    labels = data.draw(values((batch, classes), Domain(0.0, 1.0), dtype))
    check(fn.cross_entropy, (logits, labels))


# -- conventions at delicate points (documented in scipy_special.py) --------------------------
def derivatives(func, args, wrt):
    """The derivative of sum(func) by forward and by reverse mode. Forward mode pushes a
    tangent of ones through an elementwise function (so an infinite derivative is not
    multiplied by a zero tangent), and one unit tangent per element through a reduction."""
    out = func(*args)
    x = np.asarray(args[wrt], dtype=float)
    if np.shape(out) != x.shape:
        return rule_checks.derivatives(func, args, wrt)
    reverse = srcgrad.vjp(func, wrt=wrt)(*args, ones_like(out))
    _, forward = srcgrad.jvp(func, wrt=wrt)(*args, np.ones_like(x))
    return np.asarray(forward), np.asarray(reverse)


NEG_INF = -np.inf
CONVENTIONS = [
    # logit: +inf at 0 and at 1
    (fn.logit_imported, (np.array([0.0, 1.0, 0.5]),), 0, [np.inf, np.inf, 4.0], "logit-at-0-1"),
    # xlogy: d/dx is log(y) (also at x == 0, -inf at y == 0); d/dy is 0 where x == 0
    (fn.xlogy_imported, (np.zeros(2), np.array([0.0, 2.0])), 0, [NEG_INF, np.log(2)], "xlogy-dx"),
    (fn.xlogy_imported, (np.zeros(2), np.array([0.0, 2.0])), 1, [0.0, 0.0], "xlogy-dy-at-x=0"),
    (fn.xlogy_imported, (np.array([3.0]), np.array([2.0])), 1, [1.5], "xlogy-dy"),
    # logsumexp: -inf entries get 0; an all -inf slice gets nan; huge entries stay finite
    (fn.logsumexp_all, (np.array([NEG_INF, 0.0, 0.0]),), 0, [0.0, 0.5, 0.5], "lse-minus-inf"),
    (fn.logsumexp_all, (np.array([NEG_INF, NEG_INF]),), 0, [np.nan, np.nan], "lse-all-minus-inf"),
    (fn.logsumexp_all, (np.array([1000.0, 1000.0]),), 0, [0.5, 0.5], "logsumexp-large"),
    (fn.logsumexp_b, (np.array([1.0, 2.0]), np.array([0.0, 1.0])), 0, [0.0, 1.0], "lse-b=0"),
    # softmax and expit far out: no overflow, no nan
    (fn.softmax_all, (np.array([1000.0, 1000.0]),), 0, [0.0, 0.0], "softmax-large"),
    (fn.sp_expit, (np.array([-1000.0, 1000.0, 0.0]),), 0, [0.0, 0.0, 0.25], "expit-far-out"),
]


@pytest.mark.parametrize(
    "func, args, wrt, expected", [pytest.param(*c[:4], id=c[4]) for c in CONVENTIONS]
)
def test_conventions(func, args, wrt, expected):
    with np.errstate(divide="ignore", invalid="ignore"):
        forward, reverse = derivatives(func, args, wrt)
    np.testing.assert_allclose(forward, expected)
    np.testing.assert_allclose(reverse, expected)


# -- generated code: readable, standalone, and srcgrad without SciPy ---------------------------
def test_generated_code_reads_like_the_math():
    # (from exp(-|x|), exact in the tails where out * (1 - out) is 0)
    assert "np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))) ** 2" in srcgrad.vjp(fn.sp_expit).source
    lse = srcgrad.vjp(fn.logsumexp_axis_neg1).source
    assert "np.exp(a - np.expand_dims(out, -1))" in lse
    assert "np.sum(out_bar * out, axis=-1, keepdims=True)" in srcgrad.vjp(fn.sp_softmax_last).source
    assert "sp.polygamma(n + 1, x)" in srcgrad.jvp(fn.sp_polygamma_dynamic, wrt=1).source


@pytest.mark.parametrize("func", [fn.gammaln_imported, fn.digamma_imported, fn.xlogy_const_y])
def test_generated_module_is_standalone(func):
    """The helpers that call SciPy import it themselves; the module runs on its own."""
    derivative = srcgrad.vjp(func)
    x = np.array([0.5, 1.5, 2.5])
    namespace: dict[str, Any] = {}
    exec(compile(derivative.source, "<generated>", "exec"), namespace)
    generated = next(v for k, v in namespace.items() if k.startswith("vjp_"))
    np.testing.assert_allclose(generated(x, np.ones(3)), derivative(x, np.ones(3)))


def test_srcgrad_imports_without_scipy():
    code = (
        "import sys; sys.modules['scipy'] = None\n"  # import scipy now raises ImportError
        "import srcgrad, srcgrad.runtime\n"
        "from srcgrad.rules import RULES\n"
        "assert not [r for r in RULES.values() if r.name.startswith('scipy')]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
