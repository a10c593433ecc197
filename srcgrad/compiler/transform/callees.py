"""The derivatives of the user's functions that a transform calls: a transform asks
:class:`Callees` for the names of ``f``'s derivative (a jvp in forward mode; an augmented
primal ``f_fwd`` and an adjoint ``f_bwd`` in reverse mode) and emits calls to them; the
driver then generates every derivative asked for (:attr:`Callees.queue`), whose own
requests may add more. Each is made once, so recursion and mutual recursion call back
into the same generated code."""

from __future__ import annotations

from typing import Any

from .naming import Namer

#: how many argument structures one function's derivative is specialized to in one program
#: before further calls get code for arguments of unknown structure (see Callees.request)
SPECIALIZATIONS = 8


class Callees:
    """The callee derivatives one generated module needs, by (function, kind, wrt,
    argument ranks), and the queue of those not yet generated."""

    def __init__(self, namer: Namer) -> None:
        self.namer = namer  # names at module level
        self.names: dict[tuple, tuple[str, ...]] = {}
        self.queue: list[tuple[Any, str, tuple[str, ...], tuple, frozenset[str], tuple]] = []
        #: the argument ranks each (function, kind, wrt) has been specialized to
        self.specialized: dict[tuple, list[tuple]] = {}

    def request(
        self,
        func: Any,
        kind: str,
        wrt: tuple[str, ...],
        ranks: tuple,
        floats: frozenset[str] = frozenset(),
        statics: tuple = (),
    ) -> tuple[str, ...]:
        """The names of ``func``'s derivative of ``kind`` (``"jvp"`` or ``"split"``) for
        arguments of these ``ranks`` (structures, for lists, tuples and dicts), the
        parameters in ``floats`` given floats, those in ``statics`` (pairs of a parameter
        and a function) given those functions (the derivative calls theirs).

        A recursion may call a function with ever new argument structures (a walk down
        an expression tree of nested tuples, a list grown by one per call): after
        ``SPECIALIZATIONS`` of one function, each new request gets code for arguments
        whose ranks are unknown where the earlier ones differ, and as that only ever
        forgets, the requests end. A rank below zero (an index into a number, on a path
        that cannot run) is unknown too.
        """
        ranks = tuple(possible(r) for r in ranks)
        family = self.specialized.setdefault((func, kind, wrt), [])
        if (func, kind, wrt, ranks, floats, statics) not in self.names and len(
            family
        ) >= SPECIALIZATIONS:
            ranks = tuple(
                r if all(seen[i] == r for seen in family) else None for i, r in enumerate(ranks)
            )
            floats = frozenset()  # (forgets that too: the requests end)
        key = (func, kind, wrt, ranks, floats, statics)
        if key not in self.names:
            family.append(ranks)
            base = func.__name__
            if base.startswith("__") and base.endswith("__"):  # Scaled.__call__: Scaled_call
                owner = func.__qualname__.rpartition(".")[0].rpartition(".")[2]
                base = f"{owner}_{base.strip('_')}" if owner.isidentifier() else base.strip("_")
            if kind == "jvp":
                self.names[key] = (self.namer.fresh(f"jvp_{base}"),)
            else:
                self.names[key] = (self.namer.fresh(f"{base}_fwd"), self.namer.fresh(f"{base}_bwd"))
            self.queue.append(key)
        return self.names[key]


def possible(rank: Any) -> Any:
    """``rank`` (a rank, None, or a structure of them), with impossible ranks unknown."""
    if isinstance(rank, int) and not isinstance(rank, bool):
        return rank if rank >= 0 else None
    if isinstance(rank, tuple):
        return tuple(possible(r) for r in rank)
    return rank
