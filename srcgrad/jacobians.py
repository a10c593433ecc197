"""Jacobians, Hessians and Hessian-vector products: compositions of the derivatives
of :mod:`srcgrad.derivative` (a Jacobian row by row or column by column, a Hessian as the
Jacobian of the gradient, an HVP as forward mode over reverse mode)."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, Generic, overload

import numpy as np

from . import pytree
from .arguments import (
    _MODES,
    Wrt,
    _is_array,
    _not_a_function,
    call_with,
    is_complex_leaf,
    resolve_wrt,
)
from .backends import (
    check_arguments,
)
from .backends import (
    module_of as _module_of,
)
from .derivative import Derivative, P
from .passes import _Passes
from .results import (
    _copied,
    _like,
    _zero_tangent,
)


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

    def __init__(self, func: Callable[..., Any], wrt: Wrt, mode: str = "reverse") -> None:
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
        self._inner = Derivative(func, "vjp" if mode == "reverse" else "jvp", wrt)
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


@overload
def jacobian(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
) -> Jacobian[P]: ...
@overload
def jacobian(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
) -> Callable[[Callable[P, Any]], Jacobian[P]]: ...
def jacobian(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
) -> Any:
    """The Jacobian of ``func`` with respect to argument(s) ``wrt``: an array of shape
    ``out.shape + arg.shape`` (a tuple of them when ``wrt`` is a tuple).

    Works as ``jacobian(f)``, ``@jacobian`` and ``@jacobian(wrt="w")``.
    ``mode="reverse"`` costs one vjp per output element, ``mode="forward"`` one
    jvp per input element. ``argnums`` is a synonym of ``wrt`` (JAX's name).

    Args:
        func: the function to differentiate (left out: a decorator).
        wrt: the argument(s) to differentiate with respect to, by position or name, or a
            tuple of them; the first argument when not given.
        mode: ``"reverse"`` (one vjp per output element; the default) or ``"forward"``
            (one jvp per input element, and ``func`` may return a tuple of arrays).
        argnums: JAX's name for ``wrt``.

    Returns:
        A ``Jacobian``, called with ``func``'s arguments, returning an array of shape
        ``out.shape + arg.shape`` (a tuple of them for a tuple ``wrt``).

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


        def f(x, y):
            return np.sin(x) * y


        x, y = np.linspace(0.0, 1.0, 3), np.full(3, 2.0)
        J = srcgrad.jacobian(f)(x, y)
        assert np.allclose(J, np.diag(np.cos(x) * y))
        Jx, Jy = srcgrad.jacobian(f, wrt=(0, 1), mode="forward")(x, y)
        ```
    """
    wrt = resolve_wrt(wrt, argnums, "jacobian")
    if func is None:
        return lambda f: Jacobian(f, wrt, mode)
    return Jacobian(func, wrt, mode)


@overload
def hessian(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Jacobian[P]: ...
@overload
def hessian(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Callable[[Callable[P, Any]], Jacobian[P]]: ...
def hessian(
    func: Callable[..., Any] | None = None, wrt: Wrt | None = None, *, argnums: Wrt | None = None
) -> Any:
    """The Hessian of ``func``'s scalar output with respect to argument ``wrt``: an array
    of shape ``arg.shape + arg.shape``, by forward mode over the reverse-mode gradient
    (one Hessian-vector product per input element). For a tuple ``wrt``, its blocks:
    ``H[i][j]``, of shape ``arg_i.shape + arg_j.shape``, is the derivative of the gradient
    for ``wrt[i]`` with respect to ``wrt[j]`` (as ``jax.hessian`` with a tuple ``argnums``).
    ``argnums`` is a synonym of ``wrt``.

    Args:
        func: the function to differentiate (left out: a decorator).
        wrt: the argument(s) to differentiate with respect to, by position or name, or a
            tuple of them; the first argument when not given.
        argnums: JAX's name for ``wrt``.

    Returns:
        A ``Jacobian`` (of the gradient), called with ``func``'s arguments, returning an
        array of shape ``arg.shape + arg.shape``, or the blocks ``H[i][j]`` for a tuple
        ``wrt`` (for a dict of parameters, ``H[a][b]``, as ``jax.hessian`` gives).

    Raises:
        TypeError: ``func`` is not a Python function (or a derivative srcgrad made), or both
            ``wrt`` and ``argnums`` are given; at a call, arguments that do not fit.
        ValueError: ``wrt`` names no parameter of ``func``.
        UnsupportedSyntaxError: at the first call with a new kind of arguments, ``func``
            uses a construct srcgrad does not differentiate (the message names your line).
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            return np.sum(x**3)


        x = np.array([1.0, 2.0])
        assert np.allclose(srcgrad.hessian(f)(x), np.diag(6 * x))
        ```
    """
    wrt = resolve_wrt(wrt, argnums, "hessian")
    if func is None:
        return lambda f: hessian(f, wrt)
    return Jacobian(Derivative(func, "grad", wrt), wrt, mode="forward")


class HessianVectorProduct:
    """``hvp(f)(*args, v)``: the Hessian of ``f`` times ``v``, without forming the Hessian:
    forward mode over the reverse-mode gradient, at about the cost of two gradients."""

    #: (what analysis looks for to say that a differentiated function calls one)
    __srcgrad_derivative__ = True

    def __init__(self, func: Callable[..., Any], wrt: Wrt) -> None:
        self._jvp = Derivative(Derivative(func, "grad", wrt), "jvp", wrt)
        functools.update_wrapper(self, func, updated=())
        self.__wrapped__ = func

    @property
    def source(self) -> str:
        """The generated code: the jvp of the generated gradient."""
        return self._jvp.source

    def __repr__(self) -> str:
        wrt = self._jvp.wrt[0] if not self._jvp._wrt_tuple else tuple(self._jvp.wrt)
        return f"<srcgrad.hvp of {self.__wrapped__.__qualname__}, wrt={wrt!r}>"

    def __call__(self, *args: Any) -> Any:
        _, product = self._jvp(*args)
        return product


@overload
def hvp(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> HessianVectorProduct: ...
@overload
def hvp(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Callable[[Callable[..., Any]], HessianVectorProduct]: ...
def hvp(
    func: Callable[..., Any] | None = None, wrt: Wrt | None = None, *, argnums: Wrt | None = None
) -> Any:
    """A callable taking ``func``'s arguments, then one vector per ``wrt`` argument (shaped
    like it), and returning the Hessian-vector product(s). ``argnums`` is a synonym of
    ``wrt``.

    Forward mode over the reverse-mode gradient, at about the cost of two gradients; the
    Hessian is never formed.

    Args:
        func: the function to differentiate (left out: a decorator).
        wrt: the argument(s) to differentiate with respect to, by position or name, or a
            tuple of them; the first argument when not given.
        argnums: JAX's name for ``wrt``.

    Returns:
        A callable taking ``func``'s arguments, then a vector shaped like each ``wrt``
        argument, and returning the Hessian times that vector (shaped like the argument).

    Raises:
        TypeError: ``func`` is not a Python function (or a derivative srcgrad made), or both
            ``wrt`` and ``argnums`` are given; at a call, arguments that do not fit.
        ValueError: ``wrt`` names no parameter of ``func``.
        UnsupportedSyntaxError: at the first call with a new kind of arguments, ``func``
            uses a construct srcgrad does not differentiate (the message names your line).
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            return np.sum(x**3)


        x, v = np.array([1.0, 2.0]), np.array([1.0, 0.0])
        assert np.allclose(srcgrad.hvp(f)(x, v), [6.0, 0.0])
        ```
    """
    wrt = resolve_wrt(wrt, argnums, "hvp")
    if func is None:
        return lambda f: HessianVectorProduct(f, wrt)
    return HessianVectorProduct(func, wrt)


@overload
def jacfwd(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Jacobian[P]: ...
@overload
def jacfwd(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Callable[[Callable[P, Any]], Jacobian[P]]: ...
def jacfwd(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Any:
    """JAX's ``jax.jacfwd``: the Jacobian by forward mode, ``jacobian(func, wrt,
    mode="forward")`` (one jvp per input element).

    As in JAX, an int ``argnums`` (or ``wrt``) gives an array of shape ``out.shape +
    arg.shape`` and a tuple gives a tuple of them, one per argument, even a tuple of one;
    a function returning a tuple gives a tuple with an entry for each of its arrays, and a
    dict (list, dataclass...) of parameters gives a Jacobian of that structure.

    Args:
        func: the function to differentiate (left out: a decorator).
        wrt: the argument(s) to differentiate with respect to, by position or name, or a
            tuple of them; the first argument when not given.
        argnums: JAX's name for ``wrt``.

    Returns:
        A ``Jacobian``: an array of shape ``out.shape + arg.shape`` for an int ``wrt``, a
        tuple of them for a tuple.

    Raises:
        TypeError: ``func`` is not a Python function (or a derivative srcgrad made), or both
            ``wrt`` and ``argnums`` are given; at a call, arguments that do not fit.
        ValueError: ``wrt`` names no parameter of ``func``.
        UnsupportedSyntaxError: at the first call with a new kind of arguments, ``func``
            uses a construct srcgrad does not differentiate (the message names your line).
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x, y):
            return np.sin(x) * y


        x, y = np.linspace(0.0, 1.0, 3), np.full(3, 2.0)
        Jx, Jy = srcgrad.jacfwd(f, argnums=(0, 1))(x, y)
        assert np.allclose(Jx, np.diag(np.cos(x) * y)) and np.allclose(Jy, np.diag(np.sin(x)))
        ```
    """
    wrt = resolve_wrt(wrt, argnums, "jacfwd")
    if func is None:
        return lambda f: Jacobian(f, wrt, "forward")
    return Jacobian(func, wrt, "forward")


@overload
def jacrev(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Jacobian[P]: ...
@overload
def jacrev(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Callable[[Callable[P, Any]], Jacobian[P]]: ...
def jacrev(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Any:
    """JAX's ``jax.jacrev``: the Jacobian by reverse mode, ``jacobian(func, wrt,
    mode="reverse")`` (one vjp per output element).

    As in JAX, an int ``argnums`` (or ``wrt``) gives an array of shape ``out.shape +
    arg.shape`` and a tuple gives a tuple of them, even a tuple of one. Unlike JAX's, it
    takes arrays and numbers as the arguments it differentiates and a function returning
    one array (a pytree of parameters, or a tuple returned, is a ``TypeError``: use
    :func:`jacfwd`, which takes them).

    Args:
        func: the function to differentiate (left out: a decorator).
        wrt: the argument(s) to differentiate with respect to, by position or name, or a
            tuple of them; the first argument when not given.
        argnums: JAX's name for ``wrt``.

    Returns:
        A ``Jacobian``: an array of shape ``out.shape + arg.shape`` for an int ``wrt``, a
        tuple of them for a tuple.

    Raises:
        TypeError: ``func`` is not a Python function (or a derivative srcgrad made), or both
            ``wrt`` and ``argnums`` are given; at a call, arguments that do not fit, a pytree
            of parameters or a tuple returned.
        ValueError: ``wrt`` names no parameter of ``func``.
        UnsupportedSyntaxError: at the first call with a new kind of arguments, ``func``
            uses a construct srcgrad does not differentiate (the message names your line).
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x, y):
            return np.sin(x) * y


        x, y = np.linspace(0.0, 1.0, 3), np.full(3, 2.0)
        J = srcgrad.jacrev(f)(x, y)  # the same numbers as jacfwd
        assert np.allclose(J, np.diag(np.cos(x) * y))
        ```
    """
    wrt = resolve_wrt(wrt, argnums, "jacrev")
    if func is None:
        return lambda f: Jacobian(f, wrt, "reverse")
    return Jacobian(func, wrt, "reverse")


class ElementwiseGrad(Generic[P]):
    """What :func:`elementwise_grad` returns: called with ``func``'s arguments, the sum of
    the Jacobian's rows, ``ones @ J`` (the derivative itself, for an elementwise
    function). See :func:`elementwise_grad`."""

    #: (what analysis looks for to say that a differentiated function calls one)
    __srcgrad_derivative__ = True

    def __init__(self, func: Callable[..., Any], wrt: Wrt, mode: str = "reverse") -> None:
        if mode not in _MODES:
            raise ValueError(
                f"elementwise_grad's mode must be 'reverse' or 'forward', not {mode!r}"
            )
        if isinstance(wrt, (tuple, list)):
            raise TypeError(
                f"elementwise_grad differentiates with respect to one argument (as autograd's "
                f"argnum does), not {wrt!r}: make one for each argument"
            )
        self.mode = mode
        #: the first elementwise_grad, where this is the second
        self._first: ElementwiseGrad | None = None
        if isinstance(func, ElementwiseGrad):
            if func._first is not None:
                raise TypeError(
                    "srcgrad's elementwise_grad goes to the second derivative "
                    "(elementwise_grad(elementwise_grad(f))), not beyond: for a higher one, "
                    "write the derivative you know as a function and differentiate that"
                )
            self._first = func
            func = func.__wrapped__
        vjp = Derivative(func, "vjp", wrt)
        if self._first is not None:
            if vjp.wrt != self._first.wrt:
                raise TypeError(
                    f"elementwise_grad of {self._first!r} with respect to {vjp.wrt[0]!r}: "
                    "srcgrad takes both elementwise derivatives with respect to one argument"
                )
            # the Jacobian of g = ones @ J is a sum of Hessians, symmetric: ones @ J_g is
            # J_g @ ones, the jvp of the vjp along ones
            self._derivative: Any = Derivative(vjp, "jvp", wrt)
        elif mode == "reverse":
            self._derivative = vjp
        else:
            self._jacobian = Jacobian(func, wrt, "forward")
            self._derivative = self._jacobian._inner
        self._bound = vjp  # (binds a call's arguments to func's parameters)
        functools.update_wrapper(self, func, updated=())
        self.__wrapped__ = func
        self.wrt = vjp.wrt

    @property
    def source(self) -> str:
        """The generated code run: the vjp of ``func`` (reverse mode), its jvp (forward
        mode), or the jvp of its vjp (a second elementwise_grad)."""
        return self._derivative.source

    def __repr__(self) -> str:
        what = "elementwise_grad of elementwise_grad" if self._first else "elementwise_grad"
        return (
            f"<srcgrad.{what} of {self.__wrapped__.__qualname__}, wrt={self.wrt[0]!r}, "
            f"mode={self.mode!r}>"
        )

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        func = self.__wrapped__
        out = func(*_copied(list(args)), **_copied([kwargs])[0])  # (it may write into them)
        if pytree.is_node(out):
            raise TypeError(
                f"elementwise_grad takes a function returning an array or a number; "
                f"{func.__qualname__} returns a {type(out).__name__}: make one function for "
                "each of its arrays, or use srcgrad.vjp with a cotangent for each"
            )
        if self._first is None and self.mode == "reverse":
            return self._derivative(*args, _ones_like(out), **kwargs)
        values = self._bound._bind(args, kwargs)
        arg = values[self._bound._wrt_index[0]]
        if self._first is not None:
            ones = pytree.map_leaves(_ones_like, arg)  # (a pytree's: ones at every leaf)
            _, product = self._derivative(*values, _ones_like(out), ones)
            return product
        columns = self._jacobian(*values)
        axes = tuple(range(np.ndim(out)))
        if not axes:  # (a scalar output: the gradient)
            return columns
        return pytree.map_leaves(
            lambda c, a: _like_jacobian(np.sum(c, axis=axes), out, a), columns, arg
        )


def _ones_like(x: Any) -> Any:
    """Ones of the shape, dtype (a float one) and array module of ``x``; a number: 1.0."""
    if _is_array(x):
        return _module_of(x).ones_like(x, dtype=np.result_type(x.dtype, np.float32))
    return type(x)(1.0) if isinstance(x, np.floating) else 1.0


@overload
def elementwise_grad(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
) -> ElementwiseGrad[P]: ...
@overload
def elementwise_grad(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
) -> Callable[[Callable[P, Any]], ElementwiseGrad[P]]: ...
def elementwise_grad(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
) -> Any:
    """autograd's ``elementwise_grad``: the gradient of the sum of ``func``'s outputs with
    respect to one argument, ``ones @ J``, the vjp with a cotangent of ones. For an
    elementwise function (a diagonal Jacobian: ``np.tanh``, a polynomial evaluated on an
    array of points) it is the derivative at every element, in one pass.

    For a function that is not elementwise it is still ``ones @ J``, the sum of the
    Jacobian's rows (as autograd's), not the derivative of each output. ``func`` returns
    one array or number. ``mode="reverse"`` runs ``func`` once to learn its output's
    shape, then its generated vjp; ``mode="forward"`` its jvp once per input element (the
    Jacobian's columns, summed: for small inputs). Applied to an ``elementwise_grad``,
    it gives the second derivative (forward mode over the reverse-mode vjp: the Jacobian
    of ``ones @ J`` is a sum of Hessians, so symmetric); not beyond. ``argnums`` is a
    synonym of ``wrt`` (autograd's ``argnum``), which names one argument.

    Args:
        func: the function to differentiate, returning one array or number (or an
            ``elementwise_grad``, for the second derivative); left out: a decorator.
        wrt: the one argument to differentiate with respect to, by position or name; the
            first when not given.
        mode: ``"reverse"`` (the default) or ``"forward"``.
        argnums: autograd's ``argnum``, JAX's ``argnums``: a name for ``wrt``.

    Returns:
        A callable taking ``func``'s arguments and returning ``ones @ J``, shaped like the
        ``wrt`` argument.

    Raises:
        TypeError: ``wrt`` is a tuple, both ``wrt`` and ``argnums`` are given, or a third
            ``elementwise_grad`` is applied.
        ValueError: ``mode`` is not ``"reverse"`` or ``"forward"``.
        UnsupportedSyntaxError: at the first call, ``func`` uses a construct srcgrad does
            not differentiate.
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            return np.tanh(x)


        xs = np.linspace(-7, 7, 200)
        dy = srcgrad.elementwise_grad(f)(xs)
        assert np.allclose(dy, 1 - np.tanh(xs) ** 2)
        d2y = srcgrad.elementwise_grad(srcgrad.elementwise_grad(f))(xs)
        ```
    """
    wrt = resolve_wrt(wrt, argnums, "elementwise_grad")
    if func is None:
        return lambda f: ElementwiseGrad(f, wrt, mode)
    return ElementwiseGrad(func, wrt, mode)
