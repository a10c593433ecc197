"""What the analysis finds, as data: :class:`Facts` (per name and per statement), :class:`Op`
(one statement's operation and rule), :class:`Shape`, and the predicates on core
statements the transforms share (``is_setitem``, ``is_append``, ``popped``...)."""

from __future__ import annotations

import ast
import functools
import inspect
import types
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...rules import Context, Rule
from ..astwalk import nodes
from ..parse import source_text

_COMPARE = Rule(name="comparison", params=("x", "y"), nondiff=True)


_NOT = Rule(name="not", params=("x",), nondiff=True)


@dataclass(frozen=True)
class Shape:
    key: frozenset[str]
    rank: int | None
    #: for each axis, whether its length is known not to be 1 (where the rank is known):
    #: broadcasting keeps such an axis, so an operand whose every axis is one has the
    #: result's shape (see :meth:`Facts.fills`)
    wide: tuple[bool, ...] | None = None


SCALAR = Shape(frozenset(), 0, ())


#: the "rank" of a parameter whose argument is a pytree (a dict, list or tuple) of
#: unknown structure; a known structure is described by ``srcgrad.pytree.structure``
#: with leaf ranks: ``("dict", (("W", 2), ("b", 1)))``, ``("list", (1, 1))``
TREE = "tree"


#: the leaves of a pytree's structure of length-1 axes (``Facts.tree_wide``, from the
#: call's arguments) are ``(LEAF, axes)``: ``axes`` as for an array argument, or None
LEAF = "<leaf>"


@dataclass
class Op:
    """The primitive a core statement applies."""

    stmt: ast.Assign
    target: str
    rule: Rule | None
    key: Any
    args: dict[str, ast.expr]  # parameter -> atom
    ctx: Context | None
    callee: Any = None  # the resolved function of a static call
    problem: str | None = None  # why no derivative can be taken, if so
    #: for a call to a user function: every parameter's argument, in order
    call_args: list[ast.expr] | None = None
    #: a cast's dtype argument where it is a variable (see ``_dtype_of_active``)
    dtype_name: str | None = None

    @property
    def diff_args(self) -> list[tuple[str, ast.expr]]:
        """(parameter, atom) pairs a derivative flows through."""
        if self.rule is None or self.problem:  # unknown: every argument may matter
            return list(self.args.items())
        if self.rule.nondiff:
            return []
        return [(p, self.args[p]) for p in self.rule.diff_params if p in self.args]


