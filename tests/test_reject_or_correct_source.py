"""Issue 16, reject or be correct, for what srcgrad reads and writes as source.

- F9, stale or mismatched code: srcgrad differentiates the code the callable runs (a
  ``functools.wraps`` wrapper, not the function it wraps), with the defaults it has now,
  and refuses a source file edited after its module was imported.
- F13, injection: no user-controlled text (qualnames, names, module names, file paths,
  reprs, default values) is ever formatted into generated source; each hostile value
  below carries a payload that would set an environment variable if it ran.
- F15, memory: a dropped function frees what was generated for it, and its linecache
  entries.
- F16, deep expressions: a sum of many terms, which Python runs, is differentiated.
- F17, error messages: quote the user's text, never srcgrad's temporaries (``t3``), and
  name the file and line (``async def`` too).

Every gradient is checked against an oracle that is not srcgrad: central finite
differences of the callable itself (what Python runs), or a derivative by hand.
"""

import ast
import functools
import gc
import importlib.util
import io
import itertools
import linecache
import os
import re
import sys
import tokenize
import types
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import srcgrad
from srcgrad import cache
from srcgrad.compiler.transform import builder

MODES = ["reverse", "forward"]


def numeric_grad(f, x, *args, h=1e-6):
    """Central finite differences of ``f`` (the callable, as Python runs it) at float ``x``."""
    return (f(x + h, *args) - f(x - h, *args)) / (2 * h)


def numeric_grad_array(f, x, *args, h=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e, *args) - f(x - e, *args)) / (2 * h)
    return out


_modules = itertools.count()


def load_module(directory, text, name=None):
    """Write ``text`` to a module file in ``directory`` and import it (a fresh name each time)."""
    name = name or f"srcgrad_case_{next(_modules)}"
    path = os.path.join(str(directory), f"{name}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def reload(module):
    """``importlib.reload`` for a module loaded by :func:`load_module` (not on sys.path)."""
    spec = importlib.util.spec_from_file_location(module.__name__, module.__file__)
    spec.loader.exec_module(module)
    return module


def edit(module, old, new):
    """Change the text of ``module``'s file after it was imported (and make sure every
    cache of file contents sees the change: a later mtime)."""
    path = module.__file__
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert old in text, old
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new, 1))
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


# == F9: the code the callable runs ================================================================


def double_output(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)

    return wrapper


