"""The runtime helpers generated code calls (``srcgrad/runtime.py`` and, beside their
rules, ``srcgrad/rules/helpers/``) are copied into generated modules as source: each
must read nothing but its own locals, ``np``, builtins and other helpers, and every
generated module that calls one runs on its own."""

from __future__ import annotations

import ast
import builtins
import inspect

import numpy as np
import pytest

import srcgrad
from srcgrad.compiler.transform.builder import HELPER_FUNCTIONS, HELPERS


@pytest.mark.parametrize("name", HELPERS)
def test_a_helper_reads_only_what_its_copy_has(name):
    tree = ast.parse(inspect.getsource(HELPER_FUNCTIONS[name])).body[0]
    local = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    local |= {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    local |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    local |= {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    loads = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    foreign = {n for n in loads - local - set(HELPERS) - {"np"} if not hasattr(builtins, n)}
    assert not foreign, (
        f"{name} reads {sorted(foreign)}, which its copy in a generated module lacks"
    )


def test_helpers_have_one_name_each():
    """Generated modules hold every helper by its bare name: two modules' helpers (private
    ones too) of one name would replace each other (``_cut`` of the shape rules and of the
    numeric ones once did)."""
    from srcgrad import runtime
    from srcgrad.rules import helpers

    names = [
        name
        for module in (runtime, *helpers.MODULES)
        for name, obj in vars(module).items()
        if inspect.isfunction(obj) and obj.__module__ == module.__name__
    ]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, f"helpers of one name in two modules: {duplicates}"
    assert len(names) == len(HELPER_FUNCTIONS) == len(HELPERS)


def test_a_module_calling_rule_helpers_runs_on_its_own(tmp_path):
    """``eigh_vjp`` lives beside its rule; the module that calls it carries its source."""

    d = srcgrad.grad(_eigh_loss)
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    expected = d(a)
    namespace: dict = {}
    exec(compile(d.source, str(tmp_path / "standalone.py"), "exec"), namespace)
    entry = next(v for k, v in namespace.items() if k.startswith("grad_"))
    np.testing.assert_allclose(entry(a), expected)


def _eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * w) + np.sum(v[0] ** 2)
