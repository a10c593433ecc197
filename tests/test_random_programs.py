"""Random programs: forward mode, reverse mode and finite differences must agree.

A hypothesis strategy (:func:`programs`) writes the source of a random numpy
function from the constructs srcgrad supports: straight-line arithmetic
(``+ - * /``, unary ``-``, ``**`` with small constant exponents), casts to float
and integer dtypes (``np.asarray(v, dtype=int)``, piecewise constant), masks
(``v * (w > 0.0)``, as in a ReLU), smooth numpy
functions on safe domains, ``np.sum``/``np.mean`` with and without ``axis``,
``@`` between compatible shapes, ``if``/``elif``/``else`` on data-dependent
conditions (``and``/``or``/``not``, chained comparisons), conditional
expressions, ``for`` over ``range`` with constant, integer-argument and
data-dependent trip counts (and ``reversed``, and ``for``-``else``),
``while`` loops with a counter bound, ``break``/``continue`` under an ``if``
in a loop, early ``return`` in a branch (also inside loops), variables
reassigned in loops, augmented assignment, tuple swaps, parameters
reassigned, variables local to a block. The source goes into a real file
(srcgrad reads source files), is imported, and
:func:`srcgrad.testing.check_grads` compares the two modes with central
finite differences at random inputs.

Every program is well defined by construction: every name is bound before
use on every path (a block only reads names bound before it or earlier in
it), every variable of one *kind* has one shape (``full`` is the input
shape, ``row`` its last axis when the inputs are 2-D, ``scalar``) so
broadcasting always works, every assigned value stays in ``[-3, 3]`` (large
intermediate values are squashed with ``np.tanh``), loops run at most four
times, and locals never alias an argument or each other (so augmented
assignment, which numpy does in place, behaves as srcgrad assumes).

Finite differences are meaningless across a branch boundary, so each program
has a *twin*: the same source where every comparison and every ``int()`` of
a float (or cast to an integer dtype) records how far it is from flipping. An
example is rejected (``assume``) when a comparison is within ``MARGIN`` of
flipping, when the
path taken (the sequence of all comparison outcomes) changes anywhere within
a radius far larger than the finite-difference step, or when finite
differences at two step sizes disagree (the function is too curved for
them). What is left must pass; a failure prints the program and its inputs.

Module-level helper functions, generated the same way, are called with
positional and keyword arguments (and defaults), and some return tuples that
the caller unpacks. Arrays the function makes (``np.zeros_like``,
``.copy()``, an elementwise result) are written into: ``w[0] = v``,
``w[-1] += v``, ``w[:, 0] = v``, ``w[i % 2] = v`` in loops, ``w[mask] = v``.

Where autograd can run the program (no writes into arrays), srcgrad's derivatives
are also compared with autograd's on the same source (``autograd_oracle.Oracle``):
first order, the jvp of the vjp with respect to every argument, and one more
second-order composition in turn (all of them in the thorough profile).

The bugs this found were fixed, each with a minimal reproduction in the
corpus; ``AVOID`` lists constructs left out while a new one is open (``"autograd"``
there switches the autograd comparison off).

The number of programs scales with the active hypothesis profile: ``ci`` (the
default) runs a few hundred programs, ``thorough`` several thousand::

    SRCGRAD_HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_random_programs.py
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import os
import re
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from autograd_oracle import KNOWN_GAPS, NoAutograd, Oracle, first_order_skips, rotation
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import srcgrad
from srcgrad.testing import check_grads

THOROUGH = os.environ.get("SRCGRAD_HYPOTHESIS_PROFILE") == "thorough"
#: in the ci profile, one program in this many is compared with autograd to second order
#: (a second-order derivative costs several generations of code)
SECOND_ORDER_EVERY = 5

#: a comparison this close to flipping (or an ``int()`` argument this close to
#: an integer) rejects the example
MARGIN = 1e-2
#: assigned values stay within this bound
VAR_BOUND = 3.0
#: a subexpression that may exceed this is squashed with np.tanh
EXPR_LIMIT = 20.0
#: inputs are drawn from [-INPUT_BOUND, INPUT_BOUND]
INPUT_BOUND = 2.0

#: constructs left out of the generator while a bug they show is open (each
#: should have a minimal reproduction in the corpus, marked xfail); none now
AVOID: set[str] = set()

_counter = itertools.count()
_turns = itertools.count()  # programs compared with autograd so far


# -- the generator ----------------------------------------------------------------------
@dataclass
class Var:
    name: str
    kind: str  # "full" (the input shape), "row" (its last axis, 2-D only) or "scalar"
    local: bool  # a local of the program (not a parameter): never aliases anything
    assignable: bool = True
    buffer: bool = False  # an array the function made, written into by subscript


@dataclass
class Program:
    source: str  # the module's source, defining ``f``
    params: list[str]
    kinds: dict[str, str]  # parameter -> "full" | "row" | "scalar" | "int"
    shape: tuple[int, ...]
    python_float: bool  # the scalar parameter is a Python float (else a 0-d array)
    wrt: tuple[int, ...]  # the positions differentiated
    features: set[str] = field(default_factory=set)

    def shape_of(self, kind: str) -> tuple[int, ...]:
        return {"full": self.shape, "row": self.shape[-1:], "scalar": ()}[kind]


_ORDER = {"scalar": 0, "row": 1, "full": 2}
_CONSTANTS = ["0.5", "1.5", "2.0", "-0.5", "0.25", "-1.0", "0.75"]
_THRESHOLDS = ["0.0", "0.5", "-0.5", "1.0", "-1.0", "0.25"]


def _fmt(text: str, bound: float) -> tuple[str, float]:
    return text, bound


class Gen:
    """Draws one program; ``draw`` is hypothesis' draw function."""

    max_depth = 2

    def __init__(
        self, draw: Any, shape: tuple[int, ...], helpers: list[Helper] | None = None
    ) -> None:
        self.draw = draw
        self.helpers = helpers or []  # helper functions this one may call
        self.result = "scalar"  # what a ``return`` returns: "scalar", "full" or "pair"
        self.shape = shape
        self.size = int(np.prod(shape)) if shape else 1
        self.kinds = ["full", "scalar"] + (["row"] if len(shape) == 2 else [])
        self.vars: list[Var] = []
        self.lines: list[str] = []
        #: names that may hold an integer array (given an int cast, or one of those):
        #: never updated in place by a float (numpy raises: not a program to differentiate)
        self.integer: set[str] = set()
        self.fresh = itertools.count()
        self.loop_indices: list[str] = []
        self.features: set[str] = set()
        self.budget = 0  # statements left
        self.loop_depth = 0  # loops around the statement being drawn

    # -- small helpers ------------------------------------------------------------------
    def choice(self, options: list) -> Any:
        return self.draw(st.sampled_from(options))

    def boolean(self, p_true: float = 0.5) -> bool:
        # hypothesis shrinks towards False: False is the simpler program
        return self.draw(st.integers(0, 99)) < int(p_true * 100)

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)
        if " = " in text:
            targets, value = text.split(" = ", 1)
            names = [t.strip() for t in targets.split(",")]
            whole_cast = value.startswith("np.asarray(") and value.endswith("dtype=int)")
            if whole_cast or set(re.findall(r"\w+", value)) & self.integer:
                self.integer.update(n for n in names if n.isidentifier())

    def of_kind(self, kind: str, local_only: bool = False) -> list[Var]:
        return [
            v
            for v in self.vars
            if v.kind == kind and (not local_only or (v.local and not v.buffer))
        ]

    def feature(self, name: str) -> None:
        self.features.add(name)

    # -- expressions: (source text, bound on |value|) -----------------------------------
    def squash(self, expr: tuple[str, float], limit: float = EXPR_LIMIT) -> tuple[str, float]:
        text, bound = expr
        if bound <= limit:
            return expr
        return f"np.tanh({text})", 1.0

    def leaf(self, kind: str) -> tuple[str, float]:
        options: list[tuple[str, float]] = [(v.name, VAR_BOUND) for v in self.of_kind(kind)]
        if kind == "scalar" and (not options or self.boolean(0.25)):
            options = [(c, abs(float(c))) for c in _CONSTANTS]
            options += [(f"0.5 * {i}", 2.0) for i in self.loop_indices]
        item = "scalar" if len(self.shape) == 1 else "row"
        if kind == item and self.loop_indices and self.of_kind("full") and self.boolean(0.3):
            # an item read at a loop index (its adjoint added into the array's, in place)
            self.feature("read [loop index]")
            v = self.choice(self.of_kind("full")).name
            i = self.choice(self.loop_indices)
            options = [(f"{v}[{i} % {self.shape[0]}]", VAR_BOUND)]
        if not options:  # a row before any row variable exists
            return f"np.mean({self.leaf('full')[0]}, axis=0)", VAR_BOUND
        return self.choice(options)

    def expr(self, kind: str, depth: int) -> tuple[str, float]:
        """An expression of ``kind``: its shape is that kind's shape, exactly."""
        if depth <= 0:
            return self.leaf(kind)
        options = ["leaf", "unary", "binary", "binary", "power", "ifexp", "reduce", "matmul"]
        what = self.choice(options)
        if what == "unary":
            return self.unary(kind, depth)
        if what == "binary":
            return self.binary(kind, depth)
        if what == "power":
            return self.power(kind, depth)
        if what == "ifexp" and "ifexp" not in AVOID:
            self.feature("ifexp")
            a = self.expr(kind, depth - 1)
            b = self.expr(kind, depth - 1)
            cond = self.condition(depth - 1)
            return f"({a[0]} if {cond} else {b[0]})", max(a[1], b[1])
        if what == "reduce" and kind != "full":
            return self.reduce(kind, depth)
        if what == "matmul" and "matmul" not in AVOID:
            made = self.matmul(kind, depth)
            if made is not None:
                return made
        return self.leaf(kind)

    def unary(self, kind: str, depth: int) -> tuple[str, float]:
        a, b = self.expr(kind, depth - 1)
        how = self.choice(
            ["neg", "sin", "cos", "tanh", "exp", "log", "sqrt", "float", "int", "gate"]
        )
        self.feature(how)
        if how == "neg":
            return f"(-{a})", b
        if how == "gate":  # a ReLU-like mask, x * (x > 0): piecewise (the twin sees its jumps)
            lower = [k for k in self.kinds if _ORDER[k] <= _ORDER[kind]]
            g, _ = self.expr(self.choice(lower), depth - 1)
            c = self.choice(["0.0", "0.25", "-0.5"])
            return f"({a} * ({g} > {c}))", b
        if how == "float":  # a cast to a float dtype: the identity
            # (of a bare name, or a choice of values that may be one, a copy: np.asarray
            # would alias it, and locals never alias)
            cast = "np.array" if a.isidentifier() or _is_choice(a) else "np.asarray"
            return f"{cast}({a}, dtype=np.float64)", b
        if how == "int":  # to an integer dtype: piecewise constant (the twin sees its jumps)
            return f"np.asarray({a}, dtype=int)", b
        if how in ("sin", "cos", "tanh"):
            return f"np.{how}({a})", 1.0
        if how == "exp":  # a bounded argument
            return f"np.exp(np.tanh({a}))", float(np.e)
        a, b = self.squash((a, b))
        if how == "log":
            return f"np.log(1.0 + {a} * {a})", float(np.log1p(b * b))
        return f"np.sqrt(1.0 + {a} * {a})", float(np.sqrt(1 + b * b))

    def operands(self, kind: str, depth: int) -> tuple[tuple[str, float], tuple[str, float]]:
        """Two operands, one of ``kind`` and one of ``kind`` or a lower one (broadcast)."""
        lower = [k for k in self.kinds if _ORDER[k] <= _ORDER[kind]]
        other = self.choice(lower)
        if other != kind:
            self.feature("broadcast")
        a = self.expr(kind, depth - 1)
        b = self.expr(other, depth - 1)
        return (b, a) if self.boolean() else (a, b)

    def binary(self, kind: str, depth: int) -> tuple[str, float]:
        op = self.choice(["+", "-", "*", "/"])
        self.feature(op)
        if op == "/":  # only by something at least 1
            lower = [k for k in self.kinds if _ORDER[k] <= _ORDER[kind]]
            a = self.expr(kind, depth - 1)
            d, db = self.squash(self.expr(self.choice(lower), depth - 1))
            return f"({a[0]} / (1.0 + {d} * {d}))", a[1]
        (a, ab), (b, bb) = self.operands(kind, depth)
        a, ab = self.squash((a, ab))
        b, bb = self.squash((b, bb))
        bound = ab * bb if op == "*" else ab + bb
        return self.squash((f"({a} {op} {b})", bound))

    def power(self, kind: str, depth: int) -> tuple[str, float]:
        a, b = self.squash(self.expr(kind, depth - 1), limit=4.0)
        self.feature("**")
        p = self.choice(["2", "3", "0.5", "-1.0", "1.5", "-0.5"])
        if p in ("2", "3"):
            return self.squash((f"({a}) ** {p}", b ** int(p)))
        # a positive base for a fractional or negative exponent
        return self.squash((f"(1.0 + {a} * {a}) ** {p}", (1 + b * b) ** max(float(p), 0.0)))

    def reduce(self, kind: str, depth: int) -> tuple[str, float]:
        how = self.choice(["sum", "mean"])
        self.feature(how)
        if kind == "row":  # only for 2-D inputs
            a, b = self.expr("full", depth - 1)
            axis = self.choice(["0", "-2"])
            self.feature("axis")
            n = self.shape[0]
            return self.squash((f"np.{how}({a}, axis={axis})", b * (n if how == "sum" else 1)))
        source = self.choice([k for k in self.kinds if k != "scalar"])
        a, b = self.expr(source, depth - 1)
        n = self.size if source == "full" else self.shape[-1]
        axis = ""
        if source == "row" or len(self.shape) == 1:
            if self.boolean(0.3):
                axis = ", axis=0"
                self.feature("axis")
        return self.squash((f"np.{how}({a}{axis})", b * (n if how == "sum" else 1)))

    def matmul(self, kind: str, depth: int) -> tuple[str, float] | None:
        nd = len(self.shape)
        square = nd == 2 and self.shape[0] == self.shape[1]
        pairs = []
        if kind == "scalar" and nd == 1:
            pairs.append(("full", "full"))
        if kind == "scalar" and nd == 2:
            pairs.append(("row", "row"))
        if square and kind == "full":
            pairs.append(("full", "full"))
        if square and kind == "row":
            pairs += [("full", "row"), ("row", "full")]
        if not pairs:
            return None
        ka, kb = self.choice(pairs)
        a = self.squash(self.expr(ka, depth - 1), limit=3.0)
        b = self.squash(self.expr(kb, depth - 1), limit=3.0)
        self.feature("@")
        return self.squash((f"({a[0]} @ {b[0]})", a[1] * b[1] * self.shape[-1]))

    def condition(self, depth: int) -> str:
        """A data-dependent condition (the twin records how close it is to flipping)."""
        how = self.choice(["compare", "compare", "compare", "and", "or", "not", "chain", "int"])
        if how in ("and", "or") and depth > 0:
            self.feature(how)
            return f"({self.condition(0)} {how} {self.condition(0)})"
        if how == "not" and depth > 0:
            self.feature("not")
            return f"(not {self.condition(0)})"
        if how == "int":  # an inactive condition, on the integer argument
            self.feature("int condition")
            return f"(n > {self.choice(['0', '1', '2'])})"
        value = self.scalar_for_condition(depth)
        if how == "chain":
            self.feature("chained comparison")
            return f"(-1.0 < {value} < 1.0)"
        op = self.choice([">", "<", ">=", "<="])
        return f"({value} {op} {self.choice(_THRESHOLDS)})"

    def scalar_for_condition(self, depth: int) -> str:
        if self.boolean(0.6):
            how = self.choice(["sum", "mean"])
            return f"np.{how}({self.expr(self.choice(self.kinds), max(depth, 0))[0]})"
        return self.expr("scalar", max(depth, 1))[0]

    def assigned(self, kind: str, depth: int) -> str:
        """A value to assign: an operation (never a bare name, so no aliasing), in bounds."""
        text, bound = self.expr(kind, depth)
        if bound > VAR_BOUND or not _is_operation(text):
            squash = self.choice(["tanh", "sin", "scaled"])
            if squash == "scaled" and bound <= 2 * VAR_BOUND:
                return f"0.5 * {text}"
            return f"np.{'sin' if squash == 'sin' else 'tanh'}({text})"
        return text

    # -- statements ---------------------------------------------------------------------
    def block(self, indent: int, depth: int, loop: str | None, count: int) -> None:
        """``count`` statements (at least one line) at ``indent``; names bound here die here."""
        scope = len(self.vars)
        start = len(self.lines)
        for _ in range(count):
            if self.budget <= 0:
                break
            self.statement(indent, depth, loop)
        if len(self.lines) == start:
            self.assign(indent, depth)
        del self.vars[scope:]

    def statement(self, indent: int, depth: int, loop: str | None) -> None:
        self.budget -= 1
        options = ["assign", "assign", "assign", "augassign", "swap", "local"]
        if self.shape:
            options += ["buffer", "write"]
            if any(v.buffer for v in self.vars):
                options += ["write", "write", "write"]
        if self.helpers:
            options += ["call", "call"]
        # a loop whose trip count is recorded (while, or a loop with break or return)
        # nested in another loop: see test_bug_inner_loop_trips
        recorded_ok = self.loop_depth == 0 or "recorded inner loop" not in AVOID
        if depth < self.max_depth:
            options += ["if", "if", "for"]
            if recorded_ok:
                options.append("while")
        if loop is not None:
            options.append("continue")
        if loop is not None and (self.loop_depth <= 1 or recorded_ok):
            options.append("break")
        if self.loop_depth <= 1 or recorded_ok:
            options.append("return")
        what = self.choice(options)
        if what in AVOID:
            what = "assign"
        getattr(self, "stmt_" + what)(indent, depth, loop)

    def assign(self, indent: int, depth: int) -> None:
        self.stmt_assign(indent, depth, None)

    def stmt_assign(self, indent: int, depth: int, loop: str | None) -> None:
        var = self.choice([v for v in self.vars if v.assignable])
        if not var.local:
            self.feature("parameter reassigned")
        self.emit(indent, f"{var.name} = {self.assigned(var.kind, 2)}")

    def stmt_local(self, indent: int, depth: int, loop: str | None) -> None:
        kind = self.choice(self.kinds)
        name = f"t{next(self.fresh)}"
        self.emit(indent, f"{name} = {self.assigned(kind, 2)}")
        self.vars.append(Var(name, kind, local=True))
        if indent > 1:
            self.feature("block-local variable")

    def stmt_augassign(self, indent: int, depth: int, loop: str | None) -> None:
        candidates = [
            v for v in self.vars if v.local and not v.buffer and v.name not in self.integer
        ]
        if not candidates:
            return
        var = self.choice(candidates)
        lower = self.choice([k for k in self.kinds if _ORDER[k] <= _ORDER[var.kind]])
        e = self.expr(lower, 1)[0]
        self.feature("augmented assignment")
        # each form keeps |var| <= VAR_BOUND
        form = self.choice(["*=", "-=", "+="])
        if form == "*=":
            self.emit(indent, f"{var.name} *= np.cos({e})")
        elif form == "-=":
            self.emit(indent, f"{var.name} -= 0.5 * ({var.name} - np.tanh({e}))")
        else:
            self.emit(indent, f"{var.name} += 0.5 * (np.sin({e}) - {var.name})")

    def stmt_swap(self, indent: int, depth: int, loop: str | None) -> None:
        for kind in self.draw(st.permutations(self.kinds)):
            pool = self.of_kind(kind, local_only=True)
            if len(pool) >= 2:
                a, b = self.draw(st.permutations(pool))[:2]
                self.feature("tuple swap")
                if self.boolean(0.5):
                    # a bare name after the first place: see test_bug_swap_then_compound
                    second = f"-{a.name}" if "bare swap" in AVOID else a.name
                    self.emit(indent, f"{a.name}, {b.name} = {b.name}, {second}")
                else:  # swap and update at once
                    self.emit(indent, f"{a.name}, {b.name} = {b.name}, {self.assigned(kind, 1)}")
                return
        self.assign(indent, depth)

    def stmt_if(self, indent: int, depth: int, loop: str | None) -> None:
        self.feature("if")
        self.emit(indent, f"if {self.condition(1)}:")
        self.block(indent + 1, depth + 1, loop, self.draw(st.integers(1, 3)))
        shape = self.choice(["if", "else", "elif"])
        if shape == "elif":
            self.feature("elif")
            self.emit(indent, f"elif {self.condition(1)}:")
            self.block(indent + 1, depth + 1, loop, self.draw(st.integers(1, 2)))
        if shape in ("else", "elif"):
            self.feature("else")
            self.emit(indent, "else:")
            self.block(indent + 1, depth + 1, loop, self.draw(st.integers(1, 3)))

    def stmt_for(self, indent: int, depth: int, loop: str | None) -> None:
        self.feature("for")
        index = f"i{next(self.fresh)}"
        how = self.choice(["const", "n", "int n", "data", "reversed", "start"])
        if how in AVOID:
            how = "const"
        self.feature(f"for range {how}")
        if how == "const":
            trips = f"range({self.draw(st.integers(0, 3))})"
        elif how == "n":
            trips = "range(n)"
        elif how == "int n":
            trips = "range(int(n))"
        elif how == "data":  # 0, 1 or 2 trips, decided by the data
            value = self.scalar_for_condition(1)
            trips = f"range(int(1.5 + 1.5 * np.tanh({value})))"
        elif how == "reversed":
            trips = f"reversed(range({self.draw(st.integers(0, 3))}))"
        else:
            trips = f"range(1, {self.draw(st.integers(1, 4))})"
        self.emit(indent, f"for {index} in {trips}:")
        self.loop_indices.append(index)
        self.loop_depth += 1
        self.block(indent + 1, depth + 1, "for", self.draw(st.integers(1, 3)))
        self.loop_depth -= 1
        self.loop_indices.pop()
        if self.boolean(0.15) and "for-else" not in AVOID:
            self.feature("for-else")
            self.emit(indent, "else:")
            self.block(indent + 1, depth + 1, loop, 1)

    def stmt_while(self, indent: int, depth: int, loop: str | None) -> None:
        self.feature("while")
        counter = f"k{next(self.fresh)}"
        limit = self.draw(st.integers(1, 4))
        self.emit(indent, f"{counter} = 0")
        how = self.choice(["data first", "counter first", "counter only"])
        if how == "data first":
            test = f"{self.condition(0)} and {counter} < {limit}"
        elif how == "counter first":
            test = f"{counter} < {limit} and {self.condition(0)}"
        else:
            test = f"{counter} < {limit}"
        self.emit(indent, f"while {test}:")
        # the counter moves first, so that `continue` cannot loop forever
        self.emit(indent + 1, f"{counter} = {counter} + 1" if self.boolean() else f"{counter} += 1")
        self.loop_depth += 1
        self.block(indent + 1, depth + 1, "while", self.draw(st.integers(1, 3)))
        self.loop_depth -= 1

    def jump_guard(self, indent: int, depth: int, loop: str | None) -> None:
        self.emit(indent, f"if {self.condition(1)}:")
        if self.boolean(0.4):
            self.block(indent + 1, depth + 1, loop, 1)

    def stmt_break(self, indent: int, depth: int, loop: str | None) -> None:
        self.feature(f"break in {loop}")
        self.jump_guard(indent, depth, loop)
        self.emit(indent + 1, "break")

    def stmt_continue(self, indent: int, depth: int, loop: str | None) -> None:
        self.feature(f"continue in {loop}")
        self.jump_guard(indent, depth, loop)
        self.emit(indent + 1, "continue")

    def stmt_return(self, indent: int, depth: int, loop: str | None) -> None:
        self.feature("early return" + (f" in {loop}" if loop else ""))
        self.jump_guard(indent, depth, loop)
        self.emit(indent + 1, f"return {self.returned()}")

    def stmt_buffer(self, indent: int, depth: int, loop: str | None) -> None:
        """An array the function makes, to write into later."""
        name = f"w{next(self.fresh)}"
        source = self.leaf("full")[0]
        how = self.choice(["zeros", "copy", "elementwise", "shape", "shape and dtype"])
        self.feature(f"buffer {how}")
        if how == "zeros":
            value = f"np.zeros_like({source})"
        elif how == "shape":  # (an array of the source's shape, also to srcgrad)
            value = f"np.{self.choice(['zeros', 'ones'])}(np.shape({source}))"
        elif how == "shape and dtype" and source.isidentifier():
            value = f"np.zeros({source}.shape, {source}.dtype)"
        elif how == "copy" and source.isidentifier():
            value = f"{source}.copy()"
        else:
            value = f"np.tanh({self.expr('full', 1)[0]})"
        self.emit(indent, f"{name} = {value}")
        self.vars.append(Var(name, "full", local=True, assignable=False, buffer=True))

    def stmt_write(self, indent: int, depth: int, loop: str | None) -> None:
        """``w[index] = v`` or ``w[index] += ...`` into an array the function made."""
        buffers = [v for v in self.vars if v.buffer]
        if not buffers:
            return self.stmt_buffer(indent, depth, loop)
        w = self.choice(buffers).name
        nd = len(self.shape)
        # (index, kind of the value written)
        options = [("0", "row" if nd == 2 else "scalar"), ("-1", "row" if nd == 2 else "scalar")]
        if nd == 2:
            options += [(":, 0", "scalar"), ("-1, 0", "scalar"), (":, -1", "scalar")]
        else:
            options += [("1:", "scalar"), ("::2", "scalar")]
        if self.loop_indices:
            i = self.choice(self.loop_indices)
            options.append((f"{i} % {self.shape[0]}", "row" if nd == 2 else "scalar"))
        options.append(("mask", "scalar"))
        index, kind = self.choice(options)
        if index == "mask":
            self.feature("write mask")
            cond = f"{self.expr('full', 1)[0]} > {self.choice(_THRESHOLDS)}"
            self.emit(indent, f"{w}[{cond}] = {self.assigned(kind, 1)}")
            return
        self.feature(f"write [{index}]" if "%" not in index else "write [loop index]")
        if self.boolean(0.3):
            self.feature("write +=")
            e = self.expr(kind, 1)[0]
            self.emit(indent, f"{w}[{index}] += 0.5 * (np.sin({e}) - {w}[{index}])")
        else:
            self.emit(indent, f"{w}[{index}] = {self.assigned(kind, 1)}")

    def stmt_call(self, indent: int, depth: int, loop: str | None) -> None:
        """``v = h(a, b)``, or ``v, s = h(a, b=...)`` for a helper returning a pair."""
        helper = self.choice(self.helpers)
        args = [self.assigned("full", 1) if self.boolean(0.5) else self.leaf("full")[0]]
        scalar = self.expr("scalar", 1)[0]
        how = self.choice(["positional", "keyword", "default n", "n"])
        self.feature(f"call {how}")
        if how == "positional":
            args.append(scalar)
        else:
            args.append(f"v={scalar}")
        if how == "n":
            args.append("n=n")
        call = f"{helper.name}({', '.join(args)})"
        full = [v for v in self.of_kind("full", local_only=True) if v.assignable]
        if helper.result == "pair":
            self.feature("call returning a tuple")
            scalars = [v for v in self.of_kind("scalar", local_only=True) if v.assignable]
            if not full or not scalars:
                return self.assign(indent, depth)
            a, b = self.choice(full).name, self.choice(scalars).name
            self.emit(indent, f"{a}, {b} = {call}")
        else:
            if not full:
                return self.assign(indent, depth)
            self.emit(indent, f"{self.choice(full).name} = {call}")

    def returned(self) -> str:
        if self.result == "full":
            return self.assigned("full", 2)
        if self.result == "pair":
            return f"{self.assigned('full', 2)}, {self.assigned('scalar', 1)}"
        scalars = self.of_kind("scalar")
        if scalars and self.choice(range(5)) == 4:  # a variable as it is (a parameter given new
            self.feature("bare return")  # values in a loop: its value, not the argument)
            return self.choice(scalars).name
        if self.boolean(0.7):
            kind = self.choice(self.kinds)
            how = self.choice(["sum", "mean"])
            return f"np.{how}({self.expr(kind, 2)[0]})"
        return self.expr("scalar", 2)[0]


