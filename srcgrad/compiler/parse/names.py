"""Part of parse: a function's free names. :func:`_resolve` finds the object each one
refers to, :class:`ParsedFunction` holds them with the tree, and :func:`env_is_current`
(on :func:`free_name_sources`) checks on each call that the code, the defaults and every
free name are still the ones parsed."""

from __future__ import annotations

import ast
import builtins
import inspect
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...errors import SourceLocator, UnsupportedSyntaxError
from ..astwalk import nodes


class ParsedFunction:
    """A user function, parsed, with every free name resolved.

    It refers to the function weakly (srcgrad's cache keeps what it made for a function
    while the function lives, and must not keep the function alive), and records what
    the code was made from: ``code`` (``func.__code__``), ``defaults`` (its
    ``__defaults__`` and ``__kwdefaults__``) and ``env``.

    Between derivations (see :meth:`release`) the functions among its free names are held
    weakly too: a recursive closure's name for itself, or two closures that call each
    other, would otherwise keep it alive through srcgrad's cache. Reading ``env`` gives
    them back; :meth:`env_items` reads it without doing so.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        tree: ast.FunctionDef,
        locator: SourceLocator,
        env: dict[str, Any] | None = None,
    ) -> None:
        self._func = weakref.ref(func)
        self.tree = tree
        self.locator = locator
        self._env: dict[str, Any] = env if env is not None else {}
        self._released: dict[str, weakref.ref] = {}  # names whose functions are held weakly
        self.code = func.__code__
        self.defaults = defaults_of(func)
        self.qualname: str = func.__qualname__
        self.module: str | None = func.__module__
        #: the factories whose closures normalize wrote out in the function (their code
        #: and free names are checked with its own), and the names of ``env`` bound for
        #: them (read from their modules, not from the function's: see ``factories``)
        self.factories: list[ParsedFunction] = []
        self.borrowed: set[str] = set()

    @property
    def func(self) -> Callable[..., Any]:
        """The function (alive while anyone but srcgrad holds it)."""
        func = self._func()
        if func is None:
            raise ReferenceError(f"{self.qualname!r} was freed")
        return func

    @property
    def env(self) -> dict[str, Any]:
        """Every free name and the object it was resolved to (for a derivation: functions
        held weakly since :meth:`release` are held again)."""
        for name, ref in self._released.items():
            value = ref()
            self._env[name] = value if value is not None else _FREED
        self._released = {}
        return self._env

    @env.setter
    def env(self, env: dict[str, Any]) -> None:
        self._env, self._released = env, {}

    def env_items(self) -> Iterator[tuple[str, Any]]:
        """``env.items()``, without holding its functions again (for checks)."""
        for name, value in self._env.items():
            ref = self._released.get(name)
            yield name, (value if ref is None else _alive(ref))

    def release(self) -> None:
        """Hold the Python functions among the free names weakly until ``env`` is read
        again (the code made from them is finished)."""
        for name, value in self._env.items():
            if inspect.isfunction(value):
                self._released[name] = weakref.ref(value)
                self._env[name] = _FREED
        for factory in self.factories:
            factory.release()

    @property
    def name(self) -> str:
        return self.tree.name

    @property
    def params(self) -> list[str]:
        args = self.tree.args  # (in the signature's order: *args, then keyword-only ones)
        star = [args.vararg] if args.vararg else []
        keywords = [args.kwarg] if args.kwarg else []  # (refused but in the entry point)
        return [a.arg for a in (*args.posonlyargs, *args.args, *star, *args.kwonlyargs, *keywords)]


#: what ``env`` holds for a function held weakly (or freed): never any name's object
_FREED = object()


def _alive(ref: weakref.ref) -> Any:
    value = ref()
    return value if value is not None else _FREED


def env_is_current(parsed: ParsedFunction) -> bool:
    """Whether the function's code and default arguments are the ones parsed, and every
    free name still refers to the object it was resolved to.

    Python looks globals and closure cells up at call time, and defaults at each
    call; generated code binds them when it is made. Checking identity on each call
    keeps the two in step: a rebound global or new ``__defaults__`` makes the caller
    generate the code again.
    """
    func = parsed._func()
    if func is None or func.__code__ is not parsed.code:
        return False
    if func.__defaults__ is not parsed.defaults[0] or func.__kwdefaults__ is not parsed.defaults[1]:
        return False
    if not all(env_is_current(factory) for factory in parsed.factories):
        return False
    return sources_current(*free_name_sources(parsed))


def defaults_of(func: Any) -> tuple[Any, Any]:
    """What a call of ``func`` fills missing arguments from: its ``__defaults__`` and
    ``__kwdefaults__`` (compared by identity: assigning either makes a new object)."""
    return func.__defaults__, func.__kwdefaults__


def sources_current(
    cells: Iterable[tuple[Any, Any]], names: Iterable[tuple[dict, str, Any]]
) -> bool:
    """Whether each closure cell and namespace of :func:`free_name_sources` still holds
    the object recorded beside it."""
    for cell, value in cells:
        try:
            if cell.cell_contents is not value:
                return False
        except ValueError:  # (emptied)
            return False
    for namespace, name, value in names:
        if namespace.get(name, UNBOUND) is not value:
            return False
    return True


def free_name_sources(
    parsed: ParsedFunction,
) -> tuple[list[tuple[Any, Any]], list[tuple[dict, str, Any]]]:
    """Where the function reads each free name from when it runs, with the object the
    name was resolved to: ``(cell, object)`` for a closure variable, ``(namespace,
    name, object)`` for a global, and for a builtin two of those: its module's globals
    must not hold the name (``UNBOUND``), and builtins must hold the object. (The names
    bound for a factory, ``borrowed``, are the factory's: checked with it.)"""
    func = parsed.func
    closure = dict(zip(parsed.code.co_freevars, func.__closure__ or ()))
    globals_ = func.__globals__
    cells, names = [], []
    for name, value in parsed.env_items():
        if name in parsed.borrowed:
            continue
        if name in closure:
            cells.append((closure[name], value))
        elif name in globals_:
            names.append((globals_, name, value))
        else:
            names.append((globals_, name, UNBOUND))
            names.append((builtins.__dict__, name, value))
    return cells, names


#: what a namespace that must not hold a name is checked against (``.get(name, UNBOUND)``)
UNBOUND = object()


def _local_names(tree: ast.FunctionDef) -> set[str]:
    local = {a.arg for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs}
    for extra in (tree.args.vararg, tree.args.kwarg):
        if extra is not None:
            local.add(extra.arg)
    for node in nodes(tree):
        if node is tree:
            continue  # the function's own name is not a local: it may call itself
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            local.add(node.id)
        elif isinstance(node, ast.arg):  # parameters of nested functions and lambdas
            local.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(node.name)
        elif isinstance(node, ast.alias):  # import numpy as np, inside the function
            local.add(node.asname or node.name.split(".")[0])
    return local


def _resolve(
    func: Callable[..., Any], tree: ast.FunctionDef, locator: SourceLocator
) -> dict[str, Any]:
    local = _local_names(tree)
    closure = {}
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                pass
    env: dict[str, Any] = {}
    # (the body's names only: default values and annotations were evaluated where the
    # function was defined, and srcgrad reads defaults from __defaults__)
    body = ast.Module(body=tree.body, type_ignores=[])
    for node in ast.walk(body):  # (in order: the first found is reported)
        if not isinstance(node, ast.Name) or node.id in local or node.id in env:
            continue
        name = node.id
        if name in closure:
            env[name] = closure[name]
        elif name in func.__globals__:
            env[name] = func.__globals__[name]
        elif hasattr(builtins, name):
            env[name] = getattr(builtins, name)
        else:
            raise locator.error(
                UnsupportedSyntaxError,
                node,
                f"name {name!r} is not defined where {func.__qualname__!r} was defined; "
                "define it at module level or pass it as an argument.",
            )
    return env
