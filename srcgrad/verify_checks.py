"""Part of :mod:`srcgrad.verify`: the check at one input. :class:`_Checker` takes the
function's value there, a random cotangent ``u`` and unit directions ``v``, compares
srcgrad's two modes, your gradient and the extrapolated central difference along them
(:class:`_FiniteDifference`, whose own error estimate is the tolerance), and
:class:`_Report` raises :class:`GradientMismatch` with the numbers where they disagree.
``verify_rules.py`` checks a custom rule's vjp and jvp with the same parts."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import pytree
from .errors import SrcgradError

#: relative agreement asked of srcgrad's two modes (they compute the same numbers in
#: another order) and of a gradient compared component by component
_MODES_RTOL = 1e-7
#: a point is smooth enough for finite differences when the estimates at steps h and
#: h/2 agree to this fraction of the derivative's scale (else another point is drawn)
_SMOOTH = 1e-4
#: ... and the one-sided differences (h f'' apart where f is smooth) to this fraction
_KINK = 1e-3


# -- the check of one input ---------------------------------------------------------------
class _Checker:
    """The comparisons at one input; ``check`` returns False for an input that is not a
    test case (``f`` fails there, or is not smooth at the scale of its step)."""

    def __init__(
        self,
        f: Callable[..., Any],
        gradient: Callable[..., Any] | None,
        wrt: tuple[int, ...],
        as_tuple: bool,
    ) -> None:
        self.f, self.gradient, self.wrt, self.as_tuple = f, gradient, wrt, as_tuple
        self.refused: str | None = None  # why srcgrad cannot differentiate f
        self._derivatives: tuple[Any, Any, Any] | None = None

    def derivatives(self) -> tuple[Any, Any, Any]:
        """srcgrad's vjp, jvp and grad of ``f`` (made once: each keeps its quick path)."""
        if self._derivatives is None:
            from .api import grad, jvp, vjp

            wrt = self.wrt if self.as_tuple else self.wrt[0]
            self._derivatives = (vjp(self.f, wrt=wrt), jvp(self.f, wrt=wrt), grad(self.f, wrt=wrt))
        return self._derivatives

    def probe(self, values: list[Any]) -> tuple[Any, Any, list[Any], _FiniteDifference] | None:
        """``f``'s value at ``values``, a random cotangent ``u``, unit directions ``vs``
        for the ``wrt`` arguments and the central difference along them; ``None`` where
        ``f`` fails there or is not smooth within the difference's reach."""
        value = self._value(values)
        if value is None:
            return None
        self.precision(values, value)
        rng = np.random.default_rng(_seed(values))
        u = _random_like(value, rng)
        vs = [_unit(_random_like(values[i], rng)) for i in self.wrt]
        fd = _FiniteDifference(self, values, u, vs)
        return (value, u, vs, fd) if fd.smooth() else None

    def check(self, values: list[Any]) -> bool:
        probed = self.probe(values)
        if probed is None:
            return False
        _, u, vs, fd = probed
        found = {"finite differences": fd.value}
        found.update(self._srcgrad(values, u, vs))
        mine = None
        if self.gradient is not None:
            mine = self._yours(values)
            found["your gradient"] = _inner_all(mine, vs) * _scalar(u)
        _Report(self, values, fd, found, mine).check()
        return True

    def precision(self, values: list[Any], value: Any) -> None:
        """The precision of the arithmetic (float32 arguments or values, float64's
        else): ``eps``, and ``rtol``, the agreement asked of two exact derivatives."""
        dtypes = [
            leaf.dtype
            for leaf in pytree.leaves([values, value])
            if isinstance(leaf, (np.ndarray, np.floating)) and leaf.dtype.kind == "f"
        ]
        self.eps = max([float(np.finfo(d).eps) for d in dtypes] + [float(np.finfo(float).eps)])
        self.rtol = max(_MODES_RTOL, 1e3 * self.eps)

    def _value(self, values: list[Any]) -> Any:
        try:
            with np.errstate(all="ignore"):
                value = self.f(*_copied(values))
        except (ArithmeticError, ValueError, IndexError, TypeError):
            return None
        leaves = pytree.leaves(value)
        if not leaves or not all(np.all(np.isfinite(leaf)) for leaf in leaves):
            return None
        return value

    def _srcgrad(self, values: list[Any], u: Any, vs: list[Any]) -> dict[str, float]:
        """srcgrad's directional derivatives (none where it refuses ``f``)."""
        if self.refused is not None:
            return {}
        vjp, jvp, _ = self.derivatives()
        try:
            back = vjp(*_copied(values), u)
            _, tangent = jvp(*_copied(values), *vs)
        except (SrcgradError, TypeError) as exc:  # (f itself ran on these values)
            self.refused = str(exc).splitlines()[0]
            return {}
        back = back if isinstance(back, tuple) else (back,)
        return {
            "srcgrad reverse": _inner_all(list(back), vs),
            "srcgrad forward": _inner(u, tangent),
        }

    def _yours(self, values: list[Any]) -> list[Any]:
        """Your gradient at ``values``, one entry per wrt argument."""
        mine = self.gradient(*_copied(values))
        mine = list(mine) if self.as_tuple else [mine]
        for g, i in zip(mine, self.wrt):
            if _shapes(g) != _shapes(values[i]):
                raise AssertionError(
                    f"your gradient for {_names(self.f, i + 1)[i]} has shape {_shapes(g)}, but the "
                    f"argument has shape {_shapes(values[i])} (a broadcast not summed "
                    f"back?), at\n{_describe(self.f, values)}"
                )
        return mine