def _is_operation(text: str) -> bool:
    node = ast.parse(text, mode="eval").body
    return not isinstance(node, (ast.Name, ast.Constant, ast.IfExp))


@st.composite
def programs(draw: Any, max_statements: int = 8) -> Program:
    """The source of a random function ``f(x, y, [z], [s], n)`` returning a scalar."""
    nd = draw(st.integers(0, 2))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd)))
    helpers = []
    for k in range(draw(st.integers(0, 2)) if "helper" not in AVOID else 0):
        helpers.append(helper(draw, shape, f"h{k}", helpers))
    gen = Gen(draw, shape, helpers)
    params = ["x", "y"]
    kinds = {"x": "full", "y": "full"}
    if len(shape) == 2 and gen.boolean(0.6):
        params.append("z")
        kinds["z"] = "row"
    if "int witness" in AVOID or gen.boolean(0.5):
        params.append("s")
        kinds["s"] = "scalar"
    python_float = gen.boolean(0.5)
    params.append("n")
    kinds["n"] = "int"
    floats = [i for i, p in enumerate(params) if kinds[p] != "int"]
    wrt = tuple(
        draw(st.lists(st.sampled_from(floats), min_size=1, max_size=len(floats), unique=True))
    )
    gen.vars = [
        Var(p, kinds[p], local=False, assignable=i in wrt or "inactive parameter" not in AVOID)
        for i, p in enumerate(params)
        if kinds[p] != "int"
    ]
    # bind a few locals first, one of each kind, so every kind has a name
    local_kinds = list(gen.kinds) + draw(st.lists(st.sampled_from(gen.kinds), max_size=2))
    bound = []
    for i, kind in enumerate(local_kinds):
        name = "abcdefgh"[i]
        if kind == "full":
            value = gen.assigned(kind, 1)
        else:  # from the data, not a constant
            value = f"np.tanh({gen.reduce(kind, 2)[0]})"
        gen.emit(1, f"{name} = {value}")
        bound.append(Var(name, kind, local=True))
    gen.vars += bound
    gen.budget = draw(st.integers(1, max_statements))
    while gen.budget > 0:
        gen.statement(1, 0, None)
    gen.emit(1, f"return {gen.returned()}")
    body = "\n".join(gen.lines)
    source = "import numpy as np\n\n\n"
    source += "".join(h.source for h in helpers)
    source += f"def f({', '.join(params)}):\n{body}\n"
    features = gen.features.union(*(h.features for h in helpers))
    return Program(source, params, kinds, shape, python_float, wrt, features)


