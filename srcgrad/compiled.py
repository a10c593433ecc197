"""Compiled derivatives: ``compile="numba"``.

In:  the text of a generated module made in the numba emission profile (``Builder.profile
== "numba"``: backward loops written with range arithmetic, never ``reversed``), the
bindings it was executed with, and where its lines come from.
Out: :class:`Jitted`, the callable a :class:`~srcgrad.compiler.driver.Derived` runs: the
module's functions (and the user's own functions they call) compiled by ``numba.njit``,
on the first call with each kind of arguments.

Two checks stand between the generated code and numba, so that a construct numba cannot
compile is reported as a :class:`~srcgrad.errors.CompileError` at the user's line, never as
numba's own ``TypingError``:

- :func:`refuse` reads the generated module before numba sees it and refuses what the
  profile knows numba rejects (the runtime helpers, which take any rank; dicts;
  ``np.errstate``), with what to write instead;
- :class:`Jitted` catches what numba itself refuses on the first call (a numpy function or
  keyword numba does not have, a list mixing types) and names the user's line the
  generated line comes from, with the first lines of numba's reason.

The timed choice: numba's code is not faster everywhere (small matrix products inside a
compiled loop lose to numpy's BLAS calls from Python). On the first call with each size of
arguments (the shapes, and the integers, which may count trips), :class:`Jitted` times
numba's code and plain srcgrad's derivative (the plain profile's code, made then),
:data:`SAMPLES` calls of each interleaved (one each where one is four times as fast), and
keeps the faster for that size: a derivative compiled by numba is never slower than plain
srcgrad's, give or take the noise of the samples. ``srcgrad.compiled.CHOOSE = False`` runs
numba's code always.

``compile="numba"`` raises those errors; ``compile="numba-or-python"`` warns
(:class:`CompileWarning`) and runs plain Python instead: the plain profile's code where
:func:`refuse` refused, and where numba did (plain srcgrad's derivative, made then).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import re
import time
import types
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import numba_helpers
from .errors import CompileError

#: the values of ``compile=``: None (plain Python), numba or a clear error, numba or
#: plain Python with a warning
OPTIONS = (None, "numba", "numba-or-python")

_INSTALL = 'pip install "srcgrad[numba]"'

#: whether a compiled derivative is timed against plain srcgrad's on its first call with
#: each size of arguments, the faster kept (False: numba's code always)
CHOOSE = True
_NDARRAY = np.ndarray

#: the calls of each timed, interleaved (the fastest of each compared)
SAMPLES = 4
#: numba.njit's options: no C callback wrapper (nothing calls the functions from C; about
#: a tenth less compile time)
_NJIT = {"no_cfunc_wrapper": True}
#: a ratio of times past which one sample of each decides the timed choice
_CLEAR = 4.0
#: the sizes of arguments timed per derivative (later sizes run numba's code untimed)
_SIZES = 16


class CompileWarning(UserWarning):
    """``compile="numba-or-python"`` ran a derivative as plain Python: numba could not
    compile it (the message says where and why).

    Args:
        message: where numba refused and why.

    Example:
        ```python
        import warnings

        import numpy as np

        import srcgrad


        def f(x):
            parts = {"a": x}
            return np.sum(parts["a"] ** 2)


        with warnings.catch_warnings():
            warnings.simplefilter("ignore", srcgrad.CompileWarning)
            try:
                g = srcgrad.grad(f, compile="numba-or-python")(np.ones(3))
            except ImportError:  # numba not installed
                g = 2 * np.ones(3)
        assert np.allclose(g, 2.0)
        ```
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)


def profile_of(option: str | None) -> str | None:
    """The emission profile for a ``compile=`` option (checked): ``"numba"`` or None.
    Raises ``ImportError`` when numba is asked for and not installed."""
    if option not in OPTIONS:
        raise ValueError(f"compile must be None, 'numba' or 'numba-or-python', not {option!r}")
    if option is None:
        return None
    numba()  # (installed? said when the transformation is made, not at its first call)
    return "numba"


def numba() -> Any:
    """The numba module, or an ImportError saying how to install it."""
    try:
        import numba as module
    except ImportError:
        raise ImportError(
            f"compile='numba' needs numba, which is not installed: {_INSTALL}"
        ) from None
    return module


# -- refusals before numba sees the code --------------------------------------------------

