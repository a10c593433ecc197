"""The README shows generated code: it must be the code srcgrad generates today.

Each fenced Python block of README.md that defines a generated function
(``def grad_...``) is compared, line for line, with the source srcgrad makes now
for the same user function and the arguments the README names; and each user
function the README shows is the one defined here. When the optimizer changes
what it writes, this test says which README block to paste anew. The package
index's page (docs/pypi.md) is checked the same way.
"""

from __future__ import annotations

import ast
import inspect
import io
import re
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

import numpy as np
import pytest

import srcgrad

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PYPI = ROOT / "docs" / "pypi.md"  # (pyproject.toml's readme)


def loss(w, x, y):
    p = 1 / (1 + np.exp(-(x @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def rnn(Wh, Wx, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx)
    return np.sum(h * h)


def smooth(x, a):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = a * y[i - 1] + x[i]
    return np.sum(y * y)


def scan(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        if x[i] > t:
            break
        s = s + np.sin(x[i]) * x[i]
        i += 1
    return s


def euler2(k, c, x0, v0, dt, n):
    x = x0
    v = v0
    for _ in range(n):
        a = -k * x - c * v
        x = x + dt * v
        v = v + dt * a
    return x * x


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def _loss_args():  # "for a 1-D w and 2-D x"
    rng = np.random.default_rng(0)
    return rng.standard_normal(3), rng.standard_normal((5, 3)), rng.random(5)


def _rnn_args():  # "for 2-D weights and 3-D xs"
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((4, 4)),
        rng.standard_normal((2, 4)),
        rng.standard_normal((6, 3, 2)),
        rng.standard_normal((3, 4)),
    )


def _smooth_args():  # "for a 1-D x"
    return np.linspace(0.0, 1.0, 5), 0.5


#: generated function name -> (its derivative, the arguments it is called with)
GENERATED = {
    "grad_loss": (srcgrad.grad(loss), _loss_args),
    "grad_rnn": (srcgrad.grad(rnn, wrt=(0, 1)), _rnn_args),
    "grad_smooth": (srcgrad.grad(smooth, wrt=(0, 1)), _smooth_args),
    "grad_power": (srcgrad.grad(power), lambda: (1.5, 3)),
    "grad_scan": (srcgrad.grad(scan), lambda: (np.linspace(0.0, 1.0, 5), 0.5)),
    "jvp_euler2": (
        srcgrad.grad(euler2, wrt=(0, 1), mode="forward"),
        lambda: (2.0, 0.1, 1.0, 0.0, 0.01, 100),
    ),
}
USER = {
    "loss": loss,
    "rnn": rnn,
    "smooth": smooth,
    "scan": scan,
    "euler2": euler2,
    "power": power,
}


def python_blocks(document: Path = README) -> list[str]:
    return re.findall(r"```python\n(.*?)```", document.read_text(), flags=re.S)


def functions_in(block: str) -> dict[str, str]:
    """The source of each top-level function a block defines."""
    tree = ast.parse(block)
    lines = block.splitlines()
    return {
        node.name: "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def same_code(shown_text: str, generated: str) -> bool:
    """The same code: the same text, or (where ``ast.unparse`` of this Python spells it
    otherwise, as 3.10's ``(_, rec) = ...``) the same tree and the same comments."""
    if shown_text == generated:
        return True
    return ast.dump(ast.parse(shown_text)) == ast.dump(ast.parse(generated)) and comments(
        shown_text
    ) == comments(generated)


def comments(text: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [token.string for token in tokens if token.type == tokenize.COMMENT]


def shown(prefixes: tuple[str, ...], document: Path = README) -> dict[str, str]:
    found = {}
    for block in python_blocks(document):
        for name, text in functions_in(block).items():
            if name.startswith(prefixes):
                found[name] = text
    return found


def test_the_readme_shows_generated_code():
    assert set(shown(("grad_", "jvp_"))) == set(GENERATED)


def test_the_package_index_page_shows_generated_code():
    assert set(shown(("grad_", "jvp_"), PYPI)) == {"grad_loss"}


SHOWN = [(README, name) for name in sorted(GENERATED)] + [(PYPI, "grad_loss")]


@pytest.mark.parametrize(("document", "name"), SHOWN, ids=lambda v: getattr(v, "name", v))
def test_generated_code_in_the_readme_is_current(document, name):
    """The entry point, and the generated functions shown beside it (a recursive
    function's pair), as srcgrad writes them now."""
    derivative, args = GENERATED[name]
    derivative(*args())
    generated = functions_in(derivative.source)
    block = next(b for b in python_blocks(document) if f"def {name}(" in b)
    for shown_name, text in functions_in(block).items():
        assert same_code(text, generated[shown_name]), (
            f"{document.relative_to(ROOT)} shows an old {shown_name}; paste this in its "
            f"place:\n\n{generated[shown_name]}"
        )


@pytest.mark.parametrize(
    ("document", "name"),
    [(README, name) for name in sorted(USER)] + [(PYPI, "loss")],
    ids=lambda v: getattr(v, "name", v),
)
def test_user_functions_in_the_readme_are_the_ones_tested(document, name):
    readme = shown((name,), document)[name]
    assert readme == textwrap.dedent(inspect.getsource(USER[name])).rstrip()


def test_show_prints_the_generic_version_the_readme_describes():
    # the README: grad_loss never computes the loss, while `python -m srcgrad show`
    # (no arguments, so no ranks) prints a version that "computes the mean's terms to
    # count them, and sums adjoints back down (`unbroadcast_to`)"
    text = " ".join(README.read_text().split())
    assert "`python -m srcgrad show examples/quickstart.py:loss` calls nothing" in text
    shown_code = subprocess.run(
        [sys.executable, "-m", "srcgrad", "show", "examples/quickstart.py:loss"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    generic = functions_in(shown_code)["grad_loss"]
    assert "np.size(y * np.log(p)" in generic and "unbroadcast_to(" in generic, (
        "`python -m srcgrad show` prints other code for the README's loss now: make the "
        f"README's paragraph after grad_loss say what it does:\n\n{generic}"
    )
