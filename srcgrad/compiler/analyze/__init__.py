"""Stage 3, analyze: facts about a core function, without changing it.

In:  a :class:`~srcgrad.compiler.normalize.Normalized` function, the ``wrt`` parameters
and the ranks of the call's arguments. Out: :class:`~.facts.Facts` (the data model, in
:mod:`.facts`), one module per analysis, run in this order by :func:`analyze`:

- :mod:`.classify`: ``ops``, for every core statement the primitive it applies and the
  rule for it (:class:`~.facts.Op`);
- :mod:`.complex_values`: which names may hold complex numbers (and the rules for
  complex operands where they differ);
- :mod:`.sequences`: which names hold lists or tuples;
- :mod:`.shapes`: for every name a :class:`~.facts.Shape`: its rank where known, and a
  *broadcast key*, the set of values whose shapes broadcast together to give its shape.
  Two names with equal keys provably have equal shapes, which lets the transforms drop
  ``unbroadcast`` where it cannot do anything::

      t4 = 1 + t3       # key(t4) == key(t3) == {x}: t3's adjoint is t4's
      t6 = y * t5       # key(t6) == {x, y} != key(t5): unbroadcast needed

- :mod:`.activity`: ``varied`` (depends on a ``wrt`` parameter), ``useful`` (the returned
  value depends on it); ``active``, both: the names that get a tangent or an adjoint;
- :mod:`.aliases`: which names may share memory; an in-place change another name would
  see, or one into the caller's data, is an error;
- :mod:`.dtypes`: which names provably hold floats (asked by the checks);
- :mod:`.checks`: the refusals, at the user's line, of every active value that would
  silently lose its derivative: one reaching a call without a rule, a parameter a rule
  neither differentiates nor declares of derivative zero (``Rule.zero``), an index, a
  cast to a dtype it cannot see or to a complex one, a complex intermediate, list
  arithmetic.
"""

from __future__ import annotations

import ast
from typing import Any

from ..normalize.lower import Normalized
from .activity import find_activity
from .checks import check_facts
from .classify import classify
from .complex_values import complex_values, use_complex_rules
from .facts import TREE, Facts, Shape, assigned_name, is_append, walk_block
from .recursion_shapes import _shapes
from .sequences import add_pytree_sequences, find_lengths, find_sequences
from .shapes import _static_shape, _tree_parts

__all__ = ["Facts", "analyze"]


def analyze(
    norm: Normalized,
    wrt: list[str],
    ranks: dict[str, Any],
    mode: str | None = None,
    wide: dict[str, tuple[bool, ...]] | None = None,
    check: bool = True,
    floats: frozenset[str] = frozenset(),
    statics: dict[str, Any] | None = None,
    complexes: frozenset[str] = frozenset(),
) -> Facts:
    """Classify every statement, then compute sequences, shapes, activity and aliases.
    ``mode`` ("jvp" or "vjp"): the transform that follows, where a runtime helper has a
    rule for the other one only (its source is differentiated instead). ``wide``: for
    array parameters, which axes of their arguments are not of length 1. ``check=False``:
    the facts alone, with no error for what could not be differentiated (for the alias
    analysis of a callee). ``floats``: the parameters whose arguments are floats (the
    ``wrt`` ones are). ``statics``: the parameters whose arguments are functions, with
    those functions (a call through one is a call of that function). ``complexes``: the
    parameters whose arguments are complex numbers or arrays."""
    env = norm.parsed.env
    if statics:
        env = {**env, **statics}
    facts = Facts(
        mode=mode,
        params=list(norm.tree.args.args),
        floats=set(wrt) | set(floats),
        env=env,
        statics=dict(statics or {}),
    )
    for name, value in env.items():
        facts.shapes[name] = _static_shape(name, value)
    trees = _parameters(facts, norm.tree.args.args, ranks, wide or {})
    body = norm.tree.body
    ret = body[-1]
    assert isinstance(ret, ast.Return)
    facts.returned = ret.value
    assigns = _classify_all(facts, body[:-1], env)
    defining = [s for s in facts.ops if isinstance(s, ast.Assign) or is_append(s)]
    arguments = {p: f"the argument {p!r} is complex" for p in complexes}
    facts.complex, facts.complex_sites = complex_values(facts, defining, env, arguments)
    use_complex_rules(facts)
    find_sequences(facts, {a.arg for a in norm.tree.args.args}, trees)
    _tree_parts(facts, assigns, trees)
    find_lengths(facts)
    add_pytree_sequences(facts, trees)
    _shapes(facts, assigns, norm.parsed.func)
    find_activity(facts, assigns, wrt, ret)
    from .aliases import aliases  # (it analyzes callees with this function)

    facts.aliases = aliases(norm, facts)
    if check:
        check_facts(norm, facts)
    return facts


def _parameters(
    facts: Facts, params: list[ast.arg], ranks: dict[str, Any], wide: dict[str, Any]
) -> set[str]:
    """Each parameter's shape from its argument's rank (and which axes are wide); returns
    the parameters whose arguments are pytrees (their structure in ``facts.trees``)."""
    trees = set()
    for param in params:
        rank = ranks.get(param.arg)
        if rank == TREE or isinstance(rank, tuple):
            trees.add(param.arg)
            facts.trees[param.arg] = rank
            if wide.get(param.arg) is not None:
                facts.tree_wide[param.arg] = wide[param.arg]
            rank = None
        key = frozenset() if rank == 0 else frozenset({param.arg})
        known = wide.get(param.arg)
        if not isinstance(rank, int) or known is None or len(known) != rank:
            known = None
        facts.shapes[param.arg] = Shape(key, rank, () if rank == 0 else known)
    return trees


def _classify_all(facts: Facts, body: list[ast.stmt], env: dict[str, Any]) -> list[ast.stmt]:
    """Every core statement's rule, and each name's definitions; returns the statements
    that define a name (assignments and appends), in order."""
    assigns = []
    for stmt, depth in walk_block(body):
        if isinstance(stmt, ast.Assign) or is_append(stmt):
            facts.ops[stmt] = classify(stmt, env, facts)
            assigns.append(stmt)
            facts.definitions.setdefault(assigned_name(stmt), []).append((stmt, depth))
        elif isinstance(stmt, ast.For):
            facts.definitions.setdefault(stmt.target.id, []).append((stmt, depth))
            facts.loop_indices.add(stmt.target.id)
        else:
            # (and statements kept as they are: print(...), raise)
            assert isinstance(stmt, (ast.If, ast.While, ast.Break, ast.Pass, ast.Expr, ast.Raise))
    return assigns
