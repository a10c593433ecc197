"""Each optimizer pass (one module of ``srcgrad/compiler/optimize/``) shows what it does in its
docstring, a ``Before::`` block and an ``After::`` block (side by side, or one after
the other). This runs the pass alone on the first and checks that it gives the second,
statement for statement, so the examples a reader learns from are the pass's real
behaviour (as pythran's pass docstrings are)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import textwrap

import pytest

import srcgrad.compiler.optimize as optimize_package
from srcgrad.compiler.optimize import AFTER, FIXED_POINT, Context

#: the shared modules: no pass of their own
SHARED = {"dataflow"}


def _block(lines: list[str], start: int, indent: int) -> list[str]:
    """The indented block after line ``start`` (a ``Before::`` or ``After::`` line)."""
    out: list[str] = []
    for line in lines[start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


def example(doc: str) -> tuple[str, str]:
    """The code before and after, from a docstring's ``Before::``/``After::`` blocks."""
    lines = doc.expandtabs().splitlines()
    first = next(k for k, line in enumerate(lines) if "Before::" in line)
    indent = len(lines[first]) - len(lines[first].lstrip())
    column = lines[first].find("After::")
    if column >= 0:  # side by side: split every line at the After column
        block = _block(lines, first, indent)
        before = "\n".join(line[:column].rstrip() for line in block)
        after = "\n".join(line[column:] for line in block)
        # the After column is indented like the Before one: give it the same margin
        margin = " " * (len(block[1]) - len(block[1].lstrip())) if len(block) > 1 else ""
        after = "\n".join(margin + line if line.strip() else "" for line in after.splitlines())
    else:
        second = next(k for k, line in enumerate(lines) if "After::" in line)
        before = "\n".join(_block(lines, first, indent)[: second - first - 1])
        after = "\n".join(_block(lines, second, indent))
    return textwrap.dedent(before).strip("\n"), textwrap.dedent(after).strip("\n")


def _free(body: list[ast.stmt]) -> set[str]:
    names = [n for n in ast.walk(ast.Module(body=body, type_ignores=[])) if isinstance(n, ast.Name)]
    loads = {n.id for n in names if isinstance(n.ctx, ast.Load)}
    stores = {n.id for n in names if isinstance(n.ctx, ast.Store)}
    return (loads - stores) | {"np"}


def _run(step, body: list[ast.stmt]) -> list[ast.stmt]:
    """The pass alone, to a fixed point, with the example's free names as parameters and
    ``tN`` names as the compiler's temporaries."""
    free = frozenset(_free(body))
    names = {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name)}
    ctx = Context(
        params=free,
        arguments=free,
        xp="np",
        temporaries=frozenset(n for n in names if re.fullmatch(r"t\d+", n)),
        helpers={h: h for h in ("index_adjoint", "index_adjoint_add")},
    )
    for _ in range(20):
        body, changed = step(body, ctx)
        if not changed:
            return body
    raise AssertionError(f"{step.__name__} changes its own output forever")


#: every pass the driver runs, each once
PASSES = list(dict.fromkeys(FIXED_POINT + AFTER))


@pytest.mark.parametrize("step", PASSES, ids=lambda f: f.__name__)
def test_the_docstring_example_is_what_the_pass_does(step):
    before, after = example(step.__doc__)
    assert before != after
    got = _run(step, ast.parse(before).body)
    got_module = ast.fix_missing_locations(ast.Module(body=got, type_ignores=[]))
    assert ast.unparse(got_module) == ast.unparse(ast.parse(after))


def test_every_pass_module_has_a_tested_example():
    """A new pass (a new module) comes with its example and is run by the driver."""
    modules = {m.name for m in pkgutil.iter_modules(optimize_package.__path__)} - SHARED
    tested = {step.__module__.rsplit(".", 1)[1] for step in PASSES}
    assert modules == tested
    for name in modules:
        module = importlib.import_module(f"srcgrad.compiler.optimize.{name}")
        assert module.__doc__ and module.__doc__.startswith("Pass")


def test_the_example_reader_reads_both_layouts():
    side_by_side = """Doc.

    Before::          After::

        a = b             c = b
        c = a
    """
    assert example(side_by_side) == ("a = b\nc = a", "c = b")
    stacked = """Doc.

    Before::

        for i in r:
            a = b

    After::

        pass
    """
    assert example(stacked) == ("for i in r:\n    a = b", "pass")
