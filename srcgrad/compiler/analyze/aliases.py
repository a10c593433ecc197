"""Analysis: which names may share memory, and the in-place changes srcgrad cannot follow.

In:  a :class:`~srcgrad.normalize.Normalized` function and its
:class:`~srcgrad.facts.Facts` (which names hold lists, ranks).
Out: :class:`Aliases`: for every statement that changes an array or a list in place
(``y[i] = v``, ``xs.append(v)``, and ``x += v``, which normalize spells ``x = x + v``),
the memory each name may refer to just before it; and the problems found there.

Memory is a set of abstract places: one for each parameter (the caller's data, whatever
it holds), one for each global, one for each statement that makes a new array or list.
A name may refer to several (it was given values on several paths, or by a call that may
return any of its arguments). Copies and views share their operand's places (``y = x``,
``x[0:2]``, ``x.T``, ``np.reshape(x, s)``, ``np.asarray(x)``, a user function's result,
anything not known to be new); arithmetic, ufuncs, reductions, ``.copy()`` and array
constructors make new ones. A list holds places too: ``xs[0]`` shares what was put in
``xs``.

numpy changes an array in place for every name that shares it; srcgrad's lowering, and
so its derivative code, gives the written name a new value alone. An in-place change is
therefore differentiated only where no other name sharing the memory is read afterwards,
and where the memory is not the caller's (an argument's) or a global's::

    y = x.copy()                         y = x
    z = y[0:2]                           x += 1            # refused: y shares x's
    z *= 3              # fine: y is     return np.sum(y)  # array, and numpy
    return np.sum(z)    # not read again                   # changes y too

Places merge where paths meet: after ``a, c = c, a`` in a loop, ``a`` and ``c`` may each
be either array. Beside the places, the analysis therefore keeps which pairs of names may
share memory (a relation between names, not places: a swap keeps ``a`` and ``c`` apart on
every path), and two names share memory only where both say so.

Python and numpy numbers are immutable: ``s = 0.0; s += v`` (``+=`` on any rank-0
value but a 0-d array an array constructor made) is plain rebinding, never a problem.
"""

from __future__ import annotations

import ast
import inspect
import re
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..normalize.expressions import is_static
from ..normalize.lower import Normalized
from ..parse import source_text
from .classify import is_user_function
from .facts import Facts, is_append, is_setitem, popped, resolve_static, walk_block


@dataclass(frozen=True)
class Place:
    """An abstract piece of memory: an argument's, a global's, or one a statement made.
    A statement in a loop makes a new array on every trip: the one it made last is
    ``old=False``, all earlier ones together ``old=True`` (so ``prev = y; y = y * 2``
    in a loop keeps ``prev`` and ``y`` apart)."""

    kind: str  # "argument", "global" or "new"
    name: str  # the parameter's or the global's name ("" for a new one)
    site: int = 0  # for a new one: id of the statement that makes it
    old: bool = False


@dataclass
class Problem:
    """An in-place change srcgrad cannot follow, at a core statement."""

    stmt: ast.stmt
    message: str


@dataclass
class Aliases:
    """What :func:`aliases` found."""

    #: for each statement changing something in place (by id): each name's places before it
    places: dict[int, dict[str, frozenset[Place]]] = field(default_factory=dict)
    #: for the same statements: each name's names that may share memory with it (what one
    #: refers to or holds may be what the other refers to or holds)
    sharing: dict[int, dict[str, frozenset[str]]] = field(default_factory=dict)
    #: what a list (or a caller's container) holds, by its place
    elements: dict[Place, frozenset[Place]] = field(default_factory=dict)
    #: statements whose new value may hold new arrays of its own (a call's tuple result)
    fresh_sites: set[int] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    #: writes ``y[i] = v`` and ``xs.append(v)`` (by id) into memory some other name refers
    #: to at some time, or a list it is in (``prev = y; y = f(y); prev[i] = v``): reverse
    #: mode undoes them, since a value it recorded (the old ``y``) may be that memory
    shared_writes: set[int] = field(default_factory=set)

    #: each name's places at the end of the function
    final: dict[str, frozenset[Place]] = field(default_factory=dict)
    #: the parameters whose memory the function may change in place (for its callers)
    writes_arguments: set[str] = field(default_factory=set)

    def shared(self, stmt: ast.stmt, a: str, b: str) -> bool:
        """Whether names ``a`` and ``b`` may refer to the same memory just before ``stmt``
        (a statement that changes something in place)."""
        at = self.places.get(id(stmt), {})
        return bool(at.get(a, frozenset()) & at.get(b, frozenset())) and self.related(stmt, a, b)

    def related(self, stmt: ast.stmt, a: str, b: str) -> bool:
        """Whether the names ``a`` and ``b`` may share memory just before ``stmt`` by the
        relation between names (which a swap keeps apart; places alone do not)."""
        return b in self.sharing.get(id(stmt), {}).get(a, frozenset())

    def reach(self, places: frozenset[Place]) -> frozenset[Place]:
        """``places`` and everything they hold, however deep."""
        out = frozenset(places)
        while True:
            more = out.union(*(self.elements.get(p, frozenset()) for p in out))
            more |= {
                Place("new", "[*]", p.site, p.old)
                for p in out
                if p.kind == "new" and not p.name and p.site in self.fresh_sites
            }
            if more == out:
                return out
            out = more

    def ends_in(self, name: str, writes: list[ast.stmt]) -> bool:
        """Whether the value ``name`` has at the end may be, view or hold memory that one
        of ``writes`` (``y[i] = v`` statements) writes into."""
        mine = self.reach(self.final.get(name, frozenset()))
        for stmt in writes:
            y = stmt.targets[0].value.id
            if _overlap(mine, self.places.get(id(stmt), {}).get(y, frozenset())):
                return True
        return False


