"""Stage 4a, forward mode: a core function in, its Jacobian-vector product out.

In:  a normalized function, its :class:`~srcgrad.compiler.analyze.facts.Facts`, the
``wrt`` parameters and a :class:`~srcgrad.compiler.transform.builder.Builder`.
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
import contextlib
import copy
import dataclasses
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...rules import instantiate
from ..analyze.activity import varied_from
from ..analyze.checks import check_mode
from ..analyze.facts import TREE, Facts, is_append, is_function_value, makes_sequence
from ..analyze.in_place import in_place_checks
from ..astwalk import copy_tree, nodes
from ..normalize.lower import Normalized
from .builder import Builder, add, assign, comment, name
from .shared_factors import share_factors


@dataclass(frozen=True)
class Lane:
    """One direction of a vector JVP: the parameters it seeds (given a tangent argument;
    the others have none in it) and the suffix of its tangents' names (``x_dot_k``)."""

    suffix: str
    seeds: tuple[str, ...]


def lanes_of(wrt: list[str], counts: tuple[int, ...]) -> tuple[Lane, ...]:
    """The directions of a vector JVP: ``counts[i]`` for ``wrt[i]``, named after it
    (``k``), with their index where there are several (``w0``, ``w1``)."""
    assert len(counts) == len(wrt), (wrt, counts)
    return tuple(
        Lane(w if count == 1 else f"{w}{i}", (w,))
        for w, count in zip(wrt, counts)
        for i in range(count)
    )


def forward(
    norm: Normalized,
    facts: Facts,
    wrt: list[str],
    builder: Builder,
    lanes: tuple[Lane, ...] | None = None,
) -> ast.FunctionDef:
    """The JVP of ``norm``; with ``lanes``, a vector JVP: the primal once and, after each
    active statement, one tangent statement per direction in which it is active (its
    activity from that direction's seeds alone), returning ``(value, out_dot_a,
    out_dot_b, ...)``::

        y = x * w                 y = x * w
        return y          ==>     y_dot_x = x_dot_x * w
                                  y_dot_w = w_dot_w * x
                                  return (y, y_dot_x, y_dot_w)
    """
    check_mode(norm, facts, "jvp")
    builder.checks = in_place_checks(norm, facts)
    params = [a.arg for a in norm.tree.args.args]
    ways = [_Way(None, tuple(wrt), facts)] if lanes is None else _ways(lanes, facts)
    # a parameter outside wrt that is given an active value on some path starts
    # with a zero tangent (dead code elimination drops it where no path needs it)
    body: list[ast.stmt] = []
    for way in ways:
        with way.naming(builder):
            body += [
                assign(builder.tangent(p), _zero(name(p), way.facts, builder))
                for p in params
                if p in way.facts.active and p not in way.seeds
            ]
    body += _block(norm.tree.body[:-1], facts, ways, builder, _Origins(norm))
    out = facts.returned
    value: ast.expr = copy_tree(out)
    if norm.aux is not None:  # has_aux: ((value, aux), tangent)
        value = ast.Tuple(elts=[value, name(norm.aux)], ctx=ast.Load())
    returned = [value]
    tangents = []
    for way in ways:
        with way.naming(builder):
            returned.append(_out_tangent(out, way.facts, builder))
            tangents += [builder.tangent(w) for w in way.seeds]
    if lanes is None:  # (value, tangent)
        returned = [value, returned[1]]
    body.append(ast.Return(value=ast.Tuple(elts=returned, ctx=ast.Load())))
    return builder.function(f"jvp_{norm.tree.name}", params + tangents, body)


@dataclass
class _Way:
    """A direction as the transform walks it: its lane's suffix (None for a plain JVP's
    one direction), its seeds, and the facts with its own activity."""

    suffix: str | None
    seeds: tuple[str, ...]
    facts: Facts

    @contextlib.contextmanager
    def naming(self, builder: Builder) -> Iterator[None]:
        """Tangents named for this direction while it lasts."""
        before, builder.lane = builder.lane, self.suffix
        try:
            yield
        finally:
            builder.lane = before


