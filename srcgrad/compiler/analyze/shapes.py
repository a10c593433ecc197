"""Part of analyze: each name's shape facts (rank, broadcast key, which axes are
surely not of length 1), forward through the function; pytree structure of arguments."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from .facts import LEAF, SCALAR, Facts, Op, Shape, is_setitem
from .indices import index_rank
from .shapes_made_like import made_like


def _shapes_once(
    facts: Facts,
    assigns: list[ast.Assign],
    own: Any = None,
    pinned: dict[ast.Assign, Shape] | None = None,
) -> tuple[dict[ast.Assign, Any], bool, Any]:
    """Broadcast keys and ranks. A name defined more than once, or in a loop, gets
    its own key, and the rank every definition agrees on, found by optimistic
    iteration (a definition that reads a name whose rank is not found yet
    waits for the next round). Its axes known not to have length 1 are those every
    definition's are (from the optimistic start, they only shrink).

    ``own``: the function analyzed. A call of it with arguments of its parameters'
    ranks (a recursion) gives the rank its return value gets, found in the same
    iteration: if every return has rank r when the recursive calls' values have rank
    r, every call returns rank r (by induction on the depth of the recursion).

    ``pinned``: recursive calls given the shape assumed (see :func:`_shapes`), each an
    ordinary definition of that shape. Returns the recursive calls found (those of
    ``pinned`` where given), whether the iteration settled, and the rank found for the
    returned name (None where not known)."""
    multi = {n for n, defs in facts.definitions.items() if len(defs) > 1 or defs[0][1] > 0}
    multi -= facts.loop_indices
    if pinned is None:
        pinned = {}
        recursion = _recursion(facts, assigns, own, multi)
        multi |= {facts.ops[s].target for s in recursion}
    else:
        recursion = {}
    # names given one value in a loop: they take their operands' key where that key
    # stands for one shape in every trip (see _fixed_key), else their own
    once = {
        n
        for n in multi
        if len(facts.definitions.get(n, [])) == 1 and n not in {p.arg for p in facts.params}
    } - {facts.ops[s].target for s in recursion}
    fixed: dict[str, Shape] = {}
    given_once: dict[str, bool] = {}  # (what _fixed_key found of each name)
    for name in facts.loop_indices:
        facts.shapes[name] = SCALAR
    state: dict[str, int | None] = {}  # absent: not known yet
    wide: dict[str, tuple[bool, ...] | None] = {}
    for param in facts.params:  # a parameter's first value is its argument
        if param.arg in multi and param.arg in facts.shapes:
            state[param.arg] = facts.shapes[param.arg].rank
            wide[param.arg] = facts.shapes[param.arg].wide

    settled = False
    for _ in range(20):
        before = dict(state), dict(wide)
        for name in multi:
            facts.shapes[name] = fixed.get(name) or _joined(name, state, wide)
        for stmt in assigns:
            if stmt in recursion:
                _recursive_call(facts, stmt, multi, state, wide, recursion[stmt])
            else:
                _shape_definition(facts, stmt, multi, state, wide, pinned.get(stmt))
                target = facts.ops[stmt].target
                shape = facts.op_shapes[id(stmt)]
                if target in once and target in state and _fixed_key(shape, facts, given_once):
                    fixed[target] = facts.shapes[target] = shape
                else:
                    fixed.pop(target, None)
        if (state, wide) == before:
            settled = True
            break
    _final_shapes(facts, multi, state, wide, fixed, settled)
    return (pinned or recursion), settled, _results(facts, assigns, recursion, pinned)


def _results(
    facts: Facts,
    assigns: list[ast.Assign],
    recursion: dict[ast.Assign, Any],
    pinned: dict[ast.Assign, Shape],
) -> int | None:
    """Each statement's result shape, from the names' final shapes (a recursive call's:
    its target's; a pinned one's: the shape assumed); the rank of the returned name."""
    for stmt in assigns:
        _update_ranks(facts.ops[stmt], facts)
        if stmt in recursion:
            facts.op_shapes[id(stmt)] = facts.shapes[facts.ops[stmt].target]
        else:
            facts.op_shapes[id(stmt)] = pinned.get(stmt) or _result_shape(facts.ops[stmt], facts)
    returned = facts.returned
    if not isinstance(returned, ast.Name) or returned.id not in facts.shapes:
        return None
    return _plain(facts.shapes[returned.id].rank)


def _final_shapes(
    facts: Facts,
    multi: set[str],
    state: dict[str, Any],
    wide: dict[str, Any],
    fixed: dict[str, Shape],
    settled: bool,
) -> None:
    """The shape of each name defined more than once (or in a loop) once the iteration of
    :func:`_shapes_once` has ended: settled or not, and given one value or not."""
    for name in multi:
        rank = state.get(name)
        if rank == 0 and rank is not _CONFLICT:
            facts.shapes[name] = SCALAR  # every definition gives a scalar: shape ()
        elif settled and name in fixed:
            facts.shapes[name] = fixed[name]
        else:
            facts.shapes[name] = (
                _joined(name, state, wide) if settled else Shape(frozenset({name}), _plain(rank))
            )


#: the rank, in :func:`_shapes`, of a name whose definitions give different ones
_CONFLICT: Any = object()


def _joined(name: str, state: dict[str, Any], wide: dict[str, Any]) -> Shape:
    """The shape of a name defined more than once, from what its definitions agree on
    so far (``state``: its rank, ``wide``: its axes not of length 1)."""
    rank = _plain(state.get(name))
    known = wide.get(name)
    return Shape(frozenset({name}), rank, known if rank is not None else None)


def _shape_definition(
    facts: Facts,
    stmt: ast.Assign,
    multi: set[str],
    state: dict[str, Any],
    wide: dict[str, Any],
    pinned: Shape | None = None,
) -> None:
    """One round of :func:`_shapes` at one definition: its shape (``pinned``: the one
    assumed), and for a name defined more than once (in ``multi``), what its definitions
    agree on so far."""
    op = facts.ops[stmt]
    _update_ranks(op, facts)
    shape = pinned or _result_shape(op, facts)
    facts.op_shapes[id(stmt)] = shape
    if op.target not in multi:
        facts.shapes[op.target] = shape
        return
    waiting = any(
        isinstance(a, ast.Name) and a.id in multi and a.id not in state for a in op.args.values()
    )
    if waiting:
        return
    old = state.get(op.target)
    if op.target not in state:
        state[op.target] = shape.rank
        wide[op.target] = shape.wide
    else:
        if old is not _CONFLICT and old != shape.rank:
            state[op.target] = _CONFLICT
        wide[op.target] = _both_wide(wide[op.target], shape.wide)
    facts.shapes[op.target] = _joined(op.target, state, wide)


def _recursion(
    facts: Facts, assigns: list[ast.Assign], own: Any, multi: set[str]
) -> dict[ast.Assign, list[tuple[ast.expr, int]]]:
    """The calls of ``own`` (the function analyzed) whose value may take the rank the
    function returns (a name every return assigns, more than once): each with its
    arguments and the ranks of the parameters they are given to (all known numbers,
    no parameter given a function)."""
    returned = facts.returned
    if own is None or not isinstance(returned, ast.Name) or returned.id not in multi:
        return {}
    ranks = [facts.shapes[p.arg].rank if p.arg in facts.shapes else None for p in facts.params]
    if facts.statics or not all(type(r) is int for r in ranks):
        return {}
    found = {}
    for stmt in assigns:
        op = facts.ops[stmt]
        if (
            op.callee is own
            and op.rule is None
            and op.call_args is not None
            and len(op.call_args) == len(ranks)
        ):
            found[stmt] = list(zip(op.call_args, ranks))
    return found


def _recursive_call(
    facts: Facts,
    stmt: ast.Assign,
    multi: set[str],
    state: dict[str, Any],
    wide: dict[str, Any],
    arguments: list[tuple[ast.expr, int]],
) -> None:
    """One round of :func:`_shapes` at ``r = f(...)``, a call of the function analyzed:
    ``r`` has the rank found so far for what the function returns, where the arguments
    have the ranks of its parameters; it waits while either is not known."""
    op = facts.ops[stmt]
    facts.op_shapes[id(stmt)] = facts.shapes[op.target] = Shape(frozenset({op.target}), None)
    for a, rank in arguments:
        if isinstance(a, ast.Name) and a.id in multi and a.id not in state:
            return  # (waits)
        if facts.shape(a).rank != rank:
            state[op.target], wide[op.target] = _CONFLICT, None  # (another specialization)
            return
    returned = facts.returned.id
    if returned not in state:
        return
    old = state.get(op.target, state[returned])
    state[op.target] = state[returned] if old == state[returned] else _CONFLICT
    wide[op.target] = None
    facts.shapes[op.target] = _joined(op.target, state, wide)
    facts.op_shapes[id(stmt)] = facts.shapes[op.target]


def _both_wide(a: tuple[bool, ...] | None, b: tuple[bool, ...] | None) -> tuple[bool, ...] | None:
    """The axes known not to have length 1 in both of two values (of one rank)."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x and y for x, y in zip(a, b))


