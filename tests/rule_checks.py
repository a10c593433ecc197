"""What every rule test does with a row: draw values in a domain, differentiate
in both modes, compare with finite differences, check dtypes and that nothing
the caller passed in changes. Shared by the ``test_rules*.py`` files."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import strategies as st

import srcgrad
from srcgrad.testing import arrays, check_grads

DTYPES = [pytest.param(np.float64, id="f64"), pytest.param(np.float32, id="f32")]


# -- the checks every row goes through --------------------------------------------------
def differentiable(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (float, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def wrts(args: tuple) -> list:
    """Each differentiable position alone, then all of them together."""
    positions = [i for i, a in enumerate(args) if differentiable(a)]
    return positions + ([tuple(positions)] if len(positions) > 1 else [])


def single_precision(args: tuple) -> bool:
    return any(np.result_type(a) == np.float32 for a in args if differentiable(a))


def snapshot(values) -> list:
    return [np.copy(v) if isinstance(v, np.ndarray) else v for v in values]


def assert_unchanged(before: list, after, what: str) -> None:
    for i, (b, a) in enumerate(zip(before, after)):
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), f"srcgrad modified {what} {i}"


def ones_like(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)):
        return np.ones_like(value)
    return 1.0


def check_types(func, args: tuple, wrt) -> None:
    """Tangent and gradients have the dtype (and type) of what they stand for."""
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    out = func(*args)
    tangents = [ones_like(args[i]) for i in positions]
    saved = snapshot(tangents)
    value, tangent = srcgrad.jvp(func, wrt=wrt)(*args, *tangents)
    assert_unchanged(saved, tangents, "the tangent")
    assert np.shape(tangent) == np.shape(out)
    python_wrt = any(type(args[i]) is float for i in positions)  # weakly typed
    if isinstance(out, (np.ndarray, np.generic)) and not python_wrt:
        assert np.result_type(tangent) == out.dtype, (
            f"tangent of dtype {np.result_type(tangent)} for an output of dtype {out.dtype}"
        )
    dout = ones_like(out)
    saved = snapshot([dout])
    grads = srcgrad.vjp(func, wrt=wrt)(*args, dout)
    assert_unchanged(saved, [dout], "the cotangent")
    grads = grads if isinstance(wrt, tuple) else (grads,)
    assert len(grads) == len(positions)
    for i, g in zip(positions, grads):
        x = args[i]
        if isinstance(x, (np.ndarray, np.generic)):
            assert type(g) is type(x) and g.dtype == x.dtype and g.shape == x.shape, (
                f"gradient {type(g).__name__} {np.result_type(g)} {np.shape(g)} for argument "
                f"{i}: {type(x).__name__} {x.dtype} {x.shape}"
            )
        else:
            assert type(g) is float, f"gradient of type {type(g).__name__} for a Python float"


def check(func, args: tuple) -> None:
    """``check_grads`` (to second order in float64) and ``check_types`` for every ``wrt``;
    the caller's arrays unchanged."""
    saved = snapshot(args)
    # check_grads picks float32 tolerances only when a wrt argument is float32;
    # a float32 array that is not differentiated makes the output float32 too.
    tol = dict(eps=1e-3, atol=1e-2, rtol=1e-2) if single_precision(args) else {}
    # second order in float64 (float32 finite differences of a gradient are too coarse
    # to judge curved functions; the rule templates are the same for both dtypes)
    order = 1 if single_precision(args) else 2
    for wrt in wrts(args):
        check_grads(func, args, wrt=wrt, order=order, **tol)
        check_types(func, args, wrt)
    assert_unchanged(saved, args, "argument")


