"""The rules of ``srcgrad/rules/shapes.py`` and indexing, tested.

Every function of ``functions_shapes.py`` goes through :func:`check`: forward
mode, reverse mode and finite differences agree for each differentiable
argument alone and all together, derivatives keep their dtypes (float32 stays
float32) and nothing the caller passed in changes. Shapes, axes, shifts,
repeats, pad widths, split points, indices (repeated ones included) and masks
are drawn by hypothesis; where a rule takes them as literals in the source
(``np.flip(x, axis=-1)``) a row of the static table tests that form, and where
it takes them as arguments a test of its own draws them.

Functions that are differentiable only almost everywhere (``np.sort``, or
anything indexed by ``np.argmax``) are checked at inputs whose elements are
well apart (``spaced``), so that finite differences do not cross a tie.
"""

from __future__ import annotations

import math
from typing import Any

import functions_shapes as fn
import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rule_checks import DTYPES, NOT_PYTHON, Domain, Row, check, operand, shapes, values

import srcgrad
from srcgrad import runtime

pytestmark = pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated")
RANK3 = shapes(3, 3, max_side=3)
MATRIX = shapes(2, 2)
AT_LEAST_1D = shapes(1)
AT_LEAST_2D = shapes(2)


def spaced(shape, dtype) -> Any:
    """Arrays of ``shape`` whose elements are all at least 0.5 apart, in random order."""
    n = math.prod(shape)
    return st.tuples(st.permutations(range(n)), st.floats(-2.0, 2.0)).map(
        lambda p: (np.asarray(p[0], dtype=float) * 0.5 - n / 4 + p[1]).reshape(shape).astype(dtype)
    )


