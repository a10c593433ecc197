"""Stage 2, normalize: Python in, a small core language out.

In:  a :class:`~srcgrad.parse.ParsedFunction`.
Out: :class:`Normalized`, a ``FunctionDef`` in the core grammar below, the
map from each core statement to the user's statement it came from (for
comments and errors), and the :class:`~srcgrad.naming.Namer` that knows
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
:mod:`srcgrad.exits`); ``and``/``or``, conditional expressions and chained
comparisons become ``if``; every ``for`` runs over a range (``for row in X``
is ``for i in range(len(X)): row = X[i]``; over a dict, over its keys: see
``_Normalizer.items``). A variable assigned twice outside
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
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import dataclasses
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...errors import UnsupportedSyntaxError
from ..astwalk import copy_tree
from ..parse import ParsedFunction
from ..transform.naming import Namer, names_in
from .exits import lower_exits

_NOT_YET = "srcgrad does not differentiate {what} yet; {advice}"

_UNSUPPORTED_STMTS: dict[type, tuple[str, str]] = {
    ast.Try: ("`try` statements", "move error handling outside the differentiated function"),
    ast.With: ("`with` statements", "move the context manager outside the function"),
    ast.AsyncWith: ("`async with`", "differentiate a plain synchronous function"),
    ast.AsyncFor: ("`async for`", "differentiate a plain synchronous function"),
    ast.Global: ("`global` declarations", "pass the value in as an argument instead"),
    ast.Nonlocal: ("`nonlocal` declarations", "pass the value in and return the result"),
    ast.Delete: ("`del` statements", "leave the variable in place"),
    ast.FunctionDef: ("nested function definitions", "define the helper at module level"),
    ast.ClassDef: ("class definitions", "define the class at module level"),
    ast.Raise: ("`raise` statements", "check inputs before calling the derivative"),
    ast.Assert: ("`assert` statements", "check inputs before calling the derivative"),
    ast.Import: ("imports inside the function", "import at module level"),
    ast.ImportFrom: ("imports inside the function", "import at module level"),
}
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_STMTS[ast.TryStar] = _UNSUPPORTED_STMTS[ast.Try]
if hasattr(ast, "Match"):
    _UNSUPPORTED_STMTS[ast.Match] = ("`match` statements", "use numpy operations instead")

_UNSUPPORTED_EXPRS: dict[type, tuple[str, str]] = {
    ast.Lambda: ("lambdas inside the function", "define a function at module level"),
    ast.ListComp: ("list comprehensions", "use vectorised numpy operations"),
    ast.SetComp: ("set comprehensions", "use vectorised numpy operations"),
    ast.DictComp: ("dict comprehensions", "use vectorised numpy operations"),
    ast.GeneratorExp: ("generator expressions", "use vectorised numpy operations"),
    ast.Yield: ("generators (`yield`)", "return an array instead"),
    ast.YieldFrom: ("generators (`yield from`)", "return an array instead"),
    ast.Await: ("`await`", "differentiate a plain synchronous function"),
    ast.NamedExpr: ("assignment expressions (`:=`)", "assign in a statement of its own"),
    ast.Starred: ("starred arguments (`*args`)", "pass the arguments one by one"),
    ast.JoinedStr: ("f-strings", "build strings outside the differentiated function"),
    ast.Dict: ("dict displays", "pass dicts in as arguments"),
    ast.Set: ("set displays", "use a tuple or an array"),
}


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
    #: the names loops iterate by position (``for k in X``: ``X``), with where the user's
    #: code names what they iterate (the key ``dicts`` takes; see ``with_dict_keys``)
    iterated: dict[str, tuple[int, int, int, int]] = dataclasses.field(default_factory=dict)
    #: the loops lowered over a dict's keys: where they name the dict, and its keys
    dicts: dict[tuple[int, int, int, int], tuple] = dataclasses.field(default_factory=dict)
    #: the ``split_aux`` calls made on this, in order (lowering again repeats them)
    splits: list[tuple[int, bool]] = dataclasses.field(default_factory=list)

    def with_dict_keys(self, dicts: dict[tuple[int, int, int, int], tuple]) -> Normalized:
        """The function lowered again, with the loops over the iterables at the places
        ``dicts`` names running over those dicts' keys (the analysis finds which values
        are dicts; see ``driver``)."""
        norm = _Normalizer(self.parsed, dicts).run()
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


def normalize(parsed: ParsedFunction) -> Normalized:
    """Lower ``parsed`` into the core grammar."""
    return _Normalizer(parsed).run()


def is_static(node: ast.expr, env: dict[str, Any], local: set[str]) -> bool:
    """Whether ``node`` is a dotted name rooted at a global, closure or builtin."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in env and node.id not in local


