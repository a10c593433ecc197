"""Issue 18, item 10 (in part): ``scipy.stats.norm`` (cdf, sf, pdf, logpdf, logcdf,
logsf, with loc and scale) and ``scipy.special`` ndtr, log_ndtr, ndtri, erfinv,
erfcinv and betaln. Checked against central differences and closed forms (the
Black-Scholes Greeks), in both modes, and to second order."""

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