# -- one-argument functions with their shapes, axes and so on in the source ---------------------
SPACED = "spaced"  # marker in a Row's domain: draw with `spaced`
STATIC = [
    # reshaping
    Row("np.ravel", fn.np_ravel),
    Row("x.flatten()", fn.method_flatten, **NOT_PYTHON),
    Row("x.ravel()", fn.method_ravel, **NOT_PYTHON),
    Row("np.squeeze(x)", fn.squeeze, shapes=shapes(0, 4, max_side=2)),
    Row("np.squeeze(x, axis=1)", fn.squeeze_axis, shapes=st.just((3, 1, 2)) | st.just((1, 1))),
    Row("x.squeeze()", fn.method_squeeze, shapes=shapes(0, 3, max_side=2), scalars=False),
    Row("x.squeeze(0)", fn.method_squeeze_axis, shapes=st.just((1,)) | st.just((1, 3, 2))),
    Row("np.expand_dims(x, 0)", fn.expand_dims),
    Row("np.expand_dims(x, (0, -1))", fn.expand_dims_tuple),
    Row("np.atleast_1d", fn.atleast_1d, shapes=shapes(0, 2)),
    Row("np.atleast_2d", fn.atleast_2d, shapes=shapes(0, 3)),
    Row("np.atleast_3d", fn.atleast_3d, shapes=shapes(0, 4)),
    Row(
        "np.broadcast_to(x, (2, 3, 4))",
        fn.broadcast_to,
        shapes=st.sampled_from([(), (4,), (3, 1), (1, 3, 4), (2, 1, 1)]),
    ),
    # moving axes and elements
    Row("np.swapaxes(x, 0, -1)", fn.swapaxes, shapes=AT_LEAST_1D),
    Row("x.swapaxes(1, 0)", fn.method_swapaxes, shapes=AT_LEAST_2D),
    Row("np.moveaxis(x, 0, -1)", fn.moveaxis, shapes=AT_LEAST_1D),
    Row("np.moveaxis(x, (0, 1), (2, 0))", fn.moveaxis_tuple, shapes=RANK3),
    Row("np.flip(x)", fn.flip),
    Row("np.flip(x, axis=-1)", fn.flip_axis, shapes=AT_LEAST_1D),
    Row("np.fliplr", fn.fliplr, shapes=AT_LEAST_2D),
    Row("np.flipud", fn.flipud, shapes=AT_LEAST_1D),
    Row("np.roll(x, 2)", fn.roll),
    Row("np.roll(x, -1, axis=0)", fn.roll_axis, shapes=AT_LEAST_1D),
    Row("np.roll(x, (1, -2), axis=(0, 1))", fn.roll_tuple, shapes=AT_LEAST_2D),
    Row("np.rot90(x)", fn.rot90, shapes=AT_LEAST_2D),
    Row("np.rot90(x, 3, axes=(1, 0))", fn.rot90_k, shapes=AT_LEAST_2D),
    # copies
    Row("np.tile(x, 2)", fn.tile),
    Row("np.tile(x, (2, 1, 3))", fn.tile_tuple, shapes=shapes(0, 4)),
    Row("np.repeat(x, 3)", fn.repeat),
    Row("np.repeat(x, 2, axis=-1)", fn.repeat_axis, shapes=AT_LEAST_1D),
    Row("x.repeat(2, axis=0)", fn.method_repeat, shapes=AT_LEAST_1D),
    Row("np.pad(x, 1)", fn.pad),
    Row("np.pad(x, ((1, 0), (0, 2)))", fn.pad_pairs, shapes=MATRIX),
    Row("np.pad(x, 2, constant_values=1.5)", fn.pad_constant),
    Row("np.pad(x, (1, 2), mode='edge')", fn.pad_edge, shapes=AT_LEAST_1D),
    Row("np.pad(x, 2, 'reflect')", fn.pad_reflect, shapes=shapes(1, 3, min_side=3)),
    Row(
        "np.pad(x, ((2, 1),), mode='symmetric')", fn.pad_symmetric, shapes=shapes(1, 3, min_side=2)
    ),
    Row("np.pad(x, 3, mode='wrap')", fn.pad_wrap, shapes=AT_LEAST_1D),
    # splitting
    Row(
        "a, b = np.split(x, 2)",
        fn.split_unpack,
        shapes=st.sampled_from([(2,), (4,), (2, 3), (6, 1, 2)]),
    ),
    Row("parts = np.split(x, [1, 3], axis=-1)", fn.split_index, shapes=shapes(1, 3, min_side=3)),
    Row("np.array_split(x, 3)", fn.array_split, shapes=shapes(1, 3, min_side=3)),
    Row("a, b, c = np.array_split(x, 3)", fn.split_unused_part, shapes=shapes(1, 3, min_side=3)),
    Row("for part in np.split(x, 2)", fn.split_loop, shapes=st.sampled_from([(2,), (4, 3)])),
    Row("np.asarray(x)", fn.asarray),
    Row("np.diff(x) * x[..., 1:]", fn.diff, shapes=shapes(1, 3, min_side=2)),
    Row("np.diff(x, n=2, axis=0)", fn.diff_twice_axis0, shapes=shapes(1, 3, min_side=3)),
    Row("np.ediff1d(x)", fn.ediff1d, shapes=shapes(1, 3, min_side=2)),
    Row("np.append(x, ...)", fn.append_flat, shapes=AT_LEAST_1D),
    Row("np.append(x, np.sin(x), axis=-1)", fn.append_axis, shapes=AT_LEAST_1D),
    Row("a, b = np.hsplit(x, 2)", fn.hsplit_halves, shapes=st.sampled_from([(2,), (4,), (3, 2)])),
    Row("np.vsplit(x, [1])", fn.vsplit_rows, shapes=shapes(2, 3, min_side=2)),
    # gathering
    Row("np.take(x, [0, 2, 2, -1])", fn.take, shapes=shapes(1, 3, min_side=3)),
    Row("np.take(x, [[1, 0], [1, 1]], axis=1)", fn.take_axis, shapes=shapes(2, 3, min_side=2)),
    Row("x.take([1, 1, 0], axis=0)", fn.method_take, shapes=shapes(1, 3, min_side=2)),
    Row("np.take_along_axis(x, np.argsort(x))", fn.take_along_argsort, SPACED, AT_LEAST_1D),
    # indexing
    Row("x[::-2, 1::-1]", fn.index_negative_steps, shapes=AT_LEAST_2D),
    Row("x[-1:0:-1, ..., -2]", fn.index_negative_bounds, shapes=shapes(2, 4, min_side=2)),
    Row("x[None, ..., None, 0]", fn.index_none_ellipsis, shapes=AT_LEAST_1D),
    Row("x[[0, 0, 1, 0]]", fn.index_fancy_list, shapes=shapes(1, 3, min_side=2)),
    Row("x[x > 0.5]", fn.index_mask_computed, Domain(exclude=(0.4, 0.6)), **NOT_PYTHON),
    # sort
    Row("np.sort(x)", fn.sort, SPACED, AT_LEAST_1D),
    Row("np.sort(x, axis=0)", fn.sort_axis0, SPACED, AT_LEAST_1D),
    Row("np.sort(x, axis=None)", fn.sort_flat, SPACED),
    Row("np.sort(x, kind='mergesort')", fn.sort_kind, SPACED, AT_LEAST_1D),
    # no derivative, alongside active values
    Row("x[np.argmax(x)]", fn.at_argmax, SPACED, shapes(1, 1)),
    Row("np.argmin(x, axis=0, keepdims=True)", fn.at_argmin_axis, SPACED, AT_LEAST_1D),
    Row("x.argmax()", fn.method_argmax, SPACED, **NOT_PYTHON),
    Row("x[x.argsort()]", fn.method_argsort, SPACED, shapes(1, 1)),
    Row("x * np.argsort(x)", fn.by_argsort, SPACED, AT_LEAST_1D),
    Row("np.argwhere", fn.at_argwhere, Domain(exclude=(-0.1, 0.1)), **NOT_PYTHON),
    Row("np.flatnonzero", fn.at_flatnonzero, Domain(exclude=(-0.1, 0.1)), **NOT_PYTHON),
    Row("np.isfinite, np.isnan", fn.where_finite, **NOT_PYTHON),
    Row("np.floor_divide", fn.floor_divided, Domain(frac=(0.1, 0.9))),
    Row("x * np.arange(n)", fn.times_arange, shapes=AT_LEAST_1D),
    Row("x * np.arange(1, n + 1)", fn.times_arange_start_stop, shapes=AT_LEAST_1D),
    Row("x * np.linspace(0.0, 1.0, n)", fn.times_linspace, shapes=AT_LEAST_1D),
    Row("np.zeros, np.ones, np.empty", fn.zeros_ones, **NOT_PYTHON),
    Row("np.eye, np.identity", fn.eye_matmul, shapes=shapes(1, 2)),
    Row("np.full_like(x, 2.0) * x", fn.full_like_times),
    Row("*_like, np.size, np.ndim", fn.like_shapes),
]