def _plain(rank: Any) -> int | None:
    return rank if isinstance(rank, int) else None


def _update_ranks(op: Op, facts: Facts) -> None:
    """Tell a rule's context the ranks of its operands, as known now."""
    if op.ctx is None:
        return
    for p, a in op.args.items():
        op.ctx.ranks[p] = facts.shape(a).rank
        if isinstance(a, ast.Name) and a.id in facts.lengths:
            op.ctx.ranks[f"len:{p}"] = facts.lengths[a.id]
    for key in op.ctx.ranks:
        if key.startswith("index:"):
            op.ctx.ranks[key] = index_rank(ast.Name(id=key[6:]), facts)


def _static_shape(name: str, value: Any) -> Shape:
    if isinstance(value, (bool, int, float, complex, np.generic, type, np.dtype)):
        return SCALAR  # (a type or dtype, as a dtype argument: not an array operand)
    if isinstance(value, np.ndarray):
        return Shape(frozenset({name}) if value.ndim else frozenset(), value.ndim)
    if isinstance(value, range):  # (numbers in a row, as np.shape reads it)
        return Shape(frozenset({name}), 1)
    return Shape(frozenset({name}), None)


def _tree_parts(facts: Facts, assigns: list[ast.stmt], params: set[str]) -> None:
    """The structure of every name read out of a pytree argument (``layer = layers[i]``,
    ``W = p["W"]``), where all its definitions agree on one."""
    for _ in range(len(assigns) + 1):  # a loop may read a part defined later in its body
        found: dict[str, list[Any]] = {}
        found_wide: dict[str, list[Any]] = {}
        for stmt in assigns:
            op = facts.ops[stmt]
            x = op.args.get("x") if op.key in ("getitem", "copy") else None
            part = wide = None
            if isinstance(x, ast.Name) and x.id in facts.trees:
                part, wide = facts.trees[x.id], facts.tree_wide.get(x.id)
                if op.key == "getitem":
                    index = op.ctx.index if op.ctx else None
                    part = _tree_child(part, index)
                    wide = _tree_child(wide, index) if wide and wide[0] != LEAF else None
            found.setdefault(op.target, []).append(part)
            found_wide.setdefault(op.target, []).append(wide)
        before = dict(facts.trees), dict(facts.tree_wide)
        for target, parts in found.items():
            if target in params:
                continue
            defs = facts.definitions.get(target, [])
            wides = found_wide[target]
            if (
                len(parts) == len(defs)
                and parts[0] is not None
                and parts.count(parts[0]) == len(parts)
            ):
                facts.trees[target] = parts[0]
                if wides[0] is not None and wides.count(wides[0]) == len(wides):
                    facts.tree_wide[target] = wides[0]
                else:
                    facts.tree_wide.pop(target, None)
            else:
                facts.trees.pop(target, None)
                facts.tree_wide.pop(target, None)
        if (facts.trees, facts.tree_wide) == before:
            return