def triple_input(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return fn(3.0 * x)

    return wrapper


def bind_second(fn):
    @functools.wraps(fn)
    def wrapper(x):  # fewer parameters than the function it wraps
        return fn(x, 5.0)

    return wrapper


def pass_through(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@double_output
def doubled_square(x):
    return x * x


@triple_input
def tripled_square(x):
    return x * x


@double_output
@double_output
def quadrupled_square(x):
    return x * x


@bind_second
def scaled_square(x, a):
    return a * x * x


@pass_through
def passed_square(x):
    return x * x


def calls_doubled(x):
    return doubled_square(x) + x


def plain_cube(x):
    return x * x * x


def manually_wrapped(x):
    return 4.0 * x * x


manually_wrapped.__wrapped__ = plain_cube  # (inspect.getsource would read plain_cube)

WRAPPED_CASES = [
    (doubled_square, lambda x: 4.0 * x),
    (tripled_square, lambda x: 18.0 * x),
    (quadrupled_square, lambda x: 8.0 * x),
    (scaled_square, lambda x: 10.0 * x),
    (calls_doubled, lambda x: 4.0 * x + 1.0),
    (manually_wrapped, lambda x: 8.0 * x),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("func, by_hand", WRAPPED_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_a_wrapper_is_differentiated_as_it_runs(func, by_hand, mode):
    x = 1.5
    got = srcgrad.grad(func, mode=mode)(x)
    assert got == pytest.approx(by_hand(x))
    assert got == pytest.approx(numeric_grad(func, x), rel=1e-6)


@pytest.mark.parametrize(
    "func, by_hand", WRAPPED_CASES[:3], ids=lambda c: getattr(c, "__name__", "")
)
def test_a_wrapper_in_jvp_and_vjp(func, by_hand):
    x = np.array([0.5, -1.0, 2.0])
    _, tangent = srcgrad.jvp(func)(x, np.ones(3))
    np.testing.assert_allclose(tangent, by_hand(x))
    np.testing.assert_allclose(srcgrad.vjp(func)(x, np.ones(3)), by_hand(x))


def test_a_wrapper_takes_its_own_parameters():
    # scaled_square's wrapper takes x alone: a second argument is an error, not `a`
    d = srcgrad.grad(scaled_square)
    with pytest.raises(TypeError, match="argument"):
        d(1.5, 2.0)


def test_a_wrapper_with_star_args_is_refused_at_its_line():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=r"\*args") as info:
        srcgrad.grad(passed_square)(1.5)
    assert info.value.filename == __file__
    assert "def wrapper(*args, **kwargs):" in str(info.value)


def with_default(x, a=1.0):
    return a * x * x


def helper_with_default(x, a=1.0):
    return a * x * x


def calls_helper_with_default(x):
    return helper_with_default(x) + 0.0 * x


def sums_helper_with_default(x):
    return np.sum(helper_with_default(x))


@pytest.fixture
def restore_defaults():
    saved = {f: f.__defaults__ for f in (with_default, helper_with_default)}
    yield
    for f, defaults in saved.items():
        f.__defaults__ = defaults


@pytest.mark.usefixtures("restore_defaults")
@pytest.mark.parametrize("mode", MODES)
def test_new_defaults_of_the_function_are_used(mode):
    d = srcgrad.grad(with_default, mode=mode)
    assert d(3.0) == pytest.approx(6.0)
    with_default.__defaults__ = (2.0,)
    assert d(3.0) == pytest.approx(12.0) == pytest.approx(numeric_grad(with_default, 3.0))
    v, g = srcgrad.value_and_grad(with_default, mode=mode)(3.0)
    assert (v, g) == pytest.approx((18.0, 12.0))


@pytest.mark.usefixtures("restore_defaults")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("arg", [3.0, np.float64(3.0)], ids=["float", "numpy-scalar"])
def test_new_defaults_of_a_callee_are_used(mode, arg):
    d = srcgrad.grad(calls_helper_with_default, mode=mode)
    for _ in range(2):  # (the second call takes the quick path)
        assert d(arg) == pytest.approx(6.0)
    helper_with_default.__defaults__ = (2.0,)
    for _ in range(2):
        assert d(arg) == pytest.approx(12.0)
    assert d(arg) == pytest.approx(numeric_grad(calls_helper_with_default, 3.0))
    helper_with_default.__defaults__ = (-1.0,)
    assert d(arg) == pytest.approx(-6.0)


@pytest.mark.usefixtures("restore_defaults")
def test_new_defaults_of_a_callee_in_jvp_vjp_and_hessian():
    x = np.array([1.0, 2.0])
    jvp, vjp = srcgrad.jvp(helper_with_default), srcgrad.vjp(sums_helper_with_default)
    hessian = srcgrad.hessian(sums_helper_with_default)
    assert np.allclose(jvp(x, np.ones(2))[1], 2 * x)
    assert np.allclose(vjp(x, 1.0), 2 * x)
    assert np.allclose(hessian(x), 2 * np.eye(2))
    helper_with_default.__defaults__ = (3.0,)
    assert np.allclose(jvp(x, np.ones(2))[1], 6 * x)
    assert np.allclose(vjp(x, 1.0), 6 * x)
    assert np.allclose(hessian(x), 6 * np.eye(2))


def test_a_quick_call_checks_defaults():
    """The quick path's check (cache._QuickCall) is the full check's, defaults included."""
    d = srcgrad.grad(calls_helper_with_default)
    d(2.0)
    d(2.0)
    (call,) = d._quick.values()
    assert call.is_current()
    old = helper_with_default.__defaults__
    try:
        helper_with_default.__defaults__ = tuple([1.0])  # an equal value, a new tuple
        assert not call.is_current()
    finally:
        helper_with_default.__defaults__ = old


MODULE = """\
import functools

import numpy as np

SCALE = 2.0


def f(x):
    return x * 2.0


class Model:
    def __init__(self):
        self.__w = 3.0

    def loss(self, x):
        return self.__w * x * x


def make(k):
    def closure(x):
        return k * x * x

    return closure


pair = (lambda x: x * 2.0, lambda x: x * 3.0)
"""


@pytest.mark.parametrize(
    "old, new, get",
    [
        ("return x * 2.0", "return x * 3.0", lambda m: m.f),
        ("return x * 2.0", "return x + 2.0", lambda m: m.f),
        ("return x * 2.0", "return x * SCALE", lambda m: m.f),
        ("self.__w * x * x", "self.__w * x * x * x", lambda m: m.Model.loss),
        ("return k * x * x", "return k * x", lambda m: m.make(2.0)),
        ("lambda x: x * 3.0", "lambda x: x * 4.0", lambda m: m.pair[1]),
        ("import functools\n", "import functools\n\n\n\n", lambda m: m.f),  # lines moved
    ],
    ids=["constant", "operator", "name", "method", "closure", "lambda", "moved"],
)
def test_a_file_edited_after_import_is_refused(tmp_path, old, new, get):
    module = load_module(tmp_path, MODULE)
    func = get(module)
    edit(module, old, new)
    args = (module.Model(), 1.5) if func is module.Model.loss else (1.5,)
    wrt = 1 if func is module.Model.loss else 0
    with pytest.raises(srcgrad.SrcgradError, match="not the code Python runs") as info:
        srcgrad.grad(func, wrt=wrt)(*args)
    assert "reload" in str(info.value)
    assert info.value.filename == module.__file__
    # after a reload the new code runs, and is differentiated
    fresh = get(reload(module))
    args = (module.Model(), 1.5) if wrt else (1.5,)
    got = srcgrad.grad(fresh, wrt=wrt)(*args)
    by_fd = numeric_grad(lambda v: fresh(*args[:wrt], v), 1.5)
    assert got == pytest.approx(by_fd, rel=1e-6)


def test_an_edit_that_changes_no_code_is_accepted(tmp_path):
    module = load_module(tmp_path, MODULE)
    edit(module, "    return x * 2.0", "    return x * 2.0  # a comment")
    assert srcgrad.grad(module.f)(1.5) == 2.0
    assert srcgrad.grad(module.Model.loss, wrt=1)(module.Model(), 1.5) == pytest.approx(9.0)
    # a line added inside f leaves where f starts: f is still its code, and the method
    # below it, whose lines moved, is not
    module = load_module(tmp_path, MODULE)
    edit(module, "    return x * 2.0", "    # a comment\n    return x * 2.0")
    assert srcgrad.grad(module.f)(1.5) == 2.0
    with pytest.raises(srcgrad.SrcgradError, match="reload"):
        srcgrad.grad(module.Model.loss, wrt=1)(module.Model(), 1.5)


def test_replaced_code_is_differentiated_as_it_runs(tmp_path):
    g = load_module(tmp_path, "def g(x):\n    return x * x * x\n").g
    h = load_module(tmp_path, "def h(x):\n    return x * 5.0\n").h
    h.__code__ = g.__code__  # h now runs g's code: its derivative is g's
    assert srcgrad.grad(h)(2.0) == pytest.approx(12.0) == pytest.approx(numeric_grad(h, 2.0))


@pytest.mark.parametrize("mode", MODES)
def test_lambdas_on_one_line_with_the_same_parameters(tmp_path, mode):
    module = load_module(tmp_path, MODULE)
    assert srcgrad.grad(module.pair[0], mode=mode)(1.5) == 2.0
    assert srcgrad.grad(module.pair[1], mode=mode)(1.5) == 3.0


def test_a_method_with_a_multiline_string_less_indented_than_it(tmp_path):
    text = 'class A:\n    def f(self, x):\n        s = """a\nb"""\n        return x * len(s)\n'
    module = load_module(tmp_path, text)
    assert srcgrad.grad(module.A.f, wrt=1)(module.A(), 2.0) == 3.0


# == F13: nothing the user names runs ==============================================================

SENTINEL = "SRCGRAD_INJECTION_SENTINEL"
PAYLOAD = f'__import__("os").environ.__setitem__("{SENTINEL}", "ran")'

#: text that would run PAYLOAD if it were formatted into a string, a comment or a name
HOSTILE = [
    f'"""\n{PAYLOAD}\n"""',
    f"'''\n{PAYLOAD}\n'''",
    f'"""; {PAYLOAD}; """',
    f"\r{PAYLOAD}\r#",
    f"\n{PAYLOAD}\n#",
    f"\r\n{PAYLOAD}\r\n#",
    f"\x0c{PAYLOAD}",
    f"\u2028{PAYLOAD}",
    f"\x85{PAYLOAD}",
    f"\x0b{PAYLOAD}",
    f"\x1c{PAYLOAD}",
    f"\\\n{PAYLOAD}",
    f"x) or {PAYLOAD} or (x",
    f"a; {PAYLOAD}",
]


@pytest.fixture
def sentinel():
    os.environ.pop(SENTINEL, None)
    yield
    ran = os.environ.pop(SENTINEL, None)
    assert ran is None, "injected code ran"


def assert_only_definitions(source):
    """``source`` parses, holds only a docstring, imports and function definitions at
    module level, and names ``__import__`` nowhere as code (only in comments)."""
    tree = ast.parse(source)
    for k, stmt in enumerate(tree.body):
        docstring = k == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        assert docstring or isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef))
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    assert not [t for t in tokens if t.type == tokenize.NAME and t.string == "__import__"]
    assert source.count("\n") + 1 >= len(source.splitlines())  # no other line breaks


def square_sum(x):
    return np.sum(x * x)


def renamed(func, **names):
    """A copy of ``func`` (its own code, globals and closure) with hostile names."""
    copy = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__)
    for key, value in names.items():
        setattr(copy, key, value)
    return copy


