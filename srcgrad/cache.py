"""The caches of generated code: an ``_Entry`` per user function (its normalized forms
and every code made from it, by kind, wrt, backend and argument kinds), and the quick
calls a derivative keeps by the exact types, shapes and dtypes of its arguments, with
the check that the code is still current."""

from __future__ import annotations

import weakref
from collections.abc import Callable, MutableMapping
from typing import Any

import numpy as np

from .compiler import driver, emit
from .compiler.parse import ParsedFunction, env_is_current, free_name_sources, sources_current
from .results import _LIKES, _like_tree


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


def _current_entry(target: Any) -> _Entry:
    """The entry for ``target``, made afresh where there is none or it is not current
    (the stale one retired, so that the quick calls made from it are too)."""
    entries = _entries(target)
    entry = entries.get(target)
    if entry is None or not entry.is_current(target):
        if entry is not None:
            entry.retired = True
        entry = entries[target] = _Entry(target.__code__)
    return entry


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
        callees = derived.callees
        if callees is None:  # (a JVP whose code is not made yet: no quick call until it is)
            return None
        for p in [*parsed, *callees]:
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
    """Add what ``parse.env_is_current(parsed)`` checks to the lists a quick call checks
    (for ``parsed`` and the factories written out in it); False where it is not current
    now, or its globals are not a plain dict."""
    func = parsed.func
    if type(func.__globals__) is not dict or not env_is_current(parsed):
        return False
    codes[id(func)] = (func, parsed.code, *parsed.defaults)
    closure_cells, namespaces = free_name_sources(parsed)
    for cell, value in closure_cells:
        cells[id(cell)] = (cell, value)
    for namespace, name, value in namespaces:
        names[id(namespace), name] = (namespace, name, value)
    return all(_watch(factory, codes, names, cells) for factory in parsed.factories)


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
