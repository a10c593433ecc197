"""Every error is clear: the right class, and the user's file, line and code.

The functions below each hold one construct srcgrad rejects. Each test looks
up the line of the offending construct in this file and checks the error
names this file, that line number and the text of that line.
"""

import inspect
import math
import re
import warnings

import numpy as np
import pytest

import srcgrad

THIS_FILE = __file__

# -- functions with unsupported constructs -------------------------------------------------


def with_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return y


def with_with(x):
    with warnings.catch_warnings():  # (np.errstate is kept: test_errstate.py)
        y = x * 2.0
    return y


def with_yield(x):
    y = yield x
    return y


def with_yield_statement(x):
    yield x * 2.0


G = 2.0


def with_global(x):
    global G
    return x * G


def make_with_nonlocal():
    c = 1.0

    def with_nonlocal(x):
        nonlocal c
        return x * c

    return with_nonlocal


with_nonlocal = make_with_nonlocal()


def with_del(x):
    y = x * 2.0
    del y
    return x


def with_nested_def(x):
    if x[0] > 0:  # (one at the top level is written out: test_nested_functions.py)

        def inner(z):
            return z * 2.0

        return inner(x)
    return x * 3.0


def with_set_comprehension(x):
    y = sum({v * 2.0 for v in x})  # (list comprehensions are lowered to loops)
    return y


def with_subscript_assignment(x):
    x[0] = 1.0
    return np.sum(x)


def with_subscript_augmented_assignment(x):
    y = x[1:]
    y[0] += 1.0
    return np.sum(y)


def helper(z):
    return z * 2.0


def with_helper_call(x):
    y = helper(x)
    return np.sum(y)


def helper_inline(x):
    return np.sum(x * 2.0)


def with_helper_call_inactive(x, c):
    y = helper(c)
    return np.sum(x * y)


# -- functions with calls that have no derivative ------------------------------------------


def with_i0(x):
    y = np.i0(x)
    return np.sum(y)


def with_unwrap(x):
    y = np.sum(np.unwrap(x) * 2.0)
    return y


def with_i0_of_inactive(x, c):
    y = x * np.i0(c)
    return np.sum(y)


# -- functions for argument errors ---------------------------------------------------------


def two_args(x, y):
    return np.sum(x * y)


def vector_out(x):
    return x * 2.0


def reshaped(x, shape):
    y = np.reshape(x, shape)
    return y


def sum_of_squares(x):
    return np.sum(x * x)


# -- helpers -------------------------------------------------------------------------------


def line_of(func, snippet):
    """The line number, in this file, of the first line of ``func`` containing ``snippet``."""
    lines, start = inspect.getsourcelines(func)
    for k, line in enumerate(lines):
        if snippet in line:
            return start + k
    raise LookupError(f"{snippet!r} is not in {func.__name__}")


def assert_points_at(error, func, snippet):
    """``error`` names this file, the line of ``snippet`` in ``func``, and its text."""
    lineno = line_of(func, snippet)
    text = str(error)
    assert isinstance(error, srcgrad.SrcgradError)
    assert THIS_FILE in text, text
    assert f"{THIS_FILE}:{lineno}" in text, text
    assert snippet in text, text
    assert error.lineno == lineno
    assert error.filename == THIS_FILE


def call(kind, func, *args):
    """Apply transformation ``kind`` to ``func`` and call it on ``args`` (ones as tangents)."""
    if kind == "jvp":
        return srcgrad.jvp(func)(*args, *[np.ones_like(args[0])])
    if kind == "vjp":
        return srcgrad.vjp(func)(*args, np.ones_like(args[0]))
    return getattr(srcgrad, kind)(func)(*args)


X = np.array([1.0, 2.0, 3.0])

UNSUPPORTED = [
    (with_try, "try:", r"\btry\b"),
    (with_with, "with warnings.catch_warnings():", r"\bwith\b"),
    (with_yield, "y = yield x", r"generator|yield"),
    pytest.param(
        with_yield_statement,
        "yield x * 2.0",
        r"generator|yield",
    ),
    (with_global, "global G", r"\bglobal\b"),
    (with_nonlocal, "nonlocal c", r"\bnonlocal\b"),
    (with_del, "del y", r"\bdel\b"),
    pytest.param(
        with_nested_def,
        "def inner(z):",
        r"nested|def",
    ),
    (with_set_comprehension, "{v * 2.0 for v in x}", r"comprehension"),
    (with_subscript_assignment, "x[0] = 1.0", r"number here"),  # (x is 1.5)
    (with_subscript_augmented_assignment, "y[0] += 1.0", r"copy"),
]


