"""User-style numpy functions with control flow, for ``test_control_flow.py``.

Every function here is written the way a user would write it: plain Python
control flow (if/elif/else, conditional expressions, and/or/not, chained
comparisons, for over ranges/arrays/enumerate/zip/reversed, while, break,
continue, for-else/while-else, early return, tuple targets) around numpy
arithmetic. ``CASES`` lists each with input points chosen so that different
branches are taken and loops run different numbers of times, and so that
every point is far (relative to finite-difference steps) from a branch
boundary, where the function has a kink or a jump.
"""

# ruff: noqa: B007  (user-style code: loop variables that the body does not use)

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

_RNG = np.random.default_rng(20240607)


def _arr(*shape: int, scale: float = 1.0) -> np.ndarray:
    return _RNG.standard_normal(shape) * scale


def _pos(*shape: int, low: float = 0.5, high: float = 2.0) -> np.ndarray:
    return _RNG.uniform(low, high, shape)


# -- if / elif / else ----------------------------------------------------------------------


def if_scalar(x):
    if x > 0:
        y = x * x
    else:
        y = -3.0 * x
    return y


def if_array_sum(x):
    if np.sum(x) > 0:
        y = np.sin(x) * x
    else:
        y = np.exp(x)
    return np.sum(y)


def if_elif_else(x):
    s = np.sum(x)
    if s > 1.0:
        y = s * s
    elif s > -1.0:
        y = np.sum(np.tanh(x))
    else:
        y = -s
    return y


def if_no_else(x):
    y = x * 2.0
    if np.mean(x) < 0:
        y = y * y
    return np.sum(y)


def if_nested(x, w):
    a = np.sum(x * w)
    if a > 0:
        if np.sum(w) > 0:
            r = a * np.sum(w)
        else:
            r = a - np.sum(w * w)
    else:
        if x[0] > 0:
            r = np.sum(np.sin(x)) * a
        else:
            r = np.sum(x * x) + a
    return r


def assigned_in_one_branch(x):
    out = np.sum(x)
    if x[0] > x[1]:
        d = x[0] - x[1]
        out = out + d * d
    return out


def branch_uses_own_temp(x, w):
    total = np.sum(w * x)
    if np.sum(x) > 0:
        z = np.tanh(x @ w)
        q = z * z
        total = total + q
    else:
        u = np.exp(-x)
        total = total * np.sum(u * w)
    return total


def if_element_compare(x):
    if x[0] > x[1]:
        y = x[0] * np.sum(x)
    else:
        y = x[1] * np.sum(x * x)
    return y


def if_on_param_int(x, n):
    if n % 2 == 0:
        y = np.sum(np.sin(x))
    else:
        y = np.sum(np.cos(x))
    return y * n


def if_reassign_twice(x):
    y = np.sum(x)
    if y > 0:
        y = y * 2.0
        y = np.sin(y)
        y = y + np.sum(x * x)
    return y


def if_many_outputs(x):
    a = x[0]
    b = x[1]
    if a < b:
        a = a * b
        b = b - 1.0
    else:
        a = a + 1.0
        b = b * a
    return a * b + np.sum(x)


# -- conditional expressions, and/or/not, comparisons -----------------------------------------


def ifexp_value(x):
    y = np.sin(x) if np.sum(x) > 0 else np.cos(x) * x
    return np.sum(y)


def ifexp_nested(x):
    s = np.sum(x)
    y = s * s if s > 1.0 else (np.exp(s) if s < -1.0 else s * 3.0)
    return y


def ifexp_in_expr(x, w):
    return np.sum(x * (w if np.sum(w) > 0 else -w) + (1.0 if x[0] > 0 else 2.0) * w)


def and_or_not(x, y):
    if (x[0] > 0 and y[0] < 1.0) or not np.sum(x) > -1.0:
        r = np.sum(x * y)
    else:
        r = np.sum(x + y * y)
    return r


def not_condition(x):
    big = np.sum(x) > 0
    if not big:
        r = np.sum(x * x)
    else:
        r = np.sum(np.sin(x))
    return r


def bool_flags_combined(x):
    p = x[0] > 0
    q = x[1] > 0
    if p and not q:
        r = x[0] * x[1]
    elif p or q:
        r = x[0] + x[1] * x[1]
    else:
        r = -x[0] * 2.0
    return r


def chained_comparison(x):
    s = np.sum(x)
    if -1.0 < s < 1.0:
        y = s * s * s
    else:
        y = s * 0.5
    return y


def chained_three(x):
    if x[0] < x[1] < x[2]:
        y = np.sum(x * x)
    else:
        y = np.sum(np.exp(x))
    return y


