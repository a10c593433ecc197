"""Stage 1, parse: a Python function in, its AST and resolved free names out.

In:  a plain Python function object (``def`` or ``lambda``).
Out: :class:`ParsedFunction`, holding an ``ast.FunctionDef`` whose line
numbers are the user's real file lines, and ``env``, the object every free
name refers to (closure cells first, then module globals, then builtins).

This is the one place that knows where a name comes from; a function whose
source is not available is a clear ``TypeError`` here.

The source is the one of the code the function runs (``func.__code__``), never the
one of a function it wraps (``functools.wraps`` sets ``__wrapped__``, which
``inspect.getsource`` follows), and it is checked against that code: a file edited
after its module was imported is refused, not differentiated as if it ran.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import dis
import inspect
import keyword
import linecache
import textwrap
import types
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import SourceLocator, SrcgradError, UnsupportedSyntaxError


class ParsedFunction:
    """A user function, parsed, with every free name resolved.

    It refers to the function weakly (srcgrad's cache keeps what it made for a function
    while the function lives, and must not keep the function alive), and records what
    the code was made from: ``code`` (``func.__code__``), ``defaults`` (its
    ``__defaults__`` and ``__kwdefaults__``) and ``env``.

    Between derivations (see :meth:`release`) the functions among its free names are held
    weakly too: a recursive closure's name for itself, or two closures that call each
    other, would otherwise keep it alive through srcgrad's cache. Reading ``env`` gives
    them back; :meth:`env_items` reads it without doing so.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        tree: ast.FunctionDef,
        locator: SourceLocator,
        env: dict[str, Any] | None = None,
    ) -> None:
        self._func = weakref.ref(func)
        self.tree = tree
        self.locator = locator
        self._env: dict[str, Any] = env if env is not None else {}
        self._released: dict[str, weakref.ref] = {}  # names whose functions are held weakly
        self.code = func.__code__
        self.defaults = defaults_of(func)
        self.qualname: str = func.__qualname__
        self.module: str | None = func.__module__

    @property
    def func(self) -> Callable[..., Any]:
        """The function (alive while anyone but srcgrad holds it)."""
        func = self._func()
        if func is None:
            raise ReferenceError(f"{self.qualname!r} was freed")
        return func

    @property
    def env(self) -> dict[str, Any]:
        """Every free name and the object it was resolved to (for a derivation: functions
        held weakly since :meth:`release` are held again)."""
        for name, ref in self._released.items():
            value = ref()
            self._env[name] = value if value is not None else _FREED
        self._released = {}
        return self._env

    @env.setter
    def env(self, env: dict[str, Any]) -> None:
        self._env, self._released = env, {}

    def env_items(self) -> Iterator[tuple[str, Any]]:
        """``env.items()``, without holding its functions again (for checks)."""
        for name, value in self._env.items():
            ref = self._released.get(name)
            yield name, (value if ref is None else _alive(ref))

    def release(self) -> None:
        """Hold the Python functions among the free names weakly until ``env`` is read
        again (the code made from them is finished)."""
        for name, value in self._env.items():
            if inspect.isfunction(value):
                self._released[name] = weakref.ref(value)
                self._env[name] = _FREED

    @property
    def name(self) -> str:
        return self.tree.name

    @property
    def params(self) -> list[str]:
        return [a.arg for a in self.tree.args.args]


#: what ``env`` holds for a function held weakly (or freed): never any name's object
_FREED = object()


def _alive(ref: weakref.ref) -> Any:
    value = ref()
    return value if value is not None else _FREED


def parse(func: Callable[..., Any]) -> ParsedFunction:
    """Parse ``func`` and resolve its free names."""
    if not inspect.isfunction(func):
        kind = type(func).__name__
        raise TypeError(
            f"srcgrad differentiates Python functions written in Python; got {func!r} "
            f"(a {kind}). Builtins and C functions have no source to transform: wrap the "
            "call in a Python function, or give it a rule with srcgrad.primitive."
        )
    code = func.__code__
    try:
        lines, firstlineno, filename = _source_lines(func)
    except (OSError, TypeError) as exc:
        raise TypeError(
            f"srcgrad needs the source code of {func.__qualname__!r} but Python cannot find it "
            f"({exc}). Functions typed at an interactive prompt or built with exec() have no "
            "source file; define the function in a module or notebook cell."
        ) from None
    locator = SourceLocator(filename, linecache.getlines(filename) or lines)
    if code.co_name == "<lambda>":
        tree = _lambda_tree(func, lines, firstlineno, locator)
    else:
        tree = _def_tree(func, lines, firstlineno, locator)
    env = _resolve(func, tree, locator)
    return ParsedFunction(func=func, tree=tree, locator=locator, env=env)


