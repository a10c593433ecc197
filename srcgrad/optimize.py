"""Stage 5, optimize: passes that make generated code as short as a careful
person's, without changing what it computes.

In and out: a generated ``ast.FunctionDef`` (straight-line code, ifs and loops).
Each pass is a function ``body -> (body, changed)``; :func:`optimize` runs
them to a fixed point:

- :func:`fold_first_accumulation`: ``v = zeros_like(x) ... v = v + c``
  becomes ``v = c`` (nothing reads ``v`` in between);
- :func:`propagate_copies`: ``a = b`` or ``a = 1.0`` is substituted into
  the later uses of ``a``, or renames the single definition of ``b``;
- :func:`double_repeated_terms`: ``v = e; v = v + e`` is ``v = e * 2``;
- :func:`subtract_negated_start`: ``v = -a; v = v + b`` is ``v = b - a``;
- :func:`reuse_computed_values`: ``np.cos(x)`` in an adjoint is ``c`` where the primal
  has ``c = np.cos(x)`` and neither name is given another value;
- :func:`simplify`: ``g * 1.0 is ``g``, ``-(-g)`` is ``g``, ``2 - 1`` is
  ``1``, ``x ** 1`` is ``x``, ``a + -b`` is ``a - b``; in a chain of products the
  powers of two and signs merge into one constant (``g / (2 * u) * 2`` is ``g / u``);
  never where the fold would make a value share memory with an array the code later
  writes into in place (:func:`written_in_place`);
- :func:`eliminate_dead_code`: assignments nobody reads, and comments whose
  block became empty, go;
- :func:`inline_temporaries` (last, once): a temporary read once is written
  into the expression that reads it, where the line stays short, so the
  primal reads like the user's code again: ``t1 = x @ w; t2 = np.exp(-t1)``
  becomes ``t2 = np.exp(-(x @ w))``.
"""

from __future__ import annotations

import ast
import bisect
import copy
import math
import operator
import threading
from collections import Counter
from collections.abc import Iterator

import numpy as np

from .analyze import is_append, popped
from .astwalk import loaded, nodes, stored
from .builder import is_comment


def optimize(
    func: ast.FunctionDef,
    temporaries: set[str] = frozenset(),
    keep: set[str] = frozenset(),
    helpers: dict[str, str] | None = None,
    xp: str | None = None,
) -> ast.FunctionDef:
    """Run every pass until none changes anything, then inline ``temporaries``.

    Names in ``keep`` (the user's variables) are never substituted away. ``helpers``:
    the names the code calls srcgrad's runtime helpers by; ``xp``: the array module's.
    """
    _local.memo = {}
    try:
        return _optimize(func, temporaries, keep, helpers, xp)
    finally:
        _local.memo = None


def _optimize(
    func: ast.FunctionDef,
    temporaries: set[str],
    keep: set[str],
    helpers: dict[str, str] | None,
    xp: str | None,
) -> ast.FunctionDef:
    params = {a.arg for a in func.args.args} | set(keep)
    body = list(func.body)
    arguments = {a.arg for a in func.args.args}
    for _ in range(100):
        changed = False
        for step in (
            fold_first_accumulation,
            propagate_copies,
            double_repeated_terms,
            subtract_negated_start,
            lambda b, p: reuse_computed_values(b, arguments, xp),
            drop_self_assignments,
            simplify,
            eliminate_dead_code,
        ):
            body, did = step(body, params)
            changed = changed or did
        if not changed:
            break
    body = inline_temporaries(body, set(temporaries), params)
    body, _ = simplify(body, params)
    body, _ = subtract_negated_start(body, params)  # (inlining makes more of them)
    if helpers is not None:
        body = accumulate_in_place(body, params, helpers)
    func.body = body
    return func


