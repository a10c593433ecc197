"""The public transformations: ``grad``, ``value_and_grad``, ``jvp``, ``vjp``.

Each returns a :class:`Derivative`, a callable that generates its code on
the first call with a given kind of arguments (their ranks and backend),
caches it, and runs it. ``.source`` is the generated module.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import math
import random
import types
import weakref
from collections.abc import Callable, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import pytree
from .backends import (
    NUMPY,
    Backend,
    backend_of,
    check_arguments,
    dask_numpy,
    is_cupy,
    is_dask,
)
from .backends import (
    module_of as _module_of,
)
from .compiler import driver, emit
from .compiler.analyze.dtypes import FLOAT, value_kind
from .compiler.analyze.facts import LEAF
from .compiler.parse import ParsedFunction, env_is_current, free_name_sources, sources_current
from .errors import SrcgradError
from .results import (
    _COMPLEX_GRADIENT,
    _LIKES,
    _copied,
    _fresh,
    _like,
    _like_tree,
    _output_dtype,
    _tangent_like,
    _unflatten,
    _zero_tangent,
)

if TYPE_CHECKING:  # (jacobian.py builds on this module)
    from .jacobians import HessianVectorProduct, Jacobian

Wrt = Union[int, str, Sequence[Union[int, str]]]  # noqa: UP007 (a runtime alias on 3.10)

_MODES = ("reverse", "forward")


class _Entry:
    """What srcgrad has generated for one function, kept while the function lives."""

    def __init__(self, code: Any) -> None:
        self.code = code  # the function's __code__ when this was made
        self.norm: Any = None  # its normalized form, shared by every derivative
        self.norm_aux: Any = None  # the same, its returned pair split for has_aux
        self.derived: dict[tuple, driver.Derived] = {}
        #: replaced in the cache by a newer entry (a quick call made from this one is stale)
        self.retired = False

    def is_current(self, func: Any) -> bool:
        """Whether ``func``'s code and the globals this was made with are unchanged."""
        return self.code is func.__code__ and all(
            norm is None or env_is_current(norm.parsed) for norm in (self.norm, self.norm_aux)
        )


#: generated code per user function (held weakly: nothing in an entry refers to its
#: function, so the entry goes when the function does), keyed by (kind, wrt, backend,
#: argument ranks)
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: the name under which a generated module's namespace keeps the entries of its functions
_ENTRIES = "__srcgrad_entries__"


def _entries(target: Any) -> MutableMapping[Any, _Entry]:
    """Where the entry for ``target`` is kept: ``_CACHE``, or for a generated function
    (a derivative differentiated again) its own module's namespace. The code made from a
    generated function refers back to that module (its helpers, its callees' derivatives),
    so an entry in ``_CACHE`` would keep it alive for ever; kept in the namespace, the
    two are freed together, with the derivative they were made from."""
    namespace = target.__globals__
    if namespace.get("__name__") == emit.GENERATED:
        return namespace.setdefault(_ENTRIES, {})
    return _CACHE


#: how many kinds of arguments each of a derivative's two tables of quick calls holds (by
#: exact shapes, and by what decides the code); the oldest goes first, so that calls with
#: a new batch size each time cannot grow them without limit
_QUICK_LIMIT = 64

_NDARRAY = np.ndarray  # (one lookup fewer on the quick path)

#: what a quick call's record of a function's defaults holds before they are read
_UNSEEN = object()


class _QuickCall:
    """What calls with arguments of one kind (the same types and dtypes, and for arrays
    the same ranks and axes of length 1) need to reuse their generated code.

    ``is_current`` is the check ``_Entry.is_current`` and ``Derived.is_current`` make
    (``parse.env_is_current`` for each function, on ``parse.free_name_sources``),
    precomputed for a tight loop: every function the code was made from (the user's
    function, and the user functions it calls) still has the same ``__code__``,
    ``__defaults__`` and ``__kwdefaults__``, and every free name still refers to the
    same object, read from where it was resolved (a closure cell, the module's
    globals, or builtins where the globals lack it).
    It may only say False where those say True (never the other way round): a stale
    quick call falls back to the full path, which checks again.

    ``likes`` holds, for each wrt argument, the function that gives its gradient the
    argument's type, dtype and shape (``_like_tree``, or a quicker equivalent for a
    numpy array or a Python float). ``run``, where the derivative has one (see
    ``Derivative._quick_runner``), does all of a call's work after the check.
    """

    __slots__ = ("entry", "derived", "codes", "names", "cells", "likes", "run")

    def __init__(
        self,
        entry: _Entry,
        derived: driver.Derived,
        codes: tuple[tuple[Any, Any, Any, Any], ...],
        names: tuple[tuple[dict, str, Any], ...],
        cells: tuple[tuple[Any, Any], ...],
        likes: tuple[Callable[[Any, Any], Any], ...],
    ) -> None:
        self.entry = entry
        self.derived = derived
        self.codes = codes  # (function, its code, __defaults__, __kwdefaults__ when parsed)
        self.names = names  # (namespace, name, the object it held when parsed)
        self.cells = cells  # (closure cell, the object it held when parsed)
        self.likes = likes
        self.run: Callable[[tuple], Any] | None = None

    @classmethod
    def make(
        cls, entry: _Entry, func: Any, derived: driver.Derived, wrt_values: list[Any]
    ) -> _QuickCall | None:
        """The quick call for code just made from ``func`` or found current (None where
        it is not current, or its free names cannot be watched this way)."""
        if entry.retired or func.__code__ is not entry.code:
            return None
        parsed = [n.parsed for n in (entry.norm, entry.norm_aux) if n is not None]
        # (each function's, once; _watch replaces this one's with the defaults it was made with)
        codes = {id(func): (func, entry.code, _UNSEEN, _UNSEEN)}
        names: dict[tuple[int, str], tuple[dict, str, Any]] = {}
        cells: dict[int, tuple[Any, Any]] = {}
        for p in [*parsed, *derived.callees]:
            if not _watch(p, codes, names, cells):
                return None
        likes = tuple(_LIKES.get(type(v), _like_tree) for v in wrt_values)
        return cls(
            entry,
            derived,
            tuple(codes.values()),
            tuple(names.values()),
            tuple(cells.values()),
            likes,
        )

    def is_current(self) -> bool:
        """Whether the code is still the code for this call (see the class)."""
        if self.entry.retired:
            return False
        for func, code, defaults, kwdefaults in self.codes:
            if (
                func.__code__ is not code
                or func.__defaults__ is not defaults
                or func.__kwdefaults__ is not kwdefaults
            ):
                return False
        return sources_current(self.cells, self.names)