@dataclass
class Helper:
    name: str
    result: str  # "full" or "pair" (full, scalar)
    source: str
    features: set[str]


def helper(draw: Any, shape: tuple[int, ...], name: str, earlier: list[Helper]) -> Helper:
    """``def h(u, v, n=2)``: a random body over ``u`` (full) and ``v`` (scalar) that
    may call the helpers drawn before it; it returns a full value or a pair."""
    gen = Gen(draw, shape, list(earlier))
    gen.result = gen.choice(["full", "full", "pair"])
    gen.vars = [Var("u", "full", local=False), Var("v", "scalar", local=False)]
    gen.emit(1, f"a = {gen.assigned('full', 1)}")
    gen.emit(1, f"b = np.tanh({gen.reduce('scalar', 1)[0]})")
    gen.vars += [Var("a", "full", local=True), Var("b", "scalar", local=True)]
    gen.budget = draw(st.integers(0, 3))
    while gen.budget > 0:
        gen.statement(1, 0, None)
    gen.emit(1, f"return {gen.returned()}")
    body = "\n".join(gen.lines)
    gen.features.add("helper")
    return Helper(name, gen.result, f"def {name}(u, v, n=2):\n{body}\n\n\n", gen.features)


# -- the twin: records how close each comparison is to flipping -------------------------
class _Twin(ast.NodeTransformer):
    """``a < b`` becomes ``_cmp(a, "<", b)``; ``int(v)`` becomes ``_int(v)``."""

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        parts = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(
                ast.Call(
                    ast.Name("_cmp", ast.Load()),
                    [left, ast.Constant(type(op).__name__), right],
                    [],
                )
            )
            left = right
        return parts[0] if len(parts) == 1 else ast.BoolOp(ast.And(), parts)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "int":
            node.func = ast.Name("_int", ast.Load())
        if any(  # np.asarray(v, dtype=int) becomes _int_array(v)
            k.arg == "dtype" and isinstance(k.value, ast.Name) and k.value.id == "int"
            for k in node.keywords
        ):
            node = ast.Call(ast.Name("_int_array", ast.Load()), node.args[:1], [])
        return node


