"""Which names hold lists or tuples (``Facts.sequences``: surely; ``maybe_sequences``: on
some path), and the lengths of those made by one display."""

from __future__ import annotations

import ast

from .facts import TREE, Facts, _gives_sequence, makes_sequence


def find_sequences(facts: Facts, params: set[str], trees: set[str]) -> None:
    """Fill ``facts.sequences``, ``facts.maybe_sequences`` and ``facts.lengths`` from each
    name's definitions (``facts.definitions``, ``facts.ops``). ``trees``: the parameters
    whose arguments are pytrees."""
    # a name holds a list or tuple where each of its definitions makes one or copies a name
    # that does: the greatest fixed point, since names that pass lists around a loop
    # (`xs, ys = ys, xs`) copy each other (a parameter's value is the caller's: not known)
    facts.sequences = {n for n, defs in facts.definitions.items() if defs and n not in params}
    while True:
        kept = {
            n
            for n in facts.sequences
            if all(
                _gives_sequence(facts.ops.get(s), facts.sequences) for s, _ in facts.definitions[n]
            )
        }
        if kept == facts.sequences:
            break
        facts.sequences = kept
    facts.maybe_sequences = set(facts.sequences)
    while True:  # (the least fixed point: some definition gives one)
        found = {
            n
            for n, defs in facts.definitions.items()
            if any(_gives_sequence(facts.ops.get(s), facts.maybe_sequences) for s, _ in defs)
        }
        if found <= facts.maybe_sequences:
            break
        facts.maybe_sequences |= found


def find_lengths(facts: Facts) -> None:
    """``facts.lengths``: names defined once, by a tuple or list display."""
    for name, defs in facts.definitions.items():
        if len(defs) == 1 and isinstance(defs[0][0], ast.Assign):
            value = defs[0][0].value
            if isinstance(value, (ast.Tuple, ast.List)) and isinstance(
                defs[0][0].targets[0], ast.Name
            ):
                facts.lengths[name] = len(value.elts)


def add_pytree_sequences(facts: Facts, trees: set[str]) -> None:
    """Pytree parameters and their containers hold sequences, unless given other values."""
    facts.sequences |= {
        p
        for p, s in facts.trees.items()
        if (s == TREE or isinstance(s, tuple))
        and (
            p not in trees  # read out of a pytree by every definition
            or all(makes_sequence(facts.ops.get(d)) for d, _ in facts.definitions.get(p, []))
        )
    }
