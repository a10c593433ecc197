"""A function with an ``assert``, defined in a test module: pytest rewrites the module's
asserts, so the code Python runs is not the function's source. srcgrad says so, and
what to do, instead of suspecting an edited file."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import srcgrad


def checked_here(x):
    assert np.all(np.isfinite(x))
    return np.sum(x * x)


def test_an_assert_rewritten_by_pytest_is_explained():
    rewritten = type(sys.modules[__name__].__loader__).__name__ == "AssertionRewritingHook"
    if not rewritten:  # (pytest --assert=plain: the source is the code)
        np.testing.assert_allclose(srcgrad.grad(checked_here)(np.ones(2)), [2.0, 2.0])
        return
    with pytest.raises(srcgrad.SrcgradError, match="pytest rewrote the `assert` statements"):
        srcgrad.grad(checked_here)(np.ones(2))