#: numpy functions (besides ufuncs) whose result is a new array
_NEW_ARRAYS = {
    np.array,
    np.copy,
    np.zeros,
    np.ones,
    np.empty,
    np.full,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.full_like,
    np.arange,
    np.linspace,
    np.eye,
    np.identity,
    np.sum,
    np.mean,
    np.prod,
    np.std,
    np.var,
    np.max,
    np.min,
    np.amax,
    np.amin,
    np.cumsum,
    np.cumprod,
    np.dot,
    np.outer,
    np.inner,
    np.tensordot,
    np.where,
    np.clip,
    np.concatenate,
    np.stack,
    np.hstack,
    np.vstack,
    np.tile,
    np.repeat,
    np.sort,
    np.diff,
    np.trace,
    np.kron,
    np.cross,
    np.around,
    np.round,
    np.fix,
    np.sinc,
    np.nan_to_num,
    np.linalg.inv,
    np.linalg.solve,
    np.linalg.det,
    np.linalg.slogdet,
    np.linalg.cholesky,
    np.linalg.eigh,
    np.linalg.svd,
    np.linalg.qr,
    np.linalg.pinv,
    np.linalg.norm,
}
#: functions that make arrays, 0-d ones too (where arithmetic would give a number)
_ARRAY_MAKERS = (
    np.array,
    np.asarray,
    np.copy,
    np.zeros,
    np.ones,
    np.empty,
    np.full,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.full_like,
)
#: array methods whose result is a new array (or a number)
_NEW_FROM_METHODS = frozenset(
    "copy astype sum mean prod std var max min cumsum cumprod dot flatten tolist item "
    "all any argmax argmin argsort nonzero repeat take trace round clip".split()
)
#: srcgrad's runtime helpers (in generated code differentiated again): the positions of
#: the arguments each one's result may be, view or hold (absent: any of them)
_HELPER_RESULTS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(
        "index_adjoint index_adjoint_add zero_adjoint zeros_seq add_seq matmul_vjp_a "
        "matmul_vjp_b dot_vjp_a dot_vjp_b extremum_vjp extremum_jvp tensordot_vjp_a "
        "tensordot_vjp_b inner_vjp_a inner_vjp_b cumsum_vjp trace_vjp pow_log".split(),
        (),
    ),
    **dict.fromkeys(
        "unbroadcast unbroadcast_to broadcast_like unreduce untranspose kept_writes unstack "
        "split_like spread sum_like add_at check_scalar".split(),
        (0,),
    ),
    "set_at": (0, 2),
}
#: attributes that are values of their own, not views of the array
_VALUE_ATTRIBUTES = frozenset("shape size ndim dtype itemsize nbytes".split())
#: builtins whose result never shares memory with their arguments
_PLAIN_BUILTINS = frozenset("len range float int bool abs round str repr isinstance".split())


def aliases(norm: Normalized, facts: Facts) -> Aliases:
    """Places of every name before each in-place change, and the problems there."""
    flow = _Flow(norm, facts)
    flow.run()
    result = Aliases(
        places=flow.at,
        sharing=flow.sharing_at,
        elements=flow.elements,
        fresh_sites=flow.fresh_sites,
        final=flow.final,
    )
    check = _Check(norm, facts, result, flow.call_writes, flow.out_writes)
    result.problems = check.run()
    for stmt, _ in walk_block(norm.tree.body[:-1]):
        for written in check.written(stmt):
            result.writes_arguments |= {
                p.name
                for p in result.places[id(stmt)].get(written, frozenset())
                if p.kind == "argument"
            }
    for stmt, _ in walk_block(norm.tree.body[:-1]):
        if is_setitem(stmt) or is_append(stmt):
            y = stmt.targets[0].value.id if is_setitem(stmt) else stmt.value.func.value.id
            written = result.places[id(stmt)].get(y, frozenset())
            if any(
                names - {y} and _overlap(result.reach(frozenset({place})), written)
                for place, names in flow.referrers.items()
            ):
                result.shared_writes.add(id(stmt))
    return result


