"""The typed user's script (tests/typing/usage.py) runs; .ci/run checks it with ``mypy
--strict``, which the ``# type: ignore`` lines of its ``mistakes`` make a test of srcgrad's
types: each call there must be an error, or mypy reports the ignore as unused."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import srcgrad

USAGE = Path(__file__).resolve().parent / "typing" / "usage.py"


def _usage():
    spec = importlib.util.spec_from_file_location("srcgrad_typed_usage", USAGE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_typed_script_runs(capsys):
    _usage().main()
    assert "def grad_loss(w, x, y):" in capsys.readouterr().out


def test_the_typed_script_uses_every_transformation():
    text = USAGE.read_text()
    public = [n for n in srcgrad.__all__ if inspect.isfunction(getattr(srcgrad, n))]
    unused = [n for n in public if not re.search(rf"srcgrad\.{n}\(", text)]
    assert unused == ["export", "primitive", "stop_gradient"], unused


def test_each_mistake_is_marked_for_the_type_checker():
    lines = inspect.getsource(_usage().mistakes).splitlines()
    calls = [line for line in lines[3:] if "(" in line and "=" not in line.split("(")[0]]
    assert len(calls) >= 9
    assert all(re.search(r"# type: ignore\[(call-arg|arg-type)\]$", line) for line in calls)
