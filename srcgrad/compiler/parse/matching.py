"""Part of parse: whether a source text compiles to the code a function runs
(:func:`_matches`), comparing what decides what two code objects do, never where their
lines are."""

from __future__ import annotations
import __future__

import dis
import inspect
import keyword
import types
from collections.abc import Callable
from typing import Any


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
