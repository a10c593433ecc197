"""Stage 3, analyze: facts about a core function, without changing it.

In:  a :class:`~srcgrad.normalize.Normalized` function, the ``wrt``
parameters and the ranks of the call's arguments.
Out: :class:`~srcgrad.facts.Facts` (the data model, in ``facts.py``):

- ``ops``: for every core statement, the primitive it applies and the rule
  for it (:class:`~srcgrad.facts.Op`);
- ``varied``: names whose value depends on a ``wrt`` parameter;
  ``useful``: names the returned value depends on; ``active``: both, the
  names that get a tangent or an adjoint;
- ``aliases``: which names may share memory (:mod:`srcgrad.aliases`); an in-place
  change another name would see, or one into the caller's data, is an error here;
- ``shapes`` (``shape_facts.py``): for every name, a :class:`~srcgrad.facts.Shape`: its
  rank where known, and a
  *broadcast key*, the set of values whose shapes broadcast together to give
  its shape. Two names with equal keys provably have equal shapes, which lets
  the transforms drop ``unbroadcast`` where it cannot do anything::

      t4 = 1 + t3       # key(t4) == key(t3) == {x}: t3's adjoint is t4's
      t6 = y * t5       # key(t6) == {x, y} != key(t5): unbroadcast needed

Analysis also refuses (``checks.py``), at the user's line, every active value that
would silently lose its derivative: one reaching a call without a rule, a parameter a rule neither
differentiates nor declares of derivative zero (``Rule.zero``), an index, a cast to a
dtype it cannot see or to a complex one, a complex intermediate, list arithmetic.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from typing import Any

import numpy as np

from .checks import check_facts
from .facts import (
    _COMPARE,
    _NOT,
    TREE,
    Facts,
    Op,
    Shape,
    _gives_sequence,
    _static_attr,
    assigned_name,
    is_append,
    makes_sequence,
    resolve_static,
    walk_block,
)
from .normalize import Normalized
from .rules import RULES, SEQUENCE_RULES, BindError, Context, Rule, bind
from .shape_facts import _shapes, _static_shape, _tree_parts


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
