"""The rules of ``srcgrad/rules/numeric.py``, tested: ``np.convolve``, ``np.correlate``,
``np.trapezoid``, ``np.interp``, ``np.polyval``, ``np.polyder``, ``np.cross`` and
``np.gradient``.

Each row names the primitive, a small function using it (``functions_numeric.py``) and
how to draw its arguments (sizes, modes, axes, spacings drawn too); :func:`check` runs
forward mode, reverse mode and finite differences (to second order in float64) for each
differentiable argument alone and all together, and checks dtypes and that no input
changes. Query points of ``np.interp`` are drawn at least 0.15 away from the sample
points, where the interpolant has a kink.
"""

from __future__ import annotations

import inspect
import warnings

import functions_numeric as fn
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rule_checks import DTYPES, Domain, check, derivatives, operand, values

import srcgrad

UNIT = Domain(-1.0, 1.0)
pytestmark = pytest.mark.filterwarnings(
    "ignore:Arrays of 2-dimensional vectors are deprecated:DeprecationWarning"
)


# -- drawing arguments ----------------------------------------------------------------------
def side(data, low=1, high=5) -> int:
    return data.draw(st.integers(low, high))


def draw(data, shape, dtype, domain=UNIT, scalars=False):
    return operand(data, tuple(shape), domain, dtype, scalars=scalars)


def _convolve(data, dtype):
    return draw(data, (side(data),), dtype), draw(data, (side(data),), dtype)


def _convolve_dynamic(data, dtype):
    a, v = _convolve(data, dtype)
    return a, v, data.draw(st.sampled_from(["full", "same", "valid", 0, 1, 2]))


def _increasing(data, shape, dtype, axis=-1):
    """Sample points increasing along ``axis``, at least 0.25 apart."""
    steps = data.draw(values(tuple(shape), Domain(0.25, 1.0), np.float64))
    return np.cumsum(steps, axis=axis).astype(dtype)


def _trapezoid(data, dtype):
    return (draw(data, [side(data) for _ in range(data.draw(st.integers(1, 3)))], dtype),)


def _trapezoid_x(data, dtype):
    shape = [side(data) for _ in range(data.draw(st.integers(1, 3)))]
    x_shape = data.draw(st.sampled_from([shape[-1:], shape]))
    return draw(data, shape, dtype), _increasing(data, x_shape, dtype)


def _trapezoid_x_axis0(data, dtype):
    shape = [side(data) for _ in range(data.draw(st.integers(1, 3)))]
    return draw(data, shape, dtype), _increasing(data, shape[:1], dtype)


def _trapezoid_dx(data, dtype):
    y = draw(data, [side(data) for _ in range(data.draw(st.integers(1, 3)))], dtype)
    return y, draw(data, (), dtype, Domain(0.125, 2.0), scalars=True)


def _trapezoid_dynamic(data, dtype):
    rank = data.draw(st.integers(1, 3))
    shape = [side(data) for _ in range(rank)]
    axis = data.draw(st.integers(-rank, rank - 1))
    y = draw(data, shape, dtype)
    kind = data.draw(st.sampled_from(["x 1-d", "x like y", "dx"]))
    if kind == "dx":
        return y, None, draw(data, (), dtype, Domain(0.125, 2.0), scalars=True), axis
    x_shape = [shape[axis]] if kind == "x 1-d" else shape
    return y, _increasing(data, x_shape, dtype, axis=0 if kind == "x 1-d" else axis), 1.0, axis


def _trapezoid_of_square(data, dtype):
    return (_increasing(data, (side(data, 2),), dtype),)


def _queries(data, shape, dtype):
    """Query points of np.interp in [-2, 3.5], kept 0.15 away from every sample point."""
    x = data.draw(values(tuple(shape), Domain(-2.0, 3.5), np.float64))
    near = np.min(np.abs(np.asarray(x)[..., None] - fn.XP), axis=-1) < 0.1
    return np.asarray(x + 0.25 * near, dtype=dtype)


def _interp(data, dtype):
    shape = [side(data) for _ in range(data.draw(st.integers(0, 2)))]
    x = _queries(data, shape, dtype)
    if shape == [] and data.draw(st.booleans()):
        x = float(x)
    return x, draw(data, fn.XP.shape, dtype)


def _interp_left_right(data, dtype):
    x, fp = _interp(data, dtype)
    return x, fp, draw(data, (), dtype, scalars=True), draw(data, (), dtype, scalars=True)


def _interp_of_sine(data, dtype):
    return (_queries(data, (side(data),), dtype),)


