"""Names in generated code, in one place.

Generated names derive from the user's names (``x_dot`` is the tangent of
``x``, ``x_bar`` its adjoint, ``t1`` a temporary) and never collide with a
name already in scope.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import unicodedata
from collections.abc import Iterable

from ..astwalk import nodes


class Namer:
    """Hands out fresh names that avoid every name it has been told about."""

    def __init__(self, taken: set[str] | None = None) -> None:
        self.taken: set[str] = set(taken or ()) | set(dir(builtins))
        self._memo: dict[tuple[str, str], str] = {}
        self._counters: dict[str, int] = {}

    def reserve(self, name: str) -> None:
        self.taken.add(name)

    def fresh(self, base: str) -> str:
        """``base`` itself if free, else ``base_1``, ``base_2``, ..."""
        base = _identifier(base)
        if base not in self.taken:
            self.taken.add(base)
            return base
        return self.numbered(base + "_")

    def numbered(self, prefix: str) -> str:
        """``prefix1``, ``prefix2``, ...: the next free one."""
        k = self._counters.get(prefix, 0)
        while True:
            k += 1
            name = f"{prefix}{k}"
            if name not in self.taken:
                self._counters[prefix] = k
                self.taken.add(name)
                return name

    def mark(self) -> tuple[frozenset[str], dict[str, int]]:
        """Where the names handed out so far end (for :meth:`rewind`)."""
        return frozenset(self.taken), dict(self._counters)

    def rewind(self, mark: tuple[frozenset[str], dict[str, int]], keep: Iterable[str]) -> None:
        """Forget the names handed out since ``mark`` (code made on trial, then thrown
        away), but those in ``keep`` and the derived ones (``x_bar``), which stay taken."""
        taken, counters = mark
        self.taken = set(taken) | set(keep) | set(self._memo.values())
        self._counters = dict(counters)

    def temp(self) -> str:
        """A temporary for A-normal form: ``t1``, ``t2``, ..."""
        return self.numbered("t")

    def derived(self, kind: str, name: str) -> str:
        """A name derived from ``name``; the same answer for the same question."""
        key = (kind, name)
        if key not in self._memo:
            self._memo[key] = self.fresh(f"{name}_{kind}")
        return self._memo[key]

    def tangent(self, name: str) -> str:
        return self.derived("dot", name)

    def adjoint(self, name: str) -> str:
        return self.derived("bar", name)

    def version(self, name: str) -> str:
        """A new name for a reassigned variable: ``x_1``, ``x_2``, ..."""
        return self.numbered(name + "_")


def _identifier(text: str) -> str:
    """``text`` as a name that can stand in source: characters that cannot be in an
    identifier become ``_``, a keyword or a name starting with a digit gets a ``_``
    (``class`` is ``class_``), and the name is in the form Python reads (NFKC).
    ``text`` may come from the user (a function's ``__name__``), so the answer is
    checked, not assumed."""
    text = unicodedata.normalize("NFKC", text)  # (as Python reads a name: \ufb01 is fi)
    text = "".join(c if ("a" + c).isidentifier() else "_" for c in text)
    if not text or not text.isidentifier():  # (a digit first, or one only allowed after)
        text = "_" + text
    if keyword.iskeyword(text):
        text += "_"
    return text


def names_in(tree: ast.AST) -> set[str]:
    """Every identifier that appears in ``tree``: variables, arguments, functions."""
    found: set[str] = set()
    for node in nodes(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
    return found
