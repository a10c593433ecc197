"""The :class:`Jacobian` object: a Jacobian assembled from the generated derivatives of
:mod:`srcgrad.derivative`, row by row (one vjp per output element) or column by column
(one jvp per input element), for arrays and for pytrees of parameters. Made by
:mod:`srcgrad.jacobians`' ``jacobian``, ``jacfwd``, ``jacrev`` and ``hessian``."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, Generic

import numpy as np

from . import pytree
from .arguments import (
    _MODES,
    Wrt,
    _is_array,
    _not_a_function,
    call_with,
    is_complex_leaf,
)
from .backends import check_arguments
from .backends import module_of as _module_of
from .derivative import Derivative, P
from .passes import _Passes
from .results import _copied, _like, _zero_tangent


class Jacobian(Generic[P]):
    """The Jacobian of ``func`` with respect to ``wrt``: an array of shape
    ``out.shape + arg.shape`` (a tuple of them for a tuple ``wrt``). In forward mode
    ``func`` may return a tuple of arrays: then a tuple with an entry for each (each an
    array, or a tuple for a tuple ``wrt``).

    ``mode="reverse"`` runs the generated vjp once per output element;
    ``mode="forward"`` runs the generated jvp once per input element. Choose
    the mode whose count is smaller. ``.source`` is the generated code used.

    Made by :func:`jacobian`, :func:`jacfwd`, :func:`jacrev` and :func:`hessian`; for a
    type checker ``Jacobian[P]`` is called with the arguments of a function of parameters
    ``P``.

    Args:
        func: the function to differentiate (left out: a decorator).
        wrt: the argument(s) to differentiate with respect to, by position or name, or a
            tuple of them; the first argument when not given.
        mode: ``"reverse"`` or ``"forward"``.
        compile: as :func:`srcgrad.grad`'s: ``None``, ``"numba"`` or ``"numba-or-python"``.

    Raises:
        TypeError: ``func`` is not a Python function (or a derivative srcgrad made), or both
            ``wrt`` and ``argnums`` are given; at a call, arguments that do not fit.
        ValueError: ``wrt`` names no parameter of ``func``, or ``mode`` is not
            ``"reverse"`` or ``"forward"``.
        UnsupportedSyntaxError: at the first call with a new kind of arguments, ``func``
            uses a construct srcgrad does not differentiate (the message names your line).
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            return np.sin(x) * x[0]


        jac = srcgrad.jacobian(f)  # a srcgrad.Jacobian
        assert jac(np.ones(3)).shape == (3, 3)
        print(jac.source)
        ```
    """

    #: (what analysis looks for to say that a differentiated function calls one)
    __srcgrad_derivative__ = True

    def __init__(
        self, func: Callable[..., Any], wrt: Wrt, mode: str = "reverse", compile: str | None = None
    ) -> None:
        if mode not in _MODES:
            auto = " (mode='auto' is grad's and value_and_grad's)" if mode == "auto" else ""
            raise ValueError(f"jacobian's mode must be 'reverse' or 'forward'{auto}, not {mode!r}")
        if isinstance(func, Derivative):
            over_reverse = func._inner is None and not func.has_aux  # (see _vjp_of_reverse)
            if func.kind in ("grad", "vjp") and mode == "reverse" and not over_reverse:
                raise TypeError(
                    f"jacobian of {func!r} in reverse mode would run reverse mode over its "
                    "reverse-mode code, which srcgrad does not do; pass mode='forward' "
                    "(srcgrad.hessian(f) is jacobian(grad(f), mode='forward'))"
                )
        elif not inspect.isfunction(func):
            raise TypeError(_not_a_function(func, "jacobian"))
        self.mode = mode
        kind = "vjp" if mode == "reverse" else "jvp"
        self._inner = Derivative(func, kind, wrt, compile=compile)
        #: the Jacobian of a jvp is that of its tangent output (as its gradient is)
        self._tangent_output = self._inner._tangent_output
        functools.update_wrapper(self, func, updated=())
        self.__wrapped__ = func
        self.wrt = self._inner.wrt

    @property
    def source(self) -> str:
        """The generated code the Jacobian is assembled from (a vjp or a jvp)."""
        return self._inner.source

    def __repr__(self) -> str:
        inner = self._inner
        wrt = inner.wrt[0] if not inner._wrt_tuple else tuple(inner.wrt)
        return (
            f"<srcgrad.jacobian of {self.__wrapped__.__qualname__}, wrt={wrt!r}, "
            f"mode={self.mode!r}>"
        )

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        inner = self._inner
        values = inner._bind(args, kwargs)
        check_arguments(values, inner._params, inner.__name__)
        trees = [w for w in inner.wrt if pytree.is_node(values[inner._params.index(w)])]
        complexes = [w for w in inner.wrt if is_complex_leaf(values[inner._params.index(w)])]
        if complexes and self.mode == "forward":  # (a column per real direction: no z_bar)
            raise TypeError(
                f"jacobian in forward mode takes real wrt arguments; {complexes[0]!r} is "
                "complex. Pass mode='reverse' (rows of z_bar = df/dx - 1j df/dy, autograd's "
                "convention), or its real and imaginary parts as two arguments"
            )
        if trees and self.mode == "forward":
            return self._tree_columns(values)
        if trees:
            raise TypeError(
                f"jacobian in reverse mode takes arrays and floats as wrt arguments; "
                f"{trees[0]!r} is a {type(values[inner._params.index(trees[0])]).__name__}. "
                "Pass mode='forward' (hessian takes pytrees), or use srcgrad.vjp, jvp or "
                "hvp, which take pytrees"
            )
        if self.mode == "reverse":
            rows = self._rows(values)
            return tuple(rows) if inner._wrt_tuple else rows[0]
        blocks, several = self._columns(values)  # blocks[k][i]: output part i, argument k
        per_part = [
            tuple(b[i] for b in blocks) if inner._wrt_tuple else blocks[0][i]
            for i in range(len(blocks[0]))
        ]
        return tuple(per_part) if several else per_part[0]

    def _output(self, values: list[Any], out: Any = None) -> Any:
        """The function's output for the call's ``values`` (``out`` where a pass gave it):
        run on copies of them, so that a function writing into its arguments cannot
        change the caller's; a clear error for a container (in forward mode, a tuple of
        arrays is taken: one Jacobian for each)."""
        if out is None:
            out = call_with(self.__wrapped__, _copied(values))
            if self._tangent_output:
                out = out[1]
        several = (
            self.mode == "forward"
            and type(out) is tuple
            and not any(isinstance(o, (tuple, list, dict)) for o in out)
        )
        if isinstance(out, (tuple, list, dict)) and not several:
            where = "" if self.mode == "reverse" else " (or a tuple of arrays)"
            raise TypeError(
                f"jacobian takes a function returning one array{where}; "
                f"{self.__wrapped__.__qualname__!r} returns a {type(out).__name__}. Take the "
                "Jacobian of a function returning one of its elements"
                + (", or pass mode='forward', which takes a tuple of arrays" if not where else "")
                + ", or use srcgrad.vjp or srcgrad.jvp, which take and give tuples"
            )
        return out

    def _rows(self, values: list[Any]) -> list[Any]:
        """Reverse mode: row ``i`` of each Jacobian is the vjp of the basis cotangent ``e_i``."""
        inner = self._inner
        out = self._output(values)
        xp = _module_of(out) if hasattr(out, "shape") and not isinstance(out, np.generic) else np
        wrt_values = [values[inner._params.index(w)] for w in inner.wrt]
        jacobians = [
            xp.zeros(np.shape(out) + np.shape(v), dtype=_float_dtype(out, v)) for v in wrt_values
        ]
        count = math.prod(np.shape(out))
        passes = _Passes(inner, "jacobian(..., mode='reverse')", values, count, "output element")
        for index in np.ndindex(np.shape(out)):
            dout = xp.zeros_like(out, dtype=jacobians[0].dtype) if np.ndim(out) else 1.0
            if np.ndim(out):
                dout[index] = 1
            passes.check()
            grads = inner(*values, dout)
            grads = grads if inner._wrt_tuple else (grads,)
            for jac, g in zip(jacobians, grads):
                jac[index] = g
        return [_like_jacobian(j, out, v) for j, v in zip(jacobians, wrt_values)]

    def _columns(self, values: list[Any]) -> tuple[list[list[Any]], bool]:
        """Forward mode: column ``j`` is the jvp of the basis tangent ``e_j``. For each
        ``wrt`` argument, a Jacobian for each part of the output (one part unless it is a
        tuple), and whether it is a tuple."""
        inner = self._inner
        wrt_values = [values[inner._params.index(w)] for w in inner.wrt]
        zeros = [_zero_tangent(v) for v in wrt_values]
        count = sum(math.prod(np.shape(v)) for v in wrt_values)
        passes = _Passes(inner, "jacobian(..., mode='forward')", values, count, "input element")
        out: Any = None
        result = []
        for k, v in enumerate(wrt_values):
            xp = _module_of(v) if _is_array(v) else np  # (a number: numpy's zeros)
            jacs: list[Any] | None = None
            for index in np.ndindex(np.shape(v)):
                tangents = list(zeros)
                tangents[k] = _basis(v, index, xp)
                value, column = inner(*values, *tangents)
                if self._tangent_output:
                    value, column = value[1], column[1]
                passes.check(value)
                if jacs is None:
                    out = self._output(values, value)
                    jacs = _zero_blocks(_parts(out), v, xp)
                for jac, part in zip(jacs, _parts(out, column)):
                    jac[(Ellipsis, *index)] = part
            if jacs is None:  # no elements: no pass gave the output's shape
                out = self._output(values, out)
                jacs = _zero_blocks(_parts(out), v, xp)
            result.append([_like_jacobian(j, o, v) for j, o in zip(jacs, _parts(out))])
        return result, type(out) is tuple

    def _tree_columns(self, values: list[Any]) -> Any:
        """Forward mode where a ``wrt`` argument is a pytree (a dict of parameters): one
        jvp per element of each of its leaves; the result has the output's structure, and
        for each output leaf the argument's structure of blocks ``out_leaf.shape +
        in_leaf.shape`` (a tuple of those, one per argument, for a tuple ``wrt``), as
        ``jax.jacfwd`` and ``jax.hessian`` give."""
        inner = self._inner
        wrt_values = [values[inner._params.index(w)] for w in inner.wrt]
        zeros = [_zero_tangent(v) for v in wrt_values]
        count = sum(math.prod(np.shape(leaf)) for v in wrt_values for leaf in pytree.leaves(v))
        passes = _Passes(inner, "jacobian(..., mode='forward')", values, count, "input element")
        out: Any = None
        per_argument = []  # [k][input leaf][output leaf]: a block
        for k, v in enumerate(wrt_values):
            per_leaf = []
            for li, leaf in enumerate(pytree.leaves(v)):
                xp = _module_of(leaf) if _is_array(leaf) else np
                blocks: list[Any] | None = None
                for index in np.ndindex(np.shape(leaf)):
                    tangents = list(zeros)
                    tangents[k] = _with_leaf(zeros[k], li, _basis(leaf, index, xp))
                    value, column = inner(*values, *tangents)
                    if self._tangent_output:
                        value, column = value[1], column[1]
                    passes.check(value)
                    out = value if out is None else out
                    if blocks is None:
                        blocks = _zero_blocks(pytree.leaves(out), leaf, xp)
                    for block, part in zip(blocks, pytree.leaves(column)):
                        block[(Ellipsis, *index)] = part
                if blocks is None:  # a leaf of no elements
                    out = out if out is not None else self._tree_output(values)
                    blocks = _zero_blocks(pytree.leaves(out), leaf, xp)
                per_leaf.append(
                    [_like_jacobian(b, o, leaf) for b, o in zip(blocks, pytree.leaves(out))]
                )
            per_argument.append(per_leaf)
        grad = self.__wrapped__
        if isinstance(grad, Derivative) and grad.kind == "grad" and not grad.has_aux:
            out = grad._shape_grads(out, values)  # (a hessian: its rows like the arguments)
        per_out = []
        for oi in range(len(pytree.leaves(out))):
            by_argument = [
                _with_leaves(v, [per_leaf[oi] for per_leaf in per_argument[k]])
                for k, v in enumerate(wrt_values)
            ]
            per_out.append(tuple(by_argument) if inner._wrt_tuple else by_argument[0])
        return _with_leaves(out, per_out)

    def _tree_output(self, values: list[Any]) -> Any:
        out = call_with(self.__wrapped__, _copied(values))
        return out[1] if self._tangent_output else out


def _basis(v: Any, index: tuple, xp: Any) -> Any:
    """The tangent with 1 at ``index`` of ``v`` (an array, or a number: 1 of its type)."""
    if np.ndim(v):
        basis = xp.zeros_like(v)
        basis[index] = 1
        return basis
    return type(v)(1.0) if isinstance(v, (float, np.generic)) else 1.0


def _zero_blocks(outputs: Any, v: Any, xp: Any) -> list[Any]:
    """A zero Jacobian block ``o.shape + v.shape`` for each output part ``o``."""
    return [xp.zeros(np.shape(o) + np.shape(v), dtype=_float_dtype(o, v)) for o in outputs]


def _with_leaf(tree: Any, position: int, value: Any) -> Any:
    """``tree`` with its leaf at ``position`` (in leaf order) replaced by ``value``."""
    count = iter(range(len(pytree.leaves(tree))))
    return pytree.map_leaves(lambda leaf: value if next(count) == position else leaf, tree)


def _with_leaves(tree: Any, new: list[Any]) -> Any:
    """``tree``'s structure with ``new`` for its leaves, in leaf order."""
    items = iter(new)
    return pytree.map_leaves(lambda _: next(items), tree)


def _parts(out: Any, like: Any = None) -> tuple:
    """The parts of a Jacobian's output ``out`` (itself, unless a tuple), or of ``like``
    (a tangent of it) in the same way."""
    if type(out) is tuple:
        return tuple(like) if like is not None else out
    return (like if like is not None else out,)


def _float_dtype(out: Any, v: Any) -> Any:
    return np.result_type(getattr(out, "dtype", np.float64), getattr(v, "dtype", np.float64))


def _like_jacobian(jac: Any, out: Any, v: Any) -> Any:
    """A Jacobian of a scalar function of a scalar is a scalar of the argument's type."""
    if np.ndim(jac) == 0:
        return _like(jac, v) if not isinstance(v, np.ndarray) else jac
    return jac