def _periodic_queries(data, shape, dtype, period, xp=fn.XP_PERIODIC):
    """Query points of a periodic np.interp in [-2 |period|, 2 |period|], kept 0.15 away
    from every sample point ``xp`` modulo the period (where the interpolant has a kink)."""
    period = abs(period)
    x = data.draw(values(tuple(shape), Domain(-2 * period, 2 * period), np.float64))
    apart = (np.asarray(x)[..., None] - xp) % period
    near = np.min(np.minimum(apart, period - apart), axis=-1) < 0.1
    return np.asarray(x + 0.25 * near, dtype=dtype)


def _interp_period(data, dtype, period=2 * np.pi):
    shape = [side(data) for _ in range(data.draw(st.integers(0, 2)))]
    x = _periodic_queries(data, shape, dtype, period)
    if shape == [] and data.draw(st.booleans()):
        x = float(x)
    return x, draw(data, fn.XP_PERIODIC.shape, dtype)


def _interp_period_dynamic(data, dtype):
    """The period an int (a float would be differentiated, and is refused) or None; modulo
    3 two of the sample points fall together (numpy sorts them with np.argsort)."""
    period = data.draw(st.sampled_from([3, -4, 7, None]))
    if period is None:
        x = _queries(data, (side(data),), dtype)
    else:
        x = _periodic_queries(data, (side(data),), dtype, period, fn.XP)
    return x, draw(data, fn.XP.shape, dtype), period


def _polyval(data, dtype):
    p = draw(data, (side(data),), dtype)
    shape = [side(data) for _ in range(data.draw(st.integers(0, 2)))]
    return p, draw(data, shape, dtype, Domain(-1.5, 1.5), scalars=True)


def _polyder(data, dtype):
    return (draw(data, (side(data),), dtype),)


def _polyder_dynamic(data, dtype):
    return draw(data, (side(data),), dtype), data.draw(st.integers(0, 3))


def _stack(data):
    return data.draw(st.sampled_from([(), (2,), (3, 1)]))


def _cross(data, dtype):
    sizes = data.draw(st.sampled_from([(3, 3), (3, 3), (2, 2), (2, 3), (3, 2)]))
    batch = _stack(data)
    other = data.draw(st.sampled_from([batch, batch[1:], (1,) * len(batch)]))
    return draw(data, (*batch, sizes[0]), dtype), draw(data, (*other, sizes[1]), dtype)


def _cross_axes(data, dtype):
    n = side(data)
    return draw(data, (3, n), dtype), draw(data, (n, 3), dtype)


def _cross_axis(data, dtype):
    n = side(data)
    return draw(data, (3, n), dtype), draw(data, (3, n), dtype)


def _cross_dynamic(data, dtype):
    n = side(data)
    a, b = draw(data, (3, n), dtype), draw(data, (n, 3), dtype)
    if data.draw(st.booleans()):
        return a, np.swapaxes(b, 0, 1).copy(), 0, 0, data.draw(st.sampled_from([0, -1])), 0
    return a, b, 0, -1, data.draw(st.sampled_from([0, 1, -1])), None


def _cross_self(data, dtype):
    return (draw(data, (*_stack(data), 3), dtype),)


def _gradient(data, dtype, min_side=2, ranks=(1, 1)):
    rank = data.draw(st.integers(*ranks))
    return (draw(data, [side(data, min_side) for _ in range(rank)], dtype),)


