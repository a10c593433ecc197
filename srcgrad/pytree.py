"""Pytrees: arguments that are (nested) dicts, lists and tuples of arrays and floats.

``grad(f, wrt="params")`` with ``params = {"W": W, "b": b}`` gives a gradient of the
same structure. The API walks such arguments with these few functions; generated
code handles them with the runtime's sequence helpers (``zero_adjoint``,
``add_seq``, ``index_adjoint``), which follow the same structure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def is_node(x: Any) -> bool:
    """A container srcgrad looks inside: a dict, list or tuple (namedtuples included)."""
    return isinstance(x, (dict, list, tuple))


def children(x: Any) -> list[tuple[Any, Any]]:
    """``(key, child)`` pairs of a container, in order (a dict's in insertion order)."""
    return list(x.items()) if isinstance(x, dict) else list(enumerate(x))


def rebuild(x: Any, values: list[Any]) -> Any:
    """A container like ``x`` holding ``values`` instead of its children."""
    if isinstance(x, dict):  # dict subclasses come back as plain dicts
        return dict(zip(x, values))
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a namedtuple
        return type(x)(*values)
    return type(x)(values)


def paths(x: Any, name: str) -> Iterator[tuple[str, Any]]:
    """Every leaf of ``x`` with its path, spelled as code reads it: ``params['W']``."""
    if is_node(x):
        for key, child in children(x):
            yield from paths(child, f"{name}[{key!r}]")
    else:
        yield name, x


def leaves(x: Any) -> list[Any]:
    return [leaf for _, leaf in paths(x, "")]


def map_leaves(f: Callable[..., Any], x: Any, *others: Any, name: str = "") -> Any:
    """``f`` applied to the leaves of ``x`` and the matching leaves of ``others`` (which
    must have the structure of ``x``: a ``ValueError`` names the first difference)."""
    if not is_node(x):
        return f(x, *others)
    for other in others:
        if not (is_node(other) and _same_node(x, other)):
            raise ValueError(
                f"{name or 'the value'} should have the structure of the argument "
                f"({_describe(x)}) but is {_describe(other)}"
            )
    pairs = children(x)
    values = [
        map_leaves(f, child, *(o[key] for o in others), name=f"{name}[{key!r}]")
        for key, child in pairs
    ]
    return rebuild(x, values)


def structure(x: Any, leaf: Callable[[Any], Any]) -> Any:
    """A hashable description of ``x``'s containers, with ``leaf(v)`` for each leaf."""
    if isinstance(x, dict):
        return (type(x).__name__, tuple((k, structure(v, leaf)) for k, v in x.items()))
    if is_node(x):
        return (type(x).__name__, tuple(structure(v, leaf) for v in x))
    return leaf(x)


def _same_node(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b)
    return not isinstance(b, dict) and len(a) == len(b)


def _describe(x: Any) -> str:
    if isinstance(x, dict):
        return f"a dict with keys {list(x)}"
    if is_node(x):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"a leaf of type {type(x).__name__}"