@dataclass
class Facts:
    ops: dict[ast.stmt, Op] = field(default_factory=dict)
    varied: set[str] = field(default_factory=set)
    useful: set[str] = field(default_factory=set)
    shapes: dict[str, Shape] = field(default_factory=dict)
    returned: ast.expr | None = None
    #: each name's definitions (assignments and for loops) with their loop depth
    definitions: dict[str, list[tuple[ast.stmt, int]]] = field(default_factory=dict)
    loop_indices: set[str] = field(default_factory=set)
    #: names holding lists or tuples (built by displays and append)
    sequences: set[str] = field(default_factory=set)
    #: names that may hold a list or tuple on some path (``xs = xs + ys`` in a loop)
    maybe_sequences: set[str] = field(default_factory=set)
    #: the shape each assignment's own operation gives (id of the statement -> shape)
    op_shapes: dict[int, Shape] = field(default_factory=dict)
    #: names holding parts of pytree arguments: their structure (a container's, or a
    #: leaf's rank), where every definition agrees on it
    trees: dict[str, Any] = field(default_factory=dict)
    #: for the same names, the same structure with each leaf's axes known not to have
    #: length 1 (``(LEAF, (True, False))``; ``(LEAF, None)`` where not known)
    tree_wide: dict[str, Any] = field(default_factory=dict)
    mode: str | None = None  # the transform these facts are for, "jvp" or "vjp"
    params: list[ast.arg] = field(default_factory=list)
    #: names given once a tuple or list display: how many elements it has
    lengths: dict[str, int] = field(default_factory=dict)
    #: which names may share memory (``srcgrad.compiler.analyze.alias_model.Aliases``)
    aliases: Any = None
    #: the parameters whose arguments are floats (numbers or float arrays; ``wrt`` ones)
    floats: set[str] = field(default_factory=set)
    #: the parameters whose arguments are functions, with those functions
    statics: dict[str, Any] = field(default_factory=dict)
    #: names that may hold complex numbers, each with where its complex value comes from
    complex: dict[str, str] = field(default_factory=dict)
    #: the statements (by id) whose own operation gives a complex value
    complex_sites: set[int] = field(default_factory=set)
    #: the function's free names resolved (for :meth:`proven_floats`)
    env: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def active(self) -> frozenset[str]:
        """``varied & useful`` (kept while neither set changes: the analysis only grows
        them, and the transforms ask once per operand)."""
        varied, useful = self.varied, self.useful
        key = (id(varied), len(varied), id(useful), len(useful))
        cached = self.__dict__.get("_active")
        if cached is None or cached[0] != key:
            cached = self.__dict__["_active"] = (key, frozenset(varied & useful))
        return cached[1]

    @property
    def dtype_kinds(self) -> dict[str, str]:
        """Each name's kind of values, joined over its definitions (``dtypes.FLOAT``,
        ``INTEGER`` or ``UNKNOWN``: :func:`~.dtypes.float_kinds`); found on first use."""
        cached = self.__dict__.get("_dtype_kinds")
        if cached is None:
            from .dtypes import float_kinds

            cached = self.__dict__["_dtype_kinds"] = float_kinds(self, self.env, self.floats)
        return cached

    @property
    def proven_floats(self) -> frozenset[str]:
        """The names every definition of which gives floats (the dtype analysis: a name
        given an integer cast on one path, ``b = np.asarray(m, dtype=int)``, is not one)."""
        cached = self.__dict__.get("_proven_floats")
        if cached is None:
            from .dtypes import FLOAT

            complex_values = self.complex
            cached = frozenset(
                n for n, k in self.dtype_kinds.items() if k == FLOAT and n not in complex_values
            )
            self.__dict__["_proven_floats"] = cached
        return cached

    @property
    def maybe_integer(self) -> frozenset[str]:
        """The names some definition of which gives integers or bools
        (:func:`~.dtypes.integer_definitions`)."""
        cached = self.__dict__.get("_maybe_integer")
        if cached is None:
            from .dtypes import integer_definitions

            cached = frozenset(integer_definitions(self, self.env, self.dtype_kinds))
            self.__dict__["_maybe_integer"] = cached
        return cached

    def witness(self, name: str, preferred: Iterable[str]) -> str:
        """A name with provably the same shape as ``name``, from ``preferred`` if any."""
        shape = self.shapes.get(name)
        for candidate in preferred:
            other = self.shapes.get(candidate)
            if shape is None or other is None:
                continue
            if other.key == shape.key or (  # it broadcasts into `name` but has no axis to stretch
                other.key <= shape.key
                and other.rank == shape.rank is not None
                and other.wide is not None
                and all(other.wide)
            ):
                return candidate
        return name

    def fills(self, atom: ast.expr, stmt: ast.stmt) -> bool:
        """Whether the operand ``atom`` of the elementwise ``stmt`` provably has the shape
        of its result: their broadcast keys are equal, or the operand has the result's rank
        and none of its axes has length 1 (an axis of any other length is the result's
        wherever the broadcast succeeds)."""
        shape, result = self.shape(atom), self.op_shapes[id(stmt)]
        if shape.key == result.key:
            return True
        return shape.wide is not None and shape.rank == result.rank and all(shape.wide)

    def shape(self, atom: ast.expr) -> Shape:
        if isinstance(atom, ast.Name):
            return self.shapes.get(atom.id, Shape(frozenset({atom.id}), None))
        return SCALAR