@pytest.mark.usefixtures("sentinel")
@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("attribute", ["__qualname__", "__name__", "__module__"])
def test_hostile_function_names(text, attribute):
    func = renamed(square_sum, **{attribute: text})
    x = np.array([1.0, -2.0])
    for d in (srcgrad.grad(func), srcgrad.grad(func, mode="forward"), srcgrad.vjp(func)):
        got = d(x) if d.kind == "grad" else d(x, 1.0)
        np.testing.assert_allclose(got, 2 * x)
        assert_only_definitions(d.source)
    hessian = srcgrad.hessian(func)
    np.testing.assert_allclose(hessian(x), 2 * np.eye(2))


def scalar_square(x):
    return x * x


@pytest.mark.usefixtures("sentinel")
@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_names_in_higher_order(text):
    # grad of a forward-mode grad goes through a generated wrapper (pipeline's
    # unit_tangent_wrapper) whose docstring names the function
    func = renamed(scalar_square, __name__=text, __qualname__=text)
    second = srcgrad.grad(srcgrad.grad(func, mode="forward"))
    assert second(1.5) == 2.0
    assert srcgrad.grad(second)(1.5) == 0.0
    assert_only_definitions(second.source)


def calls_square_sum(x):
    return square_sum(x) * 3.0


@pytest.mark.usefixtures("sentinel")
@pytest.mark.parametrize("text", HOSTILE)
def test_a_callee_with_hostile_names(text, monkeypatch):
    callee = renamed(square_sum, __name__=text, __qualname__=text)
    monkeypatch.setitem(globals(), "square_sum", callee)
    x = np.array([1.0, -2.0])
    for mode in MODES:
        d = srcgrad.grad(calls_square_sum, mode=mode)
        np.testing.assert_allclose(d(x), 6 * x)
        assert_only_definitions(d.source)


