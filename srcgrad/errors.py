"""Errors srcgrad raises, each pointing at the user's own source.

Every error about a construct names the user's file, line and source text,
says what is wrong and what to do instead.
"""

from __future__ import annotations

import ast


class SrcgradError(Exception):
    """Base class of every srcgrad error about the code being differentiated.

    Its text is ``file:line:``, the line of your code, then the message; the parts are
    attributes too (``message``, ``filename``, ``lineno``, ``source_line``). srcgrad raises
    it when it makes the code for a derivative (at the first call with a new kind of
    arguments), before running any of it.

    Args:
        message: what is wrong and what to write instead.
        filename: the file of the user's code, or None.
        lineno: the line in it, or None.
        source_line: the text of that line, or None.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            global calls
            return x * 2.0


        try:
            srcgrad.grad(f)(1.0)
        except srcgrad.SrcgradError as error:
            assert error.lineno == 7 and error.source_line.strip() == "global calls"
        ```
    """

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        lineno: int | None = None,
        source_line: str | None = None,
    ) -> None:
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.source_line = source_line
        super().__init__(self._format())

    def _format(self) -> str:
        if self.filename is None:
            return self.message
        where = f"{self.filename}:{self.lineno}" if self.lineno else self.filename
        text = f"\n    {self.source_line.strip()}" if self.source_line else ""
        return f"{where}:{text}\n{self.message}"


class UnsupportedSyntaxError(SrcgradError):
    """A construct srcgrad cannot differentiate, with what to write instead.

    The docs' Sharp edges page lists the common ones, each with its message and what to
    write instead.

    Args:
        message: what is wrong and what to write instead.
        filename: the file of the user's code, or None.
        lineno: the line in it, or None.
        source_line: the text of that line, or None.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            y = x * 2.0
            z = y[0:2]
            z *= 3.0  # y changes too: refused
            return np.sum(y * x)


        try:
            srcgrad.grad(f)(np.ones(3))
        except srcgrad.UnsupportedSyntaxError as error:
            assert "Write `z = z * 3.0`" in error.message
        ```
    """


class NoDerivativeError(SrcgradError):
    """A call to a function with no derivative rule and no Python source.

    Also a ``srcgrad.primitive`` used in a mode it has no rule for. Write the value with
    operations srcgrad knows, or give the function rules (``srcgrad.primitive``).

    Args:
        message: what is wrong and what to write instead.
        filename: the file of the user's code, or None.
        lineno: the line in it, or None.
        source_line: the text of that line, or None.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            return np.median(x)


        try:
            srcgrad.grad(f)(np.ones(3))
        except srcgrad.NoDerivativeError as error:
            assert "numpy.median" in error.message
        ```
    """


class CompileError(SrcgradError):
    """A derivative the compiler asked for (``compile="numba"``) cannot compile, at the
    user's line it comes from, with what to write instead.

    Args:
        message: what cannot be compiled and what to write instead.
        filename: the file of the user's code, or None.
        lineno: the line in it, or None.
        source_line: the text of that line, or None.

    Example:
        ```python
        import numpy as np

        import srcgrad


        def f(x):
            parts = {"a": x}
            return np.sum(parts["a"] ** 2)


        try:
            srcgrad.grad(f, compile="numba")(np.ones(3))
        except srcgrad.CompileError as error:  # numba installed: dicts do not compile
            print(error.message)
        except ImportError:  # numba not installed
            pass
        ```
    """


class SourceLocator:
    """Turns AST nodes of one user function into file, line and source text."""

    def __init__(self, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines  # the whole file, as linecache holds it

    def text(self, lineno: int | None) -> str | None:
        if lineno is None or not 1 <= lineno <= len(self.lines):
            return None
        return self.lines[lineno - 1].rstrip("\n")

    def segment(self, node: ast.AST) -> str:
        """The user's own text of ``node`` (an expression of the parsed function), on one
        line; ``ast.unparse`` of it where its position is unknown."""
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        start, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if None in (first, last, start, end) or not 1 <= first <= last <= len(self.lines):
            return ast.unparse(node)
        # (column offsets count UTF-8 bytes)
        text = "".join(self.lines[first - 1 : last]).encode()
        head = len("".join(self.lines[first - 1 : last - 1]).encode())
        piece = text[start : head + end].decode(errors="replace")
        return " ".join(line.strip() for line in piece.splitlines())

    def error(self, cls: type[SrcgradError], node: ast.AST | None, message: str) -> SrcgradError:
        lineno = getattr(node, "lineno", None)
        return cls(message, filename=self.filename, lineno=lineno, source_line=self.text(lineno))
