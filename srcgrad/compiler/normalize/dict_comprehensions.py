"""Part of normalize: dict and set comprehensions whose iterations srcgrad knows when it
reads the code, written out as the displays they make.

In:  the statements of a user function (plain Python AST), its free names resolved, its
local names, a way to fail at a user's node, and what a dict the function iterates holds
(:class:`Keyed`: a parameter whose keys the arguments show, a dict built in the function).
Out: the same statements, where each dict comprehension over ``range`` with constant
bounds, a list or tuple of constants (or of names), or a dict whose keys are known is the
dict display it makes, its keys and conditions computed once its loop variables are
written out, and each set comprehension the set display it makes::

    d = {k: x[k] * 2 for k in range(3) if k != 1}     ==>  d = {0: x[0] * 2, 2: x[2] * 2}
    s = {name: w * 2 for name, w in params.items()}   ==>  s = {"w": params["w"] * 2, ...}

The rest of normalize reads the display (``normalize.dicts``: a variable per key).
Refused at the user's line, with what to write instead: a comprehension over anything
else (an array, a list computed in the function), or whose keys or conditions depend on
values only known when the code runs (``{float(v): ...}``, ``if v > 0``).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterator
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..astwalk import copy_tree, nodes
from .constants import UNKNOWN, constant_value

Fail = Callable[[ast.AST, str], UnsupportedSyntaxError]
#: the most entries a comprehension written out may have
MAX_ENTRIES = 256
#: the methods of a dict that iterate its keys, values or both
_VIEWS = ("keys", "values", "items")

_UNKNOWN_ITERATION = (
    "srcgrad writes a {what} comprehension out as the {what} it makes, which needs its "
    "iterations known when it reads the code: `range` with constant bounds, a list or "
    "tuple of constants, or a dict whose keys it knows (a dict argument, or one built in "
    "the function with constant keys); `{iterable}` is none of these. Build the {what} "
    "with a display, or iterate one of those."
)


#: what a dict named by a node holds: ``(key, value)`` pairs, where the value is an
#: expression reading it; None where srcgrad does not know; ``...`` where the analysis
#: will know (a parameter: the comprehension is written out once it does); :data:`LATER`
#: where a later part of normalize will (a dict built in the function: ``normalize.dicts``)
Keyed = Callable[[ast.Name], Any]
#: see :data:`Keyed`
LATER = object()

_SET_OF_VALUES = (
    " (A set of values the code computes merges equal values, which srcgrad does not "
    "follow: use a list comprehension or vectorised numpy operations.)"
)


class _Later(Exception):
    """A comprehension left for a later part of normalize."""


def expand_comprehensions(
    body: list[ast.stmt], env: dict[str, Any], local: set[str], fail: Fail, keyed: Keyed
) -> tuple[list[ast.stmt], bool]:
    """``body`` with its dict and set comprehensions written out (see the module's
    docstring; the user's statements are copied first), and whether one waits for the
    keys of a dict the analysis will know (it is ``None`` until then)."""
    if not any(isinstance(n, (ast.DictComp, ast.SetComp)) for s in body for n in nodes(s)):
        return body, False
    expander = _Expander(env, local, fail, keyed)
    out = [expander.visit(s) for s in copy_tree(body)]
    return out, expander.waiting


def expand_comprehension(
    node: ast.DictComp | ast.SetComp, env: dict[str, Any], local: set[str], fail: Fail, keyed: Keyed
) -> ast.expr:
    """The display the comprehension ``node`` makes, or ``node`` itself where ``keyed``
    says :data:`LATER` (its inner comprehensions written out alike)."""
    return _Expander(env, local, fail, keyed).visit(node)


class _Expander(ast.NodeTransformer):
    def __init__(self, env: dict[str, Any], local: set[str], fail: Fail, keyed: Keyed) -> None:
        self.env = env
        self.local = local
        self.fail = fail
        self.keyed = keyed
        self.waiting = False

    def visit_DictComp(self, node: ast.DictComp) -> ast.expr:
        try:
            return self.dict_display(node)
        except _Later:
            self.generic_visit(node)
            return node

    def visit_SetComp(self, node: ast.SetComp) -> ast.expr:
        try:
            return self.set_display(node)
        except _Later:
            self.generic_visit(node)
            return node

    def dict_display(self, node: ast.DictComp) -> ast.expr:
        entries: dict[Any, ast.expr] = {}
        for bound in self.iterations(node, "dict"):
            if bound is None:
                self.waiting = True
                return ast.copy_location(ast.Constant(None), node)
            key = constant_value(_substituted(node.key, bound), self.env, self.local)
            if key is UNKNOWN:
                raise self.fail(
                    node.key,
                    "srcgrad writes a dict comprehension out as the dict it makes, which "
                    "needs each key known when it reads the code (made of the loop "
                    'variables over constants: `k`, `f"w{k}"`, `2 * k`); this key is '
                    "computed from values the code computes: build the dict with a display.",
                )
            entries.pop(key, None)  # (a key again: its last value, in the first's place)
            entries[key] = _substituted(node.value, bound)
        display = ast.Dict(keys=[ast.Constant(k) for k in entries], values=list(entries.values()))
        return self.visit(_placed(display, node))

    def set_display(self, node: ast.SetComp) -> ast.expr:
        elements = []
        for bound in self.iterations(node, "set"):
            if bound is None:
                self.waiting = True
                return ast.copy_location(ast.Constant(None), node)
            elements.append(_substituted(node.elt, bound))
        display = ast.Set(elts=elements) if elements else _call("set", [])
        return self.visit(_placed(display, node))

    def iterations(
        self, node: ast.DictComp | ast.SetComp, what: str
    ) -> Iterator[dict[str, ast.expr] | None]:
        """The loop variables' values, one dict of them per iteration the conditions
        keep (None: one waits for the analysis)."""
        count = 0
        todo: list[tuple[int, dict[str, ast.expr]]] = [(0, {})]
        while todo:
            k, bound = todo.pop(0)
            if k == len(node.generators):
                count += 1
                if count > MAX_ENTRIES:
                    raise self.fail(
                        node,
                        f"srcgrad writes a {what} comprehension out as the {what} it makes, "
                        f"with {MAX_ENTRIES} entries at most; use arrays for more.",
                    )
                yield bound
                continue
            gen = node.generators[k]
            if gen.is_async:
                raise self.fail(node, "srcgrad differentiates synchronous code; drop `async`.")
            values = self.values(_substituted(gen.iter, bound), gen.iter, what)
            if values is None:
                yield None
                return
            nxt = []
            for value in values:
                inner = dict(bound)
                if not _bind(gen.target, value, inner):
                    raise self.fail(
                        gen.target,
                        f"the items of `{ast.unparse(gen.iter)}` do not unpack into "
                        f"`{ast.unparse(gen.target)}`.",
                    )
                if all(self.kept(c, inner, what) for c in gen.ifs):
                    nxt.append((k + 1, inner))
            todo[:0] = nxt

    def kept(self, condition: ast.expr, bound: dict[str, ast.expr], what: str) -> bool:
        kept = constant_value(_substituted(condition, bound), self.env, self.local)
        if kept is UNKNOWN:
            raise self.fail(
                condition,
                f"srcgrad writes a {what} comprehension out as the {what} it makes, which "
                "needs each condition known when it reads the code (made of the loop "
                "variables over constants); this one depends on values the code computes: "
                f"build the {what} with a display, or compute the condition into the values "
                "(`np.where`).",
            )
        return bool(kept)

    def values(self, iterable: ast.expr, user: ast.expr, what: str) -> list[ast.expr] | None:
        """The items ``iterable`` gives, as expressions (None: wait for the analysis)."""
        if isinstance(iterable, (ast.List, ast.Tuple)):
            if all(_cheap(e) for e in iterable.elts):
                return [copy_tree(e) for e in iterable.elts]
        elif self.builtin(iterable, "range"):
            bounds = [constant_value(a, self.env, self.local) for a in iterable.args]
            if all(type(b) is int for b in bounds) and 1 <= len(bounds) <= 3 and bounds[-1:]:
                if len(bounds) < 3 or bounds[2] != 0:
                    numbers = range(*bounds)
                    if len(numbers) <= MAX_ENTRIES:
                        return [ast.Constant(i) for i in numbers]
        else:
            view, target = _view(iterable)
            if isinstance(target, ast.Name):
                pairs = self.keyed(target)
                if pairs is ... and what == "set":  # (values only known when the code runs)
                    pairs = None
                if pairs is ...:
                    return None
                if pairs is LATER:
                    raise _Later
                if pairs is not None:
                    return [_item(view, k, v) for k, v in pairs]
        message = _UNKNOWN_ITERATION.format(what=what, iterable=ast.unparse(user))
        if what == "set":
            message += _SET_OF_VALUES
        raise self.fail(user, message)

    def builtin(self, node: ast.expr, name: str) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == name
            and name not in self.local
            and self.env.get(name, getattr(builtins, name)) is getattr(builtins, name)
            and not node.keywords
        )


def _view(node: ast.expr) -> tuple[str, ast.expr]:
    """``d.items()``: ("items", d); ``d``: ("keys", d)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _VIEWS
        and not node.args
        and not node.keywords
    ):
        return node.func.attr, node.func.value
    return "keys", node