class HostileFloat(float):
    """A float whose repr is code."""

    text = ""

    def __repr__(self):
        return self.text


def hostile_float(value, text):
    cls = type("HostileFloat", (HostileFloat,), {"text": text})
    return cls(value)


def make_closure(c):
    def closure(x):
        return np.sum(c * x * x)

    return closure


def make_branching_closure(flag):
    def branching(x):
        return np.sum(x * 2.0) if flag else np.sum(x)

    return branching


class HostileRepr:
    text = ""

    def __repr__(self):
        return self.text

    def __bool__(self):
        return True


@pytest.mark.usefixtures("sentinel")
@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("mode", MODES)
def test_closure_values_with_hostile_reprs(text, mode):
    x = np.array([1.0, -2.0])
    d = srcgrad.grad(make_closure(hostile_float(3.0, text)), mode=mode)
    np.testing.assert_allclose(d(x), 6 * x)
    assert_only_definitions(d.source)
    flag = type("Flag", (HostileRepr,), {"text": text})()
    d = srcgrad.grad(make_branching_closure(flag), mode=mode)
    np.testing.assert_allclose(d(x), [2.0, 2.0])
    assert_only_definitions(d.source)
    assert "# flag = " in d.source  # (noted, on one line)


def make_defaulted(default):
    def defaulted(x, a=default):
        return a * x

    def calls_defaulted(x):
        return np.sum(defaulted(x) * x)

    return calls_defaulted


