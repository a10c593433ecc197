"""Pass: assignments nobody reads go."""

from __future__ import annotations

import ast

from ..analyze.facts import popped
from ..transform.builder import is_comment
from .dataflow import (
    Context,
    _meaningful,
    _pure,
    _pushed,
    _statements,
    blocks,
    own_reads,
    reads,
    target,
)


def eliminate_dead_code(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """Drop assignments whose value is never read (by liveness, loops included),
    and comments left heading nothing.

    Before::                      After::

        t = np.sin(x)                 y = x * 2.0
        y = x * 2.0                   return y
        return y
    """
    state = {"changed": False}

    def live_in(block: list[ast.stmt], live: set[str], prune: bool) -> set[str]:
        live = set(live)
        kept: list[ast.stmt] = []
        for stmt in reversed(block):
            t = target(stmt)
            if t is not None:
                if t not in live and _pure(stmt.value):
                    if prune:
                        state["changed"] = True
                    continue
                if prune and t not in live and popped(stmt, last=True) is not None:
                    dead_pops.add((popped(stmt, last=True), t))
                live.discard(t)
                live.update(reads(stmt))
            elif isinstance(stmt, ast.If):
                body_in = live_in(stmt.body, live, prune)
                else_in = live_in(stmt.orelse, live, prune)
                if prune and not _meaningful(stmt.body) and not _meaningful(stmt.orelse):
                    state["changed"] = True
                    continue
                if prune and not stmt.body:
                    stmt.body = [ast.Pass()]
                live = body_in | else_in | set(reads(stmt.test))
            elif isinstance(stmt, (ast.For, ast.While)):
                header = set(own_reads(stmt))
                loop_live = live | header
                for _ in range(len(block) + 50):
                    again = live | header | live_in(stmt.body, loop_live, False)
                    if again == loop_live:
                        break
                    loop_live = again
                live_in(stmt.body, loop_live, prune)
                if (
                    prune
                    and isinstance(stmt, ast.For)
                    and not _meaningful(stmt.body)
                    and stmt.target.id not in live  # its index is read after it
                ):
                    state["changed"] = True
                    continue
                if prune and not stmt.body:
                    stmt.body = [ast.Pass()]
                live = loop_live
            elif is_comment(stmt):
                if prune and (not kept or is_comment(kept[-1]) or isinstance(kept[-1], ast.Return)):
                    state["changed"] = True
                    continue
            else:
                live.update(reads(stmt))
            kept.append(stmt)
        if prune:
            kept.reverse()
            block[:] = kept
        return live

    dead_pops: set[tuple[str, str]] = set()
    live_in(body, set(), True)
    for tape, t in dead_pops:  # a value restored only to be dropped: nor is it recorded
        pushes = [s for s in _statements(body) if _pushed(s) == (tape, t)]
        pops = [s for s in _statements(body) if target(s) == t and popped(s, last=True) == tape]
        if len(pushes) == len(pops) == 1:
            for block in blocks(body):
                block[:] = [s for s in block if s is not pushes[0] and s is not pops[0]]
            state["changed"] = True
    return body, state["changed"]
