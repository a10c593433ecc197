"""Part of normalize: the lowering of statements. :class:`_Statements` lowers each of
the user's statements into core ones: assignments (to names, versioned; to tuple targets,
one by one; into items, in place), augmented assignments spelled out, ``if``, ``while``
and ``for`` (over a range), ``xs.append(v)``; anything else is refused here."""

from __future__ import annotations

import ast
import builtins
import importlib
import sys
import warnings

from ..astwalk import copy_tree, nodes
from .expressions import _UNSUPPORTED_EXPRS, _static_value
from .iteration import _Iteration

# calls kept where they stand as statements: they read their arguments (nothing in them
# is differentiated) and change no array
_KEPT_CALLS = (builtins.print, warnings.warn)

_UNSUPPORTED_STMTS: dict[type, tuple[str, str]] = {
    ast.Try: ("`try` statements", "move error handling outside the differentiated function"),
    ast.With: (
        "`with` statements (other than `with np.errstate(...)`)",
        "move the context manager outside the function",
    ),
    ast.AsyncWith: ("`async with`", "differentiate a plain synchronous function"),
    ast.AsyncFor: ("`async for`", "differentiate a plain synchronous function"),
    ast.Global: ("`global` declarations", "pass the value in as an argument instead"),
    ast.Nonlocal: ("`nonlocal` declarations", "pass the value in and return the result"),
    ast.Delete: ("`del` statements", "leave the variable in place"),
    ast.FunctionDef: ("nested function definitions here", "define the helper at module level"),
    ast.ClassDef: ("class definitions", "define the class at module level"),
}
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_STMTS[ast.TryStar] = _UNSUPPORTED_STMTS[ast.Try]
if hasattr(ast, "Match"):
    _UNSUPPORTED_STMTS[ast.Match] = ("`match` statements", "use numpy operations instead")


_NOT_AT_TOP = (
    "srcgrad supports imports inside the function only at its top level (not inside an "
    "`if`, a loop or a `with`); move the import to the start of the function, or to the module."
)


