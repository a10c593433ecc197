"""How a :class:`~srcgrad.derivative.Derivative` finds or makes its code: the code for
one kind of arguments, looked up in the cache entry of the function it transforms
(:mod:`srcgrad.cache`) or made by the driver (``driver.front`` once per function,
``driver.derive`` once per kind of call), compiled by numba where ``compile=`` asks."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .backends import Backend
from .cache import _current_entry, _Entry
from .compiled import CompileWarning, offer_plain
from .compiler import driver
from .errors import CompileError, SrcgradError
from .origins import _in_user_code

if TYPE_CHECKING:
    from .derivative import Derivative


class Generation:
    """The part of :class:`~srcgrad.derivative.Derivative` that finds or makes the
    generated code for a kind of arguments (``_derived``), keeping the latest in
    ``_last`` (what ``.source`` shows)."""

    _inner: Derivative | None
    _over_reverse: Derivative | None
    _last: driver.Derived | None

    @property
    def _generated_kind(self) -> str:
        if self.kind in ("grad", "value_and_grad") and self.mode == "forward":
            return "jvp"
        return self.kind

    def _derived(
        self,
        ranks: dict[str, Any],
        backend: Backend,
        wide: tuple | None = None,
        floats: frozenset[str] = frozenset(),
        statics: tuple = (),
        complexes: frozenset[str] = frozenset(),
    ) -> driver.Derived:
        """The generated code for arguments of these ranks (pytrees: their structures)
        and, in ``wide``, for each array argument, which of its axes are not of length 1;
        ``floats``: the parameters whose arguments are floats (numbers or float arrays);
        ``statics``: (parameter, function) for the arguments that are functions (the code
        calls their derivatives: it is made for those very functions)."""
        if self._over_reverse is not None:
            raise TypeError(
                f"srcgrad does not differentiate {self!r} again (it is reverse mode over "
                "forward-mode code already); differentiate the function itself to the order "
                "you need"
            )
        ranks_key = tuple(ranks.get(p) for p in self._params)
        floats = frozenset(floats) & set(self._params)
        wide = wide if self._inner is None and wide is not None else ()
        statics = tuple((p, v) for p, v in statics if p in self._params)
        target = self._target(ranks, backend, floats, statics)
        wrt = self.wrt
        if self._inner is not None:
            wrt, ranks, floats, statics = self._renamed(target, ranks, floats, statics)
        floats_key = tuple(sorted(floats))
        key = (
            self._generated_kind,
            tuple(wrt),
            backend.name,
            ranks_key,
            wide,
            self.has_aux,
            floats_key,
            statics,
            tuple(sorted(complexes)),
            self._tangent_output and self.kind != "jvp",  # (code of the tangent output alone)
            self.compile,
        )
        entry = _current_entry(target)
        derived = entry.derived.get(key)
        if derived is None or not derived.is_current():
            derived = self._generate(
                entry, target, wrt, ranks, backend, wide, floats, statics, complexes
            )
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
        statics: tuple = (),
        complexes: frozenset[str] = frozenset(),
    ) -> driver.Derived:
        """Generate the code ``_derived`` looks for (and keeps in ``entry``); an error
        in the inner derivative's code is reported where the user wrote its line."""
        try:
            return self._derive(
                entry, target, wrt, ranks, backend, wide, floats, statics, complexes
            )
        except SrcgradError as exc:
            if self._inner is None:
                raise
            raise _in_user_code(exc, self) from None
        except ValueError as exc:  # (grad of a derivative whose output is not a scalar)
            if self._inner is None or repr(target.__name__) not in str(exc):
                raise
            raise ValueError(str(exc).replace(repr(target.__name__), repr(self._inner))) from None

    def _derive(
        self,
        entry: _Entry,
        target: Callable[..., Any],
        wrt: list[str],
        ranks: dict[str, Any],
        backend: Backend,
        wide: tuple,
        floats: frozenset[str],
        statics: tuple = (),
        complexes: frozenset[str] = frozenset(),
    ) -> driver.Derived:
        """The code for these arguments, from ``target``'s normalized form in ``entry``
        (made on first use)."""
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
        made = functools.partial(
            driver.derive,
            norm,
            self._generated_kind,
            wrt,
            ranks,
            backend,
            wide=dict(wide),
            floats=floats,
            statics=dict(statics),
            complexes=complexes,
            # (forward-mode grad runs a vector JVP for a few elements: the plain one is
            # made only if it is needed)
            pending=self._inner is None and self._generated_kind == "jvp" and self.kind != "jvp",
        )
        if self.compile != "numba-or-python":
            return offer_plain(made(jit=self.compile), made)
        try:
            return offer_plain(made(jit=self.compile), made)
        except CompileError as exc:
            warnings.warn(
                f"compile='numba-or-python': running the derivative as plain Python: {exc}",
                CompileWarning,
                stacklevel=5,
            )
            return made(jit=None)
