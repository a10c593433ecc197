"""Each core statement's rule: :func:`classify` finds the primitive a statement applies
(a ufunc, an operator, a method, an index, a user's function) and binds its arguments to
the rule's parameters (:class:`~srcgrad.compiler.analyze.facts.Op`); a cast to an integer
or bool dtype gets a rule of derivative zero."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from typing import Any

import numpy as np

from ...rules import (
    RULES,
    SEQUENCE_RULES,
    BindError,
    Context,
    Rule,
    bind,
    load_scipy_stats_rules,
)
from ..astwalk import nodes
from ..normalize.keywords import keyword_variant
from .facts import (
    _COMPARE,
    _NOT,
    Facts,
    Op,
    _static_attr,
    resolve_static,
    unwrap_callable,
)
from .indices import index_rank


def is_user_function(func: Any) -> bool:
    """A Python function of the user's, which srcgrad differentiates by its source."""
    return inspect.isfunction(func) and not _is_library(func)


def _call_arguments(
    func: Any, args: list[ast.expr], kws: list[ast.keyword]
) -> tuple[list[ast.expr] | None, str | None]:
    """Every parameter's argument for a call to ``func``, defaults filled in."""
    signature = inspect.signature(func, follow_wrapped=False)
    named = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )
    kinds = [p.kind for p in signature.parameters.values()]
    star = None  # f(a, *t) of f(a, *xs): xs is t (normalize packs the tuple t)
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        count = kinds.index(inspect.Parameter.VAR_POSITIONAL)
        if len(args) == count + 1 and isinstance(args[-1], ast.Starred):
            star, args = args[-1].value, args[:-1]
    if any(k not in named for k in kinds if not (star and k is inspect.Parameter.VAR_POSITIONAL)):
        return None, (
            f"srcgrad differentiates calls to {func.__qualname__!r} only if it has named "
            "parameters, or *args given a tuple (no **kwargs)"
        )
    try:
        bound = signature.bind(*args, **{k.arg: k.value for k in kws})
    except TypeError as exc:
        return None, f"the call does not match {func.__qualname__}{signature}: {exc}"
    out = []
    for name, param in signature.parameters.items():
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            out.append(star)
        elif name in bound.arguments:
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
    if isinstance(stmt, ast.Expr):  # xs.append(v): a longer xs, from the old xs and v
        return _append_op(stmt, rhs)
    target, key, args, kws, index, callee = _operation(stmt.targets[0], rhs, env)
    rule = _lookup(key)
    if rule is not None and getattr(callee, "__srcgrad_helper__", None) is not None:
        table = rule.vjp if facts.mode == "vjp" else rule.jvp
        if not rule.nondiff and not table:  # a helper's rule for the other mode only
            rule = None
    if rule is None:
        return _unruled_op(stmt, target, key, args, kws, callee)
    try:
        bound, supplied = bind(rule, args, kws)
    except BindError as exc:
        named = {f"arg{i}": a for i, a in enumerate(args)}
        return Op(stmt, target.id, rule, key, named, None, callee=callee, problem=str(exc))
    ranks = {p: facts.shape(a).rank for p, a in bound.items()}
    if index is not None:
        for node in nodes(index):
            if isinstance(node, ast.Name):
                ranks[f"index:{node.id}"] = index_rank(node, facts)
    ctx = Context(
        rule=rule, node=rhs, args=bound, supplied=supplied, ranks=ranks, index=index, rule_key=key
    )
    problem = dtype_name = None
    if rule.refuse is not None:
        problem = rule.refuse(ctx)
    if "dtype" in bound and not rule.nondiff and rule.primitive is None:  # a cast
        dtype = bound["dtype"]
        if isinstance(dtype, ast.Name) and dtype.id not in env:
            dtype_name = dtype.id  # found after activity (see _dtype_of_active)
        else:
            rule, cast_problem = _cast(rule, dtype, env)
            problem = problem or cast_problem
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


def _append_op(stmt: ast.Expr, rhs: ast.Call) -> Op:
    """``xs.append(v)``: the sequence rule ``append``, of the old ``xs`` and ``v``."""
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


def _operation(target: ast.expr, rhs: ast.expr, env: dict[str, Any]) -> tuple:
    """What a core assignment applies: the name it gives a value, the key of its rule
    (``RULES``), its arguments and keywords, its index (of ``x[index]``, ``y[index] =
    v``; else None) and the function it calls (else None)."""
    index = None
    callee = None
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
            callee, args, kws = unwrap_callable(
                resolve_static(rhs.func, env), list(rhs.args), list(rhs.keywords), rhs
            )
            key = callee
        elif isinstance(rhs.func, ast.Name):  # through a parameter given no function
            key, args, kws = ("passed", rhs.func.id), list(rhs.args), list(rhs.keywords)
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
    return target, key, args, kws, index, callee


def _unruled_op(
    stmt: ast.stmt,
    target: ast.Name,
    key: Any,
    args: list[ast.expr],
    kws: list[ast.keyword],
    callee: Any,
) -> Op:
    """A statement without a rule: its arguments by position (``arg0``...) and keyword
    (``kw_name``); for a call of a user's function, bound to its parameters."""
    named = {  # (f(*t): t, read whole)
        f"arg{i}": a.value if isinstance(a, ast.Starred) else a for i, a in enumerate(args)
    }
    named.update({f"kw_{k.arg}": k.value for k in kws})
    op = Op(stmt, target.id, None, key, named, None, callee=callee)
    # a runtime helper without a rule of its own (generated code differentiated
    # again) is plain numpy code too: srcgrad differentiates its source
    if is_user_function(callee):
        callee, kws = keyword_variant(callee, kws)  # (f(x, a=v) of f(x, **kw))
        op.callee = callee
        op.call_args, op.problem = _call_arguments(callee, args, kws)
        if op.call_args is not None:
            op.args = {
                p: a
                for p, a in zip(
                    inspect.signature(callee, follow_wrapped=False).parameters, op.call_args
                )
            }
    return op


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
            f"{rule.name} with {text} makes complex numbers of real ones, and srcgrad "
            "does not differentiate a cast to a complex dtype yet; write `x + 0j` for a "
            "complex copy of a real `x`"
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
        rule = RULES.get(key)
    except TypeError:  # an unhashable callee
        return None
    if rule is None and load_scipy_stats_rules():  # (a function of scipy.stats, maybe)
        rule = RULES.get(key)
    return rule
