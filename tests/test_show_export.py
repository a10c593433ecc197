"""Showing generated code: ``python -m srcgrad show``, ``srcgrad.export`` and the
notebook view (``Derivative._repr_html_``)."""

from __future__ import annotations

import html
import html.parser
import importlib.util
import inspect
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import srcgrad
from srcgrad import cli, display

ROOT = pathlib.Path(__file__).resolve().parent.parent

MODEL = '''\
import numpy as np

SCALE = 3.0


def squash(z):
    return np.tanh(z) * SCALE


def loss(w, x):
    """A loss with a helper and a module constant, and a comparison (x < 0.5)."""
    p = squash(x @ w)
    return np.sum(np.where(p < 0.5, p * p, 2 * p))


def with_try(x):
    try:
        y = np.sin(x)
    except ValueError:
        y = x
    return np.sum(y)


NOT_A_FUNCTION = 1.5

if __name__ == "__main__":
    open("main_block_ran", "w").close()
'''


@pytest.fixture
def model(tmp_path: pathlib.Path) -> pathlib.Path:
    """``model.py`` in a folder of its own (its name is unique to the test)."""
    path = tmp_path / f"model_{tmp_path.name.replace('-', '_')}.py"
    path.write_text(MODEL)
    return path


@pytest.fixture
def restore_imports():
    """``show`` imports the user's file and puts its folder on sys.path: undo that."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        if name.startswith("model_") or name.startswith("_srcgrad_show_"):
            del sys.modules[name]


def show(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["show", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- python -m srcgrad show -------------------------------------------------------------------


def test_show_prints_the_generic_gradient_without_running_the_file_as_main(
    model, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "srcgrad", "show", f"{model.name}:loss"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    out = result.stdout
    assert out.startswith('"""Reverse-mode gradient of loss')
    assert "import numpy as np" in out
    assert f"from {model.stem} import SCALE" in out
    assert "def grad_loss(w, x):" in out
    assert "def squash_fwd(z):" in out and "def squash_bwd(z, rec, out_bar):" in out
    assert "\x1b[" not in out  # captured stdout is not a terminal: plain text
    compile(out, "shown", "exec")  # a complete module
    assert not (tmp_path / "main_block_ran").exists()


def test_show_mode_and_wrt(model, capsys, restore_imports):
    code, out, err = show(capsys, f"{model}:loss", "--mode", "forward")
    assert code == 0, err
    assert "def jvp_loss(w, x, w_dot):" in out
    code, out, err = show(capsys, f"{model}:loss", "--wrt", "x")
    assert code == 0, err
    assert "def grad_loss(w, x):" in out and "return x_bar" in out
    code, out, err = show(capsys, f"{model}:loss", "--wrt", "w", "x")
    assert code == 0, err
    assert "return (w_bar, x_bar)" in out
    code, out, err = show(capsys, f"{model}:loss", "--wrt", "1", "--mode", "forward")
    assert code == 0, err
    assert "def jvp_loss(w, x, x_dot):" in out
    code, out, err = show(capsys, f"{model}:loss", "--kind", "vjp")
    assert code == 0, err
    assert "def vjp_loss(w, x, out_bar):" in out


def test_show_matches_the_api_source_before_any_call(model, capsys, restore_imports):
    code, out, _ = show(capsys, f"{model}:loss", "--wrt", "x")
    assert code == 0
    module = sys.modules[model.stem]
    assert out == srcgrad.grad(module.loss, wrt="x").source


DECORATED = """\
import numpy as np

import srcgrad


@srcgrad.grad(wrt="x")
def decorated(w, x):
    return np.sum(np.sin(w * x))
"""


def test_show_uses_the_decoration_in_the_file(tmp_path, capsys, restore_imports):
    path = tmp_path / f"model_decorated_{tmp_path.name.replace('-', '_')}.py"
    path.write_text(DECORATED)
    code, out, err = show(capsys, f"{path}:decorated")
    assert code == 0, err
    assert "def grad_decorated(w, x):" in out and "return x_bar" in out
    code, out, err = show(capsys, f"{path}:decorated", "--wrt", "w")
    assert code == 0, err
    assert "return w_bar" in out


def test_show_stages_prints_each_pipeline_stage_in_order(model, capsys, restore_imports):
    code, out, err = show(capsys, f"{model}:loss", "--stages")
    assert code == 0, err
    headers = [line for line in out.splitlines() if line.startswith("# ---- ")]
    stages = ["parse", "normalize", "analyze", "transform", "optimize", "emit"]
    assert headers == [f"# ---- {s} ----" for s in stages]
    parse_part = out.split("# ---- normalize ----")[0]
    assert "p = squash(x @ w)" in parse_part
    assert "active: " in out.split("# ---- analyze ----")[1]
    emitted = out.split("# ---- emit ----")[1]
    assert "import numpy as np" in emitted and "def grad_loss(w, x):" in emitted
    code, out, _ = show(capsys, f"{model}:loss", "--stages", "--mode", "forward")
    assert code == 0 and "def jvp_loss(w, x, w_dot):" in out


