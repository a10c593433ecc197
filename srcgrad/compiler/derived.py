"""What the driver makes: :class:`Derived`, one generated derivative (and
:class:`PendingJVP`, one made on first use), and ``_emitted``, the last step: the module
of a derivative and its callees' derivatives rendered, loaded and compiled (by numba too,
for ``compile=``). ``RUNS`` counts the stages run (the driver's, for tests of the
cache)."""

from __future__ import annotations

import ast
import functools
import linecache
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..backends import Backend
from ..compiled import Jitted, refuse
from . import emit as emit_stage
from .analyze.facts import Facts
from .normalize.lower import Normalized
from .parse import ParsedFunction, env_is_current
from .transform.builder import Builder
from .transform.forward import Lane

if TYPE_CHECKING:
    from .driver import Program

#: how many times each stage has run, for tests of the cache
RUNS: dict[str, int] = {}

_TITLES = {
    "jvp": "Forward mode (Jacobian-vector product)",
    "grad": "Reverse-mode gradient",
    "value_and_grad": "Reverse-mode value and gradient",
    "vjp": "Reverse mode (vector-Jacobian product)",
}


@dataclass
class Derived:
    """One generated derivative: its module, its entry point, its facts."""

    source: str
    function: Callable[..., Any]
    name: str
    facts: Facts | None  # (None once emitted: the analysis refers to the functions called)
    trace: dict[str, str] = field(default_factory=dict)
    #: the user functions it calls, directly or not: their code and globals are in it too
    callees: tuple[ParsedFunction, ...] = ()
    #: the parameters the function writes into, which the code copies first
    #: (``normalize.arguments``): an argument for one must share no memory with another
    copied: tuple[str, ...] = ()
    #: of a JVP: how to make its vector JVPs (``derive`` with the same arguments, given
    #: ``lanes``), and those made, by the number of directions of each wrt parameter
    remake: Callable[..., Derived] | None = field(default=None, repr=False)
    vectors: dict[tuple[int, ...], Derived] = field(default_factory=dict, repr=False)

    def is_current(self) -> bool:
        """Whether every function it calls still has the code and free names it was
        made from (the entry point's own are checked by the caller's cache)."""
        return all(env_is_current(parsed) for parsed in self.callees)

    def with_lanes(self, counts: tuple[int, ...]) -> Derived:
        """The vector JVP of this JVP's function carrying ``counts[i]`` directions for
        its ``i``-th wrt parameter at once (made on first use): it takes the primal's
        arguments, then each direction's tangent, and returns ``(value, tangent, ...)``,
        one tangent per direction. A direction of a parameter with one element is
        named after it (``x_dot_k``), the others by their index too (``x_dot_w0``)."""
        made = self.vectors.get(counts)
        if made is None or not made.is_current():
            assert self.remake is not None, "with_lanes of a JVP only"
            made = self.vectors[counts] = self.remake(counts)
        return made


class PendingJVP:
    """A JVP whose code is made on first use: ``grad(..., mode="forward")`` of a few
    input elements runs only its vector JVP (:meth:`with_lanes`), which is made without
    the plain one. Reading ``source``, ``function`` or another field of :class:`Derived`
    makes the plain JVP."""

    def __init__(self, make: Callable[[], Derived], remake: Callable[..., Derived], copied: tuple):
        self._make = make
        self._made: Derived | None = None
        self.remake = remake
        self.vectors: dict[tuple[int, ...], Derived] = {}
        self.copied = copied

    def made(self) -> Derived:
        """The plain JVP (made now if not yet)."""
        if self._made is None:
            self._made = self._make()
        return self._made

    def __getattr__(self, name: str) -> Any:  # (source, function, name, facts, callees...)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.made(), name)

    @property
    def callees(self) -> tuple[ParsedFunction, ...] | None:
        """The user functions it calls (its vector JVPs call the same ones); None while
        no code has been made."""
        if self._made is not None:
            return self._made.callees
        return next((vector.callees for vector in self.vectors.values()), None)

    def is_current(self) -> bool:
        """Whether the code made so far still matches the functions it calls (a vector
        JVP checks its own when used)."""
        return self._made is None or self._made.is_current()

    with_lanes = Derived.with_lanes


