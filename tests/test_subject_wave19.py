"""Issue 32: the tune edits still reported "done" wrong at 16 MP (``bench/realset.py
--split tune --edits --upscale 16``). Each rule is checked on the real tune photo that
showed it, at a size that keeps the test short (the outline is the same one, enlarged, at
16 MP)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from eval import realset
from pipelines.localizers.perception import PerceptionLocalizer


def _beyond(mask: np.ndarray, truth: np.ndarray, px: float) -> int:
    """Pixels of ``mask`` farther than ``px`` from ``truth``."""
    far = cv2.distanceTransform((~truth).view(np.uint8), cv2.DIST_L2, 5) > px
    return int((mask & far).sum())


@pytest.mark.parametrize("how", [None, "gamma1.25"])
def test_rock_by_the_shoulder_is_not_the_man(how: str | None) -> None:
    """A man in a brown jacket before a shaded canyon: GrabCut's outline takes a bump of
    blue-grey rock by his shoulder, 0.7 % of the mask, which the salient map reads as 0.0
    (under the 1 % an unsalient part of the outside's colour had to reach, and 16 ΔE from
    the paler rock beside it). Its colour is nearer that rock than the jacket, so it is
    cut (``segment.UNSALIENT_NEARER``), on the photo and on a darker print. At 16 MP "make
    the man brighter" brightened 6k px of rock and was reported done. As shot (800 px),
    203 px lay more than 8 px past his outline and 78 more than 12 px (38 and 0 now); on
    the darker print 223 and 87 (57 and 8 now)."""
    case = realset.case("kpa_grand_canyon_2__man")
    image, truth = realset.photo(case.photo)[..., :3], case.truth()
    if how:
        image, truth, _ = realset.printed(image, truth, case.phrase, how)
    found = PerceptionLocalizer().locate(image, case.phrase)
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert _beyond(mask, truth, 8) < 100
    assert _beyond(mask, truth, 12) < 20
    assert realset.mask_iou(mask, truth) >= 0.958


def test_the_hand_round_a_bottle_is_not_the_bottle() -> None:
    """"The bottle held by the man on the right" (a small bottle in his hand), the photo
    upscaled as the edit bench does (12 MP at least): the salient map reads his fingers
    with the bottle, and GrabCut's outline takes the thumb and fingers up to the detector
    box's right side, where the map and the hand's colour run on along his arm to the
    crop's edge. What the outline holds there past the bottle's own right edge is cut
    (``holder.holder_cut``). At 16 MP "remove the bottle" erased his fingers 1.5k px past
    the bottle's reach and was reported done. Here 2,653 px lay more than 24 px past the
    bottle (IoU 0.789)."""
    case = realset.case("voc_2011_000003__bottle")
    image, truth = realset.upscaled(realset.photo(case.photo)[..., :3], case.truth(), 12)
    found = PerceptionLocalizer().locate(image, case.phrase)
    assert found.status == "resolved", found.reason
    mask = found.union()
    assert _beyond(mask, truth, 24) < 600
    assert realset.mask_iou(mask, truth) >= 0.83