@pytest.mark.usefixtures("sentinel")
@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("mode", MODES)
def test_default_values_with_hostile_reprs(text, mode):
    x = np.array([1.0, -2.0])
    d = srcgrad.grad(make_defaulted(hostile_float(2.0, text)), mode=mode)
    np.testing.assert_allclose(d(x), 4 * x)
    assert_only_definitions(d.source)


W = np.array([2.0, 3.0])
mm = np  # (a module named with hostile text replaces it in the test below)


def uses_globals(x):
    k = int_helper(1)
    return np.sum(mm.sin(x) * W) * k


def int_helper(n):
    return n + 1


@pytest.mark.usefixtures("sentinel")
@pytest.mark.parametrize("text", HOSTILE[:6] + HOSTILE[-2:])
def test_hostile_module_and_value_names(text, monkeypatch):
    """Import lines are made from module and value names: here a module ``mm`` named
    ``text``, a function whose ``__module__`` and ``__qualname__`` are ``text``, and a
    function whose ``__module__`` is ``text`` (an import of ``W`` from its module), each
    registered in ``sys.modules`` so that an import of it would be written."""
    fake = types.ModuleType(text)
    fake.sin = np.sin
    fake.W = W
    monkeypatch.setitem(sys.modules, text, fake)
    helper = renamed(int_helper, __module__=text, __qualname__=text)
    setattr(fake, text, helper)
    monkeypatch.setitem(globals(), "mm", fake)
    monkeypatch.setitem(globals(), "int_helper", helper)
    func = renamed(uses_globals, __module__=text)
    x = np.array([0.5, 1.0])
    for mode in MODES:
        d = srcgrad.grad(func, mode=mode)
        np.testing.assert_allclose(d(x), 2 * W * np.cos(x))
        assert_only_definitions(d.source)


DIRECTORY_NAMES = [
    '"""\nimport os; os.environ["SRCGRAD_INJECTION_SENTINEL"] = "ran"\n"""',
    "'''; __import__('os').environ.__setitem__('SRCGRAD_INJECTION_SENTINEL', 'ran'); '''",
    "C:\\Users\\x\\new",
    "back\\",
    "quote\"'",
    "\u2028line",
    "tab\tand \x0c feed",
]


@pytest.mark.usefixtures("sentinel")
@pytest.mark.parametrize("name", DIRECTORY_NAMES)
def test_hostile_file_paths(tmp_path, name):
    directory = tmp_path / name
    try:
        directory.mkdir()
    except OSError:
        pytest.skip("the file system does not allow this name")
    module = load_module(
        directory, "import numpy as np\n\n\ndef f(x):\n    return np.sum(x * 3.0)\n"
    )
    x = np.array([1.0, 2.0])
    for mode in MODES:
        d = srcgrad.grad(module.f, mode=mode)
        np.testing.assert_allclose(d(x), [3.0, 3.0])
        assert_only_definitions(d.source)
    assert srcgrad.hessian(module.f)(x).shape == (2, 2)