def _ways(lanes: tuple[Lane, ...], facts: Facts) -> list[_Way]:
    """Each lane with the facts of its own activity: what depends on its seeds (a copy
    of ``facts`` sharing everything else; lanes of one parameter share theirs)."""
    assigns = [s for s in facts.ops if isinstance(s, ast.Assign) or is_append(s)]
    by_seeds: dict[tuple[str, ...], Facts] = {}
    ways = []
    for lane in lanes:
        if lane.seeds not in by_seeds:
            own = copy.copy(facts)
            own.varied = varied_from(facts, assigns, list(lane.seeds))
            own.__dict__.pop("_active", None)
            by_seeds[lane.seeds] = own
        ways.append(_Way(lane.suffix, lane.seeds, by_seeds[lane.seeds]))
    return ways


def _out_tangent(out: ast.expr, facts: Facts, builder: Builder) -> ast.expr:
    """The tangent of the returned atom ``out``: its tangent, or zeros like it."""
    if isinstance(out, ast.Name) and out.id in facts.active:
        return name(builder.tangent(out.id))
    if isinstance(out, ast.Name) and _may_be_sequence(out.id, facts):  # an inactive tuple
        return builder.call("zeros_seq", copy_tree(out))
    if isinstance(out, ast.Name) and facts.shape(out).rank is None:
        return builder.call("zero_adjoint", copy_tree(out))  # (whatever it holds)
    if isinstance(out, ast.Name) or (
        isinstance(out, ast.Constant) and not isinstance(out.value, tuple)
    ):
        return builder.xp_call("zeros_like", copy_tree(out))
    return builder.call("zero_adjoint", copy_tree(out))  # a folded tuple: zeros of it


def _rank_of(a: ast.expr, facts: Facts) -> Any:
    """What a callee's analysis is told of an argument: its rank, or a pytree's structure."""
    if isinstance(a, ast.Name) and isinstance(facts.trees.get(a.id), tuple):
        return facts.trees[a.id]
    if isinstance(a, ast.Name) and a.id in facts.sequences:
        return TREE
    return facts.shape(a).rank


def _may_be_sequence(v: str, facts: Facts) -> bool:
    """Whether some definition of ``v`` gives it a tuple or list."""
    return v in facts.sequences or any(
        makes_sequence(facts.ops.get(stmt)) for stmt, _ in facts.definitions.get(v, [])
    )


class _Origins:
    """``# grad of: <the user's line>`` before the first statement of each user line
    that has a tangent (in each block: a branch or a loop's body names its own)."""

    def __init__(self, norm: Normalized) -> None:
        self.norm = norm
        self.last: tuple[int | None, str] | None = None

    def fresh(self) -> _Origins:
        """These, for a new block: its first line gets its comment."""
        self.last = None
        return self

    def note(self, stmt: ast.stmt, out: list[ast.stmt]) -> None:
        origin = self.norm.origin.get(stmt)
        if origin is None:
            return
        text = self.norm.origin_text(stmt)
        line = (getattr(origin, "lineno", None), text)  # (a line lowered in parts: once)
        if line != self.last:
            out.append(comment(f"grad of: {text}"))
            self.last = line


def _block(
    stmts: list[ast.stmt], facts: Facts, ways: list[_Way], builder: Builder, origins: _Origins
) -> list[ast.stmt]:
    """Each statement's primal once, then its tangent in each direction it is active in."""
    out: list[ast.stmt] = []
    for stmt in stmts:
        op = facts.ops.get(stmt)
        if op is not None and op.target in facts.active:
            origins.note(stmt, out)
        if isinstance(stmt, ast.Expr) and stmt in facts.ops:  # xs.append(v)
            out.append(copy_tree(stmt))
            op = facts.ops[stmt]
            for way in ways:
                if op.target in way.facts.active:
                    with way.naming(builder):
                        item = _tangent_or_zero(op.args["v"], way.facts, builder)
                        grow = ast.Attribute(
                            value=name(builder.tangent(op.target)), attr="append", ctx=ast.Load()
                        )
                    out.append(ast.Expr(value=ast.Call(func=grow, args=[item], keywords=[])))
            continue
        if isinstance(stmt, ast.Assign):
            op = facts.ops[stmt]
            if op.call_args is not None and op.key not in ("pack", "setitem"):
                if op.target in facts.active:
                    out.append(_call(stmt, facts, ways, builder))
                    continue
            if op.key not in ("pack", "setitem"):
                out.extend(builder.in_place_check(stmt))
            out.append(copy_tree(stmt))
            groups = []
            for way in ways:
                if op.target in way.facts.active:
                    with way.naming(builder):
                        groups.append(_tangents(stmt, way.facts, builder))
                else:
                    with way.naming(builder):
                        out.extend(_tangent_pop(stmt, way.facts, builder))
            out.extend(share_factors(groups, builder))
        elif isinstance(stmt, ast.If):
            new = copy.copy(stmt)
            new.body = _block(stmt.body, facts, ways, builder, origins.fresh()) or [ast.Pass()]
            new.orelse = _block(stmt.orelse, facts, ways, builder, origins.fresh())
            origins.fresh()
            out.append(new)
        elif isinstance(stmt, (ast.For, ast.While)):
            new = copy.copy(stmt)
            new.body = _block(stmt.body, facts, ways, builder, origins.fresh())
            origins.fresh()
            out.append(new)
        else:
            out.append(copy_tree(stmt))
    return out