def _watch(
    parsed: ParsedFunction,
    codes: dict[int, tuple[Any, Any, Any, Any]],
    names: dict[tuple[int, str], tuple[dict, str, Any]],
    cells: dict[int, tuple[Any, Any]],
) -> bool:
    """Add what ``parse.env_is_current(parsed)`` checks to the lists a quick call checks;
    False where it is not current now, or its globals are not a plain dict."""
    func = parsed.func
    if type(func.__globals__) is not dict or not env_is_current(parsed):
        return False
    codes[id(func)] = (func, parsed.code, *parsed.defaults)
    closure_cells, namespaces = free_name_sources(parsed)
    for cell, value in closure_cells:
        cells[id(cell)] = (cell, value)
    for namespace, name, value in namespaces:
        names[id(namespace), name] = (namespace, name, value)
    return True


class Derivative:
    """A derivative of a Python function, generated as Python source.

    Call it like the transformation that made it says. ``.source`` is the
    generated code (of the most recent call, or a generic version before any
    call); ``.__wrapped__`` is the original function.
    """

    #: (what analysis looks for to say that a differentiated function calls one)
    __srcgrad_derivative__ = True

    def __init__(
        self,
        func: Callable[..., Any],
        kind: str,
        wrt: Wrt,
        mode: str = "reverse",
        has_aux: bool = False,
    ) -> None:
        self._inner: Derivative | None = None
        if isinstance(func, Derivative):
            # higher order: differentiate the inner derivative's generated code
            mode = _mode_over(func, kind, mode)
            self._inner = func
        elif not inspect.isfunction(func):
            raise TypeError(_not_a_function(func, kind))
        if mode not in _MODES:
            raise ValueError(f"mode must be 'reverse' or 'forward', not {mode!r}")
        if has_aux and self._inner is not None:
            raise TypeError("has_aux=True needs a Python function, not a derivative")
        self.has_aux = has_aux
        functools.update_wrapper(self, func, updated=())
        self.__wrapped__ = func
        self.kind = kind
        self.mode = mode
        # (the callable's own parameters: not those of a function it wraps)
        self._signature = inspect.signature(func, follow_wrapped=False)
        #: the __defaults__ the signature holds (a call binds the function's current ones)
        self._defaults = getattr(func, "__defaults__", None)
        #: the names of the inner derivative's arguments after the function's: its
        #: cotangent, or its tangents (named afresh: ``x_dot``, then ``x_dot_1``...)
        self._extra_names: list[str] = []
        if self._inner is not None and self._inner.kind in ("vjp", "jvp"):
            # the inner code takes the function's arguments, then the cotangent (see _bind)
            # or one tangent per wrt argument: every argument is passed, so no defaults
            taken = set(self._signature.parameters)
            wanted = ["dout"] if self._inner.kind == "vjp" else [f"{w}_dot" for w in func.wrt]
            for name in wanted:
                self._extra_names.append(_unused_name(name, taken))
                taken.add(self._extra_names[-1])
            positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
            params = [
                p.replace(default=inspect.Parameter.empty)
                for p in self._signature.parameters.values()
            ]
            added = [inspect.Parameter(n, positional) for n in self._extra_names]
            self._signature = self._signature.replace(parameters=[*params, *added])
        #: a derivative of a jvp differentiates its tangent output (grad's value is that)
        self._tangent_output = self._inner is not None and self._inner.kind == "jvp"
        self.__signature__ = self._signature  # what inspect.signature reports
        self._params = list(self._signature.parameters)
        self.wrt, self._wrt_tuple = _normalize_wrt(wrt, self._params, func)
        self._last: driver.Derived | None = None
        self._wrappers: dict[tuple, tuple[driver.Derived, Callable[..., Any]]] = {}
        #: how many arguments a call on the quick path has (None: no quick path, for a
        #: derivative of a derivative, whose code depends on the inner one's too)
        self._quick_arity = len(self._params) if self._inner is None else None
        self._wrt_index = [self._params.index(w) for w in self.wrt]
        #: how many arguments follow the function's: jvp's tangents, vjp's cotangent
        self._extra_count = {"jvp": len(self.wrt), "vjp": 1}.get(kind, 0)
        #: quick calls (see __call__) by _quick_key, and by _code_key for other shapes
        self._quick: dict[tuple, _QuickCall] = {}
        self._quick_by_code: dict[tuple, _QuickCall] = {}

    # -- generation --------------------------------------------------------------
    @property
    def _generated_kind(self) -> str:
        if self.kind in ("grad", "value_and_grad") and self.mode == "forward":
            return "jvp"
        return self.kind

    def _target(
        self, ranks: dict[str, int | None], backend: Backend, floats: frozenset[str] = frozenset()
    ) -> Callable[..., Any]:
        """The Python function this derivative transforms: the user's, or for a
        derivative of a derivative, the inner one's code for these arguments."""
        if self._inner is None:
            return self.__wrapped__
        # the inner code as numpy code (its calls are the ones the rules know), rebound to
        # the backend when this derivative's code is emitted, as the user's code is
        return self._inner.as_function(ranks, NUMPY, floats)

    def as_function(
        self, ranks: dict[str, int | None], backend: Backend, floats: frozenset[str] = frozenset()
    ) -> Callable[..., Any]:
        """One generated Python function computing this derivative for arguments of
        these ranks (``floats``: the parameters whose arguments are floats), for
        differentiating it again."""
        derived = self._derived(ranks, backend, floats=floats)
        if self.kind == self._generated_kind and self.kind in ("grad", "vjp", "jvp"):
            return derived.function
        # forward mode: the gradient with respect to a scalar is one jvp
        if self._wrt_tuple or ranks.get(self.wrt[0]) != 0:
            raise TypeError(
                f"srcgrad differentiates {self!r} again only with respect to one scalar "
                "argument (higher order runs forward mode over the generated code); use "
                "srcgrad.hessian or srcgrad.hvp for arrays"
            )
        key = (backend.name, tuple(ranks.get(p) for p in self._params))
        made_from, wrapper = self._wrappers.get(key, (None, None))
        if made_from is not derived:  # (new code: a global was rebound since)
            wrapper = driver.unit_tangent_wrapper(derived, self._params, self.wrt[0], self.__name__)
            self._wrappers[key] = (derived, wrapper)
        return wrapper

    def _derived(
        self,
        ranks: dict[str, Any],
        backend: Backend,
        wide: tuple | None = None,
        floats: frozenset[str] = frozenset(),
    ) -> driver.Derived:
        """The generated code for arguments of these ranks (pytrees: their structures)
        and, in ``wide``, for each array argument, which of its axes are not of length 1;
        ``floats``: the parameters whose arguments are floats (numbers or float arrays)."""
        ranks_key = tuple(ranks.get(p) for p in self._params)
        floats = frozenset(floats) & set(self._params)
        wide = wide if self._inner is None and wide is not None else ()
        target = self._target(ranks, backend, floats)
        wrt = self.wrt
        if self._inner is not None:
            # the inner code names its parameters its own way (``out_bar`` for the
            # cotangent this signature calls ``dout``, ``x_dot_1``...): its parameters
            # are this derivative's, in order
            own = _parameter_names(target)
            if len(own) != len(self._params):
                raise AssertionError(
                    f"srcgrad bug: {target.__name__} takes {own}, expected {self._params}"
                )
            rename = dict(zip(self._params, own))
            wrt = [rename[w] for w in self.wrt]
            ranks = {rename[p]: r for p, r in ranks.items() if p in rename}
            floats = frozenset(rename[p] for p in floats)
        floats_key = tuple(sorted(floats))
        key = (
            self._generated_kind,
            tuple(wrt),
            backend.name,
            ranks_key,
            wide,
            self.has_aux,
            floats_key,
        )
        entries = _entries(target)
        entry = entries.get(target)
        if entry is None or not entry.is_current(target):
            if entry is not None:
                entry.retired = True
            entry = entries[target] = _Entry(target.__code__)
        derived = entry.derived.get(key)
        if derived is None or not derived.is_current():
            try:
                derived = self._generate(entry, target, wrt, ranks, backend, wide, floats)
            except SrcgradError as exc:
                if self._inner is None:
                    raise
                raise _in_user_code(exc, self) from None
            except ValueError as exc:  # (grad of a derivative whose output is not a scalar)
                if self._inner is None or repr(target.__name__) not in str(exc):
                    raise
                raise ValueError(
                    str(exc).replace(repr(target.__name__), repr(self._inner))
                ) from None
            entry.derived[key] = derived
        self._last = derived
        return derived

    def _generate(
        self,
        entry: _Entry,
        target: Callable[..., Any],
        wrt: list[str],
        ranks: dict[str, Any],
        backend: Backend,
        wide: tuple,
        floats: frozenset[str] = frozenset(),
    ) -> driver.Derived:
        """Generate the code ``_derived`` looks for (and keeps in ``entry``)."""
        if self.has_aux or (self._tangent_output and self.kind != "jvp"):
            if entry.norm_aux is None:
                entry.norm_aux = driver.front(target)
                if self._tangent_output:
                    entry.norm_aux.split_aux(keep=1, drop=True)
                else:
                    entry.norm_aux.split_aux()
            norm = entry.norm_aux
        else:
            if entry.norm is None:
                entry.norm = driver.front(target)
            norm = entry.norm
        return driver.derive(
            norm, self._generated_kind, wrt, ranks, backend, wide=dict(wide), floats=floats
        )

    @property
    def source(self) -> str:
        """The generated Python source of this derivative, a complete module."""
        if self._last is not None:
            return self._last.source
        if self._inner is not None:  # needs the inner code for concrete arguments
            return "# the derivative of a derivative is generated at its first call\n"
        entry = _CACHE.get(self.__wrapped__)
        if entry is not None:  # the latest code made for this kind of derivative
            for key in reversed(list(entry.derived)):
                if key[:2] == (self._generated_kind, tuple(self.wrt)):
                    return entry.derived[key].source
        return self._derived({}, NUMPY).source

    def __repr__(self) -> str:
        wrt = self.wrt[0] if not self._wrt_tuple else tuple(self.wrt)
        mode = f", mode={self.mode!r}" if self.kind in ("grad", "value_and_grad") else ""
        what = repr(self._inner) if self._inner is not None else self.__wrapped__.__qualname__
        return f"<srcgrad.{self.kind} of {what}, wrt={wrt!r}{mode}>"

    def _repr_html_(self) -> str:
        from .display import derivative_html

        return derivative_html(self)

    # -- calling -------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        extras: Sequence[Any] = ()
        extra_count = self._extra_count
        if extra_count:
            if len(args) < extra_count:
                raise TypeError(self._usage(len(args) + len(kwargs)))
            args, extras = args[: len(args) - extra_count], list(args[len(args) - extra_count :])
            if _quick_key(extras) is None:  # (anything but numpy arrays and numbers)
                check_arguments(extras, self._extra_labels(), self.__name__)
        # a call like an earlier one (plain numpy arrays and Python numbers of the same
        # types, shapes and dtypes, every argument positional) reuses its code after
        # checking only that the functions it was made from are unchanged
        quick = _quick_key(args) if not kwargs and len(args) == self._quick_arity else None
        call = self._quick.get(quick)  # (None when quick is: never a key)
        if call is None and quick is not None:  # arrays of other lengths, the same code?
            call = self._quick_by_code.get(_code_key(quick))
            if call is not None:
                _remember(self._quick, quick, call)
        if call is not None and call.is_current():
            self._last = call.derived  # (what .source shows)
            if call.run is not None:
                return call.run(args)
            return self._finish(call.derived, args, extras, call.likes)
        try:
            values = self._bind(args, kwargs)
        except TypeError:
            if not extra_count:
                raise
            raise TypeError(self._usage(len(args) + extra_count + len(kwargs))) from None
        check_arguments(values, self._params, self.__name__)
        for w in self.wrt:
            _check_differentiable(w, values[self._params.index(w)], self.__name__)
        backend = backend_of(values, self._params)
        if backend.name == "dask" and extras:  # numpy tangents or cotangent: dask too
            extras = [pytree.map_leaves(_lazy, e) for e in extras]
        ranks = {p: _rank(v) for p, v in zip(self._params, values)}
        wide = tuple((p, w) for p, w in zip(self._params, map(_wide_axes, values)) if w)
        floats = frozenset(p for p, v in zip(self._params, values) if value_kind(v) == FLOAT)
        derived = self._derived(ranks, backend, wide, floats)
        likes = None
        if quick is not None:  # with the entry it came from
            wrt_values = [values[i] for i in self._wrt_index]
            entry = _CACHE[self.__wrapped__]
            call = _QuickCall.make(entry, self.__wrapped__, derived, wrt_values)
            if call is not None:
                call.run = self._quick_runner(derived, call.likes)
                _remember(self._quick, quick, call)
                _remember(self._quick_by_code, _code_key(quick), call)
                likes = call.likes
        return self._finish(derived, values, extras, likes)

    def _extra_labels(self) -> list[str]:
        """What the arguments after the function's are called in messages."""
        if self.kind == "jvp":
            return [f"the tangent for {w!r}" for w in self.wrt]
        return ["the cotangent dout"]

    def _usage(self, got: int) -> str:
        """How to call this jvp or vjp, for a call with ``got`` arguments that does not."""
        name = self.__name__
        what = (
            f"one tangent per wrt argument (for {', '.join(map(repr, self.wrt))})"
            if self.kind == "jvp"
            else "the cotangent dout, shaped like its output"
        )
        return (
            f"{self.kind} of {name} takes the arguments of {name} ({', '.join(self._params)}), "
            f"then {what}: {len(self._params) + self._extra_count} in all, counting defaults; "
            f"got {got}"
        )

    def _finish(
        self,
        derived: driver.Derived,
        values: Sequence[Any],
        extras: Sequence[Any],
        likes: tuple[Callable[[Any, Any], Any], ...] | None,
    ) -> Any:
        """Run the generated code on the call's values (and extra arguments) and shape
        its result; ``likes`` (from a quick call) shapes each gradient, else
        ``_like_tree``."""
        if self.kind in ("grad", "value_and_grad") and self.mode == "forward":
            return self._forward_grad(derived, list(values))
        if self.kind == "jvp":
            extras = [
                _tangent_like(t, values[i], w) for t, i, w in zip(extras, self._wrt_index, self.wrt)
            ]
        result = _fresh(derived.function(*values, *extras), [*values, *extras])
        if self.kind == "jvp":
            value, tangent = result
            return value, _output_dtype(tangent, value)
        if self.kind == "value_and_grad":
            value, grads = result
            return value, self._shape_grads(grads, values, likes)
        if self.kind == "grad" and self.has_aux:
            grads, aux = result
            return self._shape_grads(grads, values, likes), aux
        return self._shape_grads(result, values, likes)  # grad, vjp

    def _bind(self, args: tuple, kwargs: dict) -> list[Any]:
        inner = self._inner
        if inner is not None and inner.kind == "vjp" and self._extra_names[0] not in kwargs:
            # a vjp's arguments: the function's (defaults allowed), then the cotangent
            if not args:
                raise TypeError(f"{self.__name__}: missing the cotangent {self._extra_names[0]}")
            return [*self._inner._bind(args[:-1], kwargs), args[-1]]
        if self._inner is None and self.__wrapped__.__defaults__ is not self._defaults:
            self._defaults = self.__wrapped__.__defaults__  # (reassigned since)
            self._signature = inspect.signature(self.__wrapped__, follow_wrapped=False)
            self.__signature__ = self._signature
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.__name__}: {exc}") from None
        bound.apply_defaults()
        return [bound.arguments[p] for p in self._params]

    def _quick_runner(
        self, derived: driver.Derived, likes: tuple[Callable[[Any, Any], Any], ...]
    ) -> Callable[[tuple], Any] | None:
        """For the common derivatives, a reverse-mode ``grad`` or ``value_and_grad`` with
        respect to one argument (no aux), what ``_finish`` does for a quick call with
        these ``likes``, with nothing left to decide; None for the others."""
        if (
            self.kind not in ("grad", "value_and_grad")
            or self.mode != "reverse"
            or self.has_aux
            or self._wrt_tuple
        ):
            return None
        function, like, index = derived.function, likes[0], self._wrt_index[0]
        if self.kind == "grad":

            def run_grad(args: tuple) -> Any:
                return like(_fresh(function(*args), args), args[index])

            return run_grad

        def run_value_and_grad(args: tuple) -> Any:
            value, grads = _fresh(function(*args), args)
            return value, like(grads, args[index])

        return run_value_and_grad

    def _shape_grads(
        self,
        grads: Any,
        values: Sequence[Any],
        likes: tuple[Callable[[Any, Any], Any], ...] | None = None,
    ) -> Any:
        """Each gradient with the type, dtype and shape (the structure, for a pytree)
        of its wrt argument among the call's ``values``."""
        if not self._wrt_tuple:
            like = _like_tree if likes is None else likes[0]
            return like(grads, values[self._wrt_index[0]])
        if len(self._wrt_index) == 1:  # the generated code returns one gradient bare
            grads = (grads,)
        likes = likes or (_like_tree,) * len(self._wrt_index)
        return tuple(like(g, values[i]) for g, i, like in zip(grads, self._wrt_index, likes))

    def _forward_grad(self, derived: driver.Derived, values: list[Any]) -> Any:
        """A gradient by forward mode: one Jacobian-vector product per input element, each
        of which must see the function give the same value (see ``_Passes``)."""
        indices = [self._params.index(w) for w in self.wrt]
        wrt_values = [values[i] for i in indices]
        zeros = [_zero_tangent(v) for v in wrt_values]
        # a call with dask arrays: every derivative stays lazy (a float's and a numpy
        # array's too), stacked at the end; computing each would compute the graph
        lazy = any(is_dask(leaf) for v in values for leaf in pytree.leaves(v))
        count = sum(math.prod(np.shape(leaf)) for v in wrt_values for leaf in pytree.leaves(v))
        passes = _Passes(self, f"{self.kind}(..., mode='forward')", values, count, "element")
        value = None
        grads = []
        for k, tree in enumerate(wrt_values):
            flat = pytree.leaves(tree)
            leaf_grads = []
            for j, v in enumerate(flat):
                dtype = v.dtype if getattr(v, "dtype", None) is not None else np.float64
                grad = np.zeros(np.shape(v), dtype=dtype) if not lazy else []
                for index in np.ndindex(np.shape(v)):
                    if isinstance(v, np.ndarray) or is_dask(v):
                        basis = _module_of(v).zeros_like(v)
                        basis[index] = 1
                    else:
                        basis = type(v)(1.0)
                    tangents = list(zeros)
                    tangents[k] = _unflatten(
                        tree, [basis if i == j else None for i in range(len(flat))]
                    )
                    value, dout = derived.function(*values, *tangents)
                    if self._tangent_output:  # a jvp's value and tangent: its tangent's
                        value, dout = value[1], dout[1]
                    passes.check(value)
                    if pytree.is_node(dout) or np.ndim(dout) != 0:
                        raise ValueError(_not_scalar(self.__name__, dout, self.has_aux))
                    if lazy:
                        grad.append(dout)
                    else:
                        if np.iscomplexobj(dout):
                            raise TypeError(_COMPLEX_GRADIENT)
                        grad[index] = float(dout)  # a host number, whatever the backend
                if lazy:
                    xp = dask_numpy()
                    grad = (
                        xp.stack([xp.asarray(d) for d in grad]).reshape(np.shape(v))
                        if grad
                        else xp.zeros_like(v)
                    )
                leaf_grads.append(_like(grad, v))
            grads.append(_unflatten(tree, leaf_grads))
        if not wrt_values or value is None:  # (no elements: no pass ran)
            value = self.__wrapped__(*_copied(values))
            if self._tangent_output:
                value = value[1]
        result = grads[0] if not self._wrt_tuple else tuple(grads)
        if self.has_aux and self.kind == "grad":  # value is (value, aux)
            return result, value[1]
        return (_fresh(value, values), result) if self.kind == "value_and_grad" else result