_OPS = {
    "Lt": lambda a, b: a < b,
    "LtE": lambda a, b: a <= b,
    "Gt": lambda a, b: a > b,
    "GtE": lambda a, b: a >= b,
}


class Recorder:
    """The twin's namespace helpers: every data-dependent decision and its margin."""

    def __init__(self) -> None:
        self.path: list[Any] = []
        self.margin = np.inf

    def cmp(self, a: Any, op: str, b: Any) -> Any:
        if np.ndim(a) or np.ndim(b):  # a mask
            mask = _OPS[op](a, b)
            self.path.append(tuple(np.ravel(mask).tolist()))
            self.margin = min(self.margin, float(np.min(np.abs(np.subtract(a, b)))))
            return mask
        result = bool(_OPS[op](a, b))
        self.path.append(result)
        if not all(isinstance(v, (int, np.integer)) for v in (a, b)):
            self.margin = min(self.margin, abs(float(a) - float(b)))
        return result

    def int_array(self, v: Any) -> Any:
        result = np.asarray(v, dtype=int)
        self.path.append(tuple(np.ravel(result).tolist()))
        if np.asarray(v).dtype.kind in "fc":  # (an int array: nothing truncated)
            distance = np.abs(np.subtract(v, np.round(v)))
            self.margin = min(self.margin, float(np.min(distance, initial=np.inf)))
        return result

    def int_(self, v: Any) -> int:
        result = int(v)
        self.path.append(result)
        if not isinstance(v, (int, np.integer)):
            self.margin = min(self.margin, abs(float(v) - round(float(v))))
        return result