@pytest.mark.usefixtures("sentinel")
def test_hostile_source_text_in_comments(tmp_path):
    # the `# grad of:` comments quote the user's lines: a string literal holding a form
    # feed or a line separator (which str.splitlines, and so linecache, break at) stays
    # in the comment
    text = (
        "import numpy as np\n\n\n"
        "def f(x):\n"
        f"    y = x * len('\x0c{PAYLOAD}') * len('\u2028{PAYLOAD}')\n"
        "    return np.sum(y * y)\n"
    )
    module = load_module(tmp_path, text)
    x = np.array([1.0, 2.0])
    n = len(f"\x0c{PAYLOAD}") ** 2  # y = x * n
    d = srcgrad.grad(module.f)
    np.testing.assert_allclose(d(x), 2 * n**2 * x)
    np.testing.assert_allclose(d(x), numeric_grad_array(module.f, x), rtol=1e-6)
    assert_only_definitions(d.source)
    assert "# grad of: y = x * len('\\x0c__import__" in d.source
    # the text linecache holds for tracebacks has the module's lines, one for one
    filename = d._last.function.__code__.co_filename
    assert linecache.getlines(filename) == d.source.splitlines(True)


@given(st.text())
def test_comment_text_is_one_line_of_comment(text):
    source = ast.unparse(
        ast.FunctionDef(
            name="f",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[builder.comment(text), ast.Return(value=ast.Constant(1))],
            decorator_list=[],
            returns=None,
            type_params=[],
            lineno=1,
        )
    )
    assert len(source.splitlines()) == 3
    namespace = {}
    exec(compile(source, "<comment>", "exec"), namespace)
    assert namespace["f"]() == 1


def test_comment_text_escapes_every_line_break():
    breaks = [chr(c) for c in range(sys.maxunicode + 1) if len(f"a{chr(c)}b".splitlines()) > 1]
    assert set(breaks) >= {"\n", "\r", "\x0c", "\x0b", "\x85", "\u2028", "\u2029"}
    for c in breaks:
        assert len(builder.comment_text(f"a{c}b").splitlines()) == 1
    assert builder.comment_text("plain text, é and \t tab") == "plain text, é and \t tab"
    assert builder.comment_text("a\rb\x00c") == "a\\rb\\x00c"


# == F15: a dropped function frees what was made for it ============================================


def make_recursive(c):
    def power(x, n):  # (its closure holds itself)
        if n == 0:
            return c
        return x * power(x, n - 1)

    def recursive(x):
        return np.sum(power(x, 3))

    return recursive


def make_mutual(c):
    def even(x, n):
        if n == 0:
            return c * x
        return odd(x, n - 1) * 2.0

    def odd(x, n):
        return even(x, n) if n > 100 else even(x * 1.0, n)

    def mutual(x):
        return np.sum(even(x, 2))

    return mutual


def _short_lived_closures(count, make_derivative, make=make_closure):
    """Differentiate ``count`` closures once each, drop them; weak references to them."""
    refs = []
    for i in range(count):
        f = make(float(i))
        make_derivative(f)
        refs.append(weakref.ref(f))
        del f
    return refs


@pytest.mark.parametrize(
    "make_derivative",
    [
        lambda f: srcgrad.grad(f)(np.ones(2)),
        lambda f: srcgrad.grad(f, mode="forward")(np.ones(2)),
        lambda f: srcgrad.value_and_grad(f)(np.ones(2)),
        lambda f: srcgrad.hessian(f)(np.ones(2)),
        lambda f: srcgrad.jvp(srcgrad.grad(f))(np.ones(2), np.ones(2)),
    ],
    ids=["grad", "forward", "value_and_grad", "hessian", "jvp-of-grad"],
)
def test_dropped_functions_free_their_code(make_derivative):
    _short_lived_closures(5, make_derivative)
    gc.collect()
    lines, cached = len(linecache.cache), len(cache._CACHE)
    refs = _short_lived_closures(60, make_derivative)
    gc.collect()
    assert not [r for r in refs if r() is not None], "a differentiated function was kept"
    assert len(linecache.cache) <= lines
    assert len(cache._CACHE) <= cached


