"""Stage 2, normalize: Python in, a small core language out.

In:  a :class:`~srcgrad.parse.ParsedFunction`.
Out: :class:`Normalized`, a ``FunctionDef`` in the core grammar below, the
map from each core statement to the user's statement it came from (for
comments and errors), and the :class:`~srcgrad.naming.Namer` that knows
every name in use.

Core grammar (later stages assert they see only this)::

    function := FunctionDef(params, body = [stmt*, Return(atom)])
    stmt     := Assign([Name], rhs)
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
a variable assigned twice gets a new version (``x``, ``x_1``), so every
name has exactly one definition::

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
from dataclasses import dataclass
from typing import Any

from .errors import UnsupportedSyntaxError
from .naming import Namer, names_in
from .parse import ParsedFunction

_NOT_YET = "srcgrad does not differentiate {what} yet; {advice}"

_UNSUPPORTED_STMTS: dict[type, tuple[str, str]] = {
    ast.If: ("`if` statements", "compute both sides and combine them with np.where"),
    ast.For: ("`for` loops", "write the computation with vectorised numpy operations"),
    ast.While: ("`while` loops", "write the computation with vectorised numpy operations"),
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
    ast.IfExp: ("conditional expressions", "use np.where(condition, a, b)"),
    ast.BoolOp: ("`and`/`or`", "use np.logical_and / np.logical_or or the & and | operators"),
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
    def __init__(self, parsed: ParsedFunction) -> None:
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
        """Assign to user variable ``name``, versioning it when reassigned."""
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
            tree=new, origin=self.origin, namer=self.namer, parsed=self.parsed, temps=self.temps
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
            if not isinstance(stmt.target, ast.Name):
                raise self.fail(
                    stmt,
                    "srcgrad does not differentiate in-place updates of subscripts or "
                    "attributes yet; build a new array instead (e.g. with np.where).",
                )
            left = self.load(stmt.target.id, stmt.target)
            value = ast.BinOp(left=left, op=stmt.op, right=self.atom(stmt.value))
            self.assign_user(stmt.target.id, value)
        elif isinstance(stmt, ast.Expr):
            if _is_docstring(stmt):
                return
            if type(stmt.value) in _UNSUPPORTED_EXPRS:
                self.not_yet(stmt.value, _UNSUPPORTED_EXPRS)
            raise self.fail(
                stmt,
                "an expression statement has no effect on the returned value, or changes a "
                "value in place, which srcgrad cannot follow yet; assign its result to a "
                "variable or remove it.",
            )
        elif isinstance(stmt, ast.Pass):
            return
        else:
            raise self.fail(stmt, f"srcgrad does not support `{type(stmt).__name__}` here.")

    def assign_target(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.assign_user(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise self.fail(target, "starred assignment targets are not supported yet.")
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                items = [self.as_atom(v) for v in value.elts]
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
        else:
            raise self.fail(
                target,
                "srcgrad does not differentiate assignments into subscripts or attributes "
                "yet; build a new array instead (e.g. with np.where or np.concatenate).",
            )

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
            left = self.atom(node.left)
            return ast.BinOp(left=left, op=node.op, right=self.atom(node.right))
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.fail(
                    node, "chained comparisons are not supported yet; split them with &."
                )
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
        raise self.fail(node, f"srcgrad does not support the expression `{ast.unparse(node)}`.")

    def call(self, node: ast.Call) -> ast.expr:
        func = node.func
        if self.is_static(func):
            callee: ast.expr = _copy(func)
        elif isinstance(func, ast.Attribute):
            callee = ast.Attribute(value=self.atom(func.value), attr=func.attr, ctx=ast.Load())
        else:
            raise self.fail(
                node,
                f"srcgrad can only call functions and methods by name, not `{ast.unparse(func)}`.",
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


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _copy(node: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(node), mode="eval").body