def static_params() -> list:
    return [
        pytest.param(
            row, dtype, id=f"{row.name}-{dtype.id}", marks=[row.xfail] if row.xfail else []
        )
        for row in STATIC
        for dtype in DTYPES
    ]


@pytest.mark.parametrize("row, dtype", static_params())
@given(data=st.data())
def test_static(row, dtype, data):
    dtype = dtype.values[0]
    shape = data.draw(row.shapes)
    if row.domain == SPACED:
        x = data.draw(spaced(shape, dtype))
        if shape == () and row.scalars:
            x = data.draw(st.sampled_from([x, dtype(x), float(x)]))
    else:
        x = operand(data, shape, row.domain, dtype, scalars=row.scalars)
    check(row.func, (x,))


# -- axes, shifts, shapes, indices ... as arguments: drawn per example ---------------------------
def array(data, shape, dtype) -> np.ndarray:
    return data.draw(values(shape, Domain(), dtype))


def axis_of(data, rank: int) -> int:
    """An axis of an array of ``rank``, as often negative as not."""
    axis = data.draw(st.integers(0, rank - 1))
    return data.draw(st.sampled_from([axis, axis - rank]))


def axes_of(data, rank: int, min_size: int = 0) -> tuple:
    """Distinct axes of an array of ``rank``, some negative."""
    chosen = data.draw(st.lists(st.integers(0, rank - 1), min_size=min_size, unique=True))
    return tuple(data.draw(st.sampled_from([a, a - rank])) for a in chosen)


def indices(data, n: int, shape=None) -> np.ndarray:
    """Integer indices into an axis of length ``n``: repeats likely, some negative."""
    shape = data.draw(shapes(0, 2, max_side=5)) if shape is None else shape
    return data.draw(hnp.arrays(np.intp, shape, elements=st.integers(-n, n - 1)))


def squeeze_case(data, dtype):
    shape = data.draw(shapes(1, 4, max_side=2))
    ones = [i for i, n in enumerate(shape) if n == 1]
    if not ones:
        return fn.squeeze_dynamic, (array(data, shape, dtype), None)
    axis = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
    axis = tuple(a - len(shape) if data.draw(st.booleans()) else a for a in axis)
    axis = axis[0] if len(axis) == 1 and data.draw(st.booleans()) else axis
    return fn.squeeze_dynamic, (array(data, shape, dtype), axis)


