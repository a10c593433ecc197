"""``python -m srcgrad``: the rules listing and the table in docs/rules.md."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from srcgrad import cli
from srcgrad.rules import RULES

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_rules_lists_one_function_per_line_with_its_modes():
    result = subprocess.run(
        [sys.executable, "-m", "srcgrad", "rules"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines())
    assert lines["numpy.exp"] == "forward reverse (complex too)"
    assert lines["ndarray.sum()"] == "forward reverse (complex too)"
    assert lines["numpy.maximum"] == "forward reverse"
    assert lines["numpy.shape"] == "forward reverse (zero derivative)"
    assert lines["math.sin"] == "forward reverse"


def test_every_registered_rule_is_listed():
    names = {name for name, _ in cli.supported()}
    for key, rule in RULES.items():
        listed = cli._names(key)
        helper = isinstance(key, tuple) and key[0] == "helper"  # srcgrad's runtime
        if key == "copy" or rule.primitive is not None or helper:  # not user-facing
            continue
        assert listed and set(listed) <= names, key


def test_docs_rules_md_is_current():
    expected = cli.markdown()
    actual = (ROOT / "docs" / "rules.md").read_text()
    version = cli._numpy_version()
    if f"with numpy\n{version})" not in actual:  # names may differ between numpy versions
        pytest.skip(f"docs/rules.md was generated with another numpy than this {version}")
    assert actual == expected, (
        "docs/rules.md is out of date: run `python -m srcgrad rules --markdown > docs/rules.md`"
    )


@pytest.mark.parametrize("command", [["rules"], ["rules", "--markdown"]])
def test_a_reader_that_stops_early_ends_it_quietly(command):
    # `python -m srcgrad rules | head`: the pipe closes before srcgrad has written it all
    proc = subprocess.Popen(
        [sys.executable, "-m", "srcgrad", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    proc.stdout.close()  # (closed before anything is written: every write fails)
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 1
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
