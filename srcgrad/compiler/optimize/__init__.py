"""Stage 5, optimize: passes that make generated code as short as a careful
person's, without changing what it computes.

In and out: a generated ``ast.FunctionDef`` (straight-line code, ifs and loops).
Each pass is a function ``body -> (body, changed)``; :func:`optimize` runs
them to a fixed point:

- :func:`fold_first_accumulation`: ``v = zeros_like(x) ... v = v + c``
  becomes ``v = c`` (nothing reads ``v`` in between);
- :func:`sink_zero_starts`: ``v = zeros_like(x)`` before an ``if`` whose two branches
  each first accumulate into ``v`` moves into both (where the fold above applies);
- :func:`propagate_copies`: ``a = b`` or ``a = 1.0`` is substituted into
  the later uses of ``a``, or renames the single definition of ``b``;
- :func:`double_repeated_terms`: ``v = e; v = v + e`` is ``v = e * 2``;
- :func:`subtract_negated_start`: ``v = -a; v = v + b`` is ``v = b - a``;
- :func:`reuse_computed_values`: ``np.cos(x)`` in an adjoint is ``c`` where the primal
  has ``c = np.cos(x)`` and neither name is given another value;
- :func:`simplify`: ``g * 1.0 is ``g``, ``-(-g)`` is ``g``, ``2 - 1`` is
  ``1``, ``x ** 1`` is ``x``, ``a + -b`` is ``a - b``; in a chain of products the
  powers of two and signs merge into one constant (``g / (2 * u) * 2`` is ``g / u``);
  never where the fold would make a value share memory with an array the code later
  writes into in place (:func:`written_in_place`);
- :func:`eliminate_dead_code`: assignments nobody reads, and comments whose
  block became empty, go;
- :func:`drop_read_only_copies` (after the loop, once): ``a = e.copy()`` is ``a = e``
  where nothing writes into the memory of either while ``a`` is read, and ``a``'s goes
  nowhere else;
- :func:`drop_fresh_copies` (after the loop, once): ``v = v.copy()`` goes where ``v``
  was just given the result of arithmetic;
- :func:`guards_as_flags`, :func:`restore_breaks`, :func:`restore_while_tests` (after
  the loop, once): a break guard's test the adjoint restores (``t = not broke``) is the
  flag itself; a ``break`` flag is a ``break`` again (the flag stays where the adjoint
  reads it), and ``t = e; while t: ...; t = e`` is ``while e:``;
- :func:`inline_temporaries` (after the loop, once): a temporary read once is written
  into the expression that reads it, where the line stays short, so the
  primal reads like the user's code again: ``t1 = x @ w; t2 = np.exp(-t1)``
  becomes ``t2 = np.exp(-(x @ w))``;
- :func:`accumulate_in_place` (after the loop, once): ``v = v + e`` is ``v += e`` (and
  ``v - e`` is ``v -= e``) where no one else can see ``v``'s array (and ``x_bar +=
  np.full_like(x, g)`` is ``x_bar += g``);
- :func:`reuse_dead_buffers` (last, once): ``v = t * a`` is ``t *= a`` with ``t`` named
  ``v``, where ``t``'s array is one no one else sees, read last there, and ``a`` provably
  neither broadcasts into it nor widens its dtype.

The two passes that write into arrays in place (:data:`IN_PLACE`) run for numpy's
arrays only (``optimize(..., in_place=False)`` for dask and cupy code: a numpy array
beside a dask one cannot take its values in place).
"""

from __future__ import annotations

import ast
from typing import Any

from .buffers import reuse_dead_buffers
from .copies import propagate_copies
from .dataflow import (
    Context,
    _local,
    blocks,
    own_reads,
    own_writes,
    reads,
    shares,
    target,
    writes,
    written_in_place,
)
from .dead_code import eliminate_dead_code
from .fold_first import fold_first_accumulation
from .folding import simplify
from .fresh_copies import drop_fresh_copies
from .in_place import accumulate_in_place
from .inlining import LINE_LIMIT, inline_temporaries
from .loop_exits import guards_as_flags, restore_breaks, restore_while_tests
from .negated_start import subtract_negated_start
from .read_only_copies import drop_read_only_copies
from .repeated_terms import double_repeated_terms
from .reuse import reuse_computed_values
from .self_assignments import drop_self_assignments
from .sink_zeros import sink_zero_starts

