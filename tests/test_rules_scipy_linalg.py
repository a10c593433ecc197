"""The ``scipy.linalg`` rules (``srcgrad/rules/scipy_linalg.py``), tested like
``test_rules_linalg.py`` tests numpy's: hypothesis draws sizes and well-conditioned
matrices, and :func:`rule_checks.check` runs forward mode, reverse mode and finite
differences for each differentiable argument and all together, to second order in
float64, checks dtypes and that no input changes. ``solve_triangular`` is compared with
autograd's. The functions srcgrad does not differentiate are refused, with what to
write instead.
"""

from __future__ import annotations

import pytest

pytest.importorskip("scipy", reason="the scipy.linalg rules are registered only with SciPy")

import functions_scipy_linalg as fn  # noqa: E402
import numpy as np  # noqa: E402
import rule_checks  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from rule_checks import DTYPES, Domain, check, values  # noqa: E402

import srcgrad  # noqa: E402
from srcgrad.errors import NoDerivativeError  # noqa: E402

UNIT = Domain(-1.0, 1.0)
MODES = ("reverse", "forward")


def well_conditioned(data, shape, dtype):
    """Matrices ``x / n + 2 I`` with ``|x| <= 1``: diagonally dominant, so every triangle
    of them is well conditioned too."""
    n = shape[-1]
    return (data.draw(values(tuple(shape), UNIT, np.float64)) / n + 2 * np.eye(n)).astype(dtype)


def right_side(data, n, dtype):
    """A vector or a matrix of ``n`` rows."""
    shape = data.draw(st.sampled_from([(n,), (n, 1), (n, 3)]))
    return data.draw(values(shape, UNIT, dtype))


TRIANGULAR = [
    fn.tri_upper,
    fn.tri_lower,
    fn.tri_lower_t,
    fn.tri_upper_t_unit,
    fn.tri_lower_c_unit,
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", TRIANGULAR, ids=lambda f: f.__name__)
@given(data=st.data())
def test_solve_triangular(func, dtype, data):
    n = data.draw(st.integers(1, 4))
    check(func, (well_conditioned(data, (n, n), dtype), right_side(data, n, dtype)))


@given(data=st.data())
def test_solve_triangular_options_passed_in(data):
    n = data.draw(st.integers(1, 4))
    a, b = well_conditioned(data, (n, n), np.float64), right_side(data, n, np.float64)
    trans = data.draw(st.sampled_from([0, 1, 2, "N", "T", "C"]))
    lower, unit = data.draw(st.booleans()), data.draw(st.booleans())
    check(fn.tri_options, (a, b, trans, lower, unit))


def test_solve_triangular_reads_one_triangle():
    """The derivative in the entries solve_triangular does not read is exactly 0."""
    a = np.array([[2.0, 0.5, -0.3], [0.7, 1.5, 0.2], [0.1, -0.4, 1.8]])
    b = np.array([0.3, -1.0, 0.6])
    for func, read in [
        (fn.tri_upper, np.triu(np.ones((3, 3)))),
        (fn.tri_lower_t, np.tril(np.ones((3, 3)))),
        (fn.tri_upper_t_unit, np.triu(np.ones((3, 3)), 1)),
    ]:
        forward, reverse = rule_checks.derivatives(func, (a, b))
        for got in (forward, reverse):
            assert np.all(got[read == 0] == 0.0)
            assert np.all(got[read == 1] != 0.0)


@pytest.mark.parametrize("func", [fn.tri_upper, fn.tri_lower], ids=lambda f: f.__name__)
def test_solve_triangular_agrees_with_autograd(func):
    agla = pytest.importorskip("autograd.scipy.linalg")
    import autograd

    a = np.array([[2.0, 0.5, -0.3], [0.7, 1.5, 0.2], [0.1, -0.4, 1.8]])
    b = np.array([[0.3, 1.2], [-1.0, 0.4], [0.6, -0.7]])
    lower = func is fn.tri_lower
    for k in (0, 1):

        def total(v, k=k):
            args = [a, b]
            args[k] = v
            return autograd.numpy.sum(agla.solve_triangular(*args, lower=lower))

        expected = autograd.grad(total)(a if k == 0 else b)
        for got in rule_checks.derivatives(func, (a, b), wrt=k):
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@given(data=st.data())
def test_cholesky_solve(data):
    n = data.draw(st.integers(1, 4))
    a = data.draw(values((n, n), UNIT, np.float64))
    check(fn.cholesky_solve, (a, right_side(data, n, np.float64)))


# -- expm ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_expm(dtype, data):
    n = data.draw(st.integers(1, 4))
    batch = data.draw(st.sampled_from([(), (), (2,)]))
    check(fn.expm_of, (data.draw(values((*batch, n, n), UNIT, dtype)),))


def test_expm_rotation():
    """d/dθ of the rotation by θ is the rotation by θ + π/2."""
    theta = 0.7
    for mode in MODES:
        got = srcgrad.jacobian(fn.expm_rotation, mode=mode)(theta)
        c, s = np.cos(theta + np.pi / 2), np.sin(theta + np.pi / 2)
        np.testing.assert_allclose(got, [[c, -s], [s, c]], atol=1e-12)
    check(fn.expm_rotation, (theta,))


# -- cho_factor and cho_solve ---------------------------------------------------------------------
@pytest.mark.parametrize("func", [fn.cho_pair, fn.cho_nested], ids=lambda f: f.__name__)
@given(data=st.data())
def test_cho_solve(func, data):
    n = data.draw(st.integers(1, 4))
    m = data.draw(values((n, n), UNIT, np.float64))
    check(func, (m, right_side(data, n, np.float64)))


@pytest.mark.parametrize("lower", [True, False])
@given(data=st.data())
def test_cho_factor(lower, data):
    """c: the factor in one triangle, the matrix's own entries in the other."""
    n = data.draw(st.integers(1, 4))
    check(fn.cho_factor_alone, (data.draw(values((n, n), UNIT, np.float64)), lower))


@given(data=st.data())
def test_cho_solve_with_a_factor_made_elsewhere(data):
    n = data.draw(st.integers(1, 4))
    low = np.tril(data.draw(values((n, n), UNIT, np.float64))) + 2 * np.eye(n)
    check(fn.cho_with_own_factor, (low, right_side(data, n, np.float64)))


def test_gaussian_loglik_agrees_with_the_closed_form():
    """d/dy = -inv(a) y; d/dm of -logdet(a)/2 - y' inv(a) y / 2 with a = m m' + I is
    (-inv(a) + inv(a) y y' inv(a)) m."""
    m = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [0.0, 0.6, 0.2]])
    y = np.array([0.3, -1.1, 0.4])
    a = m @ m.T + np.eye(3)
    s = np.linalg.solve(a, y)
    for mode in MODES:
        dm, dy = srcgrad.grad(fn.gaussian_loglik, wrt=(0, 1), mode=mode)(m, y)
        np.testing.assert_allclose(dy, -s, rtol=1e-12)
        np.testing.assert_allclose(dm, (np.outer(s, s) - np.linalg.inv(a)) @ m, rtol=1e-10)
    check(fn.gaussian_loglik, (m, y))


