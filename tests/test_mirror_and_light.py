"""Issue 32: a photo's mirror image, or a brighter print of it, is the same scene.

Run on the real tune photos mirrored left to right and brightened (a gamma of 0.8), the
localiser said "found" on wrong answers that it did not give on the photos as shot: a
white dog lying on a floor was a cat when mirrored, a crouching man was his upper body,
a brightened grey sky was one cloud bank in it, a lake's hill took its reflection in and
a dog's tongue lost its paler half. A user's photo is one of many such prints, so each
rule is tested on the print that showed it (real photos of the tune split, each at the
smallest size that still shows the failure), and the photo as shot must keep its answer.
The last two tests hold rules the six new monochrome tune photos showed on their first
run: a thing in the sky is not the sky, and a text box taller than a line is asked.
"""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import get_localizer


def _brighter(rgb: np.ndarray, gamma: float = 0.8) -> np.ndarray:
    return np.round(255 * (rgb / 255.0) ** gamma).astype(np.uint8)


def test_a_white_dog_mirrored_is_no_cat() -> None:
    """Mirrored, a crop of the white dog's head read "cat 0.63" in the zoom search:
    "the cat" was found on the dog. A sure reading inside a sure larger object of a
    kindred class is a part of it; the dog is still found. (At its native 12 MP only:
    the zoom search looks closer than a smaller copy lets it.)"""
    photo = np.ascontiguousarray(realset.photo("dog_on_floor")[:, ::-1])
    assert get_localizer().locate(photo, "the cat").status != "resolved"
    assert get_localizer().locate(photo, "the dog").status == "resolved"


@pytest.mark.parametrize("mirrored", [False, True])
def test_a_man_read_as_his_upper_body_and_as_all_of_him_is_a_question(mirrored) -> None:
    """Mirrored, the crouching man's upper body is the detector's surer box (0.36), the
    whole of him a larger one (0.31): the outline cut in the smaller box took his torso
    (IoU 0.42) and said found. Two readings of where he ends are a question (as shot, the
    outline filling too little of his box already asked)."""
    photo, truth = realset.case_at("voc_2011_000003__man_right", 500)
    phrase = "the man on the right"
    if mirrored:
        photo, truth = np.ascontiguousarray(photo[:, ::-1]), truth[:, ::-1]
        phrase = "the man on the left"
    found = get_localizer().locate(photo, phrase)
    assert found.status == "ambiguous", found.reason
    assert any(mask_iou(m.mask, truth) > 0.3 for m in found.masks)     # he is offered


def test_a_brightened_grey_sky_is_not_one_cloud_bank() -> None:
    """Brightened, beam's grey sky was no longer read whole, and a small pale cloud bank
    off the top (5 % of the frame, 0 % blue) was "found the sky", IoU 0.09: small, pale
    and away from the top is a question, as small and pale along the top already was."""
    photo, truth = realset.case_at("beam__sky", 1296)
    found = get_localizer().locate(_brighter(photo), "the sky")
    assert found.status != "resolved" or mask_iou(found.union(), truth) >= 0.8, found.reason


def test_a_brightened_lake_still_mirrors_its_hill() -> None:
    """Brightened, the lake's smooth run no longer ended level under its shore, so no
    water was found and "the red hill" took its reflection in (IoU 0.46). Its clear
    mirror is the shore; the hill and the lake keep their answers as shot."""
    photo, truth = realset.case_at("lake_hill__hill", 1344)
    _, lake = realset.case_at("lake_hill__lake", 1344)
    for rgb in (photo, _brighter(photo)):
        hill = get_localizer().locate(rgb, "the red hill")
        assert hill.status == "resolved" and mask_iou(hill.union(), truth) >= 0.9
        water = get_localizer().locate(rgb, "the lake")
        assert water.status == "resolved" and mask_iou(water.union(), lake) >= 0.9


def test_a_tongue_is_its_pale_part_too() -> None:
    """Brightened, half the black dog's tongue fell under pink's saturation floor and the
    other half was taken alone (IoU 0.45, said found): pale pixels of the part's hue that
    touch it, and are no darker than most of it, join it."""
    photo, truth = realset.case_at("black_dog__tongue", 640)
    for rgb in (photo, _brighter(photo)):
        found = get_localizer().locate(rgb, "the dog's tongue")
        assert found.status == "resolved" and mask_iou(found.union(), truth) >= 0.85


def test_a_thing_in_the_sky_is_not_the_sky() -> None:
    """"The writing in the sky" (constellation, one of the new tune photos) went to the
    sky's own path and answered with the sky: a phrase names the sky only where no noun
    comes before it. On the lake's photo "the boat in the sky" (there is none) was the
    whole sky, said found; "the sky above the hill" is still the sky."""
    photo, sky = realset.case_at("lake_hill__sky", 1008)
    assert get_localizer().locate(photo, "the boat in the sky").status != "resolved"
    found = get_localizer().locate(photo, "the sky above the hill")
    assert found.status == "resolved" and mask_iou(found.union(), sky) >= 0.9


def test_writing_taller_than_a_line_of_text_is_a_question() -> None:
    """Letters drawn in sand (a new tune photo) are one text box of 40 % of the photo's
    height, half of it plain sand: "the writing in the sand" was that box, IoU 0.53, said
    found. A box taller than a line of text holds more than the writing: it is asked."""
    photo, truth = realset.case_at("sand__writing", 1920)
    found = get_localizer().locate(photo, "the writing in the sand")
    assert found.status == "ambiguous" and "taller than a line" in found.reason
    assert found.masks and (found.masks[0].mask & truth).sum() > 0.5 * truth.sum()