def _in_user_code(exc: SrcgradError, derivative: Derivative) -> SrcgradError:
    """``exc``, raised at a line of code srcgrad generated (differentiating a derivative
    again: hessian, hvp, grad of grad...), moved to the line of the user's code that the
    generated line comes from; the generated line stays in the message."""
    name = exc.filename or ""
    if not name.startswith("<srcgrad-") or not exc.lineno:
        return exc
    generated = linecache.getlines(name)
    if not 1 <= exc.lineno <= len(generated):
        return exc
    line = generated[exc.lineno - 1].strip()
    inner = derivative
    while inner._inner is not None:
        inner = inner._inner
    entry = _CACHE.get(inner.__wrapped__)
    norms = [n for n in (entry.norm, entry.norm_aux) if n is not None] if entry else []
    callees = list(inner._last.callees) if inner._last is not None else []
    found = _origin(generated[: exc.lineno], norms, [n.parsed for n in norms] + callees)
    if found is None:  # the user's function itself
        code = inner.__wrapped__.__code__
        found = code.co_filename, code.co_firstlineno
    filename, lineno = found
    source_line = linecache.getline(filename, lineno) or None
    message = (
        f"{exc.message}\n(srcgrad was differentiating again the code it generated for "
        f"{inner!r}, at {name}:{exc.lineno}: `{line}`, which comes from the line above.)"
    )
    return type(exc)(message, filename=filename, lineno=lineno, source_line=source_line)


