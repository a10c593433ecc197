"""Small user-style functions, one per rule (or variant of a rule) in
``srcgrad/rules/`` (operators, methods, indexing). ``tests/test_rules.py`` differentiates them.

srcgrad reads the source of what it differentiates, so these live at module
level in a real file. Keep each one a single use of the primitive it names.
"""

import numpy as np

# -- operators and numpy arithmetic, both operands as arguments --------------------


def add(x, y):
    return x + y


def np_add(x, y):
    return np.add(x, y)


def sub(x, y):
    return x - y


def np_subtract(x, y):
    return np.subtract(x, y)


def mul(x, y):
    return x * y


def np_multiply(x, y):
    return np.multiply(x, y)


def div(x, y):
    return x / y


def np_divide(x, y):
    return np.divide(x, y)


def pow_op(x, y):
    return x**y


def np_power(x, y):
    return np.power(x, y)


def builtin_pow(x, y):
    return pow(x, y)


def np_maximum(x, y):
    return np.maximum(x, y)


def np_minimum(x, y):
    return np.minimum(x, y)


def np_where(c, x, y):
    return np.where(c, x, y)


# -- operators with a constant operand ---------------------------------------------


def add_const(x):
    return x + 1


def radd_const(x):
    return 2.5 + x


def sub_const(x):
    return x - 0.5


def rsub_const(x):
    return 1 - x


def mul_const(x):
    return x * 3


def rmul_const(x):
    return -2.0 * x


def div_const(x):
    return x / 4.0


def rdiv_const(x):
    return 1.0 / x


def square(x):
    return x**2


def cube_float(x):
    return x**3.0


def pow_half(x):
    return x**0.5


def rpow_const(x):
    return 2.0**x


def builtin_pow_const(x):
    return pow(x, 2)


def maximum_const(x):
    return np.maximum(x, 0.0)


def minimum_const(x):
    return np.minimum(1.0, x)


def relu_where(x):
    return np.where(x > 0, x, 0.0)


# -- unary -------------------------------------------------------------------------


def neg(x):
    return -x


def np_negative(x):
    return np.negative(x)


def pos(x):
    return +x


def np_positive(x):
    return np.positive(x)


def assign(x):
    y = x
    return y


def builtin_float(x):
    return float(x)


def exp(x):
    return np.exp(x)


def log(x):
    return np.log(x)


def sqrt(x):
    return np.sqrt(x)


def sin(x):
    return np.sin(x)


def cos(x):
    return np.cos(x)


def tanh(x):
    return np.tanh(x)


def np_abs(x):
    return np.abs(x)


def builtin_abs(x):
    return abs(x)


def np_absolute(x):
    return np.absolute(x)


# -- one argument used several times: adjoints must add up ------------------------------


def square_by_mul(x):
    return x * x


def twice(x):
    return x + x


def sin_times_x(x):
    return np.sin(x) * x


def reuse_after_assign(x):
    y = x
    z = y * x
    return z + y


# -- reductions ----------------------------------------------------------------------


def sum_all(x):
    return np.sum(x)


def sum_axis0(x):
    return np.sum(x, axis=0)


def sum_axis_neg1(x):
    return np.sum(x, axis=-1)


def sum_axis_tuple(x):
    return np.sum(x, axis=(0, 2))


def sum_axis_neg_tuple(x):
    return np.sum(x, axis=(-1, 0))


def sum_keepdims(x):
    return np.sum(x, keepdims=True)


def sum_axis1_keepdims(x):
    return np.sum(x, axis=1, keepdims=True)


def sum_tuple_keepdims(x):
    return np.sum(x, axis=(0, -1), keepdims=True)


def sum_positional_axis(x):
    return np.sum(x, -2)


def method_sum(x):
    return x.sum()


def method_sum_axis(x):
    return x.sum(axis=-1)


def method_sum_positional_keepdims(x):
    return x.sum(0, keepdims=True)


def mean_all(x):
    return np.mean(x)


def mean_axis0(x):
    return np.mean(x, axis=0)


def mean_axis_neg1(x):
    return np.mean(x, axis=-1)


def mean_axis_tuple(x):
    return np.mean(x, axis=(0, 2))


def mean_keepdims(x):
    return np.mean(x, keepdims=True)


def mean_axis_neg2_keepdims(x):
    return np.mean(x, axis=-2, keepdims=True)


def mean_tuple_keepdims(x):
    return np.mean(x, axis=(1, -1), keepdims=True)