def twin_source(source: str) -> str:
    tree = _Twin().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree))


# -- running a program ------------------------------------------------------------------
def load(source: str, directory: Any, name: str) -> Any:
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def make_args(program: Program, seed: int, n: int) -> tuple[list[Any], list[int]]:
    """Inputs in [-INPUT_BOUND, INPUT_BOUND] and the positions of the float ones."""
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    floats = []
    for i, p in enumerate(program.params):
        kind = program.kinds[p]
        if kind == "int":
            args.append(n)
            continue
        value = rng.uniform(-INPUT_BOUND, INPUT_BOUND, program.shape_of(kind))
        if kind == "scalar" and program.python_float:
            value = float(value)
        args.append(value)
        floats.append(i)
    return args, floats


class Twin:
    def __init__(self, program: Program, directory: Any) -> None:
        module = load(twin_source(program.source), directory, f"twin_{next(_counter)}")
        self.recorder = Recorder()
        module._cmp = self.recorder.cmp
        module._int = self.recorder.int_
        module._int_array = self.recorder.int_array
        self.f = module.f
        self.module = module

    def __call__(self, args: list[Any]) -> tuple[float, tuple, float]:
        self.recorder.path, self.recorder.margin = [], np.inf
        with np.errstate(all="raise"):
            out = self.f(*args)
        return float(out), tuple(self.recorder.path), self.recorder.margin


