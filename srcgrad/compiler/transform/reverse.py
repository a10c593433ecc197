"""Stage 4b, reverse mode: a core function in, its gradient or VJP out.

In:  a normalized function, its :class:`~srcgrad.facts.Facts`, the
``wrt`` parameters, a :class:`~srcgrad.builder.Builder` and what to return
(``kind``: ``"grad"``, ``"value_and_grad"`` or ``"vjp"``).
Out: a function that runs the primal sweep, then the adjoint sweep: the
statements in reverse order, each active one accumulating its operands'
adjoints under a comment naming the user's line; branches replayed by their
recorded condition, loops run backwards::

    h = h0                                tape = []
    for t in range(n):                    h = h0
        h = np.tanh(h @ W)       ==>      for t in range(n):
    return np.sum(h)                          tape.append(h)
                                              h = np.tanh(h @ W)
                                          h_bar = np.full_like(h, 1.0)
                                          W_bar = np.zeros_like(W)
                                          for t in reversed(range(n)):
                                              t1_bar = h_bar * (1 - h * h)
                                              h = tape.pop()
                                              h_bar = t1_bar @ W.T
                                              W_bar = W_bar + h.T @ t1_bar
                                          h0_bar = h_bar

What the adjoint sweep reads must hold, when it is read, the value it had
when the primal statement ran. The primal sweep keeps that true by pushing a
name's old value on a tape (a list local to the call) just before an
assignment destroys it, for names the adjoint reads; the adjoint sweep pops
it back right after that assignment's adjoint. Names with one definition
outside loops are never pushed; loop indices are restored by the reversed
loop; cheap views (``xs[t]``) are recomputed rather than recorded. Loop trip
counts are recorded where a loop may stop early (``break``) or has no range
(``while``).

Adjoints start at zero where their name's live range starts in reverse, and
accumulate with ``+``; the optimizer turns each first accumulation into a
plain assignment and drops what is never read.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator

import numpy as np

from ...errors import UnsupportedSyntaxError
from ...rules import instantiate
from ..analyze.checks import check_mode
from ..analyze.facts import Facts, assigned_name, is_setitem, walk_block
from ..astwalk import copy_tree, loaded, nodes
from ..normalize.lower import Normalized
from .builder import Builder, add, assign, comment, marker, name
from .forward import call_signature

KINDS = ("grad", "value_and_grad", "vjp", "split")


def reverse(
    norm: Normalized, facts: Facts, wrt: list[str], builder: Builder, kind: str
) -> ast.FunctionDef:
    assert kind in KINDS, kind
    check_mode(norm, facts, "vjp")
    return _Reverse(norm, facts, wrt, builder).function(kind)


def _loads(trees: list[ast.AST]) -> set[str]:
    return {n for tree in trees for n in loaded(tree)}


def _plain_full_like(node: ast.AST) -> bool:
    """Whether ``node`` is ``np.full_like(x, value)``, with no shape or dtype given."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "full_like"
        and len(node.args) == 2
        and not node.keywords
    )


def _uses(stmt: ast.stmt) -> list[str]:
    """Names a core statement reads itself (not in its nested blocks)."""
    if isinstance(stmt, ast.Assign):
        return list(_loads([stmt.value]))
    if isinstance(stmt, (ast.If, ast.While)):
        return list(_loads([stmt.test]))
    if isinstance(stmt, ast.For):
        return list(_loads([stmt.iter]))
    if isinstance(stmt, (ast.Return, ast.Expr)):
        return list(_loads([stmt.value]))
    return []


_MATMULS = (ast.MatMult, np.matmul)
#: functions whose result is a boolean array (an index that is a mask never repeats)
_MASK_CALLS = (
    np.isnan,
    np.isfinite,
    np.isinf,
    np.signbit,
    np.logical_and,
    np.logical_or,
    np.logical_not,
    np.logical_xor,
)


def _index_value(index: ast.expr) -> ast.expr:
    """An index as a value to pass to a function: ``1:n`` is ``slice(1, n)``."""
    if isinstance(index, ast.Tuple):
        return ast.Tuple(elts=[_index_value(e) for e in index.elts], ctx=ast.Load())
    if isinstance(index, ast.Slice):
        parts = [p or ast.Constant(None) for p in (index.lower, index.upper, index.step)]
        return ast.Call(func=name("slice"), args=copy_tree(parts), keywords=[])
    return copy_tree(index)


def _loads_but_shapes(trees: list[ast.AST], builder: Builder) -> set[str]:
    """The names ``trees`` read, leaving out the shape argument of each ``unbroadcast``
    call (a shape is recomputed where its name is not kept: see _resolve_shape_reads)."""
    helper = builder.helpers["unbroadcast"]
    out: set[str] = set()
    for tree in trees:
        found = nodes(tree)
        shapes = {
            id(inner)
            for n in found
            if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id == helper
            for a in n.args[1:]
            for inner in nodes(a)
        }
        out.update(
            n.id
            for n in found
            if type(n) is ast.Name and type(n.ctx) is ast.Load and id(n) not in shapes
        )
    return out


def _flatten(block: list[ast.stmt]) -> list[ast.AST]:
    """Simple statements of ``block`` and the headers of its compound ones."""
    out: list[ast.AST] = []
    for stmt in block:
        if isinstance(stmt, ast.If):
            out.append(stmt.test)
            out.extend(_flatten(stmt.body) + _flatten(stmt.orelse))
        elif isinstance(stmt, (ast.For, ast.While)):
            out.append(stmt.iter if isinstance(stmt, ast.For) else stmt.test)
            out.extend(_flatten(stmt.body))
        else:
            out.append(stmt)
    return out


def _is_zeroing(stmt: ast.stmt) -> bool:
    """``v_bar = np.zeros_like(v)``: its read of ``v`` needs no recording (at a
    live range's start ``v`` holds the right value; resets follow a pop)."""
    value = getattr(stmt, "value", None)
    return (
        isinstance(stmt, ast.Assign)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "zeros_like"
    )


def _assigned(block: list[ast.stmt]) -> list[str]:
    return [
        n.id
        for stmt in block
        for n in ast.walk(stmt)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]


def _has_break(body: list[ast.stmt]) -> bool:
    return any(isinstance(s, ast.Break) for s, _ in _walk_same_loop(body))


def _walk_same_loop(body: list[ast.stmt]):
    for stmt in body:
        yield stmt, 0
        if isinstance(stmt, ast.If):
            yield from _walk_same_loop(stmt.body)
            yield from _walk_same_loop(stmt.orelse)


