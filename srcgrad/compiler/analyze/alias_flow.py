"""Part of the alias analysis (:mod:`.aliases`): the flow. :class:`_Flow` finds the
places each name may refer to, and the names that may share memory, forward through the
function, at every statement that changes something in place."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..astwalk import nodes
from ..normalize.expressions import is_static
from ..normalize.lower import Normalized
from .alias_calls import (
    _HELPER_RESULTS,
    _NEW_FROM_METHODS,
    _PLAIN_BUILTINS,
    _VALUE_ATTRIBUTES,
    _changed_by_call,
    _immutable,
    _is_builtin,
    _is_new_array,
)
from .alias_model import (
    _OUTSIDE,
    _SHARING,
    Place,
    _aged,
    _join,
    _owned,
    _rebind,
    _rebound,
    _sharers_of,
)
from .alias_summaries import _parameter_names, _summary
from .classify import is_user_function
from .dtypes import INTEGER, dtype_kind
from .facts import Facts, is_append, is_setitem, popped, resolve_static, unwrap_callable
from .indices import names_one_element

#: conversions that return their operand itself where its dtype is already the one asked
_CONVERTERS = (np.asarray, np.asanyarray, np.ascontiguousarray)


#: runtime helpers whose result is a new list of pieces of their first argument (views
#: of it, or the argument itself): the list is new, its elements may share the argument's
#: memory (popping from the list changes no array)
_PIECES = frozenset({"spread", "unstack", "unstack_like", "split_like"})


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
        """The state after ``body``, from ``state`` before it (left as it is: the block
        works on its own copy, which each assignment changes in place, where a new state
        per statement would cost the number of names every time)."""
        state = _owned(state)
        for stmt in body:
            state = self.statement(stmt, state, breaks)
        return state

    def statement(self, stmt: ast.stmt, state: dict, breaks: list) -> dict:
        """The state after ``stmt``: ``state`` changed in place (a block's own copy), or
        a new one."""
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
                _rebind(state, target, sharers)
                state[target] = value
                return state
            state = self.age(stmt, state)
            value = self.value(stmt, state)
            self.refer(target, value)
            sharers = self.sharers(stmt, value, state)
            _rebind(state, target, sharers)
            state[target] = value
            return state
        if isinstance(stmt, ast.If):
            yes = self.block(stmt.body, state, breaks)  # (each on a copy of its own)
            no = self.block(stmt.orelse, state, breaks)
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
                out = self.block(stmt.body, current, inner)
                joined = _join(entry, out)
                if joined == current:
                    break
                current = joined
            for left in inner:
                current = _join(current, left)
            return current
        if isinstance(stmt, ast.Break):
            breaks.append(_owned(state))
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
        state.update({k: older(state[k]) for k in holders if k in state})
        return state

    def record(self, stmt: ast.stmt, state: dict) -> None:
        """What holds just before a statement that changes something in place."""
        places = dict(state)
        self.sharing_at[id(stmt)] = dict(places.pop(_SHARING))  # (the state changes on)
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
            for n in nodes(stmt.value)
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
        for h in holders:
            adjacent[h] = adjacent.get(h, frozenset()) | (grown - {h})
        for g in grown:
            adjacent[g] = adjacent.get(g, frozenset()) | (holders - {g})
        return state

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
            if names_one_element(rhs.value, rhs.slice, self.facts):
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
        passed_in = isinstance(func, ast.Name) and func.id in self.facts.statics
        if passed_in or is_static(func, self.env, self.local):
            callee = self.facts.statics[func.id] if passed_in else resolve_static(func, self.env)
            callee, _, _ = unwrap_callable(callee, [], [], rhs)
            module = getattr(callee, "__module__", None) or ""
            if isinstance(callee, np.ufunc) or _is_new_array(callee):
                return self.made(new)
            if self.converted(callee, rhs):
                return self.made(new)
            if module.startswith("scipy.special") or module == "math":
                return self.made(new)
            if getattr(callee, "__name__", None) in _PLAIN_BUILTINS and _is_builtin(callee):
                return frozenset()
            helper = getattr(callee, "__srcgrad_helper__", None)
            if helper in _PIECES:  # a new list of pieces of its first argument (or it)
                self.made(new)
                self.hold(frozenset({new}), self.reach(self.of(rhs.args[0], state)))
                return frozenset({new})
            if helper is not None:  # generated code differentiated again
                shared = _HELPER_RESULTS.get(helper, range(len(rhs.args)))
                return self.unknown([rhs.args[i] for i in shared if i < len(rhs.args)], new, state)
            op = self.facts.ops.get(stmt)
            if is_user_function(callee) and op is not None and op.call_args is not None:
                return self.user_call(stmt, callee, op.call_args, new, state)
            # anything not known to make a new array may return an argument, or what one
            # holds
            return self.unknown(operands, new, state)
        if not isinstance(func, ast.Attribute):  # (a function passed in, not known here)
            return self.unknown(operands, new, state)
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

    def converted(self, callee: Any, rhs: ast.Call) -> bool:
        """``np.asarray(v, dtype=int)`` of a ``v`` every definition of which gives floats:
        a new array (``asarray`` returns ``v`` itself only where ``v`` has that dtype)."""
        if callee not in _CONVERTERS or not rhs.args or not isinstance(rhs.args[0], ast.Name):
            return False
        dtype = next((k.value for k in rhs.keywords if k.arg == "dtype"), None)
        if dtype is None and len(rhs.args) > 1:
            dtype = rhs.args[1]
        return dtype_kind(dtype, self.env) == INTEGER and rhs.args[0].id in self.facts.proven_floats

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
