"""The reverse-mode emitter's trial sweep, for the tape planner: the adjoint made under
a plan, and which names it reads, and where (each statement's adjoint by its id)."""

from __future__ import annotations

import ast

from ...astwalk import loaded, nodes
from ..builder import Builder
from .tape_plan import TapePlan


class TrialSweep:
    """Part of ``_Reverse`` (:mod:`.sweeps`): the callback :meth:`TapePlanner.settle`
    calls with each plan it tries."""

    def _adjoint_reads(self, plan: TapePlan) -> set[str]:
        """The names the adjoint sweep reads under ``plan`` (for the planner): it makes
        the sweep, and, for each ``unbroadcast`` that reads only a shape, the shape from
        operands the adjoint has anyway where it can (else the name is read)."""
        self.shape_reads = []
        self.shapes = {}
        self.uniform = {}
        mark = self.builder.namer.mark()  # (the trial's own names are given again)
        self._emitted = []
        adjoint, _ = self._adjoint(self.core, self.norm.tree.body, 0)
        emitted, self._emitted = self._emitted, None
        kept = [*self.saves.values(), *self.records.values(), *self.counters.values()]
        if self.builder.callees is not None:  # (module-level names of callees' derivatives)
            kept += [n for names in self.builder.callees.names.values() for n in names]
        kept += list(self.tapes.values())
        self.builder.namer.rewind(mark, [*kept, self.tape] if self.tape else kept)
        reads = [s for s in flatten(adjoint) if not _is_zeroing(s)]
        walks: _Walks = {}  # (each statement walked once: _note_places reads it again)
        previous = plan.needed
        plan.needed = set(previous).union(*(_reads_of(s, self.builder, walks)[0] for s in reads))
        self._resolve_shape_reads()  # (which adds the shapes it could not compute)
        needed, plan.needed = plan.needed, previous
        self._note_places(emitted, needed, plan, walks)
        return needed

    def _note_places(
        self,
        emitted: list[tuple[int, list[ast.AST]]],
        needed: set[str],
        plan: TapePlan,
        walks: _Walks | None = None,
    ) -> None:
        """Add to ``plan.read_at`` the statements whose adjoints read the value of each
        name of ``needed`` in the code the trial sweep emitted, and to ``plan.shape_at``
        those that read only its shape and dtype: resets to zero (after a restore) and
        the shapes of ``unbroadcast`` (its own name, or the operands it was computed
        from). A name read nowhere there is read anywhere (``None``), for good.
        ``walks``: what :func:`_reads_of` found of trees already."""
        walks = {} if walks is None else walks
        values: dict[str, set[int]] = {}
        shapes: dict[str, set[int]] = {}
        for where, trees in emitted:
            for tree in trees:
                found = shapes if isinstance(tree, ast.stmt) and _is_zeroing(tree) else values
                every, read = _reads_of(_read_part(tree), self.builder, walks)
                for n in every:  # (``np.shape(t)`` and ``index_adjoint(g, t, i)``: t's shape)
                    (found if n in read else shapes).setdefault(n, set()).add(where)
        for stmt, u in self.shape_reads:
            shape = self.shapes.get((id(stmt), u))
            for n in [u] if shape is None else loaded(shape):
                shapes.setdefault(n, set()).add(id(stmt))
        for n in needed:
            if n in plan.read_at and plan.read_at[n] is None:
                continue
            if n not in values and n not in shapes:
                plan.read_at[n] = None
                continue
            plan.read_at.setdefault(n, set()).update(values.get(n, ()))
            plan.shape_at.setdefault(n, set()).update(shapes.get(n, ()))


#: what :func:`_reads_of` found of each tree, by id (with the tree, which keeps its id)
_Walks = dict[int, tuple[ast.AST, set[str], set[str]]]


