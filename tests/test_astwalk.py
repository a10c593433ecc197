"""The fast tree walks and copy the compiler uses instead of ``ast.walk`` and
``copy.deepcopy`` (``srcgrad/compiler/astwalk.py``) see and copy exactly what those do."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest

import srcgrad
from srcgrad.compiler.astwalk import copy_tree, loaded, nodes, stored

SOURCES = sorted(Path(srcgrad.__file__).parent.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: p.name)
def test_copy_tree_is_a_deep_copy(path):
    tree = ast.parse(path.read_text())
    copied = copy_tree(tree)
    assert ast.dump(copied, include_attributes=True) == ast.dump(
        copy.deepcopy(tree), include_attributes=True
    )
    mine = {id(n) for n in ast.walk(tree) if type(n)._fields or type(n)._attributes}
    # no node with fields or a position is shared (statements key facts by id)
    assert not mine & {id(n) for n in ast.walk(copied)}
    # and changing the copy leaves the original as it was
    before = ast.dump(tree)
    for n in ast.walk(copied):
        if isinstance(n, ast.Name):
            n.id = "changed"
    assert ast.dump(tree) == before


def test_walks_find_the_names_ast_walk_finds():
    for path in SOURCES[::2]:
        tree = ast.parse(path.read_text())
        names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
        assert sorted(loaded(tree)) == sorted(n.id for n in names if isinstance(n.ctx, ast.Load))
        assert sorted(stored(tree)) == sorted(n.id for n in names if isinstance(n.ctx, ast.Store))
        kinds = (ast.expr, ast.stmt)
        expected = sorted(type(n).__name__ for n in ast.walk(tree) if isinstance(n, kinds))
        assert sorted(type(n).__name__ for n in nodes(tree) if isinstance(n, kinds)) == expected


def test_copy_tree_copies_a_deep_expression():
    tree = ast.parse(" + ".join(f"x{k}" for k in range(300)), mode="eval")
    assert ast.unparse(copy_tree(tree)) == ast.unparse(tree)


def test_copy_tree_substitutes_names_in_the_same_walk():
    template = ast.parse("g * np.cos(x) + x", mode="eval").body
    before = ast.dump(template)
    x = ast.parse("a[i]", mode="eval").body
    g = ast.parse("x + 1", mode="eval").body  # (what a name maps to is not substituted again)
    out = copy_tree(template, {"x": x, "g": g})
    assert ast.unparse(out) == "(x + 1) * np.cos(a[i]) + a[i]"
    assert ast.dump(template) == before
    shared = {id(n) for n in ast.walk(x) if type(n)._fields} & {id(n) for n in ast.walk(out)}
    assert not shared  # (each use is a copy of its own)
