"""A hostile random-program generator: what users write and srcgrad may mishandle.

``test_random_programs.py`` writes programs srcgrad is meant to support, and keeps
them clear of aliasing (no local ever names another's array). This generator
does the opposite, on purpose:

- aliases (``z = y``, ``w = np.asarray(y)``, a parameter aliased by a local) and
  views (``z = y[0:2]``, ``y[::2]``, ``y[:]``, ``.T``, ``.reshape(-1)``,
  ``np.ravel``), next to real copies (``.copy()``, ``np.copy``, ``np.array``,
  ``.flatten()``, ``.astype(float)``);
- in-place operators through any of them (``z *= 3.0``, ``y += v``, ``x -= v`` on a
  parameter), and writes into arrays: ``y[0] = v``, ``y[1:3] = v``, masks, and
  fancy indices with repeats (``y[[0, 0]] = v``, ``y[[1, 0, 1]] += v``; numpy's
  buffered semantics: the last write wins, a repeated index adds once);
- casts: ``x.astype(int)``, ``x.astype(bool)``, ``x.astype(np.float32)``,
  ``np.sum(x, dtype=int)``, ``np.array(x, dtype=int)``, and the cast numpy makes
  silently: a write into an integer or bool array (``ib = np.zeros(3, dtype=int);
  ib[0] = v`` rounds ``v``);
- lists reached through two names (``b = a; b.append(v)``, ``b[0] *= 2.0`` through
  a list holding an argument);
- odd names: parameters and locals named like numpy functions and builtins
  (``sum``, ``exp``, ``max``), like srcgrad's own (``t1``, ``x_bar``, ``x_dot``,
  ``tape``, ``out``, ``dout``), and a parameter named ``np`` (the module then
  imports numpy under another name);
- data-dependent branches on what all this computed.

The oracle is numpy itself: :class:`Numeric` differentiates the real function by
central differences, calling it on fresh copies of the arguments each time, so
every alias and view behaves as numpy says. A twin of the program
(:func:`twin_source`) records how far every comparison and every cast is from
flipping, so that examples too close to a jump are left out.

``AVOID`` (in ``test_adversarial_programs.py``) switches off constructs whose bug is
open; each construct has a feature name (``Program.features``).
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

#: parameter names besides x and y: numpy's and builtins' names, srcgrad's own
ODD_PARAMS = ["np", "sum", "exp", "t1", "x_bar", "x_dot", "tape", "out", "dout", "rec"]
#: local names, the same kinds
ODD_LOCALS = ["t1", "t2", "t3", "x_bar", "y_bar", "y_dot", "tape", "out", "rec", "max", "len"]
#: a comparison (or a cast's argument) this close to flipping rejects the example
MARGIN = 0.05


_bases = itertools.count()


@dataclass
class Var:
    name: str
    shape: tuple[int, ...]
    param: bool = False
    #: the array object it refers to: aliases and views share their source's
    base: int = field(default_factory=lambda: next(_bases))


@dataclass
class Program:
    source: str
    params: list[str]
    shapes: list[tuple[int, ...]]
    features: set[str] = field(default_factory=set)
    scalar_output: bool = True

    @property
    def single_precision(self) -> bool:
        """A float32 cast: finite differences see float32 rounding."""
        return "cast float32" in self.features


def views(shape: tuple[int, ...]) -> list[tuple[str, tuple[int, ...], bool]]:
    """(suffix, shape of the result, whether numpy makes it a view) for an array of
    ``shape``: slices, transposes, reshapes."""
    if len(shape) == 1:
        n = shape[0]
        out = [("[:]", (n,), True), ("[::2]", ((n + 1) // 2,), True), ("[1:]", (n - 1,), True)]
        if n >= 3:
            out += [("[0:2]", (2,), True), ("[1:3]", (2,), True)]
        out += [(".reshape(-1)", (n,), True), ("[::-1]", (n,), True)]
        return out
    r, c = shape
    return [
        ("[0]", (c,), True),
        ("[-1]", (c,), True),
        ("[:, 1]", (r,), True),
        (".T", (c, r), True),
        (".reshape(-1)", (r * c,), True),
        ("[:, ::2]", (r, (c + 1) // 2), True),
    ]


def write_indices(shape: tuple[int, ...]) -> list[tuple[str, str]]:
    """(index text, feature) for writes into an array of ``shape``: basic, and fancy with
    repeated indices."""
    out = [("0", "write [int]"), ("-1", "write [int]"), ("::2", "write [slice]")]
    if shape[0] >= 3:
        out.append(("1:3", "write [slice]"))
    out += [
        ("[0, 0]", "write repeated index"),
        ("[1, 0, 1]", "write repeated index"),
        ("np.array([0, 0])", "write repeated index"),
        ("[0, 1]", "write fancy index"),
    ]
    return out


class Gen:
    """Draws one hostile program; ``draw`` is hypothesis' draw function."""

    def __init__(self, draw: Any, avoid: set[str]) -> None:
        self.draw = draw
        self.avoid = avoid
        self.vars: list[Var] = []
        #: (name, shape of the elements, the list object, the bases of its elements)
        self.lists: list[tuple[str, tuple[int, ...], int, list[int]]] = []
        self.lines: list[str] = []
        self.features: set[str] = set()
        self.fresh = itertools.count()
        self.np = "np"
        self.taken: set[str] = set()
        self.in_branch = False  # (a name is rebound only outside branches: see target)

    # -- small helpers ------------------------------------------------------------------
    def choice(self, options: list) -> Any:
        return self.draw(st.sampled_from(options))

    def boolean(self, p: float = 0.5) -> bool:
        return self.draw(st.integers(0, 99)) < int(p * 100)

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def allowed(self, feature: str) -> bool:
        return feature not in self.avoid

    def feature(self, name: str) -> None:
        self.features.add(name)

    def name(self) -> str:
        """A new local name: an odd one where still free, else a plain one."""
        free = [n for n in ODD_LOCALS if n not in self.taken]
        if self.np != "np" and "np" not in self.taken:  # numpy has another name here
            free.append("np")
        if not self.allowed("local named like a tangent"):
            free = [n for n in free if not n.endswith("_dot")]
        if free and self.boolean(0.5) and self.allowed("odd names"):
            name = self.choice(free)
            self.feature("odd names")
            if name.endswith("_dot"):
                self.feature("local named like a tangent")
        else:
            name = f"v{next(self.fresh)}"
        self.taken.add(name)
        return name

    def of_shape(self, shape: tuple[int, ...]) -> list[Var]:
        return [v for v in self.vars if v.shape == shape]

    def base_of(self, value: str) -> int:
        """The array ``value`` (an expression's text) refers to: a name's, where it is a
        name or a view of one (a leaf), else a new one."""
        source = next((v for v in self.vars if _leaf_of(value, v.name)), None)
        return source.base if source is not None else next(_bases)

    def shared(self, var: Var) -> bool:
        """Whether another name, a list or the caller reaches ``var``'s array too (an
        in-place change through ``var`` is then seen there)."""
        others = [v for v in self.vars if v is not var and v.base == var.base]
        in_lists = [b for *_, bases in self.lists for b in bases if b == var.base]
        params = [v for v in self.vars if v.param and v.base == var.base]
        return bool(others or in_lists) or (bool(params) and not var.param)

    def mutated(self, what: str, var: Var) -> str:
        """The feature of an in-place change of ``var`` (``what``: inplace, write)."""
        if self.shared(var):
            return f"{what} through an alias"
        return f"{what} on a parameter" if var.param else what

    # -- expressions --------------------------------------------------------------------
    def leaf(self, shape: tuple[int, ...]) -> str:
        """A name of this shape, a view of one that has it, or (for ()) a reduction."""
        np_ = self.np
        if shape == ():
            if self.boolean(0.3):
                return self.choice(["0.5", "1.5", "-0.75", "2.0"])
            return f"{np_}.mean({self.choice(self.vars).name})"
        same = self.of_shape(shape)
        if same and self.boolean(0.8):
            return self.choice(same).name
        options = [(v, suffix) for v in self.vars for suffix, s, _ in views(v.shape) if s == shape]
        if options:
            v, suffix = self.choice(options)
            return f"{v.name}{suffix}"
        return f"{np_}.mean({self.choice(self.vars).name}) * {np_}.ones({shape!r})"

    def expr(self, shape: tuple[int, ...], depth: int = 2) -> str:
        """A smooth expression of this shape whose values stay moderate."""
        np_ = self.np
        if depth <= 0:
            return self.leaf(shape)
        how = self.choice(["leaf", "unary", "binary", "binary", "scalar"])
        if how == "leaf":
            return self.leaf(shape)
        if how == "unary":
            f = self.choice(["sin", "cos", "tanh"])
            return f"{np_}.{f}({self.expr(shape, depth - 1)})"
        if how == "scalar" and shape != ():
            return f"{self.choice(['0.5', '1.5', '-2.0'])} * {self.expr(shape, depth - 1)}"
        op = self.choice(["+", "-", "*"])
        a, b = self.expr(shape, depth - 1), self.expr(self.choice([shape, ()]), depth - 1)
        if op == "*":
            return f"({a} * {np_}.tanh({b}))"
        return f"({a} {op} {b})"

    # -- statements ---------------------------------------------------------------------
    def statement(self, indent: int, depth: int) -> None:
        options = ["assign", "assign", "alias", "view", "copy", "inplace", "inplace"]
        options += ["write", "write", "cast", "list", "list", "int_buffer"]
        if depth < 1:
            options.append("branch")
        what = self.choice(options)
        if what in self.avoid:
            what = "assign"
        getattr(self, f"stmt_{what}")(indent, depth)

    def target(self, shape: tuple[int, ...]) -> str:
        """A name to assign a new value of ``shape`` to: a new local, or sometimes one
        rebound (a parameter too)."""
        old = [v for v in self.vars if v.shape == shape]
        if old and not self.in_branch and self.boolean(0.25):
            v = self.choice(old)
            if v.param:
                self.feature("parameter rebound")
                v.param = False  # (the name no longer refers to the caller's array)
            v.base = next(_bases)  # a new array
            return v.name
        name = self.name()
        self.vars.append(Var(name, shape))
        return name

    def stmt_assign(self, indent: int, depth: int) -> None:
        shape = self.choice(sorted({v.shape for v in self.vars}))
        value = self.expr(shape)
        # a bare name or a view of one (a leaf) aliases that name's array
        source = next((v for v in self.vars if _leaf_of(value, v.name)), None)
        base = self.base_of(value)
        name = self.target(shape)
        if source is not None:
            self.feature("alias name" if value == source.name else "view")
            next(v for v in self.vars if v.name == name).base = base
        self.emit(indent, f"{name} = {value}")

    def stmt_alias(self, indent: int, depth: int) -> None:
        v = self.choice(self.vars)
        how = self.choice(["name", "asarray"])
        self.feature(f"alias {how}" + (" of a parameter" if v.param else ""))
        np_ = self.np
        value = v.name if how == "name" else f"{np_}.asarray({v.name})"
        name = self.name()
        self.emit(indent, f"{name} = {value}")
        self.vars.append(Var(name, v.shape, base=v.base))

    def stmt_view(self, indent: int, depth: int) -> None:
        v = self.choice(self.vars)
        if v.shape == ():
            return self.stmt_assign(indent, depth)
        suffix, shape, _ = self.choice(views(v.shape))
        self.feature(f"view {suffix}" + (" of a parameter" if v.param else ""))
        name = self.name()
        self.emit(indent, f"{name} = {v.name}{suffix}")
        # (.reshape(-1) of a transposed array is a copy; counted as a view all the same)
        self.vars.append(Var(name, shape, base=v.base))

    def stmt_copy(self, indent: int, depth: int) -> None:
        arrays = [v for v in self.vars if v.shape != ()]
        v = self.choice(arrays)
        np_ = self.np
        how = self.choice([".copy()", "np.copy", "np.array", ".flatten()", ".astype(float)"])
        self.feature(f"copy {how}")
        shape = v.shape
        if how.startswith("."):
            value = f"{v.name}{how}"
            if how == ".flatten()":
                shape = (int(np.prod(v.shape)),)
        else:
            value = f"{np_}.{how[3:]}({v.name})"
        name = self.name()
        self.emit(indent, f"{name} = {value}")
        self.vars.append(Var(name, shape))

    def mutable(self, what: str) -> list[Var]:
        """Arrays an in-place change (``what``: inplace, write) may go through, leaving out
        those whose feature is avoided."""
        return [v for v in self.vars if v.shape != () and self.allowed(self.mutated(what, v))]

    def stmt_inplace(self, indent: int, depth: int) -> None:
        arrays = self.mutable("inplace")
        if not arrays:
            return self.stmt_assign(indent, depth)
        v = self.choice(arrays)
        op = self.choice(["+=", "-=", "*="])
        self.feature(self.mutated("inplace", v))
        self.feature(f"inplace {op}")
        value = self.expr(self.choice([v.shape, ()]), 1)
        if op == "*=":
            value = f"{self.np}.cos({value})" if self.boolean(0.6) else "1.5"
        self.emit(indent, f"{v.name} {op} {value}")

    def stmt_write(self, indent: int, depth: int) -> None:
        arrays = self.mutable("write")
        if not arrays:
            return self.stmt_assign(indent, depth)
        v = self.choice(arrays)
        np_ = self.np
        options = write_indices(v.shape) + [("mask", "write mask")]
        options = [(i, f) for i, f in options if self.allowed(f)]
        index, feature = self.choice(options)
        augmented = self.boolean(0.4)
        op = self.choice(["+=", "*="]) if augmented else "="
        self.feature(feature + (f" {op}" if augmented else ""))
        self.feature(self.mutated("write", v))
        if index == "mask":
            same = self.of_shape(v.shape)
            cond = f"{self.choice(same).name} > {self.choice(['0.25', '-0.5', '0.0'])}"
            self.emit(indent, f"{v.name}[{cond}] {op} {self.expr((), 1)}")
            return
        index = index.replace("np.", f"{np_}.")
        # the shape of what is written (our own index text, evaluated on zeros)
        shape = eval(f"_z[{index}]", {np_: np, "_z": np.zeros(v.shape)}).shape  # noqa: S307
        value = self.expr(shape if self.boolean(0.7) else (), 1)
        if op == "*=":
            value = f"{np_}.cos({value})"
        self.emit(indent, f"{v.name}[{index}] {op} {value}")

    def stmt_cast(self, indent: int, depth: int) -> None:
        arrays = [v for v in self.vars if v.shape != ()]
        v = self.choice(arrays)
        np_ = self.np
        how = self.choice(["int", "bool", "float32", "sum int", "array int"])
        if f"cast {how}" in self.avoid:
            return self.stmt_assign(indent, depth)
        self.feature(f"cast {how}")
        w = self.choice(self.of_shape(v.shape)).name
        scale = self.choice(["1.0", "2.0", "3.0"])
        if how == "int":
            value = f"{w} * ({scale} * {v.name}).astype(int)"
        elif how == "bool":
            value = f"{w} * {v.name}.astype(bool)"
        elif how == "float32":
            value = f"{v.name}.astype({np_}.float32) * {w}"
        elif how == "sum int":
            value = f"{w} * {np_}.sum({scale} * {v.name}, dtype=int)"
        else:
            value = f"{w} * {np_}.array({scale} * {v.name}, dtype=int)"
        self.emit(indent, f"{self.target(v.shape)} = {value}")

    def stmt_int_buffer(self, indent: int, depth: int) -> None:
        """An integer or bool array written into (numpy rounds what is written), then read
        into a float value. The buffer is named ``ib<k>`` (``ibb<k>`` for bool: the twin
        records how far each value written into it is from a jump) and is no one's alias."""
        arrays = [v for v in self.vars if v.shape != ()]
        v = self.choice(arrays)
        np_ = self.np
        how = self.choice(["zeros int", "astype int", "arange", "bool", "full int"])
        if f"int buffer {how}" in self.avoid:
            return self.stmt_assign(indent, depth)
        self.feature(f"int buffer {how}")
        buffer = f"{'ibb' if how == 'bool' else 'ib'}{next(self.fresh)}"
        self.taken.add(buffer)
        made = {
            "zeros int": f"{np_}.zeros({v.shape!r}, dtype=int)",
            "astype int": f"(2.0 * {v.name}).astype(int)",
            "arange": f"{np_}.arange({int(np.prod(v.shape))}).reshape({v.shape!r})",
            "bool": f"{v.name} > 0.0",
            "full int": f"{np_}.full({v.shape!r}, 1)",
        }[how]
        self.emit(indent, f"{buffer} = {made}")
        index, _ = self.choice([(i, f) for i, f in write_indices(v.shape) if "repeated" not in f])
        index = index.replace("np.", f"{np_}.")
        shape = eval(f"_z[{index}]", {np_: np, "_z": np.zeros(v.shape)}).shape  # noqa: S307
        self.emit(indent, f"{buffer}[{index}] = {self.expr(shape if self.boolean(0.7) else (), 1)}")
        w = self.choice(self.of_shape(v.shape)).name
        self.emit(indent, f"{self.target(v.shape)} = {w} * {buffer}")

    def stmt_list(self, indent: int, depth: int) -> None:
        np_ = self.np
        if not self.lists or self.boolean(0.3):
            arrays = [v for v in self.vars if v.shape != ()]
            v = self.choice(arrays)
            name = self.name()
            if self.boolean(0.5):
                self.feature("list of arguments" if v.param else "list of arrays")
                w = self.choice(self.of_shape(v.shape))
                self.emit(indent, f"{name} = [{v.name}, {w.name}]")
                bases = [v.base, w.base]
            else:
                self.feature("empty list")
                value = self.expr(v.shape, 1)
                self.emit(indent, f"{name} = []")
                self.emit(indent, f"{name}.append({value})")
                bases = [self.base_of(value)]
            self.lists.append((name, v.shape, next(_bases), bases))
            return
        name, shape, identity, bases = self.choice(self.lists)
        aliased = sum(1 for entry in self.lists if entry[2] == identity) > 1
        how = self.choice(["alias", "append", "item write", "item inplace", "read"])
        first = [v for v in self.vars if v.base == bases[0]]
        shared = aliased or first or bases.count(bases[0]) > 1
        through = {
            "append": aliased,
            "item write": aliased,
            "item inplace": shared,
        }
        if through.get(how) and not self.allowed(f"list {how} through an alias"):
            how = "read"
        if how == "alias":
            self.feature("list alias")
            other = self.name()
            self.emit(indent, f"{other} = {name}")
            self.lists.append((other, shape, identity, bases))
        elif how == "append":
            self.feature("list append" + (" through an alias" if aliased else ""))
            value = self.expr(shape, 1)
            self.emit(indent, f"{name}.append({value})")
            bases.append(self.base_of(value))
        elif how == "item write":
            self.feature("list item write" + (" through an alias" if aliased else ""))
            value = self.expr(shape, 1)
            self.emit(indent, f"{name}[0] = {value}")
            bases[0] = self.base_of(value)
        elif how == "item inplace":
            # (the element is an array another name or list may reach too)
            self.feature("list item inplace" + (" through an alias" if shared else ""))
            self.emit(indent, f"{name}[0] *= {np_}.cos({self.expr(shape, 1)})")
        else:
            self.feature("list read")
            index = self.choice(["0", "-1"])
            self.emit(indent, f"{self.target(shape)} = {np_}.sin({name}[{index}]) * 0.5")

    def stmt_branch(self, indent: int, depth: int) -> None:
        self.feature("branch")
        np_ = self.np
        v = self.choice(self.vars)
        self.emit(indent, f"if {np_}.sum({v.name}) > {self.choice(['0.0', '0.5', '-0.5'])}:")
        scope, lists = len(self.vars), len(self.lists)
        self.in_branch = True
        for _ in range(self.draw(st.integers(1, 2))):
            self.statement(indent + 1, depth + 1)
        self.in_branch = False
        del self.vars[scope:]  # (a name bound in one branch only is not read after)
        del self.lists[lists:]

    def returned(self, scalar: bool) -> str:
        np_ = self.np
        # read what the statements may have changed: every local and parameter array
        names = [v.name for v in self.vars if v.shape == self.vars[0].shape]
        lists = [f"{np_}.sum({entry[0]}[-1])" for entry in self.lists[:2]]
        total = " + ".join(
            [f"{np_}.sum({np_}.sin({n}) * {n})" for n in names[-3:]]
            + [
                f"{np_}.sum({v.name})" for v in self.vars if v.shape not in ((), self.vars[0].shape)
            ][-2:]
            + lists
        )
        if scalar:
            return total or f"{np_}.sum({self.vars[0].name})"
        full = self.vars[0].shape
        return f"{np_}.tanh({self.expr(full, 1)}) * ({total or 1.0})"


