"""The derivative rules: one table, forward and reverse side by side.

Each entry maps a primitive (a numpy function or ufunc, a Python operator, an
array method or attribute, indexing) to a :class:`Rule`. A rule names the
primitive's parameters and gives, for each differentiable parameter, a
forward template (its contribution to the output's tangent, with ``g`` the
parameter's tangent) and a reverse template (its adjoint, with ``g`` the
output's adjoint). Templates are plain Python expressions over the
parameter names, ``ans`` (the primal result), ``g``, ``np`` (the array module
the code is compiled for) and the helpers of :mod:`srcgrad.runtime`::

    unary(np.exp, "g * ans")            # d exp(x) = dx * exp(x), both modes
    binary(ast.Mult, "g * y", "g * x")  # d (x * y) = dx * y + x * dy

A template may also be a function of the :class:`Context` (the call's bound
arguments and their ranks) returning such a string, for rules whose best
form depends on static facts (``np.sum`` with or without ``axis``).

Elementwise rules share one template between the modes: the derivative of an
elementwise function is diagonal, so the same expression maps a tangent
forward and an adjoint backward. The transforms add the broadcasting
adjustments (``unbroadcast`` backward, ``broadcast_like`` forward) only where
the shapes are not provably equal.
"""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import sys
from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..compiler.astwalk import copy_tree

Template = "str | Callable[[Context], str]"

#: the registry: primitive key -> Rule. Keys are function objects, operator
#: node classes (``ast.Add``), ``("method", name)``, ``("attr", name)`` and
#: the strings ``"getitem"`` and ``"copy"``.
RULES: dict[Any, Rule] = {}


class NotStatic(Exception):
    """An argument a template needs as a compile-time constant is not one."""


@dataclass
class Context:
    """What a template may know about one call: bound arguments and ranks."""

    rule: Rule
    node: ast.expr  # the primal right-hand side
    args: dict[str, ast.expr]  # parameter -> atom (supplied or default)
    supplied: set[str]
    ranks: dict[str, int | None]  # parameter -> rank, None if unknown
    index: ast.expr | None = None  # the index of a subscript
    rule_key: Any = None  # the registry key the rule was found under
    param: str = ""  # the parameter a template is being instantiated for
    symbols: Mapping[str, ast.expr] = field(default_factory=dict)  # g, ans, np, helpers

    def static(self, name: str) -> Any:
        """The value of argument ``name`` if it is a literal constant."""
        node = self.args.get(name)
        if isinstance(node, ast.Constant):
            return node.value
        raise NotStatic(name)

    def is_static(self, *names: str) -> bool:
        try:
            for name in names:
                self.static(name)
        except NotStatic:
            return False
        return True

    def rank(self, name: str) -> int | None:
        return self.ranks.get(name)

    def length(self, name: str) -> int | None:
        """How many numbers argument ``name`` (a shape) holds where analysis knows: one
        for a number, the count of a tuple display ``(n, m)``."""
        if self.ranks.get(name) == 0:
            return 1
        return self.ranks.get(f"len:{name}")


@dataclass
class Rule:
    """How to differentiate one primitive, in both modes."""

    name: str
    params: tuple[str, ...]
    jvp: dict[str, Any] = field(default_factory=dict)  # param -> Template
    vjp: dict[str, Any] = field(default_factory=dict)  # param -> Template
    defaults: dict[str, Any] = field(default_factory=dict)
    elementwise: bool = False  # output shape = broadcast of the array arguments
    nondiff: bool = False  # output carries no derivative (shapes, comparisons)
    #: parameters in which the output's derivative is zero whatever value they get (where's
    #: condition, full_like's template array, arange's stop). An argument that carries a
    #: derivative is refused in any parameter that is neither differentiated nor listed
    #: here: an axis, a shape, a dtype must not depend on the ``wrt`` inputs
    zero: frozenset[str] = frozenset()
    rank: Callable[[Context], int | None] | None = None
    varargs: bool = False  # the last parameter collects the remaining positionals
    fixed: dict[str, Any] = field(default_factory=dict)  # params that must keep this value
    #: the result is a tuple (``np.linalg.eigh``): True, or a function of the Context
    #: (``svd`` with ``compute_uv``); its tangent is a tuple and its adjoint a list
    tuple_result: Any = False
    primitive: Any = None  # the srcgrad.primitive whose user-given rules these are
    combine: str | None = None  # helper adding tangent terms (lists do not add with +)
    #: what to say when a parameter gets an argument srcgrad cannot follow (see ``zero``)
    hints: dict[str, str] = field(default_factory=dict)
    #: the templates hold for complex operands too (see :mod:`.complex_numbers`)
    complex_ok: bool = False
    #: parameters given by keyword only (``np.gradient(f, *varargs, axis=None)``): a
    #: ``varargs`` rule collects the positionals after the others into its last parameter
    kwonly: frozenset[str] = frozenset()
    #: why srcgrad cannot differentiate this call (None where it can), from what the
    #: Context knows statically (``np.gradient`` of an array of unknown rank, which may
    #: return one array or a tuple): the call is refused where its result is active
    refuse: Callable[[Context], str | None] | None = None

    @property
    def diff_params(self) -> tuple[str, ...]:
        if self.primitive is not None:  # every argument, whichever rules it was given
            return self.params
        return tuple(p for p in self.params if p in self.vjp or p in self.jvp)

    def unmodeled(self, param: str) -> bool:
        """Whether a derivative reaching ``param`` would be lost: the parameter is neither
        differentiated nor known to have derivative zero."""
        return not self.nondiff and param not in self.diff_params and param not in self.zero


