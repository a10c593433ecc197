"""Issue 18, item 10: ``scipy.stats`` — ``norm`` (cdf, sf, pdf, logpdf, logcdf, logsf,
with loc and scale); the loc-scale families t, gamma, beta, expon, lognorm, laplace,
cauchy and logistic (the same six methods, in their shape parameters where the
derivative has a closed form); ``poisson`` in mu; ``multivariate_normal`` in x, mean
and cov; and ``scipy.special`` ndtr, log_ndtr, ndtri, erfinv, erfcinv and betaln.
Checked against central differences and closed forms (the Black-Scholes Greeks), in
both modes, to second order, and against autograd's ``scipy.stats`` where it has the
function."""

from __future__ import annotations

import math

import numpy as np
import pytest

import srcgrad

scipy = pytest.importorskip("scipy")
from scipy import special  # noqa: E402
from scipy.stats import norm  # noqa: E402

MODES = ("reverse", "forward")


def black_scholes(S, K, T, r, sigma):
    d1 = (np.log(S / K) + (r + 0.5 * sigma**2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)


def test_black_scholes_greeks():
    S, K, T, r, sigma = 100.0, 95.0, 0.5, 0.02, 0.25
    d1 = (math.log(S / K) + (r + 0.5 * sigma**2) * T) / (sigma * math.sqrt(T))
    phi = math.exp(-0.5 * d1 * d1) / math.sqrt(2 * math.pi)
    delta, vega, gamma = norm.cdf(d1), S * phi * math.sqrt(T), phi / (S * sigma * math.sqrt(T))
    for mode in MODES:
        got = srcgrad.grad(black_scholes, wrt=(0, 4), mode=mode)(S, K, T, r, sigma)
        np.testing.assert_allclose(got, (delta, vega), rtol=1e-10)
    assert srcgrad.hessian(black_scholes)(S, K, T, r, sigma) == pytest.approx(gamma, rel=1e-9)


def normal_family(x, mu, s):
    return (
        np.sum(norm.logpdf(x, loc=mu, scale=s))
        + np.sum(norm.logcdf(x, mu, s))
        + np.sum(norm.pdf(x, mu, s) * x)
        + np.sum(norm.sf(x, loc=mu, scale=s))
        + np.sum(norm.logsf(x, mu, s))
        + np.sum(norm.cdf(x * s))
    )


def special_family(x, a):
    return np.sum(
        special.ndtr(x)
        + special.log_ndtr(x)
        + special.ndtri(special.expit(x))
        + special.erfinv(np.tanh(x))
        + special.erfcinv(special.expit(x))
        + special.betaln(a, x * x + 1.0)
    )


def differences(f, args, k, eps=1e-6):
    value = np.asarray(args[k], dtype=float)
    out = np.zeros_like(value)
    for index in np.ndindex(value.shape):
        moved = []
        for sign in (1.0, -1.0):
            step = value.copy()
            step[index] += sign * eps
            new = list(args)
            new[k] = step if value.ndim else float(step)
            moved.append(f(*new))
        out[index] = (moved[0] - moved[1]) / (2 * eps)
    return out


@pytest.mark.parametrize(
    "f, args",
    [
        (normal_family, (np.array([0.3, -1.2, 2.0]), 0.4, 1.3)),
        (special_family, (np.array([0.3, -1.2, 2.0]), 1.7)),
    ],
    ids=["norm", "special"],
)
def test_rules_match_differences_in_every_argument(f, args):
    wrt = tuple(range(len(args)))
    for mode in MODES:
        got = srcgrad.grad(f, wrt=wrt, mode=mode)(*args)
        for k in wrt:
            np.testing.assert_allclose(got[k], differences(f, args, k), rtol=1e-6, atol=1e-6)
    gradient = srcgrad.grad(f)
    hessian = srcgrad.hessian(f)(*args)
    for index in np.ndindex(args[0].shape):
        step = np.zeros_like(args[0])
        step[index] = 1e-6
        column = (gradient(args[0] + step, *args[1:]) - gradient(args[0] - step, *args[1:])) / 2e-6
        np.testing.assert_allclose(hessian[(Ellipsis, *index)], column, rtol=1e-5, atol=1e-6)


def test_the_listing_names_the_distribution():
    from srcgrad import cli

    names = {name for name, _ in cli.supported()}
    assert {"scipy.stats.norm.cdf", "scipy.stats.norm.logpdf", "scipy.special.ndtri"} <= names


# -- the loc-scale families: hypothesis rows through rule_checks.check -------------------------
import functions_scipy_stats as fs  # noqa: E402
import rule_checks  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from rule_checks import Domain, check, operand, shapes, values  # noqa: E402

import srcgrad.errors  # noqa: E402

METHODS = ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf")
#: family -> (the standardized point z, inside the support and away from kinks;
#: the domain of each shape parameter; whether the cdf is differentiated in them)
FAMILIES = {
    # (SciPy's t.cdf loses digits next to 0: finite differences there are off by 1e-5)
    "t": (Domain(-3.0, 3.0, exclude=(-0.05, 0.05)), {"df": Domain(1.0, 6.0)}, False),
    "gamma": (Domain(0.3, 3.0), {"a": Domain(0.5, 3.0)}, False),
    "beta": (Domain(0.1, 0.9), {"a": Domain(0.8, 3.0), "b": Domain(0.8, 3.0)}, False),
    "expon": (Domain(0.1, 3.0), {}, True),
    "lognorm": (Domain(0.3, 3.0), {"s": Domain(0.4, 1.5)}, True),
    "laplace": (Domain(-3.0, 3.0, exclude=(-0.1, 0.1)), {}, True),
    "cauchy": (Domain(-3.0, 3.0), {}, True),
    "logistic": (Domain(-3.0, 3.0), {}, True),
}
LOC, SCALE = Domain(-1.0, 1.0), Domain(0.5, 2.0)


def family_params() -> list:
    return [
        pytest.param(family, method, id=f"{family}.{method}")
        for family in FAMILIES
        for method in METHODS
    ]


#: 48 rows, each drawing shapes and dtypes that make new code, checked to second order: a
#: third of the profile's examples each (5 in CI's, 100 in the thorough one)
_FAMILY_EXAMPLES = max(5, settings.default.max_examples // 3)


@pytest.mark.parametrize("family, method", family_params())
@settings(max_examples=_FAMILY_EXAMPLES)
@given(data=st.data())
def test_family(family, method, data):
    """x inside the support, every float argument differentiated (alone, then all at once),
    to second order; a shape parameter of a cdf without a closed-form derivative comes as
    a Python int (not differentiated)."""
    support, shape_domains, cdf_in_shapes = FAMILIES[family]
    shape = data.draw(shapes(max_dims=2))
    loc = operand(data, data.draw(st.sampled_from([(), shape])), LOC, np.float64)
    scale = operand(data, (), SCALE, np.float64)
    z = data.draw(values(shape, support, np.float64))
    x = np.asarray(loc + scale * z, dtype=np.float64)
    density = method in ("logpdf", "pdf")
    params = []
    for domain in shape_domains.values():
        if density or cdf_in_shapes:
            params.append(
                operand(data, data.draw(st.sampled_from([(), shape])), domain, np.float64)
            )
        else:
            params.append(data.draw(domain.ints()))
    check(getattr(fs, f"{family}_{method}"), (x, *params, loc, scale))


@pytest.mark.parametrize(
    "func, args",
    [
        (fs.t_logpdf_keywords, (np.array([-1.0, 0.3, 2.5]), 3.5, 1.5)),
        (fs.gamma_logpdf_defaults, (np.array([0.4, 1.3, 2.5]), 1.7)),
        (fs.beta_cdf_keywords, (np.array([0.3, 0.5, 0.8]), -0.1)),
        (fs.lognorm_fit, (0.8, 0.3)),
        (fs.student_t_loss, (np.array([-1.5, 0.2, 0.9, 3.0]), 2.5)),
    ],
    ids=lambda a: getattr(a, "__name__", ""),
)
def test_other_spellings(func, args):
    check(func, args)


@pytest.mark.parametrize(
    "func, wrt, param",
    [
        (fs.gamma_cdf_in_a, 1, "a"),
        (fs.beta_sf_in_b, 1, "b"),
        (fs.t_cdf_in_df, 1, "df"),
        (fs.poisson_in_k, 0, "k"),
    ],
    ids=lambda a: getattr(a, "__name__", str(a)),
)
@pytest.mark.parametrize("mode", MODES)
def test_shape_parameter_without_closed_form_is_refused(func, wrt, param, mode):
    with pytest.raises(srcgrad.errors.NoDerivativeError) as info:
        srcgrad.grad(func, wrt=wrt, mode=mode)(np.array([0.4, 0.7]), 2.5)
    message = str(info.value)
    assert f"argument {param!r} depends on the arguments being differentiated" in message
    assert "closed form" in message or "whole numbers" in message
    assert "return np.sum" in message  # the user's line


def test_cdf_in_x_beside_a_constant_shape_parameter():
    x = np.array([0.4, 1.1, 2.0])
    for mode in MODES:
        got = srcgrad.grad(fs.gamma_cdf_in_a, mode=mode)(x, 2.5)
        np.testing.assert_allclose(got, scipy.stats.gamma.pdf(x, 2.5), rtol=1e-12)


# -- poisson: in mu ----------------------------------------------------------------------------
POISSON = [f"poisson_{m}" for m in ("logpmf", "pmf", "cdf", "sf", "logcdf", "logsf")]


@pytest.mark.parametrize("name", [*POISSON, "poisson_logpmf_loc", "poisson_cdf_loc"])
@given(data=st.data())
def test_poisson(name, data):
    shape = data.draw(shapes(max_dims=2))
    mu = operand(data, shape, Domain(0.3, 6.0), np.float64)
    counts = data.draw(
        values(data.draw(st.sampled_from([(), shape])), Domain(1.0, 9.0), np.float64)
    )
    check(getattr(fs, name), (mu, np.floor(counts).astype(np.int64)))


def test_poisson_regression():
    rng = np.random.default_rng(1)
    features = rng.normal(size=(6, 3))
    counts = np.array([0, 1, 3, 2, 7, 1])
    check(fs.poisson_regression, (np.array([0.3, -0.2, 0.5]), features, counts))


# -- multivariate normal ---------------------------------------------------------------------
@pytest.mark.parametrize("func", [fs.mvn_logpdf, fs.mvn_pdf], ids=lambda f: f.__name__)
@given(data=st.data())
def test_multivariate_normal(func, data):
    """cov = factor @ factor.T + I, so every direction finite differences take is one of
    symmetric matrices; x one point, several, or one in a batch of one."""
    dim = data.draw(st.integers(1, 3))
    batch = data.draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    x = data.draw(values((*batch, dim), Domain(-1.5, 1.5), np.float64))
    mean = data.draw(values((dim,), Domain(-1.0, 1.0), np.float64))
    factor = data.draw(values((dim, dim), Domain(-1.0, 1.0), np.float64))
    check(func, (x, mean, factor))


X3 = np.array([-1.0, 0.3, 2.5])
SPD = np.array([[2.0, 0.3, -0.4], [0.3, 1.5, 0.2], [-0.4, 0.2, 1.2]])
POINTS = np.array([[0.3, -0.5, 1.0], [-1.2, 0.4, 0.1]])


@pytest.mark.parametrize("func", [fs.mvn_logpdf_cov, fs.mvn_pdf_cov], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_multivariate_normal_cov_is_symmetric(func, mode):
    """The derivative in cov is the symmetric one: it matches finite differences along
    symmetric directions, and a tangent counts by its symmetric part."""
    mean = np.array([0.1, -0.2, 0.3])
    got = srcgrad.grad(func, wrt=2, mode=mode)(POINTS[0], mean, SPD)
    np.testing.assert_allclose(got, got.T)
    rng = np.random.default_rng(0)
    for _ in range(3):
        e = rng.normal(size=(3, 3))
        e = e + e.T
        step = (
            func(POINTS[0], mean, SPD + 1e-6 * e) - func(POINTS[0], mean, SPD - 1e-6 * e)
        ) / 2e-6
        assert np.sum(got * e) == pytest.approx(step, rel=1e-6)
    e = np.triu(rng.normal(size=(3, 3)))  # not symmetric: counts as (e + e.T) / 2
    _, tangent = srcgrad.jvp(func, wrt=2)(POINTS[0], mean, SPD, e)
    _, symmetric = srcgrad.jvp(func, wrt=2)(POINTS[0], mean, SPD, (e + e.T) / 2)
    assert tangent == pytest.approx(symmetric, rel=1e-12)


@pytest.mark.parametrize(
    "func, args",
    [
        (fs.mvn_logpdf_cov, (POINTS, X3 / 4, np.array([1.5, 0.7, 2.0]))),  # cov a diagonal
        (fs.mvn_logpdf_cov, (POINTS[0], np.zeros(3), 1.7)),  # cov a number
        (fs.mvn_logpdf_cov, (np.array([0.3, -0.5, 1.0]), np.array([0.2]), 1.3)),  # dim 1
        (fs.mvn_logpdf_no_mean, (POINTS, SPD / 2)),
        (fs.mvn_logpdf_standard, (np.array([0.3, -0.5]),)),
        (fs.mvn_pdf_cov, (POINTS[:1], X3 / 4, np.diag(SPD))),
    ],
    ids=["diagonal", "number", "dim-1", "no-mean", "standard", "pdf-diagonal"],
)
def test_multivariate_normal_forms_of_cov(func, args):
    check(func, args)


# -- autograd's scipy.stats, where it has the function ----------------------------------------
def autograd_stats(name: str, method: str, order=None):
    """autograd's ``scipy.stats.<name>.<method>``, taking the arguments of ours (``order``:
    the positions of ours it takes, in its order)."""
    agstats = pytest.importorskip("autograd.scipy.stats")
    func = getattr(getattr(agstats, name), method)
    return func if order is None else (lambda *a: func(*(a[i] for i in order)))


POSITIVE3 = np.array([0.4, 1.3, 2.5])
AUTOGRAD = [
    # (ours, autograd's, args, the positions autograd differentiates)
    (fs.t_logpdf, ("t", "logpdf"), (X3, 3.5, 0.2, 1.3), (0, 1, 2, 3)),
    (fs.t_pdf, ("t", "pdf"), (X3, 3.5, 0.2, 1.3), (0, 1, 2, 3)),
    (fs.gamma_logpdf, ("gamma", "logpdf", (0, 1)), (POSITIVE3, 1.7, 0.0, 1.0), (0, 1)),
    (fs.gamma_pdf, ("gamma", "pdf", (0, 1)), (POSITIVE3, 1.7, 0.0, 1.0), (0, 1)),
    (fs.beta_logpdf, ("beta", "logpdf", (0, 1, 2)), (POSITIVE3 / 3, 1.7, 2.5, 0.0, 1.0), (0, 1, 2)),
    (fs.beta_pdf, ("beta", "pdf", (0, 1, 2)), (POSITIVE3 / 3, 1.7, 2.5, 0.0, 1.0), (0, 1, 2)),
    (fs.poisson_logpmf, ("poisson", "logpmf", (1, 0)), (POSITIVE3, np.array([1, 0, 4])), (0,)),
    (fs.poisson_pmf, ("poisson", "pmf", (1, 0)), (POSITIVE3, np.array([1, 0, 4])), (0,)),
    (fs.poisson_cdf, ("poisson", "cdf", (1, 0)), (POSITIVE3, np.array([1, 0, 4])), (0,)),
    (fs.mvn_logpdf_cov, ("multivariate_normal", "logpdf"), (POINTS, X3 / 4, SPD), (0, 1, 2)),
    (fs.mvn_pdf_cov, ("multivariate_normal", "pdf"), (POINTS[0], X3 / 4, SPD), (0, 1)),
]


@pytest.mark.parametrize(
    "ours, theirs, args, positions",
    [pytest.param(*case, id=case[0].__name__) for case in AUTOGRAD],
)
def test_agrees_with_autograd(ours, theirs, args, positions):
    """The gradient of the sum of the outputs, by srcgrad's forward and reverse modes and by
    autograd (whose derivative in cov is not symmetrized: compared by its symmetric part)."""
    import autograd

    func = autograd_stats(*theirs)
    for k in positions:

        def total(v, k=k):
            return np.sum(func(*args[:k], v, *args[k + 1 :]))

        expected = autograd.grad(total)(args[k])
        if k == 2 and ours in (fs.mvn_logpdf_cov, fs.mvn_pdf_cov):
            expected = (expected + expected.T) / 2
        for got in rule_checks.derivatives(ours, args, wrt=k):
            np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-12)


# -- frozen distributions ---------------------------------------------------------------------
XS = np.array([0.3, -1.2, 2.0])
FROZEN_ROWS = [
    (fs.frozen_norm, (XS, 0.4, 1.3)),
    (fs.frozen_norm, (XS, np.array([0.4, -0.2, 0.1]), np.array([1.3, 0.8, 2.0]))),
    (fs.frozen_logpdf, (XS, 0.4, 1.3)),
    (fs.frozen_inline, (XS, 0.4, 1.3)),
    (fs.frozen_t, (XS, 3.5, 0.2, 1.3)),
    (fs.frozen_gamma, (np.array([0.9, 1.3, 2.5]), 0.1, 1.2)),
    (fs.frozen_poisson, (np.array([0.4, 1.3, 2.5]), np.array([1, 0, 4]))),
    (fs.frozen_in_loop, (XS, 0.7)),
    (fs.frozen_on_parameters, (np.array([0.3, -0.5]),)),
    (fs.frozen_mvn, (POINTS, XS / 4, SPD)),
    (fs.frozen_mvn_inline, (np.array([0.1, 0.2]),)),
]


@pytest.mark.parametrize(
    "func, args",
    FROZEN_ROWS,
    ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(FROZEN_ROWS)],
)
def test_frozen_distribution_made_in_the_function(func, args):
    """``d = norm(mu, s)`` then ``d.logpdf(x)``: forward and reverse mode against finite
    differences in every float argument (alone and together), to second order."""
    check(func, args)


def unfrozen_norm(x, mu, s):
    return (
        norm.logpdf(x, loc=mu, scale=s)
        + norm.cdf(x, loc=mu, scale=s) * norm.pdf(x, loc=mu, scale=s)
        + norm.logcdf(x, loc=mu, scale=s)
        - norm.sf(x, loc=mu, scale=s)
        + norm.logsf(x, loc=mu, scale=s)
    )


def test_frozen_distribution_is_the_call_with_its_parameters():
    """The derivative is the one of the same calls with the parameters given, and
    autograd's for ``logpdf``; the generated code names the parameters after SciPy's."""
    import autograd

    args = (XS, 0.4, 1.3)
    dout = np.cos(XS)
    ours = srcgrad.vjp(fs.frozen_norm, wrt=(0, 1, 2))(*args, dout)
    for got, want in zip(ours, srcgrad.vjp(unfrozen_norm, wrt=(0, 1, 2))(*args, dout)):
        np.testing.assert_array_equal(got, want)
    logpdf = autograd_stats("norm", "logpdf")
    for k in (0, 1, 2):

        def total(v, k=k):
            return np.sum(logpdf(*args[:k], v, *args[k + 1 :]))

        expected = autograd.grad(total)(args[k])
        for got in rule_checks.derivatives(fs.frozen_logpdf, args, wrt=k):
            np.testing.assert_allclose(got, expected, rtol=1e-10)
    source = srcgrad.grad(fs.frozen_t, wrt=(1, 2, 3)).source
    assert "d_df = df" in source and "d_loc = loc" in source and "t.logpdf(" in source


@pytest.mark.parametrize(
    "func",
    [
        fs.frozen_global,
        fs.frozen_mvn_cdf,
        fs.frozen_passed,
        fs.frozen_stored,
        fs.frozen_mean,
        fs.frozen_made_twice,
        fs.frozen_inline_both_call,
    ],
    ids=lambda f: f.__name__,
)
@pytest.mark.parametrize("mode", MODES)
def test_frozen_distribution_is_refused_with_what_to_write(func, mode):
    """Frozen distributions srcgrad does not follow (one made elsewhere, a multivariate one,
    one that escapes or is read otherwise than for values): an error at the user's line."""
    with pytest.raises(
        (srcgrad.errors.NoDerivativeError, srcgrad.errors.UnsupportedSyntaxError)
    ) as info:
        srcgrad.grad(func, mode=mode)(np.array([0.1, 0.2]))
    message = str(info.value)
    assert "frozen scipy.stats distribution" in message
    assert "`norm.logpdf(x, mu, s)`" in message
    assert "functions_scipy_stats.py" in message  # the user's file and line


# -- generated code: standalone, and float32 arguments -------------------------------------------
@pytest.mark.parametrize(
    "func, args",
    [
        (fs.gamma_cdf, (np.array([0.4, 1.3, 2.5]), 1.7, 0.1, 1.2)),
        (fs.t_logcdf, (np.array([-1.0, 0.3, 2.5]), 3.5, 0.2, 1.3)),
        (fs.mvn_logpdf_cov, (POINTS, X3 / 4, SPD)),
    ],
    ids=lambda a: getattr(a, "__name__", ""),
)
def test_generated_module_is_standalone(func, args):
    """The helpers that call SciPy (gammaln, betaln, mvn_whiten...) come with the module."""
    derivative = srcgrad.vjp(func)
    dout = np.ones_like(func(*args))
    namespace: dict = {}
    exec(compile(derivative.source, "<generated>", "exec"), namespace)
    generated = next(v for k, v in namespace.items() if k.startswith("vjp_"))
    np.testing.assert_allclose(generated(*args, dout), derivative(*args, dout))


@pytest.mark.parametrize("family", ["t", "gamma", "beta", "logistic"])
@pytest.mark.parametrize("method", ["logpdf", "cdf"])
def test_float32_arguments(family, method):
    """SciPy computes in float64: tangents are float64, gradients float32 like x."""
    support, shape_domains, cdf_in_shapes = FAMILIES[family]
    x = np.linspace(support.low + 0.05, support.high - 0.05, 4, dtype=np.float32)
    shapes_ = [1.5 if method == "logpdf" or cdf_in_shapes else 2 for _ in shape_domains]
    check(getattr(fs, f"{family}_{method}"), (x, *shapes_, np.float32(0.0), np.float32(1.0)))
