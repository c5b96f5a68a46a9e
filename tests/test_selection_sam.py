"""Click-to-select through SAM (issue 24): with the ``segmenter`` role configured the way
the app configures it (``LOUPE_MODEL_SEGMENTER`` naming a local folder, here a tiny
random-weight SAM), ``select_at`` and ``EditSession.select`` prompt SAM with the click on a
crop and map the mask back inside that crop only; without the role the CPU path answers.

Random weights give an arbitrary mask, so these tests check the contract (source, shape,
placement, the photo left alone), not the mask's quality."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from agent.session import EditSession
from pipelines.localizers.point import select_at
from pipelines.models import get_manager
from tests.tiny_models import tiny_model_dir


@pytest.fixture()
def tiny_sam(monkeypatch):
    monkeypatch.setenv("LOUPE_MODEL_SEGMENTER", str(tiny_model_dir("sam")))
    assert get_manager().role_status("segmenter").available
    yield
    get_manager().unload_all()


def _inside(selection, shape, point) -> None:
    h, w = shape
    mask = selection.mask
    assert mask.dtype == bool and mask.shape == (h, w) and mask.any()
    x0, y0, x1, y1 = selection.crop
    assert 0 <= x0 <= point[0] < x1 <= w and 0 <= y0 <= point[1] < y1 <= h
    assert (x1 - x0) * (y1 - y0) < h * w                 # a crop, not the whole photo
    outside = mask.copy()
    outside[y0:y1, x0:x1] = False
    assert not outside.any()                              # nothing set outside the crop
    bx0, by0, bx1, by1 = selection.box
    assert x0 <= bx0 < bx1 <= x1 and y0 <= by0 < by1 <= y1


def test_a_click_asks_sam_on_the_crop_holding_it(tiny_sam, chelsea):
    # the cat fills scikit-image's frame (its box is the whole photo): on a wider canvas
    # the crop holding it is a part of the photo, so where SAM's mask goes can be checked
    photo = np.pad(chelsea, ((150, 150), (300, 300), (0, 0)), constant_values=128)
    before = photo.copy()
    point = (520, 300)                                    # on the cat
    found = select_at(photo, *point)
    assert found.source == "sam"
    _inside(found, photo.shape[:2], point)
    assert found.to_dict()["source"] == "sam" and found.to_dict()["area"] == found.mask.sum()
    assert np.array_equal(photo, before)                  # the photo is left alone


def test_a_click_on_plain_background_asks_sam_on_a_window(tiny_sam):
    flat = np.full((240, 320, 3), 128, np.uint8)          # nothing detected, nothing salient
    found = select_at(flat, 30, 200)
    assert found.source == "sam" and found.label == "region"
    _inside(found, flat.shape[:2], (30, 200))


def test_the_session_selects_through_sam_and_the_photo_is_unchanged(tiny_sam, chelsea,
                                                                    tmp_path):
    path = tmp_path / "cat.png"
    Image.fromarray(chelsea).save(path)
    session = EditSession.create(path, tmp_path / "session")
    before = session.current_image().copy()
    info = session.select(220, 150)["selection"]
    assert info["source"] == "sam" and info["area"] > 0
    assert session.selection.shape == chelsea.shape[:2] and session.selection.dtype == bool
    x0, y0, x1, y1 = info["box"]
    assert session.selection[y0:y1, x0:x1].sum() == info["area"]
    assert np.array_equal(session.current_image(), before)


def test_without_the_segmenter_the_cpu_path_answers(monkeypatch, chelsea):
    monkeypatch.setenv("LOUPE_MODEL_SEGMENTER", "nobody-here/no-sam")
    assert not get_manager().role_status("segmenter").available
    found = select_at(chelsea, 220, 150)
    assert found.source != "sam" and found.crop is None
    assert found.mask.shape == chelsea.shape[:2] and found.mask[150, 220]