def _origin(
    generated: list[str], norms: list[Any], parsed: list[ParsedFunction]
) -> tuple[str, int] | None:
    """Where the user wrote the statement the last of the ``generated`` lines comes from:
    the nearest line at or above it (in the same generated function) that is a copy of a
    statement of the user's function as normalized (forward-mode code puts each tangent
    after its statement), or a ``# grad of:`` comment (reverse-mode code puts one above
    each statement's adjoint), found in the source of the user's function or of a
    function it calls."""
    statements = {
        ast.unparse(core): (norm.parsed.locator.filename, user.lineno)
        for norm in norms
        for core, user in norm.origin.items()
        if isinstance(core, (ast.Assign, ast.Expr))
    }
    for text in reversed(generated):
        text = text.strip()
        if text.startswith("def "):
            return None
        if text in statements:
            return statements[text]
        if text.startswith("# grad of:"):
            wanted = text[len("# grad of:") :].strip()
            for p in parsed:
                for lineno in range(p.tree.lineno, (p.tree.end_lineno or p.tree.lineno) + 1):
                    user = (p.locator.text(lineno) or "").strip()
                    if user and wanted.startswith(user):
                        return p.locator.filename, lineno
            return None
    return None


def _not_scalar(name: str, out: Any, has_aux: bool) -> str:
    """Why ``grad`` of ``name`` cannot use its output ``out``, and what to use instead."""
    if isinstance(out, (tuple, list)) and not has_aux:
        return (
            f"grad requires {name!r} to return a scalar, but it returned a {type(out).__name__} "
            f"of {len(out)}; to return auxiliary values with it, `return value, aux` and pass "
            "has_aux=True (grad then returns (gradient, aux)); for a gradient of each "
            "element, use srcgrad.vjp or srcgrad.jacobian"
        )
    what = (
        f"a {type(out).__name__}" if pytree.is_node(out) else f"an array of shape {np.shape(out)}"
    )
    return (
        f"grad requires {name!r} to return a scalar, but it returned {what}; use srcgrad.vjp "
        "or srcgrad.jacobian (srcgrad.hvp for the Hessian of a function of a pytree)"
    )


