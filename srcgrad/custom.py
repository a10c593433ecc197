"""Custom rules: ``srcgrad.primitive`` with ``defvjp``/``defjvp``, and ``stop_gradient``.

A primitive is a function srcgrad does not look inside: the generated code
calls it as it is, and calls the user's rules for its derivative::

    @srcgrad.primitive
    def logsumexp(x):
        m = np.max(x)
        return m + np.log(np.sum(np.exp(x - m)))

    @logsumexp.defvjp
    def logsumexp_vjp(dout, result, x):
        return dout * np.exp(x - result)

    @logsumexp.defjvp
    def logsumexp_jvp(tangents, result, x):
        (dx,) = tangents
        return np.sum(np.exp(x - result) * dx)

In generated code these read ``x_bar = logsumexp.vjp(lse_bar, lse, x)`` and
``lse_dot = logsumexp.jvp((x_dot,), lse, x)``.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
from collections.abc import Callable
from typing import Any

from .compiler.astwalk import copy_tree
from .rules import Context, Rule, register

#: ``SRCGRAD_CHECK_RULES=1`` in the environment: each primitive's rules are checked
#: (``verify_rules``: against finite differences and each other) the first time
#: generated code calls them for arguments of a new shape, where the function is smooth
CHECK_RULES = os.environ.get("SRCGRAD_CHECK_RULES", "") not in ("", "0")


class Primitive:
    """A function differentiated by the rules its user gives, never by its source.

    Made by :func:`primitive`. Calling it calls the function. ``@f.defvjp`` gives its
    reverse-mode rule, ``rule(dout, result, *args)``, returning one cotangent per
    parameter (a tuple for several); ``@f.defjvp`` its forward-mode rule,
    ``rule(tangents, result, *args)``, returning the output's tangent (``tangents`` has an
    entry per parameter, None for one without a tangent). Generated code calls
    ``f.vjp(...)`` and ``f.jvp(...)``, which call the rules.

    Args:
        func: the function, with named parameters; srcgrad calls it and never reads its
            source.

    Raises:
        TypeError: ``func`` is not callable or has no signature; a vjp rule returning the
            wrong number of cotangents, when generated code calls it.
        NoDerivativeError: a derivative needs a rule that was not given (a ``defjvp`` for
            forward mode, a ``defvjp`` for reverse mode), at your line.

    Example:
        ```python
        import numpy as np

        import srcgrad


        @srcgrad.primitive
        def logsumexp(x):
            m = np.max(x)
            return m + np.log(np.sum(np.exp(x - m)))


        @logsumexp.defvjp
        def logsumexp_vjp(dout, result, x):
            return dout * np.exp(x - result)


        @logsumexp.defjvp
        def logsumexp_jvp(tangents, result, x):
            (dx,) = tangents
            return np.sum(np.exp(x - result) * dx)


        def f(x):
            return logsumexp(2.0 * x)


        x = np.array([0.0, 1.0, 2.0])
        g = srcgrad.grad(f)(x)  # calls logsumexp.vjp
        assert np.allclose(g, 2.0 * np.exp(2.0 * x) / np.sum(np.exp(2.0 * x)))
        assert np.allclose(srcgrad.grad(f, mode="forward")(x), g)  # calls logsumexp.jvp
        ```
    """

    def __init__(self, func: Callable[..., Any]) -> None:
        if not callable(func):
            raise TypeError(f"srcgrad.primitive takes a function, got {func!r}")
        functools.update_wrapper(self, func)
        self.func = func
        self.vjp_rule: Callable[..., Any] | None = None
        self.jvp_rule: Callable[..., Any] | None = None
        try:
            signature = inspect.signature(func)
        except (TypeError, ValueError):
            raise TypeError(
                f"srcgrad.primitive needs a function with a signature; {func!r} has none: wrap "
                "it in a Python function with named parameters"
            ) from None
        params = []
        defaults = {}
        for p in signature.parameters.values():
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise TypeError(
                    f"srcgrad.primitive: parameter {p.name!r} of {func.__qualname__} is "
                    "*args, **kwargs or keyword-only; give the primitive named positional "
                    "parameters"
                )
            params.append(p.name)
            if p.default is not p.empty:
                defaults[p.name] = p.default
        self.params = tuple(params)
        self._checked: set[tuple] = set()  # (argument shapes whose rules CHECK_RULES checked)
        self.rule = register(
            self,
            Rule(name=func.__qualname__, params=self.params, defaults=defaults, primitive=self),
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        modes = [m for m, r in (("jvp", self.jvp_rule), ("vjp", self.vjp_rule)) if r]
        return f"<srcgrad.primitive {self.__qualname__} with rules: {', '.join(modes) or 'none'}>"

    # -- declaring rules -------------------------------------------------------------------
    def defvjp(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: ``rule(dout, result, *args)`` returns one cotangent per argument
        (a tuple when the primitive has several parameters)."""
        self.vjp_rule = rule
        self.rule.vjp = {p: self._vjp_template for p in self.params}
        return rule

    def defjvp(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: ``rule(tangents, result, *args)`` returns the output's tangent;
        ``tangents`` has one entry per argument, None for those without one."""
        self.jvp_rule = rule
        self.rule.jvp = {p: self._jvp_template for p in self.params}
        return rule

    # -- what generated code calls -----------------------------------------------------------
    def vjp(self, dout: Any, result: Any, *args: Any) -> Any:
        """The user's vjp rule, checked: one cotangent per argument."""
        if CHECK_RULES:
            self._check_rules(args)
        cotangents = self.vjp_rule(dout, result, *args)  # type: ignore[misc]
        if len(self.params) == 1:
            return cotangents
        if not isinstance(cotangents, (tuple, list)) or len(cotangents) != len(self.params):
            raise TypeError(
                f"the vjp rule of {self.__qualname__} must return one cotangent per argument "
                f"({len(self.params)}: {', '.join(self.params)}) as a tuple; it returned "
                f"{type(cotangents).__name__}"
                + (f" of length {len(cotangents)}" if isinstance(cotangents, (tuple, list)) else "")
            )
        return cotangents

    def jvp(self, tangents: tuple, result: Any, *args: Any) -> Any:
        """The user's jvp rule."""
        if CHECK_RULES:
            self._check_rules(args)
        return self.jvp_rule(tangents, result, *args)  # type: ignore[misc]

    def _check_rules(self, args: tuple) -> None:
        """Under ``CHECK_RULES``: the rules checked at ``args`` (once per shapes)."""
        key = tuple(getattr(a, "shape", type(a)) for a in args)
        if key in self._checked:
            return
        self._checked.add(key)
        from .verify_rules import check_rules_at

        check_rules_at(self, list(args))

    # -- templates for the rule table ------------------------------------------------------------
    def _call(self, ctx: Context, method: str, first: ast.expr) -> ast.Call:
        func = ast.Attribute(value=copy_tree(ctx.node.func), attr=method, ctx=ast.Load())
        args = [first, ctx.symbols["ans"], *(copy_tree(ctx.args[p]) for p in self.params)]
        return ast.Call(func=func, args=args, keywords=[])

    def _vjp_template(self, ctx: Context) -> ast.expr:
        call = self._call(ctx, "vjp", ctx.symbols["g"])
        if len(self.params) == 1:
            return call
        index = ast.Constant(self.params.index(ctx.param))
        return ast.Subscript(value=call, slice=index, ctx=ast.Load())

    def _jvp_template(self, ctx: Context) -> ast.expr:
        tangents = [ctx.symbols["g"] if p == ctx.param else ast.Constant(None) for p in self.params]
        return self._call(ctx, "jvp", ast.Tuple(elts=tangents, ctx=ast.Load()))


def primitive(func: Callable[..., Any]) -> Primitive:
    """Make ``func`` a primitive: srcgrad calls it as it is and differentiates it with
    the rules given by ``@f.defvjp`` (reverse mode) and ``@f.defjvp`` (forward mode).

    For a function srcgrad should not look inside: compiled code, a library routine, or
    one whose derivative you know a better way to compute. (autograd's
    ``@primitive``/``defvjp``, JAX's ``jax.custom_vjp``/``custom_jvp``.)

    Args:
        func: the function, with named parameters.

    Returns:
        A ``Primitive`` wrapping ``func``, with the decorators ``defvjp`` and ``defjvp``.

    Raises:
        TypeError: ``func`` is not callable or has no signature.

    Example:
        ```python
        import numpy as np

        import srcgrad


        @srcgrad.primitive
        def logsumexp(x):
            m = np.max(x)
            return m + np.log(np.sum(np.exp(x - m)))


        @logsumexp.defvjp
        def logsumexp_vjp(dout, result, x):
            return dout * np.exp(x - result)


        @logsumexp.defjvp
        def logsumexp_jvp(tangents, result, x):
            (dx,) = tangents
            return np.sum(np.exp(x - result) * dx)


        def f(x):
            return logsumexp(2.0 * x)


        x = np.array([0.0, 1.0, 2.0])
        g = srcgrad.grad(f)(x)  # calls logsumexp.vjp
        assert np.allclose(g, 2.0 * np.exp(2.0 * x) / np.sum(np.exp(2.0 * x)))
        assert np.allclose(srcgrad.grad(f, mode="forward")(x), g)  # calls logsumexp.jvp
        ```
    """
    return Primitive(func)


def stop_gradient(x: Any) -> Any:
    """``x`` itself, as a value no derivative flows through (a constant to srcgrad).

    JAX's ``jax.lax.stop_gradient``.

    Args:
        x: any value (an array, a number).

    Returns:
        ``x`` unchanged; in generated code, a constant: no adjoint or tangent reaches
        what it was computed from.

    Raises:
        Nothing: it returns its argument.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            scale = srcgrad.stop_gradient(np.max(x))
            return np.sum(x / scale)


        x = np.array([1.0, 2.0, 4.0])
        assert np.allclose(srcgrad.grad(f)(x), 1.0 / 4.0)
        ```
    """
    return x


register(
    stop_gradient,
    Rule(name="srcgrad.stop_gradient", params=("x",), nondiff=True, rank=lambda c: c.rank("x")),
)
