"""A global generative edit inside a real turn: the model works at its own size on the whole
frame, and the native detail is carried through (no plain upscale of the model's output)."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from agent.session import EditSession
from pipelines.editors.diffusion import InstructPix2PixEditor
from pipelines.model_cards import CARDS
from pipelines.models import get_manager
from tests.tiny_models import tiny_model_dir


def _high_pass(image: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float32)
    return grey - cv2.GaussianBlur(grey, (0, 0), 3)


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


@pytest.fixture()
def tiny_ip2p(monkeypatch):
    card = CARDS["StableDiffusionInstructPix2PixPipeline"]
    monkeypatch.setenv("LOUPE_MODEL_EDITOR", str(tiny_model_dir("ip2p")))
    monkeypatch.setattr(InstructPix2PixEditor, "working_area", 64 * 64)
    monkeypatch.setitem(CARDS, card.pipeline, replace(card, steps=1))
    yield
    get_manager().unload_all()


def test_global_generative_turn_keeps_native_detail(tiny_ip2p, chelsea, tmp_path):
    image = cv2.resize(chelsea, (902, 600), interpolation=cv2.INTER_CUBIC)
    session = EditSession.create(image, tmp_path / "s")
    result = session.turn("make it look like a watercolor painting")
    ops = [a.operation for a in result.plan.actions] if hasattr(result.plan, "actions") \
        else [a["operation"] for a in result.to_dict()["plan"]["actions"]]
    assert "generate" in ops, result.message
    attempts = [a for step in result.steps for a in step.attempts]
    assert attempts and all(a.editor == "instruct-pix2pix" for a in attempts), result.to_dict()
    if not result.ok:
        pytest.fail(f"the turn did not apply: {result.message}")
    after = session.current_image()
    assert after.shape == image.shape
    assert not np.array_equal(after, image)
    # The model saw a 64²-pixel frame; a plain upscale of its output would carry none of
    # the cat's fur. The carried-over edit keeps the native high frequencies.
    small = cv2.resize(after, (78, 52), interpolation=cv2.INTER_AREA)
    upscaled = cv2.resize(small, (902, 600), interpolation=cv2.INTER_CUBIC)
    kept = _correlation(_high_pass(after), _high_pass(image))
    naive = _correlation(_high_pass(upscaled), _high_pass(image))
    assert kept > 0.8 > naive + 0.3, (kept, naive)