#: what the profile refuses, by the kind of generated node, with what to write instead
_ADVICE = {
    "helper": (
        "its adjoint calls srcgrad's runtime helper {what}, which has no numba form yet "
        "({why}); {instead}, or use compile='numba-or-python' to run this derivative as plain "
        "Python"
    ),
    "dict": (
        "numba compiles no Python dict here: pass and return arrays, floats or tuples of "
        "them, or use compile='numba-or-python'"
    ),
    "errstate": (
        "numba has no np.errstate: remove the `with np.errstate(...)` block, or use "
        "compile='numba-or-python'"
    ),
}


def refuse(
    text: str,
    helpers: dict[str, str],
    where: Callable[[int], tuple[str | None, int | None, str | None]],
) -> None:
    """Raise :class:`CompileError` for the first construct of the generated module ``text``
    that the numba profile refuses; ``helpers``: the module's runtime helpers (name in
    srcgrad -> name in the module); ``where(lineno)``: the user's file, line and text a
    generated line comes from."""
    tree = ast.parse(text)
    defined = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    helper_names = {generated: h for h, generated in helpers.items() if generated in defined}
    refused = {g: h for g, h in helper_names.items() if h not in numba_helpers.FORMS}
    for func in tree.body:
        if not isinstance(func, ast.FunctionDef) or func.name in helper_names:
            continue
        for node in ast.walk(func):
            found = _refused(node, refused)
            if found is not None:
                kind, what = found
                filename, lineno, line = where(node.lineno)
                generated = text.splitlines()[node.lineno - 1].strip()
                advice = _helper_advice(what) if kind == "helper" else _ADVICE[kind]
                raise CompileError(
                    f"compile='numba' cannot compile the derivative of this line: "
                    f"{advice} (generated line: `{generated}`)",
                    filename=filename,
                    lineno=lineno,
                    source_line=line,
                )


def _refused(node: ast.AST, helpers: dict[str, str]) -> tuple[str, str] | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in helpers:
            return "helper", helpers[node.func.id]
        if node.func.id == "dict":
            return "dict", "dict"
    if isinstance(node, (ast.Dict, ast.DictComp)):
        return "dict", "dict"
    if isinstance(node, ast.With):
        return "errstate", "errstate"
    return None


#: why a helper has no numba form, and what to write instead, by family
_SEQUENCES = (
    "it works on lists, tuples and dicts (pytrees), which numba does not pass",
    "pass arrays (np.stack the leaves) and floats instead of containers",
)
_BROADCAST = (
    "it sums an adjoint down to a broadcast operand's shape, for any rank",
    "give the operands one shape (a float parameter broadcast against an array has "
    "this adjoint too)",
)
_SLICES = (
    "it places the adjoint of a slice or a row read into zeros, for any index",
    "read elements one at a time in a loop (for i in range(n): ... x[i] ...), whose "
    "adjoints compile",
)
_HELPER_ADVICE = {
    **dict.fromkeys(
        ("zeros_seq", "add_at", "set_at", "unstack", "unstack_like", "split_like"),
        _SEQUENCES,
    ),
    "unbroadcast": _BROADCAST,
    "unbroadcast_to": _BROADCAST,
    "index_adjoint": _SLICES,
}
_OTHER = (
    "the adjoint of a numpy function, written for any shape",
    "write it with elementwise arithmetic and the numpy functions numba supports",
)


def _helper_advice(helper: str) -> str:
    why, instead = _HELPER_ADVICE.get(helper, _OTHER)
    return _ADVICE["helper"].format(what=helper, why=why, instead=instead)


# -- numba's own refusals, on the first call -------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')


