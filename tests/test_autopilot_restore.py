"""Autopilot's direct fix (issue 33): the estimated fault inverted in full only when sure.

Real photographs (``eval.realphotos``, from Debian packages; the dark one is a training
photo, the untouched one a validation photo) and issue 28's untouched validation photos,
at 256 px, on a small budget.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from agent.search.autopilot_memory import AutopilotMemory
from agent.search.mcts import autopilot
from agent.search.suggestions import FULL_STRENGTH, accept_full_strength
from eval import restore
from eval.photos import BENCH_DEGRADATIONS, load_photo, load_validation, psnr

SIZE = 256


def _run(img):
    memory = AutopilotMemory.load(Path(tempfile.mkdtemp()) / "memory.json")
    return autopilot(img, iterations=1, simulations=4, depth=2, memory=memory)


def _sure(result) -> list[dict]:
    return [c for c in result.considered if str(c.get("decision", "")).startswith(
        "kept in full")]


def test_a_dark_real_photo_is_fixed_in_full_when_sure() -> None:
    clean = load_photo("street_truck", SIZE)
    dark = BENCH_DEGRADATIONS["dark_and_cool"](clean)
    result = _run(dark)
    sure = _sure(result)
    assert sure and sure[0]["probability"] >= sure[0]["required_probability"] >= 0.9
    assert result.steps[0].action["operation"] == restore.INVERSE_OP
    assert psnr(result.image, clean) >= psnr(dark, clean) + 20.0
    assert "sure the photo was" in result.reason


def test_an_untouched_real_photo_stays_within_35_db_and_the_whole_fix_is_offered() -> None:
    clean = load_photo("cloud", SIZE)       # bright, no black: its inverse moves it far
    est = restore.estimate(clean)
    assert est is not None and est.moves > 4.5 and est.probability < 0.9
    result = _run(clean)
    assert not _sure(result)
    assert psnr(result.image, clean) >= 35.0
    offered = [s for s in result.suggestions if s["operation"] == FULL_STRENGTH]
    assert offered and offered[-1]["probability"] < offered[-1]["required_probability"]
    whole = accept_full_strength(clean, offered[-1])[-1][0]
    assert psnr(whole, clean) < 35.0      # the one click does move it: it is the user's call


@pytest.mark.parametrize("label", ["rocket", "flower_closeup"])
def test_a_twilight_sky_or_an_orange_flower_is_not_corrected(label: str) -> None:
    img = load_validation(label, SIZE)
    result = _run(img)
    assert not _sure(result)
    assert psnr(result.image, img) >= 35.0


def test_a_model_file_that_points_outside_its_trees_is_refused(tmp_path: Path) -> None:
    data = restore.MODEL_PATH.read_text()
    bad = data.replace('"left":[[', '"left":[[9999,', 1)
    (tmp_path / "restore.json").write_text(bad)
    assert restore.load_model(str(tmp_path / "restore.json")) is None
    assert restore.load_model() is not None
