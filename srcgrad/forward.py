"""Stage 4a, forward mode: a core function in, its Jacobian-vector product out.

In:  a normalized function, its :class:`~srcgrad.analyze.Facts`, the
``wrt`` parameters and a :class:`~srcgrad.builder.Builder`.
Out: ``jvp_f(x, ..., x_dot)`` returning ``(value, value_dot)``: the primal
with, after every active statement, the statement for its tangent (dual
numbers, written out)::

    y = np.sin(x)             y = np.sin(x)
    return y * x       ==>    y_dot = x_dot * np.cos(x)
                              t1 = y * x
                              t1_dot = y_dot * x + x_dot * y
                              return t1, t1_dot

Every name has one definition (normalize saw to that), so a tangent
statement may read the primal result and the operands alike.
"""

from __future__ import annotations

import ast
import copy
import dataclasses

from .analyze import Facts
from .builder import Builder, add, assign, name
from .normalize import Normalized
from .rules import instantiate


def forward(norm: Normalized, facts: Facts, wrt: list[str], builder: Builder) -> ast.FunctionDef:
    active = facts.active
    body: list[ast.stmt] = []
    for stmt in norm.tree.body[:-1]:
        body.append(copy.deepcopy(stmt))
        op = facts.ops[stmt]
        if op.target not in active:
            continue
        terms = []
        for param, atom in op.diff_args:
            if isinstance(atom, ast.Name) and atom.id in active:
                g = name(builder.tangent(atom.id))
                ctx = dataclasses.replace(
                    op.ctx, param=param, symbols=builder.symbols(g, op.target)
                )
                terms.append(instantiate(op.rule.jvp[param], ctx))
        expr = terms[0]
        for term in terms[1:]:
            expr = add(expr, term)
        if op.rule.elementwise and builder.key(expr) != facts.shapes[op.target].key:
            expr = builder.call("broadcast_like", expr, name(op.target))
        body.append(assign(builder.tangent(op.target), expr))
    out = facts.returned
    if isinstance(out, ast.Name) and out.id in active:
        out_dot: ast.expr = name(builder.tangent(out.id))
    else:
        out_dot = builder.xp_call("zeros_like", copy.deepcopy(out))
    body.append(ast.Return(value=ast.Tuple(elts=[copy.deepcopy(out), out_dot], ctx=ast.Load())))
    params = [a.arg for a in norm.tree.args.args]
    tangents = [builder.tangent(w) for w in wrt]
    return builder.function(f"jvp_{norm.tree.name}", params + tangents, body)
