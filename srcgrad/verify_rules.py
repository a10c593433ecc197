"""``verify_rule``: a custom rule (``srcgrad.primitive``'s ``defvjp``/``defjvp``)
checked at many inputs: each rule against finite differences, and the two against
each other (``<u, jvp(v)> == <vjp(u), v>``), as :func:`srcgrad.testing.verify` checks
a gradient."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import pytree
from .verify import _is_float, run
from .verify_checks import _Checker, _copied, _describe, _FiniteDifference, _inner


def verify_rule(
    rule: Any, args: Sequence[Any], *, max_examples: int = 50, vary_shapes: bool = True
) -> None:
    """Check the vjp and jvp rules of the ``srcgrad.primitive`` ``rule`` at many inputs
    like ``args`` (its arguments; those of floats are differentiated): for a random
    cotangent ``u`` and direction ``v``, ``<vjp(u), v>``, ``<u, jvp(v)>`` and central
    finite differences of ``<u, f>`` along ``v`` must agree. Raises ``AssertionError``
    with a shrunk failing input and the numbers.

    Args:
        rule: a ``srcgrad.primitive`` with a ``defvjp`` and/or a ``defjvp`` rule.
        args: example arguments; those of floats are drawn anew and differentiated.
        max_examples: how many inputs hypothesis tries.
        vary_shapes: draw new lengths for the arrays' axes too.

    Returns:
        None, when the rules agree at every input.

    Raises:
        AssertionError: a rule disagrees with the other or with finite differences.
        ValueError: ``rule`` has no rules to check.

    Example:
        ```python
        import numpy as np

        import srcgrad
        from srcgrad.testing import verify_rule


        @srcgrad.primitive
        def softplus(x):
            return np.logaddexp(0.0, x)


        @softplus.defvjp
        def softplus_vjp(dout, result, x):
            return dout / (1.0 + np.exp(-x))


        verify_rule(softplus, (np.ones(3),), max_examples=10)
        ```
    """
    if rule.vjp_rule is None and rule.jvp_rule is None:
        raise ValueError(f"{rule!r} has no rules to check: give it defvjp and/or defjvp")
    run(rule.func, args, _checker(rule, args).check, max_examples, vary_shapes)


def check_rules_at(rule: Any, args: list[Any]) -> None:
    """The check of ``verify_rule`` at ``args`` alone (nothing where ``rule``'s function
    is not smooth there); ``SRCGRAD_CHECK_RULES=1`` runs it as generated code calls the
    rules (``custom.CHECK_RULES``)."""
    _checker(rule, args).check(args)


def _checker(rule: Any, args: Sequence[Any]) -> _RuleChecker:
    wrt = tuple(
        k
        for k, a in enumerate(args)
        if pytree.leaves(a) and all(_is_float(leaf) for leaf in pytree.leaves(a))
    )
    return _RuleChecker(rule, wrt)


class _RuleChecker(_Checker):
    def __init__(self, rule: Any, wrt: tuple[int, ...]) -> None:
        super().__init__(rule.func, None, wrt, True)
        self.rule = rule

    def check(self, values: list[Any]) -> bool:
        probed = self.probe(values)
        if probed is None:
            return False
        value, u, vs, fd = probed
        found = {"finite differences": fd.value}
        rule, count = self.rule, len(self.rule.params)
        if rule.vjp_rule is not None:
            cotangents = rule.vjp(u, value, *_copied(values))
            cotangents = cotangents if count > 1 else (cotangents,)
            found["your vjp rule"] = sum(_inner(cotangents[i], v) for i, v in zip(self.wrt, vs))
        if rule.jvp_rule is not None:
            by_param = dict(zip(self.wrt, vs))
            tangents = tuple(by_param.get(k) for k in range(count))
            found["your jvp rule"] = _inner(u, rule.jvp(tangents, value, *_copied(values)))
        self._compare(values, fd, found)
        return True

    def _compare(self, values: list[Any], fd: _FiniteDifference, found: dict[str, float]) -> None:
        bad = [k for k, v in found.items() if abs(v - fd.value) > fd.tolerance()]
        rules = [v for k, v in found.items() if k != "finite differences"]
        scale = 1 + max(abs(v) for v in found.values())
        if len(rules) == 2 and abs(rules[0] - rules[1]) > self.rtol * scale:
            bad.append("the rules disagree with each other")
        if not bad:
            return
        lines = [f"the rules of {self.rule.__qualname__} disagree at", _describe(self.f, values)]
        lines.append("for a random cotangent u and direction v (largest element 1):")
        for name, v in found.items():
            what = "<u, (f(x + h v) - f(x - h v)) / 2h>" if name == "finite differences" else ""
            what = what or ("<vjp(u), v>" if "vjp" in name else "<u, jvp(v)>")
            line = f"  {name + ':':21s}{v: .12g}  {what}"
            if name in bad:
                line += f"  relative error {abs(v - fd.value) / max(abs(fd.value), 1e-300):.2g}"
            lines.append(line)
        raise AssertionError("\n".join(lines))