class _Reverse:
    def __init__(self, norm: Normalized, facts: Facts, wrt: list[str], builder: Builder) -> None:
        self.norm = norm
        self.facts = facts
        self.wrt = wrt
        self.builder = builder
        self.active = facts.active
        self.params = [a.arg for a in norm.tree.args.args]
        self.core = norm.tree.body[:-1]
        self.tape = ""
        self.counters: dict[int, str] = {}  # id(loop) -> its trip counter
        self.records: dict[int, str] = {}  # id(call statement) -> its callee's record
        self.counter_presets: set[str] = set()
        self.last_origin: ast.stmt | None = None
        self._scopes()
        self._top_index: dict[int, dict[int, int]] = {}  # (see _read_in_its_trip)
        self.blocks_of: dict[int, int] = {}  # id(statement) -> id(its block)
        for block in self.blocks.values():
            for stmt in block:
                self.blocks_of[id(stmt)] = id(block)
        # writes into memory another name refers to at some time: undone in the backward
        # sweep even where their own name is not read (a value recorded may be that memory)
        self.shared_writes = facts.aliases.shared_writes if facts.aliases else set()
        self.remat = self._rematerializable()
        self.borrowed = self._borrowed()
        self.invariant = self._invariant()
        # names whose shapes unbroadcast and full_like may read instead of temporaries
        self.named = self.params + [
            n for n in facts.definitions if n not in norm.temps and n not in facts.loop_indices
        ]
        self.position: dict[int, int] = {}
        self.depth: dict[int, int] = {}
        for k, (stmt, depth) in enumerate(walk_block(self.core)):
            self.position[id(stmt)] = k
            self.depth[id(stmt)] = depth
        self.loops_around = self._enclosing_loops()
        self._witness_facts: list[tuple[str, int, bool]] | None = None  # (see _witnesses)
        self._in_loop_witnesses: list[str] = []
        self.pushed: set[int] = set()
        self.needed: set[str] = set()
        self.shape_reads: list[tuple[ast.Assign, str]] = []  # (statement, name) unbroadcast reads
        self.shapes: dict[tuple[int, str], ast.expr] = {}  # recomputed shapes for those
        self.saves: dict[int, str] = {}  # id(statement) -> where it saves, outside loops
        # what the adjoint reads decides what is recorded; recording adds reads (a
        # branch replayed only to restore), so go round until nothing changes. This
        # converges: `needed` only grows (each round adds what the adjoint reads to it)
        # and `pushed` is a function of `needed` (and of facts fixed here), so a round
        # that adds no name changes nothing more and ends the loop: at most one round
        # per name, and one more.
        self.uniform_ok = self._uniform_candidates()
        self.levels: set[str] = set()  # names given scalars by _frozen
        names = set(self.params) | set(facts.definitions) | facts.loop_indices
        for _ in range(len(names) + 2):
            self.shape_reads = []
            self.shapes = {}
            self.uniform: dict[str, ast.expr] = {}  # see _uniform_contributions
            adjoint, _ = self._adjoint(self.core, self.norm.tree.body, 0)
            reads = [s for s in _flatten(adjoint) if not _is_zeroing(s)]
            needed = _loads_but_shapes(reads, self.builder) | self.needed
            self.needed = needed
            self._resolve_shape_reads()
            pushed = self._pushes()
            if pushed == self.pushed and self.needed == needed:
                break
            self.pushed = pushed
        else:  # (cannot happen, by the argument above: never go on with a partial record)
            raise AssertionError("srcgrad: what reverse mode records did not settle")
        self.last_origin = None

    # -- facts about names ---------------------------------------------------------------
    def _scopes(self) -> None:
        """For every active name, the block its adjoint lives in and how it starts.

        ``self.home[v]`` is the innermost block holding every definition and use
        of ``v``; ``self.simple`` holds the names with one definition, a statement of
        that block, before any use: their adjoint starts at zero
        at the reversed block's start and needs no reset.
        """
        uses: dict[str, list[list[ast.stmt]]] = {}
        defs: dict[str, list[list[ast.stmt]]] = {}
        order: dict[str, list[tuple[int, str]]] = {}  # block id -> first def/use positions
        chain: dict[int, list[int]] = {}  # block id -> ids of blocks enclosing it (outer first)
        self.blocks: dict[int, list[ast.stmt]] = {}
        self.loop_of: dict[int, ast.stmt] = {}

        def visit(block: list[ast.stmt], parents: list[int]) -> None:
            bid = id(block)
            self.blocks[bid] = block
            chain[bid] = parents + [bid]
            for stmt in block:
                for n in _uses(stmt):
                    uses.setdefault(n, []).append(block)
                    order.setdefault(n, []).append((bid, "use"))
                if isinstance(stmt, ast.Assign) or stmt in self.facts.ops:
                    t = assigned_name(stmt)
                    defs.setdefault(t, []).append(block)
                    order.setdefault(t, []).append((bid, "def"))
                if isinstance(stmt, ast.If):
                    visit(stmt.body, chain[bid])
                    visit(stmt.orelse, chain[bid])
                elif isinstance(stmt, (ast.For, ast.While)):
                    self.loop_of[id(stmt.body)] = stmt
                    visit(stmt.body, chain[bid])

        top = self.norm.tree.body
        visit(top, [])
        self.home: dict[str, int] = {}
        self.simple: set[str] = set()
        for v in self.active | set(self.wrt):
            if v in self.params or v in self.facts.loop_indices:
                self.home[v] = id(top)
                continue
            blocks = [chain[id(b)] for b in defs.get(v, []) + uses.get(v, [])]
            common = blocks[0] if blocks else [id(top)]
            for c in blocks[1:]:
                k = 0
                while k < min(len(common), len(c)) and common[k] == c[k]:
                    k += 1
                common = common[:k]
            home = common[-1] if common else id(top)
            self.home[v] = home
            events = [kind for bid, kind in order.get(v, []) if bid == home or kind == "use"]
            # one definition: with two, the later one's adjoint must reset v's
            direct = [id(b) for b in defs.get(v, [])] == [home]
            if direct and events and events[0] == "def":
                self.simple.add(v)

    def _enclosing_loops(self) -> dict[int, list[str]]:
        """For every assignment, the indices of the for loops around it."""
        found: dict[int, list[str]] = {}

        def visit(block: list[ast.stmt], indices: list[str]) -> None:
            for stmt in block:
                if isinstance(stmt, ast.Assign):
                    found[id(stmt)] = indices
                elif isinstance(stmt, ast.If):
                    visit(stmt.body, indices)
                    visit(stmt.orelse, indices)
                elif isinstance(stmt, ast.For):
                    visit(stmt.body, indices + [stmt.target.id])
                elif isinstance(stmt, ast.While):
                    visit(stmt.body, indices)

        visit(self.core, [])
        return found

    def _rematerializable(self) -> dict[str, ast.expr]:
        """Temporaries that are cheap views of values that do not change before
        their adjoint runs (``t2 = xs[t]`` in a loop over ``t``): the adjoint
        recomputes them instead of recording them."""
        loops = self._enclosing_loops()
        out: dict[str, ast.expr] = {}
        readers: dict[str, list[ast.stmt]] = {}
        for stmt, _ in walk_block(self.core):
            for n in _uses(stmt):
                readers.setdefault(n, []).append(stmt)
        returned = set(_uses(self.norm.tree.body[-1]))
        for v, defs in self.facts.definitions.items():  # in program order
            if len(defs) != 1:
                continue
            stmt = defs[0][0]
            if not isinstance(stmt, ast.Assign) or not isinstance(stmt.targets[0], ast.Name):
                continue
            if v not in self.norm.temps and not self._read_in_its_trip(v, stmt, readers, returned):
                continue
            value = stmt.value
            if not isinstance(value, (ast.Subscript, ast.Attribute)):
                continue
            if isinstance(value, ast.Attribute) and value.attr != "T":
                continue
            stable = True
            for n in _loads([value]):
                n_defs = self.facts.definitions.get(n, [])
                if n in self.facts.loop_indices:
                    stable = stable and n in loops.get(id(stmt), [])
                elif n in out:  # a view of a view (layers[i]["W"])
                    continue
                elif len(n_defs) > 1 or any(depth > 0 for _, depth in n_defs):
                    stable = False
            if stable and self.home.get(v, id(self.norm.tree.body)) is not None:
                out[v] = copy_tree(value, out)  # (with the views it reads substituted)
        return out

    def _borrowed(self) -> dict[str, tuple[str, ast.expr]]:
        """Containers read out of a container (``layer = layers[i]``, a view read again
        in the backward loop) whose adjoint may start as the element's adjoint in the
        outer one (``layer_bar = layers_bar[i]``) and be put back (``set_at``) instead of
        starting at zeros and being added: nothing else gives ``layers`` an adjoint."""
        out: dict[str, tuple[str, ast.expr]] = {}
        for v in self.remat:
            (stmt, _), *rest = self.facts.definitions[v]
            value = stmt.value
            if (
                rest
                or not isinstance(value, ast.Subscript)
                or not isinstance(value.value, ast.Name)
            ):
                continue
            root = value.value.id
            if not {v, root} <= self.active & self.facts.sequences:
                continue
            if self.home.get(v) != self.blocks_of.get(id(stmt)):
                continue
            others = [
                op
                for s, op in self.facts.ops.items()
                if s is not stmt
                and any(isinstance(a, ast.Name) and a.id == root for _, a in op.diff_args)
            ]
            if not others:
                out[v] = (root, value.slice)
        return out

    def _read_in_its_trip(
        self, v: str, stmt: ast.stmt, readers: dict[str, list[ast.stmt]], returned: set[str]
    ) -> bool:
        """Whether every read of ``v`` (a user's variable) comes after its one definition
        ``stmt`` in the same block: its value is then the one that definition gave in
        the same trip of the loops around it, so a view may be taken again there."""
        if v in returned or v in self.params:
            return False
        if id(stmt) not in self.blocks_of:
            return False
        bid = self.blocks_of[id(stmt)]
        if bid not in self._top_index:  # each statement in the block's tree: its top's index
            block = self.blocks[bid]
            self._top_index[bid] = {
                id(s): k for k, top in enumerate(block) for s, _ in walk_block([top])
            }
        where = self._top_index[bid]
        k = where[id(stmt)]
        return all(where.get(id(r), -1) > k for r in readers.get(v, []))

    def _invariant(self) -> set[str]:
        """Names (not parameters) defined once, inside a loop, by a primitive (a
        rule-backed operation) of values no loop changes (``t = -k``): every trip
        computes the same value, so the value the loop leaves is the one each adjoint
        trip needs, and nothing is recorded."""
        defs = self.facts.definitions

        def stable(n: str) -> bool:
            return n not in self.facts.loop_indices and all(d == 0 for _, d in defs.get(n, []))

        out: set[str] = set()
        for v, v_defs in defs.items():
            if len(v_defs) != 1 or v_defs[0][1] == 0 or not isinstance(v_defs[0][0], ast.Assign):
                continue
            if v in self.params:  # its value before the loop (the argument) may be read
                continue
            stmt = v_defs[0][0]
            op = self.facts.ops.get(stmt)
            if op is None or op.rule is None or op.key == "setitem" or op.ctx is None:
                continue
            if all(stable(n) and len(defs.get(n, [])) <= 1 for n in _loads([stmt.value])):
                out.add(v)
        return out

    def _pushes(self) -> set[int]:
        """The assignments that must push the value they overwrite: those to a
        name the adjoint reads that may already hold a value there. A name
        pushed where it may be unbound is bound to None at the start."""
        pushed: set[int] = set()
        preset: set[str] = set()

        def walk(block: list[ast.stmt], maybe: set[str], sure: set[str]) -> tuple[set, set]:
            maybe, sure = set(maybe), set(sure)  # (the caller's stay as they are)
            for stmt in block:
                if isinstance(stmt, ast.Assign):
                    v = assigned_name(stmt)
                    if (
                        (v in self.needed or id(stmt) in self.shared_writes)
                        and v in maybe
                        and v not in self.facts.loop_indices
                        and v not in self.invariant
                    ):
                        pushed.add(id(stmt))
                        if v not in sure:
                            preset.add(v)
                    maybe.add(v)
                    sure.add(v)
                elif isinstance(stmt, ast.If):
                    m1, s1 = walk(stmt.body, maybe, sure)
                    m2, s2 = walk(stmt.orelse, maybe, sure)
                    maybe, sure = m1 | m2, s1 & s2
                elif isinstance(stmt, (ast.For, ast.While)):
                    names = set(_assigned(stmt.body))
                    if isinstance(stmt, ast.For):
                        names.add(stmt.target.id)
                    inner = maybe | names  # what earlier iterations may have left
                    walk(stmt.body, inner, sure)
                    maybe = inner
            return maybe, sure

        params = set(self.params)
        _, self.definite = walk(self.core, params, params)
        self.preset = sorted(preset - params)
        return pushed

    # -- the two sweeps --------------------------------------------------------------------
    def _push(self, v: str) -> ast.stmt:
        return self._push_value(name(v))

    def _save(self, stmt: ast.stmt, value: ast.expr, depth: int) -> ast.stmt:
        """Keep ``value`` for the adjoint: on the tape inside loops, where the
        statement runs many times; in a variable of its own outside them."""
        if depth > 0:
            return self._push_value(value)
        return assign(self._save_name(stmt), value)

    def _save_name(self, stmt: ast.stmt) -> str:
        if id(stmt) not in self.saves:
            self.saves[id(stmt)] = self.builder.namer.fresh(f"{assigned_name(stmt)}_old")
        return self.saves[id(stmt)]

    def _restored(self, stmt: ast.stmt) -> ast.expr:
        """Where the adjoint gets back what ``_save`` kept for ``stmt``."""
        if self.depth[id(stmt)] > 0:
            pop = ast.Attribute(value=name(self.tape), attr="pop", ctx=ast.Load())
            return ast.Call(func=pop, args=[], keywords=[])
        return name(self._save_name(stmt))

    def _push_value(self, value: ast.expr) -> ast.stmt:
        if not self.tape:
            self.tape = self.builder.namer.fresh("tape")
        push = ast.Attribute(value=name(self.tape), attr="append", ctx=ast.Load())
        return ast.Expr(value=ast.Call(func=push, args=[value], keywords=[]))

    def _pop(self, v: str) -> ast.stmt:
        pop = ast.Attribute(value=name(self.tape), attr="pop", ctx=ast.Load())
        return assign(v, ast.Call(func=pop, args=[], keywords=[]))

    def _counter(self, loop: ast.stmt) -> str | None:
        if isinstance(loop, ast.While) or (isinstance(loop, ast.For) and _has_break(loop.body)):
            if id(loop) not in self.counters:
                self.counters[id(loop)] = self.builder.namer.fresh("trips")
            return self.counters[id(loop)]
        return None

    def _primal(self, block: list[ast.stmt], depth: int) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in block:
            if isinstance(stmt, ast.Assign):
                if id(stmt) in self.pushed and is_setitem(stmt):  # what the write destroys
                    target = stmt.targets[0]
                    old = ast.Subscript(
                        value=copy_tree(target.value),
                        slice=copy_tree(target.slice),
                        ctx=ast.Load(),
                    )
                    out.append(self._save(stmt, self.builder.xp_call("copy", old), depth))
                elif id(stmt) in self.pushed:
                    out.append(self._save(stmt, name(stmt.targets[0].id), depth))
                op = self.facts.ops[stmt]
                if op.call_args is not None and op.target in self.active:
                    out.extend(self._call_primal(stmt, depth))
                else:
                    out.append(copy_tree(stmt))
            elif isinstance(stmt, ast.If):
                new = copy.copy(stmt)
                new.body = self._primal(stmt.body, depth) or [ast.Pass()]
                new.orelse = self._primal(stmt.orelse, depth)
                out.append(new)
            elif isinstance(stmt, (ast.For, ast.While)):
                counter = self._counter(stmt)
                hoisted = self._hoistable(stmt.body)
                out.extend(copy_tree(s) for s in hoisted)
                body = self._primal([s for s in stmt.body if s not in hoisted], depth + 1)
                if counter:
                    if depth > 0:
                        self.counter_presets.add(counter)  # bound before its first push
                        out.append(self._push(counter))
                    out.append(assign(counter, ast.Constant(0)))
                    one = ast.BinOp(left=name(counter), op=ast.Add(), right=ast.Constant(1))
                    body = [assign(counter, one), *body]
                new = copy.copy(stmt)
                new.body = body
                out.append(new)
            else:
                out.append(copy_tree(stmt))
        return out

    def _hoistable(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """Statements of a loop's body computing the same number on every trip by
        arithmetic that cannot fail (``t = -k``, ``c = dt * k`` on scalars): the
        primal computes them once, before the loop."""
        out = []
        read_before: set[str] = set()
        for stmt in body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                v = stmt.targets[0].id
                value = stmt.value
                cheap = (
                    isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd))
                ) or (
                    isinstance(value, ast.BinOp)
                    and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult))
                )
                operands = [n for n in ast.iter_child_nodes(value) if isinstance(n, ast.expr)]
                if (
                    cheap
                    and v in self.invariant
                    and v not in read_before
                    and all(
                        isinstance(a, ast.Constant)
                        and type(a.value) in (int, float)
                        or isinstance(a, ast.Name)
                        and self.facts.shape(a).rank == 0
                        for a in operands
                    )
                ):
                    out.append(stmt)
            for node in [stmt] + [n for n in ast.walk(stmt) if isinstance(n, ast.stmt)]:
                read_before.update(_uses(node))
        return out

    # -- calls to user functions ------------------------------------------------------------
    def _callee(self, stmt: ast.Assign) -> tuple[str, str, list[ast.Name]]:
        op = self.facts.ops[stmt]
        wrt, ranks, active = call_signature(op, self.facts)
        fwd, bwd = self.builder.program.request(op.callee, "split", wrt, ranks)
        return fwd, bwd, active

    def _record(self, stmt: ast.Assign) -> str:
        if id(stmt) not in self.records:
            self.records[id(stmt)] = self.builder.namer.fresh(f"{stmt.targets[0].id}_rec")
        return self.records[id(stmt)]

    def _call_primal(self, stmt: ast.Assign, depth: int) -> list[ast.stmt]:
        """``r = f(a)`` becomes ``r, r_rec = f_fwd(a)``: value and the callee's record."""
        op = self.facts.ops[stmt]
        fwd, _, _ = self._callee(stmt)
        rec = self._record(stmt)
        targets = ast.Tuple(
            elts=[ast.Name(id=op.target, ctx=ast.Store()), ast.Name(id=rec, ctx=ast.Store())],
            ctx=ast.Store(),
        )
        call = ast.Call(func=name(fwd), args=[copy_tree(a) for a in op.call_args], keywords=[])
        out: list[ast.stmt] = [ast.Assign(targets=[targets], value=call)]
        if depth > 0:  # the record of each pass through the loop
            out.append(self._push(rec))
        return out

    def _call_adjoint(self, stmt: ast.Assign) -> list[ast.stmt]:
        """Adjoint of ``r = f(a, b)``: ``a_bar += f_bwd(a, b, r_rec, r_bar)``."""
        op = self.facts.ops[stmt]
        _, bwd, active = self._callee(stmt)
        rec = self._record(stmt)
        out: list[ast.stmt] = []
        if self.depth[id(stmt)] > 0:
            out.append(self._pop(rec))
        args = [copy_tree(a) for a in op.call_args]
        call = ast.Call(
            func=name(bwd),
            args=[*args, name(rec), name(self.builder.adjoint(op.target))],
            keywords=[],
        )
        if len(active) == 1:
            out.append(self._accumulate(active[0].id, call))
            return out
        parts = [self.builder.namer.fresh(f"{a.id}_part") for a in active]
        unpack = ast.Tuple(elts=[ast.Name(id=p, ctx=ast.Store()) for p in parts], ctx=ast.Store())
        out.append(ast.Assign(targets=[unpack], value=call))
        for a, part in zip(active, parts):
            out.append(self._accumulate(a.id, name(part)))
        return out

    def _kept(
        self, value: ast.expr, body: list[ast.stmt], before: list[ast.stmt] | None = None
    ) -> ast.expr:
        """``value`` (a name the function returns to its caller), or a copy of it where
        the backward sweep restores, in place, memory it may share (``y[0] = y_old``
        would change it): the copy is taken in ``body`` before the adjoint statements
        ``before`` (or at its end)."""
        writes = [s for s, _ in walk_block(self.core) if is_setitem(s) and id(s) in self.pushed]
        aliases = self.facts.aliases
        if not (
            isinstance(value, ast.Name) and writes and aliases and aliases.ends_in(value.id, writes)
        ):
            return value
        if value.id in self.facts.sequences or self.facts.shape(value).rank is None:
            raise self.norm.parsed.locator.error(
                UnsupportedSyntaxError,
                self.norm.origin.get(self.norm.tree.body[-1], self.norm.tree.body[-1]),
                "srcgrad's reverse mode changes, in place, an array this function returns "
                "inside a list, tuple or dict (it restores what later lines overwrote); "
                "return a copy of that array (`y.copy()`) instead.",
            )
        kept = self.builder.namer.fresh(f"{value.id}_kept")
        where = body.index(before[0]) if before and before[0] in body else len(body)
        body.insert(where, assign(kept, self.builder.xp_call("copy", copy_tree(value))))
        return name(kept)

    def _zero(self, v: str, maybe_unbound: bool = False) -> ast.stmt:
        if maybe_unbound:
            return assign(self.builder.adjoint(v), self.builder.call("zero_adjoint", name(v)))
        if v in self.borrowed:  # its part of the outer container's adjoint
            root, index = self.borrowed[v]
            part = ast.Subscript(
                value=name(self.builder.adjoint(root)), slice=copy_tree(index), ctx=ast.Load()
            )
            return assign(self.builder.adjoint(v), part)
        value = copy_tree(self.remat[v]) if v in self.remat else name(v)
        if v in self.facts.sequences:
            return assign(self.builder.adjoint(v), self.builder.call("zeros_seq", value))
        if self.facts.shape(name(v)).rank is None:  # perhaps a tuple (`p = t[0]`): look
            return assign(self.builder.adjoint(v), self.builder.call("zero_adjoint", value))
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
                helper = "set_at" if self.borrowed.get(element, ("",))[0] == v else "add_at"
                return assign(target, self.builder.call(helper, name(target), c.args[2], g))
            return assign(target, self.builder.call("add_seq", name(target), contribution))
        if self.facts.shape(name(v)).rank is None:  # perhaps a tuple: added element-wise
            return assign(target, self.builder.call("add_seq", name(target), contribution))
        return assign(target, add(name(target), contribution))

    def _sequence_adjoint(self, stmt: ast.stmt) -> list[ast.stmt]:
        """Adjoints of ``t = (a, b)`` (each element its part) and ``xs.append(v)``
        (``v`` gets the last adjoint, which leaves the list; so does the value)."""
        op = self.facts.ops[stmt]
        out: list[ast.stmt] = []
        g = name(self.builder.adjoint(op.target))
        active = op.target in self.active
        if active:
            origin = self.norm.origin.get(stmt)
            if origin is not self.last_origin:
                out.append(comment(f"grad of: {self.norm.origin_text(stmt)}"))
                self.last_origin = origin
        if op.key == "pack" and active:
            for k, atom in enumerate(stmt.value.elts):
                if isinstance(atom, ast.Name) and atom.id in self.active:
                    part = ast.Subscript(value=copy_tree(g), slice=ast.Constant(k), ctx=ast.Load())
                    out.append(self._accumulate(atom.id, part))
        elif op.key == "append":
            if active:
                last = ast.Call(
                    func=ast.Attribute(value=g, attr="pop", ctx=ast.Load()), args=[], keywords=[]
                )
                v = op.args["v"]
                if isinstance(v, ast.Name) and v.id in self.active:
                    out.append(self._accumulate(v.id, last))
                else:
                    out.append(ast.Expr(value=last))
            if op.target in self.needed or id(stmt) in self.shared_writes:  # as it was
                shrink = ast.Attribute(value=name(op.target), attr="pop", ctx=ast.Load())
                out.append(ast.Expr(value=ast.Call(func=shrink, args=[], keywords=[])))
        if op.key == "pack" and id(stmt) in self.pushed:
            out.append(assign(op.target, self._restored(stmt)))
        v = op.target
        if op.key == "pack" and active and v not in self.simple and v not in self.borrowed:
            # the older value's adjoint starts at zero (a tuple, or what else it held)
            out.append(self._zero(v, maybe_unbound=v not in self.facts.sequences))
        return out

    def _adjoint(
        self, block: list[ast.stmt], container: list[ast.stmt], depth: int
    ) -> tuple[list[ast.stmt], None]:
        out: list[ast.stmt] = []
        for v in sorted(self.active):  # adjoints whose live range is this block
            if self.home.get(v) == id(block) and block is not self.norm.tree.body:
                out.append(self._zero(v))
        for stmt in reversed(block):
            if isinstance(stmt, ast.Assign) or stmt in self.facts.ops:
                out.extend(self._assign_adjoint(stmt))
            elif isinstance(stmt, ast.If):
                body, _ = self._adjoint(stmt.body, block, depth)
                orelse, _ = self._adjoint(stmt.orelse, block, depth)
                if body or orelse:
                    out.append(
                        ast.If(test=copy_tree(stmt.test), body=body or [ast.Pass()], orelse=orelse)
                    )
            elif isinstance(stmt, (ast.For, ast.While)):
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
            iterate = ast.Call(func=name("reversed"), args=[trips], keywords=[])
            target = copy_tree(loop.target)
        else:
            iterate = ast.Call(func=name("range"), args=[name(counter)], keywords=[])
            target = ast.Name(id=self.builder.namer.fresh("_"), ctx=ast.Store())
        out: list[ast.stmt] = []
        if body:
            out.append(ast.For(target=target, iter=iterate, body=body, orelse=[]))
        if counter and depth > 0:
            out.append(self._pop(counter))
        return out

    def _setitem_adjoint(self, stmt: ast.Assign) -> list[ast.stmt]:
        """Adjoint of ``y[i] = v``: ``v`` gets ``y_bar[i]``, which then is zero (the
        old values there no longer reach the output); ``y[i]`` gets its old values back."""
        op = self.facts.ops[stmt]
        y, v = op.target, op.args["v"]
        index = op.ctx.index
        out: list[ast.stmt] = []
        if y in self.active:
            origin = self.norm.origin.get(stmt)
            if origin is not self.last_origin:
                out.append(comment(f"grad of: {self.norm.origin_text(stmt)}"))
                self.last_origin = origin
            y_bar = self.builder.adjoint(y)
            if isinstance(v, ast.Name) and v.id in self.active:
                part = ast.Subscript(value=name(y_bar), slice=copy_tree(index), ctx=ast.Load())
                if self._may_repeat(index):  # only the last write to an element counts
                    part = self.builder.call("kept_writes", name(y_bar), _index_value(index))
                shape = self.shapes.get((id(stmt), v.id))
                if shape is not None:
                    part = self.builder.call("unbroadcast_to", part, shape)
                else:
                    part = self.builder.call("unbroadcast", part, name(v.id))
                    self.shape_reads.append((stmt, v.id))
                v_bar = self.builder.adjoint(v.id)
                out.append(assign(v_bar, add(name(v_bar), part)))
            fresh = ast.Call(
                func=ast.Attribute(value=name(y_bar), attr="copy", ctx=ast.Load()),
                args=[],
                keywords=[],
            )
            out.append(assign(y_bar, fresh))
            zero = ast.Subscript(value=name(y_bar), slice=copy_tree(index), ctx=ast.Store())
            out.append(ast.Assign(targets=[zero], value=ast.Constant(0.0)))
        if id(stmt) in self.pushed:
            restore = ast.Subscript(value=name(y), slice=copy_tree(index), ctx=ast.Store())
            out.append(ast.Assign(targets=[restore], value=self._restored(stmt)))
        return out

    def _may_repeat(self, index: ast.expr) -> bool:
        """Whether an index may name one element twice (``y[[0, 0]]``): it holds an array
        or list, not a boolean mask (a comparison, a negation or ``&``/``|`` of them).
        Numbers, slices, ``None`` and ``...`` name each element once."""
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        return any(
            isinstance(p, ast.Name) and self.facts.shape(p).rank != 0 and not self._mask(p.id)
            for p in parts
        )

    def _mask(self, v: str, depth: int = 0) -> bool:
        """Whether every definition of ``v`` gives it a boolean array."""
        defs = self.facts.definitions.get(v, [])
        if not defs or depth > 5:
            return False
        for stmt, _ in defs:
            op = self.facts.ops.get(stmt)
            if op is None or op.key == "setitem":
                return False
            if op.key == "compare" or op.key in _MASK_CALLS:
                continue
            if op.key in (ast.Invert, ast.BitAnd, ast.BitOr, ast.BitXor) and all(
                isinstance(a, ast.Name) and self._mask(a.id, depth + 1) for a in op.args.values()
            ):
                continue
            return False
        return True

    def _assign_adjoint(self, stmt: ast.Assign) -> list[ast.stmt]:
        facts, builder = self.facts, self.builder
        op = facts.ops[stmt]
        if op.key == "setitem":
            return self._setitem_adjoint(stmt)
        if op.key in ("pack", "append"):
            return self._sequence_adjoint(stmt)
        v = op.target
        out: list[ast.stmt] = []
        if v in self.active:
            origin = self.norm.origin.get(stmt)
            if origin is not self.last_origin:
                out.append(comment(f"grad of: {self.norm.origin_text(stmt)}"))
                self.last_origin = origin
            if op.call_args is not None:
                out.extend(self._call_adjoint(stmt))
                args = {}
        if v in self.active and op.call_args is None:
            g = name(builder.adjoint(v))
            args = {
                p: self.remat.get(a.id, a) if isinstance(a, ast.Name) else a
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
                if param in planned:
                    contribution = planned[param]
                else:
                    ctx = dataclasses.replace(
                        op.ctx, args=args, param=param, symbols=builder.symbols(g, v)
                    )
                    contribution = instantiate(op.rule.vjp[param], ctx)
                    spread = self._spreads_uniformly(contribution, atom.id)
                    if spread is not None:
                        self.uniform[atom.id] = self._frozen(spread, stmt, out)
                        continue
                if op.rule.elementwise and not facts.fills(atom, stmt):
                    shape = self.shapes.get((id(stmt), atom.id))
                    if shape is None and atom.id in self.norm.temps:  # its operands' shapes
                        deep = self._shape_of(atom.id, stmt, depth=0, deep=True)
                        if deep is not None and ast.dump(deep) != ast.dump(
                            builder.xp_call("shape", name(atom.id))
                        ):
                            shape = deep
                    if shape is not None:
                        contribution = builder.call("unbroadcast_to", contribution, shape)
                    else:
                        contribution = builder.call("unbroadcast", contribution, name(atom.id))
                        self.shape_reads.append((stmt, atom.id))
                contribution = builder.with_witnesses(contribution, self._witnesses(stmt))
                contribution, before = self._shape_only_seed(contribution, stmt)
                out.extend(before)
                out.append(self._accumulate(atom.id, contribution))
        if id(stmt) in self.pushed:
            out.append(assign(v, self._restored(stmt)))
        if v in self.active and v not in self.simple and v not in self.borrowed:
            out.append(self._zero(v))  # the older value's adjoint starts at zero
        return out

    # -- adjoints equal in every element ------------------------------------------------
    def _uniform_candidates(self) -> set[str]:
        """Temporaries whose adjoint may be held as one scalar standing for every element
        (``np.sum(t)``'s gradient is ``g`` everywhere): given once, at the top level, read
        once, by an elementwise operation, so the scalar reaches that operation's adjoint
        and nothing else."""
        reads: dict[str, int] = {}
        for stmt, _ in walk_block(self.core):
            for n in _uses(stmt):
                reads[n] = reads.get(n, 0) + 1
        for n in _uses(self.norm.tree.body[-1]):
            reads[n] = reads.get(n, 0) + 1
        top = {id(s) for s in self.norm.tree.body}
        out = set()
        for v in self.norm.temps & self.active & self.simple:
            defs = self.facts.definitions.get(v, [])
            if len(defs) != 1 or id(defs[0][0]) not in top or reads.get(v) != 1:
                continue
            op = self.facts.ops.get(defs[0][0])
            if op and op.rule and op.rule.elementwise and op.ctx and op.call_args is None:
                out.add(v)
        return out

    def _spreads_uniformly(self, contribution: ast.expr, u: str) -> ast.expr | None:
        """The scalar ``s`` where ``contribution`` to ``u``'s adjoint is ``np.full_like(x,
        s)`` and ``u`` may hold it as a scalar (:meth:`_uniform_candidates`)."""
        if u not in self.uniform_ok:
            return None
        c = contribution
        if not (_plain_full_like(c) and self._scalar(c.args[1])):
            return None
        return c.args[1]

    def _scalar(self, expr: ast.expr) -> bool:
        """Whether ``expr`` is provably a scalar: constants, names of rank 0, sizes."""
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, (int, float))
        if isinstance(expr, ast.Name):
            if expr.id in self.levels:
                return True
            v = self.builder.primal_of.get(expr.id, expr.id)
            return self.facts.shape(ast.Name(id=v)).rank == 0
        if isinstance(expr, ast.BinOp):
            return self._scalar(expr.left) and self._scalar(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return self._scalar(expr.operand)
        if isinstance(expr, ast.BoolOp):  # (np.size(x) or 1)
            return all(self._scalar(v) for v in expr.values)
        return (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("size", "prod")
            and not expr.keywords
            and len(expr.args) == 1
        )

    def _frozen(self, expr: ast.expr, stmt: ast.Assign, out: list[ast.stmt]) -> ast.expr:
        """``expr`` (a scalar), or a new name given its value now (at ``stmt``'s
        adjoint): names it reads may change before the adjoint that reads it runs."""
        if isinstance(expr, ast.Constant):
            return expr
        level = self.builder.namer.fresh("level")
        self.levels.add(level)
        out.append(assign(level, self.builder.with_witnesses(expr, self._witnesses(stmt))))
        return name(level)

    def _uniform_contributions(
        self, stmt: ast.Assign, args: dict[str, ast.expr], level: ast.expr, out: list[ast.stmt]
    ) -> tuple[dict[str, ast.expr], bool]:
        """The contributions of ``stmt``'s elementwise adjoint that may read the scalar
        ``level`` its result's adjoint is in every element, and whether all may (if not,
        the others read it as an array). A contribution that reads an operand with the
        result's shape (or the result) has that shape with the scalar too; one that
        reads only scalars is passed on as its operand's uniform adjoint, where the
        operand has the result's shape and may hold one (:meth:`_uniform_candidates`)."""
        facts, builder = self.facts, self.builder
        op = facts.ops[stmt]
        full = {op.target} | {
            a.id for a in op.args.values() if isinstance(a, ast.Name) and facts.fills(a, stmt)
        }
        planned: dict[str, ast.expr] = {}
        passed: dict[str, ast.expr] = {}
        whole = True
        for param, atom in op.diff_args:
            if not (isinstance(atom, ast.Name) and atom.id in self.active):
                continue
            symbols = builder.symbols(copy_tree(level), op.target)
            ctx = dataclasses.replace(op.ctx, args=args, param=param, symbols=symbols)
            contribution = instantiate(op.rule.vjp[param], ctx)
            read = {
                builder.primal_of.get(n.id, n.id)
                for n in ast.walk(contribution)
                if isinstance(n, ast.Name)
            }
            if read & full:
                planned[param] = contribution
            elif (
                self._scalar(contribution)
                and atom.id in full
                and atom.id in self.uniform_ok
                and atom.id not in passed
            ):
                passed[atom.id] = contribution
            else:
                whole = False
        reads = Counter(a.id for _, a in op.diff_args if isinstance(a, ast.Name))
        for u, contribution in passed.items():
            if reads[u] == 1:  # (x * x: one form for both of x's adjoints)
                self.uniform[u] = self._frozen(contribution, stmt, out)
            else:
                whole = False
        return planned, whole

    def _shape_only_seed(self, expr: ast.expr, stmt: ast.Assign) -> tuple[ast.expr, list[ast.stmt]]:
        """``np.full_like(t, g)`` (and ``np.size(t)``) read only the shape and dtype of a
        temporary: where that shape can be computed from operands the adjoint has anyway,
        read it off them, so the primal need not compute ``t`` (the value of
        ``np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + ...)`` is never needed for its
        gradient). The dtype comes from an active operand, as for other witnesses."""
        builder = self.builder
        before: list[ast.stmt] = []
        for node in ast.walk(expr):
            if not (
                _plain_full_like(node)
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in self.norm.temps
            ):
                continue
            u = node.args[0].id
            shape = self._shape_of(u, stmt, depth=0, deep=True)
            if shape is None:
                continue
            leaves = [
                n.args[0].id
                for n in ast.walk(shape)
                if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "shape"
                and isinstance(n.args[0], ast.Name)
            ]
            active = [n for n in leaves if n in self.facts.active]
            if not active:
                continue
            sizes = [  # np.size(t): the product of that shape
                other
                for other in ast.walk(expr)
                if isinstance(other, ast.Call)
                and isinstance(other.func, ast.Attribute)
                and other.func.attr == "size"
                and len(other.args) == 1
                and isinstance(other.args[0], ast.Name)
                and other.args[0].id == u
            ]
            plain = (
                isinstance(shape, ast.Call)
                and isinstance(shape.func, ast.Attribute)
                and shape.func.attr == "shape"
            )
            if sizes and not plain:
                named = builder.namer.fresh("shape")  # computed once, read twice
                before.append(assign(named, shape))
                shape = name(named)
            node.args[0] = name(active[0])
            node.keywords = [ast.keyword(arg="shape", value=shape)]
            for other in sizes:
                other.func = ast.Attribute(value=name(builder.math), attr="prod", ctx=ast.Load())
                other.args = [copy_tree(shape)]
        return expr, before

    # -- shapes without recording values ------------------------------------------------
    def _resolve_shape_reads(self) -> None:
        """``unbroadcast(g, u)`` reads only the shape of ``u``. Where ``u`` would
        otherwise have to be recorded, compute its shape from operands the
        adjoint has anyway (``matmul_shape(np.shape(h), np.shape(W))``)."""
        for stmt, u in self.shape_reads:
            if u in self.remat:
                self.shapes[(id(stmt), u)] = self.builder.xp_call("shape", copy_tree(self.remat[u]))
                continue
            if self._unchanged(u, stmt, stmt):
                continue
            shape = self._shape_of(u, stmt, depth=0)
            if shape is None:
                self.needed.add(u)
            else:
                self.shapes[(id(stmt), u)] = shape

    def _unchanged(self, n: str, since: ast.stmt, until: ast.stmt) -> bool:
        """Whether ``n`` holds, when ``until``'s adjoint runs, the value it had
        when ``since`` ran (``since`` at or before ``until``, in one block)."""
        if n in self.facts.loop_indices:
            return n in self.loops_around.get(id(until), [])
        defs = self.facts.definitions.get(n, [])
        if not defs:
            return True  # a parameter never assigned, or a global
        start, end = self.position[id(since)], self.position[id(until)]
        if n in self.needed:  # recorded: restored to its value just after `until`
            return all(not start < self.position[id(d)] <= end for d, _ in defs)
        # not recorded: it keeps the last value it was given, so it must be given one
        # value only, before `since`, outside loops
        return len(defs) == 1 and defs[0][1] == 0 and self.position[id(defs[0][0])] < start

    def _shape_of(self, u: str, at: ast.Assign, depth: int, deep: bool = False) -> ast.expr | None:
        """An expression for the shape ``u`` had, valid where ``at``'s adjoint runs.
        ``deep``: read the shapes of temporaries' operands rather than of the
        temporaries, where it can (so the temporaries need not be computed)."""
        if depth > 3:
            return None
        defs = self.facts.definitions.get(u, [])
        if len(defs) != 1 or not isinstance(defs[0][0], ast.Assign) or u in self.params:
            return None  # a parameter's first value comes from the caller
        definition = defs[0][0]
        if self.blocks_of.get(id(definition)) != self.blocks_of.get(id(at)):
            return None
        if self.position[id(definition)] > self.position[id(at)]:
            return None  # read before it is given a value: the previous iteration's
        op = self.facts.ops[definition]
        if op.rule is None or op.ctx is None:
            return None
        shapes = []
        for param in op.rule.params:
            atom = op.args.get(param)
            if isinstance(atom, ast.Constant):
                shapes.append(ast.Tuple(elts=[], ctx=ast.Load()))
            elif isinstance(atom, ast.Name) and atom.id in self.remat:
                shapes.append(self.builder.xp_call("shape", copy_tree(self.remat[atom.id])))
            elif isinstance(atom, ast.Name) and self._unchanged(atom.id, definition, at):
                inner = None
                if deep and atom.id in self.norm.temps:
                    inner = self._shape_of(atom.id, at, depth + 1, deep)
                shapes.append(inner or self.builder.xp_call("shape", name(atom.id)))
            elif isinstance(atom, ast.Name):
                inner = self._shape_of(atom.id, at, depth + 1, deep)
                if inner is None:
                    return None
                shapes.append(inner)
            else:
                return None
        if op.rule.elementwise:
            return self._broadcast(shapes)
        if op.key in _MATMULS:
            return self.builder.call("matmul_shape", *shapes)
        return None

    def _broadcast(self, shapes: list[ast.expr]) -> ast.expr:
        """``np.broadcast_shapes`` of ``shapes``, nested calls flattened, repeats and
        ``()`` left out."""
        flat: list[ast.expr] = []
        for s in shapes:
            if (
                isinstance(s, ast.Call)
                and isinstance(s.func, ast.Attribute)
                and s.func.attr == "broadcast_shapes"
            ):
                flat.extend(s.args)
            elif not (isinstance(s, ast.Tuple) and not s.elts):
                flat.append(s)
        unique: list[ast.expr] = []
        for s in flat:
            if all(ast.dump(s) != ast.dump(t) for t in unique):
                unique.append(s)
        if not unique:
            return ast.Tuple(elts=[], ctx=ast.Load())
        if len(unique) == 1:
            return unique[0]
        return self.builder.xp_call("broadcast_shapes", *unique)

    def _witnesses(self, stmt: ast.Assign) -> Iterable[str]:
        """Names whose shape may stand in for another's at ``stmt``: their value
        when its adjoint runs is the value they had when it ran."""
        if self._witness_facts is None:
            # per name, once: its last definition's position, whether it is defined at most
            # once and outside loops, and whether it is bound on every path (a parameter,
            # or defined by a statement outside any branch)
            top = {id(s) for s in self.norm.tree.body}
            table = []
            for n in self.named:
                defs = self.facts.definitions.get(n, [])
                last = max((self.position[id(s)] for s, _ in defs), default=-1)
                once = len(defs) <= 1 and all(d == 0 for _, d in defs)
                if not defs or any(id(s) in top for s, _ in defs):
                    table.append((n, last, once))
            self._witness_facts = table
            self._in_loop_witnesses = [n for n, _, once in table if once]
        if self.depth[id(stmt)] > 0:
            return self._in_loop_witnesses
        return _DefinedBefore(self._witness_facts, self.position[id(stmt)])

    # -- the function --------------------------------------------------------------------------
    def function(self, kind: str) -> ast.FunctionDef:
        facts, builder, norm = self.facts, self.builder, self.norm
        self.last_origin = None
        primal = self._primal(self.core, 0)
        out = facts.returned
        out_active = isinstance(out, ast.Name) and out.id in self.active
        if isinstance(out, ast.Name):
            seed_name = builder.adjoint(out.id)
        else:
            seed_name = builder.namer.fresh("out_bar")
        body: list[ast.stmt] = []
        body.extend(assign(v, ast.Constant(None)) for v in self.preset)
        body.extend(assign(c, ast.Constant(0)) for c in sorted(self.counter_presets))
        top = norm.tree.body
        unbound = [  # adjoints of names some paths never assign: bound, to None
            v
            for v in sorted(self.active - set(self.params) - self.definite)
            if self.home.get(v) == id(top) and v not in self.preset
        ]
        body.extend(assign(v, ast.Constant(None)) for v in unbound)
        body.extend(primal)
        if (
            kind == "value_and_grad"
            and isinstance(out, ast.Name)
            and len(facts.definitions.get(out.id, [])) > 1
        ):
            value = builder.namer.fresh(
                f"{out.id}_value"
            )  # before the adjoint restores older values
            body.append(assign(value, name(out.id)))
            out = name(value)
        if kind in ("grad", "value_and_grad") and facts.shape(out).rank is None:
            body.append(ast.Expr(value=builder.call("check_scalar", copy_tree(out))))
        if kind == "vjp":
            check = builder.call("check_cotangent", name(seed_name), copy_tree(out))
            body.append(ast.Expr(value=check))
        if kind == "split":  # the value the caller gets: not changed by the adjoint's restores
            body.append(marker(self._kept(copy_tree(out), body)))
        for v in self.wrt + sorted(self.active - set(self.wrt)):
            if self.home.get(v) == id(top) and v != getattr(facts.returned, "id", None):
                body.append(self._zero(v, maybe_unbound=v in unbound))
        if kind in ("grad", "value_and_grad") and out_active:
            body.append(assign(seed_name, ast.Constant(1.0)))
        adjoint, _ = self._adjoint(self.core, top, 0)
        body.extend(adjoint)
        if self.tape:
            body.insert(0, assign(self.tape, ast.List(elts=[], ctx=ast.Load())))
        grads: list[ast.expr] = []
        for w in self.wrt:
            if w in self.active or (out_active and w == out.id):
                grads.append(name(builder.adjoint(w)))
            else:
                grads.append(builder.xp_call("zeros_like", name(w)))
        result: ast.expr = grads[0] if len(grads) == 1 else ast.Tuple(elts=grads, ctx=ast.Load())
        value: ast.expr = copy_tree(out)
        if norm.aux is not None:  # has_aux: (value, aux) and (gradient, aux)
            aux = self._kept(name(norm.aux), body, before=adjoint)
            value = ast.Tuple(elts=[value, aux], ctx=ast.Load())
            if kind == "grad":
                result = ast.Tuple(elts=[result, copy_tree(aux)], ctx=ast.Load())
        if kind == "value_and_grad":
            result = ast.Tuple(elts=[value, result], ctx=ast.Load())
        body.append(ast.Return(value=result))
        extra = [seed_name] if kind in ("vjp", "split") else []
        return builder.function(f"{kind}_{norm.tree.name}", self.params + extra, body)


class _DefinedBefore:
    """The witness names defined before a position, produced as they are read (a
    witness is looked for only where a shape-only call needs one, and the first that
    fits ends the search: a list per statement made the pass quadratic)."""

    def __init__(self, table: list[tuple[str, int, bool]], position: int) -> None:
        self.table, self.position = table, position

    def __iter__(self) -> Iterator[str]:
        position = self.position
        return (n for n, last, _ in self.table if last < position)