def test_show_highlights_only_when_asked_or_on_a_terminal(model, capsys, restore_imports):
    pytest.importorskip("pygments")
    code, out, _ = show(capsys, f"{model}:loss", "--color", "always")
    assert code == 0
    assert "\x1b[" in out
    assert "def" in out and "grad_loss" in out
    code, out, _ = show(capsys, f"{model}:loss")  # auto, and capsys is no terminal
    assert code == 0 and "\x1b[" not in out

    class Terminal:
        def isatty(self):
            return True

    assert display.use_color(Terminal())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NO_COLOR", "1")
        assert not display.use_color(Terminal())


@pytest.mark.parametrize(
    "target, extra, message",
    [
        ("missing.py:loss", [], "no such file: "),
        ("{model}:nope", [], "has no function 'nope' (its functions: loss, squash, with_try)"),
        ("{model}:NOT_A_FUNCTION", [], "is a float, not a Python function"),
        ("{model}", [], "expected FILE.py:FUNCTION"),
        ("{model}:with_try", [], "UnsupportedSyntaxError: srcgrad does not differentiate `try`"),
        ("{model}:loss", ["--wrt", "q"], "wrt='q' is not a parameter of loss"),
    ],
)
def test_show_errors_are_one_line_and_exit_2(
    model, capsys, restore_imports, target, extra, message
):
    code, out, err = show(capsys, target.format(model=model), *extra)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("python -m srcgrad show: error: ")
    assert message in err
    assert "Traceback" not in err


