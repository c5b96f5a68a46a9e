"""Issue 32, wave 31: "the bison" on a prairie photo with a second bison at the right edge
(and a herd far off) was resolved to the one that stands out, edited and said done; its
label says ask (touching look-alikes). No detector class names a bison: the main subject is
taken for it because the detector sees an animal there ("cow"). Another sure, large enough
"cow" apart from it is a second thing the words may name, so the answer is a question
offering both; "the bison in front" (the nearest, which looks biggest) stays resolved.
Real tune photo (gcompris-qt-data), hand-drawn mask."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers.perception import PerceptionLocalizer
from pipelines.localizers.phrases import parse_phrase


@pytest.fixture(scope="module")
def localizer() -> PerceptionLocalizer:
    return PerceptionLocalizer()


def test_the_bison_beside_another_bison_is_a_question(localizer) -> None:
    front = realset.case("gc_bison__bison_in_front")
    found = localizer.locate(realset.photo(front.photo), "the bison")
    assert found.status == "ambiguous", found.reason
    assert "cow" in found.reason
    ious = [mask_iou(np.asarray(c.mask, bool), front.truth()) for c in found.masks]
    assert max(ious) >= 0.9         # the one in front is offered to click
    right_edge = [c for c in found.masks if c.mask[:, -40:].any() and c.mask.sum() > 5000]
    assert right_edge, "the bison cut by the right edge is offered too"


def test_the_bison_in_front_stays_resolved(localizer) -> None:
    case = realset.case("gc_bison__bison_in_front")
    found = localizer.locate(realset.photo(case.photo), case.phrase)
    assert found.status == "resolved", found.reason
    assert mask_iou(found.union(), case.truth()) >= 0.9


def test_in_front_means_the_nearest_not_a_relation() -> None:
    assert parse_phrase("the cow in front").size == "largest"
    assert parse_phrase("the nearest boat").size == "largest"
    assert parse_phrase("the car in front of the house").size is None
    assert parse_phrase("the boat nearest the shore").size is None
    assert parse_phrase("the front door").size is None