def accumulate_in_place(
    body: list[ast.stmt], params: set[str], helpers: dict[str, str]
) -> list[ast.stmt]:
    """``v = v + e`` is ``v += e``, and ``v = v + index_adjoint(g, x, i)`` is ``v[i] += g``,
    where no one else can see ``v``'s array: every value ``v`` is given is a new array
    (zeros, an index adjoint, the result of arithmetic), and ``v`` is read only by such
    accumulations and by ``return``.

    Before::                                        After::

        W_bar = np.zeros_like(W)                        W_bar = np.zeros_like(W)
        for t in reversed(t3):                          for t in reversed(t3):
            W_bar = W_bar + h.T @ t4_bar                    W_bar += h.T @ t4_bar
        x_bar = index_adjoint(a_bar, x, slice(1, None)) x_bar = index_adjoint(...)
        x_bar = x_bar + index_adjoint(b_bar, x, 0)      x_bar[0] += b_bar
    """
    index_adjoint = helpers.get("index_adjoint")
    fresh_calls = {helpers.get(h) for h in ("index_adjoint", "index_adjoint_add")}

    def call_of(value: ast.expr, names: set[str | None]) -> ast.Call | None:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            if value.func.id in names and len(value.args) == 3 and not value.keywords:
                return value
        return None

    def accumulation(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
        """``(v, e)`` for ``v = v + e`` (``e`` not reading ``v``)."""
        v = target(stmt)
        value = getattr(stmt, "value", None)
        if (
            v is not None
            and isinstance(stmt, ast.Assign)
            and isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)
            and isinstance(value.left, ast.Name)
            and value.left.id == v
            and v not in reads(value.right)
        ):
            return v, value.right
        return None

    def made(value: ast.expr | None) -> str | None:
        """ "array" for a new array, "number" for a zero that may be a Python number."""
        if call_of(value, fresh_calls) is not None or (
            _is_zeros_like(value) and not isinstance(value, ast.Constant)
        ):
            return "array"
        if isinstance(value, ast.Constant) and value.value == 0.0:
            return "number"
        if isinstance(value, (ast.BinOp, ast.UnaryOp)):
            return "number"  # an array, or a number where the operands are numbers
        return None

    statements = list(_statements(body))
    candidates = {a[0] for s in statements if (a := accumulation(s)) is not None} - params
    indexable = set(candidates)  # every value an array: v[i] += g is safe
    for s in statements:
        if isinstance(s, ast.Return):
            continue
        found = accumulation(s)
        s_reads, s_writes = set(own_reads(s)), set(own_writes(s))
        for v in list(candidates & (s_reads | s_writes)):
            if found is not None and found[0] == v:
                if call_of(found[1], {index_adjoint}) is None:
                    indexable.discard(v)  # v + e: perhaps a number, if v was one
                continue
            if v in s_reads:
                candidates.discard(v)
            elif v in s_writes:
                kind = made(getattr(s, "value", None)) if isinstance(s, ast.Assign) else None
                if kind is None:
                    candidates.discard(v)
                elif kind != "array":
                    indexable.discard(v)
    if not candidates:
        return body

    def rewrite(block: list[ast.stmt]) -> list[ast.stmt]:
        out = []
        for s in block:
            found = accumulation(s)
            if found is not None and found[0] in candidates:
                v, e = found
                call = call_of(e, {index_adjoint})
                if call is not None and v in indexable:
                    where: ast.expr = ast.Subscript(
                        value=ast.Name(id=v, ctx=ast.Load()),
                        slice=_as_index(call.args[2]),
                        ctx=ast.Store(),
                    )
                    e = call.args[0]
                else:
                    where = ast.Name(id=v, ctx=ast.Store())
                out.append(ast.copy_location(ast.AugAssign(target=where, op=ast.Add(), value=e), s))
                continue
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(s, field, rewrite(inner))
            out.append(s)
        return out

    return rewrite(body)


def _as_index(value: ast.expr) -> ast.expr:
    """An index value as subscript syntax: ``slice(1, None)`` becomes ``1:``."""
    if isinstance(value, ast.Tuple):
        return ast.Tuple(elts=[_as_index(e) for e in value.elts], ctx=ast.Load())
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "slice"
        and 1 <= len(value.args) <= 3
        and not value.keywords
    ):
        args = [None if isinstance(a, ast.Constant) and a.value is None else a for a in value.args]
        if len(args) == 1:
            return ast.Slice(lower=None, upper=args[0], step=None)
        return ast.Slice(*(args + [None] * (3 - len(args))))
    return value


# -- helpers -----------------------------------------------------------------------------
def reads(node: ast.AST) -> list[str]:
    """Names a statement (with its nested blocks) or expression reads."""
    memo = getattr(_local, "memo", None)
    if memo is not None and isinstance(node, ast.stmt):
        return list(_summary(node, memo)[0])
    return _reads(node)


def _reads(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):  # the target's index (and written array) count too
        node = ast.Tuple(elts=[node.value, *node.targets], ctx=ast.Load())
    return loaded(node)


#: while :func:`optimize` runs, in ``_local.memo``: each simple statement's reads and
#: writes by id, with the statement itself (so that no other statement takes its id).
#: The passes ask for them tens of times per statement; one that changes a statement in
#: place forgets it (:func:`_forget`). A compound statement's come from its blocks'.
_local = threading.local()
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.Pass)


def _summary(stmt: ast.stmt, memo: dict) -> tuple[list[str], list[str]]:
    hit = memo.get(id(stmt))
    if hit is not None and hit[0] is stmt:
        return hit[1], hit[2]
    if isinstance(stmt, _SIMPLE):
        found = _reads(stmt), stored(stmt)
        memo[id(stmt)] = (stmt, *found)
        return found
    if isinstance(stmt, (ast.If, ast.For, ast.While)):
        head = [stmt.target, stmt.iter] if isinstance(stmt, ast.For) else [stmt.test]
        read = [n for h in head for n in loaded(h)]
        written = [n for h in head for n in stored(h)]
        for inner in (*stmt.body, *stmt.orelse):
            r, w = _summary(inner, memo)
            read += r
            written += w
        return read, written
    return _reads(stmt), stored(stmt)


def _forget(stmt: ast.stmt) -> None:
    """``stmt`` (and any statement in its blocks) changed in place."""
    memo = getattr(_local, "memo", None)
    if memo is not None:
        if isinstance(stmt, _SIMPLE):
            memo.pop(id(stmt), None)
            return
        for n in nodes(stmt):
            if isinstance(n, ast.stmt):
                memo.pop(id(n), None)


def own_reads(stmt: ast.stmt) -> list[str]:
    """Names a statement reads itself, not in its nested blocks."""
    if isinstance(stmt, (ast.If, ast.While)):
        return reads(stmt.test)
    if isinstance(stmt, ast.For):
        return reads(stmt.iter)
    return reads(stmt)


def writes(node: ast.AST) -> list[str]:
    """Names a statement (with its nested blocks) assigns."""
    memo = getattr(_local, "memo", None)
    if memo is not None and isinstance(node, ast.stmt):
        return list(_summary(node, memo)[1])
    return stored(node)


