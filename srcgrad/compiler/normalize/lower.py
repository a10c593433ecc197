"""Stage 2, normalize: Python in, a small core language out.

In:  a :class:`~srcgrad.compiler.parse.ParsedFunction`.
Out: :class:`Normalized`, a ``FunctionDef`` in the core grammar below, the
map from each core statement to the user's statement it came from (for
comments and errors), and the :class:`~srcgrad.compiler.transform.naming.Namer` that knows
every name in use.

Core grammar (later stages assert they see only this)::

    function := FunctionDef(params, body = [block, Return(atom)])
    block    := stmt*
    stmt     := Assign([Name], rhs)
              | Assign([Subscript(Name, index)], atom)        # y[i] = v, in place
              | If(Name, block, block) | While(Name, block)   # the test recomputed in the body
              | For(Name, Name, block)                        # over a range held in a name
              | Expr(Call(Attribute(Name, "append"), [atom]))   # xs.append(v)
              | Break                                         # only as `if flag: break`
              | Pass
    rhs      := atom | BinOp(atom, op, atom) | UnaryOp(op, atom)
              | Compare(atom, [op], [atom])
              | Call(callee, [atom*], [keyword(name, atom)*])
              | Attribute(atom, name) | Subscript(atom, index)
              | Tuple([atom*]) | List([atom*])
    callee   := static | Attribute(Name, method)      # np.exp  /  x.sum
    index    := atom | Slice(atom?, atom?, atom?) | Tuple([atom | Slice]*)
    atom     := Name | Constant | static
    static   := a dotted name rooted at a global, closure or builtin (np.pi)

Each operation gets its own assignment to a fresh temporary (A-normal form);
augmented assignment is spelled out; tuple targets are unpacked one by one;
``break``, ``continue`` and early ``return`` become flags (see
:mod:`.exits`); ``and``/``or``, conditional expressions and chained
comparisons become ``if``; every ``for`` runs over a range (``for row in X``
is ``for i in range(len(X)): row = X[i]``; over a dict, over its keys: see
``_Iteration.items``); ``np.r_[a, 0:3]`` and ``np.c_[...]`` become the
``np.concatenate`` they compute (:meth:`~.expressions._Expressions.concatenation`).
A variable assigned twice outside
any ``if`` or loop gets a new version (``x``, ``x_1``); one assigned inside
keeps its name, and the reverse transform records what its reassignment
destroys::

    p = 1 / (1 + np.exp(-(x @ w)))       t1 = x @ w
                                         t2 = -t1
                                   ==>   t3 = np.exp(t2)
                                         t4 = 1 + t3
                                         p = 1 / t4

Constructs outside the core are rejected here, with the user's file, line
and source text.

The lowering is in three modules, each a class the next one extends, :class:`_Normalizer`
here the last: :mod:`.expressions` (the state, and expressions), :mod:`.iteration` (what
``for`` loops iterate over) and :mod:`.statements`; the functions of expressions that
need none of the state are :mod:`.expression_helpers`.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..astwalk import nodes
from ..parse import ParsedFunction
from ..parse.names import _local_names
from ..transform.naming import Namer
from .arguments import copy_written_parameters
from .comprehensions import lower_comprehensions
from .containers import lower_containers
from .contexts import lower_contexts
from .dict_comprehensions import LATER, expand_comprehensions
from .dicts import lower_dicts
from .exits import lower_exits
from .expression_helpers import _assigned_in_compound
from .frozen import lower_frozen
from .function_tables import lower_function_tables
from .iteration import _where
from .keywords import with_keywords
from .nested import inline_nested
from .sets import lower_constant_sets
from .statements import _is_docstring, _Statements


@dataclass
class Normalized:
    """A function in the core grammar, with where each statement came from."""

    tree: ast.FunctionDef
    origin: dict[ast.stmt, ast.stmt]  # core statement -> the user's statement
    namer: Namer
    parsed: ParsedFunction
    temps: set[str]  # names of the temporaries normalize made
    aux: str | None = None  # has_aux: the name holding the auxiliary output
    #: ``x += v`` on a variable is spelled ``x = x + v``, a new array, where numpy changes
    #: ``x``'s array in place: each such assignment, and the name whose array numpy changes
    #: (``x_1 = x + v``: ``x``), for the alias analysis to check that no other name sees it
    updates: dict[ast.stmt, str] = dataclasses.field(default_factory=dict)
    #: ``y[i] += v`` is spelled ``t = y[i]; t_1 = t + v; y[i] = t_1``, where numpy changes
    #: the item ``y[i]`` in place if it is an array (a slice, a row, a fancy index: numpy
    #: refuses a float into an integer one; a number item is rebound, then cast): each
    #: such sum, and the name of the item (for ``analyze.in_place``'s check)
    item_updates: dict[ast.stmt, str] = dataclasses.field(default_factory=dict)
    #: generated code differentiated again: the ``check_in_place(x, 'x')`` it runs before
    #: a core statement, as (name, user's name) (see ``analyze.in_place``)
    checks: dict[ast.stmt, tuple[str, str]] = dataclasses.field(default_factory=dict)
    #: the function differentiated, not one it calls (its writes into its arguments go
    #: into copies: ``normalize.arguments``)
    entry: bool = False
    #: the parameters written into, which the entry point copies first, with the user's
    #: statement that first writes into each
    copied: dict[str, ast.stmt] = dataclasses.field(default_factory=dict)
    #: the names loops iterate by position (``for k in X``: ``X``), with where the user's
    #: code names what they iterate (the key ``dicts`` takes; see ``with_dict_keys``)
    iterated: dict[str, tuple[int, int, int, int]] = dataclasses.field(default_factory=dict)
    #: the loops lowered over a dict's keys: where they name the dict, and its keys
    dicts: dict[tuple[int, int, int, int], tuple] = dataclasses.field(default_factory=dict)
    #: the ``split_aux`` calls made on this, in order (lowering again repeats them)
    splits: list[tuple[int, bool]] = dataclasses.field(default_factory=list)
    #: the settings of the function's ``with np.errstate(...)`` blocks, which the driver
    #: puts around its derivatives' bodies (see ``normalize.contexts``)
    errstate: dict[str, str] = dataclasses.field(default_factory=dict)
    #: the dict parameters a dict or set comprehension iterates, with where it names them
    #: (the key ``dicts`` takes): the comprehension is written out over their keys
    keyed: dict[str, tuple[int, int, int, int]] = dataclasses.field(default_factory=dict)
    #: the error for a comprehension over a parameter whose keys are not known, for the
    #: driver to raise where the arguments do not show them either
    waiting: UnsupportedSyntaxError | None = None
    #: the calls of functions of the user's written out where they stand, as nested
    #: functions are (the analysis asks for those given complex numbers): the place of
    #: the user's statement, and the function
    written_out: frozenset[tuple[tuple[int, int, int, int], Any]] = frozenset()

    #: ``p.w`` read off a name (the name as lowered, and ``w``), where the user wrote it
    attributes: dict[tuple[int, int, int, int], tuple[str, str, bool]] = dataclasses.field(
        default_factory=dict
    )
    #: the attribute reads lowered as items: a namedtuple's field by its index, a
    #: dataclass's (given to generated code as a dict: ``pytree.plain``) by its name
    fields: dict[tuple[int, int, int, int], int | str] = dataclasses.field(default_factory=dict)

    def with_dict_keys(
        self,
        dicts: dict[tuple[int, int, int, int], tuple],
        fields: dict[tuple[int, int, int, int], int | str] | None = None,
    ) -> Normalized:
        """The function lowered again, with the loops over the iterables at the places
        ``dicts`` names running over those dicts' keys, and the attribute reads at the
        places ``fields`` names read as items (the analysis finds which values are dicts,
        namedtuples and dataclasses; see ``driver``)."""
        norm = _Normalizer(
            self.parsed, dicts, entry=self.entry, fields=fields, written_out=self.written_out
        ).run()
        for keep, drop in self.splits:
            norm.split_aux(keep, drop)
        return norm

    def with_written_out(
        self, calls: frozenset[tuple[tuple[int, int, int, int], Any]]
    ) -> Normalized:
        """The function lowered again, with the calls ``calls`` names written out (see
        ``written_out``)."""
        norm = _Normalizer(
            self.parsed, self.dicts, entry=self.entry, fields=self.fields, written_out=calls
        ).run()
        for keep, drop in self.splits:
            norm.split_aux(keep, drop)
        return norm

    def split_aux(self, keep: int = 0, drop: bool = False) -> None:
        """For ``has_aux``: every ``out = (value, aux)`` defining the returned name becomes
        ``out = value`` and ``out_aux = aux``; the derivative is of ``value`` alone.
        ``keep=1`` keeps the second element instead, and ``drop`` leaves the other out
        (grad of a jvp: the tangent alone)."""
        ret = self.tree.body[-1]
        assert isinstance(ret, ast.Return) and isinstance(ret.value, ast.Name)
        out = ret.value.id
        aux = self.namer.fresh(f"{out}_aux")
        found = False

        def visit(block: list[ast.stmt]) -> None:
            nonlocal found
            for stmt in list(block):
                if isinstance(stmt, ast.Assign) and [
                    t.id for t in stmt.targets if isinstance(t, ast.Name)
                ] == [out]:
                    value = stmt.value
                    if isinstance(value, ast.Constant) and value.value is None:  # a preset
                        value = ast.Tuple(elts=[value, ast.Constant(None)], ctx=ast.Load())
                    if not (isinstance(value, ast.Tuple) and len(value.elts) == 2):
                        raise self.parsed.locator.error(
                            UnsupportedSyntaxError,
                            self.origin.get(stmt, stmt),
                            "has_aux=True needs the function to return a pair "
                            "`return value, aux`; return a tuple of two here.",
                        )
                    first = ast.Assign(
                        targets=[ast.Name(id=out, ctx=ast.Store())], value=value.elts[keep]
                    )
                    second = ast.Assign(
                        targets=[ast.Name(id=aux, ctx=ast.Store())], value=value.elts[1 - keep]
                    )
                    news = [first] if drop else [first, second]
                    for new in news:
                        ast.copy_location(new, stmt)
                        if stmt in self.origin:
                            self.origin[new] = self.origin[stmt]
                    block[block.index(stmt) : block.index(stmt) + 1] = news
                    found = True
                for field in ("body", "orelse"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        visit(inner)

        visit(self.tree.body)
        if not found:
            raise self.parsed.locator.error(
                UnsupportedSyntaxError,
                self.origin.get(ret, ret),
                "has_aux=True needs the function to return a pair `return value, aux`.",
            )
        self.aux = None if drop else aux
        self.splits.append((keep, drop))

    def definition_text(self, stmt: ast.stmt) -> str:
        """For a message: the user's statement that gave a name its value, a loop by its
        header alone (``for row in X``)."""
        user = self.origin.get(stmt)
        if isinstance(user, ast.For):
            return f"for {ast.unparse(user.target)} in {ast.unparse(user.iter)}"
        return self.origin_text(stmt)

    def origin_text(self, stmt: ast.stmt) -> str:
        """The user's source text of the statement ``stmt`` came from."""
        user = self.origin.get(stmt)
        if user is None:
            return ""
        locator = self.parsed.locator
        if user.lineno == user.end_lineno:
            line = locator.text(user.lineno) or ""
            return line[user.col_offset : user.end_col_offset].strip()
        lines = [locator.text(n) or "" for n in range(user.lineno, user.end_lineno + 1)]
        return " ".join(line.strip() for line in lines)


