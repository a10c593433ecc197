"""Part of analyze: the refusals. Everything srcgrad cannot follow is an error at the
user's line here, before any code is made: an active value reaching an operation
without a derivative, complex values, in-place changes and dtype writes (through
:mod:`.aliases` and :mod:`.dtypes`), what a mode cannot do."""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Any

import numpy as np

from ...errors import NoDerivativeError, UnsupportedSyntaxError
from ...rules.builders import operation_name
from ..astwalk import nodes
from ..normalize.lower import Normalized
from .complex_values import complex_problem_of
from .dtypes import check_writes
from .facts import Facts, Op, is_append, is_setitem, makes_sequence


def check_facts(norm: Normalized, facts: Facts) -> None:
    """Refuse what the facts show srcgrad cannot differentiate: an in-place change another
    name sees, a write into an array that may not be the function's own, an active value
    reaching an operation without a rule, a complex value, or a place srcgrad does not
    follow (an axis, an index, a parameter its rule leaves out)."""
    env = norm.parsed.env
    assigns = [s for s in facts.ops if isinstance(s, ast.Assign) or is_append(s)]
    in_place = {id(p.stmt): p.message for p in facts.aliases.problems}
    mixed = _mixed_elements(facts, assigns)
    # an index may be an element of a parameter holding anything (a callee's record, when
    # srcgrad differentiates its own f_bwd again: ``i, tape = rec``, then ``x[i]``): an
    # integer there, as numpy indexes with integers alone
    containers = {p.arg for p in facts.params if facts.shape(ast.Name(id=p.arg)).rank is None}
    mixed_index = _mixed_elements(facts, assigns, containers) if containers else mixed
    check_writes(norm, facts)
    for param, write in norm.copied.items():
        if facts.shapes.get(param) is not None and facts.shapes[param].rank == 0:
            raise norm.parsed.locator.error(
                UnsupportedSyntaxError,
                write,
                f"`{norm.parsed.locator.segment(write)}` writes into `{param}`, which is a "
                "number here: only arrays, lists and dicts take item assignment (numpy "
                f"raises too). Pass an array for `{param}`, or build a new array (`y = "
                f"np.array({param})`, then write into `y`).",
            )
    active = facts.active
    for stmt in assigns:
        op = facts.ops[stmt]
        if op.key == "setitem":
            _check_fresh(norm, facts, op)
        if id(stmt) in in_place:
            user = norm.origin.get(stmt, stmt)
            raise norm.parsed.locator.error(UnsupportedSyntaxError, user, in_place[id(stmt)])
        if op.target in active:
            _check_supported(norm, facts, op, env)
        if op.key == "pack" and not op.problem:
            continue
        if op.target in active and op.call_args is None and (op.rule is None or op.problem):
            raise _no_derivative(norm, op)
        if op.target in facts.useful:
            _check_modeled(norm, facts, op, mixed, mixed_index)


def _no_derivative(norm: Normalized, op: Op) -> Exception:
    """The error for an active value that reaches ``op``, which has no derivative: why,
    for the callees that have a reason of their own, else that there is no rule."""
    user = norm.origin.get(op.stmt, op.stmt)
    if op.key == "pack":
        return norm.parsed.locator.error(
            UnsupportedSyntaxError,
            user,
            "srcgrad does not differentiate through tuples or lists of active values yet; "
            "combine arrays with np.stack or np.concatenate, or return a single array.",
        )
    message = op.problem or _callee_message(op) or _no_rule_message(op)
    return norm.parsed.locator.error(NoDerivativeError, user, message)


def _callee_message(op: Op) -> str | None:
    """Why the callee of ``op`` has no derivative, where it has a reason of its own: a
    derivative srcgrad made, a primitive's rule, an argument that is no function, a
    frozen distribution, a dict built in the function, a method bound to an object
    compared by value."""
    callee = op.callee
    if getattr(callee, "__srcgrad_derivative__", False):  # grad(f), jacobian(f)... itself
        return (
            f"this calls {callee!r}, a derivative srcgrad made; srcgrad does not differentiate "
            "a call to one inside a function it differentiates. Apply the transformation to "
            "the derivative itself instead (srcgrad.jvp(d), srcgrad.grad(d), "
            "srcgrad.jacobian(d, mode='forward')), or call the original function here."
        )
    owner = getattr(callee, "__self__", None)
    if type(owner).__name__ == "Primitive" and callee.__name__ in ("vjp", "jvp"):
        name = getattr(owner.func, "__name__", "the primitive")
        return (
            f"this differentiates again {name}'s {callee.__name__} rule, given with "
            f"@{name}.def{callee.__name__}; srcgrad differentiates a srcgrad.primitive once, "
            f"not its rules. For a second derivative (hessian, hvp, grad of grad) write {name} "
            "as a plain function without @srcgrad.primitive where srcgrad can read it: it "
            "differentiates such code as often as asked."
        )
    if isinstance(op.key, tuple) and op.key[0] == "passed":
        return _passed_message(op.key[1])
    frozen = _frozen_hint(callee, op.key)  # scipy.stats: norm(mu, s).logpdf(x)
    if frozen is not None:
        return frozen
    if callee is dict:
        return (
            "a dict built in the function carries a derivative here; srcgrad follows such a "
            'dict where the function reads it by constant keys (`d["w"]`), loops over it, '
            "or returns it, and where nothing changes it: pass its values to the function "
            "that reads it as arguments of their own, or pass the dict in as an argument."
        )
    if inspect.ismethod(callee) and inspect.isfunction(callee.__func__):
        method = callee.__func__.__qualname__
        return (
            f"`{ast.unparse(op.stmt.value.func)}` is the bound method {method} of an object "
            "compared by value (its class defines __eq__), which cannot key the code made "
            f"for it; srcgrad differentiates the function {method} when it is called with "
            f"the object as its first argument: pass the object in and write "
            f"`{method}(obj, ...)` here."
        )
    return None