def test_show_error_exit_status_from_the_command_line(model, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("import numpy as np\nraise RuntimeError('at import\\nsecond line')\n")
    for target, message in [
        (f"{model}:with_try", f"{model.name}:17: UnsupportedSyntaxError"),
        (f"{broken}:f", "importing "),
        (f"{tmp_path / 'absent.py'}:f", "no such file"),
    ]:
        result = subprocess.run(
            [sys.executable, "-m", "srcgrad", "show", target],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert result.returncode == 2, result
        assert result.stdout == ""
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert message in result.stderr and "Traceback" not in result.stderr


def test_show_help_says_it_imports_the_file():
    result = subprocess.run(
        [sys.executable, "-m", "srcgrad", "show", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert "imports FILE" in result.stdout
    assert "--stages" in result.stdout and "--wrt" in result.stdout
    top = subprocess.run(
        [sys.executable, "-m", "srcgrad", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert "show" in top.stdout and "rules" in top.stdout


# -- srcgrad.export ---------------------------------------------------------------------------


def _numpy_only_path(tmp_path: pathlib.Path) -> pathlib.Path:
    """A folder holding links to numpy and nothing else, for a PYTHONPATH without srcgrad."""
    site = tmp_path / "numpy_only"
    site.mkdir()
    installed = pathlib.Path(np.__file__).resolve().parent.parent
    for entry in installed.iterdir():
        name = entry.name
        if name == "numpy" or name.startswith("numpy.libs") or name.startswith("numpy-"):
            (site / name).symlink_to(entry, target_is_directory=entry.is_dir())
    return site


RUNNER = """\
import json
import sys

try:
    import srcgrad  # noqa: F401
except ImportError:
    pass
else:
    sys.exit("srcgrad is importable here, so this proves nothing")

import numpy as np

from {exported} import {function}

w = np.array(json.loads(sys.argv[1]))
x = np.array(json.loads(sys.argv[2]))
print(json.dumps(np.asarray({function}(w, x)).tolist()))
"""


def _run_without_srcgrad(tmp_path, exported: str, function: str, w, x) -> np.ndarray:
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER.format(exported=exported, function=function))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(_numpy_only_path(tmp_path))])
    result = subprocess.run(
        # -S: no site-packages (where srcgrad is installed), -s: no user site
        [sys.executable, "-S", "-s", str(runner), json.dumps(w.tolist()), json.dumps(x.tolist())],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    return np.array(json.loads(result.stdout))


def _import(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def test_export_runs_in_a_fresh_interpreter_without_srcgrad(model, tmp_path, restore_imports):
    module = _import(model)
    d = srcgrad.grad(module.loss, wrt="w")
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal(3), rng.standard_normal((5, 3))
    expected = d(w, x)
    path = srcgrad.export(d, tmp_path / "loss_grad.py")
    assert path == tmp_path / "loss_grad.py"
    text = path.read_text()
    assert text == d.source  # the specialised code of the call
    assert "import srcgrad" not in text and "from srcgrad" not in text
    assert f"from {model.stem} import SCALE" in text
    got = _run_without_srcgrad(tmp_path, "loss_grad", "grad_loss", w, x)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_export_before_any_call_writes_the_generic_code(model, tmp_path, restore_imports):
    module = _import(model)
    d = srcgrad.grad(module.loss, wrt="x")
    path = srcgrad.export(d, str(tmp_path / "generic.py"))
    assert isinstance(path, pathlib.Path)
    assert path.read_text() == srcgrad.grad(module.loss, wrt="x").source
    rng = np.random.default_rng(1)
    w, x = rng.standard_normal(3), rng.standard_normal((4, 3))
    got = _run_without_srcgrad(tmp_path, "generic", "grad_loss", w, x)
    np.testing.assert_allclose(got, srcgrad.grad(module.loss, wrt="x")(w, x), rtol=1e-12)


def test_export_errors(tmp_path, model, restore_imports):
    module = _import(model)
    with pytest.raises(TypeError, match="made by a srcgrad transformation"):
        srcgrad.export(module.loss, tmp_path / "x.py")
    with pytest.raises(IsADirectoryError):
        srcgrad.export(srcgrad.grad(module.loss), tmp_path)
    second = srcgrad.grad(srcgrad.grad(module.squash))  # generated at its first call
    with pytest.raises(ValueError, match="call it once"):
        srcgrad.export(second, tmp_path / "second.py")
    assert second(0.3) == pytest.approx(-2 * 3.0 * np.tanh(0.3) * (1 - np.tanh(0.3) ** 2))
    text = srcgrad.export(second, tmp_path / "second.py").read_text()
    assert "def " in text


# -- the notebook view ------------------------------------------------------------------------

VOID = {"br", "hr", "img", "meta", "input", "link", "col", "wbr"}


class _Structure(html.parser.HTMLParser):
    """Checks tags nest and close, and collects the text of each <pre>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.pres: list[str] = []
        self.headers: list[str] = []
        self._header: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "pre":
            self.pres.append("")
        if tag == "th":
            self._header = []

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()
        if tag == "th":
            self.headers.append("".join(self._header))
            self._header = None

    def handle_data(self, data):
        if "pre" in self.stack:
            self.pres[-1] += data
        if self._header is not None:
            self._header.append(data)


def _parse(text: str) -> _Structure:
    parser = _Structure()
    parser.feed(text)
    parser.close()
    assert parser.stack == [], parser.stack
    return parser


@pytest.mark.parametrize("highlight", [True, False], ids=["pygments", "plain"])
def test_repr_html_shows_primal_and_generated_side_by_side(model, restore_imports, highlight):
    if highlight:
        pytest.importorskip("pygments")
    module = _import(model)
    d = srcgrad.grad(module.loss)
    d(np.ones(3), np.ones((2, 3)))
    page = display.derivative_html(d, highlight=highlight)
    parsed = _parse(page)
    assert parsed.tags.count("table") == 1
    assert parsed.tags.count("th") == 2 and parsed.tags.count("td") == 2
    assert len(parsed.pres) == 2
    primal, generated = parsed.pres
    assert primal == inspect.getsource(module.loss)  # as written, unescaped back exactly
    assert generated.strip() == d.source.strip()
    assert "def loss(w, x):" in primal and "def grad_loss(w, x):" in generated
    assert parsed.headers[0].startswith("loss (")
    assert parsed.headers[1].startswith("<srcgrad.grad of loss")
    # what needs escaping is escaped
    assert "p < 0.5" not in page and "<srcgrad.grad" not in page
    assert html.escape("<srcgrad.grad of loss") in page
    assert ("<span" in page) == highlight
    assert "<style" not in page  # inline styles only: notebooks drop stylesheets


def test_repr_html_is_the_notebook_hook(model, restore_imports):
    module = _import(model)
    d = srcgrad.grad(module.loss, wrt="x")
    page = d._repr_html_()  # before any call: the generic code
    _parse(page)
    assert "grad_loss" in page and "loss" in page
    bad = srcgrad.grad(module.with_try)._repr_html_()  # shown, not raised
    assert "UnsupportedSyntaxError" in html.unescape(bad)
    _parse(bad)


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.skipif(
    _browser() is None,
    reason="no headless browser (chromium, chromium-browser or google-chrome) on PATH to "
    "screenshot the notebook view",
)
def test_repr_html_renders_in_a_browser(model, tmp_path, restore_imports):
    module = _import(model)
    d = srcgrad.grad(module.loss)
    d(np.ones(3), np.ones((2, 3)))
    page = tmp_path / "view.html"
    page.write_text(
        '<!doctype html><html><head><meta charset="utf-8"></head><body>'
        + d._repr_html_()
        + "</body></html>"
    )
    png = tmp_path / "view.png"
    width, height = 1200, 800
    result = subprocess.run(
        [
            _browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert png.exists(), result.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(data[16:20], "big") == width
    assert int.from_bytes(data[20:24], "big") == height
    image = pytest.importorskip("matplotlib.image").imread(str(png))
    # not a blank page: highlighted text in several colours on a light background
    colours = {tuple(p) for p in (image[..., :3] * 255).astype(int).reshape(-1, 3)[::7]}
    assert len(colours) > 50
