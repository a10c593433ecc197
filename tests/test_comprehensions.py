"""Issue 18, items 2 and 5: list comprehensions, generator expressions given to ``sum``
and ``list``, and assignment expressions (``:=``), lowered to the loops they mean
(``normalize/comprehensions.py``).

Every function is checked against autograd running the same source (the oracle that did
not come from srcgrad), in both modes, and its Hessian (forward over reverse) against
autograd's, except where srcgrad refuses the second order with a clear error (a list of
lists). What stays refused says what to write instead.
"""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin

import srcgrad

X = np.array([0.3, -0.5, 1.2])


def filtered_terms(x):
    terms = [np.sin(v) * v for v in x if v > 0]
    return sum(terms)


def generator_with_enumerate(x):
    return sum(np.cos(v) * k for k, v in enumerate(x))


def stacked_rows(x):
    return np.sum(np.stack([x[k] * x for k in range(3)]) ** 2)


def two_generators(x):
    pairs = [a * b for a in x for b in x if a < b]
    return sum(pairs)


def list_of_a_generator(x):
    return np.sum(np.array(list(np.exp(v) for v in x)))


def comprehension_in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(np.array([x[j] * x[i] for j in range(i + 1)]))
    return total


def comprehension_in_a_call(x):
    return np.sum(np.tanh(np.array([v * 2.0 for v in x]))) * len([0 for _ in x])


def comprehension_in_a_for_iterable(x):
    total = 0.0
    for w in [v * v for v in x]:
        total = total + np.sin(w)
    return total


def list_of_lists(x):
    table = np.array([[x[j] * i + x[i] for j in range(3)] for i in range(2)])
    return np.sum(np.tanh(table))


def comprehension_reads_its_target(x):
    ys = [v for v in x]
    ys = [y * y for y in ys]
    return sum(ys)


def walrus_in_a_test(x):
    if (s := np.sum(x * x)) > 1.0:
        return s * 2.0
    return np.sqrt(s)


def walrus_in_an_expression(x):
    total = (a := x[0] * 3.0) + a * x[1]
    return total * np.sin(a)


def walrus_in_a_comprehension(x):
    ys = [y := np.sin(v) for v in x]  # (y is the function's: the last element)
    return sum(ys) * y


FUNCTIONS = [
    walrus_in_a_test,
    walrus_in_an_expression,
    walrus_in_a_comprehension,
    filtered_terms,
    generator_with_enumerate,
    stacked_rows,
    two_generators,
    list_of_a_generator,
    comprehension_in_a_loop,
    comprehension_in_a_call,
    comprehension_in_a_for_iterable,
    list_of_lists,
    comprehension_reads_its_target,
]
#: second order refused with a clear error (see test_higher_order.SECOND_ORDER_REFUSED)
SECOND_ORDER_REFUSED = {list_of_lists, comprehension_in_a_loop}


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, np.array([-0.2, 0.7, 0.4])], ids=["x0", "x1"])
def test_comprehensions_match_autograd(f, x):
    twin = autograd_twin(f)
    expected = autograd.grad(twin)(x)
    for mode in ("reverse", "forward"):
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(x), expected, rtol=1e-10, atol=1e-12)
    if f in SECOND_ORDER_REFUSED:
        refused = "shares that memory|holds that list"
        with pytest.raises(srcgrad.UnsupportedSyntaxError, match=refused):
            srcgrad.hessian(f)(x)
        return
    expected = autograd.hessian(twin)(x)
    np.testing.assert_allclose(srcgrad.hessian(f)(x), expected, rtol=1e-9, atol=1e-12)


def shadowing(x):
    v = 2.0
    ys = [v * w for v in x for w in x]  # (this v is the comprehension's own)
    return np.sum(np.array(ys)) * v


def test_a_comprehension_variable_is_its_own():
    """The comprehension's ``v`` never changes the function's ``v`` (Python 3 scoping):
    the lowered loop runs over a name of its own."""
    expected = autograd.grad(autograd_twin(shadowing))(X)
    for mode in ("reverse", "forward"):
        derivative = srcgrad.grad(shadowing, mode=mode)
        np.testing.assert_allclose(derivative(X), expected, rtol=1e-12)
        assert "for v_1 in" in derivative.source or "v_1 = " in derivative.source


def test_generated_code_is_the_loop_a_person_writes():
    derivative = srcgrad.grad(filtered_terms, mode="forward")
    derivative(X)
    source = derivative.source
    assert "terms = []" in source and "terms.append(" in source, source


def set_comprehension(x):
    return sum({v * 2.0 for v in x})


def dict_comprehension(x):
    d = {k: v for k, v in enumerate(x)}
    return d[0] * 2.0


def generator_to_stack(x):
    return np.sum(np.stack(v * v for v in x))


def tuple_of_a_generator(x):
    parts = tuple(v * v for v in x)  # (tuple(...) of anything: issue 18, containers)
    return parts[0] + parts[2]


def comprehension_on_one_path(x):
    ys = [v * v for v in x] if x[0] > 0 else [v for v in x]
    return sum(ys)


@pytest.mark.parametrize(
    "f, what",
    [
        (set_comprehension, "set comprehension"),
        (dict_comprehension, "dict comprehension"),
        (generator_to_stack, "generator expressions"),
        (tuple_of_a_generator, "generator expressions"),
        (comprehension_on_one_path, "list comprehensions"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_what_is_not_lowered_is_refused_at_the_users_line(f, what):
    for mode in ("reverse", "forward"):
        with pytest.raises(srcgrad.UnsupportedSyntaxError, match=what) as info:
            srcgrad.grad(f, mode=mode)(X)
        assert f"{__file__}:" in str(info.value)


def test_the_users_function_is_lowered_again_the_same_way():
    """The lowering copies what it changes: a second derivative of the same function
    (and the cache's other entries) lower the user's own tree again."""
    first = srcgrad.grad(filtered_terms)(X)
    second = srcgrad.grad(filtered_terms, mode="forward")(X)
    third = srcgrad.value_and_grad(filtered_terms)(X)[1]
    np.testing.assert_allclose(first, second)
    np.testing.assert_allclose(first, third)
