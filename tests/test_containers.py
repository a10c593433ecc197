"""Issue 18, item 3 (in part): containers built by ``list(...)``/``tuple(...)`` of a
display and by list arithmetic on displays (``[a] + [b]``, ``[a, b] * 2``) are written
as the displays they make (``normalize/containers.py``). Against autograd running the
same source, in both modes and to second order; list arithmetic on lists of unknown
length stays a clear refusal."""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad

X = np.array([0.3, 1.2, -0.7])


def tuple_of_a_list(x):
    t = tuple([x[0] * 2.0, x[1]])
    return t[0] * t[1] + np.sin(t[1])


def list_of_a_tuple(x):
    xs = list((x[0], x[1] * x[2]))
    return xs[0] * xs[1]


def repeated_display(x):
    parts = [x[0], x[1]] * 2
    return sum(parts) * parts[3]


def joined_displays(x):
    parts = [x[0]] + [x[1] * 3.0, x[2]]
    return parts[0] * parts[1] + np.tanh(parts[2])


def joined_tuples(x):
    a, b, c = (x[0],) + (x[1], x[2] ** 2)
    return a * b * c


FUNCTIONS = [tuple_of_a_list, list_of_a_tuple, repeated_display, joined_displays, joined_tuples]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_containers_match_autograd(f):
    twin = autograd_twin(f)
    expected = autograd.grad(twin)(X)
    for mode in ("reverse", "forward"):
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(X), expected, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.hessian(f)(X), autograd.hessian(twin)(X), rtol=1e-10)


def repeat_of_unknown_length(x):
    xs = []
    xs.append(x[0])
    parts = xs * 2
    return sum(parts)


def test_list_arithmetic_of_unknown_length_stays_refused():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="arithmetic on lists"):
        srcgrad.grad(repeat_of_unknown_length)(X)


def over_sorted_keys(p):
    rows = [p[k] * (i + 1.0) for i, k in enumerate(sorted(p))]
    return np.sum(np.stack(rows) ** 2) + sum(np.sum(np.sin(p[k])) for k in sorted(p))


def test_a_loop_over_a_dicts_sorted_keys():
    """``for k in sorted(p)`` with a dict ``p``: over its keys in order (found when the
    derivative is made, as for ``p.keys()``), so the keys are never differentiated."""
    p = {"b": np.array([0.3, -0.2]), "a": np.array([1.2, 0.5]), "c": np.array([0.1, 0.9])}
    twin = autograd_twin(over_sorted_keys)
    expected = autograd.grad(twin)(p)
    for mode in ("reverse", "forward"):
        got = srcgrad.grad(over_sorted_keys, mode=mode)(p)
        assert list(got) == list(p)
        for k in p:
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-12)
