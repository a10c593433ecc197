"""Pass: the last use of a temporary's array writes its result into that array."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..transform.builder import is_marker
from .dataflow import Context, _forget

#: the operators a chain may apply in place; ``+`` and ``*`` may also take ``t`` on the right
_IN_PLACE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_COMMUTATIVE = (ast.Add, ast.Mult)
#: operators of an operand that keep its dtype the promotion of its names' (no ``/``)
_KEEPING = (ast.Add, ast.Sub, ast.Mult, ast.Pow)
#: a number's shape: it broadcasts into any array without growing it
_NUMBER = ("number",)


def reuse_dead_buffers(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    """``v = t * a * b`` is ``t *= a; t *= b`` with ``t`` named ``v``, where ``t`` is a
    temporary whose array no one else can see and this line reads it last; and
    ``v = (x + 1.0) / 2.0 * a`` is ``v = x + 1.0; v /= 2.0; v *= a``: the operations of a
    chain write into the array its first one makes, not into a new array each.

    Only where every step provably leaves the array as a new one would have been:

    - ``t`` is given a value once, by arithmetic or a ufunc (a new array, or a number),
      and this statement is the only one that reads it (so no name, list or view shares
      its array); neither ``t`` nor ``v`` is a parameter or the user's variable (the
      user's lines stay as written); ``v`` is given a value only here, and nothing reads
      it before; all at the function's top level (not in a loop or a branch);
    - every operand ``a``, ``b`` is a number or has the array's shape, by the shape of the
      expressions that made both: the same parameter through elementwise operations and
      slices cutting the same number of rows (``x[1:]``, ``x[:-1]``), so ``t *= a``
      broadcasts nothing into ``t``;
    - the array's dtype is a float (or complex) one: its value came through a float
      constant, a division, a float ufunc or a float parameter; and no operand can widen
      it: an operand reads only float parameters that the array's own value read,
      through ``+ - * **``, and number constants (an integer array times ``1.0`` is
      float64 where the array may be float32);
    - ``+`` and ``*`` take ``t`` from either side (IEEE sums and products commute);
      ``-``, ``/`` and ``**`` only from the left.

    Before::

        t3 = 1.0 - x
        t4_bar = t3 * 200.0
        x_bar = -2.0 * t4_bar
        y_bar = (x + 1.0) / 2.0 * 3.0
        return (x_bar, y_bar)

    After::

        x_bar = 1.0 - x
        x_bar *= 200.0
        x_bar *= -2.0
        y_bar = x + 1.0
        y_bar /= 2.0
        y_bar *= 3.0
        return (x_bar, y_bar)
    """
    facts = _Facts(body, ctx)
    changed = False
    out: list[ast.stmt] = []
    for j, stmt in enumerate(body):
        steps = facts.rewrite(j, stmt)
        if steps is None:
            out.append(stmt)
            continue
        out.extend(ast.copy_location(s, stmt) for s in steps)
        changed = True
    return out, changed


@dataclass
class _Value:
    shape: tuple | None  # a token: equal tokens, equal shapes; None: unknown
    params: frozenset[str]  # the parameters the value reads
    inexact: bool  # provably of a float or complex dtype
    simple: bool  # only + - * ** and unary -, names, slices and number constants


_UNKNOWN = _Value(None, frozenset(), False, False)


class _Facts:
    """What the pass knows of the top-level names of ``body``: which are given one value
    (an assignment, then only in-place arithmetic ``t *= a`` at the top level), where,
    how often each is read, and what is known of their values."""

    def __init__(self, body: list[ast.stmt], ctx: Context) -> None:
        self.body, self.ctx = body, ctx
        self.reads: Counter[str] = Counter()  # (not counting a name's own t *= a)
        self.stores: Counter[str] = Counter()  # (likewise)
        self.first_read: dict[str, int] = {}
        #: each name's top-level ``t *= a``, with where they are
        self.steps: dict[str, list[tuple[int, ast.AugAssign]]] = {}
        for k, stmt in enumerate(body):
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                self.steps.setdefault(stmt.target.id, []).append((k, stmt))
                self._count(stmt.value, k)
            else:
                self._count(stmt, k)
        #: names given one value (then only ``t *= a`` steps), where and by what
        self.definition: dict[str, tuple[int, ast.Assign]] = {}
        for k, stmt in enumerate(body):
            name = _assigned(stmt)
            if name is not None and self.stores[name] == 1:
                if all(s > k for s, _ in self.steps.get(name, ())):
                    self.definition[name] = (k, stmt)
        given = set(self.stores) | set(self.steps)
        self.params = ctx.arguments - given  # parameters given no other value
        #: where a fused reverse-mode function is cut into its primal and adjoint halves
        self.cuts = [k for k, stmt in enumerate(body) if is_marker(stmt)]
        self.memo: dict[str, _Value] = {}

    def _count(self, node: ast.AST, k: int) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                if isinstance(n.ctx, ast.Load):
                    self.reads[n.id] += 1
                    self.first_read.setdefault(n.id, k)
                else:
                    self.stores[n.id] += 1
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                self.reads[n.target.id] += 1  # (in a nested block: read and given a value)
                self.first_read.setdefault(n.target.id, k)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                self.stores.update({name: 2 for name in n.names})

    def rewrite(self, j: int, stmt: ast.stmt) -> list[ast.stmt] | None:
        """The statements that stand for ``stmt``, writing in place, if they provably
        leave every value as it was: the steps on a temporary's array (the temporary
        renamed where it is given its value), or on the array a part of ``stmt`` makes."""
        v = _assigned(stmt)
        if v is None or not isinstance(stmt.value, ast.BinOp):
            return None
        if (
            self.stores[v] != 1
            or v in self.steps
            or v in self.ctx.params  # (the user's lines stay as written)
            or self.first_read.get(v, j + 1) <= j
        ):
            return None
        chains = _chains(stmt.value)
        for base, steps in chains:
            if isinstance(base, ast.Name) and self._dead(base.id, j):
                if self._takes(self._name(base.id, 0), steps):
                    return self._renamed(base.id, v, steps, j)
        for base, steps in chains:
            if not isinstance(base, ast.Name) and _fresh(base, self.ctx.xp):
                made = self.value(base)
                if self._takes(made, steps):
                    first = ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())], value=base)
                    return [first, *self._steps(v, made, steps, j, first)]
        return None

    def _renamed(self, t: str, v: str, steps: list, j: int) -> list[ast.stmt]:
        """``t``'s definition and steps made ``v``'s, and the new steps."""
        made = self._name(t, 0)
        i, definition = self.definition.pop(t)
        definition.targets[0].id = v
        _forget(definition)
        earlier = self.steps.pop(t, [])
        for _, step in earlier:
            step.target.id = v
            _forget(step)
        self.steps[v] = earlier
        self.memo.pop(t, None)
        return self._steps(v, made, steps, j, definition, i)

    def _steps(
        self, v: str, made: _Value, steps: list, j: int, stmt: ast.Assign, i: int | None = None
    ) -> list[ast.stmt]:
        """``v op= a`` for each step, noted as ``v``'s."""
        new = [
            ast.AugAssign(target=ast.Name(id=v, ctx=ast.Store()), op=op, value=operand)
            for op, operand in steps
        ]
        self.steps[v] = [*self.steps.get(v, []), *((j, step) for step in new)]
        self.definition[v] = (j if i is None else i, stmt)
        self.memo[v] = self._combined(made, steps)
        return new

    def _dead(self, t: str, j: int) -> bool:
        """Whether the temporary ``t`` is given its value once, by arithmetic or a ufunc,
        before ``j``, and read only at ``j``: no other name can see its array. Not across
        the cut of a function split into a primal and an adjoint: there ``t`` would be
        part of the record the primal hands the adjoint, which its caller holds."""
        found = self.definition.get(t)
        return (
            found is not None
            and found[0] < j
            and not any(found[0] < k < j for k in self.cuts)  # (not a record's array)
            and t not in self.ctx.params
            and self.reads[t] == 1
            and all(k < j for k, _ in self.steps.get(t, ()))
            and _fresh(found[1].value, self.ctx.xp)
        )

    def _takes(self, made: _Value, steps: list[tuple[ast.operator, ast.expr]]) -> bool:
        """Whether an array known as ``made`` takes every step in place as it would make
        a new one: it is of an inexact dtype, and no operand broadcasts into it or widens
        its dtype."""
        if made.shape is None or made.shape == _NUMBER or not made.inexact:
            return False
        for _, operand in steps:
            got = self.value(operand)
            if got.shape not in (made.shape, _NUMBER) or not got.simple:
                return False
            if not got.params <= made.params & self.ctx.floats:
                return False
        return True

    def _combined(self, value: _Value, steps: list[tuple[ast.operator, ast.expr]]) -> _Value:
        for op, operand in steps:
            value = _joined(value, op, self.value(operand))
        return value

    def value(self, node: ast.expr, depth: int = 0) -> _Value:
        """What is known of an expression's value: its shape token, the parameters it
        reads, whether its dtype is inexact, whether it is simple arithmetic."""
        if depth > 50:
            return _UNKNOWN
        if isinstance(node, ast.Constant):
            if type(node.value) is int:
                return _Value(_NUMBER, frozenset(), False, True)
            if type(node.value) is float:
                return _Value(_NUMBER, frozenset(), True, True)
            return _UNKNOWN
        if isinstance(node, ast.Name):
            return self._name(node.id, depth)
        if isinstance(node, ast.Subscript):
            base = self.value(node.value, depth + 1)
            cut = _rows_cut(node.slice)
            if base.shape in (None, _NUMBER) or cut is None:
                return _UNKNOWN
            shape = base.shape if cut == 0 else ("rows", base.shape, cut)
            return _Value(shape, base.params, base.inexact, base.simple)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return self.value(node.operand, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _IN_PLACE):
            left = self.value(node.left, depth + 1)
            return _joined(left, node.op, self.value(node.right, depth + 1))
        ufunc = _ufunc(node, self.ctx.xp)
        if ufunc is not None:
            args = [self.value(a, depth + 1) for a in node.args]
            shape = args[0].shape
            for a in args[1:]:
                shape = _broadcast(shape, a.shape)
            inexact = _inexact_results(ufunc) or any(a.inexact for a in args)
            params = frozenset().union(*(a.params for a in args))
            return _Value(shape, params, inexact, False)
        return _UNKNOWN

    def _name(self, name: str, depth: int) -> _Value:
        if name in self.params:
            floats = name in self.ctx.floats
            return _Value(("parameter", name), frozenset({name}), floats, True)
        if name not in self.memo:
            found = self.definition.get(name)
            if found is None:
                return _UNKNOWN
            value = self.value(found[1].value, depth + 1)
            for _, step in self.steps.get(name, ()):
                value = _joined(value, step.op, self.value(step.value, depth + 1))
            self.memo[name] = value
        return self.memo[name]


