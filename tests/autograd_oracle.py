"""autograd as an independent oracle for srcgrad's derivatives, shared by
``test_autograd_oracle.py``, ``test_random_programs.py`` and
``test_adversarial_programs.py``.

autograd traces the function as it runs (operator overloading) where srcgrad
transforms its source, and its rules were written by other people, so the two
agree by accident only where both are right. :func:`autograd_twin` runs the
*same* function with ``np`` rebound to ``autograd.numpy`` (the module's helper
functions likewise, so that a call to a helper is traced too); the
``ag_*`` functions build autograd's vjp, jvp and gradient as plain functions
of all their arguments (the cotangent and tangents included), so that they
can be differentiated again, as srcgrad differentiates its generated code
again; :func:`compare` runs one srcgrad derivative and its autograd twin and
compares every value element by element.

autograd is no oracle where its semantics are not numpy's:

- ``x.astype(int)``, ``x.astype(bool)`` and ``dtype=int`` are the identity to
  autograd (their derivative is zero);
- ``+=`` and friends on an autograd box rebind the name (numpy writes into the
  array, which every alias and view sees);
- ``y[i] = v`` is an error on a box.

:func:`autograd_unsound` finds the first two in a function's source;
:func:`run_autograd` turns autograd's own failures into :class:`NoAutograd`.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
import warnings
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import autograd
import autograd.numpy as anp
import autograd.scipy.special as agsp
import numpy as np
from autograd.builtins import tuple as ag_tuple
from autograd.core import make_vjp as _make_vjp
from autograd.extend import Box, defvjp, primitive, vspace

import srcgrad
from srcgrad.custom import Primitive

try:  # scipy is optional for srcgrad, but the test extra installs it
    import scipy
    import scipy.special
except ImportError:  # pragma: no cover
    scipy = None

SRCGRAD_DIR = Path(srcgrad.__file__).resolve().parent


#: derivatives srcgrad is known to get wrong, left out of the corpus-wide comparisons
#: while their fix is open (each keeps a strict xfail test of its own, which flips when
#: the fix lands: then remove the gap here)
KNOWN_GAPS: dict[str, str] = {}


class NoAutograd(Exception):
    """autograd cannot run this function (or this derivative of it); the reason is the
    message."""


# -- the same function, on autograd.numpy ---------------------------------------------------
@primitive
def _stop_gradient(x: Any) -> Any:
    return x


defvjp(_stop_gradient, lambda ans, x: lambda g: anp.zeros_like(g) * 0.0)


class _Missing:
    """A name autograd has no version of: calling it says so."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NoAutograd(f"autograd has no {self.what}")

    def __getattr__(self, name: str) -> Any:
        return _Missing(f"{self.what}.{name}")


class _Namespace:
    """A module's stand-in: attributes from ``primary`` (autograd's), else missing."""

    def __init__(self, name: str, primary: Any, **extra: Any) -> None:
        self._name = name
        self._primary = primary
        self.__dict__.update(extra)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._primary, name, None)
        if value is None:
            return _Missing(f"{self._name}.{name}")
        return value


_SPECIAL = _Namespace("scipy.special", agsp)
_SCIPY = _Namespace("scipy", None, special=_SPECIAL)
_SRCGRAD = _Namespace("srcgrad", srcgrad, stop_gradient=_stop_gradient)


def _replacement(value: Any) -> Any:
    """What a global of the user's module stands for under autograd (None: itself)."""
    if value is np:
        return anp
    if value is np.linalg:
        return anp.linalg
    if value is srcgrad:
        return _SRCGRAD
    if scipy is not None:
        if value is scipy:
            return _SCIPY
        if value is scipy.special:
            return _SPECIAL
        module = getattr(value, "__module__", None) or ""
        if (module.startswith("scipy.special") or isinstance(value, np.ufunc)) and hasattr(
            scipy.special, getattr(value, "__name__", "")
        ):
            if getattr(scipy.special, value.__name__) is value:
                return getattr(_SPECIAL, value.__name__)
    if isinstance(value, np.ufunc) or (
        callable(value) and getattr(value, "__module__", "") in ("numpy", "numpy._core.numeric")
    ):  # from numpy import sin
        return getattr(anp, getattr(value, "__name__", ""), _Missing(repr(value)))
    return None


