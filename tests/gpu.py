"""Where the cupy tests get cupy: the module where a CUDA GPU is present; otherwise the
test (or the module) skips, saying why. Nothing here fakes a GPU."""

from __future__ import annotations

from typing import Any

import pytest


def cupy_or_skip() -> Any:
    cupy = pytest.importorskip("cupy", reason="cupy is not installed (pip install '.[gpu]')")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no driver, no runtime: no GPU to run on
        count = 0
    if count <= 0:
        pytest.skip("no CUDA GPU available", allow_module_level=True)
    return cupy
