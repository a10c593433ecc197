"""Stage 5, optimize: passes that make generated code as short as a careful
person's, without changing what it computes.

In and out: a generated ``ast.FunctionDef`` (its body straight-line code).
Each pass is a function ``body -> (body, changed)``; :func:`optimize` runs
them to a fixed point:

- :func:`fold_first_accumulation`: ``v = zeros_like(x) ... v = v + c``
  becomes ``v = c`` (nothing reads ``v`` in between);
- :func:`propagate_copies`: ``a = b`` or ``a = 1.0`` is substituted into
  the later uses of ``a``, or renames the single definition of ``b``;
- :func:`simplify`: ``g * 1.0`` is ``g``, ``-(-g)`` is ``g``, ``2 - 1`` is
  ``1``, ``x ** 1`` is ``x``, ``a + -b`` is ``a - b``;
- :func:`eliminate_dead_code`: assignments nobody reads, and comments whose
  block became empty, go;
- :func:`inline_temporaries` (last, once): a temporary read once is written
  into the expression that reads it, where the line stays short, so the
  primal reads like the user's code again: ``t1 = x @ w; t2 = np.exp(-t1)``
  becomes ``t2 = np.exp(-(x @ w))``.
"""

from __future__ import annotations

import ast
import copy
import operator
from collections import Counter
from collections.abc import Callable

from .builder import is_comment

Pass = Callable[[list[ast.stmt], set[str]], tuple[list[ast.stmt], bool]]


def optimize(func: ast.FunctionDef, temporaries: set[str] = frozenset()) -> ast.FunctionDef:
    """Run every pass until none changes anything, then inline ``temporaries``."""
    params = {a.arg for a in func.args.args}
    body = list(func.body)
    for _ in range(100):
        changed = False
        for step in (fold_first_accumulation, propagate_copies, simplify, eliminate_dead_code):
            body, did = step(body, params)
            changed = changed or did
        if not changed:
            break
    body = inline_temporaries(body, set(temporaries))
    body, _ = simplify(body, params)
    func.body = body
    return func


# -- helpers -----------------------------------------------------------------------------
def reads(node: ast.AST) -> list[str]:
    """Names a statement or expression reads."""
    if isinstance(node, ast.Assign):
        node = node.value
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def target(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _flat(body: list[ast.stmt]) -> bool:
    return all(isinstance(s, (ast.Assign, ast.Expr, ast.Return)) for s in body)


class _Replace(ast.NodeTransformer):
    def __init__(self, old: str, new: ast.expr) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id == self.old and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.new)
        return node


def _is_zeros_like(value: ast.expr) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "zeros_like"
        and len(value.args) == 1
        and not value.keywords
    )


