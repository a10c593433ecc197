"""Stage 3, analyze: facts about a core function, without changing it.

In:  a :class:`~srcgrad.normalize.Normalized` function, the ``wrt``
parameters and the ranks of the call's arguments.
Out: :class:`Facts`:

- ``ops``: for every core statement, the primitive it applies and the rule
  for it (:class:`Op`);
- ``varied``: names whose value depends on a ``wrt`` parameter;
  ``useful``: names the returned value depends on; ``active``: both, the
  names that get a tangent or an adjoint;
- ``aliases``: which names may share memory (:mod:`srcgrad.aliases`); an in-place
  change another name would see, or one into the caller's data, is an error here;
- ``shapes``: for every name, a :class:`Shape`: its rank where known, and a
  *broadcast key*, the set of values whose shapes broadcast together to give
  its shape. Two names with equal keys provably have equal shapes, which lets
  the transforms drop ``unbroadcast`` where it cannot do anything::

      t4 = 1 + t3       # key(t4) == key(t3) == {x}: t3's adjoint is t4's
      t6 = y * t5       # key(t6) == {x, y} != key(t5): unbroadcast needed

Analysis also refuses, at the user's line, every active value that would silently lose
its derivative: one reaching a call without a rule, a parameter a rule neither
differentiates nor declares of derivative zero (``Rule.zero``), an index, a cast to a
dtype it cannot see or to a complex one, a complex intermediate, list arithmetic.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dtypes import check_writes
from .dtypes import hashable_in as _hashable_in
from .errors import NoDerivativeError, UnsupportedSyntaxError
from .normalize import Normalized
from .parse import source_text
from .rules import RULES, SEQUENCE_RULES, BindError, Context, Rule, bind
from .rules.numpy_rules import operation_name

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
    #: which names may share memory (``srcgrad.aliases.Aliases``)
    aliases: Any = None
    #: the parameters whose arguments are floats (numbers or float arrays; ``wrt`` ones)
    floats: set[str] = field(default_factory=set)

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


def analyze(
    norm: Normalized,
    wrt: list[str],
    ranks: dict[str, Any],
    mode: str | None = None,
    wide: dict[str, tuple[bool, ...]] | None = None,
    check: bool = True,
    floats: frozenset[str] = frozenset(),
) -> Facts:
    """Classify every statement, then compute shapes and activity. ``mode`` ("jvp" or
    "vjp"): the transform that follows, where a runtime helper has a rule for the other
    one only (its source is differentiated instead). ``wide``: for array parameters, which
    axes of their arguments are not of length 1. ``check=False``: the facts alone, with
    no error for what could not be differentiated (for the alias analysis of a callee).
    ``floats``: the parameters whose arguments are floats (the ``wrt`` ones are)."""
    wide = wide or {}
    facts = Facts(mode=mode, params=list(norm.tree.args.args), floats=set(wrt) | set(floats))
    env = norm.parsed.env
    for name, value in env.items():
        facts.shapes[name] = _static_shape(name, value)
    trees = set()
    for param in norm.tree.args.args:
        rank = ranks.get(param.arg)
        if rank == TREE or isinstance(rank, tuple):
            trees.add(param.arg)
            facts.trees[param.arg] = rank
            if wide.get(param.arg) is not None:
                facts.tree_wide[param.arg] = wide[param.arg]
            rank = None
        key = frozenset() if rank == 0 else frozenset({param.arg})
        known = wide.get(param.arg)
        if not isinstance(rank, int) or known is None or len(known) != rank:
            known = None
        facts.shapes[param.arg] = Shape(key, rank, () if rank == 0 else known)
    body = norm.tree.body
    ret = body[-1]
    assert isinstance(ret, ast.Return)
    facts.returned = ret.value
    assigns = []
    for stmt, depth in walk_block(body[:-1]):
        if isinstance(stmt, ast.Assign):
            facts.ops[stmt] = classify(stmt, env, facts)
            assigns.append(stmt)
            facts.definitions.setdefault(assigned_name(stmt), []).append((stmt, depth))
        elif isinstance(stmt, ast.For):
            facts.definitions.setdefault(stmt.target.id, []).append((stmt, depth))
            facts.loop_indices.add(stmt.target.id)
        elif is_append(stmt):
            facts.ops[stmt] = classify(stmt, env, facts)
            assigns.append(stmt)
            facts.definitions.setdefault(assigned_name(stmt), []).append((stmt, depth))
        else:
            assert isinstance(stmt, (ast.If, ast.While, ast.Break, ast.Pass)), ast.dump(stmt)
    # a name holds a list or tuple where each of its definitions makes one or copies a name
    # that does: the greatest fixed point, since names that pass lists around a loop
    # (`xs, ys = ys, xs`) copy each other (a parameter's value is the caller's: not known)
    params = {a.arg for a in norm.tree.args.args}
    facts.sequences = {n for n, defs in facts.definitions.items() if defs and n not in params}
    while True:
        kept = {
            n
            for n in facts.sequences
            if all(
                _gives_sequence(facts.ops.get(s), facts.sequences) for s, _ in facts.definitions[n]
            )
        }
        if kept == facts.sequences:
            break
        facts.sequences = kept
    facts.maybe_sequences = set(facts.sequences)
    while True:  # (the least fixed point: some definition gives one)
        found = {
            n
            for n, defs in facts.definitions.items()
            if any(_gives_sequence(facts.ops.get(s), facts.maybe_sequences) for s, _ in defs)
        }
        if found <= facts.maybe_sequences:
            break
        facts.maybe_sequences |= found
    _tree_parts(facts, assigns, trees)
    for name, defs in facts.definitions.items():
        if len(defs) == 1 and isinstance(defs[0][0], ast.Assign):
            value = defs[0][0].value
            if isinstance(value, (ast.Tuple, ast.List)) and isinstance(
                defs[0][0].targets[0], ast.Name
            ):
                facts.lengths[name] = len(value.elts)
    facts.sequences |= {  # pytree parameters and their containers, unless given other values
        p
        for p, s in facts.trees.items()
        if (s == TREE or isinstance(s, tuple))
        and (
            p not in trees  # read out of a pytree by every definition
            or all(makes_sequence(facts.ops.get(d)) for d, _ in facts.definitions.get(p, []))
        )
    }
    _shapes(facts, assigns)
    # activity, to a fixed point: a name's value may come from several definitions
    facts.varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for stmt in assigns:
            op = facts.ops[stmt]
            if op.target not in facts.varied and any(
                isinstance(a, ast.Name) and a.id in facts.varied for _, a in op.diff_args
            ):
                facts.varied.add(op.target)
                changed = True
    if isinstance(ret.value, ast.Name):
        facts.useful.add(ret.value.id)
    changed = True
    while changed:
        changed = False
        for stmt in reversed(assigns):
            op = facts.ops[stmt]
            if op.target in facts.useful:
                new = {a.id for _, a in op.diff_args if isinstance(a, ast.Name)} - facts.useful
                if new:
                    facts.useful |= new
                    changed = True
    from .aliases import aliases  # (it reads these facts)

    facts.aliases = aliases(norm, facts)
    if check:
        check_facts(norm, facts)
    return facts


def check_facts(norm: Normalized, facts: Facts) -> None:
    """Refuse what the facts show srcgrad cannot differentiate: an in-place change another
    name sees, a write into an array that may not be the function's own, an active value
    reaching an operation without a rule, a complex value, or a place srcgrad does not
    follow (an axis, an index, a parameter its rule leaves out)."""
    env = norm.parsed.env
    assigns = [s for s in facts.ops if isinstance(s, ast.Assign) or is_append(s)]
    in_place = {id(p.stmt): p.message for p in facts.aliases.problems}
    mixed = _mixed_elements(facts, assigns)
    complex_values = _complex_values(facts, assigns, env)
    check_writes(norm, facts, facts.floats)
    active = facts.active
    for stmt in assigns:
        op = facts.ops[stmt]
        if op.key == "setitem":
            _check_fresh(norm, facts, op)
        if id(stmt) in in_place:
            user = norm.origin.get(stmt, stmt)
            raise norm.parsed.locator.error(UnsupportedSyntaxError, user, in_place[id(stmt)])
        if op.target in active:
            _check_supported(norm, facts, op, env, complex_values)
        if op.key == "pack" and not op.problem:
            continue
        if op.target in active and op.call_args is None and (op.rule is None or op.problem):
            raise _no_derivative(norm, op)
        if op.target in facts.useful:
            _check_modeled(norm, facts, op, mixed)


def _shapes(facts: Facts, assigns: list[ast.Assign]) -> None:
    """Broadcast keys and ranks. A name defined more than once, or in a loop, gets
    its own key, and the rank every definition agrees on, found by optimistic
    iteration (a definition that reads a name whose rank is not found yet
    waits for the next round). Its axes known not to have length 1 are those every
    definition's are (from the optimistic start, they only shrink)."""
    multi = {n for n, defs in facts.definitions.items() if len(defs) > 1 or defs[0][1] > 0}
    multi -= facts.loop_indices
    for name in facts.loop_indices:
        facts.shapes[name] = SCALAR
    state: dict[str, int | None] = {}  # absent: not known yet
    wide: dict[str, tuple[bool, ...] | None] = {}
    conflict = object()
    for param in facts.params:  # a parameter's first value is its argument
        if param.arg in multi and param.arg in facts.shapes:
            state[param.arg] = facts.shapes[param.arg].rank
            wide[param.arg] = facts.shapes[param.arg].wide

    def joined(name: str) -> Shape:
        rank = _plain(state.get(name))
        known = wide.get(name)
        return Shape(frozenset({name}), rank, known if rank is not None else None)

    settled = False
    for _ in range(20):
        before = dict(state), dict(wide)
        for name in multi:
            facts.shapes[name] = joined(name)
        for stmt in assigns:
            op = facts.ops[stmt]
            _update_ranks(op, facts)
            shape = _result_shape(op, facts)
            facts.op_shapes[id(stmt)] = shape
            if op.target not in multi:
                facts.shapes[op.target] = shape
                continue
            waiting = any(
                isinstance(a, ast.Name) and a.id in multi and a.id not in state
                for a in op.args.values()
            )
            if waiting:
                continue
            old = state.get(op.target)
            if op.target not in state:
                state[op.target] = shape.rank
                wide[op.target] = shape.wide
            else:
                if old is not conflict and old != shape.rank:
                    state[op.target] = conflict
                wide[op.target] = _both_wide(wide[op.target], shape.wide)
            facts.shapes[op.target] = joined(op.target)
        if (state, wide) == before:
            settled = True
            break
    for name in multi:
        rank = state.get(name)
        if rank == 0 and rank is not conflict:
            facts.shapes[name] = SCALAR  # every definition gives a scalar: shape ()
        else:
            facts.shapes[name] = joined(name) if settled else Shape(frozenset({name}), _plain(rank))
    for stmt in assigns:
        _update_ranks(facts.ops[stmt], facts)
        facts.op_shapes[id(stmt)] = _result_shape(facts.ops[stmt], facts)