def _mode_over(inner: Derivative, kind: str, mode: str) -> str:
    """The mode of a ``kind`` derivative of the derivative ``inner``: forward mode over
    reverse-mode code (grad or vjp), either mode over forward-mode code (jvp); a
    ``TypeError`` for the others."""
    made = f"{kind} of {inner!r}"
    if inner.kind in ("grad", "vjp"):
        if kind == "vjp":
            raise TypeError(
                f"srcgrad runs forward mode over the reverse-mode code of {inner!r}, not reverse "
                f"mode again, so it has no {made}. Use srcgrad.jvp of it (a column at a time), "
                "srcgrad.jacobian(..., mode='forward'), or for a gradient srcgrad.hvp / "
                "srcgrad.hessian of the function itself"
            )
        return "forward"
    if inner.kind == "jvp":
        return mode
    raise TypeError(
        f"srcgrad differentiates derivatives made by grad, vjp and jvp; {inner!r} returns a "
        f"value and a gradient together, so it has no {made}. Differentiate srcgrad.grad of "
        "the function instead"
    )


def _not_a_function(func: Any, kind: str) -> str:
    """Why ``func`` (a callable but not a Python function) cannot be differentiated, and
    what to write instead."""
    how = (
        "Differentiate a function written with def or lambda that makes the call, "
        "e.g. `{call}`, so that srcgrad can read its source"
    )
    if inspect.ismethod(func) and inspect.isfunction(func.__func__):
        owner = func.__self__ if inspect.isclass(func.__self__) else type(func.__self__)
        name = f"{owner.__qualname__}.{func.__func__.__name__}"
        obj = owner.__name__ if inspect.isclass(func.__self__) else "obj"
        article = "an" if owner.__name__[:1].lower() in "aeiou" else "a"
        what = f"the bound method {name} of {article} {owner.__name__} object"
        if inspect.isclass(func.__self__):
            what, name = f"the class method {name}", f"{name}.__func__"
        hint = how.format(call=f"{kind}(lambda x: {name}({obj}, x))")
        return (
            f"srcgrad differentiates plain Python functions; got {what}. {hint}: srcgrad "
            f"differentiates {name} as it does any function it calls, with the "
            "object as its first argument."
        )
    if isinstance(func, functools.partial):
        inner = getattr(func.func, "__qualname__", repr(func.func))
        fixed = ["..."] * len(func.args) + ["x"] + [f"{k}=..." for k in func.keywords]
        hint = how.format(call=f"{kind}(lambda x: {inner}({', '.join(fixed)}))")
        return (
            f"srcgrad differentiates plain Python functions; got functools.partial of {inner} "
            f"with arguments fixed. {hint}, passing the fixed arguments in the call."
        )
    if inspect.isbuiltin(func) or inspect.ismethod(func) or isinstance(func, np.ufunc):
        return (
            f"srcgrad differentiates Python functions written in Python; got {func!r}, a "
            f"{type(func).__name__} with no Python source. Call it from a function written "
            "with def or lambda (srcgrad knows the derivatives of numpy's functions), or "
            "give it a rule with srcgrad.primitive."
        )
    call = inspect.getattr_static(type(func), "__call__", None)
    if not inspect.isroutine(func) and inspect.isfunction(call):
        hint = how.format(call=f"{kind}(lambda x: {call.__qualname__}(obj, x))")
        return (
            f"srcgrad differentiates plain Python functions; got an instance of "
            f"{type(func).__name__}, a callable object. {hint}: srcgrad differentiates "
            f"{type(func).__name__}.__call__ as it does any function it calls."
        )
    return (
        f"srcgrad differentiates Python functions written in Python; got {func!r} (a "
        f"{type(func).__name__}), which has no Python source to transform: wrap the call in "
        "a function written with def or lambda, or give it a rule with srcgrad.primitive."
    )


