"""Shared by the transforms: how generated code names the array module,
the runtime helpers, tangents and adjoints, and how it spells comments.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ... import runtime
from ...rules import helpers as rule_helpers
from ..analyze.facts import Facts
from ..astwalk import copy_tree, nodes
from .callees import Callees
from .naming import Namer

#: the helpers generated code may call, by name: the generic ones of srcgrad.runtime,
#: then those of each family of rules (srcgrad/rules/helpers/)
HELPER_FUNCTIONS: dict[str, Any] = {
    name: obj
    for module in (runtime, *rule_helpers.MODULES)
    for name, obj in vars(module).items()
    if inspect.isfunction(obj) and obj.__module__ == module.__name__
}
HELPERS = tuple(HELPER_FUNCTIONS)

COMMENT = "#"


def function_def(fname: str, params: list[str], body: list[ast.stmt]) -> ast.FunctionDef:
    """``def fname(params): body`` with plain positional parameters."""
    func = ast.FunctionDef(
        name=fname,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=p) for p in params],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=body,
        decorator_list=[],
        returns=None,
        lineno=1,
    )
    return func


def comment(text: str) -> ast.Expr:
    """A statement that unparses as the comment ``# text``, with ``text`` made safe by
    :func:`comment_text` (it may quote the user's source or a value's repr)."""
    return ast.Expr(value=ast.Name(id=f"{COMMENT} {comment_text(text)}", ctx=ast.Load()))


def comment_text(text: str) -> str:
    """``text`` as it may follow ``#`` on one line of generated source: every character
    that could end the line, for Python's tokenizer (``\\n``, ``\\r``), for
    ``str.splitlines`` (which registers the text with :mod:`linecache`: ``\\x0c``,
    ``\\u2028``, ...) or for a reader's editor, and every other non-printable one (a
    NUL, a lone surrogate, a bidirectional override), is written as its escape
    (``\\r``, ``\\u2028``). Tabs stay.

    ``"a\\rimport os"`` comes out as ``a\\rimport os``: one line, which can only be read.
    """
    if text.isprintable():  # (every line break is non-printable)
        return text
    return "".join(c if c.isprintable() or c == "\t" else ascii(c)[1:-1] for c in text)


MARKER = "__srcgrad_adjoint_sweep__"


def marker(value: ast.expr) -> ast.Expr:
    """Where a fused reverse-mode function is cut into augmented primal and adjoint;
    it reads the primal's result, which the augmented primal returns."""
    call = ast.Call(func=ast.Name(id=MARKER, ctx=ast.Load()), args=[value], keywords=[])
    return ast.Expr(value=call)


def is_marker(stmt: ast.stmt) -> bool:
    value = getattr(stmt, "value", None)
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == MARKER
    )


def is_comment(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Name)
        and stmt.value.id.startswith(COMMENT)
    )


def name(id_: str) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Load())


def assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(id=target, ctx=ast.Store())], value=value)


def add(left: ast.expr, right: ast.expr) -> ast.expr:
    return ast.BinOp(left=left, op=ast.Add(), right=right)


