"""Adjoints a reversed loop owns: written into in place, copied once before the loop.

The adjoint of a write ``y[i] = v`` zeroes ``y_bar[i]``. Zeroing in place is safe only
where no other name refers to ``y_bar``'s memory, which the emitter once made sure of by
copying ``y_bar`` whole before each zeroing: O(size of y) per loop trip, O(n^2) for a
loop of n trips. In a loop that never gives ``y`` a new value (only its items change),
the adjoint sweep gives ``y_bar`` none either but new arrays (``y_bar + ...``): one copy
before the reversed loop makes it the loop's own, and each trip zeroes its items in
place. The items it reads out (``y_bar[i]``, passed to ``v``) are copied where they may
be views (a row of a matrix), since the zeroing that follows would change them.

Reads of items in such a loop (``t = y[i - 1]``) give ``y_bar[i - 1]`` their part in
place too (``y_bar[i - 1] += t_bar``), not as ``y_bar = y_bar + index_adjoint(...)``, a
whole new array per trip (:func:`owned_reads`).
"""

from __future__ import annotations

import ast

from ...analyze.facts import Facts, is_setitem, walk_block


def owned_loops(
    core: list[ast.stmt], facts: Facts, active: set[str], increments: dict[int, object]
) -> dict[int, int]:
    """For each write into an item of an active array ``y`` inside a loop: the outermost
    loop around it that gives ``y`` no new value, where some write zeroes ``y_bar``'s
    items (one that is not an increment), by the write's id. Its reversed loop owns
    ``y_bar``."""
    found: dict[int, int] = {}
    rebound: dict[tuple[int, str], bool] = {}

    def rebinds(loop: ast.stmt, y: str) -> bool:
        if (id(loop), y) not in rebound:
            rebound[(id(loop), y)] = _rebinds(loop, y)
        return rebound[(id(loop), y)]

    def visit(block: list[ast.stmt], loops: list[ast.stmt]) -> None:
        for stmt in block:
            if is_setitem(stmt) and loops:
                y = facts.ops[stmt].target
                if y in active and y not in facts.sequences and y not in facts.maybe_sequences:
                    owner = next((loop for loop in loops if not rebinds(loop, y)), None)
                    if owner is not None:
                        found[id(stmt)] = id(owner)
            if isinstance(stmt, ast.If):
                visit(stmt.body, loops)
                visit(stmt.orelse, loops)
            elif isinstance(stmt, (ast.For, ast.While)):
                visit(stmt.body, [*loops, stmt])

    visit(core, [])
    statements = {id(s): s for s, _ in walk_block(core)}

    def array(k: int) -> str:
        return facts.ops[statements[k]].target

    # (loop, array) pairs with a plain write: their adjoints zero items of y_bar
    zeroing = {(owner, array(k)) for k, owner in found.items() if k not in increments}
    # and those whose loop reads items of y (``u[2:]`` in a stencil written ``u[1:-1] +=``)
    # outside its increments: each read's adjoint, an index_adjoint, would be a whole new
    # y_bar per trip; owned, it adds into y_bar's items in place
    absorbed = {id(inc.read) for inc in increments.values()}
    reading = {
        (owner, array(k))
        for k, owner in found.items()
        if (owner, array(k)) not in zeroing
        and _reads_items(statements[owner], array(k), facts, absorbed)
    }
    owners = zeroing | reading
    return {k: owner for k, owner in found.items() if (owner, array(k)) in owners}


def _reads_items(loop: ast.stmt, y: str, facts: Facts, absorbed: set[int]) -> bool:
    """Whether ``loop`` reads an item of ``y`` (``t = y[i]``) whose adjoint is its own
    (not the read of an increment, which has none)."""
    for stmt, _ in walk_block(loop.body):
        op = facts.ops.get(stmt)
        x = op.args.get("x") if op is not None and op.key == "getitem" else None
        if isinstance(x, ast.Name) and x.id == y and id(stmt) not in absorbed:
            return True
    return False


def owned_reads(
    core: list[ast.stmt], facts: Facts, owned: dict[int, int], active: set[str], own_more: bool
) -> dict[int, int]:
    """The reads of an item of ``y`` (``t = y[i]``, by id) inside a loop whose reversed
    loop owns ``y_bar``, each with that loop's id (``owned``: :func:`owned_loops`' result).

    With ``own_more`` (numpy's arrays, which take any value in place) a loop also owns
    the adjoint of an array it only reads items of, ``x`` of ``s = s + x[i] * c``: the
    outermost loop around the read that neither gives ``x`` a new value nor writes into
    it. Each trip then adds ``x_bar[i] += g`` into the copy made before the reversed
    loop, where ``x_bar = x_bar + index_adjoint(g, x, i)`` made a whole new array per
    trip (O(n^2) for a loop over ``x``) wherever ``x_bar`` did not start as zeros."""
    statements = {id(s): s for s, _ in walk_block(core)}
    arrays: dict[int, set[str]] = {}  # owner loop -> the arrays whose adjoints it owns
    for k, owner in owned.items():
        arrays.setdefault(owner, set()).add(facts.ops[statements[k]].target)
    found: dict[int, int] = {}
    for owner, ys in arrays.items():
        for stmt, _ in walk_block(statements[owner].body):
            op = facts.ops.get(stmt)
            x = op.args.get("x") if op is not None and op.key == "getitem" else None
            if isinstance(x, ast.Name) and x.id in ys:
                found[id(stmt)] = owner
    if own_more:
        written = {facts.ops[statements[k]].target for k in owned}
        _read_only_items(core, facts, active - written, [], found)
    return found


def _read_only_items(
    block: list[ast.stmt],
    facts: Facts,
    arrays: set[str],
    loops: list[ast.stmt],
    found: dict[int, int],
) -> None:
    """Add to ``found`` the reads ``t = x[i]`` in ``block`` (inside ``loops``) of the
    ``arrays`` (active ones no loop owns for its writes), each with the outermost loop
    around it that neither rebinds ``x`` nor writes into it."""
    for stmt in block:
        op = facts.ops.get(stmt)
        x = op.args.get("x") if op is not None and op.key == "getitem" else None
        if (
            loops
            and id(stmt) not in found
            and isinstance(x, ast.Name)
            and x.id in arrays
            and x.id not in facts.sequences
            and x.id not in facts.maybe_sequences
            and (facts.shape(x).rank or 0) >= 1  # (an array: its adjoint is one too)
            and x.id not in facts.complex  # (a complex array changed in place is not
            # differentiated again: its Hessian would be refused; an integer one takes
            # no float adjoint)
            and x.id not in facts.maybe_integer
        ):
            owner = next((loop for loop in loops if not _changes(loop, x.id, facts)), None)
            if owner is not None:
                found[id(stmt)] = id(owner)
        if isinstance(stmt, ast.If):
            _read_only_items(stmt.body, facts, arrays, loops, found)
            _read_only_items(stmt.orelse, facts, arrays, loops, found)
        elif isinstance(stmt, (ast.For, ast.While)):
            _read_only_items(stmt.body, facts, arrays, [*loops, stmt], found)


def _changes(loop: ast.stmt, x: str, facts: Facts) -> bool:
    """Whether ``loop`` gives ``x`` a new value or writes into its items."""
    return _rebinds(loop, x) or any(
        is_setitem(s) and facts.ops[s].target == x for s, _ in walk_block(loop.body)
    )


def _rebinds(loop: ast.stmt, y: str) -> bool:
    """Whether ``loop`` (with its nested blocks, its own target too) assigns the name
    ``y`` (not an item of it)."""
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and node.id == y and isinstance(node.ctx, ast.Store):
            return True
    return False
