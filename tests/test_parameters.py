"""Issue 18, item 3 (in part): keyword-only and positional-only parameters, in the
function differentiated and in the helpers it calls. Against autograd running the same
source, in both modes and to second order; ``*args``/``**kwargs`` stay a clear error."""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad

X = np.array([0.3, 1.2, -0.7])


def scaled(x, *, scale=2.0):
    return np.sum(np.sin(x) * scale)


def powered(v, *, power=2.0, offset=0.0):
    return v**power + offset


def calls_with_keywords(x, s):
    return np.sum(powered(x, power=3.0) + powered(x * s, offset=s))


def positional_only(x, /, y):
    return np.sum(x * y * y)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_keyword_only_parameters(mode):
    twin = autograd_twin(scaled)
    for kwargs in ({}, {"scale": 3.0}):
        expected = autograd.grad(lambda x: twin(x, **kwargs))(X)  # noqa: B023
        np.testing.assert_allclose(srcgrad.grad(scaled, mode=mode)(X, **kwargs), expected)
    expected = autograd.grad(lambda s: twin(X, scale=s))(3.0)
    got = srcgrad.grad(scaled, wrt="scale", mode=mode)(X, scale=3.0)
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("f", [calls_with_keywords, positional_only], ids=lambda f: f.__name__)
def test_helpers_and_signatures_with_named_parameters(f):
    twin = autograd_twin(f)
    args = (X, 0.5) if f is calls_with_keywords else (X, X * 2.0)
    for wrt in (0, 1):
        expected = autograd.grad(twin, wrt)(*args)
        for mode in ("reverse", "forward"):
            np.testing.assert_allclose(srcgrad.grad(f, wrt=wrt, mode=mode)(*args), expected)
    np.testing.assert_allclose(srcgrad.hessian(f)(*args), autograd.hessian(twin)(*args))


def star_args(x, *rest):
    return np.sum(x) + sum(rest)


def test_star_args_stay_refused():
    """(In the function differentiated: a function it calls may have them,
    test_star_arguments.py.)"""
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=r"not \*args in the function diff"):
        srcgrad.grad(star_args)(X, 1.0)