# -- lu_factor and lu_solve ------------------------------------------------------------------------
def pivoting(data, n, dtype):
    """Well-conditioned matrices with their rows shuffled, so that lu_factor pivots."""
    rows = data.draw(st.permutations(range(n)))
    return well_conditioned(data, (n, n), dtype)[list(rows)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "func", [fn.lu_pair, fn.lu_nested_t, fn.lu_factor_alone], ids=lambda f: f.__name__
)
@given(data=st.data())
def test_lu(func, dtype, data):
    n = data.draw(st.integers(1, 4))
    a = pivoting(data, n, dtype)
    check(func, (a,) if func is fn.lu_factor_alone else (a, right_side(data, n, dtype)))


@given(data=st.data())
def test_lu_solve_trans_passed_in(data):
    n = data.draw(st.integers(1, 4))
    trans = data.draw(st.sampled_from([0, 1, 2]))  # (lu_solve takes no letters)
    check(
        fn.lu_trans_passed, (pivoting(data, n, np.float64), right_side(data, n, np.float64), trans)
    )


# -- numpy.linalg's twins -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", [fn.inv_of, fn.det_of], ids=lambda f: f.__name__)
@given(data=st.data())
def test_inv_det(func, dtype, data):
    n = data.draw(st.integers(1, 4))
    check(func, (well_conditioned(data, (n, n), dtype),))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_solve(dtype, data):
    n = data.draw(st.integers(1, 4))
    check(fn.solve_of, (well_conditioned(data, (n, n), dtype), right_side(data, n, dtype)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("func", [fn.cholesky_upper, fn.cholesky_lower], ids=lambda f: f.__name__)
@given(data=st.data())
def test_cholesky(func, dtype, data):
    n = data.draw(st.integers(1, 4))
    check(func, (data.draw(values((n, n), UNIT, dtype)),))


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_lower_passed_in(lower):
    a = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [0.0, 0.6, 0.2]])
    check(fn.cholesky_passed, (a, lower))


# -- refused, with what to write instead ---------------------------------------------------------
@pytest.mark.parametrize(
    "func, expected",
    [
        (fn.solve_overwrite, "only with overwrite_a=False"),
        (fn.solve_positive, "only with assume_a=None"),
    ],
    ids=lambda a: getattr(a, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_refused(func, expected, mode):
    a = np.array([[2.0, 0.3], [0.3, 1.0]])
    with pytest.raises(NoDerivativeError) as info:
        srcgrad.grad(func, wrt=(0, 1), mode=mode)(a, np.array([1.0, -0.5]))
    assert expected in str(info.value)
    assert "functions_scipy_linalg.py" in str(info.value)


def test_generated_code_calls_scipy_as_the_user_does():
    source = srcgrad.vjp(fn.tri_lower_t, wrt=(0, 1)).source
    assert "sl.solve_triangular(a, out_bar, trans=0, lower=True)" in source
    assert "frechet_corner(expm(frechet_block(np.swapaxes(a, -1, -2), out_bar)))" in (
        srcgrad.vjp(fn.expm_of).source
    )


# -- one matrix, a stack of right-hand sides (SciPy broadcasts the matrix) ---------------------
A3 = np.array([[2.0, 0.5, -0.3], [0.7, 1.5, 0.2], [0.1, -0.4, 1.8]])
STACK = np.linspace(-1.0, 1.0, 12).reshape(2, 3, 2)


@pytest.mark.parametrize(
    "func, args",
    [
        (fn.tri_upper, (A3, STACK)),
        (fn.tri_lower_t, (A3, STACK[..., :1])),
        (fn.cho_solve_of, (A3 / 2, STACK)),
        (fn.lu_solve_of, (A3[[2, 0, 1]], STACK, 0)),
        (fn.lu_solve_of, (A3[[2, 0, 1]], STACK, 1)),
        (fn.solve_of, (A3, STACK)),
    ],
    ids=["tri", "tri-t", "cho", "lu", "lu-t", "solve"],
)
def test_stack_of_right_hand_sides(func, args):
    check(func, args)