def _source_lines(func: Any) -> tuple[list[str], int, str]:
    """The lines of ``func``'s definition, its first line number and its file.

    The code's own source (``getsourcelines(func)`` would follow ``__wrapped__``), read
    from the file the code names with the function's globals for a loader's source
    (a notebook cell, a zip import); ``inspect.getsourcelines(code)`` finds the same
    lines, but looks the module up among all loaded modules first (a third of the
    first call's time for a 30-line function).
    """
    code = func.__code__
    filename = inspect.getsourcefile(code) or code.co_filename
    lines = linecache.getlines(filename, func.__globals__)
    start = code.co_firstlineno - 1
    if 0 <= start < len(lines):
        return inspect.getblock(lines[start:]), start + 1, filename
    found, first = inspect.getsourcelines(code)  # (its own error where there is none)
    return found, first, filename


def source_text(func: Any) -> str:
    """The dedented source of the code a Python function runs (``OSError`` or
    ``TypeError`` where it has none)."""
    if not inspect.isfunction(func):
        raise TypeError(f"{type(func).__name__} has no Python code")
    return textwrap.dedent("".join(_source_lines(func)[0]))


def env_is_current(parsed: ParsedFunction) -> bool:
    """Whether the function's code and default arguments are the ones parsed, and every
    free name still refers to the object it was resolved to.

    Python looks globals and closure cells up at call time, and defaults at each
    call; generated code binds them when it is made. Checking identity on each call
    keeps the two in step: a rebound global or new ``__defaults__`` makes the caller
    generate the code again.
    """
    func = parsed._func()
    if func is None or func.__code__ is not parsed.code:
        return False
    if func.__defaults__ is not parsed.defaults[0] or func.__kwdefaults__ is not parsed.defaults[1]:
        return False
    return sources_current(*free_name_sources(parsed))


def defaults_of(func: Any) -> tuple[Any, Any]:
    """What a call of ``func`` fills missing arguments from: its ``__defaults__`` and
    ``__kwdefaults__`` (compared by identity: assigning either makes a new object)."""
    return func.__defaults__, func.__kwdefaults__


def sources_current(
    cells: Iterable[tuple[Any, Any]], names: Iterable[tuple[dict, str, Any]]
) -> bool:
    """Whether each closure cell and namespace of :func:`free_name_sources` still holds
    the object recorded beside it."""
    for cell, value in cells:
        try:
            if cell.cell_contents is not value:
                return False
        except ValueError:  # (emptied)
            return False
    for namespace, name, value in names:
        if namespace.get(name, UNBOUND) is not value:
            return False
    return True


def free_name_sources(
    parsed: ParsedFunction,
) -> tuple[list[tuple[Any, Any]], list[tuple[dict, str, Any]]]:
    """Where the function reads each free name from when it runs, with the object the
    name was resolved to: ``(cell, object)`` for a closure variable, ``(namespace,
    name, object)`` for a global, and for a builtin two of those: its module's globals
    must not hold the name (``UNBOUND``), and builtins must hold the object."""
    func = parsed.func
    closure = dict(zip(parsed.code.co_freevars, func.__closure__ or ()))
    globals_ = func.__globals__
    cells, names = [], []
    for name, value in parsed.env_items():
        if name in closure:
            cells.append((closure[name], value))
        elif name in globals_:
            names.append((globals_, name, value))
        else:
            names.append((globals_, name, UNBOUND))
            names.append((builtins.__dict__, name, value))
    return cells, names


#: what a namespace that must not hold a name is checked against (``.get(name, UNBOUND)``)
UNBOUND = object()