def _unused_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_1``, ``name_2``... the first not in ``taken``."""
    fresh, n = name, 0
    while fresh in taken:
        n += 1
        fresh = f"{name}_{n}"
    return fresh


def _parameter_names(func: Callable[..., Any]) -> list[str]:
    """The names of ``func``'s positional parameters, in order."""
    code = func.__code__
    return list(code.co_varnames[: code.co_argcount])


def _normalize_wrt(wrt: Wrt, params: list[str], func: Callable[..., Any]) -> tuple[list[str], bool]:
    items = list(wrt) if isinstance(wrt, (tuple, list)) else [wrt]
    is_tuple = isinstance(wrt, (tuple, list))
    if not items:
        raise ValueError("wrt must name at least one argument")
    names = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"wrt takes argument positions (int) or names (str); got {item!r}")
        if isinstance(item, int):
            if not -len(params) <= item < len(params):
                raise ValueError(
                    f"wrt={item} is out of range: {func.__qualname__} has {len(params)} "
                    f"parameter(s) {params}"
                )
            names.append(params[item])
        else:
            if item not in params:
                raise ValueError(
                    f"wrt={item!r} is not a parameter of {func.__qualname__}; "
                    f"its parameters are {params}"
                )
            names.append(item)
    if len(set(names)) != len(names):
        raise ValueError(f"wrt names the same argument twice: {items}")
    return names, is_tuple