class _Normalizer:
    def __init__(
        self, parsed: ParsedFunction, dicts: dict[tuple[int, int, int, int], tuple] | None = None
    ) -> None:
        self.parsed = parsed
        self.env = parsed.env
        self.locator = parsed.locator
        self.namer = Namer(names_in(parsed.tree) | set(parsed.env))
        self.local = {a.arg for a in parsed.tree.args.args}
        self.current: dict[str, str] = {p: p for p in parsed.params}  # user name -> version
        self.body: list[ast.stmt] = []
        self.origin: dict[ast.stmt, ast.stmt] = {}
        self.user_stmt: ast.stmt | None = None
        self.temps: set[str] = set()
        self.dicts = dicts or {}  # where a loop names a dict -> its keys
        self.iterated: dict[str, tuple[int, int, int, int]] = {}
        self.mutable: set[str] = set()  # names assigned inside if/for/while: never versioned
        self.updates: dict[ast.stmt, str] = {}  # see Normalized.updates

    @contextlib.contextmanager
    def block(self, into: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
        """Emit into ``into`` for the duration (the body of an if or a loop)."""
        outer, self.body = self.body, into
        try:
            yield into
        finally:
            self.body = outer

    def place(self, stmt: ast.stmt) -> ast.stmt:
        """Add a compound or control statement to the current block."""
        ast.copy_location(stmt, self.user_stmt)
        self.body.append(stmt)
        self.origin[stmt] = self.user_stmt
        return stmt

    # -- helpers -------------------------------------------------------------
    def fail(self, node: ast.AST, message: str) -> UnsupportedSyntaxError:
        err = self.locator.error(UnsupportedSyntaxError, node, message)
        assert isinstance(err, UnsupportedSyntaxError)
        return err

    def not_yet(self, node: ast.AST, table: dict[type, tuple[str, str]]) -> None:
        what, advice = table[type(node)]
        raise self.fail(node, _NOT_YET.format(what=what, advice=advice))

    def emit(self, target: str, value: ast.expr) -> None:
        stmt = ast.Assign(targets=[ast.Name(id=target, ctx=ast.Store())], value=value)
        ast.copy_location(stmt, self.user_stmt)
        self.body.append(stmt)
        assert self.user_stmt is not None
        self.origin[stmt] = self.user_stmt

    def assign_user(self, name: str, value: ast.expr) -> None:
        """Assign to user variable ``name``, versioning it when reassigned.

        A name assigned inside an ``if`` or a loop keeps one name throughout
        (the transforms record what its reassignment destroys); its new value
        is never computed from itself in one step (``x = x * 2`` goes through
        a temporary), so a derivative rule can tell old from new.
        """
        if name in self.mutable:
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(value)):
                value = ast.Name(id=self.as_temp(value), ctx=ast.Load())
            self.local.add(name)
            self.emit(name, value)
            self.current[name] = name
            return
        if name in self.current:
            version = self.namer.version(name)
        else:
            version = name
            self.local.add(name)
        self.emit(version, value)
        self.current[name] = version

    # -- function ------------------------------------------------------------
    def run(self) -> Normalized:
        tree = self.parsed.tree
        args = tree.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.fail(
                tree,
                "srcgrad differentiates functions with plain positional parameters; "
                "*args, **kwargs, keyword-only and positional-only parameters are not "
                "supported yet.",
            )
        body = tree.body
        if body and _is_docstring(body[0]):
            body = body[1:]
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
        ret = ast.Return(value=returned)
        ast.copy_location(ret, self.user_stmt)
        self.origin[ret] = self.user_stmt
        new = ast.FunctionDef(
            name=tree.name,
            args=ast.arguments(
                posonlyargs=[],
                args=[ast.arg(arg=a.arg) for a in args.args],
                vararg=None,
                kwonlyargs=[],
                kw_defaults=[],
                kwarg=None,
                defaults=list(args.defaults),
            ),
            body=[*self.body, ret],
            decorator_list=[],
            returns=None,
        )
        ast.copy_location(new, tree)
        return Normalized(
            tree=new,
            origin=self.origin,
            namer=self.namer,
            parsed=self.parsed,
            temps=self.temps,
            iterated=self.iterated,
            dicts=self.dicts,
            updates=self.updates,
        )

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

    # -- statements ----------------------------------------------------------
    def statement(self, stmt: ast.stmt) -> None:
        if type(stmt) in _UNSUPPORTED_STMTS:
            self.not_yet(stmt, _UNSUPPORTED_STMTS)
        if isinstance(stmt, ast.Assign):
            value = self.rhs(stmt.value)
            if len(stmt.targets) > 1:  # a = b = value
                first = self.temp()
                self.emit(first, value)
                value = ast.Name(id=first, ctx=ast.Load())
            for target in stmt.targets:
                self.assign_target(target, value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign_target(stmt.target, self.rhs(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Subscript):  # y[i] += v: y[i] = y[i] + v
                array, index = self.subscript_target(stmt.target)
                old = self.as_atom(ast.Subscript(value=array, slice=index, ctx=ast.Load()))
                new = self.as_atom(ast.BinOp(left=old, op=stmt.op, right=self.atom(stmt.value)))
                self.set_item(array, copy_tree(index), new)
                return
            if not isinstance(stmt.target, ast.Name):
                raise self.fail(
                    stmt,
                    "srcgrad does not differentiate in-place updates of attributes; "
                    "assign to a variable instead.",
                )
            left = self.load(stmt.target.id, stmt.target)
            value = ast.BinOp(left=left, op=stmt.op, right=self.atom(stmt.value))
            self.assign_user(stmt.target.id, value)
            if isinstance(left, ast.Name):
                self.updates[self.body[-1]] = left.id
        elif isinstance(stmt, ast.Expr):
            if _is_docstring(stmt):
                return
            if type(stmt.value) in _UNSUPPORTED_EXPRS:
                self.not_yet(stmt.value, _UNSUPPORTED_EXPRS)
            call = stmt.value
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "append"
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id in self.current
                and len(call.args) == 1
                and not call.keywords
            ):  # xs.append(v): xs grows where it stands
                xs = self.load(call.func.value.id, call)
                item = self.atom(call.args[0])
                method = ast.Attribute(value=xs, attr="append", ctx=ast.Load())
                self.place(ast.Expr(value=ast.Call(func=method, args=[item], keywords=[])))
                return
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and getattr(self.env.get(call.func.id), "__srcgrad_helper__", None)
                in ("check_scalar", "check_cotangent")
            ):  # generated code checking its arguments: nothing to differentiate
                return
            if isinstance(call, ast.Call):  # (np.fill_diagonal(D, 1.0), y.sort(): None)
                raise self.fail(
                    stmt,
                    f"`{ast.unparse(call)}` is a call whose result is not used: where it "
                    "changes an array in place (as np.fill_diagonal, np.copyto, .sort(), "
                    ".fill() and out= do), srcgrad cannot follow it; compute a new array "
                    "instead, or write with item assignment into an array the function made "
                    "(`D = D.copy()`, then `D[i, j] = v`). Where it has no effect, remove it.",
                )
            raise self.fail(
                stmt,
                "an expression statement has no effect on the returned value, or changes a "
                "value in place, which srcgrad cannot follow yet; assign its result to a "
                "variable or remove it.",
            )
        elif isinstance(stmt, ast.Pass):
            return
        elif isinstance(stmt, ast.If):
            self.if_statement(stmt)
        elif isinstance(stmt, ast.For):
            self.for_statement(stmt)
        elif isinstance(stmt, ast.While):
            self.while_statement(stmt)
        elif isinstance(stmt, ast.Break):
            self.place(ast.Break())
        elif isinstance(stmt, ast.Return):
            raise self.fail(stmt, "srcgrad supports `return` here only at the end of the function.")
        else:
            raise self.fail(stmt, f"srcgrad does not support `{type(stmt).__name__}` here.")

    def nested(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """Normalize ``stmts`` into a new block (an if's branch, a loop's body)."""
        out: list[ast.stmt] = []
        outer_stmt = self.user_stmt
        with self.block(out):
            for stmt in stmts:
                self.user_stmt = stmt
                self.statement(stmt)
        self.user_stmt = outer_stmt
        return out

    def condition(self, test: ast.expr, branches: list[ast.stmt]) -> ast.Name:
        """The test of an if, as a name nothing in ``branches`` reassigns."""
        atom = self.atom(test)
        if isinstance(atom, ast.Name) and atom.id in _assigned_in_compound(branches, top=True):
            atom = ast.Name(id=self.as_temp(atom), ctx=ast.Load())
        if not isinstance(atom, ast.Name):
            atom = ast.Name(id=self.as_temp(atom, force=True), ctx=ast.Load())
        return atom

    def if_statement(self, stmt: ast.If) -> None:
        test = self.condition(stmt.test, [*stmt.body, *stmt.orelse])
        body = self.nested(stmt.body) or [ast.Pass()]
        orelse = self.nested(stmt.orelse)
        self.place(ast.If(test=test, body=body, orelse=orelse))

    def while_statement(self, stmt: ast.While) -> None:
        """``while test: body`` becomes ``c = test; while c: body; c = test``."""
        flag = self.temp()

        def evaluate() -> None:
            self.emit(flag, self.rhs(stmt.test))

        evaluate()
        body = self.nested(stmt.body)
        outer_stmt = self.user_stmt
        with self.block(body):
            self.user_stmt = stmt
            evaluate()
        self.user_stmt = outer_stmt
        self.place(ast.While(test=ast.Name(id=flag, ctx=ast.Load()), body=body, orelse=[]))
        if stmt.orelse:  # no break (that was lowered to a flag): the else always runs
            for inner in stmt.orelse:
                self.user_stmt = inner
                self.statement(inner)

    def for_statement(self, stmt: ast.For) -> None:
        """Every loop runs over a range: ``for i in r: row = X[i]; ...``."""
        count, items = self.sequence(stmt.iter)
        target = stmt.target
        index_name = (
            target.id if isinstance(target, ast.Name) and items is None else self.namer.fresh("i")
        )
        self.mutable.add(index_name)
        self.local.add(index_name)
        self.current[index_name] = index_name
        body: list[ast.stmt] = []
        with self.block(body):
            if items is not None:
                index = ast.Name(id=index_name, ctx=ast.Load())
                self.assign_target(target, self.rhs_value(items(index)))
        body.extend(self.nested(stmt.body))
        loop = ast.For(
            target=ast.Name(id=index_name, ctx=ast.Store()), iter=count, body=body, orelse=[]
        )
        self.place(loop)
        for inner in stmt.orelse:
            self.user_stmt = inner
            self.statement(inner)

    def sequence(self, node: ast.expr) -> tuple[ast.Name, Any]:
        """What a for loop iterates over: a name holding a range, and how to get
        the item for an index (None when the items are the range's own)."""
        call = node if isinstance(node, ast.Call) and not node.keywords else None
        func = self.builtin_called(call)
        if func == "range":
            return self.range_atom([self.atom(a) for a in call.args]), None
        if func == "reversed" and len(call.args) == 1:
            inner = call.args[0]
            if self.builtin_called(inner if isinstance(inner, ast.Call) else None) == "range":
                r = self.range_atom([self.atom(a) for a in inner.args])
                return self.as_name(ast.Subscript(value=r, slice=_step(-1), ctx=ast.Load())), None
            seq, item = self.items(inner)
            r = self.range_atom([self.len_of(seq)])
            flipped = self.as_name(ast.Subscript(value=r, slice=_step(-1), ctx=ast.Load()))
            return flipped, item
        if func == "enumerate" and len(call.args) == 1:
            # positions 0, 1, ... count the items; the underlying index is r[p]
            r, items = self.sequence(call.args[0])
            positions = self.range_atom([self.len_of(r)])

            def item(p: ast.expr) -> ast.expr:
                index = self.as_atom(ast.Subscript(value=r, slice=p, ctx=ast.Load()))
                value = index if items is None else self.as_atom(self.rhs_value(items(index)))
                return ast.Tuple(elts=[p, value], ctx=ast.Load())

            return positions, item
        if func == "zip" and call.args:
            parts = [self.items(a) for a in call.args]
            lengths = [self.len_of(seq) for seq, _ in parts]
            n = lengths[0]
            if len(lengths) > 1:
                n = self.as_name(_call("min", lengths))
            return self.range_atom([n]), lambda i: ast.Tuple(
                elts=[self.as_atom(self.rhs_value(item(i))) for _, item in parts], ctx=ast.Load()
            )
        seq, item = self.items(node)
        return self.range_atom([self.len_of(seq)]), item

    def items(self, node: ast.expr) -> tuple[ast.expr, Any]:
        """What ``for item in node`` reads: an atom with as many items, and the item at a
        position (an expression over atoms, emitted where the loop's body begins).

        A list, tuple or array is read by position: ``for row in X`` is ``row = X[i]``.
        A dict gives its keys, and ``d.keys()``, ``d.values()`` and ``d.items()`` what
        they name: over the keys the analysis found it to have (``self.dicts``, a tuple
        of constants: its structure is part of what the code is made for), or for a
        global dict, over ``list(d)`` when the code runs. Until the analysis has seen
        a value, it is read by position, and where the loop names it is noted in
        ``self.iterated`` for the analysis to look it up.
        """
        method = None
        target = node
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("keys", "values", "items")
            and not node.args
            and not node.keywords
            and (
                not self.is_static(node.func.value)
                or isinstance(_static_value(node.func.value, self.env), dict)
            )
        ):
            method, target = node.func.attr, node.func.value
        keys = self.dicts.get(_where(target))
        if keys is not None:  # a dict whose keys the analysis found: a tuple of them
            seq: ast.expr = self.as_name(
                ast.Tuple(elts=[ast.Constant(k) for k in keys], ctx=ast.Load())
            )
            whole = self.atom(target) if method in ("values", "items") else seq
        elif self.is_static(target) and isinstance(_static_value(target, self.env), dict):
            self.env.setdefault("list", builtins.list)  # a global's keys as the code runs
            seq = self.as_name(_call("list", [_copy(target)]))
            whole = _copy(target)
        else:  # by position, unless the analysis finds a dict here (see the driver)
            seq = whole = self.atom(target)
            if isinstance(seq, ast.Name):
                self.iterated[seq.id] = _where(target)
        if method in (None, "keys"):
            return seq, lambda i: ast.Subscript(value=seq, slice=i, ctx=ast.Load())

        def item(i: ast.expr) -> ast.expr:
            key = self.as_atom(ast.Subscript(value=seq, slice=i, ctx=ast.Load()))
            value = ast.Subscript(value=whole, slice=key, ctx=ast.Load())
            if method == "values":
                return value
            return ast.Tuple(elts=[key, self.as_atom(value)], ctx=ast.Load())

        return seq, item

    def builtin_called(self, call: ast.Call | None) -> str | None:
        if call is None or not isinstance(call.func, ast.Name):
            return None
        name = call.func.id
        if name in self.current or name not in self.env:
            return None
        return name if self.env[name] is getattr(builtins, name, None) else None

    def range_atom(self, args: list[ast.expr]) -> ast.Name:
        return self.as_name(_call("range", args))

    def len_of(self, seq: ast.expr) -> ast.Name:
        return self.as_name(_call("len", [seq]))

    def as_name(self, value: ast.expr) -> ast.Name:
        for name in ("range", "len", "min"):
            self.env.setdefault(name, getattr(builtins, name))
        return ast.Name(id=self.as_temp(value, force=True), ctx=ast.Load())

    def rhs_value(self, node: ast.expr) -> ast.expr:
        """A synthesized item expression (already over atoms) as a core rhs."""
        if isinstance(node, ast.Tuple):
            return ast.Tuple(
                elts=[self.as_atom(self.rhs_value(e)) for e in node.elts], ctx=ast.Load()
            )
        return node

    def assign_target(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.assign_user(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise self.fail(target, "starred assignment targets are not supported yet.")
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                stored = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
                items = [
                    ast.Name(id=self.as_temp(v), ctx=ast.Load())
                    if isinstance(v, ast.Name)
                    and self.current.get(v.id, v.id)
                    in stored | {self.current.get(t, t) for t in stored}
                    else self.as_atom(v)
                    for v in value.elts
                ]
            else:
                whole = self.as_atom(value)
                items = [
                    ast.Subscript(value=whole, slice=ast.Constant(i), ctx=ast.Load())
                    for i in range(len(target.elts))
                ]
            # evaluate every element before assigning any (a, b = b, a)
            items = [self.as_atom(item) for item in items]
            for sub, item in zip(target.elts, items):
                self.assign_target(sub, item)
        elif isinstance(target, ast.Subscript):
            array, index = self.subscript_target(target)
            self.set_item(array, index, self.as_atom(value))
        else:
            raise self.fail(
                target,
                "srcgrad does not differentiate assignments to attributes; "
                "assign to a variable instead.",
            )

    def subscript_target(self, target: ast.Subscript) -> tuple[ast.Name, ast.expr]:
        """The array and index of ``y[index] = ...``, where ``y`` is a local name."""
        if not isinstance(target.value, ast.Name) or target.value.id not in self.current:
            raise self.fail(
                target,
                "srcgrad differentiates writes `y[i] = v` only into a variable of the function "
                "itself; write into an array made here (np.zeros_like(x), x.copy()).",
            )
        array = self.load(target.value.id, target)
        assert isinstance(array, ast.Name)
        return array, self.index(target.slice)

    def set_item(self, array: ast.Name, index: ast.expr, value: ast.expr) -> None:
        """``y[index] = value``: a core statement that gives ``y`` a new value in place."""
        target = ast.Subscript(
            value=ast.Name(id=array.id, ctx=ast.Load()), slice=index, ctx=ast.Store()
        )
        stmt = ast.Assign(targets=[target], value=value)
        ast.copy_location(stmt, self.user_stmt)
        self.body.append(stmt)
        self.origin[stmt] = self.user_stmt

    # -- expressions ---------------------------------------------------------
    def load(self, name: str, node: ast.AST) -> ast.expr:
        if name in self.current:
            return ast.Name(id=self.current[name], ctx=ast.Load())
        if name in self.env:
            return ast.Name(id=name, ctx=ast.Load())
        raise self.fail(node, f"variable {name!r} is used before it is assigned.")

    def is_atom(self, node: ast.expr) -> bool:
        return isinstance(node, (ast.Name, ast.Constant)) or self.is_static(node)

    def as_atom(self, value: ast.expr) -> ast.expr:
        """Store a core right-hand side in a temporary unless it is an atom."""
        if self.is_atom(value):
            return value
        name = self.temp()
        self.emit(name, value)
        return ast.Name(id=name, ctx=ast.Load())

    def as_temp(self, value: ast.expr, force: bool = False) -> str:
        """A fresh temporary holding ``value``."""
        name = self.temp()
        self.emit(name, value)
        return name

    def temp(self) -> str:
        name = self.namer.temp()
        self.temps.add(name)
        return name

    def atom(self, node: ast.expr) -> ast.expr:
        return self.as_atom(self.rhs(node))

    def is_static(self, node: ast.expr) -> bool:
        return is_static(node, self.env, set(self.current))

    def rhs(self, node: ast.expr) -> ast.expr:
        """Lower ``node`` to a core right-hand side (one operation on atoms)."""
        if type(node) in _UNSUPPORTED_EXPRS:
            self.not_yet(node, _UNSUPPORTED_EXPRS)
        if isinstance(node, ast.Constant):
            return ast.Constant(value=node.value)
        if isinstance(node, ast.Name):
            return self.load(node.id, node)
        if isinstance(node, ast.Attribute):
            if self.is_static(node):
                return _copy(node)
            return ast.Attribute(value=self.atom(node.value), attr=node.attr, ctx=ast.Load())
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.operand, ast.Constant) and isinstance(node.op, (ast.USub, ast.UAdd)):
                value = node.operand.value
                if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
                    return ast.Constant(value=-value if isinstance(node.op, ast.USub) else value)
            return ast.UnaryOp(op=node.op, operand=self.atom(node.operand))
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.IfExp):
            result = self.temp()
            test = self.condition(node.test, [])
            body: list[ast.stmt] = []
            orelse: list[ast.stmt] = []
            with self.block(body):
                self.emit(result, self.rhs(node.body))
            with self.block(orelse):
                self.emit(result, self.rhs(node.orelse))
            self.place(ast.If(test=test, body=body, orelse=orelse))
            return ast.Name(id=result, ctx=ast.Load())
        if isinstance(node, ast.BoolOp):
            # a and b: the value of a if it is false, else the value of b
            result = self.temp()
            self.emit(result, self.rhs(node.values[0]))
            for value in node.values[1:]:
                rest: list[ast.stmt] = []
                with self.block(rest):
                    self.emit(result, self.rhs(value))
                test = ast.Name(
                    id=self.as_temp(ast.Name(id=result, ctx=ast.Load())), ctx=ast.Load()
                )
                if isinstance(node.op, ast.And):
                    self.place(ast.If(test=test, body=rest, orelse=[]))
                else:
                    self.place(ast.If(test=test, body=[ast.Pass()], orelse=rest))
            return ast.Name(id=result, ctx=ast.Load())
        if isinstance(node, ast.Compare) and len(node.ops) > 1:
            # a < b < c: (a < b) and (b < c), with b evaluated once
            result = self.temp()
            left = self.atom(node.left)
            right = self.atom(node.comparators[0])
            self.emit(result, ast.Compare(left=left, ops=[node.ops[0]], comparators=[right]))
            for op, comparator in zip(node.ops[1:], node.comparators[1:]):
                rest = []
                with self.block(rest):
                    nxt = self.atom(comparator)
                    self.emit(result, ast.Compare(left=right, ops=[op], comparators=[nxt]))
                test = ast.Name(
                    id=self.as_temp(ast.Name(id=result, ctx=ast.Load())), ctx=ast.Load()
                )
                self.place(ast.If(test=test, body=rest, orelse=[]))
                right = nxt
            return ast.Name(id=result, ctx=ast.Load())
        if isinstance(node, ast.Compare):
            left = self.atom(node.left)
            return ast.Compare(
                left=left, ops=node.ops, comparators=[self.atom(node.comparators[0])]
            )
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Subscript):
            value = self.atom(node.value)
            return ast.Subscript(value=value, slice=self.index(node.slice), ctx=ast.Load())
        if isinstance(node, (ast.Tuple, ast.List)):
            elts = [self.atom(e) for e in node.elts]
            if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in elts):
                return ast.Constant(value=tuple(e.value for e in elts))
            cls = ast.Tuple if isinstance(node, ast.Tuple) else ast.List
            return cls(elts=elts, ctx=ast.Load())
        text = self.locator.segment(node)
        raise self.fail(node, f"srcgrad does not support the expression `{text}`.")

    def binary(self, node: ast.BinOp) -> ast.expr:
        """A tree of binary operations, lowered with a stack of its own rather than by
        recursion, so that a long sum (``x + x*2 + ... + x*1000``, whose tree is as deep
        as it has terms) lowers like a short one; operands are evaluated in Python's
        order (the left one, then the right one, then the operation)."""
        done: list[ast.expr] = []  # the atoms of the operands lowered so far
        todo: list[tuple[ast.expr, bool]] = [(node, False)]
        while todo:
            current, operands_done = todo.pop()
            if not isinstance(current, ast.BinOp):
                done.append(self.atom(current))
            elif not operands_done:
                todo.extend([(current, True), (current.right, False), (current.left, False)])
            else:
                right = done.pop()
                value = ast.BinOp(left=done.pop(), op=current.op, right=right)
                done.append(value if current is node else self.as_atom(value))
        return done[0]

    def call(self, node: ast.Call) -> ast.expr:
        func = node.func
        if self.is_static(func):
            callee: ast.expr = _copy(func)
        elif isinstance(func, ast.Attribute):
            callee = ast.Attribute(value=self.atom(func.value), attr=func.attr, ctx=ast.Load())
        else:
            raise self.fail(
                node,
                "srcgrad can only call functions and methods by name, not "
                f"`{self.locator.segment(func)}`.",
            )
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.not_yet(arg, _UNSUPPORTED_EXPRS)
        args = [self.atom(a) for a in node.args]
        keywords = []
        for kw in node.keywords:
            if kw.arg is None:
                raise self.fail(node, "`**kwargs` in calls is not supported yet.")
            keywords.append(ast.keyword(arg=kw.arg, value=self.atom(kw.value)))
        return ast.Call(func=callee, args=args, keywords=keywords)

    def index(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Slice):
            parts = [
                None if p is None else self.atom(p) for p in (node.lower, node.upper, node.step)
            ]
            return ast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(node, ast.Tuple):
            return ast.Tuple(elts=[self.index(e) for e in node.elts], ctx=ast.Load())
        return self.atom(node)


