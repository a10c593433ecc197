"""Part of normalize: the value of an expression made of constants, where srcgrad can
compute it when it reads the code (a dict comprehension's keys and conditions once its
loop variables are written out, a set's elements).

In:  an expression (plain Python AST) and the function's free names resolved.
Out: its value, or :data:`UNKNOWN` where it is not made of constants alone::

    2 * 3 + 1        ==>  7
    f"w{2}"          ==>  "w2"
    k % 2 == 0       ==>  UNKNOWN   (k is a variable)
"""

from __future__ import annotations

import ast
import builtins
import operator
from typing import Any

#: the value of an expression that is not made of constants alone
UNKNOWN = object()

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
#: builtins of constants whose value is a constant again
_CALLS = {"str": builtins.str, "int": builtins.int, "len": builtins.len, "abs": builtins.abs}
#: the types a constant may have (what an ``ast.Constant`` holds, and tuples of them)
_PLAIN = (int, float, str, bool, type(None), bytes)


def constant_value(node: ast.expr, env: dict[str, Any], local: set[str]) -> Any:
    """The value of ``node`` where it is made of constants alone, else :data:`UNKNOWN`."""
    try:
        value = _value(node, env, local)
    except Exception:  # noqa: BLE001 (1 / 0 or "a" - 1: Python raises where the code runs)
        return UNKNOWN
    return value if _plain(value) else UNKNOWN


def _plain(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_plain(v) for v in value)
    return type(value) in _PLAIN


def _value(node: ast.expr, env: dict[str, Any], local: set[str]) -> Any:
    def value(n: ast.expr) -> Any:
        found = _value(n, env, local)
        if found is UNKNOWN:
            raise LookupError
        return found

    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):  # (a list: read as a tuple of its values)
        return tuple(value(e) for e in node.elts)
    if isinstance(node, ast.Set):  # (only inside: a set is no constant of the code)
        return frozenset(value(e) for e in node.elts)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](value(node.left), value(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](value(node.operand))
    if isinstance(node, ast.Compare):
        left = value(node.left)
        for op, right in zip(node.ops, node.comparators):
            right = value(right)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        result = None
        for operand in node.values:
            result = value(operand)
            if bool(result) == isinstance(node.op, ast.Or):
                return result
        return result
    if isinstance(node, ast.IfExp):
        return value(node.body) if value(node.test) else value(node.orelse)
    if isinstance(node, ast.JoinedStr):
        return "".join(value(part) for part in node.values)
    if isinstance(node, ast.FormattedValue):
        converted = value(node.value)
        if node.conversion != -1:
            converted = {115: str, 114: repr, 97: ascii}[node.conversion](converted)
        spec = "" if node.format_spec is None else value(node.format_spec)
        return format(converted, spec)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _CALLS
        and node.func.id not in local
        and env.get(node.func.id, _CALLS[node.func.id]) is _CALLS[node.func.id]
        and not node.keywords
    ):
        return _CALLS[node.func.id](*(value(a) for a in node.args))
    return UNKNOWN
