"""autograd's ``elementwise_grad``: ``ones @ J``, the vjp with a cotangent of ones (the
derivative at every element of an elementwise function), by reverse mode, by forward
mode (the columns of a :class:`~srcgrad.jacobian_assembly.Jacobian`, summed), or, for
the second derivative, by forward mode over reverse mode."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Generic, overload

import numpy as np

from . import pytree
from .arguments import _MODES, Wrt, _is_array, resolve_wrt
from .backends import module_of as _module_of
from .derivative import Derivative, P
from .jacobian_assembly import Jacobian, _like_jacobian
from .results import _copied


class ElementwiseGrad(Generic[P]):
    """What :func:`elementwise_grad` returns: called with ``func``'s arguments, the sum of
    the Jacobian's rows, ``ones @ J`` (the derivative itself, for an elementwise
    function). See :func:`elementwise_grad`."""

    #: (what analysis looks for to say that a differentiated function calls one)
    __srcgrad_derivative__ = True

    def __init__(
        self, func: Callable[..., Any], wrt: Wrt, mode: str = "reverse", compile: str | None = None
    ) -> None:
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
        runs_vjp = self._first is None and mode == "reverse"  # (else it only binds arguments)
        vjp = Derivative(func, "vjp", wrt, compile=compile if runs_vjp else None)
        if self._first is not None:
            if vjp.wrt != self._first.wrt:
                raise TypeError(
                    f"elementwise_grad of {self._first!r} with respect to {vjp.wrt[0]!r}: "
                    "srcgrad takes both elementwise derivatives with respect to one argument"
                )
            # the Jacobian of g = ones @ J is a sum of Hessians, symmetric: ones @ J_g is
            # J_g @ ones, the jvp of the vjp along ones
            self._derivative: Any = Derivative(vjp, "jvp", wrt, compile=compile)
        elif mode == "reverse":
            self._derivative = vjp
        else:
            self._jacobian = Jacobian(func, wrt, "forward", compile=compile)
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
    compile: str | None = None,
) -> ElementwiseGrad[P]: ...
@overload
def elementwise_grad(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Callable[[Callable[P, Any]], ElementwiseGrad[P]]: ...
def elementwise_grad(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
    compile: str | None = None,
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
        compile: as :func:`srcgrad.grad`'s: ``None`` (plain Python, the default),
            ``"numba"`` or ``"numba-or-python"`` (the generated code it runs, compiled by
            ``numba.njit``).

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
        return lambda f: ElementwiseGrad(f, wrt, mode, compile)
    return ElementwiseGrad(func, wrt, mode, compile)