def method_mean(x):
    return x.mean()


def method_mean_axis(x):
    return x.mean(axis=(0, 1))


def method_mean_positional_keepdims(x):
    return x.mean(-1, keepdims=True)


def sum_dynamic(x, axis, keepdims):
    return np.sum(x, axis=axis, keepdims=keepdims)


def mean_dynamic(x, axis, keepdims):
    return np.mean(x, axis=axis, keepdims=keepdims)


def method_sum_dynamic(x, axis, keepdims):
    return x.sum(axis=axis, keepdims=keepdims)


def method_mean_dynamic(x, axis, keepdims):
    return x.mean(axis, keepdims=keepdims)


# -- linear algebra ------------------------------------------------------------------


def matmul_op(a, b):
    return a @ b


def np_matmul(a, b):
    return np.matmul(a, b)


def np_dot(a, b):
    return np.dot(a, b)


def method_dot(a, b):
    return a.dot(b)


# -- shapes --------------------------------------------------------------------------


def transpose(x):
    return np.transpose(x)


def transpose_axes(x):
    return np.transpose(x, (1, 0, 2))


def transpose_axes_keyword(x):
    return np.transpose(x, axes=(2, 0, 1))


def transpose_negative_axes(x):
    return np.transpose(x, (-1, 0, 1))


def transpose_dynamic(x, axes):
    return np.transpose(x, axes)


def method_transpose(x):
    return x.transpose()


def method_transpose_varargs(x):
    return x.transpose(1, 0)


def method_transpose_tuple(x):
    return x.transpose((2, 0, 1))


def attr_T(x):
    return x.T


def reshape_tuple(x):
    return np.reshape(x, (6, 4))


def reshape_minus_one(x):
    return np.reshape(x, (4, -1))


def reshape_flat(x):
    return np.reshape(x, -1)


def reshape_int(x):
    return np.reshape(x, 24)


def reshape_dynamic(x, shape):
    return np.reshape(x, shape)


def method_reshape_varargs(x):
    return x.reshape(3, 8)


def method_reshape_tuple(x):
    return x.reshape((2, -1))


def method_reshape_minus_one(x):
    return x.reshape(-1)


def method_reshape_new_axes(x):
    return x.reshape(1, 24, 1)


def method_reshape_dynamic(x, shape):
    return x.reshape(shape)


# -- indexing ------------------------------------------------------------------------


def index_int(x):
    return x[0]


def index_negative_int(x):
    return x[-1]


def index_slice(x):
    return x[1:3]


def index_open_slice(x):
    return x[1:]


def index_reversed(x):
    return x[::-1]


def index_step(x):
    return x[::2]


def index_column(x):
    return x[:, 0]


def index_two_ints(x):
    return x[0, 1]


def index_new_axis(x):
    return x[None]


def index_ellipsis(x):
    return x[..., 0]


def index_ellipsis_new_axis(x):
    return x[..., None]


def index_mixed(x):
    return x[1:, None, ::-2]


def index_ellipsis_slice(x):
    return x[-2:, ..., 1]


def index_twice(x):
    return x[0] + x[1]


def index_overlapping(x):
    return x[0:2] * x[1:3]


def index_dynamic(x, i):
    return x[i]


def index_fancy(x):
    return x[np.array([0, 1, 1, 0])]


# -- rules with no derivative (shapes, sizes, masks) --------------------------------------


def times_size(x):
    return x * np.size(x)


def times_ndim(x):
    return x * np.ndim(x)


def reshape_to_shape(x):
    return np.reshape(2.0 * x, np.shape(x))


def over_len(x):
    return x / len(x)


def plus_zeros_like(x):
    return x + np.zeros_like(x)


def times_ones_like(x):
    return np.ones_like(x, dtype=x.dtype) * x


def plus_size_of_empty_like(x):
    return x + np.size(np.empty_like(x))


def times_sign(x):
    return x * np.sign(x)


def attr_shape(x):
    return x.reshape(x.shape) * 2.0


def attr_ndim(x):
    return x * x.ndim


def mean_by_attr_size(x):
    return np.sum(x) / x.size


def attr_dtype(x):
    return np.zeros_like(x, dtype=x.dtype) + x


# -- builtins on Python scalars --------------------------------------------------------


def builtin_scalars(x, y):
    return abs(x) * float(y) + pow(y, 2)


def times_attr_shape0(x):
    return x * x.shape[0]