# -- where values come from ------------------------------------------------------------------
class Domain(NamedTuple):
    low: float = -3.0
    high: float = 3.0
    exclude: tuple[float, float] | None = None  # an open interval to keep out of
    frac: tuple[float, float] | None = None  # fractional part of every element kept in here

    def ints(self) -> Any:
        """Python ints inside the domain (for operands that are not differentiated)."""
        ints = st.integers(math.ceil(self.low), math.floor(self.high))
        if self.exclude is not None:
            a, b = self.exclude
            ints = ints.filter(lambda v: not a < v < b)
        return ints


ANY = Domain()
POSITIVE = Domain(0.5, 3.0)  # log, sqrt
NONZERO = Domain(exclude=(-0.5, 0.5))  # denominators
AWAY_FROM_0 = Domain(exclude=(-0.1, 0.1))  # abs, sign, kinks at zero
BASE = Domain(0.5, 2.0)  # a differentiated exponent needs a positive base
EXPONENT = Domain(-2.0, 2.0)
# maximum/minimum: x has fractional part in [0.1, 0.4], y in [0.55, 0.9], so
# |x - y| >= 0.1 for every broadcast pair (no kink within finite-difference reach)
LOWER_FRAC = Domain(frac=(0.1, 0.4))
UPPER_FRAC = Domain(frac=(0.55, 0.9))


def _into_frac(bounds: tuple[float, float], x: np.ndarray) -> np.ndarray:
    a, b = bounds
    whole = np.floor(x)
    return np.asarray(whole + a + (b - a) * (x - whole), dtype=x.dtype)


def values(shape, domain: Domain, dtype) -> Any:
    strategy = arrays(
        shape=shape, low=domain.low, high=domain.high, dtype=dtype, exclude=domain.exclude
    )
    if domain.frac is not None:
        strategy = strategy.map(lambda x: _into_frac(domain.frac, x))
    return strategy


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4) -> Any:
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def scalar_forms(x: np.ndarray, python: bool = True, ints: Domain | None = None) -> Any:
    """A 0-d array as itself, a numpy scalar, a Python float or (inactive) a Python int."""
    forms = [st.just(x), st.just(x.dtype.type(x))]
    if python:
        forms.append(st.just(float(x)))
        if ints is not None:
            forms.append(ints.ints())
    return st.one_of(forms)


def operand(data, shape, domain: Domain, dtype, scalars=True, python=True, ints=False) -> Any:
    """Values for ``shape``; a () shape may come as a scalar of any kind (``scalars``)."""
    x = data.draw(values(shape, domain, dtype))
    if scalars and shape == ():
        x = data.draw(scalar_forms(x, python, domain if ints else None))
    return x


class Row(NamedTuple):
    name: str
    func: Any
    domain: Domain = ANY
    shapes: Any = shapes()
    scalars: bool = True  # () may also be drawn as a Python float or numpy scalar
    xfail: Any = None  # an xfail mark naming a known bug
    xfail_f32: Any = None  # one that shows with float32 inputs only


# Methods, attributes and indexing that Python floats lack (0-d arrays have them).
NOT_PYTHON = dict(scalars=False)


def row_params(rows: list) -> list:
    """One pytest param per row and dtype (f64, f32), carrying the row's xfail marks."""
    out = []
    for row in rows:
        for dtype in (np.float64, np.float32):
            mark = row.xfail or (row.xfail_f32 if dtype is np.float32 else None)
            name = f"{row.name}-f{np.dtype(dtype).itemsize * 8}"
            out.append(pytest.param(row, dtype, id=name, marks=[mark] if mark else []))
    return out


def derivatives(func, args, wrt=0):
    """The derivative of sum(func) by forward mode (one tangent per element) and reverse mode."""
    out = func(*args)
    reverse = srcgrad.vjp(func, wrt=wrt)(*args, ones_like(out))
    x = np.asarray(args[wrt], dtype=float)
    forward = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        tangent = np.zeros(x.shape)
        tangent[index] = 1.0
        _, t = srcgrad.jvp(func, wrt=wrt)(*args, tangent)
        forward[index] = np.sum(t)
    return forward, np.asarray(reverse)
