"""Small user-style functions for the rules in ``srcgrad/rules/shapes.py`` and for
indexing; ``tests/test_rules_shapes.py`` differentiates them. srcgrad reads the
source of what it differentiates, so these live at module level in a real file."""

import numpy as np

# -- reshaping ------------------------------------------------------------------------------


def np_ravel(x):
    return np.ravel(x)


def method_flatten(x):
    return x.flatten()


def method_ravel(x):
    return x.ravel()


def squeeze(x):
    return np.squeeze(x)


def squeeze_axis(x):
    return np.squeeze(x, axis=1)


def method_squeeze(x):
    return x.squeeze()


def method_squeeze_axis(x):
    return x.squeeze(0)


def squeeze_dynamic(x, axis):
    return np.squeeze(x, axis)


def expand_dims(x):
    return np.expand_dims(x, 0)


def expand_dims_tuple(x):
    return np.expand_dims(x, (0, -1))


def expand_dims_dynamic(x, axis):
    return np.expand_dims(x, axis)


def atleast_1d(x):
    return np.atleast_1d(x)


def atleast_2d(x):
    return np.atleast_2d(x)


def atleast_3d(x):
    return np.atleast_3d(x)


def broadcast_to(x):
    return np.broadcast_to(x, (2, 3, 4))


def broadcast_to_dynamic(x, shape):
    return np.broadcast_to(x, shape) * 1.5


# -- moving axes and elements ------------------------------------------------------------------


def swapaxes(x):
    return np.swapaxes(x, 0, -1)


def method_swapaxes(x):
    return x.swapaxes(1, 0)


def swapaxes_dynamic(x, a, b):
    return np.swapaxes(x, a, b)


def moveaxis(x):
    return np.moveaxis(x, 0, -1)


def moveaxis_tuple(x):
    return np.moveaxis(x, (0, 1), (2, 0))


def moveaxis_dynamic(x, source, destination):
    return np.moveaxis(x, source, destination)


def flip(x):
    return np.flip(x)


def flip_axis(x):
    return np.flip(x, axis=-1)


def flip_dynamic(x, axis):
    return np.flip(x, axis)


def fliplr(x):
    return np.fliplr(x)


def flipud(x):
    return np.flipud(x)


def roll(x):
    return np.roll(x, 2)


def roll_axis(x):
    return np.roll(x, -1, axis=0)


def roll_tuple(x):
    return np.roll(x, (1, -2), axis=(0, 1))


def roll_dynamic(x, shift, axis):
    return np.roll(x, shift, axis)


def rot90(x):
    return np.rot90(x)


def rot90_k(x):
    return np.rot90(x, 3, axes=(1, 0))


def rot90_dynamic(x, k):
    return np.rot90(x, k)


# -- copies --------------------------------------------------------------------------------------


def tile(x):
    return np.tile(x, 2)


def tile_tuple(x):
    return np.tile(x, (2, 1, 3))


def tile_dynamic(x, reps):
    return np.tile(x, reps)


def repeat(x):
    return np.repeat(x, 3)


def repeat_axis(x):
    return np.repeat(x, 2, axis=-1)


def method_repeat(x):
    return x.repeat(2, axis=0)


def repeat_dynamic(x, repeats, axis):
    return np.repeat(x, repeats, axis)


def pad(x):
    return np.pad(x, 1)


def pad_pairs(x):
    return np.pad(x, ((1, 0), (0, 2)))


def pad_constant(x):
    return np.pad(x, 2, constant_values=1.5)


def pad_edge(x):
    return np.pad(x, (1, 2), mode="edge")


def pad_reflect(x):
    return np.pad(x, 2, "reflect")


def pad_symmetric(x):
    return np.pad(x, ((2, 1),), mode="symmetric")


def pad_wrap(x):
    return np.pad(x, 3, mode="wrap")


def pad_dynamic(x, pad_width, mode):
    return np.pad(x, pad_width, mode)


def pad_value(x, c):
    return np.pad(x, 1, constant_values=c)


# -- assembling and splitting --------------------------------------------------------------------


def hstack(x, y):
    return np.hstack([x, y])


def vstack(x, y):
    return np.vstack((x, y))


def r_pieces(x, y):
    return np.r_[x, 2.0 * y, 0:3, 1.5]


def r_linspace(x, y):
    return np.r_[0:1:4j, x, y]


def c_columns(x, y):
    return np.c_[x, np.sin(y), x * y]


def c_matrix_and_column(a, x):
    return np.c_[a, x, 1:4]


def row_stack(x, y):
    return np.row_stack((x, y))


def dstack(x, y):
    return np.dstack([x, y])


def column_stack(x, y):
    return np.column_stack([x, y])


def hstack_three(x, y):
    return np.hstack([x, y, x])


def split_unpack(x):
    a, b = np.split(x, 2)
    return a * b


def split_index(x):
    parts = np.split(x, [1, 3], axis=-1)
    return parts[0] + 2.0 * parts[2]


def split_dynamic(x, sections, axis):
    parts = np.split(x, sections, axis)
    return np.concatenate([parts[-1], parts[0]], axis)


def array_split(x):
    parts = np.array_split(x, 3)
    return np.concatenate([parts[2], np.sin(parts[0])])


def split_unused_part(x):
    a, b, c = np.array_split(x, 3, axis=0)
    return a * 2.0 + c[:1]


def split_loop(x):
    total = 0.0
    for part in np.split(x, 2):
        total = total + np.sum(part * part)
    return total


