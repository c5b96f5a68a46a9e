"""Issue 32, wave 26: "whole", "entire", "picture" and "photo" anywhere in a phrase made it
the whole image (``phrases.WHOLE`` searched the phrase for the words): "make the whole sky a
deeper blue" recoloured the tower and the trees too, "make the entire meadow brighter"
brightened the mountains and the sky (4 M px beyond the meadow), both said done. The photo is
the whole image only when the phrase names the photo itself; "the whole sky" is all of the
sky, and "the picture frame" is a thing, refused where there is none. Real tune photos at
640 px; the edits run through the CLI in ``bench/realset.py --edits``."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers.perception import PerceptionLocalizer
from pipelines.localizers.phrases import WHOLE, parse_phrase

SIDE = 640


@pytest.mark.parametrize("phrase", ["the whole image", "whole image.", "the photo",
                                    "The Entire Photo", "everything", "all of it",
                                    "the whole thing", "everything in the picture",
                                    "everything except the cup"])
def test_phrases_naming_the_photo_are_the_whole_image(phrase: str) -> None:
    assert WHOLE.search(parse_phrase(phrase).text), phrase


@pytest.mark.parametrize("phrase", ["the whole sky", "the entire meadow", "the picture frame",
                                    "the photo on the wall", "the picture of the tower",
                                    "the full moon", "the whole left side"])
def test_phrases_naming_a_thing_are_not(phrase: str) -> None:
    assert not WHOLE.search(parse_phrase(phrase).text), phrase


@pytest.mark.parametrize(("case_id", "phrase"), [
    ("gc_eiffel_tower__sky", "the whole sky"),
    ("aitzgorri__meadow", "the entire meadow"),
])
def test_all_of_a_thing_is_that_thing(case_id: str, phrase: str) -> None:
    image, truth = realset.case_at(case_id, SIDE)
    found = PerceptionLocalizer().locate(image, phrase)
    assert found.status == "resolved", found.reason
    assert mask_iou(found.union(), truth) >= 0.95, found.reason


def test_a_picture_frame_that_is_not_there_is_refused() -> None:
    image, _ = realset.case_at("gc_mount_rushmore__mountain", SIDE)
    found = PerceptionLocalizer().locate(image, "the picture frame")
    assert found.status == "unresolved", found.reason
    assert not found.masks


def test_the_whole_image_is_still_every_pixel() -> None:
    image, _ = realset.case_at("gc_mount_rushmore__mountain", SIDE)
    found = PerceptionLocalizer().locate(image, "the whole image")
    assert found.status == "resolved" and bool(np.all(found.union()))
