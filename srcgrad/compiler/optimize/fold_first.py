"""Pass: an adjoint's zero start folded into its first accumulation."""

from __future__ import annotations

import ast
import bisect

from .dataflow import Context, _accumulated, _is_zeros_like, blocks, reads, target, writes


def fold_first_accumulation(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = zeros_like(x)`` followed (in the same block) by ``v = v + c`` is ``v = c``.

    Before::                      After::

        x_bar = np.zeros_like(x)      y = x * 3.0
        y = x * 3.0                   x_bar = y_bar * 2
        x_bar = x_bar + y_bar * 2
    """
    changed = False
    for block in list(blocks(body)):
        # where each name is read or written, by position: the next statement touching
        # ``v`` is found by bisection, not by walking every statement in between. A fold
        # drops its ``v = zeros_like(x)`` only at the end, so positions stay put; the
        # statement it rewrites (``v = c``) touches what it did, but for reading ``v``.
        touches: dict[str, list[int]] = {}
        for k, stmt in enumerate(block):
            for n in set(reads(stmt)) | set(writes(stmt)):
                touches.setdefault(n, []).append(k)
        dropped = set()
        for i, stmt in enumerate(block):
            v = target(stmt)
            if v is None or not _is_zeros_like(stmt.value):
                continue
            positions = touches.get(v, [])
            k = bisect.bisect_right(positions, i)
            if k == len(positions):
                continue
            j = positions[k]
            first = block[j]
            value = first.value if isinstance(first, ast.Assign) else None
            rest = _accumulated(v, value) if target(first) == v else None
            if rest is not None:
                block[j] = ast.Assign(targets=first.targets, value=rest)
                dropped.add(i)
                changed = True
        if dropped:
            block[:] = [s for k, s in enumerate(block) if k not in dropped]
    return body, changed