class Jitted:
    """A generated module's entry point compiled by ``numba.njit``: called like the
    plain function. Where numba refuses, ``strict=False`` warns (:class:`CompileWarning`)
    and runs plain srcgrad's derivative (``python``, the same function uncompiled, where
    none can be made)."""

    def __init__(
        self,
        code: types.CodeType,
        bindings: dict[str, Any],
        entry: str,
        python: Callable[..., Any],
        where: Callable[[str, int], tuple[str | None, int | None, str | None]],
        strict: bool,
    ) -> None:
        nb = numba()
        namespace = dict(bindings)
        namespace["__name__"] = python.__globals__["__name__"]
        exec(code, namespace)
        made = {
            k: v
            for k, v in namespace.items()
            if inspect.isfunction(v) and v.__globals__ is namespace
        }
        for k, v in namespace.items():  # the user's functions the code calls, compiled too
            if k not in made and _user_function(v):
                namespace[k] = nb.njit(v, **_NJIT)
        shared = _shared(made, namespace)
        for k, v in made.items():
            namespace[k] = _helper(k, v) if k in shared else nb.njit(v, **_NJIT)
        self.jitted = namespace[entry]
        self.python = python
        self.where = where
        self.strict = strict
        self.failed: CompileError | None = None
        self.filename = code.co_filename

        #: makes plain srcgrad's derivative (the plain profile's code), for the timed
        #: choice (:func:`offer_plain`); None: numba's code always
        self.plain: Callable[[], Callable[..., Any]] | None = None
        self._plain: Callable[..., Any] | None = None
        #: by size of arguments: whether numba's code was the faster
        self.chosen: dict[tuple[Any, ...], bool] = {}

    def __call__(self, *args: Any) -> Any:
        if self.failed is not None:  # (numba-or-python, refused once: plain Python)
            return self._fallback()(*args)
        size = _size(args) if CHOOSE and self.plain is not None else None
        if size is not None and not self.chosen.get(size, True):
            return self._plain_function()(*args)
        try:
            result = self.jitted(*args)
        except Exception as exc:
            if not _numba_error(exc) and self._compiled(args):  # (the code's own error)
                raise
            error = self.error(exc, args)
            if self.strict:
                raise error from None
            self.failed = error
            warnings.warn(
                f"compile='numba-or-python': running the derivative as plain Python: {error}",
                CompileWarning,
                stacklevel=3,
            )
            return self._fallback()(*args)
        if size is not None and size not in self.chosen and len(self.chosen) < _SIZES:
            self.chosen[size] = self._numba_faster(args)
        return result

    def _fallback(self) -> Callable[..., Any]:
        """What runs where numba refused: plain srcgrad's derivative, else this module's
        code uncompiled (its loops, fused ones too, run slowly in Python)."""
        return self.python if self.plain is None else self._plain_function()

    def _plain_function(self) -> Callable[..., Any]:
        if self._plain is None:
            assert self.plain is not None
            self._plain = self.plain()
        return self._plain

    def _numba_faster(self, args: Sequence[Any]) -> bool:
        """Whether numba's code runs faster than plain srcgrad's on ``args``: the fastest
        of :data:`SAMPLES` calls of each, interleaved (plain srcgrad's called once before,
        so that a first call's costs are not timed)."""
        try:
            plain = self._plain_function()
            plain(*args)
        except Exception:  # (plain srcgrad refuses what numba ran: numba's code)
            return True
        best = {True: float("inf"), False: float("inf")}
        for _ in range(SAMPLES):
            for numba_code, call in ((True, self.jitted), (False, plain)):
                start = time.perf_counter()
                call(*args)
                best[numba_code] = min(best[numba_code], time.perf_counter() - start)
            if max(best.values()) > _CLEAR * min(best.values()):
                break  # (no noise makes up that gap: fewer slow calls)
        return best[True] <= best[False]

    def _compiled(self, args: Sequence[Any]) -> bool:
        """Whether numba has compiled the code for arguments like ``args`` (an error
        raised then is the code's own, as plain Python would raise it; one raised while
        compiling is numba's, an ``AttributeError`` of its typing say)."""
        try:
            kinds = tuple(self.jitted.typeof_pyval(a) for a in args)
        except Exception:
            return False
        return kinds in self.jitted.overloads

    def error(self, exc: BaseException, args: Sequence[Any]) -> CompileError:
        """The :class:`CompileError` for numba's refusal ``exc``: at the user's line the
        generated line numba names comes from, with numba's reason."""
        text = _ANSI.sub("", str(exc))
        reason = _reason(text)
        filename = lineno = line = None
        generated = ""
        for found in _LOCATION.finditer(text):
            name, number = found.group(1), int(found.group(2))
            if name == self.filename:
                filename, lineno, line = self.where(name, number)
                generated = _line(name, number)
                break
            filename, lineno, line = name, number, _line(name, number)
        if filename is None:  # (nowhere named: the function differentiated)
            filename, lineno, line = self.where(self.filename, 1)
            if not _numba_error(exc):
                reason = f"{type(exc).__name__} while compiling: {reason}"
        if "non-precise type" in text or "Cannot determine Numba type" in text and not generated:
            kinds = ", ".join(type(a).__name__ for a in args)
            reason += f" (the arguments were: {kinds})"
        where = f" (generated line: `{generated}`)" if generated else ""
        return CompileError(
            f"numba cannot compile the derivative of this line: {reason}{where}. Write it "
            "with numpy functions numba supports (https://numba.readthedocs.io, 'Supported "
            "NumPy features'), pass arrays, floats and tuples, or use "
            "compile='numba-or-python' to run it as plain Python",
            filename=filename,
            lineno=lineno,
            source_line=line,
        )