def _def_tree(
    func: Callable[..., Any], lines: list[str], firstlineno: int, locator: SourceLocator
) -> ast.FunctionDef:
    text = "".join(lines)
    # an indented def (a method, a closure) is parsed where it stands, under an `if`:
    # its columns stay the file's, and its multi-line strings stay whole (dedenting the
    # text fails where one of their lines is indented less than the def)
    header = "if 1:\n" if text[:1] in (" ", "\t") else ""
    try:
        module = ast.parse(header + text)
    except SyntaxError:  # (what the file holds there now is not a function)
        raise _stale(func, types.SimpleNamespace(lineno=firstlineno), locator) from None
    ast.increment_lineno(module, firstlineno - 1 - len(header and "\n"))
    node = module.body[0].body[0] if header else module.body[0]
    if isinstance(node, ast.AsyncFunctionDef):
        raise locator.error(
            UnsupportedSyntaxError,
            node,
            f"srcgrad does not differentiate coroutine functions (`async def`): "
            f"{func.__qualname__!r} returns a coroutine, not a value. Differentiate a plain "
            "`def` function that computes the value, and await around it.",
        )
    matched = isinstance(node, ast.FunctionDef) and _matches(func, "".join(lines))
    if not matched:
        raise _stale(func, node, locator)
    node.decorator_list = []
    if isinstance(matched, str):  # a method whose private names Python mangled
        _mangle(node, matched)
    return node


def _mangle(tree: ast.AST, class_name: str) -> None:
    """Spell the private names in ``tree`` (``self.__w``, ``__helper``) as Python does in
    the body of class ``class_name`` (``self._Model__w``): generated code lives outside
    the class, where the names are not mangled for it."""
    prefix = "_" + class_name.lstrip("_")
    if prefix == "_":
        return  # (a class named only with underscores mangles nothing)

    def mangled(name: str) -> str:
        private = name.startswith("__") and not name.endswith("__") and "." not in name
        return prefix + name if private else name

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = mangled(node.id)
        elif isinstance(node, ast.Attribute):
            node.attr = mangled(node.attr)
        elif isinstance(node, ast.arg):
            node.arg = mangled(node.arg)
        elif isinstance(node, ast.keyword) and node.arg is not None:
            node.arg = mangled(node.arg)


def _stale(func: Callable[..., Any], node: Any, locator: SourceLocator) -> SrcgradError:
    """The error for a source that is not the one of the code the function runs."""
    return locator.error(
        SrcgradError,
        node,
        f"the source of {func.__qualname__!r} in {locator.filename} is not the code Python "
        "runs for it: the file was changed after the module was imported (or the "
        "function's __code__ was replaced). srcgrad differentiates the source, so reload "
        "the module (importlib.reload, or %autoreload in IPython) or restart Python, and "
        "differentiate again.",
    )


def _matches(func: Callable[..., Any], text: str) -> bool | str:
    """Whether ``text`` (the source of a ``def`` with its decorators, with its indentation
    in the file; or a ``lambda`` in parentheses) compiles to the code ``func`` runs.

    The text is compiled as Python compiled it (from text: a long expression compiles
    as it did, where an AST of that depth would exceed the recursion limit), inside the
    scopes it was defined in (a function binding its closure variables; for a method,
    its class, which decides name mangling and ``__class__``), and the parts of the two
    code objects that decide what the code does are compared: bytecode, constants (by
    type and value, nested code objects alike), names, locals, closure layout,
    arguments. An edit that changes the meaning changes one of them; line numbers and
    comments do not take part.

    True where it matches as written; the class's name where it matches in its class
    only (its private names are mangled); False where it does not match.
    """
    code = func.__code__
    parts = func.__qualname__.split(".")
    owner = parts[-2] if len(parts) > 1 else "<locals>"
    layouts = [None]  # no class around it; then, if that does not match, its class
    if owner != "<locals>" and owner.isidentifier() and not keyword.iskeyword(owner):
        layouts.append(owner)
    for class_name in layouts:
        compiled = _compile_in_place(text, func, class_name)
        if compiled is not None and _same_code(compiled, code):
            return class_name or True
    return False


#: compile flags of ``from __future__`` imports that change the code compiled
_FUTURE_FLAGS = __future__.annotations.compiler_flag

#: the bits of ``co_flags`` that change what a code object does
_MEANING_FLAGS = (
    inspect.CO_VARARGS
    | inspect.CO_VARKEYWORDS
    | inspect.CO_GENERATOR
    | inspect.CO_COROUTINE
    | inspect.CO_ASYNC_GENERATOR
    | inspect.CO_ITERABLE_COROUTINE
)