def _leaf_of(text: str, name: str) -> bool:
    """Whether ``text`` is ``name`` or a view of it (``name[...]``, ``name.T``, ...)."""
    if text == name:
        return True
    return text.startswith(name) and any(text == name + suffix for suffix in _SUFFIXES)


_SUFFIXES = {suffix for shape in [(4,), (3,), (2, 3), (3, 2), (6,)] for suffix, *_ in views(shape)}


@st.composite
def programs(draw: Any, avoid: set[str] = frozenset(), max_statements: int = 8) -> Program:
    """A hostile program ``f(x, y[, third])`` (see the module docstring)."""
    gen = Gen(draw, set(avoid))
    shape = draw(st.sampled_from([(4,), (3,), (2, 3)]))
    names = ["x", "y"]
    if draw(st.booleans()) and gen.allowed("odd names"):
        odd = draw(st.sampled_from(ODD_PARAMS))
        if odd == "np" and "parameter named np" in avoid:
            odd = "tape"
        if odd in ("dout", "x_dot") and "parameter named like a derivative's" in avoid:
            odd = "rec"
        names.append(odd)
        gen.feature("parameter named np" if odd == "np" else "odd names")
        if odd in ("dout", "x_dot"):
            gen.feature("parameter named like a derivative's")
    if "np" in names:
        gen.np = draw(st.sampled_from(["numpy", "onp"]))
    elif draw(st.integers(0, 99)) < 20 and gen.allowed("odd names"):
        gen.np = draw(st.sampled_from(["numpy", "onp"]))  # (then a local may be named np)
    gen.taken |= set(names) | {gen.np}
    shapes = [shape] * len(names)
    gen.vars = [Var(n, s, param=True) for n, s in zip(names, shapes)]
    for _ in range(draw(st.integers(1, max_statements))):
        gen.statement(1, 0)
    scalar = draw(st.integers(0, 99)) < 80
    gen.scalar_output = scalar
    gen.emit(1, f"return {gen.returned(scalar)}")
    header = "import numpy\n" if gen.np == "numpy" else f"import numpy as {gen.np}\n"
    source = f"{header}\n\ndef f({', '.join(names)}):\n" + "\n".join(gen.lines) + "\n"
    return Program(source, names, shapes, gen.features, scalar)