class Symbols(Mapping[str, ast.expr]):
    """What a rule's template names stand for: ``g``, ``ans``, ``np``, ``math`` and the
    runtime helpers (each helper read as a new name node). Lazy: a table of every
    helper per rule application made each one cost the number of helpers."""

    def __init__(self, fixed: dict[str, ast.expr], helpers: dict[str, str]) -> None:
        self.fixed, self.helpers = fixed, helpers

    def __getitem__(self, key: str) -> ast.expr:
        if key in self.fixed:
            return self.fixed[key]
        return name(self.helpers[key])

    def __contains__(self, key: object) -> bool:
        return key in self.fixed or key in self.helpers

    def __iter__(self) -> Iterator[str]:
        yield from self.fixed
        yield from (h for h in self.helpers if h not in self.fixed)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Builder:
    """Names in one generated module: array module, helpers, tangents, adjoints."""

    def __init__(
        self,
        namer: Namer,
        xp: str,
        facts: Facts,
        math_name: str | None = None,
        helpers: dict[str, str] | None = None,
    ) -> None:
        self.namer = namer
        self.xp = xp
        self.facts = facts
        self.helpers = helpers if helpers is not None else {h: namer.fresh(h) for h in HELPERS}
        #: the callee derivatives this code calls (the driver generates them)
        self.callees: Callees | None = None
        self.math = math_name or namer.fresh("math")  # for rules on Python floats
        self.primal_of: dict[str, str] = {}
        #: the updates to check before their primal copies (set by the transform)
        self.checks: Mapping[ast.stmt, tuple[str, str]] = {}
        #: the direction of a vector JVP whose tangents are named now (``x_dot_k``), or
        #: None for the one direction of a plain JVP (``x_dot``)
        self.lane: str | None = None
        #: the emission profile: None for plain Python, ``"numba"`` for code
        #: ``numba.njit`` compiles (see :mod:`srcgrad.compiled`)
        self.profile: str | None = None
        #: whether the optimizer may write into arrays in place (``v += e``): only for
        #: numpy's arrays (a numpy array cannot take a dask array's values in place)
        self.in_place = True

    def helper(self, h: str) -> ast.Name:
        return name(self.helpers[h])

    def call(self, h: str, *args: ast.expr) -> ast.Call:
        return ast.Call(func=self.helper(h), args=list(args), keywords=[])

    def in_place_check(self, stmt: ast.stmt) -> list[ast.stmt]:
        """``[check_in_place(x, 'x')]`` where ``stmt`` needs it (``self.checks``, from
        ``analyze.in_place``), else ``[]``: to run before the statement's primal copy."""
        found = self.checks.get(stmt)
        if found is None:
            return []
        checked, user = found
        return [ast.Expr(value=self.call("check_in_place", name(checked), ast.Constant(user)))]

    def xp_call(self, attr: str, *args: ast.expr) -> ast.Call:
        func = ast.Attribute(value=name(self.xp), attr=attr, ctx=ast.Load())
        return ast.Call(func=func, args=list(args), keywords=[])

    def zero_like(self, atom: ast.expr) -> ast.expr:
        """A zero tangent or adjoint for ``atom``: ``0.0`` for a scalar (Python arithmetic
        on it is cheap, and numpy promotion keeps the other operand's dtype), else
        ``np.zeros_like(atom)``."""
        if self.facts.shape(atom).rank == 0:
            return ast.Constant(0.0)
        return self.xp_call("zeros_like", copy_tree(atom))

    def symbols(self, g: ast.expr, ans: str) -> Symbols:
        fixed = {"g": g, "ans": name(ans), "np": name(self.xp), "math": name(self.math)}
        return Symbols(fixed, self.helpers)

    def tangent(self, v: str) -> str:
        t = (
            self.namer.tangent(v)
            if self.lane is None
            else self.namer.derived(f"dot_{self.lane}", v)
        )
        self.primal_of[t] = v
        return t

    def adjoint(self, v: str) -> str:
        a = self.namer.adjoint(v)
        self.primal_of[a] = v
        return a

    def key(self, expr: ast.expr) -> frozenset[str]:
        """The broadcast key of an expression over primals, tangents and adjoints."""
        keys: list[frozenset[str]] = []
        todo = [expr]
        while todo:
            node = todo.pop()
            if isinstance(node, ast.Call):  # the callee is no operand
                todo.extend(node.args)
                todo.extend(k.value for k in node.keywords)
                continue
            if isinstance(node, ast.Name):
                v = self.primal_of.get(node.id, node.id)
                if v in self.facts.shapes:
                    keys.append(self.facts.shapes[v].key)
            todo.extend(ast.iter_child_nodes(node))
        return frozenset().union(*keys)

    def function(self, base: str, params: list[str], body: list[ast.stmt]) -> ast.FunctionDef:
        """A generated function named after ``base`` (made fresh)."""
        return function_def(self.namer.fresh(base), params, body)

    def with_witnesses(self, expr: ast.expr, preferred: Iterable[str]) -> ast.expr:
        """Read shapes off ``preferred`` names: ``np.full_like(t2, g)`` becomes
        ``np.full_like(x, g)`` when ``t2`` and ``x`` provably have one shape.

        Fewer temporaries stay alive, and the code names the user's variables.
        """
        for node in nodes(expr):
            if not isinstance(node, ast.Call) or not isinstance(
                node.func, (ast.Name, ast.Attribute)
            ):
                continue
            func = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            slot = _SHAPE_ONLY.get(func)
            if slot is None and func in (
                self.helpers["unbroadcast"],
                self.helpers["broadcast_like"],
            ):
                slot = 1
            if slot is not None and slot < len(node.args) and isinstance(node.args[slot], ast.Name):
                candidates = preferred
                if func.endswith("_like"):  # reads the dtype too: only names of floats
                    if node.args[slot].id in self.facts.complex:
                        continue  # (for a complex one, none)
                    floats = self.facts.proven_floats
                    candidates = (p for p in preferred if p in floats)
                node.args[slot] = name(self.facts.witness(node.args[slot].id, candidates))
        return expr


#: calls that read only the shape of one argument, and which argument
_SHAPE_ONLY = {"full_like": 0, "zeros_like": 0, "ones_like": 0, "shape": 0, "size": 0, "ndim": 0}