def _compile_in_place(
    text: str, func: Callable[..., Any], class_name: str | None
) -> types.CodeType | None:
    """The code object ``text`` compiles to, inside a class named ``class_name`` (None:
    none), inside a function binding ``func``'s free variables, in a module importing
    the modules ``func`` reads from its globals (Python compiles a method call on a name
    bound by an import differently); None where it does not compile or is not found.

    The scopes around it are written at indentations taken from the start of the
    text's own (``def enclosing():`` at none, ``class C:`` at its first character), so
    the text itself is not re-indented (which would change its multi-line strings)::

        def srcgrad_enclosing():
         k = 0
         class A:
            def f(self, x):
                return k * x
    """
    code = func.__code__
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    free = [v for v in code.co_freevars if not (class_name and v == "__class__")]
    if not all(v.isidentifier() and not keyword.iskeyword(v) for v in free):
        return None
    imported = [
        n
        for n in code.co_names
        if isinstance(func.__globals__.get(n), types.ModuleType)
        and n.isidentifier()
        and not keyword.iskeyword(n)
    ]
    headers = [f"import {n}\n" for n in imported]  # (compiled, never run)
    if free:
        inner = indent[:1] if class_name else indent  # (the enclosing function's body)
        headers.append("def srcgrad_enclosing():\n")
        headers.extend(f"{inner}{v} = 0\n" for v in free)
    if class_name:
        headers.append(f"{indent[:1] if free else ''}class {class_name}:\n")
    if len(headers) == len(imported) and indent:
        headers.append("if 1:\n")
    if len(indent) < (1 if free else 0) + (1 if class_name else 0):
        return None  # (no room for the scopes around it: not where it was defined)
    source = "".join(headers) + text.rstrip() + "\n"
    try:
        compiled = compile(
            source, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True
        )
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    todo = [compiled]  # breadth first: the shallowest code object of that name
    while todo:
        current = todo.pop(0)
        if current.co_name == code.co_name and current is not compiled:
            return current
        todo.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return None


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether two code objects do the same: the same bytecode, or (where the bytecode
    differs only in how a method is looked up, which depends on how the receiver's
    name was bound elsewhere in the module) the same instructions."""
    return _fingerprint(a, exact=True) == _fingerprint(b, exact=True) or _fingerprint(
        a, exact=False
    ) == _fingerprint(b, exact=False)


def _fingerprint(code: types.CodeType, exact: bool) -> tuple:
    """What decides what ``code`` does (not where its lines are): with ``exact``, its
    bytecode, else its instructions as :func:`_instructions` reads them."""
    if exact:
        body: Any = (code.co_code, getattr(code, "co_exceptiontable", b""))
    else:
        body = _instructions(code)
    return (
        code.co_name,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags & _MEANING_FLAGS,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        body,
        tuple(_constant_key(c, exact) for c in code.co_consts),
    )


def _instructions(code: types.CodeType) -> tuple:
    """``code``'s instructions, each as its operation and argument, with jumps to the
    position of their target, and the two spellings of a method call made one.

    Python compiles ``np.exp(x)`` as ``LOAD_GLOBAL np; LOAD_METHOD exp`` or as
    ``LOAD_GLOBAL (NULL + np); LOAD_ATTR exp`` depending on whether ``np`` was bound
    by an ``import`` anywhere in the module: the same call.
    """
    every = list(dis.get_instructions(code))
    kept = [i for i in every if i.opname not in _CALL_PROTOCOL]
    position: dict[int, int] = {}
    k = len(kept)
    for i in reversed(every):  # an offset's position: of the next instruction kept
        if i.opname not in _CALL_PROTOCOL:
            k -= 1
        position[i.offset] = k
    out = []
    for i in kept:
        if i.opcode in _JUMPS:
            arg: Any = ("to", position.get(i.argval, i.argval))
        else:
            arg = _constant_key(i.argval, exact=False)
        out.append(("LOAD_ATTR" if i.opname == "LOAD_METHOD" else i.opname, arg))
    return tuple(out)


#: instructions that only tell a call whether a method's receiver comes first
_CALL_PROTOCOL = frozenset({"PUSH_NULL", "EXTENDED_ARG", "CACHE", "NOP"})

_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _constant_key(value: Any, exact: bool) -> Any:
    """A constant by type and value: ``0.0``, ``-0.0``, ``0`` and ``False`` differ."""
    if isinstance(value, types.CodeType):
        return _fingerprint(value, exact)
    if isinstance(value, tuple):
        return ("tuple", tuple(_constant_key(v, exact) for v in value))
    if isinstance(value, frozenset):
        return ("frozenset", tuple(sorted((_constant_key(v, exact) for v in value), key=repr)))
    return (type(value).__name__, repr(value))


def _lambda_tree(
    func: Callable[..., Any], lines: list[str], firstlineno: int, locator: SourceLocator
) -> ast.FunctionDef:
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    module = None
    # The lines holding a lambda may be a fragment of a larger statement: trim
    # from the left until what is left parses.
    start = text.find("lambda")
    source = ""
    for begin in (0, start):
        candidate = text[begin:].rstrip()
        for end in range(len(candidate), 0, -1):
            try:
                module = ast.parse(candidate[:end])
                source = candidate[:end]
                break
            except SyntaxError:
                continue
        if module is not None:
            break
    wanted = [*func.__code__.co_varnames[: func.__code__.co_argcount]]
    found = []
    if module is not None:
        for node in ast.walk(module):
            if isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == wanted:
                found.append((node, ast.get_source_segment(source, node) or ""))
        _place(module, raw, text, begin, firstlineno)
    # of the lambdas with its parameters, the ones whose code is the code it runs
    matches = [(lam, seg, _matches(func, f"  (\n{seg}\n)\n")) for lam, seg in found]
    same = [(lam, seg) for lam, seg, matched in matches if matched]
    if found and not same:
        raise _stale(func, found[0][0], locator)
    if not same or any(seg != same[0][1] for _, seg in same[1:]):
        raise TypeError(
            f"srcgrad cannot tell which lambda on line {firstlineno} of {locator.filename} is "
            "the one to differentiate; give it its own line or write it with def."
        )
    lam = same[0][0]
    matched = next(m for node, _, m in matches if node is lam)
    if isinstance(matched, str):  # a lambda in a class body whose private names are mangled
        _mangle(lam, matched)
    ret = ast.Return(value=lam.body)
    ast.copy_location(ret, lam.body)
    tree = ast.FunctionDef(
        name="lambda",
        args=lam.args,
        body=[ret],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    ast.copy_location(tree, lam)
    return tree


def _place(module: ast.Module, raw: str, text: str, begin: int, firstlineno: int) -> None:
    """Give ``module``, parsed from ``text[begin:]`` (``text`` being ``raw``, the lines
    from the file's line ``firstlineno``, dedented), the file's lines and columns."""
    row = text.count("\n", 0, begin)  # the line of text that module's first line is
    line_start = text.rfind("\n", 0, begin) + 1
    first = len(text[line_start:begin].encode())  # (columns count UTF-8 bytes)
    content = next((k for k, line in enumerate(text.splitlines()) if line.strip()), 0)
    raw_line, text_line = raw.splitlines()[content], text.splitlines()[content]
    margin = len(raw_line) - len(text_line)  # the indentation dedent took off each line
    for node in ast.walk(module):
        if getattr(node, "col_offset", None) is not None:
            node.col_offset += margin + (first if node.lineno == 1 else 0)
        if getattr(node, "end_col_offset", None) is not None:
            node.end_col_offset += margin + (first if node.end_lineno == 1 else 0)
    ast.increment_lineno(module, firstlineno - 1 + row)


def _local_names(tree: ast.FunctionDef) -> set[str]:
    local = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    for extra in (tree.args.vararg, tree.args.kwarg):
        if extra is not None:
            local.add(extra.arg)
    for node in ast.walk(tree):
        if node is tree:
            continue  # the function's own name is not a local: it may call itself
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            local.add(node.id)
        elif isinstance(node, ast.arg):  # parameters of nested functions and lambdas
            local.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            local.add(node.name)
    return local


def _resolve(
    func: Callable[..., Any], tree: ast.FunctionDef, locator: SourceLocator
) -> dict[str, Any]:
    local = _local_names(tree)
    closure = {}
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                pass
    env: dict[str, Any] = {}
    # (the body's names only: default values and annotations were evaluated where the
    # function was defined, and srcgrad reads defaults from __defaults__)
    body = ast.Module(body=tree.body, type_ignores=[])
    for node in ast.walk(body):
        if not isinstance(node, ast.Name) or node.id in local or node.id in env:
            continue
        name = node.id
        if name in closure:
            env[name] = closure[name]
        elif name in func.__globals__:
            env[name] = func.__globals__[name]
        elif hasattr(builtins, name):
            env[name] = getattr(builtins, name)
        else:
            raise locator.error(
                UnsupportedSyntaxError,
                node,
                f"name {name!r} is not defined where {func.__qualname__!r} was defined; "
                "define it at module level or pass it as an argument.",
            )
    return env
