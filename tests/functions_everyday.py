"""User-style functions with everyday Python constructs srcgrad lowers (issue 18,
items 3-5): ``with np.errstate(...)`` blocks, in a module of their own so that autograd
can run the same source (``autograd_oracle.autograd_twin``)."""

from __future__ import annotations

import numpy as np


def safe_log_loss(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(x)
        terms = np.where(np.isfinite(logs), logs * y, 0.0)
    return np.sum(terms * x)


def _softplus(v):
    with np.errstate(over="ignore"):
        e = np.exp(v)
    return np.log1p(e)


def errstate_in_a_loop_and_a_helper(x):
    total = 0.0
    for k in range(1, 3):
        with np.errstate(under="ignore"):
            total = total + np.sum(_softplus(x * k) * x)
    return total


def errstate_around_the_return(x):
    y = x * x
    with np.errstate(all="ignore"):
        return np.sum(np.sqrt(y + 1.0) / x)


def errstate_raising(x):
    with np.errstate(divide="raise"):
        y = np.log(x)
    return np.sum(y)


def errstate_named(x):
    with np.errstate(divide="ignore") as state:
        y = np.log(x) * len(str(state))
    return np.sum(y)


def another_context(x, path):
    with open(path) as handle:
        y = np.log(x) * len(handle.read())
    return np.sum(y)