class _FiniteDifference:
    """``<u, (f(x + h v) - f(x - h v)) / 2h>`` at steps h and h/2, extrapolated; and
    whether ``f`` is smooth there at that scale: the two central differences agree, and
    so do the one-sided ones (which a kink at ``x`` itself sets apart)."""

    def __init__(self, checker: _Checker, values: list[Any], u: Any, vs: list[Any]) -> None:
        leaves = [leaf for i in checker.wrt for leaf in pytree.leaves(values[i])]
        scale = max([1.0] + [float(np.max(np.abs(leaf))) for leaf in leaves if np.size(leaf)])
        eps = checker.eps
        h = self.h = eps ** (1 / 3) * scale
        at = {t: self._along(checker, values, u, vs, t) for t in (-h, -h / 2, 0.0, h / 2, h)}
        self.value: float | None = None
        self.error = self.kink = math.inf
        if any(v is None for v in at.values()):
            return
        d1 = (at[h] - at[-h]) / (2 * h)
        d2 = (at[h / 2] - at[-h / 2]) / h
        self.value = (4 * d2 - d1) / 3
        self.error = abs(d1 - d2)
        self.kink = abs((at[h] - at[0.0]) - (at[0.0] - at[-h])) / h
        # rounding in f's values, amplified by the division by the step
        self.rounding = 64 * eps * (abs(at[0.0]) + 1) / h

    @staticmethod
    def _along(checker: _Checker, values: list[Any], u: Any, vs: list[Any], t: float) -> Any:
        """``<u, f(x + t v)>`` (None where ``f`` fails there)."""
        moved = list(values)
        for i, v in zip(checker.wrt, vs):
            moved[i] = pytree.map_leaves(lambda a, b: a + t * b, values[i], v)
        value = checker._value(moved)
        return None if value is None else _inner(u, value)

    def smooth(self) -> bool:
        if self.value is None:
            return False
        scale = 1 + abs(self.value)
        return self.error <= _SMOOTH * scale and self.kink <= _KINK * scale + self.rounding

    def tolerance(self) -> float:
        return 10 * self.error + self.rounding + 1e-6 * (1 + abs(self.value))


