"""Issue 18, leftover item 2: ``**kwargs`` in the functions the differentiated function
calls (``def h(x, **kw)`` called ``h(x, a=2.0, b=x)``). Each set of keywords gets a
variant of the function taking them as keyword-only parameters, whose body builds the
dict from them at once (``normalize/keywords.py``), read by its keys
(``normalize/dicts.py``: ``kw["a"]``, ``kw.get("b", 0.0)``, ``"b" in kw``). Checked
against autograd running the same source, both modes, second order, and central
differences; ``**kwargs`` on the function differentiated itself stays refused."""

from __future__ import annotations

import autograd
import functions_everyday as fe
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad
from srcgrad.testing import check_grads

X = np.array([0.3, -0.5, 1.2])
MODES = ("reverse", "forward")


def scaled(x, **kw):
    return x * kw["a"] + kw.get("b", 0.0)


def options(x, power=2, **opts):
    y = x**power
    if "shift" in opts:
        y = y + opts["shift"]
    return np.sum(y * np.cos(opts.get("angle", 0.0))) * len(opts)


def calls_with_keywords(x):
    first = np.sum(scaled(x, a=2.0, b=x) ** 2)
    second = np.sum(scaled(x, a=np.sin(x)))
    return first + second + options(x, angle=x[0], shift=x) + options(x, power=3, angle=0.5)


def calls_with_a_dict_display(x):
    return np.sum(scaled(x, **{"a": x, "b": 1.0}) * scaled(2.0 * x, a=x[1]))


def kwargs_passed_on(x, **kw):
    return scaled(x, **kw)  # (in a return: the dict as it is there, keyword by keyword)


def calls_passing_kwargs_on(x):
    return np.sum(kwargs_passed_on(x, a=x) * kwargs_passed_on(x, a=2.0, b=np.exp(x)))


@pytest.mark.parametrize(
    "f",
    [calls_with_keywords, calls_with_a_dict_display, calls_passing_kwargs_on],
    ids=lambda f: f.__name__,
)
def test_kwargs_as_autograd_has_them(f):
    twin = autograd_twin(f)
    assert f(X) == pytest.approx(twin(X))
    expected = autograd.grad(twin)(X)
    for mode in MODES:
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(X), expected, rtol=1e-10)
    np.testing.assert_allclose(
        srcgrad.hessian(f)(X), autograd.hessian(twin)(X), rtol=1e-9, atol=1e-12
    )
    check_grads(f, (X,), order=2)


def test_a_variant_per_set_of_keywords_in_the_generated_code():
    derivative = srcgrad.jvp(calls_with_keywords)  # (a plain JVP: one direction)
    derivative(X, X)
    source = derivative.source
    assert "def jvp_scaled(x, kw_a, kw_b, x_dot, kw_b_dot):" in source, source
    assert "def jvp_scaled_1(x, kw_a, x_dot, kw_a_dot):" in source, source


def test_the_function_with_kwargs_of_the_suite():
    twin = autograd_twin(fe.kwargs_called)
    for mode in MODES:
        np.testing.assert_allclose(
            srcgrad.grad(fe.kwargs_called, mode=mode)(X), autograd.grad(twin)(X), rtol=1e-12
        )


def kwargs_differentiated(x, **kw):
    return np.sum(x * kw["a"])


def test_kwargs_of_the_function_differentiated_are_options():
    """(Issue 18, leftover item 3: test_entry_keywords.py.) A keyword the function reads
    and the call does not give fails as the function does."""
    x = np.array([0.3, 0.5])
    for mode in ("reverse", "forward"):
        np.testing.assert_allclose(srcgrad.grad(kwargs_differentiated, mode=mode)(x, a=2.0), 2.0)
        with pytest.raises(KeyError, match="'a'"):
            srcgrad.grad(kwargs_differentiated, mode=mode)(x)


def a_missing_keyword(x):
    return np.sum(scaled(x, b=x))


def kwargs_passed_on_then_read(x, **kw):
    y = scaled(x, **kw)
    return y * 2.0


def calls_passing_kwargs_on_then_reading(x):
    return np.sum(kwargs_passed_on_then_read(x, a=x))


@pytest.mark.parametrize(
    "f, error, match",
    [
        (
            a_missing_keyword,
            srcgrad.UnsupportedSyntaxError,
            r"return x \* kw\[\"a\"\].*\n.*`kw` has no key 'a' here",
        ),
        (
            calls_passing_kwargs_on_then_reading,
            srcgrad.UnsupportedSyntaxError,
            r"y = scaled\(x, \*\*kw\)\n.*only of a dict display",
        ),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused_at_the_users_line(f, error, match, mode):
    with pytest.raises(error, match=match) as info:
        srcgrad.grad(f, mode=mode)(X)
    assert f"{__file__}:" in str(info.value)