#: how many times dicts built in the function are lowered (one written out of another)
_DICT_ROUNDS = 4


def normalize(parsed: ParsedFunction, entry: bool = False) -> Normalized:
    """Lower ``parsed`` into the core grammar. ``entry``: the function differentiated,
    not one it calls (see ``normalize.arguments``)."""
    return _Normalizer(with_keywords(parsed), entry=entry).run()


class _Normalizer(_Statements):
    """Lowers one function into the core grammar."""

    # -- function ------------------------------------------------------------
    def run(self) -> Normalized:
        tree = self.parsed.tree
        args = tree.args
        if (args.kwarg and not self.entry) or (args.vararg and self.entry):
            raise self.fail(
                tree,
                "srcgrad differentiates functions with named parameters (positional, "
                "keyword-only, positional-only) and **kwargs; not *args in the "
                "function differentiated (a function it calls may have it): name the "
                "parameters, or pass a tuple of them in as one argument.",
            )
        returned = self.lower_body(tree)
        ret = ast.Return(value=returned)
        ast.copy_location(ret, self.user_stmt)
        self.origin[ret] = self.user_stmt
        new = _core_function(tree, [*self.body, ret])
        return Normalized(
            tree=new,
            origin=self.origin,
            namer=self.namer,
            parsed=self.parsed,
            temps=self.temps,
            iterated=self.iterated,
            dicts=self.dicts,
            attributes=self.attributes,
            fields=self.fields,
            updates=self.updates,
            item_updates=self.item_updates,
            checks=self.checks,
            entry=self.entry,
            copied=self.copied,
            errstate=self.errstate,
            keyed=self.keyed,
            waiting=self.waiting,
            written_out=self.written_out,
        )

    def lower_body(self, tree: ast.FunctionDef) -> ast.expr:
        """Lower the function's body (its docstring left out, its exits made flags) into
        ``self.body``; the atom it returns."""
        body = tree.body
        if body and _is_docstring(body[0]):
            body = body[1:]
        local = _local_names(tree)
        body, self.errstate = lower_contexts(body, self.env, local, self.fail)
        body = lower_frozen(body, self.env, local, set(self.parsed.params), self.namer)
        body = self.expand(lower_containers(body, self.env, local), local)
        body = lower_comprehensions(body, self.namer, self.env)
        body = lower_function_tables(body, self.namer, self.env, local, self.fail)
        inlined = inline_nested(
            body, self.namer, self.env, local, self.fail, self.parsed, self.written_out
        )
        if inlined is not body:  # (the nested functions' own containers and comprehensions)
            inlined = self.expand(lower_containers(inlined, self.env, local), local)
            body = lower_comprehensions(inlined, self.namer, self.env)
        for _ in range(_DICT_ROUNDS):  # (a dict comprehension over a dict: a dict again)
            lowered, body = body, lower_dicts(body, self.namer, self.env, local, self.fail)
            if lowered is body:
                break
        body, _ = expand_comprehensions(body, self.env, local, self.fail, lambda n: None)
        body = lower_constant_sets(body, self.env, local, self.fail)
        if self.entry:
            body, self.copied = copy_written_parameters(body, self.parsed.params)
        lowered = lower_exits(_with_body(tree, body), self.namer)
        body = lowered.body
        self.mutable = _assigned_in_compound(body)
        for name in self.mutable & set(self.current):
            self.current[name] = name
        returned: ast.expr | None = None
        for i, stmt in enumerate(body):
            self.user_stmt = stmt
            if isinstance(stmt, ast.Return):
                if i != len(body) - 1:
                    raise self.fail(body[i + 1], "code after `return` never runs; remove it.")
                returned = self.returned(stmt.value)
            else:
                self.statement(stmt)
        if returned is None:
            raise self.fail(
                tree,
                f"{tree.name!r} has no `return` statement at its end: srcgrad differentiates "
                "the returned value, so return it as the last statement.",
            )
        return returned

    def expand(self, body: list[ast.stmt], local: set[str]) -> list[ast.stmt]:
        """``body`` with its dict and set comprehensions written out where their
        iterations are known (``normalize.dict_comprehensions``): one over a dict
        parameter once the arguments show its keys (``keyed``, ``waiting``); one over a
        dict built in the function is left for ``normalize.dicts``."""
        assigned = {
            n.id
            for s in body
            for n in nodes(s)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        }

        def keyed(node: ast.Name) -> Any:
            name = node.id
            if name in assigned or name not in self.parsed.params:
                return LATER if name in local else None
            self.keyed[name] = _where(node)
            keys = self.dicts.get(_where(node))
            if keys is None:
                self.waiting = self.waiting or self.fail(
                    node,
                    f"srcgrad writes a dict or set comprehension over `{name}` out over its "
                    f"keys, which needs `{name}` to be a dict whose keys are constants (str, "
                    'int); it is not one here. Build a dict with a display (`{"a": a}`) '
                    "and values with a list comprehension (a set of values the code "
                    "computes merges equal ones, which srcgrad does not follow).",
                )
                return ...
            return [(k, _subscript(name, k, node)) for k in keys]

        body, _ = expand_comprehensions(body, self.env, local, self.fail, keyed)
        return body

    def returned(self, value: ast.expr | None) -> ast.expr:
        """The returned atom; an unnamed result gets the name ``out``."""
        if value is None:
            return ast.Constant(None)
        rhs = self.rhs(value)
        if self.is_atom(rhs):
            return rhs
        name = self.namer.fresh("out")
        self.emit(name, rhs)
        return ast.Name(id=name, ctx=ast.Load())


