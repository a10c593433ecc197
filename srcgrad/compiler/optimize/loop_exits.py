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


def restore_breaks(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``broke = True`` is ``break`` where the flag, given False before the loop, is set
    once, last in a branch of the ``if`` just before the guard ``if not broke:`` (or the
    exit), and read by the guard and the exit alone.

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
    if len(uses) != (4 if guard is not None else 3):  # False, True, the guard, the exit
        return False
    branch[-1] = ast.Break()
    done = [*inner[: inner.index(setter) + 1], *(guard.body if guard else []), *inner[j + 1 :]]
    loop.body = done
    _forget(loop)
    del block[start]
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
    return (
        target(stmt) == flag and isinstance(stmt.value, ast.Constant) and stmt.value.value is value
    )


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
