"""The reverse-mode emitter: the primal sweep (with the saves the plan asks for), the
adjoint sweep (statements in reverse, loops run backwards), and the function around
them."""

from __future__ import annotations

import ast
import copy
import dataclasses

from ....rules import instantiate
from ....rules.fft import COMPLEX_ADJOINT
from ...analyze.checks import check_mode
from ...analyze.facts import Facts, is_setitem
from ...analyze.in_place import in_place_checks
from ...astwalk import copy_tree
from ...normalize.lower import Normalized
from ..builder import Builder, add, assign, comment, name
from ..numba_ranges import backwards
from .calls import CallAdjoints
from .function import DerivativeFunction
from .hoisting import hoistable
from .increments import find_increments
from .owned import owned_loops, owned_reads
from .shapes import AdjointShapes, _shape_of_name
from .tape_plan import TapePlanner
from .tapes import TapeSaves, _call
from .trial import TrialSweep, flatten
from .uniform import UniformAdjoints
from .writes import WriteAdjoints, own_copy

KINDS = ("grad", "value_and_grad", "vjp", "split")


def reverse(
    norm: Normalized, facts: Facts, wrt: list[str], builder: Builder, kind: str
) -> ast.FunctionDef:
    assert kind in KINDS, kind
    check_mode(norm, facts, "vjp")
    builder.checks = in_place_checks(norm, facts)
    return _Reverse(norm, facts, wrt, builder).function(kind)