def field_of(structure: Any, attr: str) -> int | str | None:
    """Where a namedtuple's field ``attr`` is (its index) or a dataclass's (its name),
    from the structure of the value (``pytree.structure``); None for anything else."""
    if not (isinstance(structure, tuple) and len(structure) == 2):
        return None
    kind, items = structure
    if isinstance(kind, tuple) and kind[:1] == ("namedtuple",) and attr in kind[2]:
        return kind[2].index(attr)
    if isinstance(kind, tuple) and kind[:1] == ("dataclass",):
        return attr if any(k == attr for k, _ in items) else None
    return None


def is_dataclass_structure(structure: Any) -> bool:
    return (
        isinstance(structure, tuple)
        and len(structure) == 2
        and isinstance(structure[0], tuple)
        and structure[0][:1] == ("dataclass",)
    )


#: the container types (by name, as ``pytree.structure`` notes them) that are dicts
_DICTS = ("dict", "OrderedDict", "defaultdict")


def dict_keys(structure: Any) -> tuple | None:
    """The keys of a dict argument or part of one, from its structure (the rank the
    analysis knows it by: ``("dict", ((key, part), ...))``), where every key can be
    written as a constant; None for anything else."""
    if not (
        isinstance(structure, tuple)
        and len(structure) == 2
        and structure[0] in _DICTS
        and isinstance(structure[1], tuple)
    ):
        return None
    keys = []
    for pair in structure[1]:
        if not (isinstance(pair, tuple) and len(pair) == 2 and _constant(pair[0])):
            return None
        keys.append(pair[0])
    return tuple(keys)


