"""Issue 32: outlines a few pixels too generous on a small photo, tens of pixels at 16 MP
(``bench/realset.py --edits --upscale 16``: the judge's reach is the true mask's feather
plus the most an edge may grow, capped in pixels), so "make the X brighter" was reported
done with the ground beside X brightened. Each rule is checked on the tune photo that
showed it, at its size as shot (the outline is the same one, enlarged, at 16 MP)."""

from __future__ import annotations

import cv2
import numpy as np

from eval import realset
from pipelines.localizers.perception import PerceptionLocalizer


def _case(case_id: str) -> tuple[np.ndarray, np.ndarray]:
    case = realset.case(case_id)
    return realset.photo(case.photo)[..., :3], case.truth()


def _beyond(mask: np.ndarray, truth: np.ndarray, px: float) -> int:
    """Pixels of ``mask`` farther than ``px`` from ``truth``."""
    far = cv2.distanceTransform((~truth).view(np.uint8), cv2.DIST_L2, 5) > px
    return int((mask & far).sum())


def test_the_gap_between_an_arm_and_the_body_is_not_the_man() -> None:
    """A man leaning on a rail, his forearm along it: the canyon seen between his arm and
    his body is a dark gap the salient map reads as not him (below 0.35) and GrabCut took
    for his dark jacket. It is 1.6 % of the outline, under the 2 % an unsalient part had to
    reach to be cut, and at 16 MP "make the man brighter" brightened 48k px of canyon,
    reported done. Such a part of 1 % is cut now (12 px past the truth: 1507 px before)."""
    image, truth = _case("kpa_grand_canyon_2__man")
    found = PerceptionLocalizer().locate(image, "the man")
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert _beyond(mask, truth, 12) < 1000
    assert realset.mask_iou(mask, truth) >= 0.92

