"""Analysis: which names may share memory, and the in-place changes srcgrad cannot follow.

In:  a :class:`~srcgrad.compiler.normalize.Normalized` function and its
:class:`~srcgrad.compiler.analyze.facts.Facts` (which names hold lists, ranks).
Out: :class:`Aliases`: for every statement that changes an array or a list in place
(``y[i] = v``, ``xs.append(v)``, and ``x += v``, which normalize spells ``x = x + v``),
the memory each name may refer to just before it; and the problems found there.

Memory is a set of abstract places: one for each parameter (the caller's data, whatever
it holds), one for each global, one for each statement that makes a new array or list.
A name may refer to several (it was given values on several paths, or by a call that may
return any of its arguments). Copies and views share their operand's places (``y = x``,
``x[0:2]``, ``x.T``, ``np.reshape(x, s)``, ``np.asarray(x)``, a user function's result,
anything not known to be new); arithmetic, ufuncs, reductions, ``.copy()`` and array
constructors make new ones. A list holds places too: ``xs[0]`` shares what was put in
``xs``.

numpy changes an array in place for every name that shares it; srcgrad's lowering, and
so its derivative code, gives the written name a new value alone. An in-place change is
therefore differentiated only where no other name sharing the memory is read afterwards,
and where the memory is not the caller's (an argument's) or a global's::

    y = x.copy()                         y = x
    z = y[0:2]                           x += 1            # refused: y shares x's
    z *= 3              # fine: y is     return np.sum(y)  # array, and numpy
    return np.sum(z)    # not read again                   # changes y too

Places merge where paths meet: after ``a, c = c, a`` in a loop, ``a`` and ``c`` may each
be either array. Beside the places, the analysis therefore keeps which pairs of names may
share memory (a relation between names, not places: a swap keeps ``a`` and ``c`` apart on
every path), and two names share memory only where both say so.

Python and numpy numbers are immutable: ``s = 0.0; s += v`` (``+=`` on any rank-0
value but a 0-d array an array constructor made) is plain rebinding, never a problem.

The analysis is in five modules: :mod:`.alias_model` (places, the relation between names,
the result), :mod:`.alias_flow` (the flow through the function), :mod:`.alias_calls`
(what library calls do to memory), :mod:`.alias_summaries` (what calls of the user's
functions do) and :mod:`.alias_check` (the refusals); :func:`aliases` runs them.
"""

from __future__ import annotations

from ..normalize.lower import Normalized
from .alias_check import _Check
from .alias_flow import _Flow
from .alias_model import Aliases, _overlap
from .facts import Facts, is_append, is_setitem, walk_block


def aliases(norm: Normalized, facts: Facts) -> Aliases:
    """Places of every name before each in-place change, and the problems there."""
    flow = _Flow(norm, facts)
    flow.run()
    result = Aliases(
        places=flow.at,
        sharing=flow.sharing_at,
        elements=flow.elements,
        fresh_sites=flow.fresh_sites,
        final=flow.final,
    )
    check = _Check(norm, facts, result, flow.call_writes, flow.out_writes)
    result.problems = check.run()
    for stmt, _ in walk_block(norm.tree.body[:-1]):
        for written in check.written(stmt):
            result.writes_arguments |= {
                p.name
                for p in result.places[id(stmt)].get(written, frozenset())
                if p.kind == "argument"
            }
    for stmt, _ in walk_block(norm.tree.body[:-1]):
        if is_setitem(stmt) or is_append(stmt):
            y = stmt.targets[0].value.id if is_setitem(stmt) else stmt.value.func.value.id
            written = result.places[id(stmt)].get(y, frozenset())
            others = {
                n
                for place, names in flow.referrers.items()
                if names - {y} and _overlap(result.reach(frozenset({place})), written)
                for n in names - {y}
            }
            if others:
                result.shared_writes.add(id(stmt))
                result.shared_with[id(stmt)] = others
    return result