def _constant(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(map(_constant, value))
    return value is None or type(value) in (str, bytes, int, float, bool)


def _subscript(name: str, key: Any, where: ast.AST) -> ast.Subscript:
    """``name[key]``, at ``where``."""
    read = ast.Subscript(
        value=ast.Name(id=name, ctx=ast.Load()), slice=ast.Constant(key), ctx=ast.Load()
    )
    for n in nodes(read):
        ast.copy_location(n, where)
    return read


def _with_body(tree: ast.FunctionDef, body: list[ast.stmt]) -> ast.FunctionDef:
    new = copy.copy(tree)
    new.body = body
    return new


def _core_function(tree: ast.FunctionDef, body: list[ast.stmt]) -> ast.FunctionDef:
    """The core function: ``tree``'s name and positional parameters, with ``body`` (an
    entry point's ``**kwargs`` is a parameter of its own, last: the dict a call's
    keywords make, which the derivative passes it)."""
    args = tree.args
    new = ast.FunctionDef(
        name=tree.name,
        args=ast.arguments(
            posonlyargs=[],
            args=[
                ast.arg(arg=a.arg)
                for a in (
                    *args.posonlyargs,
                    *args.args,
                    *([args.vararg] if args.vararg else []),
                    *args.kwonlyargs,
                    *([args.kwarg] if args.kwarg else []),  # (the dict of the keywords)
                )
            ],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[] if args.kwonlyargs or args.vararg or args.kwarg else list(args.defaults),
        ),
        body=body,
        decorator_list=[],
        returns=None,
    )
    ast.copy_location(new, tree)
    return new