def _no_rule_message(op: Op) -> str:
    """That ``op``'s primitive has no rule, named as the user wrote it (a core
    statement's text would show srcgrad's temporaries)."""
    callee = op.callee
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
    return (
        f"srcgrad has no derivative rule for {what}; give it one with @srcgrad.primitive "
        "and defvjp/defjvp, or compute this value from operations srcgrad knows."
    )


def _passed_message(param: str) -> str:
    """Why a call through the parameter ``param`` has no derivative: its argument is not
    a function srcgrad can read."""
    return (
        f"`{param}` is the argument `{param}`, called here on a value srcgrad "
        "differentiates: srcgrad calls the derivative of the function passed in, made "
        "for that very function, where the argument is a Python function (`def` or "
        "lambda), a builtin, a numpy ufunc, a functools.partial of one fixing numbers, or "
        "a hashable object whose class defines __call__, or a method bound to an object "
        "compared by identity; this one is another kind of object (a partial fixing an "
        "array, an object compared by value such as a dataclass with eq=True, or a method "
        "of one, a number...). Pass one of those (a dataclass with eq=False), or "
        "pass the object itself and call its method by name here "
        "(`Model.predict(model, x)`), or pass a fixed array as an argument of its own."
    )


def _mixed_elements(
    facts: Facts, assigns: list[ast.stmt], containers: set[str] = frozenset()
) -> set[str]:
    """Varied names that may hold a plain integer after all. Activity follows a list as
    a whole, so every element read out of a list given one varied value is varied, even
    where the list also holds integers (a tape holding loop indices beside arrays,
    ``[W, 2]``). A name is mixed where one of its definitions gives it such a value: a
    constant that is not a float, an element of a list that is not varied or is mixed,
    arithmetic on such values alone, a call to a function of the user's (whose result
    may be an axis); a list is mixed where it is given such a value. An element of one
    of ``containers`` (parameters whose contents are not known) is mixed too."""
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
                x = op.args["x"]
                hit = plain(x) or (op.key == "getitem" and getattr(x, "id", None) in containers)
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


def _check_modeled(
    norm: Normalized, facts: Facts, op: Op, mixed: set[str], mixed_index: set[str]
) -> None:
    """A value that carries a derivative reaches only places where srcgrad follows it: a
    parameter its rule differentiates or knows to have derivative zero, never an axis, a
    shape, a dtype, a subscript, nor a parameter srcgrad's rule leaves out. Anything else
    would silently become a constant. (``mixed``: varied names that may be integers;
    ``mixed_index``: those and the elements of parameters holding anything, for an index,
    which numpy takes only as integers, booleans and slices: no derivative is lost.)"""
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
    in_index = [] if index is None else nodes(index)
    in_index = [n for n in in_index if getattr(n, "id", None) not in mixed_index]
    if problem is None and any(carries(n) for n in in_index):
        problem = (
            "the index here depends on the arguments being differentiated; srcgrad "
            "differentiates indexing only with indices that do not (to build an array from "
            "pieces, use np.concatenate, np.stack or np.r_[...])"
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
    whose memory it may write into is the alias analysis's question (:mod:`.aliases`:
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


def _check_supported(norm: Normalized, facts: Facts, op: Op, env: dict[str, Any]) -> None:
    """Refuse an active operation srcgrad has no model of: on complex numbers where its
    rule was not read for them, einsum's operand/sublist form, arithmetic on lists, a
    cast to a dtype it cannot see."""
    problem = error = None
    complex_problem = complex_problem_of(norm, facts, op)
    if complex_problem is not None:
        error, problem = UnsupportedSyntaxError, complex_problem
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
        isinstance(n, ast.Name) and n.id in facts.varied  # (result_type's are one tuple)
        for a in source.args.values()
        for n in nodes(a)
    )


def check_real_output(norm: Normalized, facts: Facts, out: ast.expr, kind: str) -> None:
    """A gradient or a vjp (``kind``) needs a real value returned (``out``)."""
    if isinstance(out, ast.Name) and out.id in facts.complex:
        what = "vjp" if kind == "vjp" else "grad"
        ret = norm.tree.body[-1]
        raise norm.parsed.locator.error(
            UnsupportedSyntaxError,
            norm.origin.get(ret, ret),
            f"the value returned is complex ({facts.complex[out.id]}); srcgrad's {what} "
            "differentiates functions with real values (as JAX's does): return "
            "np.real(...), np.imag(...) or np.abs(...) of it, or use srcgrad.jvp.",
        )


def _frozen_hint(callee: Any, key: Any) -> str | None:
    """``scipy_stats.frozen_hint``, where the user's code has imported scipy.stats (its
    rules are registered only then)."""
    if "scipy.stats" not in sys.modules:
        return None
    from ...rules.scipy_stats import frozen_hint

    return frozen_hint(callee, key)