def well_posed(twin: Twin, args: list[Any], wrt: list[int], seed: int) -> bool:
    """Whether finite differences mean something here: far from every branch
    boundary, the same path all around, and no more curved than they can take."""
    try:
        out, path, margin = twin(args)
    except FloatingPointError:
        return False
    if not np.isfinite(out) or abs(out) > 1e4 or margin < MARGIN:
        return False
    rng = np.random.default_rng(seed + 1)

    def moved(direction: list[Any], h: float) -> list[Any]:
        new = list(args)
        for i, d in zip(wrt, direction):
            new[i] = args[i] + h * d
        return new

    for _ in range(2):
        direction = [rng.standard_normal(np.shape(args[i])) for i in wrt]
        direction = [float(d) if isinstance(args[i], float) else d for i, d in zip(wrt, direction)]
        differences = {}
        for h in (1e-3, 1e-4, 1e-5, 1e-6):
            plus, minus = twin(moved(direction, h)), twin(moved(direction, -h))
            if plus[1] != path or minus[1] != path:
                return False
            differences[h] = (plus[0] - minus[0]) / (2 * h)
        # truncation error at 1e-5 this small means it is negligible at 1e-6
        if abs(differences[1e-5] - differences[1e-6]) > 1e-6 * max(1.0, abs(differences[1e-6])):
            return False
    return True