# -- np.asarray and np.array from active values ------------------------------------------------


def asarray(x):
    return np.asarray(x) * 2.0


def asarray_list(x, y):
    return np.asarray([x, y, x])


def array_scalars(x, y):
    return np.array([x * y, x, 3.0])


def array_nested(x, y):
    return np.array([[x, y], [y, 2.0 * x]])


def array_of_arrays(x, y):
    return np.array([x, y])


# -- gathering ---------------------------------------------------------------------------------


def take(x):
    return np.take(x, np.array([0, 2, 2, -1]))


def take_axis(x):
    return np.take(x, np.array([[1, 0], [1, 1]]), axis=1)


def method_take(x):
    return x.take(np.array([1, 1, 0]), axis=0)


def take_dynamic(x, indices, axis):
    return np.take(x, indices, axis)


def take_mode(x, indices, mode):
    return np.take(x, indices, axis=0, mode=mode)


def take_along_axis(x, indices):
    return np.take_along_axis(x, indices, axis=-1)


def take_along_axis_dynamic(x, indices, axis):
    return np.take_along_axis(x, indices, axis)


def take_along_argsort(x):
    return np.take_along_axis(x, np.argsort(x, axis=0), axis=0)


# -- indexing -------------------------------------------------------------------------------


def index_negative_steps(x):
    return x[::-2, 1::-1]


def index_negative_bounds(x):
    return x[-1:0:-1, ..., -2]


def index_none_ellipsis(x):
    return x[None, ..., None, 0]


def index_fancy_repeated(x, i):
    return x[i]


def index_fancy_column(x, i):
    return x[:, i]


def index_fancy_2d(x, i, j):
    return x[i, j]


def index_fancy_slice(x, i):
    return x[i, 1:]


def index_fancy_list(x):
    return x[[0, 0, 1, 0]]


def index_mask(x, m):
    return x[m]


def index_mask_computed(x):
    return x[x > 0.5] * 2.0


def index_mask_rows(x, m):
    return x[m, ::-1]


def index_nonzero(x, m):
    return x[np.nonzero(m)]


def index_dynamic(x, i):
    return x[i]


# -- sort ----------------------------------------------------------------------------------------


def sort(x):
    return np.sort(x)


def sort_axis0(x):
    return np.sort(x, axis=0)


def sort_flat(x):
    return np.sort(x, axis=None)


def sort_kind(x):
    return np.sort(x, kind="mergesort")


def sort_dynamic(x, axis):
    return np.sort(x, axis)


# -- no derivative alongside active values ------------------------------------------------------


def at_argmax(x):
    return x[np.argmax(x)]


def at_argmin_axis(x):
    return np.take_along_axis(x, np.argmin(x, axis=0, keepdims=True), axis=0)


def method_argmax(x):
    return x.ravel()[x.argmax()] * x


def method_argsort(x):
    return x[x.argsort()]


def by_argsort(x):
    return x * np.argsort(x)


def at_argwhere(x):
    return x[tuple(np.argwhere(x > 0).T)]


def at_flatnonzero(x):
    return np.ravel(x)[np.flatnonzero(x > 0)]


def where_finite(x):
    return np.where(np.isfinite(x), x, 0.0) * np.isnan(x).size


def floor_divided(x):
    return x * np.floor_divide(x, 1.0)


def times_arange(x):
    return x * np.arange(x.shape[-1])


def times_arange_start_stop(x):
    return x * np.arange(1, x.shape[-1] + 1)


def arange_from(x, h):
    return np.sum(np.arange(x, x + 2.0, h) ** 2)


def arange_to(x):
    return np.arange(x) * x


def times_linspace(x):
    return x * np.linspace(0.0, 1.0, x.shape[-1])


def linspace_between(a, b):
    return np.linspace(a, b, 5)


def linspace_options(a, b):
    return np.linspace(a, b, 4, endpoint=False, axis=-1)


def zeros_ones(x):
    return np.zeros(x.shape) + np.ones(np.shape(x)) * x + np.empty(3).size


def eye_matmul(x):
    return np.eye(x.shape[0]) @ x + np.identity(x.shape[0]) * 0.5 @ x


def full_like_times(x):
    return np.full_like(x, 2.0) * x


def full_like_fill(x, c):
    return np.full_like(x, c) * x


def full_fill(x, c):
    return np.full(x.shape, c) * x + np.full(3, 2.0).size


def like_shapes(x):
    return np.zeros_like(x) + np.ones_like(x) * x + np.empty_like(x).size + np.size(x) * np.ndim(x)


# -- errors and reproductions ----------------------------------------------------------------------


def pad_mean(x):
    return np.pad(x, 1, mode="mean")


def plus_float64_scalar(x):
    return x + np.float64(1.0)


# -- differences, appending, splitting by axis (issue 18, item 11) --------------------------------


def diff(x):
    return np.diff(x) * x[..., 1:]


def diff_twice_axis0(x):
    return np.diff(x, n=2, axis=0)


def ediff1d(x):
    return np.ediff1d(x) ** 2


def append_flat(x):
    return np.append(x, x[..., :1] * 2.0) ** 2


def append_axis(x):
    return np.append(x, np.sin(x), axis=-1)


def hsplit_halves(x):
    a, b = np.hsplit(x, 2)
    return a * b


def vsplit_rows(x):
    parts = np.vsplit(x, [1])
    return np.sum(parts[0]) + parts[1] * 2.0