def _assigned(stmt: ast.stmt) -> str | None:
    """``v`` of ``v = value``."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        return stmt.targets[0].id
    return None


def _joined(left: _Value, op: ast.operator, right: _Value) -> _Value:
    """What is known of ``left op right``."""
    if not isinstance(op, _IN_PLACE):
        return _UNKNOWN
    return _Value(
        _broadcast(left.shape, right.shape),
        left.params | right.params,
        left.inexact or right.inexact or isinstance(op, ast.Div),
        left.simple and right.simple and isinstance(op, _KEEPING),
    )


def _inexact_results(ufunc: np.ufunc) -> bool:
    """Whether every loop of ``ufunc`` gives a float or complex result (``np.exp``)."""
    return all(t.split("->")[1][0] in "efdgFDG" for t in ufunc.types)


def _chains(value: ast.BinOp) -> list[tuple[ast.expr, list[tuple[ast.operator, ast.expr]]]]:
    """Each ``(base, steps)`` that may stand for ``value``, the longest first: ``t op a op
    b`` is ``t`` with the steps ``[(op, a), (op, b)]`` (in a sum or product, ``a + t``
    takes ``t`` from the right too), or ``t op a`` with the step ``[(op, b)]``."""
    spine: list[ast.BinOp] = []  # the outermost operation first
    node: ast.expr = value
    while isinstance(node, ast.BinOp) and isinstance(node.op, _IN_PLACE):
        spine.append(node)
        node = node.left
    if not spine:
        return []
    steps = [(n.op, n.right) for n in reversed(spine)]
    innermost = spine[-1]
    found: list[tuple[ast.expr, list[tuple[ast.operator, ast.expr]]]] = [(innermost.left, steps)]
    if isinstance(innermost.op, _COMMUTATIVE):
        found.append((innermost.right, [(innermost.op, innermost.left), *steps[1:]]))
    for k in range(len(spine) - 1, 0, -1):  # (an operation in the chain makes the array)
        found.append((spine[k], steps[len(spine) - k :]))
    return found


def _fresh(value: ast.expr, xp: str | None) -> bool:
    """Whether ``value`` is a new array (or a number) whenever it is an array:
    arithmetic or a ufunc's result."""
    if isinstance(value, ast.BinOp):
        return True
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.op, (ast.USub, ast.UAdd, ast.Invert))
    return _ufunc(value, xp) is not None


