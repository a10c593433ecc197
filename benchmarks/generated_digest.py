"""A digest of the code srcgrad generates, to show that a change to the compiler left it
as it was (or to show where it differs).

    python benchmarks/generated_digest.py            # prints the md5 of all of it
    python benchmarks/generated_digest.py --out F    # and writes the code itself to F

It takes the gradient of every function of the control-flow corpus
(``tests/corpus_control_flow.py``) at its first point, in reverse and forward mode, and
of the straight-line and loop functions of ``transform_cost.py --scaling`` at 10, 40 and
120 statements; the text is every derivative's ``.source`` in that order.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests"), str(HERE)]

from corpus_control_flow import CASES  # noqa: E402
from transform_cost import _function  # noqa: E402

import srcgrad  # noqa: E402


def generated() -> str:
    parts = []
    for case in CASES:
        for mode in ("reverse", "forward"):
            d = srcgrad.grad(case.func, wrt=case.wrt, mode=mode)
            d(*case.points[0])
            parts.append(f"# {case.func.__name__} {mode}\n{d.source}")
    args = (np.linspace(0.1, 0.9, 4), np.linspace(-0.5, 0.5, 4), np.eye(4) * 0.3)
    where = Path(tempfile.gettempdir()) / "srcgrad_digest"  # (one path: docstrings name it)
    where.mkdir(exist_ok=True)
    for loop in (False, True):
        for n in (10, 40, 120):
            for mode in ("reverse", "forward"):
                d = srcgrad.grad(_function(n, loop, where), mode=mode)
                d(*args)
                parts.append(f"# scaling {n} loop={loop} {mode}\n{d.source}")
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the generated code here too")
    options = parser.parse_args()
    text = generated()
    if options.out:
        options.out.write_text(text)
    print(hashlib.md5(text.encode()).hexdigest(), f"{len(text.splitlines())} lines")


if __name__ == "__main__":
    main()