def describe(program: Program, args: list[Any], wrt: tuple[int, ...]) -> str:
    shown = ", ".join(
        f"{p}={np.asarray(a).tolist()!r}" if not isinstance(a, int) else f"{p}={a}"
        for p, a in zip(program.params, args)
    )
    return (
        f"\n--- program (shape {program.shape}, wrt={wrt}) ---\n{program.source}"
        f"--- arguments ---\n{shown}\n"
    )


def _is_choice(expr: str) -> bool:
    """Whether ``expr`` is ``(a if c else b)``, whose value may be a name's array."""
    return isinstance(ast.parse(expr, mode="eval").body, ast.IfExp)


def run_program(program: Program, directory: Any, data: Any) -> None:
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    n = data.draw(st.integers(0, 3), label="n")
    args, _ = make_args(program, seed, n)
    wrt = program.wrt
    name = f"prog_{next(_counter)}"
    twin = Twin(program, directory)
    try:
        posed = well_posed(twin, args, list(wrt), seed)
    except TypeError as exc:  # numpy refuses the program (a float in place into an int array)
        refused_too(program, directory, name, args, wrt, exc)
        return
    finally:
        sys.modules.pop(twin.module.__name__, None)
    assume(posed)
    module = load(program.source, directory, name)
    try:
        check_grads(module.f, args, wrt=wrt)
        if "autograd" not in AVOID:
            against_autograd(module.f, args, seed, wrt)
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        raise AssertionError(f"{detail}\n{describe(program, args, wrt)}") from exc
    finally:
        sys.modules.pop(name, None)


