"""The README shows generated code: it must be the code srcgrad generates today.

Each fenced Python block of README.md that defines a generated function
(``def grad_...``) is compared, line for line, with the source srcgrad makes now
for the same user function and the arguments the README names; and each user
function the README shows is the one defined here. When the optimizer changes
what it writes, this test says which README block to paste anew. The package
index's page (docs/pypi.md) is checked the same way. (The longer walks through
generated code live in docs/tutorial.md, checked by tests/test_tutorial.py.)

The README stays short: the commands, the quickstart and its generated code, and a
link to every page of the documentation site.
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
from test_recursion_shapes import power_loss  # (the README's recursion)

import srcgrad

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PYPI = ROOT / "docs" / "pypi.md"  # (pyproject.toml's readme)


def loss(w, x, y):
    p = 1 / (1 + np.exp(-(x @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def _loss_args():  # "for a 1-D w and 2-D x"
    rng = np.random.default_rng(0)
    return rng.standard_normal(3), rng.standard_normal((5, 3)), rng.random(5)


def scatter(x, w, idx):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[idx[i]] += w * x[i]
    return np.sum(y * y)


def _scatter_args():  # (the README's summary line spells scatter out)
    rng = np.random.default_rng(7)
    return rng.standard_normal(8), 0.5, rng.integers(0, 8, 8)


def _power_args():  # (the README's summary line spells power out)
    return np.linspace(0.5, 1.5, 6), 5


#: generated function name (of the README's block) -> (its derivative, the arguments it is
#: called with); for a recursion the block shows the adjoint of the recursive function
GENERATED = {
    "grad_loss": (srcgrad.grad(loss), _loss_args),
    "grad_scatter": (srcgrad.grad(scatter, wrt=(0, 1)), _scatter_args),
    "power_bwd": (srcgrad.grad(power_loss), _power_args),
}
USER = {"loss": loss}


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
    assert set(shown(("grad_", "jvp_", "power_bwd"))) == set(GENERATED)


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


def test_the_readme_spells_out_the_recursion_it_shows():
    text = README.read_text()
    assert (
        "the gradient of <code>np.sum(power(x, n))</code>, where <code>power</code> squares" in text
    )
    assert "<code>power(x, n // 2)</code> (times <code>x</code> for odd <code>n</code>)" in text


def test_the_readme_spells_out_the_scatter_it_shows():
    text = README.read_text()
    assert (
        "<code>y = np.zeros_like(x); for i in range(x.shape[0]): y[idx[i]] += w * x[i]</code>"
        in text
    )
    assert "<code>np.sum(y * y)</code>, in x and w" in text


def test_the_readme_stays_short_and_links_every_page_of_the_site():
    text = README.read_text()
    assert len(text.splitlines()) <= 150, "move long sections into docs/ pages"
    nav = re.findall(r"^\s+- [^:]+: (\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    unlinked = [page for page in nav if page != "index.md" and f"(docs/{page})" not in text]
    assert not unlinked, f"README.md does not link {unlinked}"
