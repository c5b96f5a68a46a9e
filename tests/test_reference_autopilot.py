"""Issue 35: a reference photo in place of Autopilot's mood ("make it better, like this
one"), through the web calls the Autopilot tab makes and the CLI. Real photos at 320 px."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import web
from eval.look import look_distance, structure
from eval.photos import load_photo
from pipelines.images import load_image
from tests.test_app import manager  # noqa: F401  (the session-manager fixture)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name in ("china", "rocket"):
        out[name] = tmp_path / f"{name}.png"
        Image.fromarray(load_photo(name, 320)).save(out[name])
    out["evil"] = tmp_path / "evil.png"
    out["evil"].write_bytes(b"no image here")
    return out


def test_autopilot_with_a_reference_moves_towards_it_and_lands_in_edit(manager, files):  # noqa: F811
    sid = web.ensure_session(None)
    view = web.run_autopilot(sid, str(files["china"]), reference=str(files["rocket"]))
    assert view.rows and view.summary["score_after"] > view.summary["score_before"]
    assert any("reference" in c["description"] for c in view.summary["considered"])
    before, after = load_photo("china", 320), np.asarray(view.slider[1])
    rocket = load_photo("rocket", 320)
    assert look_distance(after[..., :3], rocket).total <= \
        0.6 * look_distance(before, rocket).total
    assert structure(before, after[..., :3]) >= 0.85
    landed = web.send_autopilot_to_edit(sid)
    np.testing.assert_array_equal(landed.image, view.slider[1])
    with pytest.raises(web.SessionError, match="evil.png"):
        web.run_autopilot(sid, str(files["china"]), reference=str(files["evil"]))


def test_cli_autopilot_takes_a_reference_in_place_of_the_mood(files, tmp_path):
    out = tmp_path / "auto.png"
    env = {**os.environ, "LOUPE_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "agent", "autopilot", str(files["china"]),
                           "--reference", str(files["rocket"]), "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rocket = load_photo("rocket", 320)
    assert look_distance(load_image(out).pixels, rocket).total < \
        look_distance(load_photo("china", 320), rocket).total
    both = subprocess.run([sys.executable, "-m", "agent", "autopilot", str(files["china"]),
                           "--reference", str(files["rocket"]), "--mood", "warm"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert both.returncode != 0 and "not both" in both.stderr


def test_the_chat_shows_the_reference_it_kept(manager, files):  # noqa: F811
    sid = web.in_new_session(lambda s: web.open_image(s, str(files["china"]), "china.png"))[0]
    view, result = web.edit_turn(sid, "make it look like the reference",
                                 reference=str(files["rocket"]))
    assert result["ok"]
    said = [m for m in view.chat if isinstance(m["content"], str) and "reference 1" in m["content"]]
    assert said and "rocket.png" in said[0]["content"]
    pictures = [m["content"]["path"] for m in view.chat if isinstance(m["content"], dict)]
    assert len(pictures) == 1
    with Image.open(pictures[0]) as im:
        shown = np.asarray(im.convert("RGB"))
    assert max(shown.shape[:2]) <= 320 and shown.mean() < 80   # the dark rocket photo
    # the same file again is the same reference: no second message or picture
    view, _ = web.edit_turn(sid, "make it look halfway like the reference",
                            reference=str(files["rocket"]))
    assert sum(isinstance(m["content"], dict) for m in view.chat) == 1