def _tree_child(structure: Any, index: ast.expr | None) -> Any:
    """The structure of ``value[index]`` for a value of this structure, if known."""
    if not isinstance(structure, tuple) or index is None:
        return None
    kind, items = structure
    keyed = kind == "dict" or (isinstance(kind, tuple) and kind[0] == "dataclass")
    if isinstance(index, ast.Constant):
        key = index.value
        if keyed:
            return next((s for k, s in items if k == key), None)
        if type(key) is int and -len(items) <= key < len(items):
            return items[key]
        return None
    if keyed:  # any value of a dict whose values are alike
        items = tuple(s for _, s in items)
    if items and all(s == items[0] for s in items):
        return items[0]  # any element of a list whose elements are alike
    return None


def _result_shape(op: Op, facts: Facts) -> Shape:
    part = facts.trees.get(op.target)
    if isinstance(part, int) and op.key in ("getitem", "copy"):  # a leaf of a pytree
        leaf = facts.tree_wide.get(op.target)
        wide = leaf[1] if leaf and leaf[0] == LEAF and len(leaf[1] or ()) == part else None
        return SCALAR if part == 0 else Shape(frozenset({op.target}), part, wide)
    rule = op.rule
    if rule is None or op.ctx is None:
        return Shape(frozenset({op.target}), None)
    if op.key in ("copy", "setitem"):
        return facts.shape(op.args["x"])
    if op.key in ("pack", "append"):
        return Shape(frozenset({op.target}), None)
    rank = rule.rank(op.ctx) if rule.rank else None
    like = made_like(op, facts)
    if like is not None and like.rank is not None and rank in (None, like.rank):
        return SCALAR if like.rank == 0 else like
    if rank == 0:
        return SCALAR
    wide = _result_wide(op, facts, rank)
    if op.key == "getitem":
        token = _slice_token(op, facts)
        if token is not None:
            return Shape(frozenset({token}), rank, wide)
    if rule.elementwise:
        key = frozenset().union(*(facts.shape(a).key for a in op.args.values()))
        return Shape(key, rank, wide)
    return Shape(frozenset({op.target}), rank, wide)