def own_writes(stmt: ast.stmt) -> list[str]:
    """Names a statement assigns itself, not in its nested blocks."""
    if isinstance(stmt, ast.For):
        return writes(stmt.target)
    if isinstance(stmt, (ast.If, ast.While)):
        return []
    return writes(stmt)


def target(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """``body`` and every block nested in it (if branches, loop bodies)."""
    yield body
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from blocks(stmt.body)
            yield from blocks(stmt.orelse)
        elif isinstance(stmt, (ast.For, ast.While)):
            yield from blocks(stmt.body)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for block in blocks(body):
        yield from block


def _pure(value: ast.expr) -> bool:
    """Whether evaluating ``value`` has no effect but its result (a tape pop has)."""
    return not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "pop"
        for n in nodes(value)
    )


class _Replace(ast.NodeTransformer):
    def __init__(self, old: str, new: ast.expr) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id == self.old and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.new)
        return node


def _is_zeros_like(value: ast.expr) -> bool:
    """``np.zeros_like(x)``, ``zeros_seq(xs)``, ``zero_adjoint(x)`` or ``0.0``: an
    adjoint's zero start."""
    if isinstance(value, ast.Constant) and type(value.value) is float and value.value == 0.0:
        return True
    if not isinstance(value, ast.Call) or len(value.args) != 1 or value.keywords:
        return False
    func = value.func
    return (isinstance(func, ast.Attribute) and func.attr == "zeros_like") or (
        isinstance(func, ast.Name) and func.id.startswith(("zeros_seq", "zero_adjoint"))
    )


def _accumulated(v: str, value: ast.expr) -> ast.expr | None:
    """``c`` if ``value`` is ``v + c`` or ``add_seq(v, c)`` (``c`` not reading ``v``)."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        left, right = value.left, value.right
    elif (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id.startswith("add_seq")
        and len(value.args) == 2
    ):
        left, right = value.args
    else:
        return None
    if isinstance(left, ast.Name) and left.id == v and v not in reads(right):
        return right
    return None


# -- passes ------------------------------------------------------------------------------
def fold_first_accumulation(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """``v = zeros_like(x)`` followed (in the same block) by ``v = v + c`` is ``v = c``.

    Before::                      After::

        x_bar = np.zeros_like(x)      ...
        ...                           x_bar = y_bar * 2
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


def _negated(value: ast.expr) -> ast.expr | None:
    """``a`` where ``value`` is ``-a``, or a product or quotient whose leftmost factor is
    negated (``-a * b / c`` is ``-(a * b / c)`` exactly); None otherwise."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        return value.operand
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mult, ast.Div)):
        left = _negated(value.left)
        if left is not None:
            return ast.BinOp(left=left, op=value.op, right=value.right)
    return None


def _written_into(stmt: ast.stmt) -> set[str]:
    """Names whose arrays ``stmt`` (with its nested blocks) changes in place: ``y[i] = v``,
    ``y[i] += v``, ``y += v``."""
    out = set()
    for node in nodes(stmt):
        where = node.target if isinstance(node, ast.AugAssign) else None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            where = node
        while isinstance(where, ast.Subscript):
            where = where.value
        if isinstance(where, ast.Name):
            out.add(where.id)
    return out


#: array attributes that are values of their own, not views of the array
_VALUE_ATTRIBUTES = frozenset("shape size ndim dtype itemsize nbytes".split())
#: array functions and methods (besides ufuncs) whose result is always a new array
_NEW_ARRAYS = frozenset(
    "array copy zeros_like ones_like full_like empty_like zeros ones full empty arange "
    "sum mean prod std var max min amax amin cumsum cumprod dot matmul outer inner "
    "tensordot where clip concatenate stack hstack vstack tile repeat sort".split()
)


def shares(value: ast.expr) -> set[str]:
    """Names whose arrays the value of ``value`` may be, or be a view of: a name, an
    attribute (``.T``) or index of one, a call that may return an argument or a view of
    one (``unbroadcast(g, x)`` returns ``g`` where the shapes agree, ``np.reshape``);
    arithmetic, ufuncs and the functions of ``_NEW_ARRAYS`` make new arrays."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, ast.Attribute):
        return set() if value.attr in _VALUE_ATTRIBUTES else shares(value.value)
    if isinstance(value, ast.Subscript):
        return shares(value.value)
    if isinstance(value, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare)):
        return set()
    if isinstance(value, ast.Call):
        func = value.func
        if isinstance(func, ast.Attribute) and (
            func.attr in _NEW_ARRAYS or isinstance(getattr(np, func.attr, None), np.ufunc)
        ):
            return set()
        out = shares(func.value) if isinstance(func, ast.Attribute) else set()
        for arg in [*value.args, *(k.value for k in value.keywords)]:
            out |= shares(arg)
        return out
    if isinstance(value, (ast.Tuple, ast.List)):
        return set().union(*(shares(e) for e in value.elts))
    return set(reads(value))


def _stmt_shares(stmt: ast.stmt) -> set[str]:
    """Names whose arrays the value a statement stores, pushes or returns may share."""
    value = getattr(stmt, "value", None)
    if is_append(stmt):
        return set().union(*(shares(a) for a in value.args))
    if isinstance(stmt, (ast.Assign, ast.Return)) and value is not None:
        return shares(value)
    return set()


