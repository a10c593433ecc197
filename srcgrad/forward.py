"""Stage 4a, forward mode: a core function in, its Jacobian-vector product out.

In:  a normalized function, its :class:`~srcgrad.analyze.Facts`, the
``wrt`` parameters and a :class:`~srcgrad.builder.Builder`.
Out: ``jvp_f(x, ..., x_dot)`` returning ``(value, value_dot)``: the primal
with, after every assignment to an active name, the statement for its
tangent (dual numbers, written out); control flow stays as it is::

    y = np.sin(x)             y = np.sin(x)
    return y * x       ==>    y_dot = x_dot * np.cos(x)
                              out = y * x
                              out_dot = y_dot * x + x_dot * y
                              return out, out_dot

A tangent statement may read the primal result and the operands alike: an
assignment never computes a name from itself in one step (normalize saw to
that).
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
    body = _block(norm.tree.body[:-1], facts, builder)
    out = facts.returned
    if isinstance(out, ast.Name) and out.id in facts.active:
        out_dot: ast.expr = name(builder.tangent(out.id))
    else:
        out_dot = builder.xp_call("zeros_like", copy.deepcopy(out))
    body.append(ast.Return(value=ast.Tuple(elts=[copy.deepcopy(out), out_dot], ctx=ast.Load())))
    params = [a.arg for a in norm.tree.args.args]
    tangents = [builder.tangent(w) for w in wrt]
    return builder.function(f"jvp_{norm.tree.name}", params + tangents, body)


def _block(stmts: list[ast.stmt], facts: Facts, builder: Builder) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Assign):
            out.append(copy.deepcopy(stmt))
            if stmt.targets[0].id in facts.active:
                out.append(_tangent(stmt, facts, builder))
        elif isinstance(stmt, ast.If):
            new = copy.copy(stmt)
            new.body = _block(stmt.body, facts, builder) or [ast.Pass()]
            new.orelse = _block(stmt.orelse, facts, builder)
            out.append(new)
        elif isinstance(stmt, (ast.For, ast.While)):
            new = copy.copy(stmt)
            new.body = _block(stmt.body, facts, builder)
            out.append(new)
        else:
            out.append(copy.deepcopy(stmt))
    return out


def _tangent(stmt: ast.Assign, facts: Facts, builder: Builder) -> ast.Assign:
    """The tangent statement for an active assignment."""
    op = facts.ops[stmt]
    terms = []
    for param, atom in op.diff_args:
        if isinstance(atom, ast.Name) and atom.id in facts.active:
            g = name(builder.tangent(atom.id))
            ctx = dataclasses.replace(op.ctx, param=param, symbols=builder.symbols(g, op.target))
            terms.append(instantiate(op.rule.jvp[param], ctx))
    if not terms:  # an active name given a value that does not depend on wrt
        return assign(builder.tangent(op.target), builder.xp_call("zeros_like", name(op.target)))
    expr = terms[0]
    for term in terms[1:]:
        expr = add(expr, term)
    if op.rule.elementwise and builder.key(expr) != facts.op_shapes[id(stmt)].key:
        expr = builder.call("broadcast_like", expr, name(op.target))
    return assign(builder.tangent(op.target), expr)
