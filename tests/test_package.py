"""The package as a packager and the package index see it, checked without building it.

``python -m build`` and ``twine check`` are too slow for the suite; these read what
they would read: pyproject.toml's metadata, the license, the version, the marker that
tells type checkers srcgrad has type hints, the page the package index shows, and the
files MANIFEST.in puts in the source distribution, which must run its own tests.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import sys
from pathlib import Path

import pytest

import srcgrad

tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@pytest.fixture(scope="module")
def setuptools_table() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_the_license_is_an_spdx_expression_with_its_file(project):
    assert project["license"] == "Apache-2.0"  # (a table is deprecated: setuptools warns)
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]


def test_the_version_is_written_once(project, setuptools_table):
    assert "version" not in project and "version" in project["dynamic"]
    assert setuptools_table["dynamic"]["version"] == {"attr": "srcgrad.__version__"}
    # setuptools reads it without importing srcgrad (whose numpy a build does not
    # have) only when it is a plain string assigned in __init__.py
    tree = ast.parse((ROOT / "srcgrad" / "__init__.py").read_text())
    assigned = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
        and isinstance(node.value, ast.Constant)
    ]
    assert assigned == [srcgrad.__version__]
    assert re.fullmatch(r"\d+\.\d+\.\d+", srcgrad.__version__)


def test_the_python_versions_are_classified(project):
    listed = {
        c.rsplit(" :: ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    assert project["requires-python"] == ">=3.10"
    assert min(listed, key=lambda v: tuple(map(int, v.split(".")))) == "3.10"
    # the Python these tests run on (CI's) is one the package says it supports
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert running in listed, f"add the classifier 'Programming Language :: Python :: {running}'"


def test_type_checkers_are_told_srcgrad_has_type_hints(project, setuptools_table):
    # PEP 561: without py.typed, mypy skips an installed package entirely
    assert (ROOT / "srcgrad" / "py.typed").is_file()
    assert "py.typed" in setuptools_table["package-data"]["srcgrad"]
    assert "Typing :: Typed" in project["classifiers"]


def test_the_package_index_page_reads_well_outside_the_repository(project):
    page = (ROOT / project["readme"]).read_text()
    links = re.findall(r"\]\(([^)]*)\)", page)
    relative = [link for link in links if not re.match(r"https?://|#", link)]
    assert not relative, f"links that break on the package index: {relative}"
    assert "pip install ." not in page  # (a checkout's command)
    assert "pip install srcgrad" in page
    assert "Apache License 2.0" in page


def _manifest_files() -> set[str]:
    """The files MANIFEST.in adds to the source distribution (its `include` and
    `recursive-include` lines, as setuptools reads them)."""
    files = set()
    for line in (ROOT / "MANIFEST.in").read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        command, *args = words
        if command == "include":
            for pattern in args:
                files |= {p.relative_to(ROOT).as_posix() for p in ROOT.glob(pattern)}
        elif command == "recursive-include":
            folder, *patterns = args
            for path in (ROOT / folder).rglob("*"):
                if path.is_file() and any(fnmatch.fnmatch(path.name, p) for p in patterns):
                    files.add(path.relative_to(ROOT).as_posix())
        else:
            raise AssertionError(f"this test does not know MANIFEST.in's {command!r}: teach it")
    return files


def test_the_source_distribution_holds_the_whole_test_suite_and_what_it_reads():
    shipped = _manifest_files()
    tests = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("*.py")}
    assert "tests/conftest.py" in tests
    assert tests <= shipped, sorted(tests - shipped)
    examples = {p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").glob("*.py")}
    assert examples <= shipped  # (tests/test_examples.py runs them)
    assert {"README.md", "docs/rules.md"} <= shipped  # (test_readme.py, test_cli.py)
    assert "benchmarks/workloads.py" in shipped  # (test_numba.py)
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in shipped)


def test_the_project_urls_name_its_home_documentation_source_and_issues(project):
    # (placeholders until the project is published: see pyproject.toml)
    urls = project["urls"]
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