# -- the twin: how far each comparison and cast is from flipping ---------------------------------
class _Twin(ast.NodeTransformer):
    """``a > b`` becomes ``_cmp(a, b)``; the argument of a cast to int or bool, ``_cast(v, kind)``
    (it returns ``v``), so that the twin records each one's distance to a jump."""

    def visit_Assign(self, node: ast.Assign) -> Any:
        self.generic_visit(node)
        target = node.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            name = target.value.id  # a write into an integer or bool buffer rounds
            if name.startswith("ib"):
                node.value = self._mark(node.value, "bool" if name.startswith("ibb") else "int")
        return node

    def visit_Compare(self, node: ast.Compare) -> Any:
        self.generic_visit(node)
        assert len(node.ops) == 1 and isinstance(node.ops[0], ast.Gt)
        call = ast.Call(ast.Name("_cmp", ast.Load()), [node.left, node.comparators[0]], [])
        return ast.copy_location(call, node)

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        kind = None
        if isinstance(node.func, ast.Attribute) and node.func.attr == "astype" and node.args:
            kind = ast.unparse(node.args[0])
            node.func.value = self._mark(node.func.value, kind)
            return node
        for k in node.keywords:
            if k.arg == "dtype" and node.args:
                node.args[0] = self._mark(node.args[0], ast.unparse(k.value))
        return node

    @staticmethod
    def _mark(value: ast.expr, kind: str) -> ast.expr:
        return ast.Call(ast.Name("_cast", ast.Load()), [value, ast.Constant(kind)], [])


def twin_source(source: str) -> str:
    tree = _Twin().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree))


class Recorder:
    """The twin's helpers: the path (every comparison's outcome) and the least margin."""

    def __init__(self) -> None:
        self.path: list[Any] = []
        self.margin = np.inf

    def cmp(self, a: Any, b: Any) -> Any:
        result = np.greater(a, b)
        self.path.append(np.ravel(result).tolist())
        self.margin = min(self.margin, float(np.min(np.abs(np.subtract(a, b)), initial=np.inf)))
        return result

    def cast(self, v: Any, kind: str) -> Any:
        a = np.asarray(v, dtype=float)
        if "bool" in kind:
            self.margin = min(self.margin, float(np.min(np.abs(a), initial=np.inf)))
        elif "int" in kind:  # truncation jumps at every integer
            self.margin = min(self.margin, float(np.min(np.abs(a - np.round(a)), initial=np.inf)))
        return v