def _quick_key(args: tuple) -> tuple | None:
    """What a call's quick path is keyed on, for arguments that are all numpy arrays and
    Python or numpy numbers: their exact types, and each array's shape and dtype (which
    decide its rank and which of its axes are wide); None for anything else."""
    key: tuple = ()
    for a in args:
        t = type(a)
        if t is _NDARRAY:
            key += ((a.shape, a.dtype),)
        elif t is float or t is int or t is bool or isinstance(a, np.generic):
            key += (t,)
        else:
            return None
    return key


def _code_key(quick: tuple) -> tuple:
    """A ``_quick_key`` with each array's shape reduced to what decides its code: which
    of its axes are not of length 1 (as ``_wide_axes``; their number is its rank)."""
    return tuple((tuple(n != 1 for n in k[0]), k[1]) if isinstance(k, tuple) else k for k in quick)


def _remember(calls: dict[tuple, _QuickCall], key: tuple, call: _QuickCall) -> None:
    """Keep ``call`` under ``key``, the newest, forgetting the oldest beyond the limit."""
    calls.pop(key, None)
    if len(calls) >= _QUICK_LIMIT:
        calls.pop(next(iter(calls)), None)
    calls[key] = call


def _wide_axes(value: Any) -> Any:
    """For an array, which of its axes are not of length 1 (broadcasting never stretches
    them, which the generated code may rely on); for a pytree with such leaves, its
    structure with ``(LEAF, axes)`` for each leaf; None for anything else."""
    if pytree.is_node(value):
        axes = [_wide_axes(leaf) for leaf in pytree.leaves(value)]
        if not any(axes):
            return None
        in_order = iter(axes)  # (structure visits the leaves in the order leaves lists them)
        return pytree.structure(value, lambda leaf: (LEAF, next(in_order)))
    shape = getattr(value, "shape", None)
    if not isinstance(shape, tuple):
        return None
    if not all(isinstance(n, int) for n in shape):
        return None  # (dask: an axis of unknown length)
    return tuple(n != 1 for n in shape) if any(n != 1 for n in shape) else None


def _rank(value: Any) -> int | str | None:
    if pytree.is_node(value):  # a pytree: its structure, with the ranks of its leaves
        return pytree.structure(value, _rank)
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return 0
    ndim = getattr(value, "ndim", None)
    return ndim if isinstance(ndim, int) and hasattr(value, "shape") else None


def _check_differentiable(name: str, value: Any, fname: str) -> None:
    if isinstance(value, dict):
        for key, leaf in value.items():
            _check_differentiable(f"{name}[{key!r}]", leaf, fname)
        return
    if isinstance(value, (list, tuple)):
        for i, leaf in enumerate(value):
            _check_differentiable(f"{name}[{i}]", leaf, fname)
        return
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"cannot differentiate {fname} with respect to {name!r}: it is a bool ({value!r}); "
            f"pass a float, e.g. float({name})"
        )
    if isinstance(value, (int, np.integer)):
        raise TypeError(
            f"cannot differentiate {fname} with respect to {name!r}: it is an integer "
            f"({value!r}); pass a float, e.g. float({name})"
        )
    if isinstance(value, float):
        return
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        raise TypeError(
            f"cannot differentiate {fname} with respect to {name!r}: expected a float or a float "
            f"array, got {type(value).__name__}"
        )
    if dtype.kind != "f":
        kind = {
            "i": "an integer",
            "u": "an unsigned integer",
            "b": "a boolean",
            "c": "a complex",
        }.get(dtype.kind, f"a {dtype}")
        raise TypeError(
            f"cannot differentiate {fname} with respect to {name!r}: it is {kind} array; "
            f"pass a float array, e.g. {name}.astype(float)"
        )


#: the objects that hand out random numbers: a function that draws from one gives other
#: values each time it runs
_RANDOM_SOURCES = (
    np.random.Generator,
    np.random.RandomState,
    np.random.BitGenerator,
    random.Random,
)


