"""Elementwise loop fusion in the numba profile: a run of elementwise statements over
1-D arrays of one length becomes one explicit loop, which numba compiles to one pass over
the elements (no temporary arrays for the values used only inside the run).

In:  a generated function in the numba profile (optimized, its ranges rewritten), the
facts of the function differentiated (ranks and float dtypes) and the builder (which
names are adjoints or tangents of which primals).
Out: the same function with each run of two or more fusable statements (or one with two
or more operations) wrapped as::

    x_bar = index_adjoint(-2.0 * (1.0 - x[:-1]), x, slice(None, -1))
    t4_bar = x[1:] - x[:-1] ** 2
    t4_bar *= 200.0
    x_bar[:-1] += t4_bar * -2 * x[:-1]
    x_bar[1:] += t4_bar

        ->

    fused_n = len(x[:-1])
    if len(x[1:]) == fused_n and len(x) >= 1 and ...:   # (every operand's length)
        x_bar = np.zeros_like(x)
        for fused_k in range(fused_n):
            x_bar[fused_k] += -2.0 * (1.0 - x[fused_k])
            t4_bar_k = x[fused_k + 1] - x[fused_k] ** 2
            t4_bar_k *= 200.0
            x_bar[fused_k] += t4_bar_k * -2 * x[fused_k]
            x_bar[fused_k + 1] += t4_bar_k
    else:
        <the statements as they were>

A statement is fusable when it is ``T = E``, ``T op= E``, ``B[lo:hi] op= E`` or
``B[lo:hi] = E`` (``op`` one of ``+ - *``), ``T = index_adjoint(E, X, slice(lo, hi))``
(zeros with ``E`` added at the slice), or ``S += unbroadcast(E, s)`` of floats ``S`` and
``s`` (a sum, accumulated in the loop), where ``E`` is built of ``+ - *``, ``**`` by a
non-negative integer, unary minus and the numpy functions of :data:`_FUNCS`, over
numbers, float names of rank 0 and 1-D float arrays, whole or sliced with a constant
non-negative lower bound (no step). What it must not do, it does not:

- the operands' lengths are compared when the code runs: where one differs (a broadcast
  operand), the statements run as they were (the ``else`` block);
- an array written in the run and read in it is read and written at one offset only
  (``u[1:] = u[:-1] ...`` is not fused: the loop would read elements already written);
  arrays written at several offsets are only added to (``+=``, ``-=``), never read;
- a name assigned in the run and read before its assignment in the run is not fused;
- ``/``, ``//``, ``%``, ``**`` by anything else and functions not listed are left to
  numpy (numba's scalar arithmetic raises ``ZeroDivisionError`` where numpy's gives
  ``inf``, and a negative number to a fractional power is ``nan`` in numpy only).

A value used only inside its run becomes a number in the loop (under a fresh name: the
``else`` block keeps the array). The plain profile never runs this.
"""

from __future__ import annotations

import ast

from .compiler.analyze.facts import Facts
from .compiler.astwalk import copy_tree
from .compiler.transform.builder import Builder
from .numba_loops import ADDS, Access, Run, at, emit, name

#: the numpy functions of one argument fused (elementwise, no error numba raises where
#: numpy would not)
_FUNCS = frozenset("sin cos tan tanh sinh cosh exp log sqrt abs arctan".split())
_OPS = (ast.Add, ast.Sub, ast.Mult)


def fuse(func: ast.FunctionDef, facts: Facts, builder: Builder) -> ast.FunctionDef:
    """``func`` with its runs of elementwise statements fused into loops (in place)."""
    loads: dict[str, int] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads[node.id] = loads.get(node.id, 0) + 1
    _Fuser(facts, builder, loads).block_of(func, "body")
    return func


#: ``index_adjoint(E, X, slice(lo, hi))`` read: ``E``, ``X``, ``lo:hi``, its length
_Scatter = tuple[ast.expr, ast.expr, ast.Slice, ast.expr]


class _Refused(Exception):
    """A statement that cannot join the run."""