def autograd_twin(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with ``np`` (and ``scipy.special``) rebound to autograd's, in a copy of
    its globals where every function of its module is rebound the same way."""
    if isinstance(func, Primitive):
        func = func.func
    namespace: dict[str, Any] = dict(func.__globals__)
    module = func.__module__

    def rebound(f: types.FunctionType) -> types.FunctionType:
        copy = types.FunctionType(
            f.__code__, namespace, f.__name__, f.__defaults__, _cells(f.__closure__)
        )
        copy.__kwdefaults__ = f.__kwdefaults__
        return copy

    def _cells(closure: tuple | None) -> tuple | None:
        if closure is None:
            return None
        cells = []
        for cell in closure:
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell (a name bound later)
                cells.append(cell)
                continue
            new = _replacement(value)
            if new is None and isinstance(value, types.FunctionType) and value is not func:
                new = rebound(value) if value.__module__ == module else None
            cells.append(types.CellType(new) if new is not None else cell)
        return tuple(cells)

    for name, value in list(namespace.items()):
        new = _replacement(value)
        if new is not None:
            namespace[name] = new
        elif isinstance(value, Primitive) and value.func.__module__ == module:
            namespace[name] = rebound(value.func)  # autograd looks inside: the true derivative
        elif isinstance(value, types.FunctionType) and value.__module__ == module:
            namespace[name] = rebound(value)
    return rebound(func)


class _Unsound(ast.NodeVisitor):
    """Constructs whose autograd derivative is not numpy's (see the module docstring)."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        casts = []
        if isinstance(node.func, ast.Attribute) and node.func.attr == "astype" and node.args:
            casts.append(node.args[0])
        casts += [k.value for k in node.keywords if k.arg == "dtype"]
        for cast in casts:
            text = ast.unparse(cast)
            if not any(word in text for word in ("float", "x.dtype", ".dtype")):
                self.reasons.append(f"a cast autograd differentiates as the identity: {text}")

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        if isinstance(node.target, ast.Subscript):
            self.reasons.append("a write into an array (autograd cannot trace it)")


def autograd_unsound(funcs: Sequence[Callable[..., Any]]) -> str | None:
    """Why autograd's derivative of these functions' source is not numpy's, or None."""
    finder = _Unsound()
    for func in funcs:
        func = func.func if isinstance(func, Primitive) else func
        try:
            source = textwrap.dedent(inspect.getsource(func))
        except (OSError, TypeError):
            return f"no source for {func!r}"
        finder.visit(ast.parse(source))
    return finder.reasons[0] if finder.reasons else None


def run_autograd(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, where any exception autograd raises means autograd cannot run it."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "Output seems independent of input"
            result = plain(fn(*args))
    except NoAutograd:
        raise
    except Exception as exc:
        raise NoAutograd(f"{type(exc).__name__}: {exc}".splitlines()[0][:200]) from exc
    for leaf in leaves(result):
        if isinstance(leaf, Box) or getattr(leaf, "dtype", None) == np.dtype(object):
            # (np.dstack, np.asarray of a list of traced values: autograd does not trace
            # through them, and its traced values leak into an object array)
            raise NoAutograd("autograd does not trace through it (its traced values leak out)")
    return result


def second_order_agrees(
    func: Callable[..., Any], twin: Callable[..., Any], args: Sequence[Any], wrt: Sequence[int]
) -> None:
    """srcgrad's Hessian of ``func`` with respect to each of ``wrt`` is autograd's of
    ``twin`` (the same source with ``np`` rebound, or the same computation written
    without what autograd cannot trace); and both modes agree with central differences
    to second order."""
    from srcgrad.testing import check_grads

    for k in wrt:
        np.testing.assert_allclose(
            srcgrad.hessian(func, wrt=k)(*args),
            autograd.hessian(twin, k)(*args),
            rtol=1e-9,
            atol=1e-12,
        )
    check_grads(func, args, wrt=tuple(wrt), modes=("forward", "reverse"), order=2)


# -- autograd's derivatives, as functions of all their arguments --------------------------
def _argnum(wrt: Sequence[int], as_tuple: bool) -> Any:
    return tuple(wrt) if as_tuple else wrt[0]


def ag_vjp(F: Callable[..., Any], wrt: Sequence[int], as_tuple: bool) -> Callable[..., Any]:
    """``G(*args, dout)``: the vector-Jacobian product(s) of ``F``, like srcgrad.vjp."""
    make = autograd.make_vjp(_boxed(F), _argnum(wrt, as_tuple))

    def G(*a: Any) -> Any:
        backward, _ = make(*a[:-1])
        return _box(backward(a[-1]))

    return G


def ag_jvp(F: Callable[..., Any], wrt: Sequence[int], as_tuple: bool) -> Callable[..., Any]:
    """``G(*args, *tangents)``: ``(F(*args), J @ tangents)``, like srcgrad.jvp. The vjp
    is linear in its cotangent, so the vjp of the vjp is the jvp (reverse over reverse:
    it needs only autograd's reverse-mode rules, and nests to any order)."""
    make = autograd.make_vjp(_boxed(F), _argnum(wrt, as_tuple))
    count = len(wrt)

    def G(*a: Any) -> Any:
        args, tangents = a[:-count], a[-count:]
        backward, out = make(*args)
        forward, _ = _make_vjp(backward, vspace(out).zeros())
        tangent = forward(ag_tuple(tangents) if as_tuple else tangents[0])
        return ag_tuple((_box(out), _box(tangent)))

    return G


def ag_grad(F: Callable[..., Any], wrt: Sequence[int], as_tuple: bool) -> Callable[..., Any]:
    grad = autograd.grad(_boxed(F), _argnum(wrt, as_tuple))
    return lambda *a: _box(grad(*a))


def ag_value_and_grad(
    F: Callable[..., Any], wrt: Sequence[int], as_tuple: bool
) -> Callable[..., Any]:
    value_and_grad = autograd.value_and_grad(_boxed(F), _argnum(wrt, as_tuple))
    return lambda *a: _box(value_and_grad(*a))


def _box(value: Any) -> Any:
    """A tuple or list as autograd's tuple, which autograd traces as one value (a plain
    tuple of traced values reads to autograd as an output independent of the input)."""
    if isinstance(value, (tuple, list)):
        return ag_tuple(tuple(_box(v) for v in value))
    return value


def _boxed(F: Callable[..., Any]) -> Callable[..., Any]:
    return lambda *a: _box(F(*a))


def plain(value: Any) -> Any:
    """autograd's tuples as plain ones, as srcgrad returns them."""
    if isinstance(value, (tuple, list)):
        return tuple(plain(v) for v in value)
    return value


def tangent_output(G: Callable[..., Any]) -> Callable[..., Any]:
    """The tangent half of a jvp: what srcgrad's grad of a jvp differentiates."""
    return lambda *a: G(*a)[1]


# -- values -----------------------------------------------------------------------------------
def differentiable(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (float, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in leaves(t)]
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in leaves(tree[k])]
    return [tree]


def like(value: Any, rng: np.random.Generator) -> Any:
    """A random value shaped like ``value`` (a tuple for a tuple), of its float type."""
    if isinstance(value, (tuple, list)):
        return tuple(like(v, rng) for v in value)
    v = rng.standard_normal(np.shape(value))
    if isinstance(value, np.ndarray):
        return v.astype(np.result_type(value.dtype, np.float32))
    if isinstance(value, np.generic):
        return np.result_type(value, np.float32).type(v)
    return float(v)


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=17, separator=", ").replace("\n", "")
        return f"np.array({text}, dtype=np.{value.dtype})"
    return repr(value)


def copied(args: Sequence[Any]) -> list[Any]:
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def float_output(out: Any) -> bool:
    return all(
        differentiable(leaf) or (isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f")
        for leaf in leaves(out)
    )


def precision(values: Sequence[Any], single: bool = False) -> tuple[float, float]:
    """(rtol, atol) for comparing two exact derivatives: rounding only (float32's where
    a value is one, or ``single``: the function computes in float32 inside)."""
    single = single or any(
        np.result_type(v) == np.float32 for v in leaves(list(values)) if differentiable(v)
    )
    return (2e-3, 2e-4) if single else (1e-6, 1e-8)


def assert_close(what: str, got: Any, want: Any, rtol: float, atol: float) -> None:
    """Every leaf of ``got`` (srcgrad's) equals the leaf of ``want`` (the oracle's)."""
    g, w = leaves(got), leaves(want)
    if len(g) != len(w):
        raise AssertionError(f"{what}: srcgrad gives {len(g)} values, the oracle {len(w)}")
    for k, (a, b) in enumerate(zip(g, w)):
        where = f"{what}" + (f" [{k}]" if len(g) > 1 else "")
        a = np.asarray(a, dtype=float)
        b = np.asarray(b, dtype=float)
        if a.shape != b.shape:
            raise AssertionError(f"{where}: shape {a.shape} from srcgrad, {b.shape} expected")
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0, where=np.isfinite(b))))
        diff = np.abs(a - b)
        bad = ~((diff <= atol * scale + rtol * np.abs(b)) | (np.isnan(a) & np.isnan(b)))
        bad &= ~((a == b) & np.isinf(b))
        if np.any(bad):
            index = np.unravel_index(int(np.argmax(np.where(bad, 1, 0))), a.shape) if a.ndim else ()
            raise AssertionError(
                f"{where}: srcgrad gives {a[index]!r}, the oracle {b[index]!r} at index "
                f"{index} ({int(np.sum(bad))} of {a.size} elements differ)\n"
                f"srcgrad: {a.tolist()!r}\noracle:  {b.tolist()!r}"
            )


