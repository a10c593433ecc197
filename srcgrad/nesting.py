"""Derivatives of derivatives: what a :class:`~srcgrad.derivative.Derivative` does when
it is differentiated again (``grad(grad(f))``, ``jacobian(grad(f))``) or when it is
itself the reverse mode of a gradient (``vjp(grad(f))``, run as reverse mode over
``f``'s forward-mode code)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .arguments import _parameter_names
from .backends import NUMPY, Backend
from .compiler import driver

if TYPE_CHECKING:
    from .derivative import Derivative


class Nesting:
    """The part of :class:`~srcgrad.derivative.Derivative` that knows derivatives of
    derivatives: ``_inner`` is the derivative this one differentiates (``None`` for a
    user's function), ``_over_reverse`` the forward-mode derivative a vjp of a gradient
    runs."""

    _inner: Derivative | None
    _over_reverse: Derivative | None

    def _target(
        self,
        ranks: dict[str, int | None],
        backend: Backend,
        floats: frozenset[str] = frozenset(),
        statics: tuple = (),
    ) -> Callable[..., Any]:
        """The Python function this derivative transforms: the user's, or for a
        derivative of a derivative, the inner one's code for these arguments."""
        if self._inner is None:
            return self.__wrapped__
        # the inner code as numpy code (its calls are the ones the rules know), rebound to
        # the backend when this derivative's code is emitted, as the user's code is
        return self._inner.as_function(ranks, NUMPY, floats, statics)

    def as_function(
        self,
        ranks: dict[str, int | None],
        backend: Backend,
        floats: frozenset[str] = frozenset(),
        statics: tuple = (),
    ) -> Callable[..., Any]:
        """One generated Python function computing this derivative for arguments of
        these ranks (``floats``: the parameters whose arguments are floats; ``statics``:
        those that are functions, with them), for differentiating it again."""
        derived = self._derived(ranks, backend, floats=floats, statics=statics)
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

    def _call_over_reverse(self, args: tuple, kwargs: dict) -> Any:
        """The vjp of a gradient or a vjp: the cotangent (shaped like the inner
        derivative's result: a tuple for a tuple ``wrt``) is the tangent of the function's
        jvp, one part per argument; a vjp's own cotangent is the outer cotangent of that
        jvp."""
        inner = self._inner
        if len(args) < 1 + (inner.kind == "vjp"):
            raise TypeError(self._usage(len(args) + len(kwargs)))
        *values, dout = args
        parts = tuple(dout) if inner._wrt_tuple and isinstance(dout, (tuple, list)) else (dout,)
        if len(parts) != len(inner.wrt):
            raise TypeError(
                f"{self!r} takes a cotangent shaped like {inner!r}'s result: a tuple of "
                f"{len(inner.wrt)} arrays, one for each of {tuple(inner.wrt)}"
            )
        if inner.kind == "vjp":  # (its cotangent, last of the values)
            *values, inner_dout = values
            result = self._over_reverse(*values, *parts, inner_dout, **kwargs)
        else:
            result = self._over_reverse(*values, *parts, **kwargs)
        self._last = self._over_reverse._last
        return result

    def _renamed(
        self,
        target: Callable[..., Any],
        ranks: dict[str, Any],
        floats: frozenset[str],
        statics: tuple = (),
    ) -> tuple[list[str], dict[str, Any], frozenset[str], tuple]:
        """``wrt``, ``ranks``, ``floats`` and ``statics`` in the names of the inner
        derivative's code ``target``."""
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
        return wrt, ranks, floats, tuple((rename[p], v) for p, v in statics)