class _Fuser:
    def __init__(self, facts: Facts, builder: Builder, loads: dict[str, int]) -> None:
        self.facts = facts
        self.builder = builder
        self.loads = loads
        self.k = builder.namer.fresh("fused_k")
        self.n = builder.namer.fresh("fused_n")
        self.names: dict[str, str] = {}

    def fresh(self, base: str) -> str:
        """A fresh name for ``base`` (the same one at each attempt of a run)."""
        if base not in self.names:
            self.names[base] = self.builder.namer.fresh(base)
        return self.names[base]

    # -- blocks ---------------------------------------------------------------------------

    def block_of(self, node: ast.AST, field_name: str) -> None:
        block: list[ast.stmt] = getattr(node, field_name)
        for stmt in block:
            for inner in ("body", "orelse"):
                if isinstance(getattr(stmt, inner, None), list) and not isinstance(
                    stmt, ast.FunctionDef
                ):
                    self.block_of(stmt, inner)
        setattr(node, field_name, self.fused(block))

    def fused(self, block: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        run: list[ast.stmt] = []
        made: Run | None = None
        for stmt in [*block, None]:
            attempt = self.run([*run, stmt]) if stmt is not None else None
            if attempt is not None:
                run.append(stmt)
                made = attempt
                continue
            if made is not None and (len(run) > 1 or made.ops > 1):
                out.extend(emit(made, self.k, self.n, self.fresh, self.builder))
            else:
                out.extend(run)
            run, made = [], None
            if stmt is None:
                break
            first = self.run([stmt])
            if first is not None:
                run, made = [stmt], first
            else:
                out.append(stmt)
        return out

    # -- a run ------------------------------------------------------------------------------

    def run(self, stmts: list[ast.stmt]) -> Run | None:
        """The fused form of ``stmts``, or None where one of them cannot be fused."""
        run = Run(stmts)
        try:
            for stmt in stmts:
                self.statement(stmt, run)
        except _Refused:
            return None
        if not run.lengths or not self.safe(run):
            return None
        return run

    def statement(self, stmt: ast.stmt, run: Run) -> None:
        """Add ``stmt`` to the loop's body (or raise :class:`_Refused`)."""
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.Name):
                scatter = self.scatter(value)
                if scatter is not None:
                    self.scattered(target.id, scatter, run)
                else:
                    self.assigned(target.id, value, run)
                return
            if isinstance(target, ast.Subscript):
                store = self.written(target, None, run)
                run.body.append(ast.Assign(targets=[store], value=self.element(value, run)))
                return
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, _OPS):
            self.augmented(stmt, run)
            return
        raise _Refused

    def scattered(self, v: str, scatter: _Scatter, run: Run) -> None:
        """``V = index_adjoint(E, X, slice(lo, hi))``: zeros like ``X``, ``E`` added at
        ``lo``."""
        e, x, piece, length = scatter
        sliced = ast.Subscript(value=copy_tree(x), slice=copy_tree(piece), ctx=ast.Load())
        offset = self.view(sliced)[1]
        element = self.element(e, run)
        self.define(v, run, array_like=x, local_ok=False)
        run.check(length)
        run.accesses.append(Access(v, offset, True, ast.Add))
        store = at(v, offset, name(self.k))
        run.body.append(ast.AugAssign(target=store, op=ast.Add(), value=element))

    def assigned(self, v: str, value: ast.expr, run: Run) -> None:
        """``T = E`` of an array ``T``: a number in the loop, or an array the run makes."""
        if self.rank(v) != 1:
            raise _Refused
        if _is_copy(value, self.builder.xp):
            value = value.args[0]  # type: ignore[attr-defined]
        elif not isinstance(value, (ast.BinOp, ast.UnaryOp, ast.Call)):
            raise _Refused  # (`y = x` and `y = x[1:]` share x's memory)
        arrays = run.arrays
        element = self.element(value, run)
        if run.arrays == arrays:
            raise _Refused  # (no array operand: numbers)
        local = self.define(v, run)
        store = name(local) if local else at(v, 0, name(self.k))
        if not local:
            run.accesses.append(Access(v, 0, True))
        run.body.append(ast.Assign(targets=[store], value=element))

    def augmented(self, stmt: ast.AugAssign, run: Run) -> None:
        """``T op= E``, ``B[lo:hi] op= E``, a sum ``S += unbroadcast(E, s)`` or
        ``B += index_adjoint(E, X, slice(lo, hi))``."""
        target = stmt.target
        if isinstance(target, ast.Name) and self.rank(target.id) == 0:
            self.reduction(stmt, run)
            return
        scatter = self.scatter(stmt.value)
        if isinstance(stmt.op, ast.Add) and isinstance(target, ast.Name) and scatter:
            self.added_at(target.id, scatter, run)
            return
        if isinstance(target, ast.Name) and target.id in run.local:
            local = run.local[target.id]
            element = self.element(stmt.value, run)
            if local is not None:
                run.body.append(ast.AugAssign(target=name(local), op=stmt.op, value=element))
                return
            store = self.written(target, type(stmt.op), run)
        elif isinstance(target, (ast.Name, ast.Subscript)):
            element = self.element(stmt.value, run)
            store = self.written(target, type(stmt.op), run)
        else:
            raise _Refused
        run.body.append(ast.AugAssign(target=store, op=stmt.op, value=element))
        run.ops += 1

    def added_at(self, b: str, scatter: _Scatter, run: Run) -> None:
        """``B += index_adjoint(E, X, slice(lo, hi))`` of ``B`` as long as ``X``:
        ``B[lo:hi] += E``."""
        e, x, piece, length = scatter
        element = self.element(e, run)
        view = ast.Subscript(value=name(b), slice=copy_tree(piece), ctx=ast.Load())
        if b in run.local and run.local[b] is not None:
            raise _Refused
        store = self.written(view, ast.Add, run)
        run.check(length)
        assert isinstance(x, ast.Name)
        if (b, x.id) not in run.same:
            run.same.append((b, x.id))
        run.body.append(ast.AugAssign(target=store, op=ast.Add(), value=element))
        run.ops += 1

    def reduction(self, stmt: ast.AugAssign, run: Run) -> None:
        """``S += unbroadcast(E, s)`` of floats ``S`` and ``s``: ``E`` summed in the loop."""
        value = stmt.value
        if not (
            isinstance(stmt.op, ast.Add)
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and self.builder.helpers.get("unbroadcast") == value.func.id
            and len(value.args) == 2
            and isinstance(value.args[1], ast.Name)
            and self.rank(value.args[1].id) == 0
            and self.floats(value.args[1].id)
            and self.floats(stmt.target.id)  # type: ignore[union-attr]
        ):
            raise _Refused
        total = stmt.target.id  # type: ignore[union-attr]
        if total in run.local or total in run.numbers or any(a.base == total for a in run.accesses):
            raise _Refused
        element = self.element(value.args[0], run)
        sum_ = self.fresh(f"{total}_sum")
        run.before.append(ast.Assign(targets=[name(sum_)], value=ast.Constant(0.0)))
        run.body.append(ast.AugAssign(target=name(sum_), op=ast.Add(), value=element))
        run.after.append(ast.AugAssign(target=name(total), op=ast.Add(), value=name(sum_)))
        run.totals.add(total)  # (no later statement of the run may read it)

    def define(
        self, v: str, run: Run, array_like: ast.expr | None = None, local_ok: bool = True
    ) -> str | None:
        """Bind ``v`` in the run: a fresh number name where ``v`` is read only in the run
        (after this), else None (an array allocated before the loop)."""
        if (
            v in run.local
            or v in run.numbers
            or v in run.totals
            or any(a.base == v for a in run.accesses)
        ):
            raise _Refused  # (assigned twice, or read before it is assigned)
        reads = sum(_loads(s, v) for s in run.stmts)
        if local_ok and reads == self.loads.get(v, 0):
            local = self.fresh(f"{v}_k")
            run.local[v] = local
            return local
        run.local[v] = None
        if isinstance(array_like, ast.Name):
            run.like[v] = array_like.id
        if array_like is not None:
            zeros = self.builder.xp_call("zeros_like", copy_tree(array_like))
            run.before.append(ast.Assign(targets=[name(v)], value=zeros))
        else:
            if run.dtype is None:
                raise _Refused
            run.sized.add(v)
            empty = self.builder.xp_call("empty", name(self.n), copy_tree(run.dtype))
            run.before.append(ast.Assign(targets=[name(v)], value=empty))
        return None

    def written(self, target: ast.expr, op: type | None, run: Run) -> ast.expr:
        """The element ``k`` of the array ``target`` (``B`` or ``B[lo:hi]``) the run writes,
        with its length checked."""
        base, offset, length = self.view(target)
        if base in run.local and run.local[base] is not None:
            raise _Refused
        if base not in run.local:  # (an array from before the run: an adjoint's only)
            if base not in self.builder.primal_of or not self.floats(base):
                raise _Refused
        if not (base in run.sized and isinstance(target, ast.Name)):
            run.check(length)
        run.accesses.append(Access(base, offset, True, op))
        return at(base, offset, name(self.k))

    # -- elements -------------------------------------------------------------------------

    def element(self, e: ast.expr, run: Run) -> ast.expr:
        """The element ``k`` of the elementwise expression ``e``."""
        k = name(self.k)
        if isinstance(e, ast.Constant):
            if type(e.value) not in (int, float):
                raise _Refused
            return ast.Constant(e.value)
        if isinstance(e, ast.BinOp):
            if isinstance(e.op, ast.Pow):
                p = e.right
                if not (isinstance(p, ast.Constant) and type(p.value) is int and p.value >= 0):
                    raise _Refused
            elif not isinstance(e.op, _OPS):
                raise _Refused
            run.ops += 1
            return ast.BinOp(
                left=self.element(e.left, run), op=e.op, right=self.element(e.right, run)
            )
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            run.ops += 1
            return ast.UnaryOp(op=ast.USub(), operand=self.element(e.operand, run))
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and isinstance(e.func.value, ast.Name)
            and e.func.value.id == self.builder.xp
            and e.func.attr in _FUNCS
            and len(e.args) == 1
            and not e.keywords
        ):
            run.ops += 1
            return ast.Call(
                func=copy_tree(e.func), args=[self.element(e.args[0], run)], keywords=[]
            )
        if isinstance(e, ast.Name) and e.id in run.totals:
            raise _Refused
        if isinstance(e, ast.Name) and e.id in run.local:
            run.arrays += 1
            local = run.local[e.id]
            if local is not None:
                return name(local)
            if e.id not in run.sized:
                run.check(ast.Call(func=name("len"), args=[name(e.id)], keywords=[]))
            run.accesses.append(Access(e.id, 0, False))
            return at(e.id, 0, k)
        if isinstance(e, ast.Name) and self.rank(e.id) == 0 and self.floats(e.id):
            if any(a.base == e.id for a in run.accesses):
                raise _Refused
            run.numbers.add(e.id)
            return name(e.id)
        if isinstance(e, (ast.Name, ast.Subscript)):
            base, offset, length = self.view(e)
            if base in run.local:
                raise _Refused  # (a slice of an array the run makes)
            run.check(length)
            run.accesses.append(Access(base, offset, False))
            run.arrays += 1
            if run.dtype is None:
                run.dtype = ast.Attribute(value=name(base), attr="dtype", ctx=ast.Load())
            return at(base, offset, k)
        raise _Refused

    def view(self, e: ast.expr) -> tuple[str, int, ast.expr]:
        """A 1-D float array ``B`` or its slice ``B[lo:hi]``: ``B``, the offset of its
        element 0 and its length (an expression)."""
        if isinstance(e, ast.Name):
            base, offset = e.id, 0
        elif (
            isinstance(e, ast.Subscript)
            and isinstance(e.value, ast.Name)
            and isinstance(e.slice, ast.Slice)
            and e.slice.step is None
            and _constant_or_none(e.slice.upper)
        ):
            lower = e.slice.lower
            if lower is None:
                offset = 0
            elif isinstance(lower, ast.Constant) and type(lower.value) is int and lower.value >= 0:
                offset = lower.value
            else:
                raise _Refused
            base = e.value.id
        else:
            raise _Refused
        if self.rank(base) != 1 or not self.floats(base):
            raise _Refused
        whole = copy_tree(e)
        if isinstance(whole, ast.Subscript):
            whole.ctx = ast.Load()
        else:
            whole = name(base)
        return base, offset, ast.Call(func=name("len"), args=[whole], keywords=[])

    def scatter(self, value: ast.expr) -> _Scatter | None:
        """``index_adjoint(E, X, slice(lo, hi))`` of a 1-D ``X``: ``E``, ``X``, ``lo:hi``
        and the slice's length; else None."""
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and self.builder.helpers.get("index_adjoint") == value.func.id
            and len(value.args) == 3
            and isinstance(value.args[1], ast.Name)
        ):
            return None
        e, x, index = value.args
        if not (
            isinstance(index, ast.Call)
            and isinstance(index.func, ast.Name)
            and index.func.id == "slice"
            and len(index.args) == 2
            and not index.keywords
        ):
            return None
        lower, upper = index.args
        sliced = ast.Subscript(
            value=copy_tree(x),
            slice=ast.Slice(lower=_none(lower), upper=_none(upper)),
            ctx=ast.Load(),
        )
        try:
            length = self.view(sliced)[2]
        except _Refused:
            return None
        assert isinstance(sliced.slice, ast.Slice)
        return e, x, sliced.slice, length

    # -- checks ---------------------------------------------------------------------------

    def safe(self, run: Run) -> bool:
        """Whether the loop computes what the statements did: each array written in the run
        and read in it is accessed at one offset; one written at several offsets is only
        added to, never read."""
        for base in {a.base for a in run.accesses if a.write}:
            accesses = [a for a in run.accesses if a.base == base]
            if len({a.offset for a in accesses}) == 1:
                continue
            if any(not a.write or a.op not in ADDS for a in accesses):
                return False
        return True

    def rank(self, v: str) -> int | None:
        shape = self.facts.shapes.get(self.builder.primal_of.get(v, v))
        return None if shape is None else shape.rank

    def floats(self, v: str) -> bool:
        return self.builder.primal_of.get(v, v) in self.facts.proven_floats


def _is_copy(value: ast.expr, xp: str) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == xp
        and value.func.attr == "copy"
        and len(value.args) == 1
        and not value.keywords
    )


def _constant_or_none(e: ast.expr | None) -> bool:
    if e is None or isinstance(e, ast.Constant):
        return True
    return isinstance(e, ast.UnaryOp) and isinstance(e.operand, ast.Constant)


def _none(e: ast.expr) -> ast.expr | None:
    return None if isinstance(e, ast.Constant) and e.value is None else copy_tree(e)


def _loads(stmt: ast.stmt, v: str) -> int:
    return sum(
        1
        for node in ast.walk(stmt)
        if isinstance(node, ast.Name) and node.id == v and isinstance(node.ctx, ast.Load)
    )