def _where(node: ast.expr) -> tuple[int, int, int, int]:
    """Where ``node`` is in the user's source: what names a loop's iterable across
    lowerings."""
    return (node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0)


def _static_value(node: ast.expr, env: dict[str, Any]) -> Any:
    """The value of a dotted name rooted at a global (attributes of modules only)."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    value = env.get(node.id) if isinstance(node, ast.Name) else None
    for attr in reversed(attrs):
        value = getattr(value, attr, None) if isinstance(value, types.ModuleType) else None
    return value


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


def _call(name: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def _step(step: int) -> ast.Slice:
    return ast.Slice(lower=None, upper=None, step=ast.Constant(step))


def _with_body(tree: ast.FunctionDef, body: list[ast.stmt]) -> ast.FunctionDef:
    new = copy.copy(tree)
    new.body = body
    return new


def _assigned_in_compound(stmts: list[ast.stmt], top: bool = False) -> set[str]:
    """Names assigned inside if/for/while statements (or anywhere, if ``top``),
    and arrays written into (``y[i] = v`` changes ``y`` where it stands)."""
    found: set[str] = set()
    for node in (n for stmt in stmts for n in ast.walk(stmt)):
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        for t in targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                found.add(t.value.id)
        func = getattr(node, "func", None)
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "append"
            and isinstance(func.value, ast.Name)
        ):
            found.add(func.value.id)
    for stmt in stmts:
        if top or isinstance(stmt, (ast.If, ast.For, ast.While)):
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    found.add(node.id)
    return found


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _copy(node: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(node), mode="eval").body