class _Report:
    """The comparison of what was found at one input, and the error that says where
    they disagree."""

    def __init__(
        self,
        checker: _Checker,
        values: list[Any],
        fd: _FiniteDifference,
        found: dict[str, float],
        mine: list[Any] | None,
    ) -> None:
        self.checker, self.values, self.fd, self.found, self.mine = checker, values, fd, found, mine

    def check(self) -> None:
        fd, found = self.fd, self.found
        scale = 1 + max(abs(v) for v in found.values())
        bad = [
            name
            for name, v in found.items()
            if name != "finite differences" and abs(v - fd.value) > fd.tolerance()
        ]
        modes = [found[k] for k in ("srcgrad reverse", "srcgrad forward") if k in found]
        if len(modes) == 2 and abs(modes[0] - modes[1]) > self.checker.rtol * scale:
            bad.append("srcgrad forward")
        components = self._components() if self.mine is not None else []
        if bad or components:
            raise GradientMismatch(self._text(bad, components), self._located)

    def _components(self) -> list[str]:
        """Your gradient's components that disagree with srcgrad's (or, where srcgrad
        refuses ``f``, with finite differences), as lines of the report."""
        checker, values = self.checker, self.values
        reference = self._reference()
        lines = []
        for mine, ref, i in zip(self.mine, reference, checker.wrt):
            name = _names(checker.f, i + 1)[i]
            paths = [p for p, _ in pytree.paths(values[i], name)]
            for path, a, b in zip(paths, pytree.leaves(mine), pytree.leaves(ref)):
                a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
                tol = (
                    checker.rtol * (1 + np.abs(b))
                    if checker.refused is None
                    else 1e-5 * (1 + np.abs(b))
                )
                for index in np.argwhere(np.abs(a - b) > tol):
                    index = tuple(int(k) for k in index)
                    where = path + (str(list(index)) if index else "")
                    lines.append(f"  {where}: yours {a[index]:.10g}, expected {b[index]:.10g}")
        return lines

    def _reference(self) -> list[Any]:
        """The gradient to compare yours with, component by component."""
        checker, values = self.checker, self.values
        if checker.refused is None:
            g = checker.derivatives()[2](*_copied(values))
            return list(g) if checker.as_tuple else [g]
        out = []
        for i in checker.wrt:  # (central differences, element by element)
            leaves = pytree.leaves(values[i])
            grads = []
            for k, leaf in enumerate(leaves):
                g = np.zeros(np.shape(leaf))
                for index in np.ndindex(np.shape(leaf)):
                    g[index] = _partial(checker, values, i, k, index, self.fd.h)
                grads.append(g)
            out.append(grads)
        return out

    def _text(self, bad: list[str], components: list[str]) -> str:
        fd = self.fd
        lines = [
            f"gradients of {getattr(self.checker.f, '__name__', 'f')} disagree at",
            _describe(self.checker.f, self.values),
        ]
        lines.append("along a random direction v (each argument's largest element 1):")
        for name, v in self.found.items():
            line = f"  {name + ':':21s}{v: .12g}"
            if name == "finite differences":
                line += f"  (error estimate {fd.tolerance():.2g})"
            elif name in bad:
                line += f"  relative error {abs(v - fd.value) / max(abs(fd.value), 1e-300):.2g}"
            lines.append(line)
        if self.checker.refused is not None:
            lines.append(f"(srcgrad does not differentiate it: {self.checker.refused})")
        if components:
            what = "srcgrad's" if self.checker.refused is None else "finite differences'"
            lines.append(f"components of your gradient that disagree with {what}:")
            lines += components[:20] + (
                [f"  ... {len(components) - 20} more"] if len(components) > 20 else []
            )
        return "\n".join(lines)

    def _located(self) -> list[str]:
        """The report's last part: where your gradient's intermediate values go wrong
        (:mod:`srcgrad.verify_locate`), made when the report is read."""
        checker = self.checker
        if self.mine is None or checker.refused is not None:
            return []
        from .verify_locate import locate

        grad = checker.derivatives()[2]
        return locate(checker.f, checker.gradient, grad, _copied(self.values), checker.rtol)