def _ufunc(node: ast.expr, xp: str | None) -> np.ufunc | None:
    """The numpy ufunc ``node`` calls (``np.exp(a)``), with positional arguments only."""
    if (
        xp is not None
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == xp
        and not node.keywords
        and node.args
        and not any(isinstance(a, ast.Starred) for a in node.args)
    ):
        found = getattr(np, node.func.attr, None)
        if isinstance(found, np.ufunc) and found.nin == len(node.args) and found.nout == 1:
            return found
    return None


def _broadcast(a: tuple | None, b: tuple | None) -> tuple | None:
    """The token of an elementwise operation's result from its operands' tokens."""
    if a is None or b is None:
        return None
    if b == _NUMBER:
        return a
    if a == _NUMBER or a == b:
        return b
    return None


def _rows_cut(index: ast.expr) -> int | None:
    """How many rows ``x[index]`` drops, for ``a:``, ``:-b`` and ``a:-b`` with integer
    constants ``a >= 0`` and ``b > 0`` (``len(x) - a - b`` rows, or none): 0 for ``:``."""
    if not isinstance(index, ast.Slice) or index.step is not None:
        return None
    start = 0 if index.lower is None else _int(index.lower)
    stop = 0 if index.upper is None else _int(index.upper)
    if start is None or stop is None or start < 0 or stop > 0:
        return None
    if stop == 0 and index.upper is not None:  # (x[:0] has no rows, x[:] all)
        return None
    return start - stop


def _int(node: ast.expr) -> int | None:
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
