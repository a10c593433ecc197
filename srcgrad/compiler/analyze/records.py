"""Part of analyze: namedtuple and dataclass arguments (pytrees of their fields). Which
attribute reads of a function read a field (then an item: ``p.w`` is ``p[0]`` or
``p["w"]``), and the refusals of what generated code, given a dataclass as the dict of
its fields, cannot do with it. Asked by the driver, which lowers the function again
where the structures of the arguments show more fields."""

from __future__ import annotations

import ast
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..normalize.lower import Normalized, field_of, is_dataclass_structure
from .facts import Facts


def record_fields(norm: Normalized, trees: dict[str, Any]) -> dict[tuple[int, int, int, int], Any]:
    """The attribute reads of ``norm`` that read a field of a namedtuple or a dataclass,
    by the structures of the values (``trees``: of the names as lowered), where each is
    read as an item (its index, its name)."""
    out = {}
    for where, (name, attr, method) in norm.attributes.items():
        field = None if method else field_of(trees.get(name), attr)
        if field is not None:
            out[where] = field
    return out


def check_dataclass_uses(norm: Normalized, facts: Facts) -> None:
    """Refuse what generated code cannot do with a dataclass, which it is given as the
    dict of its fields: read an attribute that is not a field, call a method, give it
    whole to anything but a function of the user's (``isinstance``, ``print``: they
    would see the dict)."""
    trees = facts.trees
    for where, (name, attr, method) in norm.attributes.items():
        if where in norm.fields or not is_dataclass_structure(trees.get(name)):
            continue
        node = ast.Attribute(value=ast.Name(id=name, ctx=ast.Load()), attr=attr, ctx=ast.Load())
        node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = where
        what = f"calls its method `.{attr}(...)`" if method else f"reads `.{attr}`, not a field"
        raise norm.parsed.locator.error(
            UnsupportedSyntaxError,
            node,
            f"srcgrad differentiates a dataclass argument as a pytree of its fields (read as "
            f"`obj.field`); here the code {what}. Compute that outside and pass it in, or "
            "call the method as a function of the fields.",
        )
    for stmt, op in facts.ops.items():
        if (
            op.key in ("getitem", "copy")
            or (op.call_args is not None and op.callee is not None)  # (a function of yours)
            or getattr(op.callee, "__srcgrad_helper__", None) is not None  # (zeros_seq(p))
        ):
            continue
        for atom in op.args.values():
            if isinstance(atom, ast.Name) and is_dataclass_structure(trees.get(atom.id)):
                raise norm.parsed.locator.error(
                    UnsupportedSyntaxError,
                    norm.origin.get(stmt, stmt),
                    "srcgrad differentiates a dataclass argument as a pytree of its fields "
                    "(read as `obj.field`, or passed to your own functions); here it is used "
                    "whole otherwise. Read its fields here, or pass in what this computes.",
                )
