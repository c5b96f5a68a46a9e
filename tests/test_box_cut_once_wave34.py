"""Issue 32's 20-MP zoom (``bench/perception.py``): a small cup found by the zoom search
ends on its detector box's bottom, where the pasted photo ends, so ``refine_box`` cut it
again in a box grown downwards: a third U²-Net-p pass and a second GrabCut (~0.2 s of
the ~1 s zoom) that found nothing to add. When the first crop's salient map reads nothing
(below ``UNSALIENT_NONE``) past every side the outline runs along, the object ends there
and it is cut once; where the map sees the object go on (a white cat's ears above its
box), it is cut again as before.

Real U²-Net-p runs (weights from the install step; a missing file fails)."""

from __future__ import annotations

import numpy as np

from eval import realset
from pipelines.localizers import segment
from pipelines.localizers.perception import CROP_SIDE, SALIENT_CROP_SIDE
from pipelines.perception.detectors import SalientSegmenter
from tests.perception_cases import load_cases, photo_by_name, render_zoom_case


def _counted() -> tuple[list[tuple[int, ...]], object]:
    salient = SalientSegmenter()
    calls: list[tuple[int, ...]] = []

    def saliency(crop: np.ndarray) -> np.ndarray:
        calls.append(crop.shape)
        return salient.saliency(crop, SALIENT_CROP_SIDE)

    return calls, saliency


def test_an_object_that_ends_on_its_box_is_cut_once_with_the_same_outline(monkeypatch) -> None:
    """The bench's 20-MP scene (the coffee photo's cup pasted on a textured field) and the
    box the zoom finds there, 7 px wider than the patch and ending on the patch's bottom.
    (Not an identity: on a 1600 x 1200 field the second cut adds 3 px below the patch.)"""
    case = next(c for c in load_cases() if c.split == "zoom" and c.image_name == "coffee")
    image = render_zoom_case(photo_by_name("coffee"), {**case.render, "canvas": [5472, 3648]})
    box = (2893, 2093, 3141, 2372)          # the patch is (2900, 2100, 3138, 2372)
    calls, saliency = _counted()
    once = segment.refine_box(image, box, saliency, CROP_SIDE, False)
    assert len(calls) == 1
    assert segment._box_cut_sides(once, box) == {3}   # it runs along the box's bottom
    assert once[2100:2372, 2900:3138].mean() > 0.5 and not once[2372:].any()
    # the same outline as when it is cut again (a gap no map reaches: never "ends")
    monkeypatch.setattr(segment, "BOX_CUT_GAP", 10_000)
    calls, saliency = _counted()
    again = segment.refine_box(image, box, saliency, CROP_SIDE, False)
    assert len(calls) == 2 and np.array_equal(once, again)


def test_a_cat_whose_ears_go_on_past_its_box_is_cut_again() -> None:
    """The tune photo of a white cat before a monitor (1920 x 1080), the box drawn round
    its head and body with its top through the head (row 820): the first crop's map
    reads the ears above it (0.99), so the box is grown upwards and they are added."""
    image, truth = realset.case_at("cat_watching_tv__cat", 1920)
    box = (458, 820, 731, 1080)
    calls, saliency = _counted()
    mask = segment.refine_box(np.ascontiguousarray(image), box, saliency, CROP_SIDE, False)
    assert len(calls) == 2
    ears = truth[:815]
    assert ears.sum() > 300 and (mask[:815] & ears).sum() >= 0.6 * ears.sum()
