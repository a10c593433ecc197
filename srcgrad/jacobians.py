"""Jacobians, Hessians and Hessian-vector products: compositions of the derivatives
of :mod:`srcgrad.derivative` (a Jacobian row by row or column by column, a Hessian as the
Jacobian of the gradient, an HVP as forward mode over reverse mode). The Jacobian object
itself is :mod:`srcgrad.jacobian_assembly`'s; ``elementwise_grad`` is
:mod:`srcgrad.elementwise_gradient`'s."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, overload

from .arguments import Wrt, resolve_wrt
from .derivative import Derivative, P
from .elementwise_gradient import ElementwiseGrad, elementwise_grad  # noqa: F401  (srcgrad's)
from .jacobian_assembly import Jacobian


@overload
def jacobian(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Jacobian[P]: ...
@overload
def jacobian(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Callable[[Callable[P, Any]], Jacobian[P]]: ...
def jacobian(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    argnums: Wrt | None = None,
    compile: str | None = None,
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
        compile: as :func:`srcgrad.grad`'s: ``None`` (plain Python, the default),
            ``"numba"`` or ``"numba-or-python"`` (the generated code it runs, compiled by
            ``numba.njit``).

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
        return lambda f: Jacobian(f, wrt, mode, compile=compile)
    return Jacobian(func, wrt, mode, compile=compile)


@overload
def hessian(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Jacobian[P]: ...
@overload
def hessian(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Callable[[Callable[P, Any]], Jacobian[P]]: ...
def hessian(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
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
        compile: as :func:`srcgrad.grad`'s: ``None`` (plain Python, the default),
            ``"numba"`` or ``"numba-or-python"`` (the generated code it runs, compiled by
            ``numba.njit``).

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
        return lambda f: hessian(f, wrt, compile=compile)
    return Jacobian(Derivative(func, "grad", wrt), wrt, mode="forward", compile=compile)


class HessianVectorProduct:
    """``hvp(f)(*args, v)``: the Hessian of ``f`` times ``v``, without forming the Hessian:
    forward mode over the reverse-mode gradient, at about the cost of two gradients."""

    #: (what analysis looks for to say that a differentiated function calls one)
    __srcgrad_derivative__ = True

    def __init__(self, func: Callable[..., Any], wrt: Wrt, compile: str | None = None) -> None:
        self._jvp = Derivative(Derivative(func, "grad", wrt), "jvp", wrt, compile=compile)
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
    compile: str | None = None,
) -> HessianVectorProduct: ...
@overload
def hvp(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Callable[[Callable[..., Any]], HessianVectorProduct]: ...
def hvp(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
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
        compile: as :func:`srcgrad.grad`'s: ``None`` (plain Python, the default),
            ``"numba"`` or ``"numba-or-python"`` (the generated code it runs, compiled by
            ``numba.njit``).

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
        return lambda f: HessianVectorProduct(f, wrt, compile)
    return HessianVectorProduct(func, wrt, compile)


@overload
def jacfwd(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Jacobian[P]: ...
@overload
def jacfwd(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Callable[[Callable[P, Any]], Jacobian[P]]: ...
def jacfwd(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
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
        compile: as :func:`srcgrad.grad`'s: ``None`` (plain Python, the default),
            ``"numba"`` or ``"numba-or-python"`` (the generated code it runs, compiled by
            ``numba.njit``).

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
        return lambda f: Jacobian(f, wrt, "forward", compile=compile)
    return Jacobian(func, wrt, "forward", compile=compile)


@overload
def jacrev(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Jacobian[P]: ...
@overload
def jacrev(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Callable[[Callable[P, Any]], Jacobian[P]]: ...
def jacrev(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
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
        compile: as :func:`srcgrad.grad`'s: ``None`` (plain Python, the default),
            ``"numba"`` or ``"numba-or-python"`` (the generated code it runs, compiled by
            ``numba.njit``).

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
        return lambda f: Jacobian(f, wrt, "reverse", compile=compile)
    return Jacobian(func, wrt, "reverse", compile=compile)