class GradientMismatch(AssertionError):
    """:func:`verify`'s report. Its last part, which runs both gradients again, is made
    when the report is first read: hypothesis reads only the smallest failing input's,
    not those of the inputs it tried while shrinking."""

    def __init__(self, text: str, more: Callable[[], list[str]]) -> None:
        super().__init__(text)
        self._text, self._more, self._full = text, more, None

    def __str__(self) -> str:
        if self._full is None:
            self._full = "\n".join([self._text, *self._more()])
        return self._full


# -- small helpers -------------------------------------------------------------------------
def _partial(checker: _Checker, values: list[Any], i: int, k: int, index: tuple, h: float) -> float:
    ends = []
    for step in (h, -h):
        moved = list(values)
        leaves = [np.array(leaf, dtype=float) for leaf in pytree.leaves(values[i])]
        leaves[k][index] += step
        moved[i] = _rebuilt(values[i], leaves)
        ends.append(float(np.sum(checker.f(*_copied(moved)))))
    return (ends[0] - ends[1]) / (2 * h)


def _rebuilt(tree: Any, leaves: list[Any]) -> Any:
    """``tree`` with ``leaves`` for its leaves (a float for a float)."""
    it = iter(leaves)
    return pytree.map_leaves(lambda a: float(next(it)) if isinstance(a, float) else next(it), tree)


def _copied(values: list[Any]) -> list[Any]:
    """Copies of the arrays in ``values`` (the function may write into its arguments)."""
    return [
        pytree.map_leaves(lambda a: a.copy() if isinstance(a, np.ndarray) else a, v) for v in values
    ]


def _seed(values: list[Any]) -> int:
    """A seed that depends on the arguments' shapes alone (the same directions for
    an input and the smaller ones hypothesis shrinks it to)."""
    shapes = repr([np.shape(leaf) for v in values for leaf in pytree.leaves(v)])
    return sum(ord(c) * (k + 1) for k, c in enumerate(shapes)) % (2**32)


def _random_like(x: Any, rng: np.random.Generator) -> Any:
    def leaf(a: Any) -> Any:
        v = rng.uniform(-1.0, 1.0, np.shape(a))
        if isinstance(a, (float, int)):
            return float(v)
        return (
            v.astype(a.dtype)
            if getattr(a, "dtype", None) is not None and a.dtype.kind == "f"
            else v
        )

    return pytree.map_leaves(leaf, x)


def _unit(v: Any) -> Any:
    """``v`` scaled so that its largest element is 1."""
    top = max([float(np.max(np.abs(leaf))) for leaf in pytree.leaves(v) if np.size(leaf)] + [0.0])
    return v if top == 0 else pytree.map_leaves(lambda a: a / top, v)


def _inner(a: Any, b: Any) -> float:
    return sum(
        float(np.sum(np.asarray(x, dtype=float) * np.asarray(y, dtype=float)))
        for x, y in zip(pytree.leaves(a), pytree.leaves(b), strict=True)
    )


def _inner_all(gs: list[Any], vs: list[Any]) -> float:
    return sum(_inner(g, v) for g, v in zip(gs, vs, strict=True))


def _scalar(u: Any) -> float:
    """The cotangent of a scalar output (your gradient is of ``f`` itself: times ``u``)."""
    leaves = pytree.leaves(u)
    return float(leaves[0]) if len(leaves) == 1 and np.ndim(leaves[0]) == 0 else math.nan


def _shapes(x: Any) -> Any:
    return pytree.structure(x, np.shape)


def _names(f: Callable[..., Any], count: int) -> list[str]:
    """What ``f`` calls its first ``count`` parameters (``argument k`` where it cannot
    be told)."""
    try:
        names = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        names = []
    return [names[k] if k < len(names) else f"argument {k}" for k in range(count)]


def _describe(f: Callable[..., Any], values: list[Any]) -> str:
    with np.printoptions(precision=6, threshold=50):
        return "\n".join(f"  {name} = {v!r}" for name, v in zip(_names(f, len(values)), values))
