"""The derivative of a recursive function as a call of the derivative its own recursive
calls use: a function that calls itself (directly or through others) gets, for those
calls, a callee derivative (``f_fwd``/``f_bwd`` in reverse mode, ``jvp_f`` in forward
mode, :mod:`.callees`); where the entry point's arguments are of the kinds those calls
pass, the entry point's derivative calls it instead of repeating its body (in forward mode,
the callee's jvp is the entry point)::

    def power(x, n):                      def grad_power(x, n):
        if n == 0:              ==>           _, rec = power_fwd(x, n)
            return 1.0                        return power_bwd(x, n, rec, 1.0)
        return x * power(x, n - 1)

In:  the entry point's normalized function and facts, the kind of derivative, its
``wrt`` and the argument kinds it was made for, the generated entry point, and the
callee derivatives the program made (:class:`~.callees.Callees`).
Out: the names of that callee derivative (:func:`own_derivative`), and the short entry
point that calls them (:func:`through_pair`); ``None`` where no callee derivative has the entry
point's signature (the function is not recursive, or its recursive calls pass
arguments of other kinds) or the entry point differs from a callee (``has_aux``, a
derivative of a jvp's tangent, writes into its arguments, complex arguments).
"""

from __future__ import annotations

import ast
from typing import Any

from ..analyze.facts import Facts
from ..astwalk import nodes
from ..normalize.lower import Normalized
from .builder import Builder, function_def, name
from .callees import Callees, possible


def entry_point(
    norm: Normalized,
    facts: Facts,
    kind: str,
    wrt: list[str],
    func: ast.FunctionDef,
    functions: list[ast.FunctionDef],
    builder: Builder,
    argument_kinds: tuple,
) -> tuple[ast.FunctionDef, list[ast.FunctionDef]] | None:
    """Where the function is recursive and the program made a derivative of it for these
    argument kinds (its recursive calls): a call of that one (in forward mode, that one
    itself) in place of ``func``, with the ``functions`` it reaches; else None."""
    callees = builder.callees
    own = None if callees is None else own_derivative(norm, kind, wrt, argument_kinds, callees)
    if own is None:
        return None
    if kind == "jvp":
        func = next(f for f in functions if f.name == own[0])
        functions = [f for f in functions if f is not func]
    else:
        func = through_pair(func, own, facts, kind, builder)
    return func, _reachable(func, functions)


def _reachable(entry: ast.FunctionDef, functions: list[ast.FunctionDef]) -> list[ast.FunctionDef]:
    """Of ``functions``, those ``entry`` calls, directly or through others (in order)."""
    by_name = {f.name: f for f in functions}
    seen: set[str] = set()
    todo = [entry]
    while todo:
        for node in nodes(todo.pop()):
            if isinstance(node, ast.Name) and node.id in by_name and node.id not in seen:
                seen.add(node.id)
                todo.append(by_name[node.id])
    return [f for f in functions if f.name in seen]


def own_derivative(
    norm: Normalized,
    kind: str,
    wrt: list[str],
    argument_kinds: tuple[dict[str, Any], frozenset[str], dict[str, Any], frozenset[str]],
    callees: Callees,
) -> tuple[str, ...] | None:
    """The names of the callee derivative the program made of the entry point's own
    function for the entry point's argument kinds (``argument_kinds``: ranks, the
    parameters given floats, those given functions, those given complex numbers), if it
    made one and the entry point computes what a callee does."""
    ranks, floats, statics, complexes = argument_kinds
    if norm.aux is not None or norm.splits or norm.copied or norm.checks or complexes:
        return None
    params = [a.arg for a in norm.tree.args.args]
    key = (
        norm.parsed.func,
        "jvp" if kind == "jvp" else "split",
        tuple(wrt),
        tuple(possible(ranks.get(p)) for p in params),
        floats,
        tuple(statics.items()),
    )
    return callees.names.get(key)


def through_pair(
    func: ast.FunctionDef,
    pair: tuple[str, ...],
    facts: Facts,
    kind: str,
    builder: Builder,
) -> ast.FunctionDef:
    """The reverse-mode entry point ``func`` (of ``kind``) as a call of the augmented
    primal and the adjoint named ``pair``: the value and its record, the value's check,
    the adjoint for the seed (1.0, or the vjp's cotangent)."""
    given = [a.arg for a in func.args.args]  # (the parameters, then a vjp's cotangent)
    params = given[:-1] if kind == "vjp" else given
    taken = set(given)
    out = facts.returned
    value = _fresh(out.id if isinstance(out, ast.Name) else "value", taken)
    rec = _fresh("rec", taken)
    read = kind != "grad" or facts.shape(out).rank is None  # (checked or returned)
    kept = value if read else _fresh("_", taken)
    targets = ast.Tuple(
        elts=[ast.Name(id=kept, ctx=ast.Store()), ast.Name(id=rec, ctx=ast.Store())],
        ctx=ast.Store(),
    )
    primal = ast.Call(func=name(pair[0]), args=[name(p) for p in params], keywords=[])
    body: list[ast.stmt] = [ast.Assign(targets=[targets], value=primal)]
    seed: ast.expr = ast.Constant(1.0)
    if kind == "vjp":
        seed = name(given[-1])
        check = builder.call("check_cotangent", seed, name(value))
        body.append(ast.Expr(value=check))
    elif facts.shape(out).rank is None:
        body.append(ast.Expr(value=builder.call("check_scalar", name(value))))
    adjoint = ast.Call(
        func=name(pair[1]), args=[*[name(p) for p in params], name(rec), seed], keywords=[]
    )
    result: ast.expr = adjoint
    if kind == "value_and_grad":
        result = ast.Tuple(elts=[name(value), adjoint], ctx=ast.Load())
    body.append(ast.Return(value=result))
    return function_def(func.name, given, body)


def _fresh(base: str, taken: set[str]) -> str:
    new = base
    while new in taken:
        new += "_"
    taken.add(new)
    return new
