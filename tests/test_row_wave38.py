"""Issue 32, wave 38: a weak detection where a row's count runs, looked at again.

The aquarium's leftmost woman is seen at 0.31 beside a man at 0.65; "the second person
from the left" asked, as she might be the first. A closer look at her (the detector on a
crop where she fills its view) reads 0.54: she is counted, and the man beside her is the
second (``pipelines.localizers.row``). She herself was never outlined, so "the person on
the far left" stays a question.
"""

from __future__ import annotations

import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers.perception import PerceptionLocalizer


@pytest.fixture(scope="module")
def localizer() -> PerceptionLocalizer:
    return PerceptionLocalizer()


def test_the_second_from_the_left_counts_the_woman_a_closer_look_confirms(localizer) -> None:
    image, truth, phrase = realset.case_printed("aquarium__second_person_left", None)
    found = localizer.locate(image, phrase)
    assert found.status == "resolved", found.reason
    assert "number 2 from the left" in found.reason
    assert mask_iou(found.masks[0].mask, truth) >= 0.8


def test_the_one_seen_only_on_a_closer_look_is_not_taken_unoutlined(localizer) -> None:
    image, _, phrase = realset.case_printed("aquarium__person_far_left", None)
    found = localizer.locate(image, phrase)
    assert found.status == "ambiguous"
    assert "closer look" in found.reason
