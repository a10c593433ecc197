"""Part of normalize: the lowering of expressions. :class:`_Expressions` holds the state
every part of the lowering shares (the block statements go into, each user name's current
version, the temporaries made) and lowers an expression to a core right-hand side, one
operation on atoms, emitting a temporary for each operation inside it."""

from __future__ import annotations

import ast
import builtins
import contextlib
from collections.abc import Iterator

from ...errors import UnsupportedSyntaxError
from ..parse import ParsedFunction
from ..transform.naming import Namer, names_in
from .call_arguments import CallArguments
from .concatenation import IndexConcatenation
from .dicts import make_dict
from .expression_helpers import (  # (is_static: analyze's alias modules import it from here)
    _FORMAT_CALLS,
    _assigned_in_compound,
    _copy,
    _static_value,  # noqa: F401  (statements.py, written_out.py)
    _unpacked_args,
    _unpacked_keywords,
    bound_in,
    is_static,
    spelled_out,
)

_NOT_YET = "srcgrad does not differentiate {what} yet; {advice}"


_UNSUPPORTED_EXPRS: dict[type, tuple[str, str]] = {
    ast.Lambda: (
        "lambdas here",
        "bind it to a name first (`sq = lambda t: t * t`, then `sq(x)`), or define a "
        "function at module level",
    ),
    ast.ListComp: ("list comprehensions", "use vectorised numpy operations"),
    ast.SetComp: ("set comprehensions", "use vectorised numpy operations"),
    ast.DictComp: ("dict comprehensions", "use vectorised numpy operations"),
    ast.GeneratorExp: ("generator expressions", "use vectorised numpy operations"),
    ast.Yield: ("generators (`yield`)", "return an array instead"),
    ast.YieldFrom: ("generators (`yield from`)", "return an array instead"),
    ast.Await: ("`await`", "differentiate a plain synchronous function"),
    ast.NamedExpr: ("assignment expressions (`:=`)", "assign in a statement of its own"),
    ast.Starred: ("starred arguments (`*args`)", "pass the arguments one by one"),
    ast.JoinedStr: (
        "f-strings in a function that rebinds `format`, `str`, `repr` or `ascii`",
        "rename that variable, or build the string outside the differentiated function",
    ),
    ast.Dict: (
        "dict displays with keys computed in the function (or a key twice)",
        "write each key once, as a constant, or pass dicts in as arguments",
    ),
    ast.Set: ("set displays", "use a tuple or an array"),
}


