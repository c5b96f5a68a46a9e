"""GroundingDINO + SAM localiser on tiny models: masks at the image's size, statuses,
zoomed tiles, and the fallback to the embedded localiser."""

from __future__ import annotations

import numpy as np
import pytest

from pipelines.localizers import EmbeddedLocalizer, Hint, LocalizationError, get_localizer
from pipelines.localizers.grounded_sam import GroundedSAMLocalizer, detector_prompt, nms
from pipelines.models import get_manager
from pipelines.perception.detectors import Detection, tile_grid
from tests.tiny_models import tiny_model_dir


@pytest.fixture()
def tiny_grounding(monkeypatch):
    monkeypatch.setenv("LOUPE_MODEL_DETECTOR", str(tiny_model_dir("grounding_dino")))
    monkeypatch.setenv("LOUPE_MODEL_SEGMENTER", str(tiny_model_dir("sam")))
    yield
    get_manager().unload_all()


def test_phrase_gives_masks_of_the_image_size(tiny_grounding, coffee):
    found = GroundedSAMLocalizer(box_threshold=0.0, text_threshold=0.0,
                                 tiles=False).locate(coffee, "the red cup")
    assert found.status in ("resolved", "ambiguous")
    assert 1 <= len(found.masks) <= 5
    scores = [m.score for m in found.masks]
    assert scores == sorted(scores, reverse=True)
    for m in found.masks:
        assert m.mask.shape == coffee.shape[:2] and m.mask.dtype == bool and m.mask.any()
        assert 0.0 <= m.score <= 1.0 and m.source == "grounded-sam"


def test_hint_box_is_segmented_inside_the_image(tiny_grounding, chelsea):
    rgba = np.dstack([chelsea, np.full(chelsea.shape[:2], 255, np.uint8)])
    found = GroundedSAMLocalizer().locate(rgba, "cat", Hint(box=(50, 40, 200, 220)))
    assert found.status == "resolved" and len(found.masks) == 1
    assert found.masks[0].mask.shape == chelsea.shape[:2]


def test_hint_point_gives_one_mask(tiny_grounding, chelsea):
    found = GroundedSAMLocalizer().locate(chelsea, "", Hint(point=(200, 150)))
    assert found.status == "resolved" and len(found.masks) == 1
    assert found.masks[0].mask.shape == chelsea.shape[:2] and found.masks[0].mask.any()
    with pytest.raises(LocalizationError, match="outside"):
        GroundedSAMLocalizer().locate(chelsea, "", Hint(point=(9999, 5)))


def test_tiled_search_returns_full_frame_boxes(tiny_grounding, astronaut):
    localizer = GroundedSAMLocalizer(box_threshold=0.0, text_threshold=0.0, tile_side=384,
                                     small_fraction=1.1)  # every box counts as small
    frame_only = GroundedSAMLocalizer(box_threshold=0.0, text_threshold=0.0, tiles=False)
    tiled = localizer.detect(astronaut, "the person.")
    plain = frame_only.detect(astronaut, "the person.")
    assert len(tiled) >= len(plain) > 0
    for det in tiled:
        x0, y0, x1, y1 = det.box
        assert 0 <= x0 < x1 <= 512 and 0 <= y0 < y1 <= 512


def test_nothing_found_is_unresolved(tiny_grounding, coffee):
    found = GroundedSAMLocalizer(box_threshold=1.01).locate(coffee, "a unicorn")
    assert found.status == "unresolved" and not found.masks and "a unicorn" in found.reason
    assert GroundedSAMLocalizer().locate(coffee, "  ...  ").status == "unresolved"


def test_preferred_when_available_else_embedded(tiny_grounding, monkeypatch):
    assert isinstance(get_localizer(), GroundedSAMLocalizer)
    monkeypatch.setenv("LOUPE_MODEL_SEGMENTER", "nobody-here/no-sam")
    ok, reason = GroundedSAMLocalizer.is_available()
    assert not ok and reason.startswith("segmenter:")
    assert isinstance(get_localizer(), EmbeddedLocalizer)


def test_helpers():
    assert detector_prompt("  The RED car. ") == "the red car."
    assert detector_prompt("...") == ""
    boxes = tile_grid(1000, 1500, 512, 0.25)
    assert boxes[0] == (0, 0, 512, 512) and boxes[-1] == (988, 488, 1500, 1000)
    kept = nms([Detection((0, 0, 10, 10), 0.9, "a"), Detection((1, 1, 10, 10), 0.5, "a"),
                Detection((50, 50, 60, 60), 0.4, "b")])
    assert [d.score for d in kept] == [0.9, 0.4]
