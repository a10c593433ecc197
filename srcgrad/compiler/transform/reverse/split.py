"""The fused reverse-mode function of a callee, cut in two at its adjoint marker:
``f_fwd`` (the value and the record its adjoint needs) and ``f_bwd`` (the record and the
output adjoint in, the gradients out), which the derivatives of its callers call."""

from __future__ import annotations

import ast

from ...astwalk import copy_tree, loaded, stored
from ..builder import function_def, is_marker


def split(
    fused: ast.FunctionDef, names: tuple[str, ...], out: ast.expr, label: str
) -> list[ast.FunctionDef]:
    """Cut a fused reverse-mode function at its adjoint marker into the augmented
    primal (value and record) and the adjoint (record and output adjoint in)."""
    body = fused.body
    cut = next(k for k, s in enumerate(body) if is_marker(s))
    primal, adjoint = body[:cut], body[cut + 1 :]
    out = body[cut].value.args[0]  # the result, perhaps renamed by the optimizer
    params = [a.arg for a in fused.args.args]
    seed = params[-1]
    params = params[:-1]
    given = {n for s in primal for n in stored(s)}
    read = {n for s in adjoint for n in loaded(s)}
    # what the adjoint reads of the primal's final state, reassigned parameters included
    record = sorted(given & read)
    rec = "rec"
    while rec in params or rec in given or rec in read or rec == seed:
        rec += "_"
    values = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load()) for n in record], ctx=ast.Load())
    unbound = [n for n in record if n not in _top_assigned(primal) and n not in params]
    preset = [  # (names the primal gives values on some paths only)
        ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=ast.Constant(None))
        for n in unbound
    ]
    result = ast.Return(value=ast.Tuple(elts=[copy_tree(out), values], ctx=ast.Load()))
    fwd_body = [*preset, *primal, result]
    unpack = []
    if record:
        targets = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in record], ctx=ast.Store())
        unpack = [ast.Assign(targets=[targets], value=ast.Name(id=rec, ctx=ast.Load()))]
        unpack += [_own_copy(n) for n in record if n in _popped(adjoint)]
    call = f"{label}({', '.join(params)})"
    fwd = _function(
        names[0], params, fwd_body, f"Value of {call} and the record its adjoint needs."
    )
    bwd = _function(
        names[1],
        params + [rec, seed],
        unpack + adjoint,
        f"Adjoint of {call} for the output adjoint {seed}.",
    )
    return [fwd, bwd]


def _popped(adjoint: list[ast.stmt]) -> set[str]:
    """The names whose lists the adjoint changes (``tape.pop()``): a tape in the record."""
    return {
        n.func.value.id
        for s in adjoint
        for n in ast.walk(s)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in ("pop", "append")
        and isinstance(n.func.value, ast.Name)
    }


def _own_copy(n: str) -> ast.stmt:
    """``tape = tape.copy()``: the adjoint pops its own list, never the record it is
    given (so the record may be read again, and the code differentiated again: second
    order through a callee with a loop)."""
    method = ast.Attribute(value=ast.Name(id=n, ctx=ast.Load()), attr="copy", ctx=ast.Load())
    value = ast.Call(func=method, args=[], keywords=[])
    return ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=value)


def _top_assigned(body: list[ast.stmt]) -> set[str]:
    """The names statements of ``body`` itself (not its blocks) assign: a name or a
    tuple of names."""
    top = set()
    for s in body:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                if isinstance(t, ast.Name):
                    top.add(t.id)
            if isinstance(s.targets[0], ast.Tuple):
                top.update(e.id for e in s.targets[0].elts)
    return top


def _function(name: str, params: list[str], body: list[ast.stmt], doc: str) -> ast.FunctionDef:
    return function_def(name, params, [ast.Expr(value=ast.Constant(doc)), *body])