def _tangent_pop(stmt: ast.Assign, facts: Facts, builder: Builder) -> list[ast.stmt]:
    """``xs_dot.pop()`` for ``v = xs.pop()`` whose ``v`` needs no tangent while ``xs`` has
    one: the two lists stay in step (a reverse sweep's tape differentiated again pops a
    value it reads only for its shape, then one it differentiates)."""
    op = facts.ops[stmt]
    xs = op.args.get("x")
    if op.key != ("method", "pop") or not (isinstance(xs, ast.Name) and xs.id in facts.active):
        return []
    call = stmt.value
    assert isinstance(call, ast.Call)
    pop = ast.Attribute(value=name(builder.tangent(xs.id)), attr="pop", ctx=ast.Load())
    args = [copy_tree(a) for a in call.args]
    return [ast.Expr(value=ast.Call(func=pop, args=args, keywords=[]))]


def _tangents(stmt: ast.Assign, facts: Facts, builder: Builder) -> list[ast.stmt]:
    """The tangent statements of an active assignment (its primal already emitted)."""
    op = facts.ops[stmt]
    if op.key == "pack":
        items = [_tangent_or_zero(a, facts, builder) for a in stmt.value.elts]
        cls = ast.Tuple if isinstance(stmt.value, ast.Tuple) else ast.List
        return [assign(builder.tangent(op.target), cls(elts=items, ctx=ast.Load()))]
    if op.key == "setitem":
        return _setitem(stmt, facts, builder)
    return [_tangent(stmt, facts, builder)]


def call_signature(
    op, facts: Facts
) -> tuple[tuple[str, ...], tuple, frozenset[str], list[ast.Name], tuple]:
    """For a call to a user function: the parameters it is differentiated with
    respect to (those given active arguments), the ranks of all its arguments, the
    parameters given floats (names proven to hold floats, float constants: the callee's
    dtype analysis starts from them), the active arguments, and (parameter, function)
    for each argument that is a function (a name the code resolves statically,
    ``rk4(decay, ...)``, or a function the caller itself was given: the callee's
    derivative is made for it)."""
    params = list(inspect.signature(op.callee, follow_wrapped=False).parameters)
    pairs = list(zip(params, op.call_args))
    active = [(p, a) for p, a in pairs if isinstance(a, ast.Name) and a.id in facts.active]
    ranks = tuple(_rank_of(a, facts) for a in op.call_args)
    floats = frozenset(
        p
        for p, a in pairs
        if (isinstance(a, ast.Name) and a.id in facts.proven_floats)
        or (isinstance(a, ast.Constant) and type(a.value) is float)
    )
    own = {a.arg for a in facts.params} | set(facts.definitions)
    statics = []
    for p, a in pairs:
        if not isinstance(a, ast.Name):
            continue
        if a.id in facts.statics:
            statics.append((p, facts.statics[a.id]))
        elif a.id not in own and is_function_value(facts.env.get(a.id)):
            statics.append((p, facts.env[a.id]))
    return tuple(p for p, _ in active), ranks, floats, [a for _, a in active], tuple(statics)


