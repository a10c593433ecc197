"""The documentation site: every page in mkdocs.yml's nav exists and every
relative link in docs/*.md points at a file that exists."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def nav_pages():
    text = (ROOT / "mkdocs.yml").read_text()
    return re.findall(r"^\s+- [^:]+: (\S+\.md)\s*$", text, re.MULTILINE)


def test_nav_pages_exist():
    pages = nav_pages()
    assert "index.md" in pages
    missing = [p for p in pages if not (DOCS / p).is_file()]
    assert not missing, missing


def test_relative_links_resolve():
    broken = []
    for page in sorted(DOCS.glob("*.md")):
        for target in LINK.findall(prose(page.read_text())):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if not (page.parent / path).exists():
                broken.append(f"{page.name}: {target}")
    assert not broken, broken


def prose(text: str) -> str:
    """``text`` without its code (fenced blocks and inline spans), where ``f(x)`` after
    a ``]`` is code, not a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)
