"""Minimal reproductions of what the independent oracles found (autograd in
``test_autograd_oracle.py``, numpy in ``test_adversarial_programs.py``), one
function each, for the strict xfail tests that flip when a fix lands.

srcgrad reads the source of what it differentiates, so these live at module
level in a real file.
"""

import numpy
import numpy as np

# -- issue 16 family 1: an adjoint aliasing an array restored in place -----------------------------


def write_then_dot(x):
    y = x.copy()
    y[0] = 0.0
    return np.dot(y, x)


# -- family 2: aliases and views under in-place operators ------------------------------------------


def alias_then_inplace(x, y):
    z = x
    z *= 1.5
    return np.sum(np.sin(x) * y)


def alias_read_after_inplace(x, y):
    z = x
    x += 1.0
    return np.sum(np.sin(z) * y)


def view_of_local_inplace(x, y):
    w = x * y
    z = w[0:2]
    z *= 3.0
    return np.sum(np.sin(w))


def transposed_view_inplace(x, y):
    w = x * 2.0
    z = w.T
    z *= 3.0
    return np.sum(w * y)


def write_seen_through_an_alias(x, y):
    w = y * y
    z = w
    w[0] = np.sin(np.mean(x))
    return np.sum(np.sin(z) * z)


def list_append_through_alias(x, y):
    a = []
    b = a
    b.append(x * 2.0)
    return np.sum(a[0] * y)


def list_holds_argument_then_inplace(x, y):
    a = [x, y]
    x *= 2.0
    return np.sum(a[0] * y)


# -- family 3: writes with repeated indices --------------------------------------------------------


def repeated_index_write(x, y):
    z = np.zeros_like(x)
    z[[0, 0]] = x[:2]
    return np.sum(z * y)


def repeated_index_add(x, y):
    z = np.zeros_like(x)
    z[[0, 0]] += x[:2]
    return np.sum(z * y)


# -- family 4: casts -------------------------------------------------------------------------------


def cast_int(x, y):
    return np.sum(x.astype(int) * y)


def parameter_rebound_to_ints(x, y):
    """The adjoint of ``x``'s older value starts as zeros like it, not like the integers
    (found by the thorough random programs: ``x_bar += ...`` into an integer array)."""
    a = 0.5 * x
    if np.sum(y) > 0.0:  # (the adjoint adds into x_bar on one branch: zeros first)
        t = x
    else:
        t = y
    c = np.tanh(t)
    x = np.asarray(np.tanh(a), dtype=int)
    if np.sum(y) > 10.0:
        x = np.sin(x)
    return np.sum(c * y + a) + np.sum(x)


def cast_bool(x, y):
    return np.sum(x * y.astype(bool))


def sum_dtype_int(x, y):
    return np.sum(x, dtype=int) * np.sum(y)


def array_dtype_int(x, y):
    return np.sum(np.array(x, dtype=int) * y)


# -- family 6: derivatives of derivatives, and the names they add ----------------------------------


def smooth(x, y):
    return np.sum(np.sin(x) * y)


def parameter_named_dout(x, dout):
    return np.sum(np.sin(dout) * x)


def parameter_named_x_dot(x, x_dot):
    return np.sum(np.sin(x_dot) * x)


def local_named_like_a_tangent(x, y):
    y_dot = x * 2.0
    return np.sum(np.sin(y) * y) + np.sum(np.sin(y_dot))


def linear(x, y):
    return np.sum(x) + np.sum(y)


# -- family 12: containers -------------------------------------------------------------------------


def tuple_read_twice(x):
    t = ((x, 2.0 * x), 1.0)
    p = t[0]
    return np.sum(p[0] * p[1])


def pair(u):
    return np.tanh(u), np.sin(u)


def helper_pair(x):
    a, b = pair(x)
    return np.sum(a * b)


# -- family 14: caller state -----------------------------------------------------------------------


def writes_into_argument(x, y):
    x[0] = 0.5 * x[1]
    return np.sum(np.sin(x) * y)


# -- family 16: crashes ----------------------------------------------------------------------------


def transpose_only(x):
    return x.T


def numpy_parameter(x, np):
    return numpy.sum(numpy.sin(np) * x)