class _Expressions(CallArguments, IndexConcatenation):
    """The lowering's state, and the lowering of expressions (statements are lowered by
    a subclass, :class:`~.statements._Statements`)."""

    def __init__(
        self,
        parsed: ParsedFunction,
        dicts: dict[tuple[int, int, int, int], tuple] | None = None,
        entry: bool = False,
        fields: dict[tuple[int, int, int, int], int | str] | None = None,
        written_out: frozenset = frozenset(),
    ) -> None:
        self.parsed = parsed
        self.written_out = written_out  # see Normalized.written_out
        self.entry = entry  # see Normalized.entry
        self.copied: dict[str, ast.stmt] = {}  # see Normalized.copied
        self.env = parsed.env
        self.locator = parsed.locator
        self.namer = Namer(names_in(parsed.tree) | set(parsed.env))
        self.local = set(parsed.params)
        self.current: dict[str, str] = {p: p for p in parsed.params}  # user name -> version
        self.body: list[ast.stmt] = []
        self.origin: dict[ast.stmt, ast.stmt] = {}
        self.user_stmt: ast.stmt | None = None
        self.temps: set[str] = set()
        self.dicts = dicts or {}  # where a loop names a dict -> its keys
        self.fields = fields or {}  # see Normalized.fields
        self.attributes: dict[tuple[int, int, int, int], tuple[str, str, bool]] = {}
        self.iterated: dict[str, tuple[int, int, int, int]] = {}
        self.mutable: set[str] = set()  # names assigned inside if/for/while: never versioned
        self.updates: dict[ast.stmt, str] = {}  # see Normalized.updates
        self.item_updates: dict[ast.stmt, str] = {}  # see Normalized.item_updates
        self.checks: dict[ast.stmt, tuple[str, str]] = {}  # see Normalized.checks
        self.pending_check: tuple[str, str] | None = None  # for the next statement
        self.errstate: dict[str, str] = {}  # see Normalized.errstate
        self.keyed: dict[str, tuple[int, int, int, int]] = {}  # see Normalized.keyed
        self.waiting: UnsupportedSyntaxError | None = None  # see Normalized.waiting

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
        if self.pending_check is not None:
            self.checks[stmt], self.pending_check = self.pending_check, None
        assert self.user_stmt is not None
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

    def builtins_unshadowed(self, names: tuple[str, ...]) -> bool:
        """Whether each of ``names`` means Python's builtin of that name here (no local or
        global of the user's hides it); then generated code may call it by that name."""
        local = self.local | set(self.current) | bound_in(self.parsed.tree)
        return all(
            name not in local
            and self.env.setdefault(name, getattr(builtins, name)) is getattr(builtins, name)
            for name in names
        )

    def rhs(self, node: ast.expr) -> ast.expr:
        """Lower ``node`` to a core right-hand side (one operation on atoms)."""
        if isinstance(node, ast.Dict) and "dict" not in self.local | set(self.current):
            made = make_dict(node, node)  # (constant keys: the call of dict that makes it)
            if made is not None and self.env.setdefault("dict", builtins.dict) is builtins.dict:
                return self.call(made)
        if isinstance(node, ast.JoinedStr) and self.builtins_unshadowed(_FORMAT_CALLS):
            return self.rhs(spelled_out(node))
        if type(node) in _UNSUPPORTED_EXPRS:
            self.not_yet(node, _UNSUPPORTED_EXPRS)
        if isinstance(node, ast.Constant):
            return ast.Constant(value=node.value)
        if isinstance(node, ast.Name):
            return self.load(node.id, node)
        if isinstance(node, ast.Attribute):
            if self.is_static(node):
                return _copy(node)
            value = self.atom(node.value)
            return self.attribute(value, node, method=False)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.IfExp):
            return self.conditional(node)
        if isinstance(node, ast.BoolOp):
            return self.boolean(node)
        if isinstance(node, ast.Compare) and len(node.ops) > 1:
            return self.chained_comparison(node)
        if isinstance(node, ast.Compare):
            left = self.atom(node.left)
            return ast.Compare(
                left=left, ops=node.ops, comparators=[self.atom(node.comparators[0])]
            )
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Subscript):
            kind = self.index_concatenator(node.value)
            if kind is not None:
                return self.concatenation(node, kind)
            value = self.atom(node.value)
            return ast.Subscript(value=value, slice=self.index(node.slice), ctx=ast.Load())
        if isinstance(node, (ast.Tuple, ast.List)):
            return self.display(node)
        text = self.locator.segment(node)
        raise self.fail(node, f"srcgrad does not support the expression `{text}`.")

    def unary(self, node: ast.UnaryOp) -> ast.expr:
        """``-x``, ``not x``, ``~x``; a signed number is a constant (``-1``)."""
        if isinstance(node.operand, ast.Constant) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = node.operand.value
            if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
                return ast.Constant(value=-value if isinstance(node.op, ast.USub) else value)
        return ast.UnaryOp(op=node.op, operand=self.atom(node.operand))

    def conditional(self, node: ast.IfExp) -> ast.expr:
        """``a if test else b``: an ``if`` giving a temporary either value."""
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

    def boolean(self, node: ast.BoolOp) -> ast.expr:
        """``a and b``, ``a or b``: ``if``s evaluating each operand only where needed."""
        # a and b: the value of a if it is false, else the value of b
        result = self.temp()
        self.emit(result, self.rhs(node.values[0]))
        for value in node.values[1:]:
            rest: list[ast.stmt] = []
            with self.block(rest):
                self.emit(result, self.rhs(value))
            test = ast.Name(id=self.as_temp(ast.Name(id=result, ctx=ast.Load())), ctx=ast.Load())
            if isinstance(node.op, ast.And):
                self.place(ast.If(test=test, body=rest, orelse=[]))
            else:
                self.place(ast.If(test=test, body=[ast.Pass()], orelse=rest))
        return ast.Name(id=result, ctx=ast.Load())

    def chained_comparison(self, node: ast.Compare) -> ast.expr:
        """``a < b < c``: one comparison after another, while each is true."""
        # a < b < c: (a < b) and (b < c), with b evaluated once
        result = self.temp()
        left = self.atom(node.left)
        right = self.atom(node.comparators[0])
        self.emit(result, ast.Compare(left=left, ops=[node.ops[0]], comparators=[right]))
        for op, comparator in zip(node.ops[1:], node.comparators[1:]):
            rest: list[ast.stmt] = []
            with self.block(rest):
                nxt = self.atom(comparator)
                self.emit(result, ast.Compare(left=right, ops=[op], comparators=[nxt]))
            test = ast.Name(id=self.as_temp(ast.Name(id=result, ctx=ast.Load())), ctx=ast.Load())
            self.place(ast.If(test=test, body=rest, orelse=[]))
            right = nxt
        return ast.Name(id=result, ctx=ast.Load())

    def display(self, node: ast.Tuple | ast.List) -> ast.expr:
        """A tuple or list display of atoms (a tuple of constants is a constant)."""
        elts = [self.atom(e) for e in node.elts]
        if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in elts):
            return ast.Constant(value=tuple(e.value for e in elts))
        cls = ast.Tuple if isinstance(node, ast.Tuple) else ast.List
        return cls(elts=elts, ctx=ast.Load())

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
        callee = self._callee(node)
        args = self._call_args(callee, node)
        keywords = []
        for kw in _unpacked_keywords(node.keywords):
            if kw.arg is None:
                raise self.fail(
                    node,
                    "`**kwargs` in calls is supported only of a dict display with constant "
                    'string keys (`f(**{"w": w})`); pass the arguments by name instead.',
                )
            keywords.append(ast.keyword(arg=kw.arg, value=self.atom(kw.value)))
        return ast.Call(func=callee, args=args, keywords=keywords)

    def _callee(self, node: ast.Call) -> ast.expr:
        """What a call calls: a name the analysis resolves, or a method of an atom."""
        func = node.func
        if self.is_static(func):
            callee: ast.expr = _copy(func)
        elif (
            isinstance(func, ast.Name)
            and func.id in self.parsed.params
            and self.current.get(func.id) == func.id
            and func.id not in self.mutable
        ):  # a function passed in: the analysis resolves it from the argument
            callee = ast.Name(id=func.id, ctx=ast.Load())
        elif isinstance(func, ast.Attribute):
            callee = self.attribute(self.atom(func.value), func, method=True)
        elif isinstance(func, ast.Name) and func.id in self.current:
            raise self.fail(
                node,
                f"srcgrad calls functions by the name they have where it reads the code; "
                f"`{func.id}` is a variable here (bound by a call srcgrad does not follow, or "
                "taken out of a container). A closure a factory makes is followed where the "
                "function binds it once, at its top level (`step = make_step(h)`), from a "
                "factory that defines one function and returns it; otherwise define the "
                "function in this function (a nested `def` or a lambda bound to a name) or "
                "at module level, and pass what the closure captures as an argument.",
            )
        elif isinstance(func, ast.Subscript):
            raise self.fail(
                node,
                "srcgrad calls a function taken out of a tuple, list or dict by a constant "
                'index or key (`fs[0](x)`, `fs["a"](x)`) of a display bound once, at the '
                "top level of the function, and never changed or passed on; "
                f"`{ast.unparse(func)}` is not one of those. Call each function by its name "
                "(under an `if` that chooses), or loop over the functions themselves "
                "(`for f in fs:`).",
            )
        else:
            raise self.fail(
                node,
                "srcgrad can only call functions and methods by name, not "
                f"`{self.locator.segment(func)}`.",
            )
        return callee

    def _call_args(self, callee: ast.expr, node: ast.Call) -> list[ast.expr]:
        """A call's positional arguments as atoms; those a ``*args`` parameter takes,
        packed into a tuple it passes starred."""
        given = _unpacked_args(node.args)
        star = self.var_positional(callee, node)
        if star is not None and not (
            len(given) == star + 1
            and isinstance(given[-1], ast.Starred)
            and isinstance(given[-1].value, ast.Name)
        ):  # f(a, b, c) of f(a, *xs): f(a, *t), t = (b, c)
            named, extra = given[:star], given[star:]
            if any(isinstance(a, ast.Starred) for a in given):
                raise self.fail(
                    node,
                    "srcgrad passes the arguments of a function with *args as a tuple it "
                    "makes, from arguments it can count: pass them one by one here.",
                )
            pack = ast.Tuple(elts=[self.atom(a) for a in extra], ctx=ast.Load())
            args = [self.atom(a) for a in named]
            args.append(ast.Starred(value=ast.Name(id=self.as_temp(pack), ctx=ast.Load())))
        else:
            spread = self.spread(callee, given, node) if star is None else None
            for arg in given:
                if isinstance(arg, ast.Starred) and star is None and spread is None:
                    self.not_yet(arg, _UNSUPPORTED_EXPRS)
            args = spread or [
                ast.Starred(value=self.load(a.value.id, a), ctx=ast.Load())
                if isinstance(a, ast.Starred)
                else self.atom(a)
                for a in given
            ]
        return args

    def attribute(self, value: ast.expr, node: ast.Attribute, method: bool) -> ast.expr:
        """``value.attr`` (noted in ``attributes``), or the item it is where ``fields``
        says the value is a namedtuple or a dataclass (a method stays an attribute)."""
        where = (node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0)
        if isinstance(value, ast.Name):
            self.attributes[where] = (value.id, node.attr, method)
        if where in self.fields and not method:
            key = ast.Constant(self.fields[where])
            return ast.Subscript(value=value, slice=key, ctx=ast.Load())
        return ast.Attribute(value=value, attr=node.attr, ctx=ast.Load())

    def index(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Slice):
            parts = [
                None if p is None else self.atom(p) for p in (node.lower, node.upper, node.step)
            ]
            return ast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(node, ast.Tuple):
            return ast.Tuple(elts=[self.index(e) for e in node.elts], ctx=ast.Load())
        return self.atom(node)

    def condition(self, test: ast.expr, branches: list[ast.stmt]) -> ast.Name:
        """The test of an if, as a name nothing in ``branches`` reassigns."""
        atom = self.atom(test)
        if isinstance(atom, ast.Name) and atom.id in _assigned_in_compound(branches, top=True):
            atom = ast.Name(id=self.as_temp(atom), ctx=ast.Load())
        if not isinstance(atom, ast.Name):
            atom = ast.Name(id=self.as_temp(atom, force=True), ctx=ast.Load())
        return atom
