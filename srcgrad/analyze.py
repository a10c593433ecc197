"""Stage 3, analyze: facts about a core function, without changing it.

In:  a :class:`~srcgrad.normalize.Normalized` function, the ``wrt``
parameters and the ranks of the call's arguments.
Out: :class:`Facts`:

- ``ops``: for every core statement, the primitive it applies and the rule
  for it (:class:`Op`);
- ``varied``: names whose value depends on a ``wrt`` parameter;
  ``useful``: names the returned value depends on; ``active``: both, the
  names that get a tangent or an adjoint;
- ``shapes``: for every name, a :class:`Shape`: its rank where known, and a
  *broadcast key*, the set of values whose shapes broadcast together to give
  its shape. Two names with equal keys provably have equal shapes, which lets
  the transforms drop ``unbroadcast`` where it cannot do anything::

      t4 = 1 + t3       # key(t4) == key(t3) == {x}: t3's adjoint is t4's
      t6 = y * t5       # key(t6) == {x, y} != key(t5): unbroadcast needed
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import NoDerivativeError, UnsupportedSyntaxError
from .normalize import Normalized
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

    @property
    def active(self) -> set[str]:
        return self.varied & self.useful

    def witness(self, name: str, preferred: list[str]) -> str:
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
) -> Facts:
    """Classify every statement, then compute shapes and activity. ``mode`` ("jvp" or
    "vjp"): the transform that follows, where a runtime helper has a rule for the other
    one only (its source is differentiated instead). ``wide``: for array parameters, which
    axes of their arguments are not of length 1."""
    wide = wide or {}
    facts = Facts(mode=mode, params=list(norm.tree.args.args))
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
    facts.sequences = set()
    while True:  # (a copy of a list is a list: to a fixed point)
        found = {
            n
            for n, defs in facts.definitions.items()
            if defs and all(_gives_sequence(facts.ops.get(s), facts.sequences) for s, _ in defs)
        }
        if found <= facts.sequences:
            break
        facts.sequences |= found
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
    for stmt in assigns:
        op = facts.ops[stmt]
        if op.key == "pack" and not op.problem:
            continue
        if op.target in facts.active and op.call_args is None and (op.rule is None or op.problem):
            raise _no_derivative(norm, op)
        if op.key == "setitem":
            _check_fresh(norm, facts, op)
    return facts


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


def check_mode(norm: Normalized, facts: Facts, mode: str) -> None:
    """Every active operation has a rule for ``mode`` ("jvp" or "vjp") for each of its
    active arguments: a primitive may have been given only one of its two rules."""
    for op in facts.ops.values():
        if op.rule is None or op.target not in facts.active or op.rule.nondiff:
            continue
        table = op.rule.jvp if mode == "jvp" else op.rule.vjp
        for param, atom in op.diff_args:
            if isinstance(atom, ast.Name) and atom.id in facts.active and param not in table:
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


#: operations whose result is a new array, safe to write into
_FRESH_CALLS = {
    np.zeros,
    np.ones,
    np.empty,
    np.full,
    np.array,
    np.copy,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.full_like,
    np.arange,
    np.linspace,
    np.eye,
}


def _check_fresh(norm: Normalized, facts: Facts, op: Op) -> None:
    """``y[i] = v`` is differentiated only where ``y`` is an array the function made:
    writing into an argument, or a view of one, would change the caller's data."""
    y = op.target
    defs = [s for s, _ in facts.definitions.get(y, []) if not is_setitem(s)]
    problem = None
    if not defs:
        problem = f"{y!r} is an argument of the function"
    for stmt in defs:
        other = facts.ops[stmt]
        fresh = (
            (other.rule is not None and other.rule.elementwise and other.key != "copy")
            or other.key == ("method", "copy")
            or any(other.callee is f for f in _FRESH_CALLS)
            # generated code differentiated again: adjoints of indexing are new arrays
            or getattr(other.callee, "__srcgrad_helper__", None)
            in ("index_adjoint", "index_adjoint_add")
        )
        if not fresh:
            problem = f"{y!r} may share memory with another array (it is `{ast.unparse(stmt)}`)"
    if problem:
        user = norm.origin.get(op.stmt, op.stmt)
        raise norm.parsed.locator.error(
            UnsupportedSyntaxError,
            user,
            f"srcgrad differentiates `{y}[...] = ...` only when {y!r} is an array the function "
            f"made itself, and {problem}; write into a copy instead, e.g. `{y} = {y}.copy()` "
            "or `np.zeros_like(...)`.",
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
            tree = ast.parse(textwrap.dedent(inspect.getsource(code)))
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
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return SCALAR
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
    return Op(stmt, target.id, rule, key, bound, ctx, callee=callee)


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
    if kind != "dict" and items and all(s == items[0] for s in items):
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
