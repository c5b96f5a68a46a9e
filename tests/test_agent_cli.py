"""``python -m agent``: edit, log, undo/redo/checkout, export/import, errors — as a user
runs them, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]


def _agent(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "agent", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def photo(tmp_path, chelsea) -> Path:
    path = tmp_path / "cat.png"
    Image.fromarray(chelsea).save(path)
    return path


def test_edit_then_navigate_export_and_import(photo, chelsea, tmp_path):
    session = tmp_path / "session"
    mask = np.zeros(chelsea.shape[:2], np.uint8)
    mask[50:150, 100:250] = 255
    Image.fromarray(mask).save(tmp_path / "mask.png")

    run = _agent("edit", photo, "brighten this area a lot", "--mask", tmp_path / "mask.png",
                 "--session", session, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "plan:" in run.stdout and "score" in run.stdout and "saved:" in run.stdout
    out = Path(run.stdout.split("saved: ")[1].splitlines()[0])
    edited = np.asarray(Image.open(out))
    assert out.suffix == ".png" and edited.shape == chelsea.shape
    assert edited[60:140, 110:240].mean() > chelsea[60:140, 110:240].mean() + 10
    assert np.array_equal(edited[200:, :], chelsea[200:, :])

    run = _agent("edit", photo, "make the image warmer", "--session", session, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "continuing session" in run.stdout

    log = _agent("log", "--session", session, cwd=tmp_path)
    assert log.returncode == 0 and len(log.stdout.splitlines()) == 3
    assert log.stdout.splitlines()[-1].startswith("* n2")

    assert "head: n1" in _agent("undo", "--session", session, cwd=tmp_path).stdout
    assert "head: n2" in _agent("redo", "--session", session, cwd=tmp_path).stdout
    assert "head: n0" in _agent("checkout", "n0", "--session", session, cwd=tmp_path).stdout

    exported = _agent("export", tmp_path / "s.zip", "--session", session, cwd=tmp_path)
    assert exported.returncode == 0 and (tmp_path / "s.zip").is_file()
    imported = _agent("import", tmp_path / "s.zip", "--session", tmp_path / "copy",
                      cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert "3 states, head n0" in imported.stdout
    copy_log = _agent("log", "--session", tmp_path / "copy", cwd=tmp_path).stdout
    assert copy_log == _agent("log", "--session", session, cwd=tmp_path).stdout


def test_clear_errors_and_refusals(photo, tmp_path):
    missing = _agent("edit", tmp_path / "nope.jpg", "brighten it", cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr
    session = tmp_path / "s"
    # a thing the detector knows and does not see (a word it does not know loads the
    # sentence encoder, ~9 s of CPU in this fresh process; tests/test_cli_edits_real.py's
    # emblem runs that path through the command line)
    refused = _agent("edit", photo, "remove the giraffe", "--session", session, cwd=tmp_path)
    assert refused.returncode == 1
    assert "nothing was changed" in refused.stdout.lower()
    assert "saved:" not in refused.stdout
    # the refusal names the command line's way to point at it (the app says "click it")
    assert "--point X,Y" in refused.stdout and "Click it on the photo" not in refused.stdout
    bad = _agent("checkout", "n42", "--session", session, cwd=tmp_path)
    assert bad.returncode == 2 and "no state 'n42'" in bad.stderr
    nothing = _agent("log", "--session", tmp_path / "empty", cwd=tmp_path)
    assert nothing.returncode == 2 and "no Loupe session" in nothing.stderr
    (tmp_path / "junk.zip").write_bytes(b"junk")
    junk = _agent("import", tmp_path / "junk.zip", cwd=tmp_path)
    assert junk.returncode == 2 and "not a valid zip" in junk.stderr


def test_autopilot_and_tree_search_land_in_the_session(photo, chelsea, tmp_path):
    session = tmp_path / "s"
    dark = tmp_path / "dark-cat.png"   # Autopilot leaves a photo that is already fine alone
    Image.fromarray((chelsea * 0.5).astype(np.uint8)).save(dark)
    auto = _agent("autopilot", dark, "--iterations", "1", "--simulations", "4", "--depth",
                  "2", "--session", session, cwd=tmp_path)
    assert auto.returncode == 0, auto.stderr
    assert "score:" in auto.stdout and "saved:" in auto.stdout
    log = _agent("log", "--session", session, cwd=tmp_path).stdout.splitlines()
    assert len(log) >= 2 and "Autopilot" in log[-1]
    tree = _agent("edit", photo, "make the image warmer and add a little contrast",
                  "--search", "tree", "--session", session, "--json", cwd=tmp_path)
    assert tree.returncode == 0, tree.stderr + tree.stdout
    assert '"topology"' in tree.stdout and "saved:" in tree.stdout
    assert len(_agent("log", "--session", session, cwd=tmp_path).stdout.splitlines()) > len(log)