class _Statements(_Iteration):
    """The lowering of statements."""

    def assign_user(self, name: str, value: ast.expr) -> None:
        """Assign to user variable ``name``, versioning it when reassigned.

        A name assigned inside an ``if`` or a loop keeps one name throughout
        (the transforms record what its reassignment destroys); its new value
        is never computed from itself in one step (``x = x * 2`` goes through
        a temporary), so a derivative rule can tell old from new.
        """
        if name in self.mutable:
            if any(isinstance(n, ast.Name) and n.id == name for n in nodes(value)):
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

    # -- statements ----------------------------------------------------------
    def statement(self, stmt: ast.stmt) -> None:
        if type(stmt) in _UNSUPPORTED_STMTS:
            self.not_yet(stmt, _UNSUPPORTED_STMTS)
        if isinstance(stmt, ast.Assign):
            self.assignment(stmt)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign_target(stmt.target, self.rhs(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            self.augmented_assignment(stmt)
        elif isinstance(stmt, ast.Expr):
            self.expression_statement(stmt)
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
        elif isinstance(stmt, ast.Raise):
            exc = self.renamed(stmt.exc) if stmt.exc is not None else None
            cause = self.renamed(stmt.cause) if stmt.cause is not None else None
            self.place(ast.Raise(exc=exc, cause=cause))
        elif isinstance(stmt, ast.Assert):
            self.assert_statement(stmt)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.import_statement(stmt)
        elif isinstance(stmt, ast.Return):
            raise self.fail(stmt, "srcgrad supports `return` here only at the end of the function.")
        else:
            raise self.fail(stmt, f"srcgrad does not support `{type(stmt).__name__}` here.")

    def assignment(self, stmt: ast.Assign) -> None:
        """``a = value``, ``a = b = value``, ``a, b = value``, ``y[i] = value``."""
        value = self.rhs(stmt.value)
        if len(stmt.targets) > 1:  # a = b = value
            first = self.temp()
            self.emit(first, value)
            value = ast.Name(id=first, ctx=ast.Load())
        for target in stmt.targets:
            self.assign_target(target, value)

    def augmented_assignment(self, stmt: ast.AugAssign) -> None:
        """``x += v`` is ``x = x + v`` (noted in ``updates``: numpy changes ``x``'s array in
        place); ``y[i] += v`` is ``t = y[i]; y[i] = t + v`` (the sum noted in
        ``item_updates``: where ``y[i]`` is an array, numpy changes it in place)."""
        if isinstance(stmt.target, ast.Subscript):  # y[i] += v: y[i] = y[i] + v
            array, index = self.subscript_target(stmt.target)
            old = self.as_atom(ast.Subscript(value=array, slice=index, ctx=ast.Load()))
            new = self.as_temp(ast.BinOp(left=old, op=stmt.op, right=self.atom(stmt.value)))
            if isinstance(old, ast.Name):
                self.item_updates[self.body[-1]] = old.id
            self.set_item(array, copy_tree(index), ast.Name(id=new, ctx=ast.Load()))
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

    def list_method(self, call: ast.expr, method: str, arity: int) -> bool:
        """Whether ``call`` is ``xs.<method>(...)`` with ``arity`` positional arguments on
        a variable ``xs`` of the function."""
        return (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == method
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id in self.current
            and len(call.args) == arity
            and not call.keywords
        )

    def assert_statement(self, stmt: ast.Assert) -> None:
        """``assert test, msg`` is kept, as ``if not test: raise AssertionError(msg)`` (the
        message computed only where the test fails, as Python does)."""
        failed = self.atom(ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=stmt.test), stmt))
        error = ast.Name(id="AssertionError", ctx=ast.Load())
        args = [self.renamed(stmt.msg)] if stmt.msg is not None else []
        raise_ = ast.Raise(exc=ast.Call(func=error, args=args, keywords=[]), cause=None)
        outer = self.user_stmt
        body: list[ast.stmt] = []
        with self.block(body):
            self.place(raise_)
        self.user_stmt = outer
        self.place(ast.If(test=failed, body=body, orelse=[]))

    def import_statement(self, stmt: ast.Import | ast.ImportFrom) -> None:
        """``import numpy as np`` (or ``from scipy import special``) inside the function:
        the name is bound to the module (or its attribute) for the whole function, as a
        module-level import would bind it (the import runs now, as the function's first
        call would run it)."""
        if stmt not in self.parsed.tree.body:
            raise self.fail(stmt, _NOT_AT_TOP)
        if isinstance(stmt, ast.ImportFrom) and (stmt.level or stmt.module is None):
            raise self.fail(
                stmt,
                "relative imports inside the function are not supported; import at module level.",
            )
        for alias in stmt.names:
            if alias.name == "*":
                raise self.fail(
                    stmt, "`import *` inside a function is not Python; import names one by one."
                )
            try:
                if isinstance(stmt, ast.Import):
                    module = importlib.import_module(alias.name)
                    name = alias.asname or alias.name.split(".")[0]
                    value = module if alias.asname else sys.modules[name]
                else:
                    name = alias.asname or alias.name
                    parent = importlib.import_module(stmt.module)
                    if hasattr(parent, alias.name):
                        value = getattr(parent, alias.name)
                    else:
                        value = importlib.import_module(f"{stmt.module}.{alias.name}")
            except ImportError as exc:
                raise self.fail(stmt, f"the import fails: {exc}") from None
            if name in self.current or name in self.mutable:
                raise self.fail(
                    stmt,
                    f"`{name}` is also a variable of the function; import it under another name.",
                )
            self.env[name] = value

    def renamed(self, node: ast.expr) -> ast.expr:
        """A copy of ``node``, kept as it is (nothing in it is differentiated: a message, an
        exception), its variables read as they stand here."""
        new = copy_tree(node)
        for n in nodes(new):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                loaded = self.load(n.id, n)
                if isinstance(loaded, ast.Name):
                    n.id = loaded.id
        return new

    def expression_statement(self, stmt: ast.Expr) -> None:
        """A statement that is an expression: ``xs.append(v)``, ``xs.pop()``, ``print(...)``,
        a docstring or a check of generated code; any other is refused."""
        if _is_docstring(stmt):
            return
        if type(stmt.value) in _UNSUPPORTED_EXPRS:
            self.not_yet(stmt.value, _UNSUPPORTED_EXPRS)
        call = stmt.value
        if self.list_method(call, "append", 1):  # xs.append(v): xs grows where it stands
            xs = self.load(call.func.value.id, call)
            item = self.atom(call.args[0])
            method = ast.Attribute(value=xs, attr="append", ctx=ast.Load())
            self.place(ast.Expr(value=ast.Call(func=method, args=[item], keywords=[])))
            return
        if (
            isinstance(call, ast.Call)
            and self.is_static(call.func)
            and any(_static_value(call.func, self.env) is kept for kept in _KEPT_CALLS)
        ):  # print(...), warnings.warn(...): kept where they stand, nothing differentiated
            self.place(ast.Expr(value=self.renamed(call)))
            return
        if self.list_method(call, "pop", 0):  # its value unused (a reverse sweep's undoing)
            self.as_temp(self.rhs(call))
            return
        if self.generated_check(call):
            return
        raise self.discarded(stmt, call)

    def generated_check(self, call: ast.expr) -> bool:
        """Whether ``call`` is generated code checking its arguments (nothing to
        differentiate) or asking before an update (asked again before the next
        statement, ``pending_check``)."""
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and getattr(self.env.get(call.func.id), "__srcgrad_helper__", None)
            in ("check_scalar", "check_cotangent")
        ):  # generated code checking its arguments: nothing to differentiate
            return True
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and getattr(self.env.get(call.func.id), "__srcgrad_helper__", None) == "check_in_place"
            and len(call.args) == 2
            and isinstance(call.args[0], ast.Name)
            and isinstance(call.args[1], ast.Constant)
        ):  # generated code asking before an update: asked again before the next statement
            checked = self.load(call.args[0].id, call)
            if isinstance(checked, ast.Name):
                self.pending_check = (checked.id, str(call.args[1].value))
            return True
        return False

    def discarded(self, stmt: ast.Expr, call: ast.expr) -> Exception:
        """The error for an expression statement srcgrad does not keep: a call whose
        result is not used (np.fill_diagonal: what to write instead), or another."""
        if isinstance(call, ast.Call) and self._calls(call, "fill_diagonal"):
            target = ast.unparse(call.args[0]) if call.args else "a"
            return self.fail(
                stmt,
                f"`{ast.unparse(call)}` writes into `{target}` in place, which srcgrad cannot "
                f"follow. Write the diagonal with item assignment into an array the function "
                f"made: `k = min({target}.shape)`, then `{target}[np.arange(k), np.arange(k)] "
                f"= v` (after `{target} = {target}.copy()` if it is not yours), or build a new "
                f"array: `{target} = {target} - np.diag(np.diag({target})) + np.diag(v)` for "
                "a square matrix.",
            )
        if isinstance(call, ast.Call):  # (np.fill_diagonal(D, 1.0), y.sort(): None)
            return self.fail(
                stmt,
                f"`{ast.unparse(call)}` is a call whose result is not used: where it "
                "changes an array in place (as np.fill_diagonal, np.copyto, .sort(), "
                ".fill() and out= do), srcgrad cannot follow it; compute a new array "
                "instead, or write with item assignment into an array the function made "
                "(`D = D.copy()`, then `D[i, j] = v`). Where it has no effect, remove it.",
            )
        return self.fail(
            stmt,
            "an expression statement has no effect on the returned value, or changes a "
            "value in place, which srcgrad cannot follow yet; assign its result to a "
            "variable or remove it.",
        )

    def _calls(self, call: ast.Call, name: str) -> bool:
        """Whether ``call`` calls numpy's function ``name`` (by a global name)."""
        if not self.is_static(call.func):
            return False
        value = _static_value(call.func, self.env)
        return value is getattr(sys.modules["numpy"], name, object())

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

    def assign_target(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.assign_user(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise self.fail(target, "starred assignment targets are not supported yet.")
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                stored = {n.id for n in nodes(target) if isinstance(n, ast.Name)}
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


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