def refused_too(
    program: Program, directory: Any, name: str, args: list[Any], wrt: tuple, exc: TypeError
) -> None:
    """A program numpy refuses to run has no derivative: srcgrad raises too (never a
    number), in both modes."""
    module = load(program.source, directory, name)
    try:
        for mode in ("reverse", "forward"):
            with pytest.raises(Exception):  # noqa: B017 (a refusal, or numpy's own error)
                srcgrad.grad(module.f, wrt=wrt, mode=mode)(*args)
    except BaseException as failure:
        raise AssertionError(
            f"numpy refuses this program ({exc}), srcgrad differentiated it"
            f"{describe(program, args, wrt)}"
        ) from failure
    finally:
        sys.modules.pop(name, None)


def against_autograd(f: Any, args: list[Any], seed: int, wrt: tuple[int, ...]) -> None:
    """srcgrad against autograd on the same source, where autograd can run it (no writes
    into arrays): first order, and for one program in ``SECOND_ORDER_EVERY`` the jvp of
    the vjp (every argument) and one more second-order composition in turn (every
    program and every composition when thorough)."""
    turn = next(_turns)
    second = THOROUGH or turn % SECOND_ORDER_EVERY == 0
    kinds = rotation(turn // SECOND_ORDER_EVERY, THOROUGH) if second else []
    # the first order w.r.t. wrt as check_grads had it, whose generated code this reuses;
    # reverse-mode grad and value_and_grad (code of their own) with the second order
    skip = first_order_skips(turn, THOROUGH)
    if not second:
        skip = [("reverse", "grad"), ("reverse", "value_and_grad")]
    try:
        oracle = Oracle(f, args, seed=seed, gaps=KNOWN_GAPS, wrt=wrt)
        oracle.run(kinds, every=THOROUGH, skip=skip)
    except NoAutograd:
        return


# -- the tests --------------------------------------------------------------------------
def _examples(factor: int) -> int:
    return max(1, settings.default.max_examples * factor)


@pytest.fixture(scope="module")
def directory(tmp_path_factory: Any) -> Any:
    return tmp_path_factory.mktemp("programs")


@settings(max_examples=_examples(10))
@given(program=programs(max_statements=4), data=st.data())
def test_small_programs(directory: Any, program: Program, data: Any) -> None:
    run_program(program, directory, data)


@settings(max_examples=_examples(10))
@given(program=programs(max_statements=10), data=st.data())
def test_larger_programs(directory: Any, program: Program, data: Any) -> None:
    run_program(program, directory, data)