# -- passes ------------------------------------------------------------------------------
def fold_first_accumulation(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """``v = zeros_like(x)`` followed by ``v = v + c`` (first reader) is ``v = c``.

    Before::                      After::

        x_bar = np.zeros_like(x)      ...
        ...                           x_bar = y_bar * 2
        x_bar = x_bar + y_bar * 2
    """
    if not _flat(body):
        return body, False
    body = list(body)
    changed = False
    i = 0
    while i < len(body):
        v = target(body[i])
        if v is None or not _is_zeros_like(body[i].value):
            i += 1
            continue
        for j in range(i + 1, len(body)):
            stmt = body[j]
            if v not in reads(stmt) and target(stmt) != v:
                continue
            value = stmt.value if isinstance(stmt, ast.Assign) else None
            if (
                target(stmt) == v
                and isinstance(value, ast.BinOp)
                and isinstance(value.op, ast.Add)
                and isinstance(value.left, ast.Name)
                and value.left.id == v
                and v not in reads(value.right)
            ):
                body[j] = ast.Assign(targets=stmt.targets, value=value.right)
                del body[i]
                changed = True
                i -= 1
            break
        i += 1
    return body, changed


def propagate_copies(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """Remove ``a = b`` and ``a = <number>`` by substitution or renaming.

    Before::                 After::

        y_bar = 1.0              x_bar = 2.0 * np.cos(x)
        t_bar = y_bar
        x_bar = 2.0 * t_bar * np.cos(x)
    """
    if not _flat(body):
        return body, False
    assigned = Counter(t for t in map(target, body) if t is not None)
    uses = Counter(n for s in body for n in reads(s))
    for i, stmt in enumerate(body):
        a = target(stmt)
        if a is None or a in params or assigned[a] != 1:
            continue
        value = stmt.value
        if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
            new: ast.expr = value
        elif isinstance(value, ast.Name) and (value.id in params or assigned[value.id] == 1):
            b = value.id
            definition = next((k for k in range(i) if target(body[k]) == b), None)
            if definition is not None and uses[b] == 1 and b not in params:
                # b was made only to be copied into a: give its definition a's name
                body = list(body)
                body[definition] = ast.Assign(
                    targets=[ast.Name(id=a, ctx=ast.Store())], value=body[definition].value
                )
                del body[i]
                return body, True
            new = value
        else:
            continue
        replace = _Replace(a, new)
        rest = [replace.visit(s) for s in body[i + 1 :]]
        return body[:i] + rest, True
    return body, False


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
                return self.done(ast.BinOp(left=left, op=inner.op, right=inner.right))
            if _num(inner) is not None:
                return self.done(ast.Constant(-_num(inner)))
        if isinstance(node.op, ast.UAdd):
            return self.done(node.operand)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        left, right, op = node.left, node.right, node.op
        a, b = _num(left), _num(right)
        if a is not None and b is not None and type(op) in _FOLD:
            try:
                value = _FOLD[type(op)](a, b)
            except (ZeroDivisionError, OverflowError):
                return node
            if isinstance(value, (int, float)) and abs(value) < 1e15:
                return self.done(ast.Constant(value))
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
        if (
            isinstance(op, (ast.Mult, ast.Div))
            and isinstance(left, ast.UnaryOp)
            and isinstance(left.op, ast.USub)
        ):
            if isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub):
                return self.done(ast.BinOp(left=left.operand, op=op, right=right.operand))
        return node


def simplify(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """Fold constants and algebraic identities inside every expression."""
    simplifier = _Simplify()
    out = [simplifier.visit(s) for s in body]
    return out, simplifier.changed


def eliminate_dead_code(body: list[ast.stmt], params: set[str]) -> tuple[list[ast.stmt], bool]:
    """Drop assignments whose value is never read, and comments left heading nothing."""
    if not _flat(body):
        return body, False
    live: set[str] = set()
    kept: list[ast.stmt] = []
    changed = False
    for stmt in reversed(body):
        t = target(stmt)
        if t is not None and t not in live:
            changed = True
            continue
        if is_comment(stmt) and (
            not kept or is_comment(kept[-1]) or isinstance(kept[-1], ast.Return)
        ):
            changed = True
            continue
        if t is not None:
            live.discard(t)
        live.update(reads(stmt))
        kept.append(stmt)
    kept.reverse()
    return kept, changed


#: the longest statement (without indentation) inlining may produce
LINE_LIMIT = 80


def inline_temporaries(body: list[ast.stmt], temporaries: set[str]) -> list[ast.stmt]:
    """Write each temporary read exactly once into the statement that reads it.

    Before::                  After::

        t1 = x @ w                t2 = np.exp(-(x @ w))
        t2 = np.exp(-t1)

    Only names in ``temporaries`` (made by the compiler, never the user's),
    only within one straight-line block, only where no operand changes in
    between and the merged statement stays within ``LINE_LIMIT``.
    """
    if not _flat(body):
        return body
    body = list(body)
    i = 0
    while i < len(body):
        a = target(body[i])
        if a is None or a not in temporaries:
            i += 1
            continue
        all_reads = Counter(n for s in body for n in reads(s))
        assigned = [k for k, s in enumerate(body) if target(s) == a]
        users = [k for k, s in enumerate(body) if a in reads(s)]
        if all_reads[a] != 1 or assigned != [i] or len(users) != 1 or users[0] <= i:
            i += 1
            continue
        j = users[0]
        operands = set(reads(body[i].value))
        if any(target(body[k]) in operands for k in range(i + 1, j)):
            i += 1
            continue
        merged = _Replace(a, body[i].value).visit(copy.deepcopy(body[j]))
        if len(ast.unparse(ast.fix_missing_locations(merged))) > LINE_LIMIT:
            i += 1
            continue
        body[j] = merged
        del body[i]
        i = 0  # earlier temporaries may now be inlinable
    return body