class _Flow:
    """The places each name may refer to, forward through the function (a join of the
    branches at each merge; loops to a fixed point; what lists hold, to a fixed point
    over the whole function)."""

    def __init__(self, norm: Normalized, facts: Facts) -> None:
        self.norm = norm
        self.facts = facts
        self.env = norm.parsed.env
        self.params = [a.arg for a in norm.tree.args.args]
        self.local = set(self.params) | set(facts.definitions) | facts.loop_indices
        self.elements: dict[Place, frozenset[Place]] = {}
        self.at: dict[int, dict[str, frozenset[Place]]] = {}
        self.sharing_at: dict[int, dict[str, frozenset[str]]] = {}
        self.fresh_sites: set[int] = set()  # statements whose new value holds new arrays
        #: for a call whose result is a tuple display in the callee (``return a, b``): what
        #: each position may be, view or hold, by the call's site (``t[0]`` and ``t[1]`` apart)
        self.positions: dict[int, list[frozenset[Place]]] = {}
        self.visited: set[int] = set()  # statements visited once (see age)
        self.summaries: dict[tuple, Any] = {}  # user functions' results, by (id, ranks)
        self.final: dict[str, frozenset[Place]] = {}  # each name's places at the end
        self.referrers: dict[Place, set[str]] = {}  # the names a place was ever given to
        self.made_at: dict[int, set[Place]] = {}  # those places by site (the latest array)
        #: calls to user functions that change arguments in place: the callee, and the
        #: (parameter, argument) pairs it changes
        self.call_writes: dict[int, tuple[Any, list[tuple[str, ast.expr]]]] = {}
        #: calls that change an argument in place (out=, np.copyto, .sort()): which one
        self.out_writes: dict[int, ast.expr] = {}
        self.grew = False

    def run(self) -> None:
        for p in self.params:  # whatever an argument holds is the caller's too
            place = Place("argument", p)
            self.elements[place] = frozenset({place})
            self.referrers[place] = {p}
        for _ in range(20):
            self.grew = False
            state: dict[str, Any] = {p: frozenset({Place("argument", p)}) for p in self.params}
            outside = {*self.params, _OUTSIDE}  # the caller's arrays may be one another's
            state[_SHARING] = {p: frozenset(outside - {p}) for p in outside}
            final = self.block(self.norm.tree.body[:-1], state, [])
            final.pop(_SHARING)
            self.final = final
            if not self.grew:
                return

    # -- statements ------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], state: dict, breaks: list) -> dict:
        for stmt in body:
            state = self.statement(stmt, state, breaks)
        return state

    def statement(self, stmt: ast.stmt, state: dict, breaks: list) -> dict:
        if is_setitem(stmt):
            self.record(stmt, state)
            array = stmt.targets[0].value.id
            if array in self.facts.sequences:  # ys[i] = v: the list holds v now
                self.hold(state.get(array, frozenset()), self.of(stmt.value, state))
                return self.holds_too(state, array, stmt.value)
            return state
        if is_append(stmt):
            self.record(stmt, state)
            xs = stmt.value.func.value.id
            self.hold(state.get(xs, frozenset()), self.of(stmt.value.args[0], state))
            return self.holds_too(state, xs, stmt.value.args[0])
        if isinstance(stmt, ast.Assign):
            target = stmt.targets[0].id
            if popped(stmt) is not None:  # v = xs.pop(): xs changes in place
                self.record(stmt, state)
            if stmt in self.norm.updates:  # x += v: numpy's x is the same array after it
                self.record(stmt, state)
                source = self.norm.updates[stmt]
                value = state.get(source, frozenset())
                self.refer(target, value)
                sharers = _sharers_of(state, [source])
                return {**_rebound(state, target, sharers), target: value}
            state = self.age(stmt, state)
            value = self.value(stmt, state)
            self.refer(target, value)
            sharers = self.sharers(stmt, value, state)
            return {**_rebound(state, target, sharers), target: value}
        if isinstance(stmt, ast.If):
            yes = self.block(stmt.body, dict(state), breaks)
            no = self.block(stmt.orelse, dict(state), breaks)
            return _join(yes, no)
        if isinstance(stmt, (ast.For, ast.While)):
            entry = dict(state)
            if isinstance(stmt, ast.For):
                entry = _rebound(entry, stmt.target.id, frozenset())
                entry[stmt.target.id] = frozenset()  # an integer
            current = entry
            inner: list[dict] = []
            for _ in range(50):
                inner = []
                out = self.block(stmt.body, dict(current), inner)
                joined = _join(entry, out)
                if joined == current:
                    break
                current = joined
            for left in inner:
                current = _join(current, left)
            return current
        if isinstance(stmt, ast.Break):
            breaks.append(dict(state))
        return state

    def age(self, stmt: ast.stmt, state: dict) -> dict:
        """Before ``stmt`` makes a new array: the one it made before is an earlier one now,
        for every name and list referring to it (and its elements' places likewise)."""
        site = id(stmt)
        if site not in self.visited:  # (its first visit: nothing refers to what it makes)
            self.visited.add(site)
            return state

        def older(places: frozenset[Place]) -> frozenset[Place]:
            if not any(p.site == site and not p.old for p in places):
                return places
            return frozenset(_aged(p) if p.site == site else p for p in places)

        recent = Place("new", "", site)
        if recent in self.elements:
            self.hold(frozenset({_aged(recent)}), self.elements[recent])
        holders: set[str] = set()  # (only a name once given one of its places may hold one)
        for place in self.made_at.get(site, ()):
            names = self.referrers[place]
            self.referrers.setdefault(_aged(place), set()).update(names)
            holders |= names
        changed = {k: older(state[k]) for k in holders if k in state}
        return {**state, **changed} if changed else state

    def record(self, stmt: ast.stmt, state: dict) -> None:
        """What holds just before a statement that changes something in place."""
        places = dict(state)
        self.sharing_at[id(stmt)] = places.pop(_SHARING)
        self.at[id(stmt)] = places

    def sharers(self, stmt: ast.Assign, places: frozenset[Place], state: dict) -> frozenset[str]:
        """The names the value an assignment gives (at ``places``) may share memory with:
        none for an array the statement makes that holds nothing; else the local names the
        expression reads, and those sharing theirs (a view, copy, element, or a call's
        result may be any of them), and the caller's memory where a global is read."""
        if all(p.kind == "new" and p.site == id(stmt) for p in places) and not any(
            self.elements.get(p) for p in places
        ):
            return frozenset()
        names = [
            n.id
            for n in ast.walk(stmt.value)
            if isinstance(n, ast.Name) and n.id in self.local and n.id in state
        ]
        if any(p.kind == "global" for p in self.reach(places)):
            names.append(_OUTSIDE)
        return _sharers_of(state, names)

    def holds_too(self, state: dict, container: str, item: ast.expr) -> dict:
        """``container`` (a list) holds ``item`` now: every name that may refer to or hold
        that list may share memory with what ``item`` may."""
        if not (isinstance(item, ast.Name) and item.id in state):
            return state
        adjacent = state[_SHARING]
        holders = {container} | adjacent.get(container, frozenset())
        grown = _sharers_of(state, [item.id])
        out = dict(adjacent)
        for h in holders:
            out[h] = out.get(h, frozenset()) | (grown - {h})
        for g in grown:
            out[g] = out.get(g, frozenset()) | (holders - {g})
        return {**state, _SHARING: out}

    def refer(self, name: str, places: frozenset[Place]) -> None:
        """``name`` refers to ``places`` now (kept for every place, at any time)."""
        for place in places:
            names = self.referrers.get(place)
            if names is None:
                names = self.referrers[place] = set()
                if place.site and not place.old:
                    self.made_at.setdefault(place.site, set()).add(place)
            names.add(name)

    def hold(self, containers: frozenset[Place], items: frozenset[Place]) -> None:
        """Containers at ``containers`` now hold (also) what is at ``items`` (and, as a
        statement's array may be an earlier one by the time the container is read, that
        too)."""
        items = items | {_aged(p) for p in items if p.site}
        for place in containers:
            old = self.elements.get(place, frozenset())
            if not items <= old:
                self.elements[place] = old | items
                self.grew = True

    def inside(self, places: frozenset[Place], index: ast.expr | None = None) -> frozenset[Place]:
        """What the containers at ``places`` hold (at ``index``, where it is a number): a
        call's new result (a tuple of new arrays, say) holds an array of its own at each
        position, ``t[0]`` and ``t[1]`` apart."""
        label = "[*]"
        if isinstance(index, ast.Constant) and type(index.value) is int:
            label = f"[{index.value}]"
        out: frozenset[Place] = frozenset()
        for place in places:
            fresh = place.kind == "new" and not place.name and place.site in self.fresh_sites
            positions = self.positions.get(place.site) if fresh else None
            if positions is not None and label != "[*]" and int(label[1:-1]) < len(positions):
                out |= positions[int(label[1:-1])]
            else:
                out |= self.elements.get(place, frozenset())
            if fresh:
                out |= {Place("new", label, place.site, place.old)}
        return out

    def reach(self, places: frozenset[Place]) -> frozenset[Place]:
        """``places`` and everything they hold, however deep."""
        out = frozenset(places)
        while True:
            more = out | self.inside(out)
            if more == out:
                return out
            out = more

    # -- values --------------------------------------------------------------------------
    def of(self, atom: ast.expr, state: dict) -> frozenset[Place]:
        """The places an atom refers to."""
        if isinstance(atom, ast.Name) and atom.id in self.local:
            return state.get(atom.id, frozenset())
        if isinstance(atom, (ast.Name, ast.Attribute)) and is_static(atom, self.env, self.local):
            value = resolve_static(atom, self.env)
            if _immutable(value):
                return frozenset()
            place = Place("global", ast.unparse(atom))
            self.elements.setdefault(place, frozenset({place}))
            return frozenset({place})
        return frozenset()

    def value(self, stmt: ast.Assign, state: dict) -> frozenset[Place]:
        """The places the value a core assignment gives refers to."""
        rhs = stmt.value
        new = Place("new", "", id(stmt))
        if isinstance(rhs, (ast.Constant, ast.Name)) or is_static(rhs, self.env, self.local):
            return self.of(rhs, state)
        if isinstance(rhs, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            operands = [n for n in ast.iter_child_nodes(rhs) if isinstance(n, ast.expr)]
            lists = [
                a for a in operands if isinstance(a, ast.Name) and a.id in self.facts.sequences
            ]
            held = self.inside(frozenset().union(*(self.of(a, state) for a in lists)))
            self.hold(frozenset({new}), held)  # (xs + ys: a new list of the same arrays)
            return frozenset({new})
        if isinstance(rhs, (ast.Tuple, ast.List)):
            self.hold(frozenset({new}), frozenset().union(*(self.of(e, state) for e in rhs.elts)))
            return frozenset({new})
        if isinstance(rhs, ast.Attribute):
            if rhs.attr in _VALUE_ATTRIBUTES:
                return frozenset()
            return self.of(rhs.value, state)  # .T, .real, .imag, .flat: views
        if isinstance(rhs, ast.Subscript):
            return self.item(rhs, new, state)
        if isinstance(rhs, ast.Call):
            return self.call(stmt, rhs, new, state)
        return self.unknown(list(ast.iter_child_nodes(rhs)), new, state)

    def item(self, rhs: ast.Subscript, new: Place, state: dict) -> frozenset[Place]:
        """``x[index]``: a view of an array (a copy where the index holds an array); an
        element of a list (a new list of the same elements for a slice)."""
        receiver = self.of(rhs.value, state)
        x = rhs.value.id if isinstance(rhs.value, ast.Name) else None
        parts = rhs.slice.elts if isinstance(rhs.slice, ast.Tuple) else [rhs.slice]
        if x in self.facts.sequences:
            if isinstance(rhs.slice, ast.Slice):
                self.hold(frozenset({new}), self.inside(receiver))
                return frozenset({new})
            return self.inside(receiver, rhs.slice)
        rank = self.facts.shape(rhs.value).rank if x is not None else None
        if rank is not None:  # an array
            if any(isinstance(p, ast.Name) and (self.facts.shape(p).rank or 0) > 0 for p in parts):
                return frozenset({new})  # advanced indexing copies
            numbers = [
                p
                for p in parts
                if (isinstance(p, ast.Constant) and type(p.value) is int)
                or (isinstance(p, ast.Name) and self.facts.shape(p).rank == 0)
            ]
            if len(numbers) == len(parts) == rank:
                return frozenset()  # one element: a number, not a view
            return receiver
        return receiver | self.inside(receiver, rhs.slice)

    def call(self, stmt: ast.Assign, rhs: ast.Call, new: Place, state: dict) -> frozenset[Place]:
        func = rhs.func
        operands = [*rhs.args, *(k.value for k in rhs.keywords)]
        changed = _changed_by_call(rhs, self.env, self.local)
        if changed is not None:  # out=y, np.fill_diagonal(y, v), y.sort(): y, in place
            self.record(stmt, state)
            self.out_writes[id(stmt)] = changed
        if any(  # np.array(x, copy=False), x.astype(t, copy=False): perhaps x itself
            k.arg == "copy" and not (isinstance(k.value, ast.Constant) and k.value.value is True)
            for k in rhs.keywords
        ):
            receiver = [func.value] if isinstance(func, ast.Attribute) else []
            return self.unknown([*receiver, *operands], new, state)
        if is_static(func, self.env, self.local):
            callee = resolve_static(func, self.env)
            module = getattr(callee, "__module__", None) or ""
            if isinstance(callee, np.ufunc) or _is_new_array(callee):
                return self.made(new)
            if module.startswith("scipy.special") or module == "math":
                return self.made(new)
            if getattr(callee, "__name__", None) in _PLAIN_BUILTINS and _is_builtin(callee):
                return frozenset()
            helper = getattr(callee, "__srcgrad_helper__", None)
            if helper is not None:  # generated code differentiated again
                shared = _HELPER_RESULTS.get(helper, range(len(rhs.args)))
                return self.unknown([rhs.args[i] for i in shared if i < len(rhs.args)], new, state)
            op = self.facts.ops.get(stmt)
            if is_user_function(callee) and op is not None and op.call_args is not None:
                return self.user_call(stmt, callee, op.call_args, new, state)
            # anything not known to make a new array may return an argument, or what one
            # holds
            return self.unknown(operands, new, state)
        assert isinstance(func, ast.Attribute)
        if func.attr in _NEW_FROM_METHODS:
            return self.made(new)
        if func.attr == "pop":  # an element of the list
            return self.inside(self.of(func.value, state))
        return self.unknown([func.value, *operands], new, state)

    def user_call(
        self, stmt: ast.stmt, callee: Any, args: list[ast.expr], new: Place, state: dict
    ) -> frozenset[Place]:
        """A call to a user's function: its result shares memory with the arguments its
        returned value may share (found by this analysis of its own code), and with
        nothing else; where that cannot be found, with any of them. Where it changes an
        argument in place, the call is an in-place change of that argument here."""
        ranks = tuple(self.facts.shape(a).rank if isinstance(a, ast.Name) else 0 for a in args)
        key = (id(callee), ranks)  # (the same call is visited on every pass)
        if key not in self.summaries:
            self.summaries[key] = _summary(callee, list(ranks))
        summary = self.summaries[key]
        params = _parameter_names(callee)
        if summary.writes:
            self.record(stmt, state)
            changed = [(params[i], args[i]) for i in sorted(summary.writes) if i < len(args)]
            self.call_writes[id(stmt)] = (callee, changed)
        if summary.returns is None:
            return self.unknown(list(args), new, state)
        if summary.positions is not None:  # a new tuple: each position its own
            per = [self.passed(args, i, g, state) for i, g in summary.positions]
            per = [p | {_aged(q) for q in p if q.site} for p in per]
            before = self.positions.get(new.site)
            if before is not None and len(before) == len(per):
                per = [a | b for a, b in zip(before, per)]
            if per != before:
                self.positions[new.site] = per
                self.grew = True
            self.made(new)
            self.hold(frozenset({new}), frozenset().union(*per))
            return frozenset({new})
        places = self.passed(args, summary.returns, summary.globals, state)
        self.made(new)
        self.hold(frozenset({new}), places)
        return places | {new}

    def passed(
        self, args: list[ast.expr], indices: set[int], globals_: set[Place], state: dict
    ) -> frozenset[Place]:
        """The places of the arguments at ``indices``, all they hold, and ``globals_``."""
        places: frozenset[Place] = frozenset(globals_)
        for i in indices:
            if i < len(args):
                places |= self.reach(self.of(args[i], state))
        return places

    def made(self, new: Place) -> frozenset[Place]:
        """A new array (or a tuple of new arrays, each its own)."""
        self.fresh_sites.add(new.site)
        return frozenset({new})

    def unknown(self, operands: list[Any], new: Place, state: dict) -> frozenset[Place]:
        """A value that may be new, or any operand, or anything an operand holds (and, if
        a list, may hold any of those)."""
        places: frozenset[Place] = frozenset()
        for a in operands:
            if isinstance(a, ast.expr):
                places |= self.of(a, state)
        reached = self.reach(places)
        self.made(new)
        self.hold(frozenset({new}), reached)
        return reached | {new}


#: user functions whose results are being summarized (a recursive call is not followed)
_SUMMARIZING: set[Any] = set()


@dataclass
class _Callee:
    """What a call to a user's function does to memory, for its caller."""

    returns: set[int] | None  # the parameters its result may share (None: any of them)
    globals: set[Place]  # the globals its result may share
    writes: set[int]  # the parameters whose memory it may change in place
    #: where the result is a new tuple (``return a, b``): what each position may share
    #: (parameters by position, and globals)
    positions: list[tuple[set[int], set[Place]]] | None = None


def _summary(func: Any, ranks: list[Any]) -> _Callee:
    """For a user's function called with arguments of these ranks: which parameters (by
    position) and globals its result may be, view or hold, and which parameters it may
    change in place, found by this analysis of its own code. Where that code cannot be
    analyzed (or is being analyzed already: recursion), its result may share any
    argument, and what it changes is read off its code (a write rooted at a parameter)."""
    params = _parameter_names(func)
    if func in _SUMMARIZING:
        return _Callee(None, set(), _written_parameters(func, params))
    _SUMMARIZING.add(func)
    try:
        from ..normalize.lower import normalize
        from ..parse import parse
        from . import analyze

        norm = normalize(parse(func))
        facts = analyze(norm, [], dict(zip(params, ranks)), check=False)
    except Exception:  # noqa: BLE001 (any problem there: assume the worst here)
        return _Callee(None, set(), _written_parameters(func, params))
    finally:
        _SUMMARIZING.discard(func)
    found = facts.aliases

    def shares(places: frozenset[Place]) -> tuple[set[int], set[Place]]:
        reached = found.reach(places)
        arguments = {params.index(p.name) for p in reached if p.kind == "argument"}
        return arguments, {p for p in reached if p.kind == "global"}

    value = norm.tree.body[-1].value
    returned: frozenset[Place] = frozenset()
    if isinstance(value, ast.Name):
        returned = found.final.get(value.id, frozenset())
    callee = _Callee(*shares(returned), {params.index(p) for p in found.writes_arguments})
    packed = _packed(norm.tree.body, found)
    if packed is not None:
        callee.positions = [shares(places) for places in packed]
    return callee


def _packed(body: list[ast.stmt], found: Aliases) -> list[frozenset[Place]] | None:
    """Where a function ends ``out = (a, b, ...); return out`` (a tuple display of names
    and constants): the places of each position."""
    if len(body) < 2 or not isinstance(body[-2], ast.Assign):
        return None
    pack, value = body[-2], body[-1].value
    target = pack.targets[0]
    if not (
        isinstance(value, ast.Name)
        and isinstance(target, ast.Name)
        and target.id == value.id
        and isinstance(pack.value, ast.Tuple)
    ):
        return None
    out = []
    for element in pack.value.elts:
        if isinstance(element, ast.Name) and element.id in found.final:
            out.append(found.final[element.id])
        elif isinstance(element, ast.Constant):
            out.append(frozenset())
        else:  # (a global, say: not followed position by position)
            return None
    return out


def _parameter_names(func: Any) -> list[str]:
    try:
        return list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return []


#: methods that change a list or an array in place
_CHANGING_METHODS = frozenset(
    "append extend insert pop remove clear sort reverse fill put resize itemset setfield "
    "update setdefault popitem partition".split()
)


def _written_parameters(func: Any, params: list[str]) -> set[int]:
    """The parameters (by position) whose memory a function's code visibly changes in
    place: an assignment into an item or slice, ``+=``, or a changing method, on a
    parameter or a name given one (or a view of one)."""
    try:
        tree = ast.parse(source_text(func))
    except (OSError, TypeError, SyntaxError):
        return set(range(len(params)))  # (no code to read: anything)
    roots = {p: p for p in params}  # name -> the parameter it may share memory with
    for _ in range(5):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, root = node.targets[0], _root(node.value)
                if isinstance(target, ast.Name) and root in roots:
                    roots.setdefault(target.id, roots[root])
    written = set()
    for node in ast.walk(tree):
        where = None
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in getattr(node, "targets", None) or [node.target]:
                if isinstance(target, ast.Subscript) or isinstance(node, ast.AugAssign):
                    where = _root(target)
                    if where in roots:
                        written.add(params.index(roots[where]))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _CHANGING_METHODS
        ):
            where = _root(node.func.value)
            if where in roots:
                written.add(params.index(roots[where]))
    return written


