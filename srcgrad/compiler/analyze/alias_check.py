"""Part of the alias analysis (:mod:`.aliases`): the check. :class:`_Check` refuses, at
each in-place change, one into the caller's or a global's memory, or one another name
that shares the memory would see (it is read afterwards), with a message saying what to
write instead."""

from __future__ import annotations

import ast
import re
from typing import Any

from ..astwalk import nodes
from ..normalize.lower import Normalized
from .alias_calls import _ARRAY_MAKERS
from .alias_model import Aliases, Place, Problem, _overlap
from .facts import Facts, is_append, popped, walk_block


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
        self.user_names = {n.id for n in nodes(norm.parsed.tree) if isinstance(n, ast.Name)} | set(
            norm.parsed.params
        )
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
                and any(isinstance(n, ast.Name) and n.id == wanted for n in nodes(user.value))
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
    return [n.id for n in nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