def _gradient_dynamic(data, dtype):
    """A 1-d array (whatever ``axis`` is, numpy returns one array), spacing given as an
    int or by int coordinates (a float would be differentiated, and is refused)."""
    edge_order = data.draw(st.sampled_from([1, 2]))
    n = side(data, edge_order + 1)
    if data.draw(st.booleans()):
        h = data.draw(st.integers(1, 3))
    else:
        h = np.cumsum(data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    axis = data.draw(st.sampled_from([None, 0, -1, (0,), (-1,)]))
    return draw(data, (n,), dtype), h, axis, edge_order


ROWS = [
    ("np.convolve", fn.convolve_full, _convolve),
    ("np.convolve-same", fn.convolve_same, _convolve),
    ("np.convolve-valid", fn.convolve_valid, _convolve),
    ("np.convolve-dynamic", fn.convolve_dynamic, _convolve_dynamic),
    ("np.convolve-self", fn.convolve_self, lambda d, t: (draw(d, (side(d),), t),)),
    ("np.correlate", fn.correlate, _convolve),
    ("np.correlate-same", fn.correlate_same, _convolve),
    ("np.correlate-full", fn.correlate_full, _convolve),
    ("np.correlate-dynamic", fn.correlate_dynamic, _convolve_dynamic),
    ("np.correlate-self", fn.correlate_self, lambda d, t: (draw(d, (side(d),), t),)),
    ("np.trapezoid", fn.trapezoid, _trapezoid),
    ("np.trapezoid-x", fn.trapezoid_x, _trapezoid_x),
    ("np.trapezoid-x-axis0", fn.trapezoid_x_axis0, _trapezoid_x_axis0),
    ("np.trapezoid-dx", fn.trapezoid_dx, _trapezoid_dx),
    ("np.trapezoid-dynamic", fn.trapezoid_dynamic, _trapezoid_dynamic),
    ("np.trapezoid-of-square", fn.trapezoid_of_square, _trapezoid_of_square),
    ("np.interp", fn.interp, _interp),
    ("np.interp-left-right", fn.interp_left_right, _interp_left_right),
    ("np.interp-of-sine", fn.interp_of_sine, _interp_of_sine),
    ("np.interp-period", fn.interp_period, _interp_period),
    ("np.interp-period-negative", fn.interp_period_negative, lambda d, t: _interp_period(d, t, 7)),
    (
        "np.interp-period-of-sine",
        fn.interp_period_of_sine,
        lambda d, t: (_periodic_queries(d, (side(d),), t, 2 * np.pi),),
    ),
    ("np.interp-period-dynamic", fn.interp_period_dynamic, _interp_period_dynamic),
    ("np.polyval", fn.polyval, _polyval),
    ("np.polyval-polyder", fn.polyval_polyder, _polyval),
    ("np.polyder", fn.polyder, _polyder),
    ("np.polyder-twice", fn.polyder_twice, _polyder),
    ("np.polyder-dynamic", fn.polyder_dynamic, _polyder_dynamic),
    ("np.cross", fn.cross, _cross),
    ("np.cross-axes", fn.cross_axes, _cross_axes),
    ("np.cross-axis", fn.cross_axis, _cross_axis),
    ("np.cross-dynamic", fn.cross_dynamic, _cross_dynamic),
    ("np.cross-self", fn.cross_self, _cross_self),
    ("np.gradient", fn.gradient, _gradient),
    ("np.gradient-spacing", fn.gradient_spacing, lambda d, t: _gradient(d, t, 3)),
    ("np.gradient-axis", fn.gradient_axis, lambda d, t: _gradient(d, t, 2, (1, 3))),
    ("np.gradient-coordinates", fn.gradient_coordinates, lambda d, t: _gradient(d, t, 2, (1, 3))),
    ("np.gradient-all-axes", fn.gradient_all_axes, lambda d, t: _gradient(d, t, 2, (2, 2))),
    ("np.gradient-unpacked", fn.gradient_unpacked, lambda d, t: _gradient(d, t, 2, (2, 2))),
    ("np.gradient-dynamic", fn.gradient_dynamic, _gradient_dynamic),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, func, args", ROWS, ids=[row[0] for row in ROWS])
@given(data=st.data())
def test_numeric(name, func, args, dtype, data):
    check(func, args(data, dtype))


# -- conventions ------------------------------------------------------------------------------
def test_interp_slope_at_knots_follows_jax():
    """At an inner knot the segment to the right; at xp[-1] the last; outside, 0."""
    fp = np.array([0.0, 1.0, 3.0, 0.0, 2.0])  # slopes 1, 4, -2, 4
    x = np.array([-1.5, -1.0, 0.0, 0.5, 2.0, 2.5, 3.0])
    forward, reverse = derivatives(fn.interp, (x, fp))
    expected = [0.0, 1.0, 4.0, -2.0, 4.0, 4.0, 0.0]
    np.testing.assert_allclose(forward, expected)
    np.testing.assert_allclose(reverse, expected)


def test_interp_in_fp_weighs_the_two_ends_of_the_segment():
    x = np.array([-2.0, 0.25, 2.5, 3.0])
    fp = np.arange(5.0)
    jacobian = srcgrad.jacobian(fn.interp, wrt=1)(x, fp)
    expected = np.array(
        [[1, 0, 0, 0, 0], [0, 0.5, 0.5, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 1]], dtype=float
    )
    np.testing.assert_allclose(jacobian, expected)
    np.testing.assert_allclose(srcgrad.jacobian(fn.interp, wrt=1, mode="forward")(x, fp), expected)


def test_interp_with_period_in_fp_is_numpys_matrix():
    """Linear in fp: the Jacobian's columns are np.interp of the unit vectors, the queries
    on every segment of the periodic samples, the one across the period's ends too."""
    x = np.array([-7.0, -0.5, 0.0, 0.1, 0.6, 3.0, 4.5, 6.0, 9.0])
    fp = np.array([0.3, -1.0, 2.0, 0.5, 1.5])
    expected = np.stack(
        [np.interp(x, fn.XP_PERIODIC, e, period=2 * np.pi) for e in np.eye(5)], axis=1
    )
    for mode in ("reverse", "forward"):
        got = srcgrad.jacobian(fn.interp_period, wrt=1, mode=mode)(x, fp)
        np.testing.assert_allclose(got, expected, atol=1e-12)


def _interp_sum(x, fp):
    return np.sum(fn.interp(x, fp))


def test_interp_is_float64_like_numpy():
    x, fp = np.float32([0.25, 1.0]), np.arange(5, dtype=np.float32)
    value, tangent = srcgrad.jvp(fn.interp, wrt=(0, 1))(x, fp, np.ones_like(x), np.ones_like(fp))
    assert value.dtype == tangent.dtype == np.float64
    gx, gfp = srcgrad.grad(_interp_sum, wrt=(0, 1))(x, fp)
    assert gx.dtype == gfp.dtype == np.float32


def test_cross_of_2_vectors_is_the_third_entry():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ga, gb = srcgrad.grad(fn.cross, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(ga, [5.0, -3.0])  # d(a0 b1 - a1 b0)/da
    np.testing.assert_allclose(gb, [-2.0, 1.0])


@pytest.mark.parametrize("mode", ["valid", "same", "full"])
def test_correlate_jacobians_are_numpys_matrices(mode):
    """For every pair of lengths up to 6 (the longer first or second, even and odd: where
    numpy swaps the operands and centres ``'same'``), both Jacobians in both modes are the
    matrices numpy's own correlation of unit vectors gives."""
    rng = np.random.default_rng(0)
    for m in range(1, 7):
        for n in range(1, 7):
            a, v = rng.normal(size=m), rng.normal(size=n)
            in_a = np.stack([np.correlate(e, v, mode) for e in np.eye(m)], axis=1)
            in_v = np.stack([np.correlate(a, e, mode) for e in np.eye(n)], axis=1)
            for how in ("reverse", "forward"):
                ja, jv = srcgrad.jacobian(fn.correlate_dynamic, wrt=(0, 1), mode=how)(a, v, mode)
                np.testing.assert_allclose(ja, in_a, atol=1e-12, err_msg=f"{m} {n} {how}")
                np.testing.assert_allclose(jv, in_v, atol=1e-12, err_msg=f"{m} {n} {how}")


def test_gradient_adjoint_is_the_transposed_stencil():
    for edge_order in (1, 2):
        for h in (1.0, 0.5, np.array([0.0, 0.3, 1.0, 1.2, 2.0])):
            n = 5
            matrix = np.stack([np.gradient(e, h, edge_order=edge_order) for e in np.eye(n)], axis=1)
            got = srcgrad.jacobian(fn.gradient_dynamic, wrt=0)(np.zeros(n), h, 0, edge_order)
            np.testing.assert_allclose(got, matrix, atol=1e-12)


# -- what is not differentiated: clear errors ------------------------------------------------
def gradient_axis_variable(f, axis):
    return np.gradient(f, axis=axis)


def interp_period_left(x, fp):
    return np.interp(x, fn.XP, fp, left=0.0, period=3.0)


@pytest.mark.parametrize(
    "func, args, error, match",
    [
        (
            fn.interp_sample_points,
            (np.array([0.3]), fn.XP, np.ones(5)),
            srcgrad.errors.NoDerivativeError,
            "not in the sample points xp",
        ),
        (
            interp_period_left,
            (np.array([0.3]), np.ones(5)),
            srcgrad.errors.NoDerivativeError,
            "leave out left= and right=",
        ),
        (
            fn.interp_period_dynamic,
            (np.array([0.3]), np.ones(5), 3.0),
            srcgrad.errors.NoDerivativeError,
            "not in the period",
        ),
        (
            fn.correlate_of_complex,
            (np.array([0.3, -0.5]),),
            srcgrad.errors.UnsupportedSyntaxError,
            "not yet through np.correlate",
        ),
        (
            gradient_axis_variable,
            (np.ones((3, 3)), 0),
            srcgrad.errors.NoDerivativeError,
            "one array or a tuple",
        ),
        (
            fn.gradient_dynamic,
            (np.ones(4), 0.5, 0, 1),
            srcgrad.errors.NoDerivativeError,
            "not in its spacings",
        ),
    ],
    ids=[
        "interp-xp",
        "interp-period-left",
        "interp-period-active",
        "correlate-complex",
        "gradient-axis-variable",
        "gradient-spacing",
    ],
)
def test_unsupported(func, args, error, match):
    wrt = {"interp_sample_points": 1, "gradient_dynamic": (0, 1), "interp_period_dynamic": 2}
    wrt = wrt.get(func.__name__, 0)
    out = func(*args)
    with pytest.raises(error, match=match) as info:
        srcgrad.vjp(func, wrt=wrt)(*args, np.ones_like(out))
    assert_at_the_users_line(str(info.value), func)


def assert_at_the_users_line(message: str, func) -> None:
    """The message starts with the file and a line of ``func``, then that line's text."""
    code = func.__code__
    head, line, *_ = message.split("\n")
    path, number, _ = head.rsplit(":", 2)
    assert path == code.co_filename
    assert code.co_firstlineno <= int(number) < code.co_firstlineno + 10
    assert line.strip() in inspect.getsource(func)