#: numpy functions that change their first argument in place (and return None)
_CHANGING_FUNCTIONS = tuple(
    f
    for f in (
        np.fill_diagonal,
        np.copyto,
        np.put,
        np.place,
        np.putmask,
        getattr(np, "put_along_axis", None),
        np.random.shuffle,
    )
    if f is not None
)


def _changed_by_call(call: ast.Call, env: dict, local: set[str]) -> ast.expr | None:
    """The argument a call changes in place: ``out=``'s, a changing method's receiver
    (``y.sort()``; ``xs.pop()`` is followed as such), a changing numpy function's first."""
    for k in call.keywords:
        if k.arg == "out" and not (isinstance(k.value, ast.Constant) and k.value.value is None):
            return k.value
    func = call.func
    if is_static(func, env, local):
        callee = resolve_static(func, env)
        ufunc_at = isinstance(getattr(callee, "__self__", None), np.ufunc) and (
            getattr(callee, "__name__", None) == "at"
        )
        if (ufunc_at or any(callee is f for f in _CHANGING_FUNCTIONS)) and call.args:
            return call.args[0]  # (np.add.at(y, i, v), np.fill_diagonal(y, v))
        return None
    if isinstance(func, ast.Attribute) and func.attr == "shuffle" and call.args:
        return call.args[0]  # rng.shuffle(y)
    if isinstance(func, ast.Attribute) and func.attr in _CHANGING_METHODS - {"pop", "append"}:
        return func.value
    return None


