"""The driver: the stages in order, and the source after each one.

::

    parse -> normalize -> analyze -> forward | reverse -> optimize -> emit

:func:`front` runs the stages that do not depend on the call (parse,
normalize); :func:`derive` runs the rest for one kind of derivative, one
set of ``wrt`` parameters, argument ranks and backend. :func:`stages`
returns the source after every stage, for debugging and tests.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import functools
import gc
import math
from collections.abc import Callable, Iterator
from typing import Any

from ..backends import NUMPY, Backend
from ..numba_fusion import fuse
from .analyze import analyze
from .analyze.checks import check_facts
from .analyze.complex_values import complex_calls
from .analyze.facts import Facts
from .analyze.records import check_dataclass_uses, record_fields
from .astwalk import nodes, stored, unparse
from .derived import RUNS, Derived, PendingJVP, _count, _emitted  # noqa: F401  (RUNS: tests')
from .emit import unit_tangent_wrapper  # noqa: F401  (for nesting.as_function)
from .normalize.lower import (
    Normalized,
    dict_keys,
    normalize,
)
from .optimize import optimize
from .parse import parse
from .transform.builder import HELPERS, Builder
from .transform.callees import Callees
from .transform.forward import Lane, forward, lanes_of
from .transform.naming import Namer
from .transform.numba_ranges import numba_ranges
from .transform.own_pair import entry_point
from .transform.reverse import reverse
from .transform.reverse.split import split

#: the kinds of derivative, and the transform that makes each
KINDS = ("jvp", "grad", "value_and_grad", "vjp")


def front(
    func: Callable[..., Any], trace: dict[str, str] | None = None, entry: bool = True
) -> Normalized:
    """Parse and normalize: the stages that depend on the function alone. ``entry``: the
    function differentiated (not one it calls): its writes into its arguments go into
    copies (``normalize.arguments``)."""
    with _collector_paused():
        _count("parse")
        parsed = parse(func)
        if trace is not None:
            trace["parse"] = ast.unparse(parsed.tree)
        _count("normalize")
        norm = normalize(parsed, entry=entry)
        if trace is not None:
            trace["normalize"] = ast.unparse(norm.tree)
        return norm


class Program:
    """Every function one derivative needs: its entry point, and the derivative of
    each user function it calls (a jvp in forward mode; an augmented primal
    ``f_fwd`` and an adjoint ``f_bwd`` in reverse mode), made once each, so
    recursion and mutual recursion call back into the same generated code."""

    def __init__(self, namer: Namer, xp: str, math_name: str, helpers: dict[str, str]) -> None:
        self.namer = namer  # names at module level
        self.xp = xp
        self.math = math_name
        self.helpers = helpers
        self.functions: list[ast.FunctionDef] = []
        self.env: dict[str, Any] = {}
        self.callees = Callees(namer)  # what the transforms call, to generate
        self.fronts: dict[Any, Normalized] = {}
        #: each callee as its derivatives read it: its free names renamed where they clash
        self.reading: dict[Any, Normalized] = {}
        #: the generated functions whose body runs under ``np.errstate``, with its settings
        self.errstate: dict[str, dict[str, str]] = {}
        #: the emission profile of every function of the module (``Builder.profile``)
        self.profile: str | None = None
        #: whether the optimizer may write into arrays in place (``Builder.in_place``)
        self.in_place = True

    def add_env(self, env: dict[str, Any], where: Normalized) -> dict[str, str]:
        """Bind the free names of ``where`` in the module; a name the module already binds
        to another object (the closure variable ``fn`` of two functions made by one
        decorator, say) is bound under a fresh name. Returns those renames."""
        renames: dict[str, str] = {}
        for name, value in env.items():
            if name in self.env and self.env[name] is not value:
                new = self.namer.fresh(name)
                while new in self.env or new in where.namer.taken:
                    new = self.namer.fresh(name)
                renames[name] = name = new
            self.env[name] = value
            self.namer.reserve(name)
        return renames

    def build(self) -> None:
        """Generate every requested callee derivative (requests may add more)."""
        while self.callees.queue:
            func, kind, wrt, ranks, floats, statics = self.callees.queue.pop(0)
            if func not in self.fronts:
                self.fronts[func] = front(func, entry=False)
                renames = self.add_env(self.fronts[func].parsed.env, self.fronts[func])
                self.reading[func] = _renamed(self.fronts[func], renames)
            norm = self.reading[func]
            names = self.callees.names[(func, kind, wrt, ranks, floats, statics)]
            ranks_by_name = dict(zip([a.arg for a in norm.tree.args.args], ranks))
            _count("analyze")
            mode = "jvp" if kind == "jvp" else "vjp"
            lanes = wrt if wrt and isinstance(wrt[0], Lane) else None
            if lanes is not None:  # (a vector JVP: each lane's seeds, in order of parameters)
                seeded = {p for lane in lanes for p in lane.seeds}
                wrt = tuple(a.arg for a in norm.tree.args.args if a.arg in seeded)
            norm, facts = analyzed(
                norm, list(wrt), ranks_by_name, mode, floats=floats, statics=dict(statics)
            )
            builder = self.builder(norm, facts)
            _count("transform")
            if kind == "jvp":
                fused = forward(norm, facts, list(wrt), builder, lanes)
            else:
                fused = reverse(norm, facts, list(wrt), builder, "split")
            fused = _optimize(fused, norm, facts, builder)
            if kind == "jvp":
                fused.name = names[0]
                made = [fused]
            else:
                made = split(fused, names, facts.returned, norm.tree.name)
            self.functions.extend(made)
            if norm.errstate:
                self.errstate.update((f.name, norm.errstate) for f in made)

    def builder(self, norm: Normalized, facts: Facts) -> Builder:
        namer = copy.deepcopy(norm.namer)
        for name in (self.xp, self.math, *self.helpers.values()):
            namer.reserve(name)
        builder = Builder(namer, self.xp, facts, self.math, helpers=self.helpers)
        builder.callees = self.callees
        builder.profile = self.profile
        builder.in_place = self.in_place
        return builder


def analyzed(
    norm: Normalized,
    wrt: list[str],
    ranks: dict[str, Any],
    mode: str,
    wide: dict[str, tuple[bool, ...]] | None = None,
    floats: frozenset[str] = frozenset(),
    statics: dict[str, Any] | None = None,
    complexes: frozenset[str] = frozenset(),
) -> tuple[Normalized, Facts]:
    """Analyze ``norm``, lowered again where a loop iterates a dict: normalize reads
    what a loop iterates by position until the structures of the arguments (``ranks``:
    a dict parameter's) or the analysis (a dict read out of a list of them) show it is a
    dict, whose loops then run over its keys (``Normalized.with_dict_keys``)."""
    found: dict[tuple[int, int, int, int], tuple] = dict(norm.dicts)
    for name, where in [*norm.iterated.items(), *norm.keyed.items()]:
        keys = dict_keys(ranks.get(name))
        if keys is not None:
            found[where] = keys
    fields = dict(norm.fields)
    fields.update(record_fields(norm, ranks))
    while True:
        if found != norm.dicts or fields != norm.fields:
            _count("normalize")
            norm = norm.with_dict_keys(dict(found), dict(fields))
        if norm.waiting is not None:  # (a comprehension over a parameter, not a dict)
            raise norm.waiting
        facts = analyze(
            norm,
            wrt,
            ranks,
            mode=mode,
            wide=wide or {},
            check=False,
            floats=floats,
            statics=statics,
            complexes=complexes,
        )
        calls = complex_calls(norm, facts)
        if calls - norm.written_out:  # (functions of the user's given complex numbers)
            _count("normalize")
            norm = norm.with_written_out(norm.written_out | calls)
            continue
        more = {
            where: keys
            for name, where in norm.iterated.items()
            if (keys := dict_keys(facts.trees.get(name))) is not None and where not in found
        }
        more_fields = {w: f for w, f in record_fields(norm, facts.trees).items() if w not in fields}
        if not more and not more_fields:
            check_dataclass_uses(norm, facts)
            check_facts(norm, facts)  # (of the lowering differentiated, not the others)
            return norm, facts
        found.update(more)
        fields.update(more_fields)


def _renamed(norm: Normalized, renames: dict[str, str]) -> Normalized:
    """``norm`` reading its free names by the names in ``renames`` (its tree in place, and a
    copy of its parsed function with its ``env`` renamed: the original, which the cache
    checks, keeps the names the function has)."""
    if not renames:
        return norm
    for node in nodes(norm.tree):  # (a free name is never a local of the function)
        if isinstance(node, ast.Name) and node.id in renames:
            node.id = renames[node.id]
    for new in renames.values():
        norm.namer.reserve(new)
    parsed = copy.copy(norm.parsed)
    parsed.env = {renames.get(name, name): value for name, value in norm.parsed.env.items()}
    return dataclasses.replace(norm, parsed=parsed)


def _not_floats(facts: Facts) -> frozenset[str]:
    """The names some definition of which is a comparison or a ``not`` (bools), and the
    arrays not proven floats (``(1.0 * k) ** -1`` is not ``k ** -1`` for integers ``k``,
    which numpy refuses): ``1.0 * v`` is not ``v`` for those."""
    bools = {
        name
        for name, defs in facts.definitions.items()
        if any(
            (op := facts.ops.get(stmt)) is not None and op.key in ("compare", ast.Not)
            for stmt, _ in defs
        )
    }
    floats = facts.proven_floats
    names = {a.arg for a in facts.params} | set(facts.definitions)
    arrays = {n for n in names - floats if (facts.shape(ast.Name(id=n)).rank or 0) >= 1}
    return frozenset(bools | arrays)


def _optimize(
    func: ast.FunctionDef, norm: Normalized, facts: Facts, builder: Builder
) -> ast.FunctionDef:
    _count("optimize")
    temporaries = {
        n for n in _assigned(func) if n in norm.temps or builder.primal_of.get(n) in norm.temps
    }
    user_names = {n for n in facts.definitions if n not in norm.temps}
    floats = frozenset(facts.floats)
    # (a complex array changed in place is not differentiated again; an integer zero
    # made like a name that a cast gives integers on some path takes no float in place)
    kept = set(facts.complex) | facts.maybe_integer
    not_in_place = frozenset(kept) | {n for n, v in builder.primal_of.items() if v in kept}
    func = optimize(
        func,
        temporaries,
        user_names,
        builder.helpers,
        builder.xp,
        floats,
        builder.in_place,
        not_in_place,
        builder.primal_of,
        _not_floats(facts),
    )
    if builder.profile == "numba":  # (numba has no item or slice of a range; fusion)
        func = fuse(numba_ranges(func, builder), facts, builder)
    return func


def derive(
    norm: Normalized,
    kind: str,
    wrt: list[str],
    ranks: dict[str, int | None] | None = None,
    backend: Backend = NUMPY,
    trace: dict[str, str] | None = None,
    wide: dict[str, tuple[bool, ...]] | None = None,
    floats: frozenset[str] = frozenset(),
    statics: dict[str, Any] | None = None,
    complexes: frozenset[str] = frozenset(),
    counts: tuple[int, ...] | None = None,
    pending: bool = False,
    jit: str | None = None,
) -> Derived | PendingJVP:
    """Analyze, transform, optimize and emit one derivative of ``norm``. ``wide``: for
    array parameters, which axes of their arguments are not of length 1 (shapes the
    code may rely on); ``floats``: the parameters whose arguments are floats;
    ``statics``: the parameters whose arguments are functions, with those functions;
    ``complexes``: those whose arguments are complex. ``counts`` (a jvp only): a vector
    JVP carrying that many directions for each wrt parameter (see
    :meth:`Derived.with_lanes`); a JVP made without it can make those. ``pending`` (a
    jvp only): a :class:`PendingJVP`, made on first use. ``jit`` (``compile=``): None for plain
    Python; ``"numba"`` or ``"numba-or-python"`` for code in the numba profile, compiled by
    ``numba.njit`` (see :mod:`srcgrad.compiled`): a construct it refuses is a
    ``CompileError`` here, or, for ``"numba"``, on the first call."""
    assert kind in KINDS, kind
    if pending:
        assert kind == "jvp" and counts is None
        remake = _remake(norm, kind, wrt, ranks, backend, wide, floats, statics, complexes, jit)
        return PendingJVP(functools.partial(remake, None), remake, tuple(norm.copied))
    lanes = None if counts is None else lanes_of(wrt, counts)
    with _collector_paused():
        _count("analyze")
        mode = "jvp" if kind == "jvp" else "vjp"
        norm, facts = analyzed(norm, wrt, ranks or {}, mode, wide or {}, floats, statics, complexes)
        if trace is not None:
            trace["analyze"] = _describe(facts)
        if kind not in ("vjp", "jvp"):
            _check_scalar_output(norm, facts)
        program, builder = _program(norm, facts)
        program.profile = builder.profile = None if jit is None else "numba"
        program.in_place = builder.in_place = backend.name == "numpy"
        func = _transformed(norm, facts, kind, wrt, builder, lanes, trace)
        if norm.errstate:
            program.errstate[func.name] = norm.errstate
        program.build()
        if lanes is None:  # (a vector JVP calls its callees' vector JVPs as they are)
            kinds = (ranks or {}, floats, statics or {}, complexes)
            own = entry_point(norm, facts, kind, wrt, func, program.functions, builder, kinds)
            if own is not None:  # (a recursive function: a call of its own pair)
                func, program.functions = own
                if trace is not None:
                    trace["optimize"] = unparse(func)
        derived = _emitted(norm, kind, func, program, builder, backend, trace, lanes, jit)
        derived.copied = tuple(norm.copied)
        if kind == "jvp" and counts is None:
            derived.remake = _remake(
                norm, kind, wrt, ranks, backend, wide, floats, statics, complexes, jit
            )
        return derived


def _remake(
    norm: Normalized,
    kind: str,
    wrt: list[str],
    ranks: dict[str, int | None] | None,
    backend: Backend,
    wide: dict[str, tuple[bool, ...]] | None,
    floats: frozenset[str],
    statics: dict[str, Any] | None,
    complexes: frozenset[str],
    jit: str | None,
) -> Callable[..., Derived | PendingJVP]:
    """``derive`` of a JVP with these arguments, given ``counts`` (None: the plain JVP):
    how a JVP makes its vector JVPs (``Derived.remake``)."""
    return functools.partial(
        derive,
        norm,
        kind,
        wrt,
        ranks,
        backend,
        None,
        wide,
        floats,
        statics,
        complexes,
        jit=jit,
    )


def _transformed(
    norm: Normalized,
    facts: Facts,
    kind: str,
    wrt: list[str],
    builder: Builder,
    lanes: tuple[Lane, ...] | None,
    trace: dict[str, str] | None,
) -> ast.FunctionDef:
    """The entry point's derivative: transformed (forward or reverse mode), then
    optimized."""
    _count("transform")
    if kind == "jvp":
        func = forward(norm, facts, wrt, builder, lanes)
    else:
        func = reverse(norm, facts, wrt, builder, kind)
    if trace is not None:
        trace["transform"] = unparse(func)
    func = _optimize(func, norm, facts, builder)
    if trace is not None:
        trace["optimize"] = unparse(func)
    return func


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a derivative is made: the stages allocate
    many small tree nodes, which set off full collections that walk every object of the
    process (a fifth to a third of the time, measured); what they leave is collected
    when it resumes."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _check_scalar_output(norm: Normalized, facts: Facts) -> None:
    """A gradient needs a scalar value: not a tuple, not an array of known rank > 0."""
    if _returns_tuple(facts):
        raise ValueError(
            f"grad requires {norm.tree.name!r} to return a scalar, but it returns a tuple; to "
            "return auxiliary values with it, `return value, aux` and pass has_aux=True (grad "
            "then returns (gradient, aux)); for a gradient of each element, use srcgrad.vjp or "
            "srcgrad.jacobian"
        )
    if facts.shape(facts.returned).rank not in (0, None):
        raise ValueError(
            f"grad requires {norm.tree.name!r} to return a scalar, but it returns an array of "
            f"rank {facts.shape(facts.returned).rank}; use srcgrad.vjp (or srcgrad.jacobian) for "
            "array outputs, or reduce the output, e.g. with np.sum"
        )


def _program(norm: Normalized, facts: Facts) -> tuple[Program, Builder]:
    """The module's names (the array module's, ``math``'s, the runtime helpers') and the
    builder of the entry point's derivative, which asks the program for its callees."""
    namer = copy.deepcopy(norm.namer)
    math_name = next((n for n, v in norm.parsed.env.items() if v is math), None) or namer.fresh(
        "math"
    )
    xp = _array_module_name(norm, namer)
    env = norm.parsed.env
    helpers = {  # generated code differentiated again keeps its helpers' names
        h: h if getattr(env.get(h), "__srcgrad_helper__", None) == h else namer.fresh(h)
        for h in HELPERS
    }
    program = Program(namer, xp, math_name, helpers)
    program.add_env(norm.parsed.env, norm)
    builder = Builder(namer, xp, facts, math_name, helpers=helpers)
    builder.callees = program.callees
    return program, builder


