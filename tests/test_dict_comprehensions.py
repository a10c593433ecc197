"""Issue 18, leftover item 1: dict comprehensions whose keys srcgrad knows when it reads
the code (``range`` with constant bounds, a list of constants, a dict argument's keys, a
dict built in the function) written out as the dict displays they make, and sets of
constants in membership tests (``normalize/dict_comprehensions.py``, ``normalize/sets.py``).

Each function is checked against autograd running the same source, in both modes, to
second order, and against central differences (``check_grads``); what stays refused (a
set of values the code computes, a key or condition known only when the code runs, a
comprehension over an array) names the user's line and says what to write instead.
"""

from __future__ import annotations

import autograd
import numpy as np
import pytest
from autograd_oracle import autograd_twin, check_against_twin

import srcgrad
from srcgrad.testing import check_grads

X = np.array([0.3, -0.5, 1.2])
PARAMS = {"w": np.array([0.5, -0.2, 0.1]), "b": 0.7}
MODES = ("reverse", "forward")


def over_a_range(x):
    d = {k: x[k] * 2 for k in range(3)}
    return d[0] + d[2] * d[1]


def with_a_condition_and_formatted_keys(x):
    d = {f"w{k}": x[k] ** 2 for k in range(3) if k != 1}
    total = 0.0
    for value in d.values():
        total = total + np.sin(value)
    return total * d["w2"]


def over_a_list_of_constants(x):
    d = {name: x[i] * s for name, i, s in [("a", 0, 1.0), ("b", 2, 3.0)]}
    return np.tanh(d["a"] * d["b"])


def a_key_twice(x):
    d = {k % 2: x[k] * (k + 1) for k in range(3)}  # (2 overwrites 0, in 0's place)
    return d[0] * np.exp(d[1])


def nested_loops_and_arrays(x):
    d = {(i, j): np.sum(x[i:] * x[j]) for i in range(2) for j in range(i + 1)}
    return d[(0, 0)] * d[(1, 0)] + d[(1, 1)] ** 2


def membership_in_a_set_of_constants(x):
    total = 0.0
    chosen = {k % 2 for k in range(5)}
    for i in range(3):
        if i in {1, 2}:
            total = total + x[i] ** 2
        if i not in chosen:
            total = total + np.sin(x[i]) * len(chosen)
    return total


FUNCTIONS = [
    over_a_range,
    with_a_condition_and_formatted_keys,
    over_a_list_of_constants,
    a_key_twice,
    nested_loops_and_arrays,
    membership_in_a_set_of_constants,
]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_written_out_as_autograd_runs_it(f):
    check_against_twin(f, X)
    check_grads(f, (X,), order=2)


def over_a_dict_argument(params, x):
    scaled = {name: w * 2 for name, w in params.items()}
    return np.sum(np.sin(scaled["w"] * x)) + scaled["b"] ** 2


def over_its_keys(params, x):
    doubled = {k: params[k] * x[0] for k in params if k != "b"}
    return np.sum(doubled["w"] ** 2)


@pytest.mark.parametrize("f", [over_a_dict_argument, over_its_keys], ids=lambda f: f.__name__)
def test_over_a_dict_argument(f):
    twin = autograd_twin(f)
    expected = autograd.grad(twin, (0, 1))(PARAMS, X)
    for mode in MODES:
        got = srcgrad.grad(f, wrt=(0, 1), mode=mode)(PARAMS, X)
        assert got[0].keys() == expected[0].keys()
        for key in expected[0]:
            np.testing.assert_allclose(got[0][key], expected[0][key], rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-10)
    hessian = autograd.hessian(twin, 1)(PARAMS, X)
    np.testing.assert_allclose(srcgrad.hessian(f, wrt=1)(PARAMS, X), hessian, rtol=1e-9)


def test_the_generated_code_reads_a_variable_per_key():
    derivative = srcgrad.jvp(over_a_dict_argument)
    derivative(PARAMS, X, PARAMS)
    source = derivative.source
    assert "scaled_w = params['w'] * 2" in source, source
    assert "scaled_b_dot = params_dot['b'] * 2" in source, source
    code = source.split("def jvp_over_a_dict_argument")[1].splitlines()
    assert not any("for " in line for line in code if not line.strip().startswith("#")), source
    derivative = srcgrad.jvp(membership_in_a_set_of_constants)
    derivative(X, X)
    assert "in (1, 2)" in derivative.source and "chosen = (0, 1)" in derivative.source


def test_the_users_dicts_are_left_as_they_are():
    params = {"w": PARAMS["w"].copy(), "b": 0.7}
    srcgrad.grad(over_a_dict_argument)(params, X)
    assert params.keys() == PARAMS.keys() and params["b"] == 0.7
    np.testing.assert_array_equal(params["w"], PARAMS["w"])


def over_an_array(x):
    d = {k: v for k, v in x.items()}
    return np.sum(d[0])


def a_key_computed(x):
    d = {x[k]: k for k in range(2)}
    return np.sum(x) * len(d)


def a_condition_computed(x):
    d = {k: x[k] for k in range(3) if x[k] > 0}
    return d[0]


def over_enumerate(x):
    d = {k: v for k, v in enumerate(x)}
    return d[0] * 2.0


def a_set_of_values(x):
    s = {x[0], x[1]}
    return x[0] * len(s)


def a_set_comprehension_of_values(x):
    return sum({v * 2.0 for v in x})


def a_set_of_constants_combined(x):
    s = {1, 2}
    return x[0] * len(s | {3})


@pytest.mark.parametrize(
    "f, match",
    [
        (over_an_array, r"d = \{k: v for k, v in x.items\(\)\}\n.*`x` to be a dict"),
        (a_key_computed, r"\{x\[k\]: k for.*\n.*needs each key known"),
        (a_condition_computed, r"if x\[k\] > 0\}\n.*needs each condition known"),
        (over_enumerate, r"enumerate\(x\)\}\n.*`enumerate\(x\)` is none of these"),
        (a_set_of_values, r"s = \{x\[0\], x\[1\]\}\n.*a set holds each value once"),
        (a_set_comprehension_of_values, r"for v in x\}\)\n.*merges equal values"),
        (a_set_of_constants_combined, r"len\(s \| \{3\}\)\n.*`s` is used otherwise"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.parametrize("mode", MODES)
def test_what_is_refused_at_the_users_line(f, match, mode):
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=match) as info:
        srcgrad.grad(f, mode=mode)(X)
    assert f"{__file__}:" in str(info.value)
