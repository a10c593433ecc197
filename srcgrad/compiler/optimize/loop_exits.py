"""Passes: a loop's exits as the user wrote them, where the generated code no longer
needs the flags normalize made of them.

``normalize.exits`` turns ``if c: break`` into ``broke = True`` and guards what follows
with ``if not broke:``; the loop test of a ``while`` is a temporary computed before the
loop and again at the end of its body. Where nothing else reads the flag (the adjoint
counts the trips instead of recording it) or the temporary, the loop is written back.
"""

from __future__ import annotations

import ast

from ..astwalk import nodes
from .dataflow import Context, _forget, blocks, reads, target, writes


def guards_as_flags(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """A break guard's test ``t = not broke``, which the adjoint restores to ``True``
    after each reversed trip (``transform.reverse.exits.passed_guards``), is the flag
    itself: ``if t:`` is ``if not broke:`` and ``t = True`` is ``broke = False``, so the
    loop may keep its ``break`` (:func:`restore_breaks`).

    Only in the function's own block, where ``t`` is given ``None`` before the loop,
    ``not broke`` in it (on every trip: nothing before it leaves the trip) and ``True``
    in one loop after it that runs once per trip of the first (over ``range(trips)`` or
    ``reversed(r[:trips])``, ``trips`` counted first in each trip), and read only as
    ``if t:`` there and in the guard; and ``broke``, given ``False`` before the loop and
    ``True`` once in it, is read nowhere else but before that second loop: after the
    first loop, where it ran a trip, ``t`` is ``not broke``, and each keeps the other's
    negation.

    Before::                          After::

        t4 = None                         broke = False
        broke = False                     trips = 0
        trips = 0                         for i in r:
        for i in r:                           trips = trips + 1
            trips = trips + 1                 if x[i] > 1.0:
            if x[i] > 1.0:                        broke = True
                broke = True                  if not broke:
            t4 = not broke                        s = s + x[i]
            if t4:                            if broke:
                s = s + x[i]                      break
            if broke:                     for i in reversed(r[:trips]):
                break                         if not broke:
        for i in reversed(r[:trips]):             g = g + 1.0
            if t4:                            broke = False
                g = g + 1.0
            t4 = True
    """
    changed = False
    for k, loop in enumerate(body):
        if isinstance(loop, (ast.For, ast.While)) and _flag_for_guard(body, k):
            changed = True
    return body, changed


def _flag_for_guard(body: list[ast.stmt], k: int) -> bool:
    inner = body[k].body
    exits = [s for s in inner if _exit_flag(s) is not None]
    broke = _exit_flag(exits[0]) if len(exits) == 1 else None
    m = next((m for m, s in enumerate(inner) if _negation_of(s, broke)), None)
    trips = _counted(body, k)
    if broke is None or m is None or trips is None:
        return False
    if any(isinstance(n, (ast.Break, ast.Continue)) for s in inner[:m] for n in nodes(s)):
        return False  # (the test might not run on every trip)
    t = target(inner[m])
    if t in _names(inner[:m]):
        return False  # (read before it is given this trip's value)
    guard = inner[m + 1] if _tests(inner[m + 1], t) else None
    r = next((r for r in range(k + 1, len(body)) if t in _names(body[r])), None)
    if r is None or not _once_per_trip(body[r], trips) or trips in _writes_of(body[k + 1 : r]):
        return False
    starts = [s for s in body[:k] if _sets_to(s, t, None)]
    after = [n for s in body[r + 1 :] for n in nodes(s)]
    if any(t in _names(s) for s in body[:k] if s not in starts) or t in _names_of(after):
        return False
    if not _only_tests_and_restores(body[r], t) or _names(inner[m + 1 :]).count(t) != (
        1 if guard is not None else 0
    ):
        return False
    if not _flag_used_as_expected(body, k, r, broke):
        return False
    del inner[m]
    if guard is not None:
        guard.test = _not(broke)
    _flags_for_tests(body[r], t, broke)
    body[:k] = [s for s in body[:k] if s not in starts]
    for stmt in body:
        _forget(stmt)
    return True


def _negation_of(stmt: ast.stmt, flag: str | None) -> bool:
    """Whether ``stmt`` is ``t = not flag``."""
    value = getattr(stmt, "value", None)
    return (
        flag is not None
        and target(stmt) is not None
        and isinstance(value, ast.UnaryOp)
        and isinstance(value.op, ast.Not)
        and isinstance(value.operand, ast.Name)
        and value.operand.id == flag
    )


def _counted(body: list[ast.stmt], k: int) -> str | None:
    """``trips`` where the loop ``body[k]`` starts each trip with ``trips = trips + 1``
    after ``trips = 0`` before it (and no other value)."""
    first = body[k].body[0] if body[k].body else None
    c = target(first) if first is not None else None
    value = getattr(first, "value", None)
    if not (
        c is not None
        and isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and _is_name(value.left, c)
        and isinstance(value.right, ast.Constant)
        and value.right.value == 1
    ):
        return None
    starts = [s for s in body[:k] if target(s) == c]
    if len(starts) != 1 or not _sets_to(starts[0], c, 0):
        return None
    return c


def _once_per_trip(loop: ast.stmt, trips: str) -> bool:
    """Whether ``loop`` is ``for _ in range(trips)`` or ``for _ in reversed(r[:trips])``."""
    if not isinstance(loop, ast.For) or not isinstance(loop.iter, ast.Call):
        return False
    call = loop.iter
    if not (isinstance(call.func, ast.Name) and len(call.args) == 1 and not call.keywords):
        return False
    arg = call.args[0]
    if call.func.id == "range":
        return _is_name(arg, trips)
    return (
        call.func.id == "reversed"
        and isinstance(arg, ast.Subscript)
        and isinstance(arg.slice, ast.Slice)
        and arg.slice.lower is None
        and arg.slice.step is None
        and _is_name(arg.slice.upper, trips)
    )


def _only_tests_and_restores(loop: ast.stmt, t: str) -> bool:
    """Whether every use of ``t`` in ``loop`` is ``if t:`` or ``t = True``."""
    allowed: list[ast.AST] = []
    for n in nodes(loop):
        if _tests(n, t):
            allowed.append(n.test)
        elif _sets_to(n, t, True):
            allowed.append(n.targets[0])
    uses = [n for n in nodes(loop) if _is_name(n, t)]
    return bool(uses) and all(any(u is a for a in allowed) for u in uses)


def _flag_used_as_expected(body: list[ast.stmt], k: int, r: int, broke: str) -> bool:
    """Whether ``broke`` is given ``False`` once before the loop ``body[k]``, ``True``
    once in it, read there only by ``t = not broke`` and the exit, and read again only
    between the loop and ``body[r]``."""
    starts = [s for s in body[:k] if broke in _names(s)]
    if len(starts) != 1 or not _sets_to(starts[0], broke, False):
        return False
    inside = [n for n in nodes(body[k]) if _is_name(n, broke)]
    sets = [n for n in nodes(body[k]) if _sets_to(n, broke, True)]
    if len(sets) != 1 or len(inside) != 3:  # (the set, the negation, the exit)
        return False
    later = [n for s in body[r:] for n in nodes(s)]
    return broke not in _names_of(later) and all(
        isinstance(n.ctx, ast.Load) for s in body[k + 1 : r] for n in nodes(s) if _is_name(n, broke)
    )


def _flags_for_tests(loop: ast.stmt, t: str, broke: str) -> None:
    """``if t:`` is ``if not broke:`` and ``t = True`` is ``broke = False``, in ``loop``."""
    for n in nodes(loop):
        if _tests(n, t):
            n.test = _not(broke)
        elif _sets_to(n, t, True):
            n.targets = [ast.Name(id=broke, ctx=ast.Store())]
            n.value = ast.Constant(False)


def _tests(node: ast.AST, t: str) -> bool:
    return isinstance(node, ast.If) and _is_name(node.test, t)


def _is_name(node: ast.AST | None, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _not(name: str) -> ast.expr:
    return ast.UnaryOp(op=ast.Not(), operand=ast.Name(id=name, ctx=ast.Load()))


def _sets_to(node: ast.AST, name: str, value: object) -> bool:
    """Whether ``node`` is ``name = value`` (a constant: ``None``, ``True``, ``0``)."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and _is_name(node.targets[0], name)
        and isinstance(node.value, ast.Constant)
    ):
        return False
    got = node.value.value
    if isinstance(value, bool) or value is None:
        return got is value
    return type(got) is type(value) and got == value


def _names(stmts: ast.AST | list[ast.stmt]) -> list[str]:
    """The names used in ``stmts`` (each use once)."""
    found = stmts if isinstance(stmts, list) else [stmts]
    return _names_of([n for s in found for n in nodes(s)])


def _writes_of(stmts: list[ast.stmt]) -> set[str]:
    """The names ``stmts`` give values."""
    return {w for s in stmts for w in writes(s)}


def _names_of(found: list[ast.AST]) -> list[str]:
    return [n.id for n in found if isinstance(n, ast.Name)]


def restore_breaks(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``broke = True`` is ``break`` where the flag, given False before the loop, is set
    once, last in a branch of the ``if`` just before the guard ``if not broke:`` (or the
    exit), and read in the loop by the guard and the exit alone (where it is read after
    the loop too, it stays: ``broke = True; break``).

    Before::                          After::

        broke = False                     for i in r:
        for i in r:                           if x[i] > t:
            if x[i] > t:                          break
                broke = True                  s = s + x[i]
            if not broke:
                s = s + x[i]
            if broke:
                break
    """
    changed = False
    for block in blocks(body):
        for k, stmt in enumerate(block):
            if isinstance(stmt, (ast.For, ast.While)) and _restore(body, block, k):
                changed = True
                break  # (the block changed: the next round sees the rest)
    return body, changed


def _restore(body: list[ast.stmt], block: list[ast.stmt], k: int) -> bool:
    loop = block[k]
    inner = loop.body
    exits = [j for j, s in enumerate(inner) if _exit_flag(s) is not None]
    if len(exits) != 1 or exits[0] == 0:
        return False
    j = exits[0]
    flag = _exit_flag(inner[j])
    guard = inner[j - 1] if _is_guard(inner[j - 1], flag) else None
    setter = inner[j - 2] if guard is not None and j >= 2 else inner[j - 1]
    if not isinstance(setter, ast.If):
        return False
    branch = next((b for b in (setter.body, setter.orelse) if b and _sets(b[-1], flag, True)), None)
    start = next(
        (m for m in range(k - 1, -1, -1) if flag in writes(block[m]) or flag in reads(block[m])),
        None,
    )
    if branch is None or start is None or not _sets(block[start], flag, False):
        return False
    uses = [n for s in body for n in nodes(s) if isinstance(n, ast.Name) and n.id == flag]
    inside = [n for n in nodes(loop) if isinstance(n, ast.Name) and n.id == flag]
    if len(inside) != (3 if guard is not None else 2):  # True, the guard, the exit
        return False
    if len(uses) == len(inside) + 1:  # (and False): the flag goes
        branch[-1] = ast.Break()
        del block[start]
    else:  # read after the loop too (a for-else, the adjoint): it stays, with the break
        branch.append(ast.Break())
    done = [*inner[: inner.index(setter) + 1], *(guard.body if guard else []), *inner[j + 1 :]]
    loop.body = done
    _forget(loop)
    return True


def _exit_flag(stmt: ast.stmt) -> str | None:
    """``broke`` for ``if broke: break``."""
    if (
        isinstance(stmt, ast.If)
        and isinstance(stmt.test, ast.Name)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], ast.Break)
        and not stmt.orelse
    ):
        return stmt.test.id
    return None