def _both_wide(a: tuple[bool, ...] | None, b: tuple[bool, ...] | None) -> tuple[bool, ...] | None:
    """The axes known not to have length 1 in both of two values (of one rank)."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x and y for x, y in zip(a, b))


def _plain(rank: Any) -> int | None:
    return rank if isinstance(rank, int) else None


def _update_ranks(op: Op, facts: Facts) -> None:
    """Tell a rule's context the ranks of its operands, as known now."""
    if op.ctx is None:
        return
    for p, a in op.args.items():
        op.ctx.ranks[p] = facts.shape(a).rank
        if isinstance(a, ast.Name) and a.id in facts.lengths:
            op.ctx.ranks[f"len:{p}"] = facts.lengths[a.id]
    for key in op.ctx.ranks:
        if key.startswith("index:"):
            op.ctx.ranks[key] = facts.shape(ast.Name(id=key[6:])).rank


def _no_derivative(norm: Normalized, op: Op) -> Exception:
    locator = norm.parsed.locator
    user = norm.origin.get(op.stmt, op.stmt)
    callee = op.callee
    if op.problem:
        return locator.error(NoDerivativeError, user, op.problem)
    if op.key == "pack":
        return locator.error(
            UnsupportedSyntaxError,
            user,
            "srcgrad does not differentiate through tuples or lists of active values yet; "
            "combine arrays with np.stack or np.concatenate, or return a single array.",
        )
    if getattr(callee, "__srcgrad_derivative__", False):  # grad(f), jacobian(f)... itself
        return locator.error(
            NoDerivativeError,
            user,
            f"this calls {callee!r}, a derivative srcgrad made; srcgrad does not differentiate "
            "a call to one inside a function it differentiates. Apply the transformation to "
            "the derivative itself instead (srcgrad.jvp(d), srcgrad.grad(d), "
            "srcgrad.jacobian(d, mode='forward')), or call the original function here.",
        )
    owner = getattr(callee, "__self__", None)
    if type(owner).__name__ == "Primitive" and callee.__name__ in ("vjp", "jvp"):
        name = getattr(owner.func, "__name__", "the primitive")
        return locator.error(
            NoDerivativeError,
            user,
            f"this differentiates again {name}'s {callee.__name__} rule, given with "
            f"@{name}.def{callee.__name__}; srcgrad differentiates a srcgrad.primitive once, "
            f"not its rules. For a second derivative (hessian, hvp, grad of grad) write {name} "
            "as a plain function without @srcgrad.primitive where srcgrad can read it: it "
            "differentiates such code as often as asked.",
        )
    # named as the user wrote it: a core statement's text would show srcgrad's temporaries
    qualname = getattr(callee, "__qualname__", None)
    module = getattr(callee, "__module__", None)
    if callee is not None and isinstance(qualname, str):
        what = repr(f"{module}.{qualname}" if module else qualname)
    elif callee is not None:  # an object called like a function (the callee is a static name)
        what = f"the {type(callee).__name__} object `{ast.unparse(op.stmt.value.func)}`"
    elif isinstance(op.key, tuple):  # ("method", "sum") or ("attr", "T")
        kind = "method" if op.key[0] == "method" else "attribute"
        what = f"the {kind} {operation_name(op.key)}"
    else:
        what = operation_name(op.key)
    return locator.error(
        NoDerivativeError,
        user,
        f"srcgrad has no derivative rule for {what}; give it one with @srcgrad.primitive "
        "and defvjp/defjvp, or compute this value from operations srcgrad knows.",
    )