@pytest.mark.parametrize("make", [make_recursive, make_mutual], ids=["recursive", "mutual"])
@pytest.mark.parametrize("mode", MODES)
def test_dropped_recursive_closures_free_their_code(make, mode):
    x = np.array([0.5, 2.0])
    by_hand = 3.0 * x**2 if make is make_recursive else np.full(2, 4.0)
    np.testing.assert_allclose(srcgrad.grad(make(1.0), mode=mode)(x), by_hand)
    np.testing.assert_allclose(by_hand, numeric_grad_array(make(1.0), x), rtol=1e-6)
    gc.collect()
    lines, cached = len(linecache.cache), len(cache._CACHE)
    refs = _short_lived_closures(30, lambda f: srcgrad.grad(f, mode=mode)(x), make)
    gc.collect()
    assert not [r for r in refs if r() is not None], "a differentiated function was kept"
    assert len(linecache.cache) <= lines
    assert len(cache._CACHE) <= cached


def test_thousands_of_closures_keep_no_memory():
    import tracemalloc

    # a warm-up long enough that the tables srcgrad and Python keep (bounded caches, dicts
    # grown while the cyclic collector had not yet run) reach their size whatever ran before
    _short_lived_closures(100, lambda f: srcgrad.grad(f)(np.ones(2)))
    gc.collect()
    # (not counted: the table of weakref.finalize's registry, one dict for the whole
    # process, which a resize doubles when the finalizers of everything alive, from all
    # the tests that ran before, cross a power of two)
    python_tables = [tracemalloc.Filter(False, weakref.__file__)]
    # (nor the growth of linecache's dict, which holds the text of every generated module
    # alive in the process: room made now for what the 100 closures add for a while, so
    # that their entries do not cross a power of two in it, which the tests before decide)
    room = [f"<srcgrad room {k}>" for k in range(len(linecache.cache) + 1_000)]
    for key in room:
        linecache.cache[key] = (0, None, [], key)
    for key in room:
        del linecache.cache[key]
    tracemalloc.start()
    try:
        _short_lived_closures(20, lambda f: srcgrad.grad(f)(np.ones(2)))
        gc.collect()
        before = tracemalloc.take_snapshot().filter_traces(python_tables)
        _short_lived_closures(100, lambda f: srcgrad.grad(f)(np.ones(2)))
        gc.collect()
        after = tracemalloc.take_snapshot().filter_traces(python_tables)
    finally:
        tracemalloc.stop()
    changes = after.compare_to(before, "traceback")
    growth = sum(s.size_diff for s in changes)
    # what 100 more closures keep is a small constant, not 100 modules (each ~30 kB)
    where = "\n".join(
        f"{s.size_diff} B at " + "\n  ".join(s.traceback.format()) for s in changes[:3]
    )
    assert growth < 100 * 1_000, f"what grew most:\n{where}"


def test_linecache_keeps_the_text_while_the_code_lives():
    d = srcgrad.grad(square_sum)
    d(np.ones(2))
    filename = d._last.function.__code__.co_filename
    assert linecache.getlines(filename) == d.source.splitlines(True)


# == F16: deep expressions =========================================================================


def long_sum_module(tmp_path, terms):
    body = " + ".join(f"x * {k}" for k in range(2, terms + 1))
    text = f"import numpy as np\n\n\ndef f(x):\n    return x + {body}\n"
    text += f"\n\ndef g(x):\n    return np.sum(np.sin(x) - {body.replace('+', '-')})\n"
    return load_module(tmp_path, text)


@pytest.mark.parametrize("mode", MODES)
def test_a_long_sum_is_differentiated(tmp_path, mode):
    # a thousand terms: a tree a thousand deep, past the recursion limit (was RecursionError)
    terms = 1000
    module = long_sum_module(tmp_path, terms)
    assert srcgrad.grad(module.f, mode=mode)(1.5) == pytest.approx(terms * (terms + 1) / 2)


def test_a_long_sum_of_arrays(tmp_path):
    terms = 1000
    module = long_sum_module(tmp_path, terms)
    x = np.array([0.5, 1.0])
    by_hand = np.cos(x) - (terms * (terms + 1) / 2 - 1)
    np.testing.assert_allclose(srcgrad.grad(module.g)(x), by_hand)
    np.testing.assert_allclose(srcgrad.grad(module.g)(x), numeric_grad_array(module.g, x))


