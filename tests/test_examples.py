"""Smoke tests: every script in examples/ runs (with ``--quick``: a few training steps).

The full runs (``python examples/NAME.py``) train to the accuracies their
docstrings promise and assert them; these runs only check that each script
works end to end: srcgrad generates and runs its derivatives, the output
names what it should, and the plots are written where ``--out`` says.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

#: script, the packages it needs beyond numpy, what its output must contain, the PNGs it writes
CASES = [
    (
        "quickstart.py",
        [],
        ["def grad_loss(w, x, y):", "largest difference from finite differences"],
        [],
    ),
    (
        "logistic_regression.py",
        ["sklearn", "matplotlib"],
        ["breast cancer: 426 training and 143 test samples", "test accuracy"],
        ["logistic_regression_loss.png"],
    ),
    (
        "mlp_digits.py",
        ["sklearn", "matplotlib", "tqdm"],
        ["digits: 1347 training and 450 test images", "test accuracy"],
        ["mlp_digits_loss.png"],
    ),
    (
        "rnn.py",
        ["matplotlib"],
        ["def value_and_grad_loss(", "for t in reversed(", "tape.pop()", "test accuracy"],
        ["rnn_loss.png"],
    ),
    (
        "projectile.py",
        ["matplotlib"],
        ["check_grads: reverse mode, forward mode and finite differences agree", "final angle"],
        ["projectile.png"],
    ),
    (
        "ode_fit.py",
        ["matplotlib"],
        [
            "check_grads: reverse mode, forward mode and finite differences agree",
            "k1, k1_rec = logistic_fwd(y, params)",
            "fitted r = ",
        ],
        ["ode_fit.png"],
    ),
    (
        "filter_fit.py",
        ["matplotlib"],
        [
            "check_grads: reverse mode, forward mode and finite differences agree",
            "h_bar = response_bwd(h, spectrum_rec, spectrum_bar)",
            "final loss",
        ],
        ["filter_fit.png"],
    ),
    (
        "recursion.py",
        [],
        [
            "def horner_fwd(c, x):",
            "def horner_bwd(c, x, rec, result_bar):",
            "def tree_energy_fwd(v):",
            "check_grads(tree_energy): reverse, forward and finite differences agree",
        ],
        [],
    ),
    (
        "dask_logistic_regression.py",
        ["dask", "distributed", "matplotlib"],
        [
            "dataset: 100,000 rows x 10 features",
            "numpy and dask gradients of a 1,000-row sample agree",
            "epoch 1: loss",
            "peak memory per worker",
        ],
        ["dask_logistic_regression_loss.png"],
    ),
]


def test_every_example_has_a_smoke_test():
    scripts = {path.name for path in EXAMPLES.glob("*.py")}
    assert scripts == {case[0] for case in CASES}


@pytest.mark.parametrize("script, needs, expected, pngs", CASES, ids=[c[0] for c in CASES])
def test_example_runs(tmp_path, script, needs, expected, pngs):
    for module in needs:
        pytest.importorskip(module, reason=f"{script} needs {module} (pip install '.[examples]')")
    args = [] if script == "quickstart.py" else ["--quick", "--out", str(tmp_path / "out")]
    env = dict(os.environ, MPLBACKEND="Agg")
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, f"{script} failed:\n{result.stdout}\n{result.stderr}"
    for text in expected:
        assert text in result.stdout, f"{script} did not print {text!r}:\n{result.stdout}"
    for name in pngs:
        png = tmp_path / "out" / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{script} wrote no {name}"
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out"] if pngs else [])