#: functions that may return complex numbers for real arguments (with the complex types)
_COMPLEX_MAKERS = {
    complex,
    np.complex64,
    np.complex128,
    np.clongdouble,
    np.linalg.eig,
    np.linalg.eigvals,
    np.roots,
}
#: modules whose functions may return complex numbers for real arguments
_COMPLEX_MODULES = ("numpy.fft", "numpy.lib.scimath", "numpy.emath", "scipy.fft", "scipy.fftpack")
#: functions of those modules that return real numbers for real arguments (complex ones
#: for complex arguments, which the operands' own tracking finds)
_REAL_FFT = {"fftfreq", "rfftfreq", "fftshift", "ifftshift", "irfft", "irfft2", "irfftn", "hfft"}
#: functions of scipy.linalg that may return complex numbers for real arguments
_COMPLEX_SCIPY = {"eig", "eigvals", "rsf2csf", "logm", "sqrtm"}
#: operations giving real numbers of complex ones (their derivative is not taken: no rule)
_REAL_PARTS = {np.abs, abs, np.real, np.imag, np.angle, ("attr", "real"), ("attr", "imag")}


def _is_complex(value: Any) -> bool:
    if isinstance(value, (complex, np.complexfloating)):
        return True
    dtype = getattr(value, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind == "c"


def _complex_values(facts: Facts, assigns: list[ast.stmt], env: dict[str, Any]) -> dict[str, str]:
    """Names that may hold complex numbers, each with where its complex value comes from:
    a complex constant, global or closure value, a cast to a complex dtype, a function
    that may return complex numbers (``np.fft``, ``np.linalg.eig``, ``np.emath``), and
    every operation on such a value but comparisons, ``abs`` and the like."""
    found: dict[str, str] = {}

    def origin(atom: ast.expr) -> str | None:
        if isinstance(atom, ast.Constant):
            if _is_complex(atom.value):
                return f"it is computed from the complex number {atom.value!r}"
            return None
        if isinstance(atom, ast.Name) and atom.id in found:
            return found[atom.id]
        if _static_attr(atom, env) or (isinstance(atom, ast.Name) and atom.id in env):
            try:
                value = resolve_static(atom, env)
            except AttributeError:
                return None
            if _is_complex(value):
                return f"it is computed from {ast.unparse(atom)!r}, which holds complex numbers"
        return None

    for _ in range(len(assigns) + 1):
        before = len(found)
        for stmt in assigns:
            op = facts.ops[stmt]
            if op.target in found:
                continue
            callee = op.callee
            module = getattr(callee, "__module__", None) or ""
            if op.ctx is not None and op.rule is not None and op.rule.nondiff:
                continue  # comparisons, shapes, rounding: real
            name = getattr(callee, "__name__", "")
            if callee is not None and (
                _hashable_in(callee, _COMPLEX_MAKERS)
                or (module.startswith(_COMPLEX_MODULES) and name not in _REAL_FFT)
                or (module.startswith("scipy.linalg") and name in _COMPLEX_SCIPY)
            ):
                found[op.target] = (
                    f"it is made by {name}"
                    if isinstance(callee, type)
                    else f"{name} may return complex numbers"
                )
                continue
            dtype = op.args.get("dtype") if op.ctx is not None else None
            if dtype is not None and op.problem and "complex" in op.problem:
                found[op.target] = f"it is cast to {ast.unparse(dtype)}"
                continue
            if _hashable_in(op.key, _REAL_PARTS):
                continue
            for atom in op.args.values():
                why = origin(atom)
                if why is not None:
                    found[op.target] = why
                    break
        if len(found) == before:
            break
    return found


def _mixed_elements(facts: Facts, assigns: list[ast.stmt]) -> set[str]:
    """Varied names that may hold a plain integer after all. Activity follows a list as
    a whole, so every element read out of a list given one varied value is varied, even
    where the list also holds integers (a tape holding loop indices beside arrays,
    ``[W, 2]``). A name is mixed where one of its definitions gives it such a value: a
    constant that is not a float, an element of a list that is not varied or is mixed,
    arithmetic on such values alone, a call to a function of the user's (whose result
    may be an axis); a list is mixed where it is given such a value."""
    mixed: set[str] = set()

    def plain(atom: ast.expr) -> bool:  # a value that may carry no derivative
        if isinstance(atom, ast.Constant):
            return not isinstance(atom.value, float)
        return not (isinstance(atom, ast.Name) and atom.id in facts.varied) or atom.id in mixed

    for _ in range(len(assigns) + 1):
        before = len(mixed)
        for stmt in assigns:
            op = facts.ops[stmt]
            if op.target not in facts.varied or op.target in mixed:
                continue
            if op.key in ("pack", "append", "setitem") and op.target in facts.sequences:
                given = list(op.args.values()) if op.key == "pack" else [op.args["v"]]
                hit = any(plain(a) for a in given)
            elif op.key in ("getitem", "copy", ("method", "pop")) and "x" in op.args:
                hit = plain(op.args["x"])
            elif isinstance(op.key, type) and issubclass(op.key, (ast.operator, ast.unaryop)):
                hit = all(plain(a) for a in op.args.values())
            elif op.call_args is not None:  # a function of the user's may return anything
                hit = True
            else:
                hit = False
            if hit:
                mixed.add(op.target)
        if len(mixed) == before:
            break
    return mixed


def _check_modeled(norm: Normalized, facts: Facts, op: Op, mixed: set[str]) -> None:
    """A value that carries a derivative reaches only places where srcgrad follows it: a
    parameter its rule differentiates or knows to have derivative zero, never an axis, a
    shape, a dtype, a subscript, nor a parameter srcgrad's rule leaves out. Anything else
    would silently become a constant. (``mixed``: varied names that may be integers.)"""
    if op.rule is None or op.ctx is None or op.problem:
        return  # (no rule: every argument is followed, and refused if active)

    def carries(atom: ast.expr) -> bool:
        return isinstance(atom, ast.Name) and atom.id in facts.varied and atom.id not in mixed

    problem = None
    for param, atom in op.args.items():
        if carries(atom) and op.rule.unmodeled(param):
            where = f"and here its argument {param!r} depends on the arguments being differentiated"
            if param in op.rule.hints:
                problem = f"{op.rule.hints[param]}, {where}"
            else:
                differentiated = _listing(op.rule.diff_params) or "none of its arguments"
                problem = f"srcgrad differentiates {op.rule.name} in {differentiated}, {where}"
            if param not in op.rule.hints and isinstance(op.key, tuple) and op.key[0] == "method":
                receiver = op.args[op.rule.params[0]]
                if isinstance(receiver, ast.Name) and receiver.id not in norm.temps:
                    problem += (
                        f" (srcgrad read this as the array method .{op.key[1]}() of "
                        f"{receiver.id!r}; if {receiver.id!r} is a module passed in as a "
                        "parameter, use the module's global name instead)"
                    )
            break
    index = op.ctx.index
    if problem is None and index is not None and any(carries(n) for n in ast.walk(index)):
        problem = (
            "the index here depends on the arguments being differentiated; srcgrad "
            "differentiates indexing only with indices that do not (to build an array from "
            "pieces, as np.r_[...] and np.c_[...] do, use np.concatenate or np.stack)"
        )
    if problem is not None:
        raise norm.parsed.locator.error(
            NoDerivativeError,
            norm.origin.get(op.stmt, op.stmt),
            f"{problem}. Its derivative would be lost; pass a value that does not depend on "
            "them, or wrap it in srcgrad.stop_gradient(...) to treat it as a constant.",
        )


def _listing(names: tuple[str, ...]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def check_mode(norm: Normalized, facts: Facts, mode: str) -> None:
    """Every active operation has a rule for ``mode`` ("jvp" or "vjp") for each of its
    active arguments: a primitive may have been given only one of its two rules."""
    active = facts.active
    for op in facts.ops.values():
        if op.rule is None or op.target not in active or op.rule.nondiff:
            continue
        table = op.rule.jvp if mode == "jvp" else op.rule.vjp
        for param, atom in op.diff_args:
            if isinstance(atom, ast.Name) and atom.id in active and param not in table:
                name = op.rule.name
                have, need = ("defvjp", "defjvp") if mode == "jvp" else ("defjvp", "defvjp")
                what = "forward" if mode == "jvp" else "reverse"
                hint = (
                    f"give it one with @{name}.{need}"
                    if op.rule.primitive is not None
                    else "srcgrad has no such rule yet"
                )
                raise norm.parsed.locator.error(
                    NoDerivativeError,
                    norm.origin.get(op.stmt, op.stmt),
                    f"{name} has no {what}-mode rule for its argument {param!r} "
                    f"(it has {have if op.rule.primitive is not None else 'the other'}); "
                    f"{hint}, or use the other mode.",
                )


def _check_fresh(norm: Normalized, facts: Facts, op: Op) -> None:
    """``y[i] = v`` is differentiated where ``y`` holds an array (not a list or tuple);
    whose memory it may write into is the alias analysis's question (``srcgrad.aliases``:
    not the caller's, and no other name read afterwards may share it)."""
    y = op.target
    defs = [s for s, _ in facts.definitions.get(y, []) if not is_setitem(s)]
    if y in facts.sequences or any(makes_sequence(facts.ops.get(s)) for s in defs):
        user = norm.origin.get(op.stmt, op.stmt)
        raise norm.parsed.locator.error(
            UnsupportedSyntaxError,
            user,
            f"srcgrad differentiates `{y}[...] = ...` only when `{y}` is an array; here it "
            "holds a list or tuple: build a new list with `append`, or make an array "
            "(`np.array(...)`, `np.stack(...)`) and write into a copy of it.",
        )


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
            returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
            known = (code, bool(returns) and all(isinstance(r.value, ast.Tuple) for r in returns))
        _TUPLE_RETURNS[func] = known
    return known[1]


def is_user_function(func: Any) -> bool:
    """A Python function of the user's, which srcgrad differentiates by its source."""
    return inspect.isfunction(func) and not _is_library(func)


def _call_arguments(
    func: Any, args: list[ast.expr], kws: list[ast.keyword]
) -> tuple[list[ast.expr] | None, str | None]:
    """Every parameter's argument for a call to ``func``, defaults filled in."""
    signature = inspect.signature(func, follow_wrapped=False)
    simple = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind not in simple for p in signature.parameters.values()):
        return None, (
            f"srcgrad differentiates calls to {func.__qualname__!r} only if it has plain "
            "positional parameters (no *args, **kwargs or keyword-only ones)"
        )
    try:
        bound = signature.bind(*args, **{k.arg: k.value for k in kws})
    except TypeError as exc:
        return None, f"the call does not match {func.__qualname__}{signature}: {exc}"
    out = []
    for name, param in signature.parameters.items():
        if name in bound.arguments:
            out.append(bound.arguments[name])
        elif isinstance(param.default, (int, float, complex, str, bool, type(None))):
            out.append(ast.Constant(param.default))
        else:
            return None, (
                f"srcgrad passes default arguments only when they are plain constants; "
                f"pass {name!r} to {func.__qualname__!r} explicitly"
            )
    return out, None


def _is_library(func: Any) -> bool:
    module = getattr(func, "__module__", "") or ""
    return module.split(".")[0] in {"numpy", "cupy", "scipy", "builtins", "math"}


def _static_shape(name: str, value: Any) -> Shape:
    if isinstance(value, (bool, int, float, complex, np.generic, type, np.dtype)):
        return SCALAR  # (a type or dtype, as a dtype argument: not an array operand)
    if isinstance(value, np.ndarray):
        return Shape(frozenset({name}) if value.ndim else frozenset(), value.ndim)
    return Shape(frozenset({name}), None)


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


def classify(stmt: ast.stmt, env: dict[str, Any], facts: Facts) -> Op:
    """Find the primitive and rule of one core assignment (or ``xs.append(v)``)."""
    rhs = stmt.value
    target = None if isinstance(stmt, ast.Expr) else stmt.targets[0]
    index = None
    callee = None
    if isinstance(stmt, ast.Expr):  # xs.append(v): a longer xs, from the old xs and v
        xs = rhs.func.value
        return Op(
            stmt,
            xs.id,
            SEQUENCE_RULES["append"],
            "append",
            {"x": xs, "v": rhs.args[0]},
            Context(
                rule=SEQUENCE_RULES["append"],
                node=rhs,
                args={"x": xs, "v": rhs.args[0]},
                supplied={"x", "v"},
                ranks={},
            ),
        )
    if isinstance(target, ast.Subscript):  # y[index] = v: a new y, from the old y and v
        key, args, kws, index = "setitem", [target.value, rhs], [], target.slice
        target = target.value
    elif isinstance(rhs, (ast.Name, ast.Constant)) or _static_attr(rhs, env):
        key, args, kws = "copy", [rhs], []
    elif isinstance(rhs, ast.BinOp):
        key, args, kws = type(rhs.op), [rhs.left, rhs.right], []
    elif isinstance(rhs, ast.UnaryOp):
        key, args, kws = type(rhs.op), [rhs.operand], []
    elif isinstance(rhs, ast.Compare):
        key, args, kws = "compare", [rhs.left, rhs.comparators[0]], []
    elif isinstance(rhs, ast.Call):
        if _static_attr(rhs.func, env) or (isinstance(rhs.func, ast.Name) and rhs.func.id in env):
            callee = resolve_static(rhs.func, env)
            key, args, kws = callee, list(rhs.args), list(rhs.keywords)
        else:
            assert isinstance(rhs.func, ast.Attribute)
            key = ("method", rhs.func.attr)
            args, kws = [rhs.func.value, *rhs.args], list(rhs.keywords)
    elif isinstance(rhs, ast.Attribute):
        key, args, kws = ("attr", rhs.attr), [rhs.value], []
    elif isinstance(rhs, ast.Subscript):
        key, args, kws, index = "getitem", [rhs.value], [], rhs.slice
    elif isinstance(rhs, (ast.Tuple, ast.List)):
        key, args, kws = "pack", list(rhs.elts), []
    else:
        raise AssertionError(f"not core: {ast.dump(rhs)}")
    rule = _lookup(key)
    if rule is not None and getattr(callee, "__srcgrad_helper__", None) is not None:
        table = rule.vjp if facts.mode == "vjp" else rule.jvp
        if not rule.nondiff and not table:  # a helper's rule for the other mode only
            rule = None
    if rule is None:
        named = {f"arg{i}": a for i, a in enumerate(args)}
        named.update({f"kw_{k.arg}": k.value for k in kws})
        op = Op(stmt, target.id, None, key, named, None, callee=callee)
        # a runtime helper without a rule of its own (generated code differentiated
        # again) is plain numpy code too: srcgrad differentiates its source
        if is_user_function(callee):
            op.call_args, op.problem = _call_arguments(callee, args, kws)
            if op.call_args is not None:
                op.args = {
                    p: a
                    for p, a in zip(
                        inspect.signature(callee, follow_wrapped=False).parameters, op.call_args
                    )
                }
        return op
    try:
        bound, supplied = bind(rule, args, kws)
    except BindError as exc:
        named = {f"arg{i}": a for i, a in enumerate(args)}
        return Op(stmt, target.id, rule, key, named, None, callee=callee, problem=str(exc))
    ranks = {p: facts.shape(a).rank for p, a in bound.items()}
    if index is not None:
        for node in ast.walk(index):
            if isinstance(node, ast.Name):
                ranks[f"index:{node.id}"] = facts.shape(node).rank
    ctx = Context(
        rule=rule, node=rhs, args=bound, supplied=supplied, ranks=ranks, index=index, rule_key=key
    )
    problem = dtype_name = None
    if "dtype" in bound and not rule.nondiff and rule.primitive is None:  # a cast
        dtype = bound["dtype"]
        if isinstance(dtype, ast.Name) and dtype.id not in env:
            dtype_name = dtype.id  # found after activity (see _dtype_of_active)
        else:
            rule, problem = _cast(rule, dtype, env)
            ctx.rule = rule
    return Op(
        stmt,
        target.id,
        rule,
        key,
        bound,
        ctx,
        callee=callee,
        problem=problem,
        dtype_name=dtype_name,
    )


def _check_supported(
    norm: Normalized, facts: Facts, op: Op, env: dict[str, Any], complex_values: dict[str, str]
) -> None:
    """Refuse an active operation srcgrad has no model of: on complex numbers, einsum's
    operand/sublist form, arithmetic on lists, a cast to a dtype it cannot see."""
    problem = error = None
    if op.target in complex_values:
        error = UnsupportedSyntaxError
        problem = (
            f"this value is complex ({complex_values[op.target]}), and srcgrad does not "
            "differentiate complex numbers yet; keep the computation in real numbers."
        )
    elif _einsum_sublists(facts, op, env):
        error = NoDerivativeError
        problem = f"{op.rule.hints['subscripts']}; write the subscripts as a string."
    elif _sequence_arithmetic(facts, op):
        error = UnsupportedSyntaxError
        problem = (
            "srcgrad does not differentiate arithmetic on lists or tuples yet (`xs * 2` "
            "repeats a list, `xs + [y]` joins two); build the list with append or a "
            "display, or use arrays (np.tile, np.concatenate)."
        )
    elif op.dtype_name is not None and not _dtype_of_active(facts, op.dtype_name):
        error = NoDerivativeError
        problem = (
            f"srcgrad cannot tell the dtype of {op.rule.name} before the code runs, so not "
            "whether the result carries a derivative; write the dtype out (float, "
            "np.float32, 'float64', int), or use the dtype of a differentiated value (x.dtype)."
        )
    if problem is not None:
        raise norm.parsed.locator.error(error, norm.origin.get(op.stmt, op.stmt), problem)


def _einsum_sublists(facts: Facts, op: Op, env: dict[str, Any]) -> bool:
    """Whether ``op`` is ``np.einsum`` in its operand/sublist form: the subscripts are not
    a string, or an operand is a list (``np.einsum(a, [0, 1], b, [1])``)."""
    if op.callee is not np.einsum or op.ctx is None or op.problem:
        return False
    subscripts = op.args["subscripts"]
    if isinstance(subscripts, ast.Constant):
        return not isinstance(subscripts.value, str)
    if isinstance(subscripts, ast.Name) and subscripts.id in env:
        return not isinstance(env[subscripts.id], str)
    return any(isinstance(a, ast.Name) and a.id in facts.sequences for a in op.args.values())


def _sequence_arithmetic(facts: Facts, op: Op) -> bool:
    """Whether ``op`` may be Python's arithmetic on lists or tuples: ``xs + ys`` of two
    names that may hold them (on some path), ``xs * n`` of one and a number that may be an
    integer. (With an array, or a
    number that carries a derivative, numpy's elementwise arithmetic applies.)"""
    if not (isinstance(op.key, type) and issubclass(op.key, ast.operator)):
        return False
    operands = list(op.args.values())
    lists = [isinstance(a, ast.Name) and a.id in facts.maybe_sequences for a in operands]
    if not any(lists):
        return False
    if op.key is not ast.Mult or all(lists):
        return all(lists)
    other = operands[lists.index(False)]
    if isinstance(other, ast.Constant):
        return isinstance(other.value, int)
    if not isinstance(other, ast.Name):  # a module's constant
        return True
    return other.id not in facts.varied and facts.shape(other).rank in (0, None)


def _dtype_of_active(facts: Facts, name: str) -> bool:
    """Whether ``name`` is the dtype of a value that carries a derivative (``x.dtype``,
    ``np.result_type(x)``): a float dtype, as every such value's is, so a cast to it is
    the identity."""
    defs = facts.definitions.get(name, [])
    if len(defs) != 1 or not isinstance(defs[0][0], ast.Assign):
        return False
    source = facts.ops[defs[0][0]]
    return (source.key == ("attr", "dtype") or source.callee is np.result_type) and any(
        isinstance(a, ast.Name) and a.id in facts.varied for a in source.args.values()
    )


def _cast(rule: Rule, dtype: ast.expr, env: dict[str, Any]) -> tuple[Rule, str | None]:
    """The rule of a call with a ``dtype`` argument, and why it cannot be differentiated
    if so. To a float dtype the cast is the identity (the rule as it is); to an integer or
    bool dtype the result is piecewise constant (derivative zero); to a complex dtype, or
    to one srcgrad cannot see before the code runs, no derivative is taken."""
    text = "its dtype"
    if isinstance(dtype, ast.Constant) and dtype.value is None:
        return rule, None
    try:
        if isinstance(dtype, ast.Constant):
            value = dtype.value
        elif _static_attr(dtype, env) or (isinstance(dtype, ast.Name) and dtype.id in env):
            value = resolve_static(dtype, env)
        else:
            raise TypeError
        text = f"dtype={ast.unparse(dtype)}"
        kind = np.dtype(value).kind
    except (TypeError, ValueError, AttributeError):
        return rule, (
            f"srcgrad cannot tell {text} in {rule.name} before the code runs, so not "
            "whether the result carries a derivative; write the dtype out (float, "
            "np.float32, 'float64', int)"
        )
    if kind == "f":
        return rule, None
    if kind in "iub":
        return dataclasses.replace(rule, nondiff=True), None
    if kind == "c":
        return rule, (
            f"{rule.name} with {text} makes complex numbers, and srcgrad does not "
            "differentiate complex numbers yet"
        )
    return rule, f"srcgrad differentiates {rule.name} only to a float dtype, not {text}"


def _lookup(key: Any) -> Rule | None:
    if key == "compare":
        return _COMPARE
    if key == "pack":
        return None  # variable arity: see Op.args (arg0, arg1, ...)
    if key in (ast.Not, ast.Invert):
        return _NOT
    helper = getattr(key, "__srcgrad_helper__", None)
    if helper is not None:  # a runtime helper in generated code: differentiating it again
        return RULES.get(("helper", helper))
    try:
        return RULES.get(key)
    except TypeError:  # an unhashable callee
        return None


def _static_attr(node: ast.expr, env: dict[str, Any]) -> bool:
    if not isinstance(node, ast.Attribute):
        return False
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in env


def _tree_parts(facts: Facts, assigns: list[ast.stmt], params: set[str]) -> None:
    """The structure of every name read out of a pytree argument (``layer = layers[i]``,
    ``W = p["W"]``), where all its definitions agree on one."""
    for _ in range(len(assigns) + 1):  # a loop may read a part defined later in its body
        found: dict[str, list[Any]] = {}
        found_wide: dict[str, list[Any]] = {}
        for stmt in assigns:
            op = facts.ops[stmt]
            x = op.args.get("x") if op.key in ("getitem", "copy") else None
            part = wide = None
            if isinstance(x, ast.Name) and x.id in facts.trees:
                part, wide = facts.trees[x.id], facts.tree_wide.get(x.id)
                if op.key == "getitem":
                    index = op.ctx.index if op.ctx else None
                    part = _tree_child(part, index)
                    wide = _tree_child(wide, index) if wide and wide[0] != LEAF else None
            found.setdefault(op.target, []).append(part)
            found_wide.setdefault(op.target, []).append(wide)
        before = dict(facts.trees), dict(facts.tree_wide)
        for target, parts in found.items():
            if target in params:
                continue
            defs = facts.definitions.get(target, [])
            wides = found_wide[target]
            if (
                len(parts) == len(defs)
                and parts[0] is not None
                and parts.count(parts[0]) == len(parts)
            ):
                facts.trees[target] = parts[0]
                if wides[0] is not None and wides.count(wides[0]) == len(wides):
                    facts.tree_wide[target] = wides[0]
                else:
                    facts.tree_wide.pop(target, None)
            else:
                facts.trees.pop(target, None)
                facts.tree_wide.pop(target, None)
        if (facts.trees, facts.tree_wide) == before:
            return


def _tree_child(structure: Any, index: ast.expr | None) -> Any:
    """The structure of ``value[index]`` for a value of this structure, if known."""
    if not isinstance(structure, tuple) or index is None:
        return None
    kind, items = structure
    if isinstance(index, ast.Constant):
        key = index.value
        if kind == "dict":
            return next((s for k, s in items if k == key), None)
        if type(key) is int and -len(items) <= key < len(items):
            return items[key]
        return None
    if kind == "dict":  # any value of a dict whose values are alike
        items = tuple(s for _, s in items)
    if items and all(s == items[0] for s in items):
        return items[0]  # any element of a list whose elements are alike
    return None


def _result_shape(op: Op, facts: Facts) -> Shape:
    part = facts.trees.get(op.target)
    if isinstance(part, int) and op.key in ("getitem", "copy"):  # a leaf of a pytree
        leaf = facts.tree_wide.get(op.target)
        wide = leaf[1] if leaf and leaf[0] == LEAF and len(leaf[1] or ()) == part else None
        return SCALAR if part == 0 else Shape(frozenset({op.target}), part, wide)
    rule = op.rule
    if rule is None or op.ctx is None:
        return Shape(frozenset({op.target}), None)
    if op.key in ("copy", "setitem"):
        return facts.shape(op.args["x"])
    if op.key in ("pack", "append"):
        return Shape(frozenset({op.target}), None)
    rank = rule.rank(op.ctx) if rule.rank else None
    if rank == 0:
        return SCALAR
    wide = _result_wide(op, facts, rank)
    if op.key == "getitem":
        token = _slice_token(op, facts)
        if token is not None:
            return Shape(frozenset({token}), rank, wide)
    if rule.elementwise:
        key = frozenset().union(*(facts.shape(a).key for a in op.args.values()))
        return Shape(key, rank, wide)
    return Shape(frozenset({op.target}), rank, wide)


def _slice_token(op: Op, facts: Facts) -> str | None:
    """A broadcast key shared by slices that provably have one shape: ``x[1:]`` and
    ``x[:-1]`` both have ``len(x) - 1`` rows, whatever ``x``'s length. Each part of the
    index is ``:`` or a step-1 slice from a start >= 0 to an end < 0 (or none), whose
    length is the axis's less ``start - end``; ``x`` is a value given once."""
    x = op.args.get("x")
    if not isinstance(x, ast.Name) or facts.shape(x).rank is None:
        return None
    base = facts.shape(x).key
    params = {a.arg for a in facts.params}
    for n in base:  # names given one value (parameters and single definitions)
        defs = facts.definitions.get(n, [])
        if (n in params and defs) or len(defs) > 1 or any(depth > 0 for _, depth in defs):
            return None
    index = op.ctx.index
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    offsets = []
    for part in parts:
        if not isinstance(part, ast.Slice) or part.step is not None:
            return None
        start, end = _int_const(part.lower, 0), _int_const(part.upper, 0)
        if start is None or end is None or start < 0 or end > 0:
            return None
        if part.upper is not None and end == 0:
            return None  # x[:0] is empty
        offsets.append(str(start - end))
    if all(o == "0" for o in offsets):
        return None  # the whole of x: a copy, whose key is x's own
    return "{" + ",".join(sorted(base)) + "}[" + ",".join(offsets) + "]"


def _int_const(node: ast.expr | None, default: int) -> int | None:
    if node is None:
        return default
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _result_wide(op: Op, facts: Facts, rank: int | None) -> tuple[bool, ...] | None:
    """Which axes of an operation's result are known not to have length 1, from its
    operands' (broadcasting, ``@``, ``.T``, and indexing with integers and ``:``)."""
    if rank is None:
        return None
    operands = [facts.shape(op.args[p]) for p in op.rule.params if p in op.args]
    if op.rule.elementwise:
        if any(s.rank is None or s.rank > rank for s in operands):
            return None
        wide = [False] * rank
        for s in operands:  # aligned on the right, as numpy broadcasts
            for i, w in enumerate(s.wide or ()):
                wide[rank - s.rank + i] |= w
        return tuple(wide)
    if op.key in (ast.MatMult, np.matmul) and len(operands) == 2:
        a, b = (s.wide for s in operands)
        if a is None or b is None or not a or not b:
            return None
        if len(b) == 1:  # a matrix (or a stack of them) times a vector
            out = a[:-1]
        elif len(a) == 1:
            out = b[:-2] + b[-1:]
        else:  # the stacks broadcast; then rows of a, columns of b
            batch = max(len(a), len(b)) - 2
            stack = [False] * batch
            for w in (a[:-2], b[:-2]):
                for i, x in enumerate(w):
                    stack[batch - len(w) + i] |= x
            out = (*stack, a[-2], b[-1])
        return tuple(out) if len(out) == rank else None
    if op.key == ("attr", "T") and operands and operands[0].wide is not None:
        return tuple(reversed(operands[0].wide))
    if op.key == "getitem" and operands and operands[0].wide is not None:
        index = op.ctx.index
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        wide = list(operands[0].wide)
        if len(parts) > len(wide):
            return None
        kept = []
        for i, part in enumerate(parts):
            if isinstance(part, ast.Slice) and not (part.lower or part.upper or part.step):
                kept.append(wide[i])  # `:` keeps the axis
            elif not (
                (isinstance(part, ast.Constant) and type(part.value) is int)
                or (isinstance(part, ast.Name) and part.id in facts.loop_indices)
            ):
                return None
        out = tuple(kept) + tuple(wide[len(parts) :])
        return out if len(out) == rank else None
    return None