def _root(node: ast.expr) -> str | None:
    """The name an expression is an item, slice, attribute or method result of."""
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _aged(place: Place) -> Place:
    return Place(place.kind, place.name, place.site, old=True)


def _overlap(a: frozenset[Place], b: frozenset[Place]) -> bool:
    """Whether two sets of places share one (an element ``[*]`` of a call's new result may
    be any of its elements ``[0]``, ``[1]``...)."""
    if a & b:
        return True
    wild = {(p.site, p.old) for p in a | b if p.name == "[*]"}
    if not wild:
        return False
    sides = [{(p.site, p.old) for p in s if p.name.startswith("[")} for s in (a, b)]
    return bool(sides[0] & sides[1] & wild)


def _join(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        if k == _SHARING:
            out[k] = _join(out.get(k, {}), v)
        else:
            out[k] = out.get(k, frozenset()) | v
    return out


#: the state's key for the relation between names (``name -> names that may share memory
#: with it``, symmetric), and the name standing for the caller's and globals' memory
_SHARING = "<sharing>"
_OUTSIDE = "<outside>"


def _sharers_of(state: dict, names: list[str]) -> frozenset[str]:
    """``names`` and every name that may share memory with one of them."""
    adjacent = state[_SHARING]
    out = set(names)
    for n in names:
        out |= adjacent.get(n, frozenset())
    return frozenset(out)


def _rebound(state: dict, target: str, sharers: frozenset[str]) -> dict:
    """``state`` after ``target`` is given a value that may share memory with ``sharers``
    (and with nothing else)."""
    adjacent = state[_SHARING]
    sharers = sharers - {target}
    out = dict(adjacent)
    for n in adjacent.get(target, frozenset()) - sharers:
        out[n] = out[n] - {target}
    for n in sharers - adjacent.get(target, frozenset()):
        out[n] = out.get(n, frozenset()) | {target}
    if sharers:
        out[target] = sharers
    else:
        out.pop(target, None)
    return {**state, _SHARING: out}


def _immutable(value: Any) -> bool:
    """Whether a global's value can never be changed in place (numbers, strings, modules,
    functions, classes): it refers to no memory an in-place change could reach."""
    return (
        value is None
        or callable(value)
        or isinstance(
            value, (bool, int, float, complex, str, bytes, np.generic, types.ModuleType, range)
        )
    )


def _is_new_array(callee: Any) -> bool:
    try:
        return callee in _NEW_ARRAYS
    except TypeError:  # unhashable
        return False


def _is_builtin(callee: Any) -> bool:
    return getattr(callee, "__module__", None) == "builtins" or isinstance(
        callee, types.BuiltinFunctionType
    )


# -- the check -----------------------------------------------------------------------------


class _Check:
    """At each in-place change: the memory it changes must not be the caller's, and no
    other name that shares it may be read afterwards."""

    def __init__(
        self,
        norm: Normalized,
        facts: Facts,
        found: Aliases,
        call_writes: dict[int, Any],
        out_writes: dict[int, ast.expr],
    ) -> None:
        self.norm = norm
        self.facts = facts
        self.found = found
        self.call_writes = call_writes
        self.out_writes = out_writes
        self.user_names = {
            n.id for n in ast.walk(norm.parsed.tree) if isinstance(n, ast.Name)
        } | set(norm.parsed.params)
        self.live_after: dict[int, set[str]] = {}
        self.sites = {id(stmt): stmt for stmt in facts.ops}

    def run(self) -> list[Problem]:
        body = self.norm.tree.body
        self.live(body[:-1], set(_reads(body[-1])), set())
        problems = []
        for stmt, _ in walk_block(body[:-1]):
            if id(stmt) not in self.found.places:
                continue
            problem = self.check(stmt)
            if problem is not None:
                problems.append(Problem(stmt, problem))
        return problems

    # -- liveness ------------------------------------------------------------------------
    def live(self, body: list[ast.stmt], after: set[str], exit_live: set[str]) -> set[str]:
        """Names read after each statement before being given a new value (recorded in
        ``live_after``); returns the names live before ``body``."""
        live = set(after)
        for stmt in reversed(body):
            self.live_after[id(stmt)] = set(live)
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                live = (live - {stmt.targets[0].id}) | set(_reads(stmt.value))
            elif isinstance(stmt, ast.If):
                yes = self.live(stmt.body, live, exit_live)
                no = self.live(stmt.orelse, live, exit_live)
                live = yes | no | set(_reads(stmt.test))
            elif isinstance(stmt, (ast.For, ast.While)):
                header = set(_reads(stmt.iter if isinstance(stmt, ast.For) else stmt.test))
                start: set[str] = set()
                for _ in range(50):
                    again = self.live(stmt.body, live | start | header, live)
                    if isinstance(stmt, ast.For):
                        again = again - {stmt.target.id}
                    if again <= start:
                        break
                    start |= again
                live = live | start | header
            elif isinstance(stmt, ast.Break):
                live = set(exit_live)
            else:  # y[i] = v, xs.append(v): reads everything, gives nothing a new value
                live = live | set(_reads(stmt))
        return live

    # -- one in-place change -------------------------------------------------------------
    def written(self, stmt: ast.stmt) -> list[str]:
        """The names whose memory an in-place statement changes (none for ``+=`` on a
        number, which rebinds it)."""
        if id(stmt) not in self.found.places:
            return []
        at = self.found.places[id(stmt)]
        if id(stmt) in self.out_writes:
            out = self.out_writes[id(stmt)]
            return [out.id] if isinstance(out, ast.Name) else []
        if id(stmt) in self.call_writes:
            _, changed = self.call_writes[id(stmt)]
            return [a.id for _, a in changed if isinstance(a, ast.Name)]
        if stmt in self.norm.updates:
            written = self.norm.updates[stmt]
            rank = self.facts.shape(ast.Name(id=written)).rank
            if rank == 0 and not any(self.zero_d(p) for p in at.get(written, frozenset())):
                return []
            return [written]
        if is_append(stmt) or popped(stmt) is not None:
            return [popped(stmt) or stmt.value.func.value.id]
        return [stmt.targets[0].value.id]

    def check(self, stmt: ast.stmt) -> str | None:
        at = self.found.places[id(stmt)]
        if id(stmt) in self.out_writes:
            out = self.out_writes[id(stmt)]
            name = self.describe(out.id) if isinstance(out, ast.Name) else "an array"
            return (
                f"{self.what(stmt)} changes {name} in place, which srcgrad does not follow: "
                "compute a new array instead (leave out `out=` and assign the result; "
                "`np.sort(y)` for `y.sort()`; item assignment into a copy, `D = D.copy()` "
                "then `D[i, j] = v`, for np.fill_diagonal and np.copyto)."
            )
        if id(stmt) in self.call_writes:
            return self.call_message(stmt)
        if stmt in self.norm.updates:
            written = self.norm.updates[stmt]
            rank = self.facts.shape(ast.Name(id=written)).rank
            if rank == 0 and not any(self.zero_d(p) for p in at.get(written, frozenset())):
                return None  # a number: += rebinds it, in numpy too
            exempt = {written, stmt.targets[0].id}
        elif is_append(stmt) or popped(stmt) is not None:
            written = popped(stmt) or stmt.value.func.value.id
            exempt = {written, stmt.targets[0].id} if popped(stmt) else {written}
        else:
            written = stmt.targets[0].value.id
            exempt = {written}
        places = at.get(written, frozenset())
        if not places:
            return None
        live = self.live_after.get(id(stmt), set())
        for other in sorted(live - exempt):  # (a list holding the array sees it too)
            if not self.found.related(stmt, written, other):
                continue
            if _overlap(self.found.reach(at.get(other, frozenset())), places):
                return self.shared_message(stmt, written, other)
        outside = sorted({p for p in places if p.kind != "new"}, key=lambda p: (p.kind, p.name))
        if outside:
            return self.outside_message(stmt, written, outside[0])
        return None

    def zero_d(self, place: Place) -> bool:
        """Whether a rank-0 value at ``place`` may be a 0-d array (changed in place by
        ``+=``), not a number: one an array constructor or ``.copy()`` made. (Arithmetic,
        ufuncs and reductions give numbers; so, presumably, does a rank-0 argument.)"""
        stmt = self.sites.get(place.site)
        value = getattr(stmt, "value", None)
        if place.kind != "new" or place.name or not isinstance(value, ast.Call):
            return False
        op = self.facts.ops.get(stmt)
        if isinstance(value.func, ast.Attribute) and value.func.attr == "copy":
            return True
        return op is not None and any(op.callee is f for f in _ARRAY_MAKERS)

    # -- messages ------------------------------------------------------------------------
    def call_message(self, stmt: ast.stmt) -> str:
        callee, changed = self.call_writes[id(stmt)]
        param, arg = changed[0]
        given = f" (given {self.describe(arg.id)})" if isinstance(arg, ast.Name) else ""
        return (
            f"{self.what(stmt)} calls {callee.__qualname__!r}, which changes its argument "
            f"`{param}`{given} in place; srcgrad does not follow changes made inside a called "
            f"function: have {callee.__qualname__!r} work on a copy (`{param} = "
            f"{param}.copy()` first) and return what it computes."
        )

    def user_name(self, core: str) -> str | None:
        """The user's name for a core name (``x_1`` is a new version of ``x``)."""
        if core in self.user_names:
            return core
        m = re.fullmatch(r"(.+)_\d+", core)
        if m and m.group(1) in self.user_names and core not in self.norm.temps:
            return m.group(1)
        return None

    def what(self, stmt: ast.stmt) -> str:
        """The user's statement, quoted."""
        return f"`{self.norm.origin_text(stmt)}`"

    def describe(self, core: str) -> str:
        """A name, for a message: the user's, or the statement that computed it."""
        user = self.user_name(core)
        if user is not None:
            return f"`{user}`"
        defs = self.facts.definitions.get(core, [])
        text = self.norm.definition_text(defs[0][0]) if defs else ""
        return f"a value computed in `{text}`" if text else "another value"

    def definition(self, core: str, reading: str | None) -> ast.Assign | None:
        """The user's assignment ``m = expr`` that gave ``core`` its value, where ``expr``
        reads the user's name of ``reading`` (``z = y[0:2]`` for ``z`` reading ``y``)."""
        wanted = self.user_name(reading) if reading is not None else None
        for stmt, _ in self.facts.definitions.get(core, []):
            user = self.norm.origin.get(stmt)
            if (
                isinstance(user, ast.Assign)
                and len(user.targets) == 1
                and isinstance(user.targets[0], ast.Name)
                and any(isinstance(n, ast.Name) and n.id == wanted for n in ast.walk(user.value))
            ):
                return user
        return None

    def kind(self, stmt: ast.stmt) -> str:
        return "list" if is_append(stmt) or popped(stmt) is not None else "array"

    def shared_message(self, stmt: ast.stmt, written: str, other: str) -> str:
        name, sharer, kind = self.describe(written), self.describe(other), self.kind(stmt)
        at = self.found.places[id(stmt)]
        if _overlap(at.get(other, frozenset()), at.get(written, frozenset())):
            made = self.definition(written, other) or self.definition(other, written)
            how = f" (`{_text(made)}`)" if made is not None else ""
            relation = f"shares that memory{how}"
        else:
            relation = f"holds that {kind}"
        head = (
            f"{self.what(stmt)} changes the {kind} {name} refers to in place, and {sharer} "
            f"{relation} and is read afterwards, so {sharer} changes too, which srcgrad "
            "does not follow. "
        )
        return head + self.advice(stmt, written, other)

    def advice(self, stmt: ast.stmt, written: str, other: str) -> str:
        """What to write instead: a new value, a copy to write into, a copy for the other."""
        user = self.norm.origin.get(stmt)
        name = self.user_name(written)
        if isinstance(user, ast.AugAssign) and isinstance(user.target, ast.Name):
            first = f"Write `{_spelled_out(user)}` (a new array)"
        elif self.kind(stmt) == "list":
            return "Use one name for the list, or build a new list with its own name."
        elif name is not None:
            first = f"Write into a copy (`{name} = {name}.copy()` before this line)"
        else:
            first = "Write into a copy"
        made = self.definition(other, written)
        if made is None:
            return first + "."
        copied = ast.Assign(
            targets=made.targets,
            value=ast.Call(
                func=ast.Attribute(value=made.value, attr="copy", ctx=ast.Load()),
                args=[],
                keywords=[],
            ),
        )
        return f"{first}, or give {self.describe(other)} its own copy: `{_text(copied)}`."

    def outside_message(self, stmt: ast.stmt, written: str, place: Place) -> str:
        name = self.describe(written)
        if place.kind == "argument":
            whose = f"the argument `{place.name}`"
        else:
            whose = f"the global `{place.name}`"
        user = self.norm.origin.get(stmt)
        if self.kind(stmt) == "list":
            return (
                f"{self.what(stmt)} changes the list of {whose} in place (the caller's data), "
                "which srcgrad's derivative never changes: build a new list in the "
                "function instead (`ys = []`, then `ys.append(...)`)."
            )
        if isinstance(user, ast.AugAssign) and isinstance(user.target, ast.Name):
            return (
                f"{self.what(stmt)} changes in place the array of {whose} (the caller's "
                "data), which srcgrad's derivative never changes: write "
                f"`{_spelled_out(user)}` (a new array) instead."
            )
        plain = name.strip("`")
        relation = "is" if plain == place.name else "may share memory with"
        return (
            f"srcgrad differentiates `{plain}[...] = ...` only when {name} is an array the "
            f"function made itself, and {name} {relation} {whose} (the caller's data, "
            "which srcgrad's derivative never changes); write into a copy instead, e.g. "
            f"`{plain} = {plain}.copy()` before this line, or `np.zeros_like(...)`."
        )


def _text(node: ast.AST) -> str:
    return ast.unparse(ast.fix_missing_locations(node))


def _spelled_out(user: ast.AugAssign) -> str:
    """``x += v`` as ``x = x + v``, from the user's own code."""
    value = ast.BinOp(left=user.target, op=user.op, right=user.value)
    return _text(ast.Assign(targets=[ast.Name(id=user.target.id, ctx=ast.Store())], value=value))


def _reads(node: ast.AST) -> list[str]:
    """Names a statement (with what it writes into) or an expression reads."""
    if isinstance(node, ast.Assign):
        node = ast.Tuple(elts=[node.value, *node.targets], ctx=ast.Load())
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
