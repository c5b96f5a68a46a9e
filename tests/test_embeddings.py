"""CLIP-I/CLIP-T, DINO similarity and the aesthetic score from tiny models (real loading)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipelines import embeddings
from pipelines.models import ModelUnavailable, get_manager
from tests.tiny_models import tiny_model_dir


@pytest.fixture()
def metric_models(monkeypatch):
    monkeypatch.setenv("LOUPE_MODEL_CLIP", str(tiny_model_dir("clip")))
    monkeypatch.setenv("LOUPE_MODEL_DINO", str(tiny_model_dir("dino")))
    monkeypatch.setenv("LOUPE_MODEL_AESTHETIC", str(tiny_model_dir("aesthetic")))
    yield
    get_manager().unload_all()


def test_clip_image_similarity(metric_models, astronaut, coffee):
    same = embeddings.clip_image_similarity(astronaut, astronaut.copy())
    other = embeddings.clip_image_similarity(astronaut, coffee)
    assert same == pytest.approx(1.0, abs=1e-4)
    assert -1.0 <= other < same


def test_clip_text_similarity_in_range(metric_models, astronaut):
    a = embeddings.clip_text_similarity(astronaut, "a red car")
    b = embeddings.clip_text_similarity(astronaut, "the sky")
    assert -1.0 <= a <= 1.0 and -1.0 <= b <= 1.0 and a != b
    assert -1.0 <= embeddings.clip_text_similarity(astronaut, "") <= 1.0


def test_dino_similarity_and_odd_modes(metric_models, astronaut, chelsea):
    grey = astronaut[..., 0]
    rgba = np.dstack([astronaut, np.full(astronaut.shape[:2], 255, np.uint8)])
    assert embeddings.dino_similarity(astronaut, rgba) == pytest.approx(1.0, abs=1e-4)
    assert -1.0 <= embeddings.dino_similarity(grey, chelsea) < 1.0
    with pytest.raises(ValueError, match="uint8"):
        embeddings.dino_similarity(astronaut.astype(np.float32), chelsea)


def test_aesthetic_score_is_a_number(metric_models, coffee):
    score = embeddings.aesthetic_score(coffee)
    assert isinstance(score, float) and math.isfinite(score)


def test_unavailable_roles_raise_with_reason(monkeypatch, astronaut):
    monkeypatch.setenv("LOUPE_MODEL_CLIP", "nobody-here/no-clip")
    monkeypatch.setenv("LOUPE_MODEL_AESTHETIC", "")
    with pytest.raises(ModelUnavailable, match="no-clip"):
        embeddings.clip_image_similarity(astronaut, astronaut)
    with pytest.raises(ModelUnavailable, match="no model configured"):
        embeddings.aesthetic_score(astronaut)
