"""Part of the alias analysis (:mod:`.aliases`): summaries of the user's functions a
function calls (:func:`_summary`): which arguments and globals a call's result may share,
position by position for a returned tuple, and which arguments it changes in place, found
by analyzing the callee's own code (or, where that fails, read off its source)."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Any

from ..astwalk import nodes
from ..parse import source_text
from .alias_calls import _CHANGING_METHODS
from .alias_model import Aliases, Place

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
        for node in nodes(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, root = node.targets[0], _root(node.value)
                if isinstance(target, ast.Name) and root in roots:
                    roots.setdefault(target.id, roots[root])
    written = set()
    for node in nodes(tree):
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


def _root(node: ast.expr) -> str | None:
    """The name an expression is an item, slice, attribute or method result of."""
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None