def _item(view: str, key: Any, value: ast.expr) -> ast.expr:
    if view == "keys":
        return ast.Constant(key)
    if view == "values":
        return copy_tree(value)
    return ast.Tuple(elts=[ast.Constant(key), copy_tree(value)], ctx=ast.Load())


def _cheap(node: ast.expr) -> bool:
    """A constant or a name (or a tuple of them): read again where each use is."""
    if isinstance(node, ast.Tuple):
        return all(_cheap(e) for e in node.elts)
    return isinstance(node, (ast.Constant, ast.Name))


def _bind(target: ast.expr, value: ast.expr, bound: dict[str, ast.expr]) -> bool:
    """Bind ``target``'s names to the parts of ``value``; whether they match."""
    if isinstance(target, ast.Name):
        bound[target.id] = value
        return True
    if not isinstance(target, (ast.Tuple, ast.List)):
        return False
    if isinstance(value, ast.Constant) and isinstance(value.value, tuple):
        value = ast.Tuple(elts=[ast.Constant(v) for v in value.value], ctx=ast.Load())
    if not isinstance(value, ast.Tuple) or len(value.elts) != len(target.elts):
        return False
    return all(_bind(t, v, bound) for t, v in zip(target.elts, value.elts))


def _substituted(node: ast.expr, bound: dict[str, ast.expr]) -> ast.expr:
    """A copy of ``node`` with the names in ``bound`` read as their values, except where
    a comprehension or lambda inside binds the name again."""

    class Substitute(ast.NodeTransformer):
        def __init__(self) -> None:
            self.hidden: set[str] = set()

        def visit_Name(self, n: ast.Name) -> ast.expr:
            if isinstance(n.ctx, ast.Load) and n.id in bound and n.id not in self.hidden:
                return _placed(copy_tree(bound[n.id]), n)
            return n

        def scoped(self, n: ast.AST, names: set[str]) -> ast.AST:
            hidden = self.hidden
            self.hidden = hidden | names
            try:
                self.generic_visit(n)
            finally:
                self.hidden = hidden
            return n

        def visit_Lambda(self, n: ast.Lambda) -> ast.AST:
            return self.scoped(n, {a.arg for a in nodes(n.args) if isinstance(a, ast.arg)})

        def comprehension(self, n: ast.AST) -> ast.AST:
            names = {t.id for g in n.generators for t in nodes(g.target) if isinstance(t, ast.Name)}
            return self.scoped(n, names)

        visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = comprehension

    if not bound:
        return copy_tree(node)
    return Substitute().visit(copy_tree(node))


def _placed(node: ast.expr, where: ast.AST) -> ast.expr:
    for n in nodes(node):
        if isinstance(n, ast.expr) and not hasattr(n, "lineno"):
            ast.copy_location(n, where)
    return node


def _call(name: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])