# -- is an exception a refusal? -----------------------------------------------------------------
def is_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` is srcgrad refusing clearly: one of its errors, or a
    TypeError/ValueError/NotImplementedError raised by a ``raise`` statement of srcgrad's
    own (not by numpy, Python or generated code failing inside it)."""
    if isinstance(exc, srcgrad.SrcgradError):
        return True
    if not isinstance(exc, (TypeError, ValueError, NotImplementedError)):
        return False
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    try:
        inside = Path(filename).resolve().is_relative_to(SRCGRAD_DIR)
    except (OSError, ValueError):
        inside = False
    line = linecache.getline(filename, tb.tb_lineno).strip()
    return inside and line.startswith("raise")


def names_a_line(exc: BaseException, path: str, source: str) -> bool:
    """Whether the error message says where in the user's file: the file, or a line of it."""
    message = str(exc)
    if path and Path(path).name in message:
        return True
    lines = [line.strip() for line in source.splitlines() if len(line.strip()) > 6]
    return any(line in message for line in lines)


# -- srcgrad against autograd, one function at one point ---------------------------------------
def callees(func: Callable[..., Any]) -> list[Callable[..., Any]]:
    """``func`` and the functions of its module that it calls, transitively (by name)."""
    func = func.func if isinstance(func, Primitive) else func
    found: list[Any] = []
    todo = [func]
    while todo:
        f = todo.pop()
        if any(f is g for g in found):
            continue
        found.append(f)
        names = set(f.__code__.co_names) | set(f.__code__.co_freevars)
        for name in names:
            value = f.__globals__.get(name)
            if isinstance(value, Primitive):
                value = value.func
            if isinstance(value, types.FunctionType) and value.__module__ == func.__module__:
                todo.append(value)
    return found


class Referee:
    """Central differences of ``B`` at ``A``: who is right where srcgrad and autograd
    disagree (autograd has rules that are wrong at points: ``x ** y`` at ``y = 0`` in
    second order, ``np.full_like(x, c)`` and ``np.asarray([x, y])`` w.r.t. the values,
    ``np.repeat`` along a negative axis).

    ``form`` is ``"jvp"``: the derivative compared is ``dB(A)[t]`` (``t`` on the
    positions ``Q``), or ``"vjp"``: it is ``dB(A)^T w``, checked along random
    directions ``v``: ``<dB^T w, v> = <w, dB[v]>``.
    """

    def __init__(
        self,
        B: Callable[..., Any],
        A: Sequence[Any],
        Q: Sequence[int],
        form: str,
        t: Sequence[Any] | None = None,
        w: Any = None,
        extract: Callable[[Any], Any] = lambda got: got,
    ) -> None:
        self.B, self.A, self.Q, self.form = B, list(A), list(Q), form
        self.t, self.w, self.extract = t, w, extract
        #: a (value, tangent) pair: the values are compared without a referee
        self.values_first = False

    def _difference(self, direction: Sequence[Any], h: float) -> list[Any]:
        def at(sign: float) -> list[Any]:
            moved = [_double(a) for a in self.A]  # (float32 is too coarse to difference)
            for i, d in zip(self.Q, direction):
                moved[i] = moved[i] + sign * h * d
            with np.errstate(all="ignore"):
                return [np.asarray(v, dtype=float) for v in leaves(self.B(*moved))]

        return [(p - m) / (2 * h) for p, m in zip(at(1.0), at(-1.0))]

    def agrees(self, derivative: Any, rng: np.random.Generator) -> bool:
        """Whether central differences (at one of a few steps) give ``derivative``."""
        try:
            value = self.extract(derivative)
        except Exception:
            return False
        if self.form == "vjp":
            vs = [like(self.A[i], rng) for i in self.Q]
            cotangents = leaves(value)
            if len(cotangents) != len(vs) or any(
                np.shape(c) != np.shape(v) for c, v in zip(cotangents, vs)
            ):
                return False
            target = [np.asarray(sum(_inner(c, v) for c, v in zip(cotangents, vs)))]
            direction = vs
        else:
            target = [np.asarray(v, dtype=float) for v in leaves(value)]
            direction = list(self.t or ())
        single = any(np.result_type(a) == np.float32 for a in self.A if differentiable(a))
        rtol = 3e-3 if single else 1e-4  # (the derivative judged has its own precision)
        for h in (1e-3, 1e-4, 1e-5, 1e-6):
            try:
                estimate = self._difference(direction, h)
            except Exception:
                return False
            if self.form == "vjp":
                estimate = [np.asarray(sum(_inner(w, e) for w, e in zip(leaves(self.w), estimate)))]
            if len(estimate) != len(target):
                return False
            if all(
                np.shape(e) == np.shape(g)
                and np.allclose(
                    e, g, rtol=rtol, atol=rtol / 10 * max(1.0, float(np.max(np.abs(g))))
                )
                for e, g in zip(estimate, target)
            ):
                return True
        return False


def _double(value: Any) -> Any:
    """A float32 value as float64 (a copy of an array in any case)."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float64) if value.dtype == np.float32 else np.copy(value)
    if isinstance(value, np.float32):
        return np.float64(value)
    return value


def tangent_part(got: Any) -> Any:
    return got[1]


def _values_first(referee: Referee) -> Referee:
    referee.values_first = True
    return referee


def _jvp_referee(
    B: Callable[..., Any], A: Sequence[Any], Q: Sequence[int], t: Sequence[Any]
) -> Referee:
    """The referee of a jvp's ``(value, tangent)``."""
    return _values_first(Referee(B, A, Q, "jvp", t=t, extract=tangent_part))


def _inner(a: Any, b: Any) -> float:
    return float(np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float)))


class Oracle:
    """srcgrad's derivatives of ``func`` at ``args`` against autograd's, first and second
    order, with respect to every argument of every derivative.

    Raises :class:`NoAutograd` where autograd cannot give the first-order derivatives
    (the caller skips, saying why); a derivative autograd cannot give, or gives as nan
    or inf, is left out (``self.unchecked``). Where the two disagree, central
    differences decide (:class:`Referee`): if they side with srcgrad, autograd is wrong
    there (``self.autograd_wrong``). srcgrad may refuse a derivative of a derivative
    clearly (``is_refusal``; listed in ``self.refused``), and any derivative where
    ``refusable`` says so; a wrong number, an internal exception or a changed argument
    fails.
    """

    #: the compositions of second order (``second``), in the order ``rotation`` cycles
    SECOND = (
        "jvp of vjp",
        "jvp of jvp",
        "jvp of grad",
        "hvp",
        "grad of jvp",
        "hessian",
        "grad of vjp",
    )

    def __init__(
        self,
        func: Callable[..., Any],
        args: Sequence[Any],
        seed: int = 0,
        gaps: Collection[str] = (),
        refusable: bool = False,
        wrt: Sequence[int] | None = None,
        single: bool = False,
    ) -> None:
        self.gaps = set(gaps)
        self.refusable = refusable
        functions = callees(func)
        reason = autograd_unsound(functions)
        if reason is not None:
            raise NoAutograd(reason)
        self.func = func
        self.args = list(args)
        self.F = autograd_twin(func)
        self.rng = np.random.default_rng(seed)
        self.positions = [i for i, a in enumerate(self.args) if differentiable(a)]
        if wrt is not None:  # first order w.r.t. these only (second order: every argument)
            self.positions = [i for i in self.positions if i in wrt]
        if not self.positions:
            raise NoAutograd("no differentiable argument")
        with np.errstate(all="ignore"):
            self.out = func(*copied(self.args))
        if not float_output(self.out):
            raise NoAutograd(f"the output is not a float array ({type(self.out).__name__})")
        leaf_values = [*leaves(self.out), *(self.args[i] for i in self.positions)]
        self.rtol, self.atol = precision(leaf_values, single)
        theirs = run_autograd(self.F, *copied(self.args))
        try:
            assert_close("value", theirs, self.out, self.rtol, self.atol)
        except AssertionError as exc:
            raise NoAutograd(f"autograd computes another value: {exc}") from None
        self.scalar = np.ndim(self.out) == 0 and not isinstance(self.out, (tuple, list))
        self.refused: list[str] = []
        self.unchecked: list[str] = []
        self.autograd_wrong: list[str] = []
        self.checked: list[str] = []
        self.skip: set[tuple[str, str]] = set()

    # -- running one comparison ----------------------------------------------------------
    def compare(
        self,
        what: str,
        ours: Callable[[], Any],
        theirs: Callable[[], Any],
        inputs: Sequence[Any],
        higher: bool,
        referee: Referee,
    ) -> None:
        try:
            want = run_autograd(theirs)
        except NoAutograd as exc:
            if not higher:
                raise
            self.unchecked.append(f"{what}: {exc}")
            return
        saved = [np.copy(v) if isinstance(v, np.ndarray) else v for v in inputs]
        try:
            with np.errstate(all="ignore"):
                got = ours()
        except Exception as exc:
            if (higher or self.refusable) and is_refusal(exc):
                self.refused.append(f"{what}: {type(exc).__name__}: {exc}".splitlines()[0])
                return
            raise AssertionError(
                f"{what}: srcgrad raised {type(exc).__name__}: {exc}\n{self.describe()}"
            ) from exc
        for k, (before, after) in enumerate(zip(saved, inputs)):
            if isinstance(before, np.ndarray) and not np.array_equal(before, after, equal_nan=True):
                raise AssertionError(f"{what}: srcgrad modified the caller's argument {k}")
        for a, b in zip(leaves(got), leaves(want)):
            try:
                a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
            except (TypeError, ValueError):
                continue
            if a.shape == b.shape and np.any(np.isfinite(a) & ~np.isfinite(b)):
                # (autograd's rules divide by zero where a formula has a removable
                # singularity: prod at 0, sinc at 0, the max norm at a tie)
                self.unchecked.append(f"{what}: autograd gives nan or inf")
                return
        rtol = 10 * self.rtol if higher else self.rtol
        try:
            if isinstance(got, tuple) and referee.values_first:  # (value, tangent)
                assert_close(f"{what}, value", got[0], want[0], rtol, self.atol)
        except AssertionError as exc:
            if self.autograd_wrong:  # the value is a first-order derivative autograd got wrong
                self.unchecked.append(f"{what}: autograd's first order is wrong here")
                return
            raise AssertionError(f"{exc}\n{self.describe()}") from None
        try:
            assert_close(what, got, want, rtol, self.atol)
        except AssertionError as exc:
            rng = np.random.default_rng(1)
            if referee.agrees(got, rng) and not referee.agrees(want, rng):
                self.autograd_wrong.append(what)
                return
            raise AssertionError(f"{exc}\n{self.describe()}") from None
        self.checked.append(what)

    def describe(self) -> str:
        args = ", ".join(_show(a) for a in self.args)
        return f"at {self.func.__module__}.{self.func.__name__}({args})"

    def wrts(self, every: bool) -> list[tuple[list[int], bool]]:
        """The wrt choices: all differentiable arguments at once (as a tuple), and with
        ``every`` each one alone too."""
        if len(self.positions) == 1 and not every:
            return [(self.positions, False)]
        choices = [(self.positions, True)]
        if every or len(self.positions) == 1:
            choices += [([p], False) for p in self.positions]
        return choices

    # -- first order -------------------------------------------------------------------------
    def first(self, P: list[int], as_tuple: bool) -> None:
        f, F, args = self.func, self.F, self.args
        W = tuple(P) if as_tuple else P[0]
        name = f"wrt={W!r}"
        u = like(self.out, self.rng)
        self.compare(
            f"vjp {name}",
            lambda: srcgrad.vjp(f, wrt=W)(*args, u),
            lambda: ag_vjp(F, P, as_tuple)(*args, u),
            [*args, *leaves(u)],
            higher=False,
            referee=Referee(f, args, P, "vjp", w=u),
        )
        ts = [like(args[i], self.rng) for i in P]
        self.compare(
            f"jvp {name}",
            lambda: srcgrad.jvp(f, wrt=W)(*args, *ts),
            lambda: ag_jvp(F, P, as_tuple)(*args, *ts),
            [*args, *ts],
            higher=False,
            referee=_jvp_referee(f, args, P, ts),
        )
        if not self.scalar:
            return
        for mode in ("reverse", "forward"):
            if (mode, "value_and_grad") not in self.skip:
                self.compare(
                    f"value_and_grad {name} mode={mode}",
                    lambda mode=mode: srcgrad.value_and_grad(f, wrt=W, mode=mode)(*args),
                    lambda: ag_value_and_grad(F, P, as_tuple)(*args),
                    args,
                    higher=False,
                    referee=_values_first(Referee(f, args, P, "vjp", w=1.0, extract=tangent_part)),
                )
            if (mode, "grad") not in self.skip:
                self.compare(
                    f"grad {name} mode={mode}",
                    lambda mode=mode: srcgrad.grad(f, wrt=W, mode=mode)(*args),
                    lambda: ag_grad(F, P, as_tuple)(*args),
                    args,
                    higher=False,
                    referee=Referee(f, args, P, "vjp", w=1.0),
                )

    # -- second order: every argument of the derivative, cotangent and tangents included ---
    def second(self, kind: str, P: list[int], as_tuple: bool) -> None:
        f, F, args = self.func, self.F, self.args
        W = tuple(P) if as_tuple else P[0]
        rng = self.rng
        if kind == "grad of vjp":  # grad needs a scalar output: a vjp w.r.t. one scalar
            scalars = [p for p in P if np.ndim(args[p]) == 0]
            if not scalars:
                return
            P, as_tuple, W = scalars[:1], False, scalars[0]
        name = f"{kind} (inner wrt={W!r})"
        if kind in ("jvp of vjp", "grad of vjp"):
            inner, G = srcgrad.vjp(f, wrt=W), ag_vjp(F, P, as_tuple)
            A = [*args, like(self.out, rng)]
            if isinstance(A[-1], tuple):
                return  # a tuple cotangent: srcgrad differentiates arrays and floats here
        elif kind in ("jvp of jvp", "grad of jvp"):
            inner, G = srcgrad.jvp(f, wrt=W), ag_jvp(F, P, as_tuple)
            A = [*args, *(like(args[i], rng) for i in P)]
            if kind == "grad of jvp":
                if not self.scalar:
                    return
                G = tangent_output(G)
        elif kind in ("jvp of grad", "hvp", "hessian"):
            if not self.scalar:
                return
            inner, G = srcgrad.grad(f, wrt=W), ag_grad(F, P, as_tuple)
            A = list(args)
        else:
            raise ValueError(kind)
        # srcgrad's first-order code, the function the referee differentiates numerically
        B = inner if kind != "grad of jvp" else (lambda *a: inner(*a)[1])
        Q = [i for i, a in enumerate(A) if differentiable(a)]
        if kind == "hvp":
            vs = [like(args[i], rng) for i in P]
            self.compare(
                name,
                lambda: srcgrad.hvp(f, wrt=W)(*args, *vs),
                lambda: ag_jvp(G, P, as_tuple)(*args, *vs)[1],
                [*args, *vs],
                higher=True,
                referee=Referee(B, args, P, "jvp", t=vs),
            )
        elif kind == "hessian":
            for p in P:
                if np.size(args[p]) > 12:
                    continue
                t = like(args[p], rng)
                self.compare(
                    f"hessian wrt={p}",
                    lambda p=p: srcgrad.hessian(f, wrt=p)(*args),
                    lambda p=p: autograd.hessian(F, p)(*args),
                    args,
                    higher=True,
                    referee=Referee(
                        srcgrad.grad(f, wrt=p),
                        args,
                        [p],
                        "jvp",
                        t=[t],
                        extract=lambda H, t=t: np.tensordot(H, t, np.ndim(t)),
                    ),
                )
        elif kind.startswith("grad of"):
            self.compare(
                f"{name}, outer wrt={tuple(Q)}",
                lambda: srcgrad.grad(inner, wrt=tuple(Q))(*A),
                lambda: ag_grad(G, Q, True)(*A),
                A,
                higher=True,
                referee=Referee(B, A, Q, "vjp", w=1.0),
            )
        else:  # a jvp of the derivative, every argument at once
            ts = [like(A[i], rng) for i in Q]
            self.compare(
                f"{name}, outer wrt={tuple(Q)}",
                lambda: srcgrad.jvp(inner, wrt=tuple(Q))(*A, *ts),
                lambda: ag_jvp(G, Q, True)(*A, *ts),
                [*A, *ts],
                higher=True,
                referee=_jvp_referee(B, A, Q, ts),
            )

    def run(
        self, kinds: Sequence[str], every: bool, skip: Collection[tuple[str, str]] = ()
    ) -> None:
        """First order for each wrt choice (but the ``(mode, grad or value_and_grad)`` in
        ``skip``: reverse-mode grad and value_and_grad are separate code, each costs a
        generation), then the second-order ``kinds``."""
        self.skip = set(skip)
        choices = self.wrts(every)
        for P, as_tuple in choices:
            self.first(P, as_tuple)
        for kind in kinds:
            for P, as_tuple in choices if every else choices[:1]:
                self.second(kind, P, as_tuple)


def first_order_skips(index: int, thorough: bool) -> list[tuple[str, str]]:
    """Reverse-mode grad and value_and_grad in turn (both when thorough)."""
    if thorough:
        return []
    return [("reverse", "value_and_grad" if index % 2 else "grad")]


def rotation(index: int, thorough: bool) -> list[str]:
    """The second-order compositions one case checks: all of them when thorough; else the
    jvp of the vjp (every argument, the cotangent included) and one more, in turn."""
    if thorough:
        return list(Oracle.SECOND)
    others = Oracle.SECOND[1:]
    return ["jvp of vjp", others[index % len(others)]]


def check_against_twin(f: Callable[..., Any], x: np.ndarray, rtol: float = 1e-10) -> None:
    """srcgrad's gradient of ``f`` at ``x`` in both modes, its JVP along ``x`` reversed
    and its Hessian, against autograd running the same source (:func:`autograd_twin`)."""
    twin = autograd_twin(f)
    assert np.allclose(f(x), twin(x))
    expected = autograd.grad(twin)(x)
    for mode in ("reverse", "forward"):
        np.testing.assert_allclose(srcgrad.grad(f, mode=mode)(x), expected, rtol=rtol)
    direction = x[::-1].copy()
    _, tangent = srcgrad.jvp(f)(x, direction)
    np.testing.assert_allclose(tangent, expected @ direction, rtol=1e-9, atol=1e-12)
    hessian = autograd.hessian(twin)(x)
    np.testing.assert_allclose(srcgrad.hessian(f)(x), hessian, rtol=1e-9, atol=1e-12)
