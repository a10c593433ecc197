"""``verify``: a property-based check of a gradient, srcgrad's or your own.

:func:`verify` draws inputs like the example arguments you give (hypothesis varies
their values, and the lengths of their axes), and at each compares, along a
direction ``v``:

- srcgrad's reverse mode (``<grad f(x), v>``, or ``<vjp(u), v>`` for an array output)
  and forward mode (``<u, jvp(v)>``) where srcgrad can differentiate ``f``;
- central finite differences, extrapolated (Richardson) from steps ``h`` and ``h/2``,
  whose disagreement estimates their own error: the tolerance;
- ``gradient``, your gradient function, where you give one (``f``'s arguments in, the
  gradient with respect to ``wrt`` out, as ``srcgrad.grad(f, wrt)`` gives it), and its
  every component against srcgrad's (or, where srcgrad refuses ``f``, against finite
  differences), to name those that disagree.

A point where ``f`` raises, gives a non-finite value, or is not smooth within the
finite-difference step (a kink, a branch that flips) is not a test case: hypothesis
draws another. On a disagreement, hypothesis shrinks the input to a small failing
example and :func:`verify` raises ``AssertionError`` with it, the numbers, their
relative error and the components that disagree.

This module draws the inputs; the check at one input is :mod:`srcgrad.verify_checks`.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import pytree
from .verify_checks import GradientMismatch, _Checker, _names  # noqa: F401  (its report)

#: set by the pytest plugin's ``--srcgrad-examples N``: every check tries N inputs
#: (a quick CI run, a thorough one), whatever ``max_examples`` it was given
EXAMPLES: int | None = None


def gradient_test(f: Callable[..., Any], args: Sequence[Any], **options: Any) -> Callable[[], None]:
    """A test function pytest collects, that runs :func:`verify` on ``f``.

    ``options`` are :func:`verify`'s; ``pytest --srcgrad-examples N`` sets how many
    inputs it tries.

    Args:
        f: the function whose gradient is checked.
        args: example arguments, as :func:`verify` takes them.
        **options: :func:`verify`'s keyword arguments (``gradient``, ``wrt``,
            ``max_examples``, ``vary_shapes``).

    Returns:
        A function named ``test_gradient_of_<f's name>``, taking no argument: assign it
        to a name starting with ``test_`` in a test module.

    Raises:
        AssertionError: when the test runs, as :func:`verify` raises it.

    Example:
        ```python
        import numpy as np

        from srcgrad.testing import gradient_test


        def loss(w, x):
            return np.sum(np.tanh(x @ w) ** 2)


        def my_grad(w, x):
            t = np.tanh(x @ w)
            return x.T @ (2 * t * (1 - t**2))


        # in a test module, pytest collects it
        test_loss = gradient_test(loss, (np.ones(3), np.ones((4, 3))), gradient=my_grad,
                                  max_examples=10)
        test_loss()
        ```
    """

    def test() -> None:
        verify(f, args, **options)

    name = getattr(f, "__name__", "f")
    test.__name__ = test.__qualname__ = f"test_gradient_of_{name}"
    test.__doc__ = f"The gradient of {name} checked at many inputs (srcgrad.testing.verify)."
    return test


def verify(
    f: Callable[..., Any],
    args: Sequence[Any],
    *,
    gradient: Callable[..., Any] | None = None,
    wrt: int | Sequence[int] = 0,
    max_examples: int = 50,
    vary_shapes: bool = True,
) -> None:
    """Check the gradient of ``f`` at many inputs like ``args``; raise
    ``AssertionError`` with a shrunk failing input and a report where two ways of
    computing it disagree.

    ``args``: example arguments (numbers, float arrays, pytrees of them); their float
    values are drawn anew (in ``[-3, 3]`` and the examples' range, kept positive where
    every example element is), and, with ``vary_shapes``, every axis of one length is
    given one new length no longer than it (so axes that must match still do). Other
    arguments (ints, strings) stay as given. ``gradient``: your gradient function to
    check; ``wrt``: the argument (or tuple of arguments) differentiated.

    Args:
        f: the function whose gradient is checked.
        args: example arguments (numbers, float arrays, pytrees of them).
        gradient: your gradient function, called with ``f``'s arguments; None checks
            srcgrad's own.
        wrt: the argument (or tuple of arguments) differentiated, by position.
        max_examples: how many inputs hypothesis tries (``pytest --srcgrad-examples N``
            sets it for a whole test run).
        vary_shapes: draw new lengths for the arrays' axes too, not only new values.

    Returns:
        None, when every input agrees.

    Raises:
        AssertionError: two ways of computing the gradient disagree; the message shows the
            smallest input hypothesis found, the numbers, and which components of
            ``gradient`` are wrong.

    Example:
        ```python
        import numpy as np

        from srcgrad.testing import verify


        def loss(w, x):
            return np.sum(np.tanh(x @ w) ** 2)


        def my_grad(w, x):
            t = np.tanh(x @ w)
            return x.T @ (2 * t * (1 - t**2))


        verify(loss, (np.ones(3), np.ones((4, 3))), gradient=my_grad, max_examples=10)
        ```
    """
    wrt_t = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)
    checker = _Checker(f, gradient, wrt_t, isinstance(wrt, (tuple, list)))
    run(f, args, checker.check, max_examples, vary_shapes)


def run(
    f: Callable[..., Any],
    args: Sequence[Any],
    check: Callable[[list[Any]], bool],
    max_examples: int,
    vary_shapes: bool,
) -> None:
    """Call ``check`` on argument lists like ``args`` hypothesis draws (inside the
    domains ``f``'s source shows), until it raises or ``max_examples`` inputs were
    test cases (those it returns True for)."""
    try:
        import hypothesis
        from hypothesis import strategies as st
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        raise ImportError(
            "srcgrad.testing.verify needs hypothesis: pip install hypothesis"
        ) from exc
    known = domains(f)
    names = _names(f, len(args))
    drawn = _inputs(st, list(args), vary_shapes, [known.get(n) for n in names])

    @hypothesis.settings(
        max_examples=EXAMPLES if EXAMPLES is not None else max_examples,
        deadline=None,
        database=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(drawn)
    def case(values: list[Any]) -> None:
        hypothesis.assume(check(values))

    case()


# -- domains read from the source -----------------------------------------------------------
#: calls whose argument must lie in an open interval (``np.sqrt``'s derivative too)
_DOMAINS: dict[str, tuple[float, float]] = {
    "log": (0.0, math.inf),
    "log2": (0.0, math.inf),
    "log10": (0.0, math.inf),
    "sqrt": (0.0, math.inf),
    "log1p": (-1.0, math.inf),
    "arcsin": (-1.0, 1.0),
    "arccos": (-1.0, 1.0),
    "arctanh": (-1.0, 1.0),
    "arccosh": (1.0, math.inf),
}


def domains(f: Callable[..., Any]) -> dict[str, tuple[float, float]]:
    """The open interval each parameter of ``f`` must lie in for the calls ``f`` makes
    on it directly, where ``f`` never assigns it (``np.log(x)``: x > 0; ``np.sqrt(x -
    1)``: x > 1; ``np.arcsin(x / 2)``: -2 < x < 2; ``x ** 0.5``: x > 0), by parameter
    name. A parameter read through anything else is not bounded here (an input outside
    a domain this does not see is drawn, then set aside: ``f`` is not finite there)."""
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(f)))
        params = set(inspect.signature(f).parameters)
    except (OSError, TypeError, SyntaxError, ValueError):
        return {}
    # (a parameter given another value in f is not what the call reads)
    params -= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and type(n.ctx) is ast.Store}
    found: dict[str, tuple[float, float]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            kind = node.func.attr if isinstance(node.func, ast.Attribute) else None
            interval = _DOMAINS.get(kind or "")
            operand = node.args[0]
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Pow)
            and isinstance(node.right, ast.Constant)
            and isinstance(node.right.value, float)
            and not float(node.right.value).is_integer()
        ):
            interval, operand = (0.0, math.inf), node.left
        else:
            continue
        bound = _solved(operand, interval, params) if interval else None
        if bound is not None:
            name, (low, high) = bound
            old_low, old_high = found.get(name, (-math.inf, math.inf))
            found[name] = (max(low, old_low), min(high, old_high))
    return found


def _solved(operand: Any, interval: tuple[float, float], params: set[str]) -> Any:
    """``(name, interval)`` for an operand ``name``, ``name + c``, ``name - c``, ``c -
    name``, ``name * c`` or ``name / c`` (``c`` a number) that must lie in ``interval``."""
    import ast

    low, high = interval
    if isinstance(operand, ast.Name):
        return (operand.id, interval) if operand.id in params else None
    if not isinstance(operand, ast.BinOp):
        return None
    left, right, op = operand.left, operand.right, operand.op
    if isinstance(right, ast.Constant) and isinstance(right.value, (int, float)):
        c = float(right.value)
        shifted = {
            ast.Add: lambda a: a - c,
            ast.Sub: lambda a: a + c,
            ast.Mult: lambda a: a / c if c else None,
            ast.Div: lambda a: a * c,
        }.get(type(op))
        if shifted is None or (isinstance(op, (ast.Mult, ast.Div)) and c <= 0):
            return None
        return _solved(left, (shifted(low), shifted(high)), params)
    if (
        isinstance(op, ast.Sub)
        and isinstance(left, ast.Constant)
        and isinstance(left.value, (int, float))
    ):
        c = float(left.value)  # c - name in (low, high): name in (c - high, c - low)
        return _solved(right, (c - high, c - low), params)
    return None


# -- inputs ------------------------------------------------------------------------------
def _inputs(st: Any, args: list[Any], vary_shapes: bool, bounds: list[Any]) -> Any:
    """A strategy for argument lists like ``args``; ``bounds``: each argument's open
    interval (or None)."""
    leaves = [leaf for a in args for leaf in pytree.leaves(a)]
    leaf_bounds = [bound for a, bound in zip(args, bounds) for _ in pytree.leaves(a)]
    floats = [_is_float(leaf) for leaf in leaves]
    fixed = {n for leaf, fl in zip(leaves, floats) if not fl for n in np.shape(leaf)}
    lengths = sorted({n for leaf, fl in zip(leaves, floats) if fl for n in np.shape(leaf)} - fixed)
    sizes = (
        st.tuples(*(st.integers(1, n) for n in lengths))
        if vary_shapes and lengths
        else st.just(tuple(lengths))
    )

    @st.composite
    def draw(data: Any) -> list[Any]:
        new = dict(zip(lengths, data(sizes)))
        out = []
        for leaf, is_float, bound in zip(leaves, floats, leaf_bounds):
            out.append(_drawn_leaf(st, data, leaf, new, bound) if is_float else leaf)
        it = iter(out)
        return [pytree.map_leaves(lambda _: next(it), a) for a in args]

    return draw()


def _is_float(leaf: Any) -> bool:
    return isinstance(leaf, float) or (
        isinstance(leaf, (np.ndarray, np.floating)) and np.issubdtype(leaf.dtype, np.floating)
    )


def _drawn_leaf(
    st: Any, data: Any, leaf: Any, lengths: dict[int, int], bound: tuple[float, float] | None
) -> Any:
    example = np.asarray(leaf, dtype=float)
    low = min(-3.0, 2.0 * float(example.min())) if example.size else -3.0
    high = max(3.0, 2.0 * float(example.max())) if example.size else 3.0
    if example.size and example.min() > 0:  # (a positive quantity: kept positive)
        low = float(example.min()) / 4
    if bound is not None:  # (inside the domain the source shows, away from its ends)
        margin = 1e-3 * max(1.0, high - low)
        low, high = max(low, bound[0] + margin), min(high, bound[1] - margin)
        if low > high:
            low, high = bound[0] + margin, max(bound[0] + 2 * margin, bound[1] - margin)
    shape = tuple(lengths.get(n, n) for n in np.shape(leaf))
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False)
    values = [data(elements) for _ in range(math.prod(shape))]
    if isinstance(leaf, float):
        return float(values[0])
    return np.array(values, dtype=leaf.dtype).reshape(shape)
