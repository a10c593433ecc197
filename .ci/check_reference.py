"""After `mkdocs build`: every public name of srcgrad and srcgrad.testing has an
entry (an anchor) on the built API reference page.

    python .ci/check_reference.py SITE_DIR
"""

import re
import sys
from pathlib import Path

import srcgrad
import srcgrad.testing

# documented under the function's own module: the package attribute of the same
# name shadows the module srcgrad.export
ANCHOR_OF = {"srcgrad.export": "srcgrad.export.export"}


def main(site: Path) -> int:
    page = (site / "api" / "index.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'id="([^"]+)"', page))
    missing = []
    for module in (srcgrad, srcgrad.testing):
        for name in module.__all__:
            full = f"{module.__name__}.{name}"
            if ANCHOR_OF.get(full, full) not in anchors:
                missing.append(full)
    if missing:
        print("no API reference entry for:", ", ".join(missing))
        return 1
    count = len(srcgrad.__all__) + len(srcgrad.testing.__all__)
    print(f"API reference: all {count} public names have an entry")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
