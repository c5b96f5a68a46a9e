"""Issue 35 from the command line: ``python -m agent edit … --reference`` (repeatable) and
``python -m agent batch … --reference`` on a shoot of real photos (``eval.photos``), run
as a user runs them (subprocesses; the batch on a local Ray with one worker)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agent.batch import job_settings, plan_batch, read_references, with_references
from eval.look import shoot_spread, structure
from eval.photos import load_photo, photo_path
from pipelines.images import load_image
from pipelines.look import look_distance

ROOT = Path(__file__).resolve().parents[1]
SHOOT = ("astronaut", "coffee", "chelsea", "motorcycle", "groot", "lion")


def _cli(*args: str, data: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "LOUPE_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def _small(name: str, folder: Path) -> Path:
    """A real photo at ≤ 320 px, saved as PNG (the tests stay fast)."""
    from PIL import Image

    path = folder / f"{name}.png"
    Image.fromarray(load_photo(name, 320)).save(path)
    return path


def test_cli_edit_matches_the_named_reference(tmp_path):
    photo = _small("china", tmp_path)
    ref1, ref2 = _small("rocket", tmp_path), _small("flower", tmp_path)
    out = tmp_path / "out.png"
    done = _cli("edit", str(photo), "make it look like reference 2", "--reference", str(ref1),
                "--reference", str(ref2), "--out", str(out), "--session",
                str(tmp_path / "s"), data=tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert "reference 2: flower.png" in done.stdout + done.stderr
    after = load_image(out).pixels
    before, flower = load_photo("china", 320), load_photo("flower", 320)
    assert look_distance(after, flower).total <= 0.5 * look_distance(before, flower).total
    assert structure(before, after) >= 0.85
    session = json.loads((tmp_path / "s" / "session.json").read_text())
    assert [r["filename"] for r in session["references"]] == ["rocket.png", "flower.png"]


def test_cli_refuses_a_hostile_reference_and_makes_nothing(tmp_path):
    photo = _small("china", tmp_path)
    evil = tmp_path / "evil.jpg"
    evil.write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 64)   # a JPEG that is not one
    out = tmp_path / "out.png"
    done = _cli("edit", str(photo), "make it look like the reference", "--reference",
                str(evil), "--out", str(out), "--session", str(tmp_path / "s"),
                data=tmp_path / "data")
    assert done.returncode != 0
    assert "evil.jpg" in done.stderr and "Traceback" not in done.stderr
    assert str(tmp_path) not in done.stderr   # no server path in the message
    assert not out.exists() and not (tmp_path / "s").exists()


@pytest.fixture(scope="module")
def shoot(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("ref-shoot")
    (root / "in").mkdir()
    for name in SHOOT:
        _small(name, root / "in")
    ref = root / "china.jpg"
    shutil.copyfile(photo_path("china"), ref)
    return root, ref


def test_cli_batch_makes_a_shoot_look_alike(shoot):
    root, ref = shoot
    out = root / "out"
    done = _cli("batch", str(root / "in"), str(out), "match the look of the reference",
                "--reference", str(ref), "--workers", "1", data=root / "data")
    assert done.returncode == 0, done.stdout + done.stderr
    before = [load_photo(n, 320) for n in SHOOT]
    after = [load_image(out / f"{n}.png").pixels for n in SHOOT]
    assert shoot_spread(after) <= 0.5 * shoot_spread(before)
    for b, a in zip(before, after):
        assert structure(b, a) >= 0.85
    lines = [json.loads(x) for x in (out / ".loupe-batch/manifest.jsonl").read_text()
             .splitlines() if x.strip()]
    assert len(lines) == len(SHOOT)
    import hashlib

    digest = hashlib.sha256(ref.read_bytes()).hexdigest()
    for entry in lines:
        assert entry["outcome"] == "done"
        assert entry["settings"]["references"] == [{"name": "china.jpg", "sha256": digest}]
        assert "reference_data" not in json.dumps(entry)
    # --resume: the same reference finds every photo finished; another one runs them all
    settings = job_settings("match the look of the reference")
    same = with_references(settings, read_references([ref]))
    todo, finished, _ = plan_batch(root / "in", out, same, mask_from=None, resume=True,
                                   retry_failed=False)
    assert not todo and len(finished) == len(SHOOT)
    other = root / "other.png"
    shutil.copyfile(root / "in" / "lion.png", other)
    changed = with_references(settings, read_references([other]))
    todo, finished, _ = plan_batch(root / "in", out, changed, mask_from=None, resume=True,
                                   retry_failed=False)
    assert len(todo) == len(SHOOT) and not finished


def test_cli_batch_refuses_a_hostile_reference_before_any_photo(shoot, tmp_path):
    root, _ = shoot
    evil = tmp_path / "evil.png"
    evil.write_bytes(b"not a png at all")
    done = _cli("batch", str(root / "in"), str(tmp_path / "out"),
                "match the look of the reference", "--reference", str(evil), "--workers",
                "1", data=tmp_path / "data")
    assert done.returncode != 0 and "evil.png" in done.stderr
    assert not (tmp_path / "out").exists() or not any(
        p.suffix == ".png" for p in (tmp_path / "out").rglob("*"))
    assert np.all([not (tmp_path / "out" / f"{n}.png").exists() for n in SHOOT])