def expand_dims_case(data, dtype):
    shape = data.draw(shapes())
    out_rank = len(shape) + data.draw(st.integers(1, 2))
    axis = axes_of(data, out_rank, min_size=out_rank - len(shape))[: out_rank - len(shape)]
    axis = axis[0] if len(axis) == 1 and data.draw(st.booleans()) else axis
    return fn.expand_dims_dynamic, (array(data, shape, dtype), axis)


def broadcast_to_case(data, dtype):
    shape = data.draw(shapes())
    target = tuple(n if n != 1 else data.draw(st.integers(1, 3)) for n in shape)
    target = data.draw(shapes(0, 2)) + target
    return fn.broadcast_to_dynamic, (array(data, shape, dtype), target)


def swapaxes_case(data, dtype):
    shape = data.draw(shapes(1))
    x = array(data, shape, dtype)
    return fn.swapaxes_dynamic, (x, axis_of(data, len(shape)), axis_of(data, len(shape)))


def moveaxis_case(data, dtype):
    shape = data.draw(shapes(1))
    source = axes_of(data, len(shape), min_size=1)
    destination = tuple(data.draw(st.permutations(range(len(shape))))[: len(source)])
    if len(source) == 1 and data.draw(st.booleans()):
        source, destination = source[0], destination[0]
    return fn.moveaxis_dynamic, (array(data, shape, dtype), source, destination)


def flip_case(data, dtype):
    shape = data.draw(shapes(1))
    axis = data.draw(st.sampled_from([None, axis_of(data, len(shape)), axes_of(data, len(shape))]))
    return fn.flip_dynamic, (array(data, shape, dtype), axis)


def roll_case(data, dtype):
    shape = data.draw(shapes(1))
    shifts = st.integers(-5, 5)
    axis = data.draw(st.sampled_from([None, axis_of(data, len(shape)), axes_of(data, len(shape))]))
    if isinstance(axis, tuple):
        shift = tuple(data.draw(shifts) for _ in axis)
        shift = data.draw(st.sampled_from([shift, data.draw(shifts)]))  # one shift for all
    else:
        shift = data.draw(shifts)
    return fn.roll_dynamic, (array(data, shape, dtype), shift, axis)


def rot90_case(data, dtype):
    x = array(data, data.draw(shapes(2)), dtype)
    return fn.rot90_dynamic, (x, data.draw(st.integers(-4, 5)))


def tile_case(data, dtype):
    shape = data.draw(shapes(0, 3))
    reps = data.draw(st.lists(st.integers(0, 3), max_size=4).map(tuple) | st.integers(1, 3))
    return fn.tile_dynamic, (array(data, shape, dtype), reps)


def repeat_case(data, dtype):
    shape = data.draw(shapes(0, 3))
    axis = None if shape == () else data.draw(st.none() | st.just(axis_of(data, len(shape))))
    n = math.prod(shape) if axis is None else shape[axis]
    counts = st.lists(st.integers(0, 3), min_size=n, max_size=n)
    repeats = data.draw(st.integers(0, 3) | counts | counts.map(np.array) | st.just([2]))
    return fn.repeat_dynamic, (array(data, shape, dtype), repeats, axis)