def or_value_scalar(x):
    # x is a Python float; `a and b` / `a or b` pick one operand as the value
    a = x * 2.0
    b = x * x + 1.0
    c = (x > 0 and a) or b
    return c * x


# -- for loops ------------------------------------------------------------------------------


def for_range_accumulate(x):
    s = 0.0
    for i in range(4):
        s = s + np.sum(x * i) + np.sum(np.sin(x * s))
    return s


def for_range_data_bound(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) + x * i
    return np.sum(y)


def for_range_start_stop_step(x, start, stop, step):
    s = np.sum(x) * 0.0
    for i in range(start, stop, step):
        s = s + x[i] * x[i] * i
    return s


def for_range_from_active_shape(x):
    s = 1.0
    for i in range(x.shape[0]):
        s = s * (1.0 + x[i] * 0.5)
    return s


def for_rows(X, w):
    s = 0.0
    for row in X:
        s = s + np.tanh(np.sum(row * w))
    return s


def for_enumerate(X):
    s = 0.0
    for i, row in enumerate(X):
        s = s + (i + 1) * np.sum(row * row)
    return s


def for_zip(X, Y):
    s = 0.0
    for a, b in zip(X, Y):
        s = s + np.sum(a * np.sin(b))
    return s


def for_enumerate_zip(X, Y):
    s = 0.0
    for i, (a, b) in enumerate(zip(X, Y)):
        s = s + i * np.sum(a * b) + np.sum(a)
    return s


def for_reversed_array(X):
    h = X[0] * 0.0
    for row in reversed(X):
        h = np.tanh(h * 0.5 + row)
    return np.sum(h * h)


def for_reversed_range_neg_step(x, a, b, s):
    acc = 1.0
    for i in reversed(range(a, b, s)):
        acc = acc * x[i] + i
    return acc


def for_range_negative_step(x):
    acc = 0.0
    for i in range(x.shape[0] - 1, -1, -2):
        acc = acc * 0.5 + x[i] * x[i]
    return acc


def for_nested(A, x):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s = s + A[i, j] * x[j] * (i + 1)
    return s


def for_nested_carried(x):
    y = x
    for i in range(2):
        for j in range(3):
            y = np.sin(y) * (1.0 + 0.1 * j) + x * i
    return np.sum(y)


def for_index_parity(x):
    s = 0.0
    for i in range(x.shape[0]):
        if i % 2 == 0:
            s = s + x[i] * x[i]
        else:
            s = s - np.sin(x[i])
    return s


def for_branch_on_carried(x):
    s = 0.5
    for i in range(x.shape[0]):
        if s > 1.0:
            s = s * 0.5
        else:
            s = s + x[i] * x[i]
    return s


def for_reassign_in_body(x):
    for i in range(3):
        x = x * 2.0
        x = np.sin(x)
        x = x + 0.1 * i
    return np.sum(x)


def for_swap_tuple(x, y):
    a = x
    b = y
    for i in range(3):
        a, b = b, a * 0.5 + b
    return np.sum(a * b)


def fibonacci_like(x):
    a, b = x, x * 0.5
    for _ in range(5):
        a, b = b, a + np.sin(b)
    return np.sum(b)


def matrix_power_loop(A):
    P = A
    for _ in range(3):
        P = P @ A
    return np.sum(P)


def for_zero_trips(x, n):
    y = x * 1.5
    for i in range(n):
        y = y * y
    return np.sum(y)


def for_else(x):
    s = 0.0
    for i in range(3):
        s = s + x[i]
    else:
        s = s * s
    return s


def for_else_with_break(x):
    s = 0.0
    for v in x:
        if v > 1.0:
            break
        s = s + v * v
    else:
        s = s * 10.0
    return s


# -- break / continue ------------------------------------------------------------------------


def for_break(x, thr):
    s = 0.0
    for i in range(x.shape[0]):
        if s > thr:
            break
        s = s + x[i] * x[i]
    return s


def for_break_on_element(x):
    p = 1.0
    for v in x:
        if v < 0:
            break
        p = p * v
    return p


