"""Checking derivatives: ``check_grads`` and hypothesis strategies.

This module is public, and is what srcgrad's own tests use::

    from srcgrad.testing import check_grads
    check_grads(f, (x, y), wrt=0)

``check_grads`` compares reverse mode, forward mode and central finite
differences along random directions, with an inner-product test for array
outputs: for random ``u`` (shaped like the output) and ``v`` (like the
inputs), ``<u, J v>`` from forward mode, ``<J^T u, v>`` from reverse mode and
``<u, (f(x + h v) - f(x - h v)) / 2h>`` must agree.

``verify`` (see :mod:`srcgrad.verify`) checks a gradient, srcgrad's or your own, at
many inputs hypothesis draws, and shrinks a disagreement to a small failing input.

The strategies (``arrays``, ``broadcastable_shapes``) and ``verify`` need hypothesis,
which the ``test`` extra installs; ``check_grads`` needs only numpy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import pytree
from .api import jvp, vjp
from .arguments import resolve_wrt
from .verify import gradient_test, verify
from .verify_rules import verify_rule

__all__ = [
    "arrays",
    "broadcastable_shapes",
    "check_grads",
    "gradient_test",
    "verify",
    "verify_rule",
]


def _tuple(wrt: int | str | Sequence[int | str]) -> tuple:
    return tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)


def _positions(func: Callable[..., Any], wrt: tuple) -> list[int]:
    import inspect

    params = list(inspect.signature(func).parameters)
    return [params.index(w) if isinstance(w, str) else w % len(params) for w in wrt]


def _inner(a: Any, b: Any) -> float:
    """The inner product of two values of one structure (arrays, numbers, or pytrees of
    them: the sum over their leaves)."""
    return sum(
        float(np.sum(np.asarray(x, dtype=float) * np.asarray(y, dtype=float)))
        for x, y in zip(pytree.leaves(a), pytree.leaves(b), strict=True)
    )


def _like(x: Any, rng: np.random.Generator) -> Any:
    """A random value of the structure, shapes and floating dtypes of ``x``."""

    def leaf(a: Any) -> Any:
        v = rng.standard_normal(np.shape(a))
        return (
            float(v)
            if np.ndim(a) == 0 and not isinstance(a, np.ndarray)
            else v.astype(np.result_type(a, np.float32))
        )

    return pytree.map_leaves(leaf, x)


def _moved(x: Any, v: Any, step: float) -> Any:
    """``x + step * v``, leaf by leaf."""
    return pytree.map_leaves(lambda a, b: a + step * b, x, v)


def check_grads(
    func: Callable[..., Any],
    args: Sequence[Any],
    wrt: int | str | Sequence[int | str] | None = None,
    modes: Sequence[str] = ("forward", "reverse"),
    order: int = 1,
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    seed: int = 0,
    *,
    argnums: int | str | Sequence[int | str] | None = None,
) -> None:
    """Check srcgrad's derivatives of ``func`` at ``args`` against finite differences.

    ``wrt`` (or its synonym ``argnums``, JAX's name) chooses the arguments checked: the
    first when neither is given.

    Arguments (and outputs) may be pytrees (dicts, lists, tuples, dataclasses of arrays
    and numbers): directions are random leaf by leaf, and the modes are compared
    element by element of each leaf.

    ``modes`` chooses the modes checked (``"forward"``, ``"reverse"``).
    Tolerances default to values suited to the arguments' precision. Raises
    ``AssertionError`` naming the quantity, both values and their difference.
    ``order=2`` also checks the second derivative: forward mode over the
    reverse-mode code (``v . d(vjp(u))/dx . v``) against central differences
    of the reverse-mode directional derivative.

    Args:
        func: the function to check (srcgrad differentiates it).
        args: its arguments: arrays, numbers or pytrees of them; never modified.
        wrt: the argument(s) checked, by position or name; the first when not given.
        modes: the modes checked, ``"forward"`` and/or ``"reverse"``.
        order: 1, or 2 to check the second derivative too.
        atol: absolute tolerance (default: from the arguments' precision).
        rtol: relative tolerance (default: from the arguments' precision).
        eps: the finite-difference step (default: from the arguments' precision).
        seed: the seed of the random directions.
        argnums: JAX's name for ``wrt``.

    Returns:
        None, when every check agrees.

    Raises:
        AssertionError: two ways of computing a derivative disagree (the message names
            the quantity, both values and their difference).
        ValueError: ``order`` or ``modes`` is not one srcgrad checks.
        TypeError: both ``wrt`` and ``argnums`` are given.
        UnsupportedSyntaxError: srcgrad refuses ``func`` (see the Sharp edges page).

    Example:
        ```python
        import numpy as np

        from srcgrad.testing import check_grads


        def f(x, y):
            return np.sum(np.sin(x) * y**2)


        check_grads(f, (np.ones(3), np.full(3, 0.5)), wrt=(0, 1), order=2)
        ```
    """
    _check_options(order, modes)
    args = list(args)
    wrt_t = _tuple(resolve_wrt(wrt, argnums, "check_grads"))
    positions = _positions(func, wrt_t)
    single, eps, atol, rtol = _tolerances(func, args, positions, eps, atol, rtol)
    rng = np.random.default_rng(seed)
    out = func(*_fresh(args))  # (a function may write into its arguments)
    u = _like(out, rng)
    vs = [_like(args[i], rng) for i in positions]
    numeric = _inner(u, _central_difference(func, args, positions, vs, eps))
    results = {"finite differences": numeric}
    if "forward" in modes:
        results["forward mode"] = _forward_directional(func, args, wrt_t, vs, u, out, atol, rtol)
    if "reverse" in modes:
        results["reverse mode"] = _reverse_directional(func, args, wrt_t, positions, vs, u)
    _assert_agree(func, results, max(1.0, abs(numeric)), atol, rtol, eps)
    if "forward" in modes and "reverse" in modes:
        _compare_full(func, args, wrt_t, positions, rng, atol, rtol)
    if order == 2:
        eps2 = 1e-2 if single else 1e-5
        _check_second_order(func, args, wrt_t, positions, u, vs, eps2, 10 * atol, 10 * rtol)


def _fresh(args: Sequence[Any]) -> list[Any]:
    """Copies of ``args``, for a call of the user's function, which may write into them."""
    return [copy.deepcopy(a) for a in args]


def _check_options(order: int, modes: Sequence[str]) -> None:
    if order not in (1, 2):
        raise ValueError(f"check_grads checks order 1 or 2, not {order!r}")
    unknown = set(modes) - {"forward", "reverse"}
    if unknown:
        raise ValueError(f"unknown modes {sorted(unknown)}: use 'forward' and/or 'reverse'")


def _tolerances(func, args, positions, eps, atol, rtol) -> tuple[bool, float, float, float]:
    """Whether the check is in single precision (the output or an argument checked is
    float32), and ``eps``, ``atol``, ``rtol`` where not given: values suited to that."""
    checked = [func(*_fresh(args)), *(args[i] for i in positions)]
    single = any(np.result_type(a) == np.float32 for v in checked for a in pytree.leaves(v))
    eps = eps if eps is not None else (1e-3 if single else 1e-6)
    atol = atol if atol is not None else (1e-2 if single else 1e-5)
    rtol = rtol if rtol is not None else (1e-2 if single else 1e-5)
    return single, eps, atol, rtol


def _central_difference(func, args, positions, vs, eps) -> Any:
    """``(f(x + eps v) - f(x - eps v)) / 2 eps``, in float64."""

    def shifted(sign: float) -> Any:
        moved = _fresh(args)
        for i, v in zip(positions, vs):
            moved[i] = _moved(args[i], v, sign * eps)
        return func(*moved)

    def difference(plus: Any, minus: Any) -> Any:
        return (np.asarray(plus, dtype=float) - np.asarray(minus, dtype=float)) / (2 * eps)

    return pytree.map_leaves(difference, shifted(1.0), shifted(-1.0))


def _forward_directional(func, args, wrt_t, vs, u, out, atol, rtol) -> float:
    """``<u, J v>`` from forward mode, checking its value and its tangent's shape."""
    value, tangent = jvp(func, wrt=wrt_t)(*args, *vs)
    _assert_close("forward-mode value", value, out, atol, rtol)
    directional = _inner(u, tangent)
    _assert_shape("forward-mode tangent", tangent, out)
    return directional


def _reverse_directional(func, args, wrt_t, positions, vs, u) -> float:
    """``<J^T u, v>`` from reverse mode, checking each gradient's shape."""
    cotangents = vjp(func, wrt=wrt_t)(*args, u)
    for i, c in zip(positions, cotangents):
        _assert_shape(f"reverse-mode gradient of argument {i}", c, args[i])
    return sum(_inner(c, v) for c, v in zip(cotangents, vs))


def _assert_agree(func, results: dict[str, float], scale: float, atol, rtol, eps) -> None:
    """Every directional derivative in ``results`` agrees with the first."""
    names = list(results)
    for name in names[1:]:
        a, b = results[name], results[names[0]]
        if not abs(a - b) <= atol * scale + rtol * abs(b):
            raise AssertionError(
                f"{func.__name__}: directional derivative from {name} is {a!r} but "
                f"{names[0]} give {b!r} (difference {a - b:.3g}, eps={eps})"
            )


def _check_second_order(func, args, wrt_t, positions, u, vs, eps, atol, rtol) -> None:
    """``v . H_u . v`` (``H_u`` the Hessian of ``<u, func>``): forward mode over the
    generated reverse-mode code against central differences of ``<vjp(u), v>``."""
    reverse = vjp(func, wrt=wrt_t)

    def first(sign: float) -> float:
        moved = list(args)
        for i, v in zip(positions, vs):
            moved[i] = _moved(args[i], v, sign * eps)
        return sum(_inner(c, v) for c, v in zip(reverse(*moved, u), vs))

    numeric = (first(1.0) - first(-1.0)) / (2 * eps)
    _, tangents = jvp(reverse, wrt=wrt_t)(*args, u, *vs)
    tangents = tangents if isinstance(tangents, (tuple, list)) else (tangents,)
    analytic = sum(_inner(t, v) for t, v in zip(tangents, vs))
    if not abs(analytic - numeric) <= atol * max(1.0, abs(numeric)) + rtol * abs(numeric):
        raise AssertionError(
            f"{func.__name__}: second directional derivative from forward over reverse mode "
            f"is {analytic!r} but finite differences of reverse mode give {numeric!r} "
            f"(difference {analytic - numeric:.3g}, eps={eps})"
        )


def _compare_full(func, args, wrt_t, positions, rng, atol, rtol) -> None:
    """Forward and reverse must agree elementwise, not only along one direction."""
    out = func(*_fresh(args))
    u = _like(out, rng)
    forward_fn, reverse_fn = jvp(func, wrt=wrt_t), vjp(func, wrt=wrt_t)
    cotangents = reverse_fn(*args, u)
    for k, i in enumerate(positions):
        zeros = [pytree.map_leaves(_zero_like, args[j]) for j in positions]
        gradients = pytree.leaves(cotangents[k])
        for where, (path, x) in enumerate(pytree.paths(args[i], f"argument {i}")):
            reverse = np.asarray(gradients[where], dtype=float)
            if int(np.size(x)) > 64:
                continue  # one forward pass per element: keep it cheap
            forward = np.zeros(np.shape(x))
            for index in np.ndindex(np.shape(x)):
                tangents = list(zeros)
                tangents[k] = _with_one(zeros[k], where, index)
                _, t = forward_fn(*args, *tangents)
                forward[index] = _inner(u, t)
            _assert_elementwise(func, path, forward, reverse, atol, rtol)


def _with_one(zeros: Any, where: int, index: tuple) -> Any:
    """``zeros`` with its leaf number ``where`` replaced by one holding a one at
    ``index`` (a number: the number one)."""
    leaves = pytree.leaves(zeros)
    basis = leaves[where]
    if isinstance(basis, np.ndarray):
        basis = basis.copy()
        basis[index] = 1.0
    else:
        basis = 1.0
    count = iter(range(len(leaves)))
    return pytree.map_leaves(lambda a: basis if next(count) == where else a, zeros)


def _assert_elementwise(func, what: str, forward, reverse, atol, rtol) -> None:
    diff = np.abs(forward - reverse)
    bound = atol + rtol * np.abs(forward)
    if np.any(diff > bound):
        worst = (
            np.unravel_index(int(np.argmax(diff - bound)), np.shape(forward))
            if np.ndim(forward)
            else ()
        )
        raise AssertionError(
            f"{func.__name__}: vector-Jacobian product w.r.t. {what} differs between "
            f"modes at index {worst}: forward {forward[worst]!r}, reverse {reverse[worst]!r}"
        )


def _zero_like(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=np.result_type(x, np.float32))
    return 0.0


def _assert_close(what: str, a: Any, b: Any, atol: float, rtol: float) -> None:
    for x, y in zip(pytree.leaves(a), pytree.leaves(b), strict=True):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if x.shape != y.shape or not np.allclose(x, y, atol=atol, rtol=rtol, equal_nan=True):
            raise AssertionError(f"{what} {a!r} differs from the function's value {b!r}")


def _assert_shape(what: str, value: Any, like: Any) -> None:
    shapes = pytree.structure(value, np.shape)
    expected = pytree.structure(like, np.shape)
    if shapes != expected:
        raise AssertionError(f"{what} has shape {shapes}, expected {expected}")


# -- hypothesis strategies -------------------------------------------------------------
def _hypothesis() -> Any:
    try:
        import hypothesis.extra.numpy as hnp
        import hypothesis.strategies as st
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        raise ImportError(
            "srcgrad.testing strategies need hypothesis: pip install 'srcgrad[test]'"
        ) from exc
    return st, hnp


def arrays(
    shape: Any = None,
    low: float = -3.0,
    high: float = 3.0,
    dtype: Any = np.float64,
    exclude: tuple[float, float] | None = None,
    max_dims: int = 3,
    max_side: int = 4,
) -> Any:
    """A strategy for float arrays with every element in ``[low, high]``.

    ``shape`` is a fixed shape, a strategy for shapes, or None for random
    shapes with up to ``max_dims`` axes of up to ``max_side``. ``exclude``
    keeps elements out of an open interval (e.g. ``(-0.1, 0.1)`` away from a
    singularity at zero).

    Args:
        shape: a shape, a hypothesis strategy for shapes, or None for random shapes.
        low: the smallest element.
        high: the largest element.
        dtype: a float dtype.
        exclude: an open interval ``(a, b)`` no element falls in, or None.
        max_dims: the most axes a random shape has.
        max_side: the longest axis of a random shape.

    Returns:
        A hypothesis strategy drawing numpy arrays.

    Raises:
        ImportError: hypothesis is not installed (``pip install "srcgrad[test]"``).

    Example:
        ```python
        import numpy as np
        from hypothesis import given, settings

        from srcgrad.testing import arrays, check_grads


        def f(x):
            return np.sum(np.log(x) * x)


        @settings(max_examples=10, deadline=None)
        @given(arrays(low=0.5, high=3.0))
        def test_f(x):
            check_grads(f, (x,))


        test_f()
        ```
    """
    st, hnp = _hypothesis()
    if shape is None:
        shape = hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=1, max_side=max_side)
    elements = st.floats(
        low, high, allow_nan=False, allow_infinity=False, width=np.dtype(dtype).itemsize * 8
    )
    if exclude is not None:
        a, b = exclude
        elements = elements.filter(lambda v: not a < v < b)
    return hnp.arrays(dtype=dtype, shape=shape, elements=elements)


def broadcastable_shapes(num_shapes: int = 2, max_dims: int = 3, max_side: int = 4) -> Any:
    """A strategy for tuples of shapes that broadcast together (some with size-1 axes).

    Args:
        num_shapes: how many shapes each example has.
        max_dims: the most axes of a shape.
        max_side: the longest axis.

    Returns:
        A hypothesis strategy drawing tuples of ``num_shapes`` shapes.

    Raises:
        ImportError: hypothesis is not installed (``pip install "srcgrad[test]"``).

    Example:
        ```python
        import numpy as np
        from hypothesis import given, settings

        from srcgrad.testing import broadcastable_shapes, check_grads


        def f(x, y):
            return np.sum(np.sin(x) * y)


        @settings(max_examples=10, deadline=None)
        @given(broadcastable_shapes(num_shapes=2))
        def test_f(shapes):
            x, y = (np.full(shape, 0.5) for shape in shapes)
            check_grads(f, (x, y), wrt=(0, 1))


        test_f()
        ```
    """
    st, hnp = _hypothesis()
    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes, min_dims=0, max_dims=max_dims, min_side=1, max_side=max_side
    ).map(lambda result: result.input_shapes)