def _is_guard(stmt: ast.stmt, flag: str) -> bool:
    """Whether ``stmt`` is ``if not flag: ...`` with no else."""
    return (
        isinstance(stmt, ast.If)
        and not stmt.orelse
        and isinstance(stmt.test, ast.UnaryOp)
        and isinstance(stmt.test.op, ast.Not)
        and isinstance(stmt.test.operand, ast.Name)
        and stmt.test.operand.id == flag
    )


def _sets(stmt: ast.stmt, flag: str, value: bool) -> bool:
    return _sets_to(stmt, flag, value)


def restore_while_tests(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``t = e; while t: ...; t = e`` is ``while e: ...`` where ``t`` is read by the loop's
    test alone and what lies between the first ``t = e`` and the loop cannot change
    what ``e`` reads (see :func:`_leaves_alone`).

    Before::                          After::

        t1 = i < n                        trips = 0
        trips = 0                         while i < n:
        while t1:                             i = i + 1
            i = i + 1
            t1 = i < n
    """
    changed = False
    for block in blocks(body):
        for k, loop in enumerate(block):
            if not (isinstance(loop, ast.While) and isinstance(loop.test, ast.Name)):
                continue
            t = loop.test.id
            last = loop.body[-1] if loop.body else None
            start = next((m for m in range(k - 1, -1, -1) if t in writes(block[m])), None)
            if start is None or target(block[start]) != t or target(last) != t:
                continue
            test = block[start].value
            if ast.dump(test) != ast.dump(last.value):
                continue
            between = block[start + 1 : k]  # (trips = 0, t3 = -k, tape.append(trips))
            if not all(_leaves_alone(s, set(reads(test))) for s in between):
                continue
            uses = [n for s in body for n in nodes(s) if isinstance(n, ast.Name) and n.id == t]
            if len(uses) != 3:  # the two assignments and the test
                continue
            loop.test = test
            loop.body = loop.body[:-1] or [ast.Pass()]
            _forget(loop)
            del block[start]
            changed = True
            break
    return body, changed


def _leaves_alone(stmt: ast.stmt, names: set[str]) -> bool:
    """Whether ``stmt`` cannot change the values of ``names``: an assignment of an
    expression with no call to another name, or a push onto a tape that is not one of
    them."""
    if isinstance(stmt, ast.Assign):
        return (
            target(stmt) is not None
            and target(stmt) not in names
            and not any(isinstance(n, ast.Call) for n in nodes(stmt.value))
        )
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id not in names
        and not any(isinstance(n, ast.Call) for a in call.args for n in nodes(a))
    )
