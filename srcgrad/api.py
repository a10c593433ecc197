"""The public transformations: ``grad``, ``value_and_grad``, ``jvp``, ``vjp``.

Each returns a :class:`Derivative`, a callable that generates its code on
the first call with a given kind of arguments (their ranks and backend),
caches it, and runs it. ``.source`` is the generated module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, overload

from .arguments import Wrt, resolve_wrt
from .derivative import Derivative, P
from .results import _copied

if TYPE_CHECKING:  # (jacobians.py builds on the derivative object)
    from .jacobians import ElementwiseGrad, HessianVectorProduct, Jacobian


@overload
def grad(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    has_aux: bool = False,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Derivative[P]: ...
@overload
def grad(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    has_aux: bool = False,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Callable[[Callable[P, Any]], Derivative[P]]: ...
def grad(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    has_aux: bool = False,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Any:
    """The gradient of ``func``'s scalar output with respect to argument(s) ``wrt``.

    Works as ``grad(f)``, ``@grad`` and ``@grad(wrt="w")``. ``wrt`` names
    positional parameters by index or name; a tuple gives a tuple of
    gradients; the first argument when not given. ``argnums`` is a synonym of ``wrt``
    (JAX's ``jax.grad(f, argnums=1)``; giving both is a ``TypeError``), here and in every
    transformation. ``mode="forward"`` computes the same numbers with
    forward-mode code: for up to ``srcgrad.passes.FORWARD_LANES`` (8) input
    elements in all, one pass that computes the primal once and carries a
    tangent per element; for more, one pass per element. ``mode="auto"``
    decides at each call from the arguments: forward mode when the ``wrt``
    arguments are one or two real numbers in all (``srcgrad.passes.AUTO_FORWARD``;
    scalars, 0-d arrays, leaves of pytrees), reverse mode otherwise, arrays of
    rank 1 or more included (a derivative of it differentiates the reverse-mode
    code). With ``has_aux=True``
    ``func`` returns ``(value, aux)``, only ``value`` is differentiated, and
    the callable returns ``(gradient, aux)`` (JAX's meaning).

    Args:
        func: the function to differentiate, a Python function whose source srcgrad can
            read (or a derivative, for a higher derivative). Left out, ``grad`` returns a
            decorator: ``@grad(wrt="w")``.
        wrt: the argument(s) to differentiate with respect to, by position (``0``) or name
            (``"w"``), or a tuple of them; the first argument when not given. Each may be
            an array, a number or a pytree (dicts, lists, tuples, namedtuples, dataclasses)
            of them.
        mode: ``"reverse"`` (the default), ``"forward"`` or ``"auto"``.
        has_aux: ``func`` returns ``(value, aux)``; only ``value`` is differentiated.
        argnums: JAX's name for ``wrt``.
        compile: ``None`` (plain Python, the default), ``"numba"`` (compile the derivative
            with ``numba.njit``; what cannot compile is a ``CompileError``) or
            ``"numba-or-python"`` (a ``CompileWarning`` and plain Python instead).

    Returns:
        A ``Derivative``, called with ``func``'s arguments, which returns the gradient with
        the structure, shape and dtype of the ``wrt`` argument (a tuple of them for a tuple
        ``wrt``; ``(gradient, aux)`` with ``has_aux``). ``.source`` is its generated code.

    Raises:
        TypeError: ``func`` is not a Python function (or a derivative srcgrad made), or both
            ``wrt`` and ``argnums`` are given; at a call, arguments that do not fit.
        ValueError: ``wrt`` names no parameter of ``func``, or names one twice.
        UnsupportedSyntaxError: at the first call with a new kind of arguments, ``func``
            uses a construct srcgrad does not differentiate (the message names your line
            and says what to write instead).
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def loss(w, x):
            return np.sum(np.tanh(x @ w) ** 2)


        x = np.ones((4, 3))
        w_bar = srcgrad.grad(loss)(np.zeros(3), x)
        w_bar, x_bar = srcgrad.grad(loss, wrt=("w", "x"))(np.zeros(3), x)
        dw = srcgrad.grad(loss, argnums=0, mode="forward")(np.zeros(3), x)
        print(srcgrad.grad(loss).source)
        ```
    """
    wrt = resolve_wrt(wrt, argnums, "grad")
    return _make("grad", func, wrt, mode=mode, has_aux=has_aux, compile=compile)


@overload
def value_and_grad(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    has_aux: bool = False,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Derivative[P]: ...
@overload
def value_and_grad(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    has_aux: bool = False,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Callable[[Callable[P, Any]], Derivative[P]]: ...
def value_and_grad(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    mode: str = "reverse",
    has_aux: bool = False,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Any:
    """Like :func:`grad` (``mode`` too: ``"reverse"``, ``"forward"`` or ``"auto"``), but
    the callable returns ``(func(...), gradient)``; with ``has_aux=True``, ``((value,
    aux), gradient)``.

    Args:
        func: the function to differentiate (left out: a decorator).
        wrt: the argument(s) to differentiate with respect to, by position or name, or a
            tuple of them; the first argument when not given.
        mode: ``"reverse"`` (the default), ``"forward"`` or ``"auto"``.
        has_aux: ``func`` returns ``(value, aux)``; only ``value`` is differentiated.
        argnums: JAX's name for ``wrt``.
        compile: ``None`` (plain Python, the default), ``"numba"`` (compile the derivative
            with ``numba.njit``; what cannot compile is a ``CompileError``) or
            ``"numba-or-python"`` (a ``CompileWarning`` and plain Python instead).

    Returns:
        A ``Derivative`` returning ``(value, gradient)`` (``((value, aux), gradient)`` with
        ``has_aux``), from one run of the generated code.

    Raises:
        TypeError: ``func`` is not a Python function (or a derivative srcgrad made), or both
            ``wrt`` and ``argnums`` are given; at a call, arguments that do not fit.
        ValueError: ``wrt`` names no parameter of ``func``, or names one twice.
        UnsupportedSyntaxError: at the first call with a new kind of arguments, ``func``
            uses a construct srcgrad does not differentiate (the message names your line
            and says what to write instead).
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def loss(w, x):
            return np.sum((x @ w - 1.0) ** 2)


        value, w_bar = srcgrad.value_and_grad(loss)(np.zeros(3), np.ones((4, 3)))
        assert value == 4.0
        ```
    """
    wrt = resolve_wrt(wrt, argnums, "value_and_grad")
    return _make("value_and_grad", func, wrt, mode=mode, has_aux=has_aux, compile=compile)


@overload
def jvp(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
) -> Derivative[...]: ...
@overload
def jvp(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Callable[[Callable[..., Any]], Derivative[...]]: ...
def jvp(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    compile: str | None = None,
) -> Any:
    """Forward mode: a callable taking ``func``'s arguments, then one tangent per
    ``wrt`` argument, and returning ``(func(...), directional derivative)``.

    JAX's ``jax.jvp(f, primals, tangents)`` takes the primals and tangents as two tuples;
    srcgrad's derivative takes them one after the other: ``jvp(f, wrt=(0, 1))(x, y, dx,
    dy)``.

    Args:
        func: the function to differentiate (left out: a decorator).
        wrt: the argument(s) the tangents are for, by position or name, or a tuple of
            them; the first argument when not given.
        argnums: JAX's name for ``wrt``.
        compile: ``None`` (plain Python, the default), ``"numba"`` (compile the derivative
            with ``numba.njit``; what cannot compile is a ``CompileError``) or
            ``"numba-or-python"`` (a ``CompileWarning`` and plain Python instead).

    Returns:
        A ``Derivative`` taking ``func``'s arguments, then a tangent shaped like each
        ``wrt`` argument, and returning ``(func(...), tangent of the output)``: one forward
        pass, no tape.

    Raises:
        TypeError: ``func`` is not a Python function (or a derivative srcgrad made), or both
            ``wrt`` and ``argnums`` are given; at a call, arguments that do not fit.
        ValueError: ``wrt`` names no parameter of ``func``, or names one twice.
        UnsupportedSyntaxError: at the first call with a new kind of arguments, ``func``
            uses a construct srcgrad does not differentiate (the message names your line
            and says what to write instead).
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            return np.sin(x) * x


        x = np.linspace(0.0, 1.0, 4)
        out, out_dot = srcgrad.jvp(f)(x, np.ones(4))
        assert np.allclose(out_dot, np.cos(x) * x + np.sin(x))
        ```
    """
    return _make("jvp", func, resolve_wrt(wrt, argnums, "jvp"), compile=compile)


@overload
def vjp(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    return_fn: Literal[False] = False,
    compile: str | None = None,
) -> Derivative[...]: ...
@overload
def vjp(
    func: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    return_fn: Literal[True],
    compile: str | None = None,
) -> VjpWithFunction[P]: ...
@overload
def vjp(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    return_fn: Literal[False] = False,
    compile: str | None = None,
) -> Callable[[Callable[..., Any]], Derivative[...]]: ...
@overload
def vjp(
    func: None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    return_fn: Literal[True],
    compile: str | None = None,
) -> Callable[[Callable[P, Any]], VjpWithFunction[P]]: ...
def vjp(
    func: Callable[..., Any] | None = None,
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    return_fn: bool = False,
    compile: str | None = None,
) -> Any:
    """Reverse mode: a callable taking ``func``'s arguments, then the cotangent
    ``dout`` (shaped like the output), and returning the vector-Jacobian
    product(s) with respect to ``wrt``.

    With ``return_fn=True``, JAX's form (``out, vjp_fn = jax.vjp(f, x, y)``): a callable
    taking ``func``'s arguments alone and returning ``(func(...), vjp_fn)``, where
    ``vjp_fn(dout)`` returns what ``vjp(func, wrt)(*args, dout)`` does (one product for
    an int ``wrt``, a tuple for a tuple; JAX's ``vjp_fn`` gives a tuple with one for
    every argument: ``wrt=(0, 1)`` for a function of two)::

        out, vjp_fn = srcgrad.vjp(f, argnums=(0, 1), return_fn=True)(x, y)
        x_bar, y_bar = vjp_fn(np.ones_like(out))

    ``vjp_fn`` keeps copies of the arguments, so it gives the products at the values
    the call was given, and runs the generated vjp code (which computes ``func``'s
    value again: srcgrad records nothing between the two calls).

    Args:
        func: the function to differentiate (left out: a decorator).
        wrt: the argument(s) the products are for, by position or name, or a tuple of
            them; the first argument when not given.
        argnums: JAX's name for ``wrt``.
        compile: ``None`` (plain Python, the default), ``"numba"`` (compile the derivative
            with ``numba.njit``; what cannot compile is a ``CompileError``) or
            ``"numba-or-python"`` (a ``CompileWarning`` and plain Python instead).
        return_fn: return ``(func(...), vjp_fn)`` from the call, as ``jax.vjp`` does,
            instead of taking the cotangent as the last argument.

    Returns:
        A ``Derivative`` taking ``func``'s arguments, then a cotangent ``dout`` shaped like
        the output (one per element of a tuple output), and returning the product(s)
        ``dout @ J`` shaped like the ``wrt`` argument(s); with ``return_fn=True``, a
        callable returning ``(func(...), vjp_fn)``.

    Raises:
        TypeError: ``func`` is not a Python function (or a derivative srcgrad made), or both
            ``wrt`` and ``argnums`` are given; at a call, arguments that do not fit.
        ValueError: ``wrt`` names no parameter of ``func``, or names one twice.
        UnsupportedSyntaxError: at the first call with a new kind of arguments, ``func``
            uses a construct srcgrad does not differentiate (the message names your line
            and says what to write instead).
        NoDerivativeError: at the first call, ``func`` calls a function srcgrad has no rule
            for on a value it differentiates.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x, y):
            return np.sin(x) * y


        x, y = np.linspace(0.0, 1.0, 4), np.full(4, 2.0)
        x_bar = srcgrad.vjp(f)(x, y, np.ones(4))
        assert np.allclose(x_bar, np.cos(x) * y)
        out, vjp_fn = srcgrad.vjp(f, argnums=(0, 1), return_fn=True)(x, y)
        x_bar, y_bar = vjp_fn(np.ones(4))
        ```
    """
    wrt = resolve_wrt(wrt, argnums, "vjp")
    if return_fn:
        if func is None:
            return lambda f: VjpWithFunction(f, wrt, compile)
        return VjpWithFunction(_checked(func, "vjp"), wrt, compile)
    return _make("vjp", func, wrt, compile=compile)


class VjpWithFunction(Generic[P]):
    """What ``vjp(func, wrt, return_fn=True)`` returns: called with ``func``'s arguments,
    ``(func(...), vjp_fn)``, as ``jax.vjp`` returns them (see :func:`vjp`)."""

    #: (what analysis looks for to say that a differentiated function calls one)
    __srcgrad_derivative__ = True

    def __init__(self, func: Callable[..., Any], wrt: Wrt, compile: str | None = None) -> None:
        self._vjp = Derivative(func, "vjp", wrt, compile=compile)
        functools.update_wrapper(self, func, updated=())
        self.__wrapped__ = func

    @property
    def source(self) -> str:
        """The generated code ``vjp_fn`` runs: the vjp of ``func``."""
        return self._vjp.source

    def __repr__(self) -> str:
        inner = self._vjp
        wrt = inner.wrt[0] if not inner._wrt_tuple else tuple(inner.wrt)
        what = inner.__wrapped__
        name = repr(what) if isinstance(what, Derivative) else what.__qualname__
        return f"<srcgrad.vjp of {name}, wrt={wrt!r}, return_fn=True>"

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> tuple[Any, Callable[[Any], Any]]:
        # the arguments as they are now, apart from the caller's (which may change
        # later) and from the call of func (which may write into its own)
        saved = _copied(list(args))
        saved_keywords = _copied([kwargs])[0]
        out = self.__wrapped__(*_copied(saved), **_copied([saved_keywords])[0])
        products = self._vjp

        def vjp_fn(dout: Any) -> Any:
            """The vector-Jacobian product(s) of ``dout`` at the arguments of the call."""
            return products(*saved, dout, **saved_keywords)

        return out, vjp_fn


def _checked(func: Any, kind: str) -> Any:
    if not callable(func) and not isinstance(func, Derivative):
        raise TypeError(
            f"{kind} takes a function to differentiate, then options: "
            f"use {kind}(f, wrt=...) or @{kind}(wrt=...); got {func!r}"
        )
    return func


def _make(kind: str, func: Any, wrt: Wrt, **options: Any) -> Any:
    if func is None:
        return lambda f: Derivative(f, kind, wrt, **options)
    return Derivative(_checked(func, kind), kind, wrt, **options)


def show(
    derivative: Derivative[Any]
    | Jacobian[Any]
    | HessianVectorProduct
    | ElementwiseGrad[Any]
    | VjpWithFunction[Any],
    file: Any = None,
) -> None:
    """Print the generated source of ``derivative`` with line numbers.

    Args:
        derivative: what a srcgrad transformation returned (``grad``, ``jvp``, ``vjp``,
            ``jacobian``, ``hessian``, ``hvp``, ``elementwise_grad``...). Before its first
            call it shows the code for arguments of any rank; after, the code the last
            call ran.
        file: where to print (a text file object); ``sys.stdout`` when not given.

    Returns:
        None: it prints.

    Raises:
        TypeError: ``derivative`` is not something a srcgrad transformation made.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            return np.sum(np.sin(x) * x)


        df = srcgrad.grad(f)
        df(np.ones(3))
        srcgrad.show(df)  # the generated module, its lines numbered
        ```
    """
    from .jacobians import ElementwiseGrad, HessianVectorProduct, Jacobian

    made = (Derivative, Jacobian, HessianVectorProduct, ElementwiseGrad, VjpWithFunction)
    if not isinstance(derivative, made):
        raise TypeError(
            f"show takes an object made by a srcgrad transformation, got {derivative!r}"
        )
    lines = derivative.source.splitlines()
    width = len(str(len(lines)))
    print("\n".join(f"{i:>{width}}  {line}" for i, line in enumerate(lines, 1)), file=file)
