"""Part of normalize: ``with np.errstate(...)`` blocks, their bodies in line.

In:  the statements of a user function (plain Python AST), its free names resolved and
its local names.
Out: the same statements with each ``with np.errstate(divide="ignore", ...):`` block
replaced by its body, and the settings of those blocks together (``Normalized.errstate``),
which the driver puts back around each generated function's body::

    def f(x):                                          def grad_f(x):
        with np.errstate(divide="ignore"):    ==>          with np.errstate(divide='ignore'):
            y = np.log(x)                                      y = np.log(x)
        return np.sum(y)                                       ...

``np.errstate`` changes which floating-point errors warn, never a value, so the body
computes the same numbers outside the block; the derivative keeps the warnings the user
silenced silent, in its adjoint statements too (a ``log``'s adjoint divides where the
``log`` did). Only ``"ignore"`` is kept: ``"raise"`` and ``"call"`` change what the
function does (an exception, a call), and ``"warn"`` would bring back, in the whole
derivative, warnings silenced around the call; those, and any other context manager,
are refused with what to write instead.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy

from ...errors import UnsupportedSyntaxError
from ..astwalk import nodes
from .expression_helpers import _static_value

#: the keywords of ``np.errstate`` (the kinds of floating-point error)
_KINDS = ("all", "divide", "over", "under", "invalid")


def lower_contexts(
    body: list[ast.stmt],
    env: dict[str, Any],
    local: set[str],
    fail: Callable[[ast.AST, str], UnsupportedSyntaxError],
) -> tuple[list[ast.stmt], dict[str, str]]:
    """``body`` with its ``np.errstate`` blocks in line (blocks nested in ``if`` and loops
    too; the user's statements are not changed: a compound statement holding one is
    copied), and their settings, by kind of error."""
    settings: dict[str, str] = {}

    def block(stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, ast.With) and all(_errstate(i, env, local) for i in stmt.items):
                for item in stmt.items:
                    settings.update(_settings(item, stmt, fail))
                out.extend(block(stmt.body))
            elif isinstance(stmt, (ast.If, ast.For, ast.While)) and _holds_with(stmt):
                new = ast.copy_location(type(stmt)(**dict(ast.iter_fields(stmt))), stmt)
                new.body = block(stmt.body)
                new.orelse = block(stmt.orelse)
                out.append(new)
            else:
                out.append(stmt)
        return out

    if not any(_holds_with(s) for s in body):
        return body, settings
    return block(body), settings


def _holds_with(stmt: ast.stmt) -> bool:
    return any(isinstance(n, ast.With) for n in nodes(stmt))


def _errstate(item: ast.withitem, env: dict[str, Any], local: set[str]) -> bool:
    """Whether ``item`` calls numpy's ``errstate`` (by a name not shadowed in the function)."""
    call = item.context_expr
    if not isinstance(call, ast.Call):
        return False
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or root.id in local:
        return False
    return _static_value(call.func, env) is numpy.errstate


def _settings(
    item: ast.withitem, stmt: ast.With, fail: Callable[[ast.AST, str], UnsupportedSyntaxError]
) -> dict[str, str]:
    """The settings of one ``np.errstate(...)``: each keyword a kind of error, each value
    the constant ``"ignore"``; anything else is refused."""
    call = item.context_expr
    assert isinstance(call, ast.Call)
    if item.optional_vars is not None or call.args:
        raise fail(
            stmt,
            "srcgrad keeps `with np.errstate(...)` written with keywords alone and no `as` "
            '(`with np.errstate(divide="ignore"):`); write it so.',
        )
    settings = {}
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg not in _KINDS or not (
            isinstance(value, ast.Constant) and value.value == "ignore"
        ):
            raise fail(
                stmt,
                "srcgrad keeps `with np.errstate(...)` only where it silences warnings "
                f'({", ".join(f"{k}=" for k in _KINDS)} each "ignore"), which changes no value; '
                'other settings ("raise", "call", "warn") are not kept: call the derivative '
                "inside a `with np.errstate(...)` block of your own instead.",
            )
        settings[keyword.arg] = "ignore"
    return settings