def _fixed_key(shape: Shape, facts: Facts, given_once: dict[str, bool]) -> bool:
    """Whether ``shape``'s broadcast key stands for one shape wherever it is read: each
    part is a slice token (:func:`_slice_token`: of values given once) or a name given
    one value outside loops (a parameter never reassigned), writes into its items aside.
    A value given once in a loop and computed from such values has that shape in every
    trip (``t = u[2:] - 2.0 * u[1:-1]``, ``u`` written into only), so it shares their
    key; a key of a name given values in a loop (``h = np.tanh(h @ W)``) does not.
    ``given_once``: what this found of each name so far (a name with many definitions
    is read in many keys: its definitions are counted once)."""
    if shape.rank is None or not shape.key:
        return False
    for n in shape.key:
        if n.startswith("{"):
            continue  # (a slice token)
        once = given_once.get(n)
        if once is None:
            once = given_once[n] = _given_once(n, facts)
        if not once:
            return False
    return True


def _given_once(n: str, facts: Facts) -> bool:
    """Whether the name ``n`` is given one value outside loops (a parameter never
    reassigned), writes into its items aside, and is no sequence or loop index."""
    if n in facts.sequences or n in facts.maybe_sequences or n in facts.loop_indices:
        return False
    defs = [(s, depth) for s, depth in facts.definitions.get(n, []) if not is_setitem(s)]
    if n in {a.arg for a in facts.params}:
        return not defs
    return len(defs) == 1 and defs[0][1] == 0