def _count(stage: str) -> None:
    RUNS[stage] = RUNS.get(stage, 0) + 1


def _emitted(
    norm: Normalized,
    kind: str,
    func: ast.FunctionDef,
    program: Program,
    builder: Builder,
    backend: Backend,
    trace: dict[str, str] | None,
    lanes: tuple[Lane, ...] | None = None,
    jit: str | None = None,
) -> Derived:
    """The module of ``func`` and its callees' derivatives, compiled (by numba too, for
    a ``jit`` option: see :mod:`srcgrad.compiled`)."""
    _count("emit")
    parsed = norm.parsed
    if hasattr(backend.module, "errstate"):  # (dask's array module has none)
        _put_in_errstate([func, *program.functions], program, builder)
    text, bindings = emit_stage.render(
        [func, *program.functions],
        builder,
        program.env,
        backend,
        _title(parsed, kind, lanes),
        user_module=parsed.func.__module__,
    )
    label = f"{kind} of {parsed.func.__qualname__}"
    norms = [norm, *program.fronts.values()]
    if jit is not None:  # (before numba sees it: what the profile knows it refuses)
        refuse(text, builder.helpers, functools.partial(_user_line, text, norms))
    module = emit_stage.load(text, bindings, label)
    for helper, generated in builder.helpers.items():  # their rules, for higher order
        if generated in module.namespace:
            module.namespace[generated].__srcgrad_helper__ = helper
    if trace is not None:
        trace["emit"] = text
    # what srcgrad keeps (the cache, weakly keyed by the function) must not hold the
    # functions themselves: the analysis names every function called (it is not kept), and
    # the parsed functions hold theirs weakly until the next derivation
    for made_from in (norm, *program.fronts.values()):
        made_from.parsed.release()
    function = module.function(func.name)
    if jit is not None:
        function = _jitted(function, func.name, text, bindings, norms, jit)
    return Derived(
        source=text,
        function=function,
        name=func.name,
        facts=None,
        trace=trace or {},
        callees=tuple(n.parsed for f, n in program.fronts.items() if f is not parsed.func),
    )


def _put_in_errstate(functions: list[ast.FunctionDef], program: Program, builder: Builder) -> None:
    """Each of ``functions`` whose user function ran under ``np.errstate`` has its body
    put under it again (``program.errstate``: the settings)."""
    for f in functions:
        if f.name in program.errstate:
            emit_stage.in_errstate(f, program.errstate[f.name], builder.xp)


def _title(parsed: ParsedFunction, kind: str, lanes: tuple[Lane, ...] | None) -> str:
    """The first line of the generated module: what it is, of which function, where."""
    where = f"{parsed.locator.filename}:{parsed.tree.lineno}"
    what = _TITLES[kind] if lanes is None else f"Forward mode ({len(lanes)} directions at once)"
    return f"{what} of {parsed.func.__qualname__} ({where}), generated by srcgrad."


def _jitted(
    function: Callable[..., Any],
    name: str,
    text: str,
    bindings: dict[str, Any],
    norms: list[Normalized],
    jit: str,
) -> Jitted:
    """The loaded entry point ``function`` (``name``) compiled by numba from the
    module's ``text`` (its errors reported at the user's lines; for ``"numba"``,
    strictly)."""
    code = function.__code__.co_filename
    return Jitted(
        compile(text, code, "exec"),
        bindings,
        name,
        function,
        lambda _, lineno: _user_line(text, norms, lineno),
        strict=jit == "numba",
    )


def _user_line(
    text: str, norms: list[Normalized], lineno: int
) -> tuple[str | None, int | None, str | None]:
    """The user's file, line and text that line ``lineno`` of the generated ``text``
    comes from (the user's function's first line where none is found)."""
    from ..origins import _origin  # (origins reads the cache, which imports this module)

    found = _origin(text.splitlines()[:lineno], norms, [n.parsed for n in norms])
    if found is None:
        found = norms[0].parsed.locator.filename, norms[0].parsed.tree.lineno
    filename, line = found
    return filename, line, linecache.getline(filename, line) or None