class _Reverse(
    CallAdjoints,
    AdjointShapes,
    UniformAdjoints,
    WriteAdjoints,
    TrialSweep,
    TapeSaves,
    DerivativeFunction,
):
    """Reverse mode of one core function, emitted from its :class:`TapePlan`."""

    def __init__(self, norm: Normalized, facts: Facts, wrt: list[str], builder: Builder) -> None:
        self.norm = norm
        self.facts = facts
        self.wrt = wrt
        self.builder = builder
        self.active = facts.active
        self.params = [a.arg for a in norm.tree.args.args]
        self.core = norm.tree.body[:-1]
        self.tape = ""
        #: the loops around each statement of the function, outermost first (by id)
        self.loops_around: dict[int, list[ast.stmt]] = {}
        _note_loops(self.core, [], self.loops_around)
        #: the numba profile's tapes indexed by a loop's index, to allocate before it
        self.allocations: dict[int, list[ast.stmt]] = {}
        self.indexed_tapes: set[str] = set()
        #: the numba profile's tapes, one per name pushed or statement saved (``_tape``)
        self.tapes: dict[str | int, str] = {}
        self.counters: dict[int, str] = {}  # id(loop) -> its trip counter
        self.records: dict[int, str] = {}  # id(call statement) -> its callee's record
        self.counter_presets: set[str] = set()
        self.last_origin: ast.stmt | None = None
        # names whose shapes unbroadcast and full_like may read instead of temporaries
        self.named = self.params + [
            n for n in facts.definitions if n not in norm.temps and n not in facts.loop_indices
        ]
        self._witness_facts: list[tuple[str, int, bool]] | None = None  # (see _witnesses)
        self._in_loop_witnesses: list[str] = []
        self.shape_reads: list[tuple[ast.Assign, str]] = []  # (statement, name) unbroadcast reads
        self.shapes: dict[tuple[int, str], ast.expr] = {}  # recomputed shapes for those
        self.saves: dict[int, str] = {}  # id(statement) -> where it saves, outside loops
        self.levels: set[str] = set()  # names given scalars by _frozen
        self.uniform: dict[str, ast.expr] = {}  # see _uniform_contributions
        #: while the planner's trial sweep is made: each statement's adjoint, by its id
        self._emitted: list[tuple[int, list[ast.AST]]] | None = None
        # item increments (y[i] += v) whose adjoint passes y_bar through, and the read
        # and sum they take in (whose own adjoints are then none)
        self.increments = {
            k: inc
            for k, inc in find_increments(norm, facts).items()
            if facts.ops[inc.total].target in self.active
        }
        self.absorbed = {id(s) for inc in self.increments.values() for s in (inc.read, inc.total)}
        # writes whose reversed loop owns y_bar (copied once before it: see owned.py),
        # and, while a sweep is made, the adjoints each loop copies before it
        self.owned = owned_loops(self.core, facts, self.active, self.increments)
        self.owned_reads = owned_reads(
            self.core, facts, self.owned, self.active, self.builder.in_place
        )
        self.copy_before: dict[int, set[str]] = {}
        planner = TapePlanner(norm, facts, wrt)
        self.plan = planner.plan
        self.uniform_ok = self._uniform_candidates()
        planner.settle(self._adjoint_reads)
        self.last_origin = None

    # -- the two sweeps --------------------------------------------------------------------
    def _primal(self, block: list[ast.stmt], depth: int) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in block:
            if isinstance(stmt, ast.Assign):
                if id(stmt) in self.plan.pushed and is_setitem(stmt):  # what the write destroys
                    target = stmt.targets[0]
                    old = ast.Subscript(
                        value=copy_tree(target.value),
                        slice=copy_tree(target.slice),
                        ctx=ast.Load(),
                    )
                    out.append(self._save(stmt, self.builder.xp_call("copy", old), depth))
                elif id(stmt) in self.plan.pushed and id(stmt) not in self.plan.stepped:
                    out.append(self._save(stmt, name(stmt.targets[0].id), depth))
                op = self.facts.ops[stmt]
                if op.call_args is not None and op.target in self.active:
                    out.extend(self._call_primal(stmt, depth))
                else:
                    out.extend(self.builder.in_place_check(stmt))
                    out.append(copy_tree(stmt))
            elif isinstance(stmt, ast.If):
                new = copy.copy(stmt)
                new.body = self._primal(stmt.body, depth) or [ast.Pass()]
                new.orelse = self._primal(stmt.orelse, depth)
                if id(stmt) in self.plan.elided:  # (the trips that pass it are counted)
                    new.body = [self._count(self.plan.elided[id(stmt)]), *new.body]
                out.append(new)
            elif isinstance(stmt, (ast.For, ast.While)):
                counter = self._counter(stmt)
                hoisted = hoistable(stmt.body, self.plan, self.facts)
                out.extend(copy_tree(s) for s in hoisted)
                body = self._primal([s for s in stmt.body if s not in hoisted], depth + 1)
                if counter:
                    if depth > 0:
                        self.counter_presets.add(counter)  # bound before its first push
                        out.append(self._push(counter))
                    out.append(assign(counter, ast.Constant(0)))
                    if all(loop is not stmt for loop in self.plan.elided.values()):
                        body = [self._count(stmt), *body]
                new = copy.copy(stmt)
                new.body = body
                out.extend(self.allocations.pop(id(stmt), []))  # (numba's indexed tapes)
                out.append(new)
            else:
                out.append(copy_tree(stmt))
        return out

    def _count(self, loop: ast.stmt) -> ast.stmt:
        """``trips = trips + 1``: one more trip of ``loop``."""
        counter = self._counter(loop)
        return assign(counter, ast.BinOp(left=name(counter), op=ast.Add(), right=ast.Constant(1)))

    def _zero(self, v: str, maybe_unbound: bool = False) -> ast.stmt:
        if maybe_unbound:
            return assign(self.builder.adjoint(v), self.builder.call("zero_adjoint", name(v)))
        if v in self.plan.borrowed:  # its part of the outer container's adjoint
            root, index = self.plan.borrowed[v]
            part = ast.Subscript(
                value=name(self.builder.adjoint(root)), slice=copy_tree(index), ctx=ast.Load()
            )
            return assign(self.builder.adjoint(v), part)
        value = copy_tree(self.plan.recompute[v]) if v in self.plan.recompute else name(v)
        if v in self.facts.sequences:
            return assign(self.builder.adjoint(v), self.builder.call("zeros_seq", value))
        if self.facts.shape(name(v)).rank is None:  # perhaps a tuple (`p = t[0]`): look
            return assign(self.builder.adjoint(v), self.builder.call("zero_adjoint", value))
        if self.facts.shape(name(v)).rank:
            # (zero_like of a recomputed X[i] would be 0.0, which numba does not add arrays
            # to, and which a loop owning v_bar cannot write items of: owned.owned_reads)
            return assign(self.builder.adjoint(v), self.builder.xp_call("zeros_like", value))
        return assign(self.builder.adjoint(v), self.builder.zero_like(value))

    def _accumulate(self, v: str, contribution: ast.expr) -> ast.stmt:
        """``v_bar = v_bar + contribution`` (element by element for a list)."""
        target = self.builder.adjoint(v)
        if v in self.facts.sequences:
            c = contribution
            if (  # one element's adjoint: added to that element alone
                isinstance(c, ast.Call)
                and isinstance(c.func, ast.Name)
                and c.func.id == self.builder.helpers["index_adjoint"]
            ):
                g = c.args[0]
                element = self.builder.primal_of.get(g.id) if isinstance(g, ast.Name) else None
                helper = "set_at" if self.plan.borrowed.get(element, ("",))[0] == v else "add_at"
                return assign(target, self.builder.call(helper, name(target), c.args[2], g))
            return assign(target, self.builder.call("add_seq", name(target), contribution))
        if self.facts.shape(name(v)).rank is None:  # perhaps a tuple: added element-wise
            return assign(target, self.builder.call("add_seq", name(target), contribution))
        return assign(target, add(name(target), contribution))

    def _adjoint(
        self, block: list[ast.stmt], container: list[ast.stmt], depth: int
    ) -> tuple[list[ast.stmt], None]:
        out: list[ast.stmt] = []
        for v in sorted(self.active):  # adjoints whose live range is this block
            if self.plan.home.get(v) == id(block) and block is not self.norm.tree.body:
                out.append(self._zero(v))
        emitted = self._emitted
        for stmt in reversed(block):
            if isinstance(stmt, ast.Assign) or stmt in self.facts.ops:
                part = self._assign_adjoint(stmt)
                out.extend(part)
                if emitted is not None:
                    emitted.append((id(stmt), flatten(part)))
            elif isinstance(stmt, ast.If) and id(stmt) in self.plan.elided:
                body, _ = self._adjoint(stmt.body, block, depth)  # (every trip counted)
                out.extend(body)
            elif isinstance(stmt, ast.If):
                # (a test in a loop the plan computes again, x[i] * w > 0.0, is not
                # recorded every trip; outside loops it is kept in its variable)
                test = copy_tree(stmt.test, self.plan.recompute if depth > 0 else None)
                if emitted is not None:
                    emitted.append((id(stmt), [test]))
                body, _ = self._adjoint(stmt.body, block, depth)
                orelse, _ = self._adjoint(stmt.orelse, block, depth)
                if body or orelse:
                    out.append(ast.If(test=test, body=body or [ast.Pass()], orelse=orelse))
            elif isinstance(stmt, (ast.For, ast.While)):
                if emitted is not None and isinstance(stmt, ast.For):
                    emitted.append((id(stmt), [stmt.iter]))
                out.extend(self._loop_adjoint(stmt, depth))
        return out, None

    def _loop_adjoint(self, loop: ast.For | ast.While, depth: int) -> list[ast.stmt]:
        body, _ = self._adjoint(loop.body, loop.body, depth + 1)
        counter = self._counter(loop)
        if isinstance(loop, ast.For):
            trips = copy_tree(loop.iter)
            if counter:
                trips = ast.Subscript(
                    value=trips,
                    slice=ast.Slice(lower=None, upper=name(counter), step=None),
                    ctx=ast.Load(),
                )
            if self.builder.profile == "numba":  # (numba has no reversed(range))
                iterate = self._backwards_range(loop.iter, counter)
            else:
                iterate = ast.Call(func=name("reversed"), args=[trips], keywords=[])
            target = copy_tree(loop.target)
        else:
            iterate = ast.Call(func=name("range"), args=[name(counter)], keywords=[])
            target = ast.Name(id=self.builder.namer.fresh("_"), ctx=ast.Store())
        out: list[ast.stmt] = []
        owned = sorted(self.copy_before.pop(id(loop), ()))  # (zeroed in place inside)
        if body:
            out.extend(own_copy(v) for v in owned)
            out.append(ast.For(target=target, iter=iterate, body=body, orelse=[]))
        if counter and depth > 0:
            out.append(self._pop(counter))
        return out

    def _backwards_range(self, trips: ast.expr, counter: str | None) -> ast.expr:
        """The numba profile's ``reversed(trips)`` (``trips[:counter]`` with a counter): a
        range running backwards, written with the index arithmetic, ``range(len(t) - 1,
        -1, -1)`` for ``t = range(n)``; ``range(t.start + (len(t) - 1) * t.step, t.start -
        t.step, -t.step)`` for another range."""
        count = name(counter) if counter else _call("len", copy_tree(trips))
        if self._plain_range(trips):  # (from 0 by 1)
            last = ast.BinOp(left=count, op=ast.Sub(), right=ast.Constant(1))
            return _call("range", last, ast.Constant(-1), ast.Constant(-1))
        if isinstance(trips, ast.Name):
            return backwards(trips.id, count)
        return _call("reversed", copy_tree(trips))  # (numba refuses it, at the user's line)

    def _plain_range(self, trips: ast.expr, any_range: bool = False) -> bool:
        """Whether the loop's ``trips`` is a name bound once, to ``range(stop)`` (to any
        ``range(...)`` with ``any_range``)."""
        if not isinstance(trips, ast.Name):
            return False
        defs = self.facts.definitions.get(trips.id, [])
        if len(defs) != 1 or not isinstance(defs[0][0], ast.Assign):
            return False
        value = defs[0][0].value
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "range"
            and self.norm.parsed.env.get("range", range) is range
            and (len(value.args) == 1 or any_range)
            and not value.keywords
        )

    def _assign_adjoint(self, stmt: ast.Assign) -> list[ast.stmt]:
        op = self.facts.ops[stmt]
        if op.key == "setitem":
            return self._setitem_adjoint(stmt)
        if op.key in ("pack", "append"):
            return self._sequence_adjoint(stmt)
        v = op.target
        out: list[ast.stmt] = []
        if id(stmt) in self.absorbed:  # (the increment's write gave its adjoint)
            if id(stmt) in self.plan.pushed:
                out.append(assign(v, self._restored(stmt)))
            return out
        if v in self.active:
            self._comment_origin(stmt, out)
            if op.call_args is not None:
                out.extend(self._call_adjoint(stmt))
            else:
                self._rule_adjoint(stmt, out)
        if id(stmt) in self.plan.pushed:
            out.append(assign(v, self._restored(stmt)))
        if v in self.active and v not in self.plan.simple and v not in self.plan.borrowed:
            out.append(self._zero(v))  # the older value's adjoint starts at zero
        return out

    def _comment_origin(self, stmt: ast.stmt, out: list[ast.stmt]) -> None:
        """``# grad of: <the user's line>`` before the first adjoint of that line."""
        origin = self.norm.origin.get(stmt)
        if origin is not self.last_origin:
            out.append(comment(f"grad of: {self.norm.origin_text(stmt)}"))
            self.last_origin = origin

    def _rule_adjoint(self, stmt: ast.Assign, out: list[ast.stmt]) -> None:
        """The adjoint of ``v = f(a, b)`` by ``f``'s rule: each active operand's
        contribution accumulated (a uniform adjoint passed on where it can be)."""
        builder, op = self.builder, self.facts.ops[stmt]
        v = op.target
        g = name(builder.adjoint(v))
        args = {
            p: self.plan.recompute.get(a.id, a) if isinstance(a, ast.Name) else a
            for p, a in op.ctx.args.items()
        }
        level = self.uniform.pop(v, None)
        planned: dict[str, ast.expr] = {}
        if level is not None:
            planned, whole = self._uniform_contributions(stmt, args, level, out)
            if not whole:  # the adjoint as an array after all, for the others
                full = builder.xp_call("full_like", name(v), level)
                full = builder.with_witnesses(full, self._witnesses(stmt))
                full, before = self._shape_only_seed(full, stmt)
                out.extend(before)
                out.append(assign(g.id, full))
        for param, atom in op.diff_args:
            if not (isinstance(atom, ast.Name) and atom.id in self.active):
                continue
            if atom.id in self.uniform:
                continue  # it holds the uniform adjoint passed on
            into_real = atom.id not in self.facts.complex and (
                v in self.facts.complex or op.rule.name in COMPLEX_ADJOINT
            )
            if param in planned:
                contribution = planned[param]
            else:
                ctx = dataclasses.replace(
                    op.ctx, args=args, param=param, symbols=builder.symbols(g, v)
                )
                contribution = instantiate(op.rule.vjp[param], ctx)
                if op.ctx.index is not None:  # (an index of names computed again: i - 1)
                    contribution = copy_tree(contribution, self.plan.recompute)
                elif v in self.plan.recompute:  # (its rule reads its value: np.exp's)
                    contribution = copy_tree(contribution, {v: self.plan.recompute[v]})
                spread = None if into_real else self._spreads_uniformly(contribution, atom.id)
                if spread is not None:
                    self.uniform[atom.id] = self._frozen(spread, stmt, out)
                    continue
            if op.rule.elementwise and not self.facts.fills(atom, stmt):
                contribution = self._unbroadcast(contribution, atom.id, stmt)
            if into_real:  # a real operand of a complex operation: the real part
                contribution = builder.xp_call("real", contribution)
            contribution = builder.with_witnesses(contribution, self._witnesses(stmt))
            contribution, before = self._shape_only_seed(contribution, stmt)
            out.extend(before)
            owner = self.owned_reads.get(id(stmt))
            if owner is not None:  # (y_bar is the reversed loop's own: copied before it)
                self.copy_before.setdefault(owner, set()).add(builder.adjoint(atom.id))
                out.append(self._add_into_item(atom.id, contribution))
            else:
                out.append(self._accumulate(atom.id, contribution))

    def _unbroadcast(self, contribution: ast.expr, u: str, stmt: ast.Assign) -> ast.expr:
        """``contribution`` summed to the shape of ``u`` (an operand of the elementwise
        ``stmt``): a shape computed from operands where it can be, else ``u``'s own
        (a read the plan resolves later: :meth:`_resolve_shape_reads`)."""
        builder = self.builder
        if self._a_number_given(u, stmt):
            return self._sum_of(contribution, stmt)
        shape = self.shapes.get((id(stmt), u))
        if shape is None and u in self.norm.temps:  # its operands' shapes
            deep = self._shape_of(u, stmt, depth=0, deep=True)
            if deep is not None and ast.dump(deep) != ast.dump(builder.xp_call("shape", name(u))):
                shape = deep
        if shape is not None:
            if self._a_number_shape(shape, stmt):  # (t = -k, k a number: t's shape is k's)
                return self._sum_of(contribution, stmt)
            return builder.call("unbroadcast_to", contribution, shape)
        self.shape_reads.append((stmt, u))
        return builder.call("unbroadcast", contribution, name(u))

    def _sum_of(self, contribution: ast.expr, stmt: ast.Assign) -> ast.expr:
        """``np.sum(contribution)``; ``np.vdot(g, y)`` for ``g * y`` where ``g`` is the
        adjoint of ``stmt``'s real result and ``y`` an operand that fills that result (one
        pass and no temporary: ``r * lap``'s ``r_bar`` is ``np.vdot(v_bar, lap)``)."""
        builder, v = self.builder, self.facts.ops[stmt].target
        g = builder.adjoint(v)
        if (
            builder.profile is None
            and isinstance(contribution, ast.BinOp)
            and isinstance(contribution.op, ast.Mult)
            and isinstance(contribution.left, ast.Name)
            and contribution.left.id == g
            and isinstance(contribution.right, ast.Name)
            and v not in self.facts.complex
            and contribution.right.id not in self.facts.complex
            and self.facts.fills(contribution.right, stmt)
        ):
            return builder.xp_call("vdot", contribution.left, contribution.right)
        return builder.xp_call("sum", contribution)

    def _a_number_shape(self, shape: ast.expr, stmt: ast.Assign) -> bool:
        """Whether ``shape`` is ``np.shape(p)`` of a parameter ``p`` given no other value
        whose argument is a number, and ``stmt`` may make an array (as for
        :meth:`_a_number_given`: the sum of every item, with nothing else read)."""
        p = _shape_of_name(shape)
        return p is not None and self._a_number_given(p, stmt)

    def _a_number_given(self, u: str, stmt: ast.Assign) -> bool:
        """Whether ``u`` is a parameter given no other value whose argument is a number
        (rank 0) and the elementwise ``stmt`` may make an array of it: its adjoint is the
        sum of every item of the contribution. (Only a parameter: a value the code
        computes could then go unread, and with it an error its computation raises.)"""
        result = self.facts.op_shapes.get(id(stmt))
        return (
            u in self.params
            and u not in self.facts.definitions
            and self.facts.shape(name(u)).rank == 0
            and (result is None or result.rank != 0)
        )


def _note_loops(block: list[ast.stmt], around: list[ast.stmt], out: dict[int, list]) -> None:
    """Record in ``out`` the loops around each statement of ``block`` (by id)."""
    for stmt in block:
        out[id(stmt)] = around
        if isinstance(stmt, (ast.For, ast.While)):
            _note_loops(stmt.body, [*around, stmt], out)
            _note_loops(stmt.orelse, around, out)
        elif isinstance(stmt, ast.If):
            _note_loops(stmt.body, around, out)
            _note_loops(stmt.orelse, around, out)