def _slice_token(op: Op, facts: Facts) -> str | None:
    """A broadcast key shared by slices that provably have one shape: ``x[1:]`` and
    ``x[:-1]`` both have ``len(x) - 1`` rows, whatever ``x``'s length. Each part of the
    index is ``:`` or a step-1 slice from a start >= 0 to an end < 0 (or none), whose
    length is the axis's less ``start - end``; ``x`` is a value given once (writes into
    its items, ``x[1:-1] = v``, keep its shape: the stencil of a heat equation)."""
    x = op.args.get("x")
    if not isinstance(x, ast.Name) or facts.shape(x).rank is None:
        return None
    base = facts.shape(x).key
    params = {a.arg for a in facts.params}
    for n in base:  # names given one value (parameters and single definitions)
        if n in facts.sequences or n in facts.maybe_sequences:
            return None
        defs = [(s, depth) for s, depth in facts.definitions.get(n, []) if not is_setitem(s)]
        if (n in params and defs) or len(defs) > 1 or any(depth > 0 for _, depth in defs):
            return None
    index = op.ctx.index
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    offsets = []
    for part in parts:
        if not isinstance(part, ast.Slice) or part.step is not None:
            return None
        start, end = _int_const(part.lower, 0), _int_const(part.upper, 0)
        if start is None or end is None or start < 0 or end > 0:
            return None
        if part.upper is not None and end == 0:
            return None  # x[:0] is empty
        offsets.append(str(start - end))
    if all(o == "0" for o in offsets):
        return None  # the whole of x: a copy, whose key is x's own
    return "{" + ",".join(sorted(base)) + "}[" + ",".join(offsets) + "]"


def _int_const(node: ast.expr | None, default: int) -> int | None:
    if node is None:
        return default
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _result_wide(op: Op, facts: Facts, rank: int | None) -> tuple[bool, ...] | None:
    """Which axes of an operation's result are known not to have length 1, from its
    operands' (broadcasting, ``@``, ``.T``, and indexing with integers and ``:``)."""
    if rank is None:
        return None
    operands = [facts.shape(op.args[p]) for p in op.rule.params if p in op.args]
    if op.rule.elementwise:
        if any(s.rank is None or s.rank > rank for s in operands):
            return None
        wide = [False] * rank
        for s in operands:  # aligned on the right, as numpy broadcasts
            for i, w in enumerate(s.wide or ()):
                wide[rank - s.rank + i] |= w
        return tuple(wide)
    if op.key in (ast.MatMult, np.matmul) and len(operands) == 2:
        a, b = (s.wide for s in operands)
        if a is None or b is None or not a or not b:
            return None
        if len(b) == 1:  # a matrix (or a stack of them) times a vector
            out = a[:-1]
        elif len(a) == 1:
            out = b[:-2] + b[-1:]
        else:  # the stacks broadcast; then rows of a, columns of b
            batch = max(len(a), len(b)) - 2
            stack = [False] * batch
            for w in (a[:-2], b[:-2]):
                for i, x in enumerate(w):
                    stack[batch - len(w) + i] |= x
            out = (*stack, a[-2], b[-1])
        return tuple(out) if len(out) == rank else None
    if op.key == ("attr", "T") and operands and operands[0].wide is not None:
        return tuple(reversed(operands[0].wide))
    if op.key == "getitem" and operands and operands[0].wide is not None:
        index = op.ctx.index
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        wide = list(operands[0].wide)
        if len(parts) > len(wide):
            return None
        kept = []
        for i, part in enumerate(parts):
            if isinstance(part, ast.Slice) and not (part.lower or part.upper or part.step):
                kept.append(wide[i])  # `:` keeps the axis
            elif not (
                (isinstance(part, ast.Constant) and type(part.value) is int)
                or (isinstance(part, ast.Name) and part.id in facts.loop_indices)
            ):
                return None
        out = tuple(kept) + tuple(wide[len(parts) :])
        return out if len(out) == rank else None
    return None
