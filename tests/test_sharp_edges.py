"""docs/sharp-edges.md: each refusal the page shows is srcgrad's, word for word.

Each entry of the page is a script srcgrad refuses (a fenced Python block), the
message it raises (the ``text`` block after it, ``ErrorName: message``), and the
version to write instead (the Python block after that). The refused script is
saved under the file name its message shows and run: it must raise that message,
but for the file's directory. The version to write instead must run (each checks
its gradient with ``check_grads``).
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "sharp-edges.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)
WHERE = re.compile(r"^\w+: (\w+\.py):\d+:")


def entries() -> list[tuple[str, str, str, str]]:
    """(file name, refused script, message, what to write instead) of each entry."""
    blocks = FENCE.findall(PAGE.read_text())
    found = []
    for i, (language, message) in enumerate(blocks):
        if language != "text":
            continue
        (before, refused), (after, fixed) = blocks[i - 1], blocks[i + 1]
        assert (before, after) == ("python", "python"), message
        where = WHERE.match(message)
        name = where.group(1) if where else f"entry_{i}.py"
        found.append((name, refused, message.rstrip("\n"), fixed))
    return found


ENTRIES = entries()


def test_the_page_has_its_entries():
    names = [name for name, *_ in ENTRIES]
    assert len(ENTRIES) >= 10 and len(names) == len(set(names))


@pytest.mark.parametrize(
    ("name", "refused", "message", "fixed"), ENTRIES, ids=[e[0] for e in ENTRIES]
)
def test_the_page_shows_the_message_srcgrad_raises(name, refused, message, fixed, tmp_path):
    script = tmp_path / name
    script.write_text(refused)
    with pytest.raises(Exception) as raised:  # noqa: PT011 (the page names the class)
        runpy.run_path(str(script))
    got = f"{type(raised.value).__name__}: {raised.value}".replace(f"{tmp_path}/", "")
    assert got == message, f"docs/sharp-edges.md shows an old message; paste:\n\n{got}"


@pytest.mark.parametrize(
    ("name", "refused", "message", "fixed"), ENTRIES, ids=[e[0] for e in ENTRIES]
)
def test_what_the_page_says_to_write_instead_is_differentiated(
    name, refused, message, fixed, tmp_path
):
    script = tmp_path / f"fixed_{name}"
    script.write_text(fixed)
    assert "check_grads(" in fixed
    runpy.run_path(str(script))
