"""Stage 4b, reverse mode: a core function in, its gradient or VJP out.

In:  a normalized function, its :class:`~srcgrad.compiler.analyze.facts.Facts`, the
``wrt`` parameters, a :class:`~srcgrad.compiler.transform.builder.Builder` and what to return
(``kind``: ``"grad"``, ``"value_and_grad"`` or ``"vjp"``).
Out: a function that runs the primal sweep, then the adjoint sweep: the
statements in reverse order, each active one accumulating its operands'
adjoints under a comment naming the user's line; branches replayed by their
recorded condition, loops run backwards::

    h = h0                                tape = []
    for t in range(n):                    h = h0
        h = np.tanh(h @ W)       ==>      for t in range(n):
    return np.sum(h)                          tape.append(h)
                                              h = np.tanh(h @ W)
                                          h_bar = np.full_like(h, 1.0)
                                          W_bar = np.zeros_like(W)
                                          for t in reversed(range(n)):
                                              t1_bar = h_bar * (1 - h * h)
                                              h = tape.pop()
                                              h_bar = t1_bar @ W.T
                                              W_bar = W_bar + h.T @ t1_bar
                                          h0_bar = h_bar

What is recorded and what recomputed is decided first, as a plan
(:mod:`.tape_plan`); the emitter (:mod:`.sweeps`) makes code from it. Adjoints
start at zero where their name's live range starts in reverse, and accumulate
with ``+``; the optimizer turns each first accumulation into a plain assignment
and drops what is never read.

- :mod:`.tape_plan`: the taping decision (what to record, recompute, count);
- :mod:`.rematerialize`: what the plan never records (views computed again, borrowed
  adjoints, loop-invariant names); :mod:`.reads`: the names a statement reads;
- :mod:`.sweeps`: the primal and adjoint sweeps and the function (``_Reverse``);
- :mod:`.tapes`: what the primal sweep saves, where the adjoint gets it back, trip counters;
- :mod:`.function`: the function around the sweeps (presets, checks, what it returns);
- :mod:`.calls`: calls to the user's functions (``f_fwd``/``f_bwd`` pairs);
- :mod:`.writes`: adjoints of writes into arrays and lists (``y[i] = v``, ``t = (a, b)``,
  ``xs.append(v)``);
- :mod:`.shapes`: shapes computed instead of recorded (``unbroadcast`` reads only a shape);
- :mod:`.uniform`: adjoints equal in every element, held as one scalar.
"""

from .sweeps import KINDS, reverse

__all__ = ["KINDS", "reverse"]