# -- UnsupportedSyntaxError ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["grad", "jvp"])
@pytest.mark.parametrize("func, snippet, what", UNSUPPORTED)
def test_unsupported_syntax_names_file_line_and_code(func, snippet, what, kind):
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        call(kind, func, 1.5)
    assert_points_at(info.value, func, snippet)
    assert re.search(what, info.value.message, re.I), info.value.message


def test_unsupported_syntax_error_is_a_srcgrad_error():
    assert issubclass(srcgrad.UnsupportedSyntaxError, srcgrad.SrcgradError)
    assert issubclass(srcgrad.NoDerivativeError, srcgrad.SrcgradError)
    assert issubclass(srcgrad.SrcgradError, Exception)


def test_unsupported_syntax_message_says_what_to_do_instead():
    with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
        srcgrad.grad(with_set_comprehension)(X)
    assert "vectorised" in info.value.message


def test_helper_call_on_active_values_is_differentiated():
    np.testing.assert_allclose(srcgrad.grad(with_helper_call)(X), srcgrad.grad(helper_inline)(X))


def test_helper_call_on_inactive_values_is_fine():
    c = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(srcgrad.grad(with_helper_call_inactive)(X, c), 2.0 * c)


def test_error_in_every_mode():
    for kind in ("grad", "value_and_grad", "vjp"):
        with pytest.raises(srcgrad.UnsupportedSyntaxError) as info:
            call(kind, with_try, X)
        assert_points_at(info.value, with_try, "try:")
    with pytest.raises(srcgrad.UnsupportedSyntaxError):
        srcgrad.grad(with_try, mode="forward")(X)


# -- NoDerivativeError ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["grad", "jvp", "vjp"])
@pytest.mark.parametrize(
    "func, snippet, name",
    [(with_i0, "y = np.i0(x)", "i0"), (with_unwrap, "np.unwrap(x)", "unwrap")],
)
def test_no_derivative_error(func, snippet, name, kind):
    with pytest.raises(srcgrad.NoDerivativeError) as info:
        call(kind, func, X)
    assert_points_at(info.value, func, snippet)
    assert name in info.value.message
    assert "srcgrad.primitive" in info.value.message


def test_function_without_rule_is_fine_on_inactive_values():
    c = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(srcgrad.grad(with_i0_of_inactive)(X, c), np.i0(c))


# -- ValueError for wrt --------------------------------------------------------------------


@pytest.mark.parametrize("wrt", [2, -3, 10, (0, 2), (1, -5)])
def test_wrt_out_of_range(wrt):
    with pytest.raises(ValueError, match="out of range") as info:
        srcgrad.grad(two_args, wrt=wrt)(X, X)
    assert "two_args" in str(info.value)


@pytest.mark.parametrize("wrt", ["z", ("x", "nope"), "X"])
def test_wrt_unknown_name(wrt):
    with pytest.raises(ValueError) as info:
        srcgrad.grad(two_args, wrt=wrt)(X, X)
    text = str(info.value)
    assert "not a parameter" in text
    assert "'x'" in text and "'y'" in text  # it lists the parameters there are


@pytest.mark.parametrize("transform", [srcgrad.jvp, srcgrad.vjp, srcgrad.value_and_grad])
def test_wrt_errors_for_every_transformation(transform):
    with pytest.raises(ValueError):
        transform(two_args, wrt=2)(X, X)
    with pytest.raises(ValueError):
        transform(two_args, wrt="q")(X, X)


def test_wrt_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="wrt"):
        srcgrad.grad(two_args, wrt=1.0)(X, X)


# -- ValueError for grad of a non-scalar ---------------------------------------------------


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("kind", ["grad", "value_and_grad"])
def test_grad_of_array_output_with_rank_known_statically(kind, mode):
    with pytest.raises(ValueError) as info:
        getattr(srcgrad, kind)(vector_out, mode=mode)(X)
    text = str(info.value)
    assert "scalar" in text
    assert "vjp" in text or "jacobian" in text


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_grad_of_array_output_with_rank_known_only_at_run_time(mode):
    with pytest.raises(ValueError) as info:
        srcgrad.grad(reshaped, mode=mode)(np.arange(4.0), (2, 2))
    text = str(info.value)
    assert "scalar" in text
    assert "(2, 2)" in text
    assert "vjp" in text or "jacobian" in text


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_grad_of_run_time_scalar_is_fine(mode):
    g = srcgrad.grad(reshaped, mode=mode)(np.array([2.0]), ())
    np.testing.assert_allclose(g, [1.0])