def _reads_of(tree: ast.AST, builder: Builder, walks: _Walks) -> tuple[set[str], set[str]]:
    """The names ``tree`` reads, leaving out the shape argument of each ``unbroadcast``
    call (a shape is recomputed where its name is not kept: see _resolve_shape_reads);
    and of those, the ones it reads a value of, not only a shape and dtype
    (:func:`_shape_operands`). From one walk of ``tree``, kept in ``walks``."""
    hit = walks.get(id(tree))
    if hit is not None and hit[0] is tree:
        return hit[1], hit[2]
    found = nodes(tree)
    leave = _unbroadcast_shapes(found, builder)
    operands = _shape_operands(found, builder)
    every: set[str] = set()
    read: set[str] = set()
    for n in found:
        if type(n) is ast.Name and type(n.ctx) is ast.Load and id(n) not in leave:
            every.add(n.id)
            if id(n) not in operands:
                read.add(n.id)
    walks[id(tree)] = (tree, every, read)
    return every, read


def _unbroadcast_shapes(found: list[ast.AST], builder: Builder) -> set[int]:
    """The nodes (by id) of the shape arguments of the ``unbroadcast`` calls of ``found``."""
    helper = builder.helpers["unbroadcast"]
    return {
        id(inner)
        for n in found
        if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id == helper
        for a in n.args[1:]
        for inner in nodes(a)
    }


def _shape_operands(found: list[ast.AST], builder: Builder) -> set[int]:
    """The names (by node id) of which the nodes ``found`` (a tree's, :func:`nodes`) read
    only the shape and dtype: the operand of ``np.shape(t)`` and of ``np.shape(t[1:])``
    (a basic index's view, whose shape is fixed by ``t``'s), and the array of
    ``index_adjoint(g, t, i)`` (zeros like ``t`` around ``g``)."""
    adjoints = {builder.helpers.get("index_adjoint"), builder.helpers.get("index_adjoint_add")}
    out: set[int] = set()
    for n in found:
        if type(n) is not ast.Call or not n.args:
            continue
        f = n.func
        if type(f) is ast.Name and f.id in adjoints and len(n.args) == 3:
            operand = n.args[1]
        elif (
            type(f) is ast.Attribute
            and f.attr == "shape"
            and type(f.value) is ast.Name
            and f.value.id == builder.xp
            and len(n.args) == 1
        ):
            operand = n.args[0]
            if type(operand) is ast.Subscript and _basic(operand.slice):
                operand = operand.value
        else:
            continue
        if type(operand) is ast.Name:
            out.add(id(operand))
    return out


def _basic(index: ast.expr) -> bool:
    """Whether ``index`` is made of slices and numbers alone (a view's shape then
    depends on the array's shape alone; the names it reads are read as values)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(
        isinstance(p, ast.Slice)
        or (isinstance(p, ast.Constant) and (p.value is None or type(p.value) is int))
        or isinstance(p, ast.Name)
        for p in parts
    )


def _read_part(tree: ast.AST) -> ast.AST:
    """What a statement reads: of a write into an item (``y[i] = v``, a restore), the
    value and the index, not the array written into."""
    if not (isinstance(tree, ast.Assign) and isinstance(tree.targets[0], ast.Subscript)):
        return tree
    target, parts = tree.targets[0], [tree.value]
    while isinstance(target, ast.Subscript):
        parts.append(target.slice)
        target = target.value
    if not isinstance(target, ast.Name):
        parts.append(target)
    return ast.Tuple(elts=parts, ctx=ast.Load())


def flatten(block: list[ast.stmt]) -> list[ast.AST]:
    """Simple statements of ``block`` and the headers of its compound ones."""
    out: list[ast.AST] = []
    for stmt in block:
        if isinstance(stmt, ast.If):
            out.append(stmt.test)
            out.extend(flatten(stmt.body) + flatten(stmt.orelse))
        elif isinstance(stmt, (ast.For, ast.While)):
            out.append(stmt.iter if isinstance(stmt, ast.For) else stmt.test)
            out.extend(flatten(stmt.body))
        else:
            out.append(stmt)
    return out


def _is_zeroing(stmt: ast.stmt) -> bool:
    """``v_bar = np.zeros_like(v)``: its read of ``v`` needs no recording (at a
    live range's start ``v`` holds the right value; resets follow a pop)."""
    value = getattr(stmt, "value", None)
    return (
        isinstance(stmt, ast.Assign)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "zeros_like"
    )
