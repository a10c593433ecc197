"""Every public name documents itself: its arguments, what it returns, what it raises,
and an example that runs.

The public names are ``srcgrad.__all__`` and ``srcgrad.testing.__all__``; docs/api.md
renders their docstrings (mkdocstrings, Google style), so a name missing here is a
name missing from the reference. Each docstring's example (a fenced ``python`` block) is
saved as a script and run: an example that no longer works fails here.
"""

from __future__ import annotations

import inspect
import re
import runpy
import textwrap
from pathlib import Path

import pytest

import srcgrad
import srcgrad.testing

PUBLIC = [(f"srcgrad.{n}", getattr(srcgrad, n)) for n in srcgrad.__all__] + [
    (f"srcgrad.testing.{n}", getattr(srcgrad.testing, n)) for n in srcgrad.testing.__all__
]
IDS = [name for name, _ in PUBLIC]
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def section(doc: str, title: str) -> str | None:
    """The text of a Google-style section (``Args:``...), or None."""
    found = re.search(rf"^{title}:\n((?:[ \t]+.*\n|\n)+)", doc + "\n", re.M)
    return found.group(1) if found else None


def parameters(obj: object) -> list[str]:
    """The parameters a caller passes: a function's, or a class's ``__init__``'s."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    names = list(inspect.signature(target).parameters)
    return [n for n in names if n != "self"]


@pytest.mark.parametrize(("name", "obj"), PUBLIC, ids=IDS)
def test_the_docstring_documents_arguments_returns_and_errors(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert doc, f"{name} has no docstring"
    args = section(doc, "Args") or ""
    missing = [p for p in parameters(obj) if not re.search(rf"^\s+\*{{0,2}}{p}\b", args, re.M)]
    assert not missing, f"{name}'s docstring Args: does not describe {missing}"
    if not inspect.isclass(obj):
        assert section(doc, "Returns"), f"{name}'s docstring has no Returns: section"
    if not issubclass_safe(obj, BaseException):
        assert section(doc, "Raises"), f"{name}'s docstring has no Raises: section"


def issubclass_safe(obj: object, cls: type) -> bool:
    return inspect.isclass(obj) and issubclass(obj, cls)


@pytest.mark.parametrize(("name", "obj"), PUBLIC, ids=IDS)
def test_the_docstring_example_runs(name, obj, tmp_path, monkeypatch):
    doc = inspect.getdoc(obj) or ""
    examples = EXAMPLE.findall(textwrap.dedent(section(doc, "Example") or ""))
    assert examples, f"{name}'s docstring has no Example: section with a python block"
    monkeypatch.chdir(tmp_path)  # (an example may write a file)
    for i, example in enumerate(examples):
        script = tmp_path / f"example_{i}.py"
        script.write_text(example)
        runpy.run_path(str(script))


def test_the_api_page_renders_every_public_name():
    # docs/api.md renders the modules ``srcgrad`` and ``srcgrad.testing`` with mkdocstrings,
    # which lists the names of their __all__; the page names each name too (in its index)
    page = (ROOT / "docs" / "api.md").read_text()
    directives = set(re.findall(r"^::: (\S+)$", page, re.M))
    assert {"srcgrad", "srcgrad.testing"} <= directives
    unlisted = [name for name, _ in PUBLIC if f"`{name}`" not in page]
    assert not unlisted, f"docs/api.md does not name {unlisted}"