def test_vjp_of_array_output_is_fine():
    np.testing.assert_allclose(srcgrad.vjp(vector_out)(X, np.ones(3)), [2.0, 2.0, 2.0])


def square(x):
    return x * x


def test_vjp_with_cotangent_of_the_wrong_shape_is_a_value_error():
    with pytest.raises(ValueError) as info:
        srcgrad.vjp(square)(X, np.ones((2, 3)))
    assert "shape" in str(info.value)


def test_vjp_with_cotangent_that_does_not_broadcast_is_a_value_error():
    with pytest.raises(ValueError):
        srcgrad.vjp(square)(X, np.ones(4))


def test_missing_tangent_or_cotangent_is_a_type_error():
    with pytest.raises(TypeError, match="tangent"):
        srcgrad.jvp(two_args, wrt=(0, 1))(X)
    with pytest.raises(TypeError):
        srcgrad.vjp(two_args)()


# -- TypeError for arguments that cannot be differentiated ---------------------------------


@pytest.mark.parametrize(
    "value",
    [
        3,
        np.int64(3),
        np.array([1, 2, 3]),
        np.array([1, 2], dtype=np.uint8),
        np.array([True, False]),
        pytest.param(
            True,
        ),
        pytest.param(
            np.bool_(False),
        ),
    ],
    ids=["int", "np.int64", "int-array", "uint8-array", "bool-array", "bool", "np.bool_"],
)
@pytest.mark.parametrize("kind", ["grad", "value_and_grad", "jvp", "vjp"])
def test_non_float_wrt_argument_is_a_type_error_suggesting_float(value, kind):
    with pytest.raises(TypeError) as info:
        call(kind, sum_of_squares, value)
    text = str(info.value)
    assert "float" in text, text
    assert "'x'" in text


def test_non_float_wrt_argument_in_forward_mode():
    with pytest.raises(TypeError, match="float"):
        srcgrad.grad(sum_of_squares, mode="forward")(np.array([1, 2]))


# -- TypeError for functions without source ------------------------------------------------


@pytest.mark.parametrize(
    "func",
    [
        pytest.param(np.sin),
        pytest.param(math.sin),
        pytest.param(len),
        pytest.param(max),
    ],
    ids=["np.sin", "math.sin", "len", "max"],
)
def test_builtin_is_a_clear_type_error(func):
    with pytest.raises(TypeError) as info:
        srcgrad.grad(func)(1.5)
    assert "source" in str(info.value)


def test_builtin_is_a_type_error_not_a_crash():
    # whatever the message, transforming np.sin must fail with TypeError
    with pytest.raises(TypeError):
        srcgrad.grad(np.sin)(1.5)


def test_function_made_with_exec_is_a_clear_type_error():
    namespace = {"np": np}
    exec("def made_by_exec(x):\n    return np.sum(x * 2.0)\n", namespace)
    with pytest.raises(TypeError) as info:
        srcgrad.grad(namespace["made_by_exec"])(X)
    text = str(info.value)
    assert "source" in text and "made_by_exec" in text


def test_not_a_function_is_a_type_error():
    with pytest.raises(TypeError):
        srcgrad.grad(3.0)
    with pytest.raises(TypeError):
        srcgrad.show(sum_of_squares)


# -- no internal errors leak ---------------------------------------------------------------


INTERNAL = (KeyError, AttributeError, AssertionError, IndexError, NameError)

ALL_BAD = [
    with_try,
    with_with,
    with_yield,
    with_yield_statement,
    with_global,
    with_nonlocal,
    with_del,
    with_nested_def,
    with_set_comprehension,
    with_subscript_augmented_assignment,  # (into a view of the argument)
    with_i0,
    with_unwrap,
]


@pytest.mark.parametrize("kind", ["grad", "jvp", "vjp", "value_and_grad"])
@pytest.mark.parametrize("func", ALL_BAD, ids=[f.__name__ for f in ALL_BAD])
def test_errors_are_srcgrad_errors_not_internal_ones(func, kind):
    with pytest.raises(Exception) as info:
        call(kind, func, X)
    assert not isinstance(info.value, INTERNAL), repr(info.value)
    assert isinstance(info.value, srcgrad.SrcgradError)
    assert THIS_FILE in str(info.value)
