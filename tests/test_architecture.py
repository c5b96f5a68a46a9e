"""The layers import one way: app.py → ui/ → web/ → agent/ → eval/ → pipelines/.

``app.py`` and ``ui/`` are the app layer: ``ui`` imports ``web`` and below, never ``app``;
nothing below imports ``ui`` or ``app``. No module of the app layer is over 600 lines.

Every import in the tree (module level and inside functions, ``import x`` and
``from x import y``) is parsed; an import of a layer to the left of the importer fails
the test with the file and line. Project imports inside functions are allowed only where
a comment on the line says why (heavy optional libraries are not project imports).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORDER = ["app", "ui", "web", "agent", "eval", "pipelines"]
MAX_LINES = 600
RANK = {name: i for i, name in enumerate(ORDER)}


def _layer(root: Path, path: Path) -> str | None:
    rel = path.relative_to(root)
    if rel.parts == ("app.py",):
        return "app"
    return rel.parts[0] if rel.parts[0] in RANK else None


def _sources(root: Path) -> list[Path]:
    files = [root / "app.py"] if (root / "app.py").is_file() else []
    for layer in ORDER[1:]:
        files += sorted((root / layer).rglob("*.py"))
    return files


def _imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, imported module, inside a function) for each project import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner.update(id(sub) for sub in ast.walk(node)
                         if isinstance(sub, (ast.Import, ast.ImportFrom)))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, name, id(node) in inner) for name in names
                  if name.split(".")[0] in RANK]
    return found


def against_the_arrows(root: Path) -> list[str]:
    """Every import under ``root`` of a layer to the left of the importing file."""
    against = []
    for path in _sources(root):
        me = _layer(root, path)
        for line, name, _ in _imports(path):
            top = name.split(".")[0]
            if RANK[top] < RANK[me] or (top == "app" and me != "app"):
                against.append(f"{path.relative_to(root)}:{line} ({me}) imports {name}")
    return against


def test_every_layer_exists() -> None:
    assert (ROOT / "app.py").is_file()
    for layer in ORDER[1:]:
        assert (ROOT / layer / "__init__.py").is_file(), f"{layer}/ is not a package"


def test_no_import_goes_against_the_arrows() -> None:
    against = against_the_arrows(ROOT)
    assert not against, "imports against app → web → agent → eval → pipelines:\n" + \
        "\n".join(against)


def test_project_imports_inside_functions_say_why() -> None:
    unexplained = []
    for path in _sources(ROOT):
        lines = path.read_text(encoding="utf-8").splitlines()
        for line, name, inside in _imports(path):
            if inside and "#" not in lines[line - 1]:
                unexplained.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not unexplained, "project imports inside functions without a reason:\n" + \
        "\n".join(unexplained)


@pytest.mark.parametrize("layer, source, culprit", [
    ("agent", "from web import views\n", "web"),
    ("eval", "def f():\n    import agent.session\n", "agent.session"),
    ("pipelines", "import eval.metrics as m\n", "eval.metrics"),
    ("web", "def f():\n    from app import build_app\n", "app"),
    ("web", "from ui.launch import build_app\n", "ui.launch"),
    ("ui", "import app\n", "app"),
])
def test_the_check_catches_an_upward_import(tmp_path: Path, layer: str, source: str,
                                            culprit: str) -> None:
    """The check itself can fail: a planted upward import is reported with its line."""
    (tmp_path / layer).mkdir()
    (tmp_path / layer / "bad.py").write_text(source)
    (tmp_path / "pipelines").mkdir(exist_ok=True)
    (tmp_path / "pipelines" / "ok.py").write_text("import numpy\nfrom pipelines import x\n")
    (tmp_path / "app.py").write_text("from ui import launch\nimport web\n")
    assert against_the_arrows(tmp_path) == [
        f"{layer}/bad.py:{source.count(chr(10))} ({layer}) imports {culprit}"]


def test_the_app_layer_is_thin() -> None:
    """app.py only serves the Blocks that ui/ builds; no app-layer module is over 600 lines."""
    long = [f"{p.relative_to(ROOT)}: {n} lines" for p in _sources(ROOT)
            if _layer(ROOT, p) in ("app", "ui")
            and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, "over 600 lines:\n" + "\n".join(long)
    entry = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    assert not [n for n in entry.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))], \
        "app.py defines functions or classes; they belong in ui/"


def test_settings_are_read_in_one_place() -> None:
    """Every LOUPE_* variable is read by pipelines.config; nothing else reads them."""
    readers = []
    for path in _sources(ROOT):
        if path == ROOT / "pipelines" / "config.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ("os.environ" in line or "getenv" in line) and "LOUPE_" in line:
                readers.append(f"{path.relative_to(ROOT)}:{n}")
    assert not readers, "LOUPE_* read outside pipelines/config.py:\n" + "\n".join(readers)
