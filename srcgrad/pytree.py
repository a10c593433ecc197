"""Pytrees: arguments that are (nested) dicts, lists, tuples (namedtuples too) and
dataclass instances of arrays and floats.

``grad(f, wrt="params")`` with ``params = {"W": W, "b": b}`` gives a gradient of the
same structure (of the same namedtuple or dataclass type, as JAX gives for registered
ones). The API walks such arguments with these few functions; generated code handles
them with the runtime's sequence helpers (``zero_adjoint``, ``add_seq``,
``index_adjoint``), which follow the same structure. Generated code is given a
dataclass as the dict of its fields (:func:`plain`), and reads ``p.w`` as ``p["w"]``
(a namedtuple's ``p.w`` as ``p[0]``: see ``normalize``).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any


def is_node(x: Any) -> bool:
    """A container srcgrad looks inside: a dict, list or tuple (namedtuples included),
    or a dataclass instance (its fields)."""
    return isinstance(x, (dict, list, tuple)) or is_dataclass_instance(x)


def is_dataclass_instance(x: Any) -> bool:
    """A dataclass instance srcgrad looks inside (not one with a ``__call__``: that is a
    function passed in, whose fields its method reads)."""
    return dataclasses.is_dataclass(x) and not isinstance(x, type) and not callable(x)


def is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def children(x: Any) -> list[tuple[Any, Any]]:
    """``(key, child)`` pairs of a container, in order (a dict's in insertion order, a
    dataclass's fields in the order of their definition)."""
    if isinstance(x, dict):
        return list(x.items())
    if is_dataclass_instance(x):
        return [(f.name, getattr(x, f.name)) for f in dataclasses.fields(x)]
    return list(enumerate(x))


def rebuild(x: Any, values: list[Any]) -> Any:
    """A container like ``x`` holding ``values`` instead of its children."""
    if isinstance(x, dict):  # dict subclasses come back as plain dicts
        return dict(zip(x, values))
    if is_dataclass_instance(x):  # (a copy, its fields set: frozen ones and init=False too)
        new = copy.copy(x)
        for f, value in zip(dataclasses.fields(x), values):
            object.__setattr__(new, f.name, value)
        return new
    if is_namedtuple(x):
        return type(x)(*values)
    return type(x)(values)


def plain(x: Any) -> Any:
    """``x`` with each dataclass in it a dict of its fields: what generated code is given
    (``x`` itself where it holds none)."""
    if is_dataclass_instance(x):
        return {key: plain(child) for key, child in children(x)}
    if isinstance(x, (dict, list, tuple)) and any(is_node(c) for _, c in children(x)):
        parts = [plain(child) for _, child in children(x)]
        if all(a is b for a, b in zip(parts, (c for _, c in children(x)))):
            return x
        return rebuild(x, parts)
    return x


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
        map_leaves(f, child, *(_child(o, key) for o in others), name=f"{name}[{key!r}]")
        for key, child in pairs
    ]
    return rebuild(x, values)


def structure(x: Any, leaf: Callable[[Any], Any]) -> Any:
    """A hashable description of ``x``'s containers, with ``leaf(v)`` for each leaf: a
    dict's kind is its type's name, with its keys (``("dict", (("W", 2), ("b", 1)))``);
    a dataclass's is ``("dataclass", name)``, with its fields' names as keys; a
    namedtuple's ``("namedtuple", name, fields)``."""
    if isinstance(x, dict):
        return (type(x).__name__, tuple((k, structure(v, leaf)) for k, v in x.items()))
    if is_dataclass_instance(x):
        kind = ("dataclass", type(x).__qualname__)
        return (kind, tuple((k, structure(v, leaf)) for k, v in children(x)))
    if is_namedtuple(x):
        kind = ("namedtuple", type(x).__qualname__, tuple(type(x)._fields))
        return (kind, tuple(structure(v, leaf) for v in x))
    if is_node(x):
        return (type(x).__name__, tuple(structure(v, leaf) for v in x))
    return leaf(x)


def _keyed(x: Any) -> bool:
    return isinstance(x, dict) or is_dataclass_instance(x)


def _child(x: Any, key: Any) -> Any:
    return getattr(x, key) if is_dataclass_instance(x) else x[key]


def _same_node(a: Any, b: Any) -> bool:
    if _keyed(a):
        return _keyed(b) and [k for k, _ in children(a)] == [k for k, _ in children(b)]
    return not _keyed(b) and len(a) == len(b)


def _describe(x: Any) -> str:
    if is_dataclass_instance(x):
        return f"a {type(x).__name__} with fields {[k for k, _ in children(x)]}"
    if isinstance(x, dict):
        return f"a dict with keys {list(x)}"
    if is_node(x):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"a leaf of type {type(x).__name__}"


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of ``tree`` in order, as ``jax.tree_util.tree_leaves`` gives them, for
    the pytrees srcgrad takes: (nested) dicts, lists, tuples, namedtuples and dataclass
    instances; anything else is a leaf (``None`` too, which JAX drops). A dict's leaves
    come in its insertion order (JAX sorts its keys), a dataclass's in its fields' order.

    Args:
        tree: a pytree (or a single leaf).

    Returns:
        A list of the leaves, in order.

    Raises:
        Nothing: any value is a pytree or a leaf.

    Example:
        ```python
        import numpy as np

        import srcgrad

        W, b1, b2 = np.ones((2, 2)), np.zeros(2), np.ones(2)
        leaves = srcgrad.tree_leaves({"W": W, "b": [b1, b2]})
        assert [leaf.shape for leaf in leaves] == [(2, 2), (2,), (2,)]
        ```
    """
    return leaves(tree)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """``jax.tree_util.tree_map`` (JAX's ``jax.tree.map``) for the pytrees srcgrad takes:
    a container of ``tree``'s structure (its type: a namedtuple's or a dataclass's too;
    a dict subclass comes back a dict) holding ``f(leaf, *others)`` for each leaf of
    ``tree`` and the leaves at the same place in ``rest``, which must have ``tree``'s
    structure (a ``ValueError`` names the first place where one does not).

    Args:
        f: a function of as many arguments as there are trees.
        tree: the pytree whose structure the result has.
        *rest: more pytrees of ``tree``'s structure, their leaves passed to ``f`` after
            ``tree``'s.

    Returns:
        A pytree of ``tree``'s structure holding ``f(leaf, *others)`` at each leaf.

    Raises:
        ValueError: a tree in ``rest`` does not have ``tree``'s structure.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def loss(params, x):
            return np.sum(np.tanh(x @ params["W"] + params["b"]) ** 2)


        params = {"W": np.full((3, 2), 0.1), "b": np.zeros(2)}
        grads = srcgrad.grad(loss)(params, np.ones((4, 3)))
        params = srcgrad.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        ```
    """
    return map_leaves(f, tree, *rest)
