"""Part of normalize: the part of :mod:`.nested`'s inliner that writes out functions
of the user's defined elsewhere: the closure a factory makes (``step = make_step(h)``,
:mod:`.factories`), and a module function the analysis found given complex numbers
(``Normalized.written_out``), each defined as a nested function where it is bound or
called, then written out where it is called like one."""

from __future__ import annotations

import ast
import inspect
from typing import Any

from ...errors import UnsupportedSyntaxError
from .expressions import _static_value
from .factories import FactoryCall, factory_of

_COMPLEX_HELPER = (
    "`{name}` is given complex numbers here, which srcgrad differentiates by writing its "
    "statements out where it is called, as a nested function's; it cannot here: {reason} "
    "Write its statements here instead, or keep the values it gets real (pass np.real(z) "
    "and np.imag(z))."
)


_GIVEN_A_FUNCTION = (
    "`{name}` is given a function defined in this one (`{given}`), which srcgrad "
    "differentiates by writing `{name}`'s statements out where it is called, as a nested "
    "function's; it cannot here: {reason} Define the function you pass at module level "
    "instead (a module function passed as an argument works)."
)
#: why a module function is written out where it is called, by the template of the error
#: where it cannot be
_WHY = {
    _COMPLEX_HELPER: "it is given complex numbers",
    _GIVEN_A_FUNCTION: "it is given a function defined in this one",
}


class WritingOut:
    """Methods of ``nested._Inliner`` (which holds the state they use)."""

    def factory(self, node: ast.AST) -> Any:
        """The factory ``node`` calls, where it is ``name = factory(...)`` and the
        function calls ``name`` (``normalize.factories``); None otherwise."""
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in self.called
        ):
            return None
        return factory_of(node.value, self.env, self.local)

    def define_factory(self, stmt: ast.Assign, name: str) -> list[ast.stmt]:
        """``name = factory(args)``: what the call of the factory runs, its closure
        defined as the nested function ``name`` (``normalize.factories``)."""
        filename = self.parsed.locator.filename if self.parsed is not None else ""
        made = FactoryCall(
            stmt,
            name,
            self.factory(stmt),
            self.namer,
            self.env,
            self.local,
            self.fail,
            filename,
        )
        stmts = made.statements(self.assigned)
        self.note(made)
        return self.block(stmts, top=True)

    def given_function(self, node: ast.Call) -> ast.expr | None:
        """The first argument of ``node`` that is a function defined in this one (a
        lambda, or the name of a nested function, lambda or partial), where ``node`` calls a
        Python function of a module's; None otherwise."""
        assert isinstance(node.func, ast.Name)
        if node.func.id in self.local or not inspect.isfunction(_static_value(node.func, self.env)):
            return None
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Lambda) or (isinstance(arg, ast.Name) and arg.id in self.nested):
                return arg
        return None

    def write_out(self, node: ast.Call, template: str = _COMPLEX_HELPER) -> bool:
        """Where ``node`` calls a module function ``written_out`` names at this statement
        (or, ``template`` being ``_GIVEN_A_FUNCTION``, any module function), define it as
        a nested function and call that (``node`` renamed); whether so."""
        assert isinstance(node.func, ast.Name)
        if node.func.id in self.local:
            return False
        func = _static_value(node.func, self.env)
        if template is _COMPLEX_HELPER and (self.where, func) not in self.written_out:
            return False
        if func not in self.helpers:
            name = self.namer.fresh(node.func.id)
            at = ast.copy_location(
                ast.Assign(
                    targets=[ast.Name(id=name, ctx=ast.Store())],
                    value=ast.Call(func=node.func, args=[], keywords=[]),
                ),
                node,
            )
            filename = self.parsed.locator.filename if self.parsed is not None else ""
            made = FactoryCall(
                at, name, func, self.namer, self.env, self.local, self.fail, filename
            )
            self.helpers[func] = name  # (before: a refusal below names the function)
            self.define(made.as_nested(_WHY[template]), name)
            self.note(made)
        node.func = ast.Name(id=self.helpers[func], ctx=ast.Load())
        return True

    def note(self, made: FactoryCall) -> None:
        """Check ``made``'s function with this one (its code, its free names)."""
        if self.parsed is None:
            return
        if all(f.code is not made.parsed.code for f in self.parsed.factories):
            self.parsed.factories.append(made.parsed)
        self.parsed.borrowed |= made.borrowed

    def written_call(self, node: ast.Call, before: list[ast.stmt]) -> ast.expr | None:
        """``node`` written out where it calls a module function ``written_out`` names
        here, or one given a function defined in this one (its value); None where it
        does not."""
        label = node.func.id
        func = _static_value(node.func, self.env)
        given = self.given_function(node)
        template = _COMPLEX_HELPER if given is None else _GIVEN_A_FUNCTION
        if given is None and not self.written_out:
            return None
        try:
            if self.write_out(node, template):
                return self.call(node, before)
        except UnsupportedSyntaxError as exc:
            helper = self.helpers.get(func, label)
            reason = str(exc).splitlines()[-1].replace(f"`{helper}`", f"`{label}`")
            reason = reason.replace(", or define the function at module level", "")
            shown = "lambda" if isinstance(given, ast.Lambda) else ast.unparse(given or node)
            text = template.format(name=label, reason=reason, given=shown)
            raise self.fail(node, text) from None
        return None


def _where(node: ast.AST) -> tuple[int, int, int, int]:
    return (
        getattr(node, "lineno", 0),
        getattr(node, "col_offset", 0),
        getattr(node, "end_lineno", 0) or 0,
        getattr(node, "end_col_offset", 0) or 0,
    )
