"""The public transformations: ``grad``, ``value_and_grad``, ``jvp``, ``vjp``.

Each returns a :class:`Derivative`, a callable that generates its code on
the first call with a given kind of arguments (their ranks and backend),
caches it, and runs it. ``.source`` is the generated module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .arguments import Wrt
from .derivative import Derivative

if TYPE_CHECKING:  # (jacobians.py builds on the derivative object)
    from .jacobians import HessianVectorProduct, Jacobian


def grad(
    func: Callable[..., Any] | None = None,
    wrt: Wrt = 0,
    *,
    mode: str = "reverse",
    has_aux: bool = False,
) -> Any:
    """The gradient of ``func``'s scalar output with respect to argument(s) ``wrt``.

    Works as ``grad(f)``, ``@grad`` and ``@grad(wrt="w")``. ``wrt`` names
    positional parameters by index or name; a tuple gives a tuple of
    gradients. ``mode="forward"`` computes the same numbers with
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
    """
    return _make("grad", func, wrt, mode=mode, has_aux=has_aux)


def value_and_grad(
    func: Callable[..., Any] | None = None,
    wrt: Wrt = 0,
    *,
    mode: str = "reverse",
    has_aux: bool = False,
) -> Any:
    """Like :func:`grad` (``mode`` too: ``"reverse"``, ``"forward"`` or ``"auto"``), but
    the callable returns ``(func(...), gradient)``; with ``has_aux=True``, ``((value,
    aux), gradient)``."""
    return _make("value_and_grad", func, wrt, mode=mode, has_aux=has_aux)


def jvp(func: Callable[..., Any] | None = None, wrt: Wrt = 0) -> Any:
    """Forward mode: a callable taking ``func``'s arguments, then one tangent per
    ``wrt`` argument, and returning ``(func(...), directional derivative)``."""
    return _make("jvp", func, wrt)


def vjp(func: Callable[..., Any] | None = None, wrt: Wrt = 0) -> Any:
    """Reverse mode: a callable taking ``func``'s arguments, then the cotangent
    ``dout`` (shaped like the output), and returning the vector-Jacobian
    product(s) with respect to ``wrt``."""
    return _make("vjp", func, wrt)


def _make(kind: str, func: Any, wrt: Wrt, **options: Any) -> Any:
    if func is None:
        return lambda f: Derivative(f, kind, wrt, **options)
    if not callable(func) and not isinstance(func, Derivative):
        raise TypeError(
            f"{kind} takes a function to differentiate, then options: "
            f"use {kind}(f, wrt=...) or @{kind}(wrt=...); got {func!r}"
        )
    return Derivative(func, kind, wrt, **options)


def show(derivative: Derivative | Jacobian | HessianVectorProduct, file: Any = None) -> None:
    """Print the generated source of ``derivative`` with line numbers."""
    from .jacobians import HessianVectorProduct, Jacobian

    if not isinstance(derivative, (Derivative, Jacobian, HessianVectorProduct)):
        raise TypeError(
            f"show takes an object made by a srcgrad transformation, got {derivative!r}"
        )
    lines = derivative.source.splitlines()
    width = len(str(len(lines)))
    print("\n".join(f"{i:>{width}}  {line}" for i, line in enumerate(lines, 1)), file=file)
