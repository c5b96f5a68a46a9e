"""Issue 32, wave 27: two families of "the sky" answered wrongly and said found.

* The sky seen through foliage: the sky found keeps the open part and leaves out the sky
  seen through the crowns (blue through twigs, or a pale sky through a canopy), so the
  answer covers 0.5-0.75 of the sky and says found.
* A cloud bank counted as not-sky: a smooth grey-white bank of cloud beside a blue sky is
  not the blue's colour, so the sky found stops at it and says found.

Each case is a part of a tune photo as shot (a crop of the real pixels, its hand-drawn mask
cropped with it): on 2b1deb3 each was found wrong (IoU 0.45-0.51) and said found. Now
the answer asks, offering the sky found, and says why. (Either half of the giraffes'
woodland, blue sky through bare crowns, is still found at IoU 0.71-0.74 and said found: its
blue fringe reads as scikit-image's rocket between lattice towers, which is found right.)"""

from __future__ import annotations

import numpy as np

from eval import realset
from pipelines.localizers.sky import ends_unsure, find_sky


def _crop(case_id: str, box: tuple[int, int, int, int]):
    image, truth = realset.case_shot(case_id)
    y0, y1, x0, x1 = box
    return np.ascontiguousarray(image[y0:y1, x0:x1, :3]), truth[y0:y1, x0:x1]


def _iou(found, truth: np.ndarray) -> float:
    return realset.mask_iou(found.masks[0].mask > 0.5, truth)


def _not_silent(found, truth: np.ndarray) -> None:
    """Found right, or asked; never found wrong."""
    if found.status == "resolved":
        assert _iou(found, truth) >= realset.RIGHT_IOU, found.reason
    else:
        assert found.status == "ambiguous", found.reason
        assert found.masks, "a question offers the sky found to click"


def test_a_pale_sky_through_a_canopy_is_not_said_found_wrong() -> None:
    """The top third of the redwoods seen from below: a nearly white sky, open at the top
    left and seen through the canopy elsewhere, was found at IoU 0.51 and said found (not
    blue, so no fringe was counted). Now it asks, naming the sky-coloured pixels left out."""
    image, truth = _crop("tux_redwoods_above__sky", (0, 330, 0, 960))
    found = ends_unsure(find_sky(image))
    _not_silent(found, truth)
    assert found.status == "ambiguous" and "canopy" in found.reason


def test_a_cloud_bank_beside_a_blue_sky_is_not_said_found_wrong() -> None:
    """The Taj Mahal from its minarets' tops down: the grey-white cloud bank filling the
    left half of the sky was left out and the blue sky on the right said found (IoU 0.45).
    Now the answer asks whether the bank is sky too."""
    image, truth = _crop("gc_taj_mahal__sky", (200, 560, 0, 1024))
    found = ends_unsure(find_sky(image))
    _not_silent(found, truth)
    assert found.status == "ambiguous" and "cloud bank" in found.reason
    assert _iou(found, truth) >= 0.4        # the blue sky found is offered


def test_the_whole_photos_keep_their_answers() -> None:
    """The same photos whole: the Taj Mahal's sky (its bank lower, most of it taken) is
    never found wrong; the giraffes' sky stays a question. (Since wave 33 the Taj's asks:
    the grey undersides of its low clouds run on from the sky found, ``sky_pockets.runs_on``;
    on a darker print they were left out and the sky said found at IoU 0.80. Its two edits
    as shot were refused by the critic before.)"""
    image, truth = realset.case_shot("gc_taj_mahal__sky")
    found = ends_unsure(find_sky(np.ascontiguousarray(image[..., :3])))
    _not_silent(found, truth)
    assert _iou(found, truth) >= 0.85       # offered to click when asked
    image, truth = realset.case_shot("gc_giraffes__sky")
    assert ends_unsure(find_sky(np.ascontiguousarray(image[..., :3]))).status == "ambiguous"
