"""The learned evaluator: shipped weights load, rank degradations, and bad files are refused."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from eval import naturalness, noref
from eval.photos import HELDOUT_PHOTOS, TRAIN_PHOTOS, fade, linear_gains, load_photo


@pytest.fixture(scope="module")
def model() -> naturalness.NaturalnessModel:
    loaded = naturalness.load_model()
    assert loaded is not None, "eval/data/naturalness.json must ship with the code"
    return loaded


def test_shipped_model_is_small_and_records_how_it_was_made(model) -> None:
    assert naturalness.MODEL_PATH.stat().st_size < 64 * 1024
    info = model.info
    assert info["command"].startswith("python scripts/train_naturalness.py")
    assert set(info["train_photos"]) == set(TRAIN_PHOTOS)
    assert set(info["heldout_photos"]) == set(HELDOUT_PHOTOS)
    assert not set(TRAIN_PHOTOS) & set(HELDOUT_PHOTOS)
    assert model.heads[0] == naturalness.SELF and len(model.heads) > 5


def test_degraded_photos_are_predicted_further_than_the_original(model) -> None:
    photo = load_photo("coffee", 256)
    clean = naturalness.predict(photo, model)[naturalness.SELF]
    for bad in (linear_gains(photo, (0.4, 0.45, 0.5)), fade(photo, black=0.2, white=0.8)):
        assert naturalness.predict(bad, model)[naturalness.SELF] > clean + 5


def test_the_right_correction_head_wins_on_a_dark_cool_photo(model) -> None:
    photo = load_photo("astronaut", 256)
    pred = naturalness.predict(linear_gains(photo, (0.39, 0.45, 0.5)), model)
    best = min(pred, key=pred.get)
    assert best.startswith("channel_levels(") and "linear=True" in best
    assert pred[best] < 0.5 * pred[naturalness.SELF]


def test_features_are_finite_and_cheap_to_compare(coffee: np.ndarray) -> None:
    flat = np.full((64, 64, 3), 128, np.uint8)        # degenerate: one grey value
    for img in (coffee, flat, cv2.cvtColor(coffee, cv2.COLOR_RGB2GRAY)):
        feats = naturalness.features(img)
        assert feats.shape == (len(naturalness.FEATURE_NAMES),) and np.isfinite(feats).all()


def test_a_bad_weights_file_is_refused_and_the_hand_norms_take_over(tmp_path, model,
                                                                    monkeypatch) -> None:
    data = json.loads(naturalness.MODEL_PATH.read_text())
    data["w2"] = data["w2"][:-1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert naturalness.load_model(str(bad)) is None
    assert naturalness.load_model(str(tmp_path / "missing.json")) is None
    monkeypatch.setattr(naturalness, "load_model", lambda path=None: None)
    assert noref.default_weights() is noref.HAND_WEIGHTS
    assert naturalness.naturalness(load_photo("coffee", 128)) is None


def test_use_model_switches_the_evaluator_and_back(tmp_path) -> None:
    """The leave-one-photo-out bench swaps in another fitted model: predictions follow it,
    and ``use_model(None)`` brings back the shipped one."""
    photo = load_photo("coffee", 128)
    shipped = naturalness.predict(photo)
    data = json.loads(naturalness.MODEL_PATH.read_text())
    data["b2"] = [v + 1.0 for v in data["b2"]]          # every log distance one larger
    data["info"] = {"left_out": "coffee"}
    other = tmp_path / "coffee.json"
    other.write_text(json.dumps(data))
    try:
        naturalness.use_model(other)
        assert naturalness.load_model().info == {"left_out": "coffee"}
        moved = naturalness.predict(photo)
        assert moved[naturalness.SELF] > shipped[naturalness.SELF] + 1.0
    finally:
        naturalness.use_model(None)
    assert naturalness.predict(photo) == shipped
