"""Part of the alias analysis (:mod:`.aliases`): its data model. A :class:`Place` is an
abstract piece of memory, :class:`Aliases` what the analysis found (with
:class:`Problem`, an in-place change it refuses); and the relation between names that
may share memory, kept in the flow's state under ``_SHARING``."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


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
    #: for each of those: the other names that may refer to that memory at some time
    shared_with: dict[int, set[str]] = field(default_factory=dict)

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


def _owned(state: dict) -> dict:
    """A copy of ``state`` that may be changed in place (its sharing relation copied too;
    the sets of places and names, frozen, are shared)."""
    out = dict(state)
    out[_SHARING] = dict(state[_SHARING])
    return out


def _rebind(state: dict, target: str, sharers: frozenset[str]) -> None:
    """:func:`_rebound`, in place: ``state`` (one of its own: :func:`_owned`) changed."""
    adjacent = state[_SHARING]
    sharers = sharers - {target}
    before = adjacent.get(target, frozenset())
    for n in before - sharers:
        adjacent[n] = adjacent[n] - {target}
    for n in sharers - before:
        adjacent[n] = adjacent.get(n, frozenset()) | {target}
    if sharers:
        adjacent[target] = sharers
    else:
        adjacent.pop(target, None)


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