def walk_block(body: list[ast.stmt], depth: int = 0) -> Iterator[tuple[ast.stmt, int]]:
    """Every statement in ``body`` and its nested blocks, in program order, with
    the number of loops around it."""
    for stmt in body:
        yield stmt, depth
        if isinstance(stmt, ast.If):
            yield from walk_block(stmt.body, depth)
            yield from walk_block(stmt.orelse, depth)
        elif isinstance(stmt, (ast.For, ast.While)):
            yield from walk_block(stmt.body, depth + 1)


def blocks_of(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The blocks a compound statement holds (an ``if``'s two, a loop's body; what
    :func:`walk_block` walks into)."""
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.For, ast.While)):
        return [stmt.body]
    return []


def _gives_sequence(op: Op | None, sequences: set[str]) -> bool:
    """``makes_sequence``, or a copy of a name known to hold a list or tuple."""
    if op is not None and op.key == "copy" and isinstance(op.args.get("x"), ast.Name):
        return op.args["x"].id in sequences
    return makes_sequence(op)


def makes_sequence(op: Op | None) -> bool:
    """Whether an operation gives a list or tuple: a display, an append, a primitive
    whose rule says so (``np.linalg.eigh``), or a call to a user function whose every
    ``return`` returns a tuple display."""
    if op is None:
        return False
    if op.key in ("pack", "append"):
        return True
    if op.rule is not None and op.ctx is not None and op.rule.tuple_result:
        tuple_result = op.rule.tuple_result
        return bool(tuple_result(op.ctx) if callable(tuple_result) else tuple_result)
    return op.call_args is not None and _returns_tuple(op.callee)


#: per function (held weakly: an entry goes with its function), its code and whether
#: every return of that code's source returns a tuple display
_TUPLE_RETURNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _returns_tuple(func: Any) -> bool:
    code = func.__code__
    known = _TUPLE_RETURNS.get(func)
    if known is None or known[0] is not code:
        try:  # (the source of the code it runs, not of a function it wraps)
            tree = ast.parse(source_text(func))
        except (OSError, TypeError, SyntaxError):
            known = (code, False)
        else:
            returns = [n for n in nodes(tree) if isinstance(n, ast.Return)]
            known = (code, bool(returns) and all(isinstance(r.value, ast.Tuple) for r in returns))
        _TUPLE_RETURNS[func] = known
    return known[1]


def resolve_static(node: ast.expr, env: dict[str, Any]) -> Any:
    """The object a dotted name rooted at a global refers to."""
    if isinstance(node, ast.Name):
        return env[node.id]
    assert isinstance(node, ast.Attribute)
    return getattr(resolve_static(node.value, env), node.attr)


def assigned_name(stmt: ast.stmt) -> str:
    """The name a core statement gives a value: ``y`` for ``y = ...``, ``y[i] = ...``
    and ``y.append(v)``."""
    if isinstance(stmt, ast.Expr):
        return stmt.value.func.value.id
    target = stmt.targets[0]
    return target.value.id if isinstance(target, ast.Subscript) else target.id


def is_append(stmt: ast.stmt) -> bool:
    value = getattr(stmt, "value", None)
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "append"
    )


def popped(stmt: ast.stmt, *, last: bool = False) -> str | None:
    """The list that ``v = xs.pop()`` (or ``xs.pop(i)``; only ``xs.pop()`` with
    ``last``) takes from, or None for another statement."""
    value = getattr(stmt, "value", None)
    if (
        isinstance(stmt, ast.Assign)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "pop"
        and isinstance(value.func.value, ast.Name)
        and not (last and value.args)
    ):
        return value.func.value.id
    return None


def is_setitem(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript)


def _static_attr(node: ast.expr, env: dict[str, Any]) -> bool:
    if not isinstance(node, ast.Attribute):
        return False
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in env


def is_function_value(value: Any) -> bool:
    """Whether an argument is a function srcgrad may call through the parameter holding
    it (a Python function, a builtin, a numpy ufunc, a ``functools.partial`` of one with
    constants fixed, an object of the user's whose class defines ``__call__`` in Python,
    or a method of the user's bound to an object: see ``unwrap_callable``): the
    derivative is made for that very function, which is part of the cache key."""
    if isinstance(value, functools.partial):
        return all(map(_fixed_constant, (*value.args, *value.keywords.values()))) and (
            is_function_value(value.func)
        )
    return (
        isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc))
        or _call_method(value) is not None
        or _bound_method(value)
    )


def _bound_method(value: Any) -> bool:
    """A method of the user's bound to an object compared by identity (the object keys
    the code made for it: one compared by value would share code with an equal other)."""
    if not (inspect.ismethod(value) and isinstance(value.__func__, types.FunctionType)):
        return False
    owner = value.__self__
    module = getattr(value.__func__, "__module__", None) or ""
    return (
        not isinstance(owner, type)
        and module.split(".")[0] not in _LIBRARIES
        and type(owner).__eq__ is object.__eq__
        and type(owner).__hash__ is object.__hash__
    )


def _call_method(value: Any) -> Any:
    """The ``__call__`` of an object's class, where the object is a hashable instance
    (not a function, a class or a method) of a class of the user's defining it in
    Python."""
    if isinstance(value, (type, types.FunctionType, types.MethodType, functools.partial)):
        return None
    call = inspect.getattr_static(type(value), "__call__", None)
    module = getattr(call, "__module__", None) or ""
    if not isinstance(call, types.FunctionType) or module.split(".")[0] in _LIBRARIES:
        return None
    try:  # (the object keys the code made for it: a dataclass compared by value is not)
        hash(value)
    except TypeError:
        return None
    return call


#: the packages whose callable objects are not the user's (srcgrad's derivatives too)
_LIBRARIES = {"numpy", "scipy", "cupy", "dask", "srcgrad", "builtins", "functools"}


def _fixed_constant(value: Any) -> bool:
    """A value a partial fixes that the code may hold as a constant: a number, a string,
    a bool or None (an array would be a constant of unknown shape to the analysis)."""
    return type(value) in (int, float, complex, bool, str, type(None)) or (
        isinstance(value, np.generic) and value.dtype.kind in "biufc"
    )


def unwrap_callable(
    callee: Any, args: list[ast.expr], kws: list[ast.keyword], where: ast.Call
) -> tuple[Any, list[ast.expr], list[ast.keyword]]:
    """The function a call ``where`` (with ``args`` and ``kws``) of ``callee`` runs, and
    its arguments: ``functools.partial(f, a, k=b)(x)`` is ``f(a, x, k=b)`` (the fixed
    arguments as constants, a keyword of the call first), and ``obj(x)``, for an object
    whose class defines ``__call__``, is ``type(obj).__call__(obj, x)``, ``obj`` the
    name the call reads it by; a bound method ``obj.f`` is ``f`` with the object (a
    constant of the code made for it) first. Anything else (a partial fixing an array) is left as it
    is, and refused where its result carries a derivative."""
    if _bound_method(callee):  # obj.method(x): the method's function, the object first
        owner = ast.copy_location(ast.Constant(callee.__self__), where)
        return callee.__func__, [owner, *args], kws
    call = _call_method(callee)
    if call is not None and isinstance(where.func, ast.Name):
        receiver = ast.copy_location(ast.Name(id=where.func.id, ctx=ast.Load()), where.func)
        return call, [receiver, *args], kws
    while isinstance(callee, functools.partial) and is_function_value(callee):
        fixed = [ast.copy_location(ast.Constant(a), where) for a in callee.args]
        given = {k.arg for k in kws}
        kws = [
            ast.keyword(arg=k, value=ast.copy_location(ast.Constant(v), where))
            for k, v in callee.keywords.items()
            if k not in given
        ] + kws
        args = fixed + args
        callee = callee.func
    return callee, args, kws