#: the numba profile's runtime helpers compiled, by name and code: each module that calls
#: them shares them (numba compiles each helper once per kind of arguments, not per
#: module); their globals: numpy and themselves (no module's, which would keep its
#: bindings, the user's functions among them, alive)
_HELPERS: dict[tuple[Any, ...], Any] = {}
_HELPER_GLOBALS: dict[str, Any] = {}


def _shared(made: dict[str, Any], namespace: dict[str, Any]) -> set[str]:
    """The functions of ``made`` that are :mod:`srcgrad.numba_helpers`'s forms reading no
    global but numpy, builtins and other such helpers (compiled once for all modules)."""
    import numpy

    if namespace.get("np") is not numpy:
        return set()
    reads = {
        k: {n for n in v.__code__.co_names if n in namespace and n != "np"}
        for k, v in made.items()
        if k in numba_helpers.FORMS
    }
    shared = {
        k
        for k, names in reads.items()
        if all(n in reads or namespace[n] is getattr(builtins, n, None) for n in names)
    }
    while True:  # (a helper calling one that is not shared is not shared either)
        kept = {k for k in shared if all(n in shared or n not in reads for n in reads[k])}
        if kept == shared:
            return shared
        shared = kept


def _helper(k: str, function: types.FunctionType) -> Any:
    """The helper ``function`` named ``k`` compiled, shared between modules."""
    import numpy

    code = function.__code__
    key = (k, code.co_code, repr(code.co_consts), code.co_names)
    if key not in _HELPERS:
        if _HELPER_GLOBALS.get(k) is not None:  # (another version of it)
            return numba().njit(function, **_NJIT)
        _HELPER_GLOBALS["np"] = numpy
        _HELPER_GLOBALS["__builtins__"] = builtins
        copy = types.FunctionType(code, _HELPER_GLOBALS, k, function.__defaults__)
        _HELPERS[key] = _HELPER_GLOBALS[k] = numba().njit(copy, **_NJIT)
    return _HELPERS[key]


def _numba_error(exc: BaseException) -> bool:
    from numba.core.errors import NumbaError

    return isinstance(exc, NumbaError)


def _user_function(value: Any) -> bool:
    """Whether ``value`` is a plain Python function of the user's (not numpy's, not a
    builtin, not srcgrad's): numba compiles it with the derivative that calls it."""
    if not inspect.isfunction(value):
        return False
    module = getattr(value, "__module__", None) or ""
    return module.split(".")[0] not in ("numpy", "scipy", "srcgrad", "numba", "math")


def _reason(text: str) -> str:
    """The first lines of numba's message that say what it refused."""
    picked: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("Failed in", "During:", "File ", "<source")):
            continue
        if line.startswith(("^", "def ", "The function", "- Resolution", "Known", "Usage")):
            continue
        picked.append(line.rstrip(":"))
        if len(picked) == 2:
            break
    return "; ".join(picked) or "numba refused it"


def _line(filename: str, lineno: int) -> str:
    import linecache

    return linecache.getline(filename, lineno).strip()


def offer_plain(derived: Any, make: Callable[..., Any]) -> Any:
    """``derived`` (a :class:`~srcgrad.compiler.driver.Derived`), its compiled entry point
    given how to make plain srcgrad's derivative (``make(jit=None)``, on the first call:
    the timed choice)."""
    if isinstance(derived.function, Jitted):
        derived.function.plain = lambda: make(jit=None).function
    return derived


def _size(args: Sequence[Any]) -> tuple[Any, ...]:
    """What the timed choice is made for: each argument's shape and dtype (an array's),
    value (an integer's: it may count a loop's trips) or type (cheap: read at each call)."""
    return tuple(
        a
        if type(a) is int
        else (a.shape, a.dtype)
        if type(a) is _NDARRAY
        else (type(a), len(a))
        if type(a) in (tuple, list)
        else type(a)
        for a in args
    )
