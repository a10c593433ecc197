"""The derivative object: ``Derivative``, what ``grad``, ``value_and_grad``, ``jvp`` and
``vjp`` return. A call binds and checks its arguments, finds or generates the code for
their kind (see :mod:`srcgrad.cache`), runs it and shapes its result like the arguments
(see :mod:`srcgrad.results`); ``.source`` is the generated module."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Generic, ParamSpec

from . import pytree
from .arguments import (
    _GRAD_MODES,
    Wrt,
    _check_differentiable,
    _keywords_parameter,
    _lazy,
    _mode_over,
    _normalize_wrt,
    _not_a_function,
    _rank,
    _unused_name,
    _wide_axes,
    check_written_apart,
    complex_arguments,
)
from .backends import NUMPY, backend_of, check_arguments
from .cache import (
    _CACHE,
    _code_key,
    _quick_key,
    _QuickCall,
    _remember,
)
from .compiled import profile_of
from .compiler import driver
from .compiler.analyze.dtypes import FLOAT, value_kind
from .compiler.analyze.facts import is_function_value
from .generation import Generation
from .nesting import Nesting
from .passes import _forward_grad, auto_forward
from .results import _fresh, _like_tree, _output_dtype, _tangent_like

#: the parameters of the function a derivative is made from: a ``grad``, ``value_and_grad``
#: or ``jacobian`` takes the same arguments (``Derivative[P]``), a ``jvp`` or ``vjp`` more
#: (``Derivative[...]``), which a type checker sees
P = ParamSpec("P")


class Derivative(Nesting, Generation, Generic[P]):
    """A derivative of a Python function, generated as Python source.

    Call it like the transformation that made it says. ``.source`` is the
    generated code (of the most recent call, or a generic version before any
    call); ``.__wrapped__`` is the original function. For a type checker it is
    ``Derivative[P]``, called with the arguments of a function of parameters ``P``.

    Made by :func:`grad`, :func:`value_and_grad`, :func:`jvp` and :func:`vjp` (rather
    than directly). The generated code is cached per kind of arguments (ranks, which axes
    have length 1, pytree structure, backend): a second call with the same kind does no
    transformation work. A ``Derivative`` can itself be differentiated.

    Args:
        func: the function (or a ``Derivative``, for a higher derivative).
        kind: ``"grad"``, ``"value_and_grad"``, ``"jvp"`` or ``"vjp"``.
        wrt: the argument(s) differentiated, by position or name.
        mode: ``"reverse"``, ``"forward"`` or ``"auto"`` (``grad``'s and
            ``value_and_grad``'s).
        has_aux: ``func`` returns ``(value, aux)``.
        compile: ``None``, ``"numba"`` or ``"numba-or-python"`` (see ``grad``).

    Raises:
        TypeError: ``func`` is not a Python function or a derivative; at a call, arguments
            that do not fit its signature.
        ValueError: ``mode`` is not one of the three.
        UnsupportedSyntaxError: at a call, srcgrad refuses ``func`` (the message names your
            line).
        NoDerivativeError: at a call, ``func`` calls a function with no rule.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            return np.sum(np.sin(x) * x)


        df = srcgrad.grad(f)  # a srcgrad.Derivative
        assert isinstance(df, srcgrad.Derivative) and df.__wrapped__ is f
        g = df(np.ones(3))
        print(df.source)  # the code that call ran
        d2f = srcgrad.jvp(df)  # derivatives compose: forward over reverse
        ```
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
        compile: str | None = None,
    ) -> None:
        profile_of(compile)  # (checked, and numba installed, before any call)
        #: ``compile=``: None, ``"numba"`` or ``"numba-or-python"`` (see srcgrad.compiled)
        self.compile = compile
        mode = self._take_function(func, kind, mode, has_aux)
        self.has_aux = has_aux
        functools.update_wrapper(self, func, updated=())
        self.__wrapped__ = func
        self.kind = kind
        self.mode = mode
        self._take_signature(func)
        self.wrt, self._wrt_tuple = _normalize_wrt(wrt, self._params, func)
        self._start_calls(kind)
        if kind == "vjp" and self._inner is not None and self._inner.kind in ("grad", "vjp"):
            self._over_reverse = _vjp_of_reverse(self._inner, self)

    def _take_function(self, func: Callable[..., Any], kind: str, mode: str, has_aux: bool) -> str:
        """Check that ``func`` is a Python function or a derivative (``_inner``: the
        one to differentiate again) and the options fit it; returns the mode."""
        self._inner: Derivative | None = None
        if isinstance(func, Derivative):
            # higher order: differentiate the inner derivative's generated code
            mode = _mode_over(func, kind, mode)
            self._inner = func
        elif not inspect.isfunction(func):
            raise TypeError(_not_a_function(func, kind))
        if mode not in _GRAD_MODES:
            raise ValueError(f"mode must be 'reverse', 'forward' or 'auto', not {mode!r}")
        if has_aux and self._inner is not None:
            raise TypeError("has_aux=True needs a Python function, not a derivative")
        return mode

    def _take_signature(self, func: Callable[..., Any]) -> None:
        """The parameters of ``func`` this derivative takes, and after them an inner
        jvp's tangents or vjp's cotangent (``_extra_names``)."""
        # (the callable's own parameters: not those of a function it wraps)
        self._signature = inspect.signature(func, follow_wrapped=False)
        #: the __defaults__ the signature holds (a call binds the function's current ones)
        self._defaults = getattr(func, "__defaults__", None)
        #: the names of the inner derivative's arguments after the function's: its
        #: cotangent, or its tangents (named afresh: ``x_dot``, then ``x_dot_1``...)
        self._extra_names: list[str] = []
        if self._inner is not None and self._inner.kind in ("vjp", "jvp"):
            self._add_extra_parameters(self._inner)
        #: a derivative of a jvp differentiates its tangent output (grad's value is that)
        self._tangent_output = self._inner is not None and self._inner.kind == "jvp"
        self.__signature__ = self._signature  # what inspect.signature reports
        self._params = list(self._signature.parameters)
        #: the function's ``**kwargs`` parameter: the dict its keywords make is passed
        #: to the generated code as one argument, never differentiated
        self._keywords = _keywords_parameter(func)

    def _start_calls(self, kind: str) -> None:
        """What calls remember: the latest code, the quick calls, the wrt arguments'
        places, the forward-mode twin of ``mode="auto"``."""
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
        #: the vjp of a gradient or of a vjp: reverse mode over the function's jvp along
        #: the cotangent (see _vjp_of_reverse)
        self._over_reverse: Derivative | None = None
        #: mode="auto": the same derivative in forward mode, for calls with few input
        #: elements (made on the first such call; the others run this one, in reverse mode)
        self._forward_twin: Derivative | None = None

    def _add_extra_parameters(self, inner: Derivative) -> None:
        """Add the parameters after the function's that the code of the derivative
        ``inner`` takes (``_extra_names``) to this derivative's signature."""
        # the inner code takes the function's arguments, then the cotangent (see _bind)
        # or one tangent per wrt argument: every argument is passed, so no defaults
        keywords = _keywords_parameter(inner)
        if keywords is not None:
            raise TypeError(
                f"{inner.__name__} takes **{keywords}, and a {self.kind} of it would take its "
                "cotangent or tangents after them, which Python cannot call: give the "
                "function's options parameters of their own (keyword-only ones work), or "
                "use srcgrad.hessian or jacobian(..., mode='forward') of its gradient"
            )
        taken = set(self._signature.parameters)
        wanted = ["dout"] if inner.kind == "vjp" else [f"{w}_dot" for w in inner.wrt]
        for name in wanted:
            self._extra_names.append(_unused_name(name, taken))
            taken.add(self._extra_names[-1])
        positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [
            p.replace(default=inspect.Parameter.empty) for p in self._signature.parameters.values()
        ]
        added = [inspect.Parameter(n, positional) for n in self._extra_names]
        self._signature = self._signature.replace(parameters=[*params, *added])

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
                if key[:2] == (self._generated_kind, tuple(self.wrt)) and key[-1] == self.compile:
                    return entry.derived[key].source
        return self._derived({}, NUMPY).source

    def __repr__(self) -> str:
        wrt = self.wrt[0] if not self._wrt_tuple else tuple(self.wrt)
        mode = f", mode={self.mode!r}" if self.kind in ("grad", "value_and_grad") else ""
        what = repr(self._inner) if self._inner is not None else self.__wrapped__.__qualname__
        compiled = "" if self.compile is None else f", compile={self.compile!r}"
        return f"<srcgrad.{self.kind} of {what}, wrt={wrt!r}{mode}{compiled}>"

    def _repr_html_(self) -> str:
        from .display import derivative_html

        return derivative_html(self)

    # -- calling -------------------------------------------------------------------
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        if self._over_reverse is not None:
            return self._call_over_reverse(args, kwargs)
        if self.mode == "auto" and auto_forward(self, args, kwargs):
            return self._call_forward_twin(args, kwargs)
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
        complexes = complex_arguments(self, values)
        for w in self.wrt:
            if w not in complexes:
                _check_differentiable(w, values[self._params.index(w)], self.__name__)
        backend = backend_of(values, self._params)
        if backend.name == "dask" and extras:  # numpy tangents or cotangent: dask too
            extras = [pytree.map_leaves(_lazy, e) for e in extras]
        ranks = {p: _rank(v) for p, v in zip(self._params, values)}
        wide = tuple((p, w) for p, w in zip(self._params, map(_wide_axes, values)) if w)
        floats = frozenset(p for p, v in zip(self._params, values) if value_kind(v) == FLOAT)
        statics = tuple((p, v) for p, v in zip(self._params, values) if is_function_value(v))
        derived = self._derived(ranks, backend, wide, floats, statics, complexes)
        if derived.copied:  # (never by the quick path: this check runs on every call)
            check_written_apart(derived.copied, self._params, values, self.__name__)
            quick = None
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

    def _call_forward_twin(self, args: tuple, kwargs: dict) -> Any:
        """A call of a ``mode="auto"`` derivative run in forward mode, by its twin."""
        if self._forward_twin is None:
            wrt = tuple(self.wrt) if self._wrt_tuple else self.wrt[0]
            self._forward_twin = Derivative(
                self._inner or self.__wrapped__,
                self.kind,
                wrt,
                "forward",
                self.has_aux,
                self.compile,
            )
        result = self._forward_twin(*args, **kwargs)
        self._last = self._forward_twin._last  # (what .source shows)
        return result

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
            return _forward_grad(self, derived, list(values))
        if self.kind == "jvp":
            extras = [
                _tangent_like(t, values[i], w) for t, i, w in zip(extras, self._wrt_index, self.wrt)
            ]
        given = [*map(pytree.plain, values), *map(pytree.plain, extras)]  # (dataclasses: dicts)
        result = _fresh(derived.function(*given), given)
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
        if self._keywords is not None and not kwargs and len(args) == len(self._params):
            # (the values of another derivative's call, the keywords' dict among them)
            if isinstance(args[self._params.index(self._keywords)], dict):
                return list(args)
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
            or self.mode == "forward"
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


def _vjp_of_reverse(inner: Derivative, outer: Derivative) -> Derivative:
    """The vjp of ``inner`` (``grad(f, wrt=W)`` or ``vjp(f, wrt=W)``) with respect to
    ``outer.wrt``, as reverse mode over ``f``'s forward-mode code. The cotangent ``u`` of
    ``grad f`` gives ``u . d(grad_W f)/d(args) = grad_args <grad_W f, u>``, the gradient of
    the tangent output of ``jvp(f, wrt=W)`` along ``u``; of a vjp, ``<J_W' dout, u> =
    <dout, J_W u>``, the vjp of that jvp's tangent output with cotangent ``dout``. Exact,
    with no symmetry assumed (JAX's ``jacrev(grad(f))``: reverse over reverse gives the
    same numbers)."""
    if inner.kind == "vjp" and set(outer.wrt) - set(inner._params):
        raise TypeError(
            f"srcgrad differentiates {inner!r} in reverse mode with respect to the arguments "
            f"of {inner.__wrapped__.__qualname__}, not its cotangent (the derivative in that "
            "is the jvp: use srcgrad.jvp of the function)"
        )
    tangents = Derivative(
        inner.__wrapped__, "jvp", tuple(inner.wrt) if inner._wrt_tuple else inner.wrt[0]
    )
    kind = "grad" if inner.kind == "grad" else "vjp"
    return Derivative(tangents, kind, tuple(outer.wrt) if outer._wrt_tuple else outer.wrt[0])