__all__ = [
    "optimize",
    "Context",
    "FIXED_POINT",
    "AFTER",
    "LINE_LIMIT",
    "accumulate_in_place",
    "blocks",
    "double_repeated_terms",
    "drop_fresh_copies",
    "drop_read_only_copies",
    "drop_self_assignments",
    "eliminate_dead_code",
    "fold_first_accumulation",
    "guards_as_flags",
    "inline_temporaries",
    "own_reads",
    "own_writes",
    "propagate_copies",
    "reads",
    "restore_breaks",
    "restore_while_tests",
    "reuse_computed_values",
    "reuse_dead_buffers",
    "shares",
    "simplify",
    "sink_zero_starts",
    "subtract_negated_start",
    "target",
    "writes",
    "written_in_place",
]


def optimize(
    func: ast.FunctionDef,
    temporaries: set[str] = frozenset(),
    keep: set[str] = frozenset(),
    helpers: dict[str, str] | None = None,
    xp: str | None = None,
    floats: frozenset[str] = frozenset(),
    in_place: bool = True,
    not_in_place: frozenset[str] = frozenset(),
    primal_of: dict[str, str] | None = None,
    not_floats: frozenset[str] = frozenset(),
) -> ast.FunctionDef:
    """Run every pass until none changes anything, then inline ``temporaries``.

    Names in ``keep`` (the user's variables) are never substituted away. ``helpers``:
    the names the code calls srcgrad's runtime helpers by; ``xp``: the array module's;
    ``floats``: the parameters whose arguments are floats; ``in_place``: whether the
    passes that write into arrays in place run (:data:`IN_PLACE`; numpy's arrays only: a
    numpy array cannot take a dask array's values in place); ``not_in_place``: names never
    written into in place (they may hold complex values, or integers); ``primal_of``: each tangent's
    and adjoint's primal; ``not_floats``: names a comparison may give, and arrays not
    proven floats (``-1.0 * mask`` is not ``-mask``, which numpy refuses).
    """
    _local.memo = {}
    _local.settled = {}  # statements a pass leaves as they are, by id (see dataflow.settle)
    try:
        return _optimize(
            func,
            temporaries,
            keep,
            helpers,
            xp,
            floats,
            in_place,
            not_in_place,
            primal_of or {},
            not_floats,
        )
    finally:
        _local.memo = None
        _local.settled = None


def _optimize(
    func: ast.FunctionDef,
    temporaries: set[str],
    keep: set[str],
    helpers: dict[str, str] | None,
    xp: str | None,
    floats: frozenset[str],
    in_place: bool,
    not_in_place: frozenset[str],
    primal_of: dict[str, str],
    not_floats: frozenset[str],
) -> ast.FunctionDef:
    arguments = frozenset(a.arg for a in func.args.args)
    ctx = Context(
        params=arguments | frozenset(keep),
        arguments=arguments,
        xp=xp,
        temporaries=frozenset(temporaries),
        helpers=helpers,
        floats=frozenset(floats) & arguments,
        not_in_place=frozenset(not_in_place),
        primal_of=primal_of,
        not_floats=frozenset(not_floats),
    )
    body = list(func.body)
    # a pass that changed nothing is not run again until another pass changes something
    # (each is a function of the code alone): the last round only runs the passes that
    # have not yet seen the last change
    version = 0
    clean: dict[Any, int] = {}  # pass -> the version it last changed nothing at
    for _ in range(100):
        changed = False
        for step in FIXED_POINT:
            if clean.get(step) == version:
                continue
            body, did = step(body, ctx)
            if did:
                version += 1
                changed = True
            else:
                clean[step] = version
        if not changed:
            break
    for step in AFTER:
        if in_place or step not in IN_PLACE:
            body, _ = step(body, ctx)
    func.body = body
    return func


#: the passes run in turn until none changes anything
FIXED_POINT = (
    sink_zero_starts,
    fold_first_accumulation,
    propagate_copies,
    double_repeated_terms,
    subtract_negated_start,
    reuse_computed_values,
    drop_self_assignments,
    simplify,
    eliminate_dead_code,
)
#: then each once, in order (inlining makes more of the others' patterns)
AFTER = (
    inline_temporaries,
    guards_as_flags,
    restore_breaks,
    restore_while_tests,
    simplify,
    subtract_negated_start,
    accumulate_in_place,
    drop_read_only_copies,
    drop_fresh_copies,
    reuse_dead_buffers,
)
#: the passes of AFTER that write into arrays in place
IN_PLACE = (accumulate_in_place, reuse_dead_buffers)
