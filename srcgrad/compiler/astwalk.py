"""Fast walks of a syntax tree, for the passes that look at every statement often.

:func:`ast.walk` visits every node breadth first through two nested generators, the
operators and ``Load``/``Store`` markers included; the optimizer asks which names a
statement reads or writes tens of thousands of times for one derivative. The walks
here visit the same expression and statement nodes (never a ``ctx``, an operator or
a comparison's operators, which hold no names) from an explicit stack, in no promised
order: every caller counts or collects.
"""

from __future__ import annotations

import ast
from typing import Any

#: fields that never hold a node with a name in it
_SKIP = frozenset({"ctx", "op", "ops", "type_comment", "kind"})
#: per node type, the fields worth walking into
_FIELDS: dict[type, tuple[str, ...]] = {}


#: the field types (in a node class's signature, ``Name(identifier id, expr_context ctx)``)
#: that never hold a node with a name in it
_LEAF_TYPES = frozenset(
    {"identifier", "string", "constant", "int", "expr_context", "operator", "unaryop"}
    | {"boolop", "cmpop", "type_ignore"}
)


def _fields(kind: type) -> tuple[str, ...]:
    """The fields of ``kind`` that may hold a node with a name in it: read from the
    class's signature (its docstring, as the ``ast`` module writes it) where it can be,
    else every field but those in ``_SKIP``."""
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = tuple(f for f in kind._fields if f not in _SKIP)
        signature = (kind.__doc__ or "").split("\n", 1)[0]
        if signature.startswith(kind.__name__ + "(") and signature.endswith(")"):
            typed = [p.split() for p in signature[len(kind.__name__) + 1 : -1].split(",") if p]
            leaf = {f for t, f in typed if t.rstrip("?*") in _LEAF_TYPES}
            if all(len(p) == 2 for p in typed) and {f for _, f in typed} == set(kind._fields):
                fields = tuple(f for f in fields if f not in leaf)
        _FIELDS[kind] = fields
    return fields


def nodes(node: ast.AST) -> list[ast.AST]:
    """``node`` and every expression and statement node under it."""
    out: list[ast.AST] = []
    stack = [node]
    pop, push, add = stack.pop, stack.append, out.append
    node_type = ast.AST
    while stack:
        n = pop()
        add(n)
        for field in _FIELDS.get(type(n)) or _fields(type(n)):
            value = getattr(n, field, None)
            if value is None:
                continue
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        push(item)
            elif isinstance(value, node_type):
                push(value)
    return out


def loaded(node: ast.AST) -> list[str]:
    """The names ``node`` reads, once per read."""
    name, load = ast.Name, ast.Load
    return [n.id for n in nodes(node) if type(n) is name and type(n.ctx) is load]


def stored(node: ast.AST) -> list[str]:
    """The names ``node`` assigns, once per assignment."""
    name, store = ast.Name, ast.Store
    return [n.id for n in nodes(node) if type(n) is name and type(n.ctx) is store]


def copy_tree(node: Any, names: Any = None) -> Any:
    """A deep copy of a syntax tree (or a list of them), several times faster than
    :func:`copy.deepcopy`: nodes are rebuilt field by field, with their positions;
    the markers without fields or positions (``Load``, ``Add``...) are shared, as the
    parser shares them. ``names``: a mapping whose names in the tree are replaced by
    copies of the expressions they map to (a substitution in the same walk).
    """
    if type(node) is list:
        return [copy_tree(item, names) for item in node]
    if not isinstance(node, ast.AST):
        return node
    kind = type(node)
    if names is not None and kind is ast.Name and node.id in names:
        return copy_tree(names[node.id])
    fields = kind._fields
    if not fields and not kind._attributes:  # (a marker; never a statement: ids key facts)
        return node
    new = kind.__new__(kind)
    for field in fields:
        value = getattr(node, field, None)
        if type(value) is list:
            value = [
                copy_tree(item, names) if isinstance(item, ast.AST) else item for item in value
            ]
        elif isinstance(value, ast.AST):
            value = copy_tree(value, names)
        setattr(new, field, value)
    for attribute in kind._attributes:
        if hasattr(node, attribute):
            setattr(new, attribute, getattr(node, attribute))
    return new


def unparse(tree: ast.AST) -> str:
    """``ast.unparse`` of generated code, whose statements may have no line numbers
    (``ast.unparse`` reads a statement's ``lineno`` for its type comment): each
    statement without one gets line 1 first. Only statement lists are walked, not
    expressions, which ``ast.fix_missing_locations`` would walk too."""
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.stmt) and getattr(node, "lineno", None) is None:
            node.lineno = node.end_lineno = 1
            node.col_offset = node.end_col_offset = 0
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                todo.extend(block)
    return ast.unparse(tree)