def register(key: Any, rule: Rule) -> Rule:
    RULES[key] = rule
    return rule


# -- binding -------------------------------------------------------------------
class BindError(Exception):
    """The call's arguments do not fit the rule's parameters."""


def bind(rule: Rule, args: list[ast.expr], keywords: list[ast.keyword]) -> tuple[dict, set]:
    """Match positional and keyword arguments to ``rule.params``."""
    bound: dict[str, ast.expr] = {}
    params = [p for p in rule.params if p not in rule.kwonly]
    if rule.varargs:
        fixed, rest = params[:-1], params[-1]
        head, tail = args[: len(fixed)], args[len(fixed) :]
        bound.update(zip(fixed, head))
        if tail:
            if len(tail) == 1:
                bound[rest] = tail[0]
            else:
                bound[rest] = ast.Tuple(elts=list(tail), ctx=ast.Load())
                if all(isinstance(t, ast.Constant) for t in tail):
                    bound[rest] = ast.Constant(tuple(t.value for t in tail))
    else:
        if len(args) > len(params):
            raise BindError(f"{rule.name} takes at most {len(params)} positional arguments")
        bound.update(zip(params, args))
    params = list(rule.params)
    for kw in keywords:
        if kw.arg not in params:
            raise BindError(f"srcgrad's rule for {rule.name} has no keyword {kw.arg!r}")
        if kw.arg in bound:
            raise BindError(f"{rule.name} got two values for {kw.arg!r}")
        bound[kw.arg] = kw.value
    supplied = set(bound)
    for p, value in rule.fixed.items():
        node = bound.get(p)
        if node is not None and not (isinstance(node, ast.Constant) and node.value == value):
            raise BindError(f"srcgrad differentiates {rule.name} only with {p}={value!r}")
    for p in params:
        if p not in bound:
            if p not in rule.defaults:
                raise BindError(f"{rule.name} is missing its argument {p!r}")
            bound[p] = ast.Constant(rule.defaults[p])
    return bound, supplied


# -- templates -----------------------------------------------------------------
@functools.cache
def _parse_template(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def instantiate(template: Any, ctx: Context) -> ast.expr:
    """The expression ``template`` stands for in this call.

    A string template's names are substituted: parameter names by the call's
    arguments, and ``g``, ``ans``, ``np`` and helper names by
    ``ctx.symbols``. A callable template returns a string (treated the same
    way) or a finished expression.
    """
    result = template(ctx) if callable(template) else template
    if isinstance(result, ast.expr):
        return result
    return copy_tree(_parse_template(result), ChainMap(ctx.symbols, ctx.args))


def primal_with(ctx: Context, param: str, replacement: ast.expr) -> ast.expr:
    """The primal operation with the argument bound to ``param`` replaced.

    Only that argument's slot changes, so ``a @ a`` becomes ``g @ a``.
    """
    node = copy.copy(ctx.node)
    position = ctx.rule.params.index(param)
    new = copy_tree(replacement)
    if isinstance(node, ast.BinOp):
        if position == 0:
            node.left = new
        else:
            node.right = new
    elif isinstance(node, (ast.UnaryOp,)):
        node.operand = new
    elif isinstance(node, (ast.Attribute, ast.Subscript)):
        node.value = new
    elif isinstance(node, ast.Call):
        args = list(node.args)
        if isinstance(node.func, ast.Attribute) and isinstance(ctx.rule_key, tuple):
            if position == 0:  # the receiver of a method call
                node.func = ast.Attribute(value=new, attr=node.func.attr, ctx=ast.Load())
                return node
            position -= 1
        if position < len(args):
            args[position] = new
        else:
            node.keywords = [
                ast.keyword(arg=k.arg, value=new if k.arg == param else k.value)
                for k in node.keywords
            ]
        node.args = args
    else:
        raise AssertionError(f"no linear slot in {ast.dump(node)}")
    return node


def linear(ctx: Context) -> ast.expr:
    """Template for maps linear in ``ctx.param``: the primal applied to ``g``."""
    return primal_with(ctx, ctx.param, ctx.symbols["g"])


#: statements the transforms write themselves, with their parameters
SEQUENCE_RULES: dict[str, Rule] = {}

#: whether the rules of scipy.stats are registered: importing scipy.stats costs about a
#: second, so they are registered when a lookup misses and the user's code has imported
#: it (a function of scipy.stats can reach srcgrad no other way), or for a listing
_stats_loaded = False


def load_scipy_stats_rules(import_scipy: bool = False) -> bool:
    """Register the rules of ``scipy.stats`` if its module is imported (with
    ``import_scipy``, import it first where SciPy is installed); True where this call
    registered them."""
    global _stats_loaded
    if _stats_loaded:
        return False
    if "scipy.stats" not in sys.modules:
        if not import_scipy:
            return False
        try:
            importlib.import_module("scipy.stats")
        except ImportError:
            return False
    _stats_loaded = True
    importlib.import_module(f"{__name__}.scipy_stats")
    return True


# the modules that fill RULES
from . import (  # noqa: E402,F401
    complex_numbers,
    elementwise,
    fft,
    indexing,
    linalg,
    methods,
    numeric,
    operators,
    reductions,
    runtime_rules,
    scipy_linalg,
    scipy_special,
    shapes,
)

complex_numbers.mark_rules()  # (once every module has registered its rules)