def pad_case(data, dtype):
    shape = data.draw(shapes(1, 3, min_side=2))
    mode = data.draw(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
    most = min(shape) - 1 if mode == "reflect" else 3  # reflect: no wider than the array
    width = st.integers(0, most)
    pair = st.tuples(width, width)
    pad_width = data.draw(
        width
        | pair
        | st.tuples(width)
        | st.tuples(pair)
        | st.tuples(*[pair] * len(shape))
        | st.tuples(*[st.tuples(width)] * len(shape))
    )
    return fn.pad_dynamic, (array(data, shape, dtype), pad_width, mode)


def pad_value_case(data, dtype):
    x = array(data, data.draw(shapes(0, 2)), dtype)
    c = data.draw(values((), Domain(), dtype))
    return fn.pad_value, (x, data.draw(st.sampled_from([c, dtype(c), float(c)])))


STACKS = {
    "hstack": (fn.hstack, 1),
    "vstack": (fn.vstack, 0),
    "dstack": (fn.dstack, 2),
    "column_stack": (fn.column_stack, 1),
    "row_stack": (fn.row_stack, 0),  # vstack's old name, deprecated in numpy 2.0
}


def stack_case(name):
    func, axis = STACKS[name]
    name = "vstack" if name == "row_stack" else name

    def case(data, dtype):
        rank = data.draw(st.integers(0 if name != "column_stack" else 1, 3))
        base = list(data.draw(shapes(rank, rank)))
        first, second = list(base), list(base)
        along = 0 if name == "hstack" and rank == 1 else axis
        if rank > max(along, 1 if name in ("vstack", "column_stack") else 0):
            second[along] = data.draw(st.integers(1, 3))
        if rank == 0 and name in ("hstack", "vstack"):  # 0-d pieces join 1-d ones
            second = [data.draw(st.integers(1, 3))] if name == "hstack" else [1]
        return func, (array(data, tuple(first), dtype), array(data, tuple(second), dtype))

    return case


def index_concatenator_case(data, dtype):
    """``np.r_[...]`` and ``np.c_[...]`` of arrays, numbers and slices (srcgrad lowers them
    to np.concatenate, with numpy's dtype)."""
    n = data.draw(st.integers(1, 4))
    func = data.draw(
        st.sampled_from([fn.r_pieces, fn.r_linspace, fn.c_columns, fn.c_matrix_and_column])
    )
    if func is fn.c_matrix_and_column:
        return func, (array(data, (3, n), dtype), array(data, (3,), dtype))
    if func is fn.c_columns:
        return func, (array(data, (n,), dtype), array(data, (n,), dtype))
    x = array(data, data.draw(st.sampled_from([(n,), ()])), dtype)
    y = array(data, (), dtype)
    return func, (x, data.draw(st.sampled_from([y, dtype(y), float(y)])))


def split_case(data, dtype):
    shape = data.draw(shapes(1))
    axis = axis_of(data, len(shape))
    n = shape[axis]
    sections = data.draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
    cuts = st.lists(st.integers(0, n), max_size=3).map(sorted)
    sections = data.draw(st.sampled_from([sections, data.draw(cuts)]))
    return fn.split_dynamic, (array(data, shape, dtype), sections, axis)


def take_case(data, dtype):
    shape = data.draw(shapes(1))
    axis = data.draw(st.none() | st.just(axis_of(data, len(shape))))
    n = math.prod(shape) if axis is None else shape[axis]
    i = indices(data, n)
    i = data.draw(st.sampled_from([i, i.tolist(), int(i.flat[0]) if i.size else 0]))
    return fn.take_dynamic, (array(data, shape, dtype), i, axis)


def take_mode_case(data, dtype):
    shape = data.draw(shapes(1))
    i = data.draw(hnp.arrays(np.intp, data.draw(shapes(1, 1)), elements=st.integers(-9, 9)))
    mode = data.draw(st.sampled_from(["wrap", "clip"]))
    return fn.take_mode, (array(data, shape, dtype), i, mode)


def take_along_axis_case(data, dtype):
    shape = data.draw(shapes(1))
    axis = data.draw(st.none() | st.just(axis_of(data, len(shape))))
    if axis is None:
        x = array(data, shape, dtype)
        return fn.take_along_axis_dynamic, (
            x,
            indices(data, x.size, (data.draw(st.integers(0, 5)),)),
            None,
        )
    # the other axes of the indices broadcast against x's (size 1 on either side)
    ishape = [data.draw(st.sampled_from([n, 1])) for n in shape]
    ishape[axis] = data.draw(st.integers(0, 4))
    xshape = [1 if s == 1 and data.draw(st.booleans()) else s for s in shape]
    xshape = [n if i != axis % len(shape) else shape[axis] for i, n in enumerate(xshape)]
    x = array(data, tuple(xshape), dtype)
    i = indices(data, shape[axis], tuple(ishape))
    return fn.take_along_axis_dynamic, (x, i, axis)


def sort_case(data, dtype):
    shape = data.draw(shapes(1))
    axis = data.draw(st.none() | st.just(axis_of(data, len(shape))))
    return fn.sort_dynamic, (data.draw(spaced(shape, dtype)), axis)


def fancy_case(data, dtype):
    shape = data.draw(shapes(1, 3, max_side=4))
    x = array(data, shape, dtype)
    kinds = ["rows", "mask"] + (["column", "2d", "slice", "mask rows"] if len(shape) > 1 else [])
    kind = data.draw(st.sampled_from(kinds))
    if kind == "rows":
        return fn.index_fancy_repeated, (x, indices(data, shape[0]))
    if kind == "column":
        return fn.index_fancy_column, (x, indices(data, shape[1]))
    if kind == "2d":
        i, j = indices(data, shape[0]), indices(data, shape[1])
        i = data.draw(st.sampled_from([i, i.reshape(-1)[:1]]))  # broadcast against j
        return fn.index_fancy_2d, (x, i.reshape(-1)[:1] if i.shape != j.shape else i, j)
    if kind == "slice":
        return fn.index_fancy_slice, (x, indices(data, shape[0]))
    if kind == "mask rows":
        return fn.index_mask_rows, (x, data.draw(hnp.arrays(bool, shape[:1])))
    mask = data.draw(hnp.arrays(bool, shape[: data.draw(st.integers(1, len(shape)))]))
    return data.draw(st.sampled_from([fn.index_mask, fn.index_nonzero])), (x, mask)


def index_dynamic_case(data, dtype):
    shape = data.draw(shapes(1, 3))
    n = shape[0]
    start = data.draw(st.none() | st.integers(-n - 1, n))
    stop = data.draw(st.none() | st.integers(-n - 1, n))
    step = data.draw(st.sampled_from([None, 1, 2, -1, -2, -3]))
    index = data.draw(
        st.sampled_from(
            [
                slice(start, stop, step),
                (Ellipsis, slice(start, stop, step)),
                (None, slice(start, stop, step), Ellipsis),
                indices(data, n),
                (slice(None, None, -1), *(([0],) if len(shape) > 1 else ())),
            ]
        )
    )
    return fn.index_dynamic, (array(data, shape, dtype), index)


def linspace_case(data, dtype):
    sa, sb = data.draw(st.sampled_from([((), ()), ((3,), ()), ((), (2, 1)), ((2,), (3, 1))]))
    a, b = array(data, sa, dtype), array(data, sb, dtype)
    a = data.draw(st.sampled_from([a, float(a)])) if sa == () else a
    return data.draw(st.sampled_from([fn.linspace_between, fn.linspace_options])), (a, b)


def arange_case(data, dtype):
    h = data.draw(st.floats(0.41, 0.49))  # 2 / h between 4 and 5: the length stays 5
    x = data.draw(st.floats(-2.0, 2.0))
    if data.draw(st.booleans()):
        return fn.arange_from, (dtype(x), dtype(h))
    return fn.arange_from, (x, h)


def arange_stop_case(data, dtype):
    x = data.draw(st.floats(0.2, 0.8)) + data.draw(st.integers(1, 4))  # away from integers
    return fn.arange_to, (data.draw(st.sampled_from([x, dtype(x)])),)


def fill_case(data, dtype):
    x = array(data, data.draw(shapes()), dtype)
    c = data.draw(values((), Domain(), dtype))
    c = data.draw(st.sampled_from([c, dtype(c), float(c)]))
    return data.draw(st.sampled_from([fn.full_like_fill, fn.full_fill])), (x, c)


def array_case(data, dtype):
    func = data.draw(
        st.sampled_from([fn.array_scalars, fn.array_nested, fn.asarray_list, fn.array_of_arrays])
    )
    shape = () if func in (fn.array_scalars, fn.array_nested) else data.draw(shapes(0, 2))
    a, b = array(data, shape, dtype), array(data, shape, dtype)
    if shape == ():
        a = data.draw(st.sampled_from([a, dtype(a), float(a)]))
        b = data.draw(st.sampled_from([b, dtype(b), float(b)]))
    return func, (a, b)


CASES = {
    "np.squeeze": squeeze_case,
    "np.expand_dims": expand_dims_case,
    "np.broadcast_to": broadcast_to_case,
    "np.swapaxes": swapaxes_case,
    "np.moveaxis": moveaxis_case,
    "np.flip": flip_case,
    "np.roll": roll_case,
    "np.rot90": rot90_case,
    "np.tile": tile_case,
    "np.repeat": repeat_case,
    "np.pad": pad_case,
    "np.pad constant_values": pad_value_case,
    **{f"np.{name}": stack_case(name) for name in STACKS},
    "np.split": split_case,
    "np.r_, np.c_": index_concatenator_case,
    "np.take": take_case,
    "np.take mode": take_mode_case,
    "np.take_along_axis": take_along_axis_case,
    "np.sort": sort_case,
    "fancy indexing and masks": fancy_case,
    "slices and indices as arguments": index_dynamic_case,
    "np.linspace": linspace_case,
    "np.arange start and step": arange_case,
    "np.arange stop": arange_stop_case,
    "np.full_like, np.full fill value": fill_case,
    "np.array, np.asarray of active values": array_case,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
@given(data=st.data())
def test_dynamic(case, dtype, data):
    func, args = case(data, dtype)
    check(func, args)


# -- conventions -----------------------------------------------------------------------------------
def derivative_rows(func, x):
    """Jacobian of ``func`` at ``x`` (1-D), by forward mode and by reverse mode."""
    out = func(x)
    forward = np.stack([srcgrad.jvp(func)(x, e)[1] for e in np.eye(x.size)], axis=1)
    reverse = np.stack([srcgrad.vjp(func)(x, e) for e in np.eye(out.size)], axis=0)
    return forward, reverse


@pytest.mark.parametrize(
    "x, order",
    [
        pytest.param([2.0, 1.0, 2.0, 0.0], [3, 1, 0, 2], id="tie-in-order"),
        pytest.param([1.0, 1.0, 1.0], [0, 1, 2], id="all-tied"),
        pytest.param([-0.0, 0.0, -1.0], [2, 0, 1], id="signed-zeros"),
    ],
)
def test_sort_ties_follow_stable_argsort(x, order):
    """Output element k of np.sort carries the derivative of x[order[k]], where order
    is numpy's stable argsort: tied elements keep the order they have in x."""
    x = np.array(x)
    forward, reverse = derivative_rows(fn.sort, x)
    expected = np.eye(x.size)[order]
    np.testing.assert_array_equal(forward, expected)
    np.testing.assert_array_equal(reverse, expected)


def test_repeated_fancy_indices_accumulate():
    x = np.array([1.0, 2.0, 3.0])
    grad = srcgrad.vjp(fn.index_fancy_repeated)(
        x, np.array([0, 2, 0, 0]), np.array([1.0, 10, 100, 1000])
    )
    np.testing.assert_array_equal(grad, [1101.0, 0.0, 10.0])
    grad = srcgrad.vjp(fn.take_dynamic)(x, np.array([[0, 0], [1, 0]]), 0, np.ones((2, 2)))
    np.testing.assert_array_equal(grad, [3.0, 1.0, 0.0])


@given(data=st.data())
def test_index_adjoint_places_the_adjoint_in_zeros(data):
    # the helper every basic index's adjoint goes through; a run of rows is written around,
    # not over a zero array, so check it against the plain definition on every kind of slice
    shape = data.draw(shapes(1, 3))
    n = shape[0]
    ends = st.none() | st.integers(-n - 2, n + 2)
    step = data.draw(st.sampled_from([None, 1, 2, -1]))
    index = data.draw(
        st.sampled_from(
            [slice(data.draw(ends), data.draw(ends), step), (slice(1, None), Ellipsis), 0]
        )
    )
    x = np.ones(shape)
    g = data.draw(hnp.arrays(np.float64, np.shape(x[index]), elements=st.floats(-9, 9)))
    want = np.zeros_like(x)
    want[index] = g
    np.testing.assert_array_equal(runtime.index_adjoint(g, x, index), want)


def test_pad_mode_without_rule():
    with pytest.raises(NotImplementedError, match="mode 'constant', 'edge'"):
        srcgrad.vjp(fn.pad_mean)(np.ones(3), np.ones(5))
    with pytest.raises(NotImplementedError, match="not 'mean'"):
        srcgrad.jvp(fn.pad_mean)(np.ones(3), np.ones(3))


# -- known bugs elsewhere (xfail strict: remove the mark once fixed) ------------------------------
def test_tangent_dtype_follows_promotion_by_inactive_scalar():
    check(fn.plus_float64_scalar, (np.ones(3, dtype=np.float32),))


def r_directive(x):
    return np.r_["0,2", x, x]


def r_python_number(x):
    return np.r_[x, 1.5]


def test_r_keeps_numpys_dtype_and_refuses_directives():
    x = np.ones(2, dtype=np.float32)
    value, tangent = srcgrad.jvp(r_python_number)(x, x)  # a Python number stays weak
    assert r_python_number(x).dtype == value.dtype == tangent.dtype == np.float32
    np.testing.assert_allclose(srcgrad.vjp(r_python_number)(x, np.arange(3.0)), [0.0, 1.0])
    with pytest.raises(srcgrad.errors.UnsupportedSyntaxError, match="directive string"):
        srcgrad.grad(r_directive)(x)