def stages(
    func: Callable[..., Any], kind: str = "grad", wrt: list[str] | None = None, **options: Any
) -> dict[str, str]:
    """The source after each stage, in order, for debugging and tests."""
    trace: dict[str, str] = {}
    norm = front(func, trace)
    derive(norm, kind, wrt or [norm.tree.args.args[0].arg], trace=trace, **options)
    return trace


def _returns_tuple(facts: Facts) -> bool:
    """Whether the function returns a tuple or list display (``return a, b``)."""
    returned = facts.returned
    if not isinstance(returned, ast.Name):
        return False
    defs = facts.definitions.get(returned.id, [])
    return bool(defs) and all(
        isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.Tuple, ast.List))
        for stmt, _ in defs
    )


def _assigned(func: ast.FunctionDef) -> set[str]:
    return set(stored(func))


def _array_module_name(norm: Normalized, namer: Any) -> str:
    import numpy as np

    for name, value in norm.parsed.env.items():
        if value is np:
            return name
    return namer.fresh("np")


def _describe(facts: Facts) -> str:
    lines = [f"active: {', '.join(sorted(facts.active)) or '(none)'}"]
    for name, shape in facts.shapes.items():
        if name in facts.varied or name in facts.useful:
            key = "{" + ", ".join(sorted(shape.key)) + "}"
            lines.append(f"{name}: rank {shape.rank}, broadcast key {key}")
    return "\n".join(lines)