def written_in_place(body: list[ast.stmt], params: set[str] = frozenset()) -> set[str]:
    """Names whose arrays may be written into in place (``y[i] = v``, ``y += v``), and
    every name that may share memory with one (``a = y``, ``a = y.T``, ``t.append(y)``
    and ``b = t.pop()``), found by joining names into groups through assignments. Only
    the function's own names join (those it assigns, and ``params``): not the modules and
    helpers it calls (``np`` in ``np.reshape(y, s)``).

    A write right after its name was given a new array (``y_bar = y_bar.copy();
    y_bar[i] = 0.0``) reaches no other name and does not count.
    """
    own = set(params) | {n for s in _statements(body) for n in writes(s)}
    parent: dict[str, str] = {}

    def find(n: str) -> str:
        while parent.get(n, n) != n:
            parent[n] = parent.get(parent[n], parent[n])  # (halve the path: near-linear)
            n = parent[n]
        return n

    def join(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    written: set[str] = set()
    for block in blocks(body):
        for k, stmt in enumerate(block):
            if isinstance(stmt, ast.Assign) or is_append(stmt):
                if is_append(stmt):
                    names = [n for n in [stmt.value.func.value] if isinstance(n, ast.Name)]
                    names = [n.id for n in names]
                else:
                    names = writes(ast.Tuple(elts=stmt.targets, ctx=ast.Store()))
                for a in names:
                    for b in _stmt_shares(stmt) & own:  # (b = t.pop(): b shares t's contents)
                        join(a, b)
            into = _written_into(stmt) if not isinstance(stmt, _COMPOUND) else set()
            for v in into:
                prior = block[k - 1] if k else None
                fresh = (
                    prior is not None
                    and target(prior) == v
                    and not _stmt_shares(prior)
                    and _pure(prior.value)
                )
                if not fresh:
                    written.add(v)
    roots = {find(v) for v in written}
    names = {n for s in _statements(body) for n in reads(s) + writes(s)}
    return {n for n in names | written if find(n) in roots}


_COMPOUND = (ast.If, ast.For, ast.While)


def subtract_negated_start(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """``v = -a`` followed (in the same block) by ``v = v + b`` is ``v = b - a``, where
    nothing between reads or writes ``v`` or changes what ``a`` reads: one operation
    instead of two, and exactly the same numbers (``-a + b`` is ``b - a``).

    Before::                      After::

        a_bar = -r_bar                ...
        ...                           a_bar = t4_bar - r_bar
        a_bar = a_bar + t4_bar
    """
    changed = False
    for block in blocks(body):
        i = 0
        while i < len(block):
            v = target(block[i])
            value = block[i].value if v is not None else None
            positive = _negated(value) if value is not None else None
            if positive is None or not _pure(value) or v in reads(value):
                i += 1
                continue
            inputs = set(reads(positive))
            for j in range(i + 1, len(block)):
                stmt = block[j]
                if v in reads(stmt) or v in writes(stmt):
                    added = stmt.value if isinstance(stmt, ast.Assign) else None
                    rest = _accumulated(v, added) if isinstance(added, ast.BinOp) else None
                    if rest is not None and target(stmt) == v:
                        difference = ast.BinOp(left=rest, op=ast.Sub(), right=positive)
                        block[j] = ast.copy_location(
                            ast.Assign(targets=stmt.targets, value=difference), stmt
                        )
                        del block[i]
                        changed = True
                        i -= 1
                    break
                if inputs & (set(writes(stmt)) | _written_into(stmt)):
                    break
            i += 1
    return body, changed


def propagate_copies(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """Remove ``a = b`` and ``a = <number>`` by substitution or renaming.

    Before::                 After::

        y_bar = 1.0              x_bar = 2.0 * np.cos(x)
        t_bar = y_bar
        x_bar = 2.0 * t_bar * np.cos(x)

    Only where ``a`` has this one definition and every read of it follows in
    the same block, and ``b`` does not change before those reads.
    """
    assigned = Counter(n for s in _statements(body) for n in own_writes(s))
    uses = Counter(n for s in _statements(body) for n in own_reads(s))
    changed = False
    for block in list(blocks(body)):
        # one scan of the block: each question about a name (read later? written
        # between two statements?) is answered from where the name occurs, kept in
        # step with each rewrite, so the pass costs the size of the block, not its square
        ix = _BlockIndex(block)
        for i in range(len(block)):
            stmt = block[i]
            a = target(stmt) if stmt is not None else None
            if a is None or a in params or assigned[a] != 1:
                continue
            value = stmt.value
            if not isinstance(value, (ast.Name, ast.Constant)):
                continue
            if ix.reads_after(a, i) != uses[a]:
                continue  # read before its definition, or in another block
            if isinstance(value, ast.Name) and uses[a] == 1:
                back = min(p for p in ix.reads_at[a] if p > i)
                b = value.id
                later = block[back]
                if (
                    target(later) == b
                    and isinstance(later.value, ast.Name)
                    and later.value.id == a
                    and not ix.written_between(b, i, back)
                ):
                    # a = b; ...; b = a: a round trip that changes nothing
                    ix.delete(back)
                    ix.delete(i)
                    uses[a] -= 1
                    uses[b] -= 1
                    assigned[a] -= 1
                    assigned[b] -= 1
                    changed = True
                    continue
            if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
                new: ast.expr = value
            elif isinstance(value, ast.Name) and not ix.written_between(value.id, i, len(block)):
                b = value.id
                # b's one definition (looked for only where it has one), nearest first
                definition = None
                if assigned[b] == 1 and uses[b] == 1 and b not in params:
                    definition = max((p for p in ix.writes_at.get(b, ()) if p < i), default=None)
                    if definition is not None and target(block[definition]) != b:
                        definition = None
                if (
                    definition is not None
                    and _pure(block[definition].value)
                    and not ix.read_between(a, definition, i)
                    and not ix.written_between(a, definition, i)
                ):
                    # b was made only to be copied into a: give its definition a's name
                    ix.replace(
                        definition,
                        ast.Assign(
                            targets=[ast.Name(id=a, ctx=ast.Store())],
                            value=block[definition].value,
                        ),
                    )
                    ix.delete(i)
                    uses[b] = assigned[b] = 0
                    changed = True
                    continue
                new = value
            elif isinstance(value, ast.Name) and (last := _last_equal(ix, i, a, value.id)):
                # b changes later, but every read of a comes while b still equals a
                b = value.id
                replace = _Replace(a, ast.Name(id=b, ctx=ast.Load()))
                for k in sorted(p for p in ix.reads_at.get(a, ()) if i < p <= last):
                    _forget(block[k])
                    block[k] = replace.visit(block[k])
                    ix.rename_read(k, a, b)
                ix.delete(i)
                uses[b] += uses[a] - 1  # (b is read where a was; a = b is gone)
                uses[a] = 0
                assigned[a] -= 1
                changed = True
                continue
            else:
                continue
            replace = _Replace(a, new)
            for k in sorted(p for p in ix.reads_at.get(a, ()) if p > i):  # (those reading a)
                _forget(block[k])
                block[k] = replace.visit(block[k])
                ix.rename_read(k, a, new.id if isinstance(new, ast.Name) else None)
            ix.delete(i)
            if isinstance(new, ast.Name):  # b is read where a was; a = b is gone
                uses[new.id] += uses[a] - 1
            uses[a] = 0
            assigned[a] -= 1
            changed = True
        block[:] = [s for s in block if s is not None]
    return body, changed


class _BlockIndex:
    """Where each name is read (with counts) and written in one block, by position,
    kept in step with rewrites. A deleted statement leaves ``None`` (positions stay
    put; the caller drops the holes at the end)."""

    def __init__(self, block: list[ast.stmt]) -> None:
        self.block = block
        self.read: list[Counter] = []
        self.written: list[set[str]] = []
        self.reads_at: dict[str, dict[int, int]] = {}
        self.writes_at: dict[str, set[int]] = {}
        for k, stmt in enumerate(block):
            self.read.append(Counter(reads(stmt)))
            self.written.append(set(writes(stmt)))
            self._enter(k)

    def _enter(self, k: int) -> None:
        for n, c in self.read[k].items():
            self.reads_at.setdefault(n, {})[k] = c
        for n in self.written[k]:
            self.writes_at.setdefault(n, set()).add(k)

    def _leave(self, k: int) -> None:
        for n in self.read[k]:
            del self.reads_at[n][k]
        for n in self.written[k]:
            self.writes_at[n].discard(k)

    def delete(self, k: int) -> None:
        self._leave(k)
        self.block[k] = None  # type: ignore[call-overload]
        self.read[k], self.written[k] = Counter(), set()

    def replace(self, k: int, stmt: ast.stmt) -> None:
        self._leave(k)
        self.block[k] = stmt
        self.read[k], self.written[k] = Counter(reads(stmt)), set(writes(stmt))
        self._enter(k)

    def rename_read(self, k: int, old: str, new: str | None) -> None:
        """Statement ``k`` reads ``new`` (or nothing, for a number) where it read ``old``."""
        count = self.read[k].pop(old)
        del self.reads_at[old][k]
        if new is not None:
            self.read[k][new] += count
            self.reads_at.setdefault(new, {})[k] = self.read[k][new]

    def reads_after(self, name: str, k: int) -> int:
        return sum(c for p, c in self.reads_at.get(name, {}).items() if p > k)

    def read_between(self, name: str, lo: int, hi: int) -> bool:
        return any(lo < p < hi for p in self.reads_at.get(name, ()))

    def written_between(self, name: str, lo: int, hi: int) -> bool:
        return any(lo < p < hi for p in self.writes_at.get(name, ()))


def _last_equal(ix: _BlockIndex, i: int, a: str, b: str) -> int | None:
    """After ``a = b`` at ``i``: the position of the statement that first gives ``b`` a
    value other than ``a``'s, if every read of ``a`` comes no later than that statement's
    own right-hand side (``b = a`` keeps them equal)."""
    changes = ix.writes_at.get(a, set()) | ix.writes_at.get(b, set())
    for p in sorted(q for q in changes if q > i):
        s = ix.block[p]
        if isinstance(s, ast.Assign) and target(s) == b:
            if isinstance(s.value, ast.Name) and s.value.id == a:
                continue  # b = a: still equal
            if ix.reads_after(a, p) or a in ix.written[p]:
                return None
            return p
        return None  # a compound statement, or a written again
    return None


_FOLD = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def _num(node: ast.expr) -> float | int | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def _pow2(c: float | int) -> bool:
    """Whether ``c`` is a power of two (multiplying by it rounds nothing)."""
    return (
        isinstance(c, (int, float)) and c != 0 and math.isfinite(c) and abs(math.frexp(c)[0]) == 0.5
    )


def _factors(node: ast.expr) -> list[tuple[type, ast.expr]]:
    """A chain of products and quotients read left to right, with the operator before
    each factor: ``a * b / c`` is ``[(Mult, a), (Mult, b), (Div, c)]``. A factor
    ``(2 * u)`` with a power of two is two factors (``g / (2 * u)`` is ``g / 2 / u``
    exactly)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))):
        return [(ast.Mult, node)]
    op, right = type(node.op), node.right
    if isinstance(right, ast.BinOp) and isinstance(right.op, ast.Mult):
        for c, u in ((right.left, right.right), (right.right, right.left)):
            if _num(c) is not None and _pow2(_num(c)):
                return _factors(node.left) + [(op, c), (op, u)]
    return _factors(node.left) + [(op, right)]


def _fold_factors(node: ast.BinOp) -> ast.expr | None:
    """A product chain with fewer operations, or None: its powers of two merged into
    one constant (into its one other constant, if it has one: scaling by a power of two
    is exact), and the signs of negated factors moved into that constant.

    ``g / (2 * u) * h * 2`` is ``g / u * h``; ``-a * b / c * 2`` is ``a * b / c * -2``.
    """
    chain = _factors(node)
    signs = 0
    others: list[tuple[type, ast.expr]] = []
    powers: list[tuple[type, float | int]] = []
    anchor: int | None = None  # the position of the one other constant kept
    for op, factor in chain:
        while isinstance(factor, ast.UnaryOp) and isinstance(factor.op, ast.USub):
            signs, factor = signs + 1, factor.operand
        c = _num(factor)
        if c is not None and _pow2(c):
            powers.append((op, c))
            continue
        if c is not None and anchor is None:
            anchor = len(others)
        others.append((op, factor))
    if not others:
        return None  # constants alone: folded as such
    anchor_op, value = (
        (others[anchor][0], _num(others[anchor][1])) if anchor is not None else (ast.Mult, 1)
    )
    for op, c in powers:
        value = value * c if op is anchor_op else value / c
    if signs % 2:
        value = -value
    negate = False
    if anchor is not None:
        others[anchor] = (anchor_op, ast.Constant(value))
    elif value == -1 and any(op is ast.Div for op, _ in others):
        negate = True
    elif value != 1 or not any(op is ast.Div for op, _ in others):
        others.append((ast.Mult, ast.Constant(value)))
    if others[0][0] is ast.Div:  # a numerator first
        others.insert(0, (ast.Mult, ast.Constant(1)))
    if len(others) - 1 + negate >= len(chain) - 1 + signs:
        return None
    result = others[0][1]
    if negate:
        result = ast.UnaryOp(op=ast.USub(), operand=result)
    for op, factor in others[1:]:
        result = ast.BinOp(left=result, op=op(), right=factor)
    return result


class _Simplify(ast.NodeTransformer):
    changed = False

    def done(self, node: ast.expr) -> ast.expr:
        self.changed = True
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.USub):
            inner = node.operand
            if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.USub):
                return self.done(inner.operand)
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, (ast.Mult, ast.Div)):
                # -(a * b) is (-a) * b: the sign moves to the leftmost factor
                left = self.visit(ast.UnaryOp(op=ast.USub(), operand=inner.left))
                self.done(node)
                return self.visit_BinOp(ast.BinOp(left=left, op=inner.op, right=inner.right))
            if _num(inner) is not None:
                return self.done(ast.Constant(-_num(inner)))
        if isinstance(node.op, ast.UAdd):
            return self.done(node.operand)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, (ast.Mult, ast.Div)):
            folded = _fold_factors(node)
            if folded is not None:
                return self.done(folded)
        left, right, op = node.left, node.right, node.op
        a, b = _num(left), _num(right)
        if a is not None and b is not None and type(op) in _FOLD:
            try:
                value = _FOLD[type(op)](a, b)
            except (ZeroDivisionError, OverflowError):
                return node
            if isinstance(value, (int, float)) and abs(value) < 1e15:
                return self.done(ast.Constant(value))
        if isinstance(op, ast.Mult) and b is not None and isinstance(left, ast.BinOp):
            c = _num(left.right)
            if isinstance(left.op, ast.Mult) and c is not None and (_pow2(b) or _pow2(c)):
                # (x * 100.0) * 2 is x * 200.0 exactly: scaling by 2 commutes with rounding
                return self.done(
                    ast.BinOp(left=left.left, op=ast.Mult(), right=ast.Constant(c * b))
                )
        if (
            isinstance(op, ast.Mult)
            and b is not None
            and isinstance(left, ast.UnaryOp)
            and isinstance(left.op, ast.USub)
        ):
            return self.done(ast.BinOp(left=left.operand, op=op, right=ast.Constant(-b)))
        if isinstance(op, ast.Mult) and b == 1:
            return self.done(left)
        if isinstance(op, ast.Mult) and a == 1:
            return self.done(right)
        if isinstance(op, ast.Mult) and a == -1:
            return self.done(ast.UnaryOp(op=ast.USub(), operand=right))
        if isinstance(op, ast.Mult) and b == -1:
            return self.done(ast.UnaryOp(op=ast.USub(), operand=left))
        if isinstance(op, ast.Div) and b == 1:
            return self.done(left)
        if isinstance(op, ast.Pow) and b == 1:
            return self.done(left)
        if isinstance(op, (ast.Add, ast.Sub)) and b == 0:
            return self.done(left)
        if isinstance(op, ast.Add) and a == 0:
            return self.done(right)
        if (
            isinstance(op, (ast.Add, ast.Sub))
            and isinstance(right, ast.UnaryOp)
            and isinstance(right.op, ast.USub)
        ):
            flipped = ast.Sub() if isinstance(op, ast.Add) else ast.Add()
            return self.done(ast.BinOp(left=left, op=flipped, right=right.operand))
        if (  # a + -b * c is a - b * c: (-b) * c is -(b * c) exactly
            isinstance(op, (ast.Add, ast.Sub))
            and isinstance(right, ast.BinOp)
            and isinstance(right.op, (ast.Mult, ast.Div))
            and isinstance(right.left, ast.UnaryOp)
            and isinstance(right.left.op, ast.USub)
        ):
            flipped = ast.Sub() if isinstance(op, ast.Add) else ast.Add()
            product = ast.BinOp(left=right.left.operand, op=right.op, right=right.right)
            return self.done(ast.BinOp(left=left, op=flipped, right=product))
        if (
            isinstance(op, (ast.Mult, ast.Div))
            and isinstance(left, ast.UnaryOp)
            and isinstance(left.op, ast.USub)
        ):
            if isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub):
                return self.done(ast.BinOp(left=left.operand, op=op, right=right.operand))
        return node


def simplify(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """Fold constants and algebraic identities inside every expression.

    A fold that turns a new array into an existing one (``1.0 * y`` is ``y``) is made
    only where no array involved is written into in place: not for an array later
    written into, itself or through another name (``y = x * 1.0; y[i] = v``, or
    ``prev = y; prev[i] = v``, would write into ``x``), nor where the existing array is
    one (``x_bar = 1.0 * y`` and then ``y[0] = y_old``, the adjoint sweep restoring
    ``y``, would change ``x_bar``).
    """
    mutated = {
        n.value.id
        for s in body  # (each top statement's walk takes in its nested blocks)
        for n in nodes(s)
        if isinstance(n, ast.Subscript)
        and isinstance(n.ctx, ast.Store)
        and isinstance(n.value, ast.Name)
    }
    hazards = written_in_place(body, params) if mutated else set()
    simplifier = _Simplify()
    changed = False
    for block in blocks(body):
        for k, stmt in enumerate(block):
            if isinstance(stmt, (ast.If, ast.For, ast.While)):
                continue  # their blocks come in turn
            before = copy.deepcopy(stmt) if mutated else None
            simplifier.changed = False
            new = simplifier.visit(stmt)
            if simplifier.changed:
                _forget(stmt)
            if before is not None and simplifier.changed:
                gained = _stmt_shares(new) - _stmt_shares(before)
                if gained and (target(stmt) in mutated | hazards or gained & hazards):
                    new = before  # folding would make it an alias of an array written into
                    simplifier.changed = False
            block[k] = new
            changed = changed or simplifier.changed
    return body, changed


def double_repeated_terms(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """``v = e`` then ``v = v + e`` is ``v = e * 2`` (both of ``x * x``'s operands give
    ``x``'s adjoint the same term; doubling is exact).

    Before::                 After::

        q_bar = g * q            q_bar = g * q * 2
        q_bar = q_bar + g * q
    """
    changed = False
    for block in blocks(body):
        i = -1
        while i + 2 < len(block):
            i += 1
            first, second = block[i], block[i + 1]
            v = target(first)
            if (
                v is None
                or not isinstance(first, ast.Assign)
                or v in reads(first.value)
                or target(second) != v
                or not isinstance(second, ast.Assign)
            ):
                continue
            value = second.value
            if (
                isinstance(value, ast.BinOp)
                and isinstance(value.op, ast.Add)
                and isinstance(value.left, ast.Name)
                and value.left.id == v
                and ast.dump(value.right) == ast.dump(first.value)
                and _pure(first.value)
            ):
                doubled = ast.BinOp(left=first.value, op=ast.Mult(), right=ast.Constant(2))
                block[i] = ast.Assign(targets=first.targets, value=doubled)
                del block[i + 1]
                changed = True
    return body, changed


#: array functions whose value depends on their arguments alone (no state, no output
#: argument): a call of one may be read from a name that holds the same call's value
_PURE_CALLS = frozenset(
    "sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh exp exp2 expm1 "
    "log log2 log10 log1p sqrt cbrt square reciprocal abs absolute sign negative".split()
)


def reuse_computed_values(
    body: list[ast.stmt], arguments: set[str], xp: str | None
) -> tuple[list[ast.stmt], bool]:
    """A call the code has already made, into a name that still holds its value, is
    read from that name: rules recompute what the user often has (``sin``'s derivative
    is ``np.cos(x)``). Only top-level definitions of names given one value, from
    arguments never reassigned or names given one value before; and not at all where
    the code writes into an array (a value could change under its name).

    Before::                         After::

        a = np.sin(x)                    a = np.sin(x)
        b = np.cos(x)                    b = np.cos(x)
        ...                              ...
        x_bar = a_bar * np.cos(x)        x_bar = a_bar * b
    """
    if xp is None:
        return body, False
    if any(_written_into(stmt) for stmt in body):
        return body, False
    statements = list(_statements(body))
    stores = Counter(n for s in statements for n in own_writes(s))
    steady = {a for a in arguments if stores[a] == 0}  # names holding one value throughout
    known: dict[str, str] = {}  # ast.dump of a call -> the name holding its value
    changed = False

    class Reuse(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.expr:
            self.generic_visit(node)
            held = known.get(ast.dump(node))
            if held is None:
                return node
            nonlocal changed
            changed = True
            return ast.Name(id=held, ctx=ast.Load())

    for k, stmt in enumerate(body):
        if known:
            _forget(stmt)
            body[k] = stmt = Reuse().visit(stmt)
        v = target(stmt)
        if v is None or stores[v] != 1:
            continue
        steady.add(v)
        value = stmt.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id == xp
            and value.func.attr in _PURE_CALLS
            and not value.keywords
            and all(
                isinstance(a, ast.Constant) or isinstance(a, ast.Name) and a.id in steady
                for a in value.args
            )
        ):
            known.setdefault(ast.dump(value), v)
    return body, changed


def drop_self_assignments(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """``v = v`` does nothing."""
    changed = False
    for block in blocks(body):
        kept = [
            stmt
            for stmt in block
            if not (
                isinstance(stmt, ast.Assign)
                and isinstance(stmt.value, ast.Name)
                and target(stmt) == stmt.value.id
            )
        ]
        if len(kept) != len(block):
            block[:] = kept
            changed = True
    return body, changed


def eliminate_dead_code(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """Drop assignments whose value is never read (by liveness, loops included),
    and comments left heading nothing."""
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


def _pushed(stmt: ast.stmt) -> tuple[str, str] | None:
    """The list and name of ``tape.append(v)``."""
    if not is_append(stmt):
        return None
    call = stmt.value
    if isinstance(call.func.value, ast.Name) and [type(a) for a in call.args] == [ast.Name]:
        return call.func.value.id, call.args[0].id
    return None


def _meaningful(block: list[ast.stmt]) -> bool:
    return any(not isinstance(s, ast.Pass) and not is_comment(s) for s in block)


#: the longest statement (without indentation) inlining may produce
LINE_LIMIT = 80


def inline_temporaries(
    body: list[ast.stmt], temporaries: set[str], params: set[str] = frozenset()
) -> list[ast.stmt]:
    """Write each temporary read exactly once into the statement that reads it.

    Before::                  After::

        t1 = x @ w                t2 = np.exp(-(x @ w))
        t2 = np.exp(-t1)

    Only names in ``temporaries`` (made by the compiler, never the user's),
    defined once and read in a later simple statement of the same block,
    where no operand changes in between (is reassigned or written into, itself or
    through a name sharing its memory: ``t2 = x[::2]; x[::2] = v`` changes ``t2``) and
    the merged statement stays within ``LINE_LIMIT``.
    """
    hazards = written_in_place(body, params)
    changed = True
    while changed:  # (one pass finds nearly all: an inlining only lengthens other merges)
        changed = False
        all_reads = Counter(n for s in _statements(body) for n in own_reads(s))
        assigned = Counter(n for s in _statements(body) for n in own_writes(s))
        for block in list(blocks(body)):
            # each statement's reads and writes, kept in step with the block: the scan goes
            # on after an inlining (whose counts change only for the name inlined), so a
            # block of n statements costs O(n^2) set lookups, not O(n^3) tree walks
            facts = [_Summary(s) for s in block]
            i = 0
            while i < len(block):
                stmt = block[i]
                a = target(stmt)
                j = _inline_into(block, facts, i, a, temporaries, all_reads, assigned, hazards)
                if j is None:
                    i += 1
                    continue
                merged = _Replace(a, stmt.value).visit(copy.deepcopy(block[j]))
                if len(ast.unparse(ast.fix_missing_locations(merged))) > LINE_LIMIT:
                    i += 1
                    continue
                block[j], facts[j] = merged, _Summary(merged)
                del block[i], facts[i]
                all_reads[a] -= 1
                assigned[a] -= 1
                changed = True
    return body


class _Summary:
    """What one statement reads, assigns, writes into and whether it has effects (a tape
    pop), computed once per statement by the passes that scan a block many times."""

    __slots__ = ("reads", "written", "into", "pure")

    def __init__(self, stmt: ast.stmt) -> None:
        self.reads = set(reads(stmt))
        self.into = _written_into(stmt)
        self.written = set(writes(stmt)) | self.into
        self.pure = _pure(getattr(stmt, "value", ast.Constant(0)))


def _inline_into(
    block: list[ast.stmt],
    facts: list[_Summary],
    i: int,
    a: str | None,
    temporaries: set[str],
    all_reads: Counter,
    assigned: Counter,
    hazards: set[str] = frozenset(),
) -> int | None:
    """For :func:`inline_temporaries`: the position of the one statement that
    ``block[i]`` (which assigns ``a``) may be written into, or None."""
    stmt = block[i]
    if a is None or a not in temporaries or all_reads[a] != 1 or assigned[a] != 1:
        return None
    if not facts[i].pure:
        return None
    j = next((k for k in range(i + 1, len(block)) if a in facts[k].reads), None)
    if j is None or not isinstance(block[j], (ast.Assign, ast.Expr, ast.Return)):
        return None
    operands = set(reads(stmt.value))
    between = facts[i + 1 : j]
    if any(operands & f.written for f in between):
        return None
    if operands & hazards and any(f.into for f in between):
        return None  # (an operand may share memory with the array written into)
    if not all(f.pure for f in between):
        return None  # keep the order of tape pops
    return j