def _call(stmt: ast.Assign, facts: Facts, ways: list[_Way], builder: Builder) -> ast.Assign:
    """``r = f(a, b)`` becomes ``r, r_dot = jvp_f(a, b, a_dot)``: the callee's own jvp;
    in a vector JVP, ``r, r_dot_k, r_dot_c = jvp_f(a, b, a_dot_k, a_dot_c, b_dot_c)``:
    the callee's vector JVP in the directions ``r`` is active in."""
    op = facts.ops[stmt]
    wrt, ranks, floats, active, statics = call_signature(op, facts)
    args = [copy_tree(a) for a in op.call_args]
    targets: list[ast.expr] = [ast.Name(id=op.target, ctx=ast.Store())]
    lanes = []
    for way in ways:
        if op.target not in way.facts.active:
            continue
        if way.suffix is not None:
            wrt, _, _, active, _ = call_signature(op, way.facts)
            lanes.append(Lane(way.suffix, wrt))
        with way.naming(builder):
            args += [name(builder.tangent(a.id)) for a in active]
            targets.append(ast.Name(id=builder.tangent(op.target), ctx=ast.Store()))
    kind_wrt = wrt if ways[0].suffix is None else tuple(lanes)
    (jvp_name,) = builder.callees.request(op.callee, "jvp", kind_wrt, ranks, floats, statics)
    call = ast.Call(func=name(jvp_name), args=args, keywords=[])
    return ast.Assign(targets=[ast.Tuple(elts=targets, ctx=ast.Store())], value=call)


def _tangent_or_zero(atom: ast.expr, facts: Facts, builder: Builder) -> ast.expr:
    if isinstance(atom, ast.Name) and atom.id in facts.active:
        return name(builder.tangent(atom.id))
    if isinstance(atom, ast.Constant):
        return ast.Constant(0.0)
    return _zero(atom, facts, builder)


def _zero(atom: ast.expr, facts: Facts, builder: Builder) -> ast.expr:
    """A zero tangent for ``atom``: zeros of the same structure for a list or tuple (and
    a value whose kind analysis cannot tell: a callee's or a helper's result), else
    ``np.zeros_like`` or ``0.0``."""
    if isinstance(atom, ast.Name) and atom.id in facts.sequences:
        return builder.call("zeros_seq", copy_tree(atom))
    if isinstance(atom, ast.Name) and facts.shape(atom).rank is None:
        return builder.call("zero_adjoint", copy_tree(atom))
    return builder.zero_like(atom)


def _setitem(stmt: ast.Assign, facts: Facts, builder: Builder) -> list[ast.stmt]:
    """After ``y[i] = v``, for an active ``y``: ``y_dot = y_dot.copy(); y_dot[i] = v_dot``
    (a copy: the tangent may share memory with another)."""
    op = facts.ops[stmt]
    y = op.target
    y_dot = builder.tangent(y)
    fresh = ast.Call(
        func=ast.Attribute(value=name(y_dot), attr="copy", ctx=ast.Load()), args=[], keywords=[]
    )
    out: list[ast.stmt] = [assign(y_dot, fresh)]
    v = op.args["v"]
    value = (
        name(builder.tangent(v.id))
        if isinstance(v, ast.Name) and v.id in facts.active
        else ast.Constant(0.0)
    )
    target = ast.Subscript(value=name(y_dot), slice=copy_tree(op.ctx.index), ctx=ast.Store())
    out.append(ast.Assign(targets=[target], value=value))
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
        value = stmt.value
        if isinstance(value, ast.Constant) and (
            value.value is None or type(value.value) in (int, float)
        ):
            zero: ast.expr = ast.Constant(None if value.value is None else 0.0)
        else:  # (zeros_seq(layers) for a list in generated code)
            zero = _zero(name(op.target), facts, builder)
        return assign(builder.tangent(op.target), zero)
    expr = terms[0]
    # tuple tangents (np.average(..., returned=True) in x and in the weights) add element
    # by element, not by ``+``, which would join them
    combine = op.rule.combine or ("add_seq" if makes_sequence(op) else None)
    for term in terms[1:]:
        expr = builder.call(combine, expr, term) if combine else add(expr, term)
    if op.rule.elementwise and builder.key(expr) != facts.op_shapes[id(stmt)].key:
        read = {builder.primal_of.get(n.id, n.id) for n in nodes(expr) if isinstance(n, ast.Name)}
        if not any(  # a term over an operand with the result's shape has that shape
            isinstance(a, ast.Name) and a.id in read and facts.fills(a, stmt)
            for a in op.args.values()
        ):
            expr = builder.call("broadcast_like", expr, name(op.target))
    return assign(builder.tangent(op.target), expr)
