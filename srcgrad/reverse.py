"""Stage 4b, reverse mode: a core function in, its gradient or VJP out.

In:  a normalized function, its :class:`~srcgrad.analyze.Facts`, the
``wrt`` parameters, a :class:`~srcgrad.builder.Builder` and what to return
(``kind``: ``"grad"``, ``"value_and_grad"`` or ``"vjp"``).
Out: a function that runs the primal sweep, then the adjoint sweep: the
active statements in reverse order, each accumulating its operands'
adjoints, under a comment naming the user's line it differentiates::

    t1 = x @ w                t1 = x @ w
    y = np.tanh(t1)   ==>     y = np.tanh(t1)
    return y                  y_bar = 1.0
                              # grad of: y = np.tanh(x @ w)
                              t1_bar = y_bar * (1 - y * y)
                              w_bar = x.T @ t1_bar
                              return w_bar

Adjoints start as ``zeros_like`` and accumulate with ``+``; the optimizer
turns each first accumulation into a plain assignment and drops what is
never read. Every name has one definition, so no value needs recording:
the primal values a rule reads are all still there.
"""

from __future__ import annotations

import ast
import copy
import dataclasses

from .analyze import Facts
from .builder import Builder, add, assign, comment, name
from .normalize import Normalized
from .rules import instantiate

KINDS = ("grad", "value_and_grad", "vjp")


def reverse(
    norm: Normalized, facts: Facts, wrt: list[str], builder: Builder, kind: str
) -> ast.FunctionDef:
    assert kind in KINDS, kind
    active = facts.active
    core = norm.tree.body[:-1]
    body: list[ast.stmt] = [copy.deepcopy(stmt) for stmt in core]
    out = facts.returned
    params = [a.arg for a in norm.tree.args.args]
    out_active = isinstance(out, ast.Name) and out.id in active
    seed_name = (
        builder.adjoint(out.id) if isinstance(out, ast.Name) else builder.namer.fresh("out_bar")
    )
    if kind != "vjp" and facts.shape(out).rank is None:
        body.append(ast.Expr(value=builder.call("check_scalar", copy.deepcopy(out))))
    if kind == "vjp":
        check = builder.call("check_cotangent", name(seed_name), copy.deepcopy(out))
        body.append(ast.Expr(value=check))
    # adjoint sweep: every active name starts at zero
    defined = [w for w in wrt] + [facts.ops[s].target for s in core]
    for v in defined:
        if v in active and not (v == getattr(out, "id", None)):
            body.append(assign(builder.adjoint(v), builder.xp_call("zeros_like", name(v))))
    if kind != "vjp" and out_active:
        body.append(assign(seed_name, ast.Constant(1.0)))
    # shapes for unbroadcast are read off the user's own variables where possible
    named = params + [facts.ops[s].target for s in core if facts.ops[s].target not in norm.temps]
    last_origin = None
    for stmt in reversed(core):
        op = facts.ops[stmt]
        if op.target not in active:
            continue
        origin = norm.origin.get(stmt)
        if origin is not last_origin:
            body.append(comment(f"grad of: {norm.origin_text(stmt)}"))
            last_origin = origin
        g = name(builder.adjoint(op.target))
        for param, atom in op.diff_args:
            if not (isinstance(atom, ast.Name) and atom.id in active):
                continue
            ctx = dataclasses.replace(op.ctx, param=param, symbols=builder.symbols(g, op.target))
            contribution = instantiate(op.rule.vjp[param], ctx)
            if op.rule.elementwise and facts.shape(atom).key != facts.shapes[op.target].key:
                contribution = builder.call("unbroadcast", contribution, name(atom.id))
            contribution = builder.with_witnesses(contribution, named)
            target = builder.adjoint(atom.id)
            body.append(assign(target, add(name(target), contribution)))
    grads: list[ast.expr] = []
    for w in wrt:
        if w in active or (out_active and w == out.id):
            grads.append(name(builder.adjoint(w)))
        else:
            grads.append(builder.xp_call("zeros_like", name(w)))
    result: ast.expr = grads[0] if len(grads) == 1 else ast.Tuple(elts=grads, ctx=ast.Load())
    if kind == "value_and_grad":
        result = ast.Tuple(elts=[copy.deepcopy(out), result], ctx=ast.Load())
    body.append(ast.Return(value=result))
    extra = [seed_name] if kind == "vjp" else []
    prefix = {"grad": "grad", "value_and_grad": "value_and_grad", "vjp": "vjp"}[kind]
    return builder.function(f"{prefix}_{norm.tree.name}", params + extra, body)