def for_continue(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s = s + np.sin(v) * v
    return s


def for_continue_and_break(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            continue
        if s > 2.0:
            break
        s = s + x[i] * 1.5
    return s


def while_continue(x):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        v = x[i]
        i = i + 1
        if v < 0:
            continue
        s = s + v * v
    return s


def nested_inner_break(X):
    s = 0.0
    for row in X:
        for v in row:
            if v > 1.0:
                break
            s = s + v
        s = s * 0.9
    return s


# -- while ----------------------------------------------------------------------------------


def while_halving(x):
    while x > 0.1:
        x = x * 0.5
    return x * x


def while_array_norm(x):
    while np.sum(x * x) > 1.0:
        x = x * 0.7
    return np.sum(np.sin(x))


def while_counter(x):
    n = 0
    y = x
    while n < 3:
        y = np.tanh(y) + x
        n = n + 1
    return np.sum(y)


def while_break(x):
    s = x * 0.0
    k = 0
    while True:
        s = s + np.cos(x) * k
        k += 1
        if np.sum(s) > 1.5 or k > 6:
            break
    return np.sum(s * s)


def while_else(x):
    y = x
    while y > 2.0:
        y = np.sqrt(y)
    else:
        y = y * 3.0
    return y


def while_else_break(x):
    y = x
    n = 0
    while n < 5:
        y = y * 1.5
        n += 1
        if y > 4.0:
            break
    else:
        y = y - 100.0
    return y * y


def newton_sqrt(a):
    y = a
    while np.abs(y * y - a) > 1e-13 * a:
        y = y - (y * y - a) / (2.0 * y)
    return y


def newton_cubic(c):
    # solve y**3 + y = c elementwise, to a tolerance on the whole array
    y = c * 0.0
    r = y * y * y + y - c
    while np.max(np.abs(r)) > 1e-13:
        y = y - r / (3.0 * y * y + 1.0)
        r = y * y * y + y - c
    return np.sum(y * y)


def euler_scalar(x0, k):
    x = x0
    t = 0.0
    dt = 0.05
    for i in range(20):
        x = x + dt * (-k * x + np.sin(t))
        t = t + dt
    return x


def euler_until(x0, k):
    # integrate until time 1 with a while loop on Python floats
    x = x0
    t = 0.0
    while t < 1.0 - 1e-9:
        x = x + 0.1 * (-k * x * x + 1.0)
        t = t + 0.1
    return x


def while_in_for_break(x):
    s = 0.0
    for i in range(x.shape[0]):
        y = x[i] * x[i] + 1.0
        while y > 0.2:
            y = y * 0.5
            if y < 0.4:
                break
        s = s + y
    return s


def for_in_while(x):
    s = x * 1.0
    n = 0
    while np.sum(s * s) < 20.0:
        for j in range(2):
            s = s * 1.3 + np.cos(s) * 0.1
        n = n + 1
    return np.sum(s) + n


# -- early return ------------------------------------------------------------------------------


def early_return_branch(x):
    s = np.sum(x)
    if s > 0:
        return s * s
    return np.sum(np.exp(x))


def early_return_elif(x):
    if x[0] > 1.0:
        return x[0] * 2.0
    elif x[0] > -1.0:
        y = np.sin(x[0])
        return y * x[1]
    return x[1] * x[1]


def early_return_in_loop(x):
    s = 0.0
    for v in x:
        s = s + v * v
        if s > 2.0:
            return s * 10.0
    return s


def early_return_nested_loops(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            s = s + X[i, j] * X[i, j]
            if s > 3.0:
                return s * (i + j + 1)
        s = s * 0.5
    return -s


def early_return_in_while(x, n):
    y = x
    k = 0
    while k < n:
        y = np.sin(y) + 1.0
        if y > 1.8:
            return y * k
        k = k + 1
    return y


def early_return_for_else(x):
    for v in x:
        if v > 2.0:
            return v * v
    else:
        r = np.sum(np.sin(x))
    return r


# -- bigger programs ---------------------------------------------------------------------------


def rnn(Wh, Wx, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx)
    return np.sum(h * h)


def rnn_enumerate(Wh, Wx, xs, h0):
    h = h0
    total = 0.0
    for t, x in enumerate(xs):
        h = np.tanh(h @ Wh + x @ Wx)
        total = total + np.sum(h) * (t + 1)
    return total


def gradient_descent(x, A):
    # ten steps of gradient descent on 0.5 x^T A x, stopping at a small gradient
    for k in range(10):
        g = A @ x
        if np.sum(g * g) < 1e-3:
            break
        x = x - 0.1 * g
    return np.sum(x * x)


def piecewise_loop(x):
    # a piecewise function applied in a loop: the branch taken varies per element
    s = 0.0
    for v in x:
        if v < -1.0:
            y = -v - 0.5
        elif v < 1.0:
            y = 0.5 * v * v
        else:
            y = v - 0.5
        s = s + y
    return s


def bisect_then_refine(a):
    # a loop whose trip count depends on data, then a loop over the result
    hi = a
    n = 0
    while hi > 1.0:
        hi = hi * 0.5
        n = n + 1
    y = hi
    for _ in range(n):
        y = y * y + hi
    return y


# -- more iteration patterns ------------------------------------------------------------------


def enumerate_reversed(X):
    s = 0.0
    for i, row in enumerate(reversed(X)):
        s = s + (i + 1) * np.sum(np.sin(row))
    return s


def zip_three(X, Y, Z):
    s = 0.0
    for a, b, c in zip(X, Y, Z):
        s = s + np.sum(a * b - c * c)
    return s


def enumerate_range(x):
    s = 0.0
    for k, i in enumerate(range(1, 5, 2)):
        s = s + x[i] * (k + 1)
    return s


def zip_with_range(X):
    s = 0.0
    for i, row in zip(range(10), X):
        s = s + i * np.sum(row * row)
    return s


def index_after_loop(x):
    s = 0.0
    for i in range(3):
        s = s + x * i
    return s * i


def int_of_active_bound(x):
    s = x * 0.0
    for i in range(int(x[0] * 3.0)):
        s = s + np.sin(x) * i
    return np.sum(s)


def while_augmented(x):
    i = 0
    s = 0.0
    while i < len(x):
        s += x[i] * x[i]
        i += 1
    return s


def ifexp_in_loop(x):
    for i in range(3):
        x = x * 2.0 if np.sum(x) < 2.0 else x - 1.0
    return np.sum(x * x)


def ifexp_carried(x):
    y = x
    for i in range(3):
        y = np.sin(y) if i % 2 == 0 else y * y
    return np.sum(y)


def bool_param(x, flag):
    if flag:
        y = x * x
    else:
        y = x
    return np.sum(y)


def break_in_elif(x):
    s = 0.0
    for v in x:
        if v > 5.0:
            s = s + 1.0
        elif v < 0:
            break
        else:
            s = s + v * v
    return s


def triple_loop(A):
    s = 0.0
    for i in range(2):
        for j in range(2):
            for k in range(2):
                s = s + A[i, j] * A[j, k] * (k + 1)
    return s


def swap_with_new_values(x, y):
    for i in range(2):
        x, y = y * 0.5, x + y
    return np.sum(x * y)


def return_both_branches(x):
    if np.sum(x) > 0:
        return np.sum(x * x)
    else:
        return np.sum(np.sin(x))


def return_in_while_else(x):
    y = x
    while y > 2.0:
        y = y * 0.5
    else:
        return y * y
    return y


def rnn_float32(W, xs):
    h = xs[0] * 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def branch_on_loop_index(x):
    y = x
    for i in range(4):
        if i > 1:
            y = y * x
    return np.sum(y)


def continue_nested(X):
    s = 0.0
    for row in X:
        for v in row:
            if v < 0:
                continue
            s = s + v * v
    return s


def while_true_continue_break(x):
    i = 0
    s = 0.0
    while True:
        i = i + 1
        if i > 4:
            break
        if i % 2 == 0:
            continue
        s = s + x * i
    return s


def early_return_then_loop(x):
    if x > 0:
        return x
    y = x * x
    for i in range(2):
        y = y * x
    return y


def one_branch_in_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            d = x[i] * 2.0
            s = s + d * d
    return s


def loop_then_branch(x):
    s = 0.0
    for v in x:
        s = s + v
    if s > 0:
        r = s * s
    else:
        r = -s
    return r


def while_with_branches(x):
    k = 0
    while k < 3:
        if x > 1.0:
            x = x * 0.5
        else:
            x = x * x + 0.2
        k = k + 1
    return x


def shrinking_slices(x):
    s = 0.0
    for i in range(3):
        x = x[1:] * 2.0
        s = s + np.sum(x * x)
    return s


def scalar_becomes_array(X):
    s = 0.0
    for row in X:
        s = s * 0.5 + row * row
    return np.sum(s)


def sliding_window(x):
    s = 0.0
    for i in range(x.shape[0] - 2):
        w = x[i : i + 3]
        s = s + np.sum(w * w) * np.sum(w)
    return s


def while_shrinking(x):
    while x.shape[0] > 1:
        x = x[1:] * x[:-1]
    return np.sum(x)


def power_iteration(A, x):
    y = x
    for i in range(3):
        y = A @ y
        y = y / np.sqrt(np.sum(y * y))
    return y[0]


def where_in_loop(x):
    for i in range(3):
        x = np.where(x > 0, x * 0.5, x * x)
    return np.sum(x)


def compare_with_previous(x):
    prev = x[0]
    s = 0.0
    for i in range(1, x.shape[0]):
        if x[i] > prev:
            s = s + (x[i] - prev) * x[i]
        prev = x[i]
    return s


# -- functions that showed srcgrad bugs, now fixed (see test_bug_* in test_control_flow.py) ---


def rotate_three(x, y, z):
    a, b, c = x, y, z
    for _ in range(2):
        a, b, c = b, c * 2.0, a
    return np.sum(a * b + c)


def nested_while(x):
    i = 0
    s = x
    while i < 2:
        j = 0
        while j < 2:
            s = np.sin(s) + 0.1 * j
            j = j + 1
        i = i + 1
    return np.sum(s)


def for_else_in_for(X):
    s = 0.0
    for row in X:
        for v in row:
            if v < -1.0:
                break
            s = s + v
        else:
            s = s * 1.5
    return s


# -- the corpus ------------------------------------------------------------------------------


# -- found by the random-program tests ---------------------------------------------------


def inactive_parameter_reassigned(x, y):
    """``x`` is not differentiated, but a branch gives it a value that depends on ``y``."""
    if np.sum(y) > 0.0:
        x = np.sin(y)
    return np.sum(x * y)


def overwritten_after_loop(y):
    """``a`` is assigned twice in one block (the second time after a for-else)."""
    a = 0.5 * y
    for i in range(1, 3):
        b = 1.0
    else:
        a = -y
    return np.sum(a) + b


def reassigned_in_loop_body(x):
    """A name assigned twice in a loop body, read between the two assignments."""
    s = 0.0
    for i in range(3):
        a = x * 2.0
        b = a * a
        a = np.sin(x)
        s = s + a + b
    return np.sum(s)


def integer_argument_same_shape(x, y, n):
    """``n`` (an int) has the shape of a scalar temporary: its dtype must not leak."""
    a = 0.5 * y
    if np.mean(a) > 0.25:
        x = np.tanh(a @ x * a)
    return np.sum(np.tanh(np.sum(x) ** 3)) * n


def copy_in_a_branch(x, s, n):
    """``w0`` has the shape of ``a`` but is bound only when ``n > 2``: the adjoint must
    not read shapes off it."""
    a = np.sin(x)
    if n > 2:
        w0 = a.copy()  # noqa: F841 (read by nothing: the point of the case)
    for i in range(2):
        if np.sum(a) > -5.0:
            a = a * np.cos(a)
        a = s * a
    return np.sum(a * a)


def break_and_continue_in_for_else(x, y):
    """``break`` and ``continue`` in a for loop's ``else`` act on the loop around it."""
    k0 = 0
    s = x * 1.0
    while k0 < 3:
        k0 += 1
        for i1 in range(2):
            s = s * np.cos(y)
            if np.sum(y) < 0.5:
                continue
        else:
            s = s + 1.0
            if np.sum(s) > 10.0:
                break
            if np.sum(y) > 0.2:
                continue
        s = s * 1.1
    return np.sum(s * y)


def parameter_reassigned_in_nested_while(x, y, s):
    """``y`` is read (through ``-y``) before the loop reassigns it: on the first trip it
    is the argument, so its shape cannot be taken from what the loop assigns to it."""
    d = np.tanh(x)
    k0 = 0
    while (np.sum(s) <= 0.0) and k0 < 1:
        k0 = k0 + 1
        k1 = 0
        while k1 < 4:
            k1 = k1 + 1
            x = (-y) / (1.0 + (x / (1.0 + s * s)) * (x / (1.0 + s * s)))
            y = np.log(1.0 + (0.25 + x) * (0.25 + x))
        x = x / (1.0 + d * d)
    return np.mean(-x)


def parameter_reassigned_in_loop_from_invariants(x, y):
    # every trip gives x the same value, but before the loop x is the argument, which
    # the adjoint of c needs (found by the thorough random-program run)
    c = np.tanh(np.sum(np.sin(x)))
    k = 0
    while k < 1:
        k = k + 1
        x = np.tanh(y)
    return np.sum(c + x)


def invariant_in_loop(k, x):
    for _ in range(4):
        a = -k * x
        x = x + 0.1 * a
    return np.sum(x * x)


def list_of_sines_summed(x):
    terms = []
    for v in x:
        terms.append(np.sin(v) * v)
    return sum(terms)


def list_stacked(x):
    rows = []
    for k in range(3):
        rows.append(x[k] * x)
    return np.sum(np.stack(rows) ** 2)


def nested_lists_to_array(x):
    table = []
    for i in range(2):
        row = []
        for j in range(3):
            row.append(x[j] * (i + 1.0) + x[i])
        table.append(row)
    return np.sum(np.tanh(np.array(table)))


def filtered_list(x):
    kept = []
    for v in x:
        if v > 0.0:
            kept.append(v * v * v)
    return sum(kept) + 0.0


def parameter_returned_after_loop(x, s):
    for i in range(2):  # noqa: B007
        if np.sum(x) <= 0.5:
            s = -s / (1.0 + x * x)
    return s


class Case(NamedTuple):
    func: Callable[..., Any]
    points: list[tuple]  # argument tuples: each exercises a branch or trip count
    wrt: Any = 0


CASES: list[Case] = [
    Case(if_scalar, [(1.3,), (-0.7,)]),
    Case(if_array_sum, [(_pos(3),), (-_pos(3),)]),
    Case(if_elif_else, [(_pos(3),), (np.array([0.1, -0.3, 0.2]),), (-_pos(3),)]),
    Case(if_no_else, [(_pos(4),), (-_pos(4),)]),
    Case(
        if_nested,
        [
            (_pos(3), _pos(3)),
            (-_pos(3), -_pos(3)),
            (np.array([1.0, -2.0, -1.0]), np.array([0.5, 0.3, 0.2])),
            (np.array([-1.0, 2.0, 1.0]), np.array([-0.5, -0.3, -0.2])),
        ],
        (0, 1),
    ),
    Case(assigned_in_one_branch, [(np.array([2.0, 0.5, 1.0]),), (np.array([0.5, 2.0, 1.0]),)]),
    Case(
        branch_uses_own_temp,
        [(_pos(3), _arr(3)), (-_pos(3), _arr(3))],
        (0, 1),
    ),
    Case(if_element_compare, [(np.array([1.5, 0.2, -0.3]),), (np.array([0.2, 1.5, -0.3]),)]),
    Case(if_on_param_int, [(_arr(3), 2), (_arr(3), 3)]),
    Case(if_reassign_twice, [(_pos(3),), (-_pos(3),)]),
    Case(if_many_outputs, [(np.array([0.5, 1.5]),), (np.array([1.5, 0.5]),)]),
    Case(ifexp_value, [(_pos(3),), (-_pos(3),)]),
    Case(ifexp_nested, [(_pos(3),), (-_pos(3),), (np.array([0.3, -0.1, 0.2]),)]),
    Case(ifexp_in_expr, [(_pos(3), _pos(3)), (-_pos(3), -_pos(3))], (0, 1)),
    Case(
        and_or_not,
        [
            (np.array([1.0, 0.5]), np.array([0.5, 2.0])),  # first and holds
            (np.array([-1.0, -0.5]), np.array([0.5, 2.0])),  # not ... holds
            (np.array([-0.5, 0.2]), np.array([0.5, 2.0])),  # neither
            (np.array([1.0, 0.5]), np.array([1.5, 2.0])),  # and fails, `not` is false
        ],
        (0, 1),
    ),
    Case(not_condition, [(_pos(3),), (-_pos(3),)]),
    Case(
        bool_flags_combined,
        [(np.array([1.0, -1.0]),), (np.array([1.0, 1.0]),), (np.array([-1.0, -1.0]),)],
    ),
    Case(chained_comparison, [(np.array([0.2, 0.1]),), (np.array([2.0, 1.0]),)]),
    Case(chained_three, [(np.array([0.1, 0.5, 0.9]),), (np.array([0.9, 0.5, 0.1]),)]),
    Case(or_value_scalar, [(1.2,), (-0.8,)]),
    Case(for_range_accumulate, [(_arr(3, scale=0.3),)]),
    Case(for_range_data_bound, [(_arr(3), 0), (_arr(3), 1), (_arr(3), 4)]),
    Case(
        for_range_start_stop_step,
        [(_arr(6), 0, 6, 1), (_arr(6), 1, 6, 2), (_arr(6), 5, 0, -2), (_arr(6), 3, 3, 1)],
    ),
    Case(for_range_from_active_shape, [(_arr(4),), (_arr(1),)]),
    Case(for_rows, [(_arr(4, 3), _arr(3))], (0, 1)),
    Case(for_enumerate, [(_arr(3, 2),)]),
    Case(for_zip, [(_arr(3, 2), _arr(3, 2)), (_arr(4, 2), _arr(2, 2))], (0, 1)),
    Case(for_enumerate_zip, [(_arr(3, 2), _arr(3, 2))], (0, 1)),
    Case(for_reversed_array, [(_arr(4, 3),)]),
    Case(
        for_reversed_range_neg_step,
        [(_arr(7), 6, 0, -2), (_arr(7), 5, -1, -1), (_arr(7), 1, 7, 3), (_arr(7), 0, 5, -1)],
    ),
    Case(for_range_negative_step, [(_arr(5),), (_arr(4),)]),
    Case(for_nested, [(_arr(3, 2), _arr(2))], (0, 1)),
    Case(for_nested_carried, [(_arr(3),)]),
    Case(for_index_parity, [(_arr(5),)]),
    Case(
        for_branch_on_carried,
        [(np.array([0.3, 0.9, 0.2, 0.7]),), (np.array([0.1, 0.2, 0.1, 0.2]),)],
    ),
    Case(for_reassign_in_body, [(_arr(3),)]),
    Case(for_swap_tuple, [(_arr(3), _arr(3))], (0, 1)),
    Case(fibonacci_like, [(_arr(3),)]),
    Case(matrix_power_loop, [(_arr(3, 3, scale=0.5),)]),
    Case(for_zero_trips, [(_arr(3), 0), (_arr(3), 2)]),
    Case(for_else, [(_arr(4),)]),
    Case(for_else_with_break, [(np.array([0.5, -0.3, 0.7]),), (np.array([0.5, 1.5, 0.7]),)]),
    Case(for_break, [(np.array([0.8, 0.9, 0.7, 1.1, 0.3]), 1.0), (_arr(5, scale=0.1), 10.0)]),
    Case(for_break_on_element, [(np.array([1.5, 0.7, -0.2, 3.0]),), (_pos(4),)]),
    Case(for_continue, [(np.array([0.5, -0.7, 1.2, -0.1]),), (_pos(3),)]),
    Case(
        for_continue_and_break,
        [(np.array([1.0, -1.0, 1.2, 0.5, 0.6]),), (np.array([-0.5, 0.2, -0.3]),)],
    ),
    Case(while_continue, [(np.array([0.5, -0.7, 1.2, -0.1]),)]),
    Case(nested_inner_break, [(np.array([[0.5, 1.5, 0.2], [0.3, -0.4, 0.6]]),)]),
    Case(while_halving, [(3.0,), (0.05,), (0.7,)]),
    Case(
        while_array_norm,
        [
            (np.array([1.0, -1.2, 0.8]),),
            (np.array([0.1, 0.2, 0.3]),),
            (np.array([4.0, -3.0, 2.0]),),
        ],
    ),
    Case(while_counter, [(_arr(3),)]),
    Case(while_break, [(np.array([0.1, 0.2]),), (np.array([2.5, 3.0]),)]),
    Case(while_else, [(5.0,), (0.5,)]),
    Case(while_else_break, [(1.0,), (0.5,)]),
    Case(newton_sqrt, [(2.0,), (0.3,), (9.0,)]),
    Case(newton_cubic, [(_arr(3),)]),
    Case(euler_scalar, [(1.0, 0.5), (-0.3, 2.0)], (0, 1)),
    Case(euler_until, [(0.5, 1.0), (1.5, 0.3)], (0, 1)),
    Case(while_in_for_break, [(np.array([0.1, 1.3, -2.2]),)]),
    Case(for_in_while, [(np.array([0.5, 1.0]),), (np.array([3.0, 4.0]),)]),
    Case(early_return_branch, [(_pos(3),), (-_pos(3),)]),
    Case(
        early_return_elif,
        [(np.array([1.5, 0.3]),), (np.array([0.2, 0.3]),), (np.array([-1.5, 0.3]),)],
    ),
    Case(early_return_in_loop, [(np.array([0.5, 1.2, 0.8]),), (np.array([0.1, 0.2, 0.3]),)]),
    Case(
        early_return_nested_loops,
        [(np.array([[0.5, 0.6], [1.8, 0.2]]),), (np.array([[0.3, 0.2], [0.4, 0.1]]),)],
    ),
    Case(early_return_in_while, [(0.3, 1), (0.3, 5), (-3.0, 5)]),  # returns early at 1, 2
    Case(early_return_for_else, [(np.array([0.5, 2.5, 1.0]),), (np.array([0.5, 1.5, 1.0]),)]),
    Case(
        rnn,
        [(_arr(3, 3, scale=0.5), _arr(2, 3), _arr(4, 2), _arr(3))],
        (0, 1, 2, 3),
    ),
    Case(rnn_enumerate, [(_arr(3, 3, scale=0.5), _arr(2, 3), _arr(3, 2), _arr(3))], (0, 1, 3)),
    Case(
        gradient_descent,
        [
            (np.array([1.0, -0.5]), np.array([[1.0, 0.2], [0.2, 0.8]])),
            (np.array([0.01, 0.02]), np.array([[1.0, 0.2], [0.2, 0.8]])),
        ],
        (0, 1),
    ),
    Case(piecewise_loop, [(np.array([-2.0, -0.3, 0.4, 1.7]),)]),
    Case(bisect_then_refine, [(5.0,), (0.6,)]),
    Case(enumerate_reversed, [(_arr(3, 2),)]),
    Case(zip_three, [(_arr(2, 2), _arr(2, 2), _arr(3, 2))], (0, 1, 2)),
    Case(enumerate_range, [(_arr(6),)]),
    Case(zip_with_range, [(_arr(3, 2),)]),
    Case(index_after_loop, [(1.5,), (-0.4,)]),
    Case(int_of_active_bound, [(np.array([1.2, 0.5]),), (np.array([0.2, 0.5]),)]),
    Case(while_augmented, [(_arr(3),)]),
    Case(ifexp_in_loop, [(np.array([0.2, 0.25]),), (np.array([1.2, 1.3]),)]),
    Case(ifexp_carried, [(_arr(2),)]),
    Case(bool_param, [(_arr(2), True), (_arr(2), False)]),
    Case(break_in_elif, [(np.array([0.2, 6.0, -1.0, 3.0]),), (np.array([0.2, 6.0, 1.0]),)]),
    Case(triple_loop, [(_arr(2, 2),)]),
    Case(swap_with_new_values, [(_arr(2), _arr(2))], (0, 1)),
    Case(return_both_branches, [(_pos(2),), (-_pos(2),)]),
    Case(return_in_while_else, [(5.0,), (1.0,)]),
    Case(
        rnn_float32,
        [((np.eye(2) * 0.5).astype(np.float32), _arr(3, 2).astype(np.float32))],
        (0, 1),
    ),
    Case(branch_on_loop_index, [(_arr(2),)]),
    Case(continue_nested, [(np.array([[0.5, -0.2], [0.3, 2.0]]),)]),
    Case(while_true_continue_break, [(1.5,)]),
    Case(early_return_then_loop, [(1.5,), (-0.5,)]),
    Case(one_branch_in_loop, [(np.array([0.5, -0.2, 0.3]),)]),
    Case(loop_then_branch, [(np.array([0.5, -0.2, 0.3]),), (np.array([-0.5, -0.2, 0.3]),)]),
    Case(while_with_branches, [(3.0,), (0.5,)]),
    Case(shrinking_slices, [(_arr(5),)]),
    Case(scalar_becomes_array, [(_arr(3, 2),)]),
    Case(sliding_window, [(_arr(5),)]),
    Case(while_shrinking, [(np.array([0.5, 1.2, 0.9, 1.1]),), (np.array([0.7]),)]),
    Case(power_iteration, [(np.array([[1.0, 0.3], [0.2, 0.7]]), np.array([0.5, 1.0]))], (0, 1)),
    Case(where_in_loop, [(np.array([0.5, -1.2]),)]),
    Case(compare_with_previous, [(np.array([0.5, -1.2, 0.3, 0.9, 0.1]),)]),
    Case(rotate_three, [(_arr(2), _arr(2), _arr(2))], (0, 1, 2)),
    Case(nested_while, [(np.array([0.2, 6.0]),)]),
    Case(for_else_in_for, [(np.array([[0.5, 0.2], [0.3, -2.0]]),)]),
    Case(
        inactive_parameter_reassigned,
        [(_arr(3), np.array([0.1, 0.2, 0.3])), (_arr(3), np.array([-0.1, 0.2, -0.3]))],
        1,
    ),
    Case(overwritten_after_loop, [(_arr(3),)]),
    Case(
        break_and_continue_in_for_else,
        [(np.array([0.5, 0.8]), y) for y in (0.1, 0.3, 0.7, -0.5)],
        (0, 1),
    ),
    Case(
        parameter_reassigned_in_nested_while,
        [(np.array([-0.95, -0.80, 1.25]), np.array([-1.63, 0.40, 0.91]), -1.248)],
        (0, 1, 2),
    ),
    Case(copy_in_a_branch, [(np.array([0.3, 0.4]), 0.7, 0), (np.array([0.3, 0.4]), 0.7, 3)], 1),
    Case(reassigned_in_loop_body, [(np.array([0.3, 0.5]),)]),
    Case(
        integer_argument_same_shape,
        [(np.array([-1.57]), np.array([0.79]), 2), (np.array([-1.57]), np.array([-0.79]), 2)],
        (0, 1),
    ),
    Case(parameter_reassigned_in_loop_from_invariants, [(0.548, -0.921), (_arr(2), 0.3)], (0, 1)),
    Case(invariant_in_loop, [(2.0, 1.0), (np.array([0.5, 1.5]), 0.3)], (0, 1)),
    Case(list_of_sines_summed, [(np.array([0.3, -0.5, 1.2]),)]),
    Case(list_stacked, [(np.array([0.3, -0.5, 1.2]),)]),
    Case(nested_lists_to_array, [(np.array([0.3, -0.5, 1.2]),)]),
    Case(filtered_list, [(np.array([0.3, -0.5, 1.2]),), (np.array([-0.3, -0.5]),)]),
    Case(parameter_returned_after_loop, [(-0.78, 0.41), (0.9, 0.41)], (0, 1)),
]