class _Passes:
    """The passes of a derivative that runs the user's function more than once
    (``grad(..., mode="forward")``, ``jacobian``, ``hessian``): every pass must compute
    what the first did, or the derivative mixes the derivatives of different functions.

    A function given (or reaching) a random number generator is refused before the
    second pass; a value that differs from the first pass's is an error after it.
    """

    def __init__(
        self, owner: Derivative, what: str, values: Sequence[Any], count: int, per: str
    ) -> None:
        self.owner = owner
        self.what = what  # grad(..., mode='forward'), jacobian(...)
        self.values = values
        self.count = count  # how many passes the derivative runs
        self.per = per  # what each pass is for: "element", "output element"
        self.first: Any = None
        self.seen = 0

    def check(self, value: Any = None) -> None:
        """Note one pass and the function's ``value`` in it (None where unknown)."""
        self.seen += 1
        if self.count <= 1:
            return
        if self.seen == 1:
            source = _random_source(self.owner, self.values)
            if source is not None:
                raise TypeError(
                    f"{self.what} of {_user_name(self.owner)} runs it once per {self.per} "
                    f"({self.count} passes here), and {source}: each pass would see "
                    "different random numbers and the derivative would mix them. Use a "
                    "derivative that runs the function once (srcgrad.grad in reverse mode, "
                    "srcgrad.vjp, srcgrad.jvp, srcgrad.hvp), or draw the numbers outside the "
                    "function and pass them in as an array."
                )
            self.first = value
        elif value is not None and not _same_value(self.first, value):
            raise ValueError(
                f"{self.what} of {_user_name(self.owner)} runs it once per {self.per} "
                f"({self.count} passes here), and it computed a different value in pass "
                f"{self.seen} than in pass 1 ({_brief(value)} against {_brief(self.first)}): "
                "the function must give the same value each time it runs on the same "
                "arguments (does it draw random numbers, or read state that changes?). Use a "
                "derivative that runs it once (srcgrad.grad in reverse mode, srcgrad.vjp, "
                "srcgrad.jvp, srcgrad.hvp), or pass such numbers in as arguments."
            )


def _user_name(derivative: Derivative) -> str:
    """The name of the user's function under ``derivative`` (and its inner ones)."""
    while derivative._inner is not None:
        derivative = derivative._inner
    return repr(derivative.__wrapped__.__qualname__)


def _random_source(derivative: Derivative, values: Sequence[Any]) -> str | None:
    """How the user's function under ``derivative`` draws random numbers, where srcgrad
    can see it: an argument it reads that is a random number generator, or a global or
    closure name in it or in a function it calls that refers to one or to one of its
    methods (``np.random.normal``, ``rng.normal``); None where it sees none."""
    inner = derivative
    while inner._inner is not None:
        inner = inner._inner
    entry = _CACHE.get(inner.__wrapped__)
    parsed = [n.parsed for n in (entry.norm, entry.norm_aux) if n is not None] if entry else []
    read = {n.id for p in parsed[:1] for n in ast.walk(p.tree) if isinstance(n, ast.Name)}
    for param, value in zip(derivative._params, values):
        for path, leaf in pytree.paths(value, param):
            if isinstance(leaf, _RANDOM_SOURCES) and (param in read or not parsed):
                return f"its argument {path!r} is a {type(leaf).__name__}"
    parsed += list(inner._last.callees) if inner._last is not None else []
    for p in parsed:
        for node in ast.walk(p.tree):
            if isinstance(node, (ast.Name, ast.Attribute)):
                obj = _static_object(node, p.env)
                if isinstance(obj, _RANDOM_SOURCES) or isinstance(
                    getattr(obj, "__self__", None), _RANDOM_SOURCES
                ):
                    where = f"{p.locator.filename}:{getattr(node, 'lineno', '?')}"
                    shared = type(getattr(obj, "__self__", obj)).__name__
                    return f"it reads {ast.unparse(node)} ({where}), which draws from a {shared}"
    return None


def _static_object(node: ast.expr, env: dict[str, Any]) -> Any:
    """The object a dotted name rooted at a global or closure name refers to, following
    attributes of modules only (reading another object's could run its code); None where
    it is not such a name."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in env:
        return None
    obj = env[node.id]
    for attr in reversed(attrs):
        if not isinstance(obj, types.ModuleType):
            return None
        obj = getattr(obj, attr, None)
    return obj


def _same_value(a: Any, b: Any) -> bool:
    """Whether two passes' values agree (to rounding: a sum may add in another order)."""
    if pytree.is_node(a) or pytree.is_node(b):
        leaves_a, leaves_b = pytree.leaves(a), pytree.leaves(b)
        return len(leaves_a) == len(leaves_b) and all(map(_same_value, leaves_a, leaves_b))
    if is_dask(a) or is_dask(b) or a is None or b is None:
        return True  # (lazy: comparing would compute the graph)
    xp = np if not is_cupy(a) else _module_of(a)
    try:
        if np.shape(a) != np.shape(b):
            return False
        dtype = np.result_type(getattr(a, "dtype", type(a)), getattr(b, "dtype", type(b)))
        if dtype.kind not in "fc":  # numbers exactly; other objects: no claim
            return dtype.kind not in "biu" or bool(xp.all(xp.asarray(a) == xp.asarray(b)))
        tol = float(np.finfo(dtype).eps) ** 0.5
        a, b = xp.asarray(a), xp.asarray(b)
        scale = float(xp.max(xp.abs(xp.nan_to_num(a)))) if a.size else 0.0
        return bool(xp.allclose(a, b, rtol=tol, atol=tol * scale, equal_nan=True))
    except (TypeError, ValueError):  # (an auxiliary value numpy cannot compare: no claim)
        return True


def _brief(value: Any) -> str:
    """A short text for a pass's value in an error message."""
    if isinstance(value, (float, int, np.generic)) or np.ndim(value) == 0:
        try:
            return f"{float(value):.6g}"
        except (TypeError, ValueError):
            return repr(value)[:40]
    return f"an array of shape {np.shape(value)}"


def _lazy(x: Any) -> Any:
    """A numpy array as a dask array (one chunk); anything else as it is."""
    return dask_numpy().asarray(x) if isinstance(x, np.ndarray) else x


def _is_array(x: Any) -> bool:
    """Whether ``x`` is an array of a module srcgrad computes with (not a number: numpy
    2's scalars have a ``.device`` too)."""
    return isinstance(x, np.ndarray) or is_cupy(x) or is_dask(x)


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
    forward-mode code (one pass per input element). With ``has_aux=True``
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
    """Like :func:`grad`, but the callable returns ``(func(...), gradient)``; with
    ``has_aux=True``, ``((value, aux), gradient)``."""
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
