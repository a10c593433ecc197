"""``srcgrad.export(d, path)``: keep a derivative's generated code as a module file.

The file is ``d.source``: after a call, the code specialised for that call's
argument ranks; before any call, the generic code. It imports only the array
module (``import numpy as np``) and, where the function uses names of its own
module (constants, helpers), that module by name (``from mymodel import
SCALE``), so it runs without srcgrad installed wherever the user's module is
importable::

    d = srcgrad.grad(loss)
    d(w, x, y)
    srcgrad.export(d, "loss_grad.py")  # defines grad_loss(w, x, y)
"""

from __future__ import annotations

import ast
import os
import pathlib
from typing import Any


def export(derivative: Any, path: str | os.PathLike[str]) -> pathlib.Path:
    """Write ``derivative.source`` to ``path`` (a new or overwritten ``.py`` file) and
    return the path. ``derivative`` is anything a srcgrad transformation returns.

    The module imports numpy (and, where the code calls them, your own modules) and
    defines every helper it calls, so it runs without srcgrad installed.

    Args:
        derivative: what a srcgrad transformation returned; it exports the code of its last
            call (a derivative of a derivative must have been called once).
        path: the file to write (a ``str`` or ``os.PathLike``).

    Returns:
        The path written, as a ``pathlib.Path``.

    Raises:
        TypeError: ``derivative`` is not something a srcgrad transformation made.
        ValueError: ``derivative`` has no generated code yet (call it once first).
        IsADirectoryError: ``path`` is a directory.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            return np.sum(np.sin(x) * x)


        df = srcgrad.grad(f)
        df(np.ones(3))
        path = srcgrad.export(df, "grad_f.py")  # then: from grad_f import grad_f
        assert "def grad_f(x):" in path.read_text()
        ```
    """
    source = getattr(derivative, "source", None)
    if not isinstance(source, str) or not hasattr(derivative, "__wrapped__"):
        raise TypeError(
            f"export takes an object made by a srcgrad transformation, got {derivative!r}"
        )
    if not any(isinstance(node, ast.FunctionDef) for node in ast.parse(source).body):
        # a derivative of a derivative is generated for its first call's arguments
        raise ValueError(f"{derivative!r} has no generated code yet: call it once, then export it")
    target = pathlib.Path(path)
    if target.is_dir():
        raise IsADirectoryError(f"export writes a file; {str(target)!r} is a directory")
    target.write_text(source if source.endswith("\n") else source + "\n", encoding="utf-8")
    return target