# == F17: errors quote the user's source ===========================================================

ERRORS = """\
import numpy as np


class Callable:
    def __call__(self, v):
        return v

    def __eq__(self, other):  # (compared by value: its bound methods cannot key code)
        return isinstance(other, Callable)

    def __hash__(self):
        return 0


CALL = Callable().__call__  # (a bound method of an object compared by value)


def unknown_method(x):
    return np.sum((x * 2.0).searchsorted(1.0) * x)


def unknown_method_active(x):
    return np.sum((x * 2.0).ptp2())


def unknown_attribute(x):
    return np.sum((x * 2.0).flat)


def shift(x):
    return np.sum((x * 2) << 1)


def called_object(x):
    return np.sum(CALL(x * 2.0))


def call_of_call(x):
    return np.sum(np.vectorize(np.sin)(x * 2.0))


def call_of_item(x):
    fs = [np.sin, np.cos]
    k = int(x[0] > 1.5)
    return fs[k](x * 2.0)


def unknown_keyword(x):
    return np.sum(np.mean(x * 2.0, where=x > 0))


async def coroutine(x):
    return x * 2.0
"""


@pytest.mark.parametrize(
    "name, error, fragment",
    [
        ("unknown_method", srcgrad.NoDerivativeError, "the method .searchsorted()"),
        ("unknown_method_active", srcgrad.NoDerivativeError, "the method .ptp2()"),
        ("unknown_attribute", srcgrad.NoDerivativeError, "the attribute .flat"),
        ("shift", srcgrad.NoDerivativeError, "the << operator"),
        ("called_object", srcgrad.NoDerivativeError, "`CALL` is the bound method Callable"),
        ("call_of_call", srcgrad.UnsupportedSyntaxError, "not `np.vectorize(np.sin)`"),
        ("call_of_item", srcgrad.UnsupportedSyntaxError, "`fs[k]` is not one of those"),
        ("unknown_keyword", srcgrad.NoDerivativeError, "no keyword 'where'"),
        ("coroutine", srcgrad.UnsupportedSyntaxError, "coroutine functions (`async def`)"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_errors_quote_the_user_and_name_no_temporary(tmp_path, name, error, fragment, mode):
    module = load_module(tmp_path, ERRORS)
    func = getattr(module, name)
    with pytest.raises(error) as info:
        srcgrad.grad(func, mode=mode)(np.array([1.0, 2.0]))
    message = str(info.value)
    assert fragment in message
    assert not re.search(r"\bt\d+\b", message), message
    assert info.value.filename == module.__file__
    line = ERRORS.splitlines()[info.value.lineno - 1]
    assert line.strip() and line.strip() in message


def test_an_unsupported_expression_is_quoted_as_written(tmp_path):
    text = "import numpy as np\n\n\ndef f(x):\n    return np.sum(x * 2.0) if (x := 1) else 0.0\n"
    module = load_module(tmp_path, text)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="assignment expressions"):
        srcgrad.grad(module.f)(1.0)


def test_lambda_errors_point_at_the_lambda(tmp_path):
    text = (
        "import numpy as np\n"
        "\n"
        "def holder():\n"
        "    return (\n"
        "        1,\n"
        "        (lambda x: np.sum(np.vectorize(np.sin)(x))),\n"
        "    )\n"
        "\n"
        "psi = 1; h = lambda x: np.sum(x.ptp2())\n"
    )
    module = load_module(tmp_path, text)
    with pytest.raises(
        srcgrad.UnsupportedSyntaxError, match=r"not `np\.vectorize\(np\.sin\)`"
    ) as a:
        srcgrad.grad(module.holder()[1])(np.ones(2))
    assert a.value.lineno == 6
    with pytest.raises(srcgrad.NoDerivativeError, match=r"the method \.ptp2\(\)") as b:
        srcgrad.grad(module.h)(np.ones(2))
    assert b.value.lineno == 9
