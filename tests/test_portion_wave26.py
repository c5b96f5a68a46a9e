"""Issue 32, wave 26: "the left half of the sky", "the top of the sky" and "the top of the
horse" name a part of one thing, but the position words were read as a choice among
look-alikes, and with one sky there was nothing to choose: "make the left half of the sky
darker" darkened all of it (276 k px beyond the half) and "make the top of the sky darker"
too, both said done. ``portion`` locates the thing and cuts its outline to the named half
of its box: a half is resolved, a top or a side (which ends where the user says) is asked.
Real tune photos at 640 px; the edits run through the CLI in ``bench/realset.py --edits``."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import portion
from pipelines.localizers.embedded import EmbeddedLocalizer
from pipelines.localizers.perception import PerceptionLocalizer

SIDE = 640


@pytest.mark.parametrize(("phrase", "want"), [
    ("the left half of the sky", ("left", "half", "the sky")),
    ("The top of the tower", ("top", "", "the tower")),
    ("the bottom edge of the lake", ("bottom", "edge", "the lake")),
    ("the left of the two cups", None),         # a choice among them
    ("the top of the trees", None),
    ("the cup on top of the table", None),      # a relation
    ("the left cup", None),
])
def test_which_phrases_name_a_part_by_position(phrase, want) -> None:
    assert portion.split(phrase) == want


def test_a_cut_keeps_the_named_half_of_the_outline() -> None:
    mask = np.zeros((40, 60), bool)
    mask[10:30, 20:50] = True
    top, right = portion.cut(mask, "top"), portion.cut(mask, "right")
    assert top.sum() == 10 * 30 and top[10:20, 20:50].all()
    assert right.sum() == 20 * 15 and right[10:30, 35:50].all()
    assert not (portion.cut(mask, "bottom") & top).any()


def test_the_left_half_of_the_sky_is_that_half() -> None:
    image, truth = realset.case_at("gc_eiffel_tower__sky_left_half", SIDE)
    for loc in (PerceptionLocalizer(), EmbeddedLocalizer()):
        found = loc.locate(image, "the left half of the sky")
        assert found.status == "resolved", found.reason
        assert mask_iou(found.union(), truth) >= 0.93, (type(loc).__name__, found.reason)


@pytest.mark.parametrize(("case_id", "phrase"), [
    ("gc_eiffel_tower__sky", "the top of the sky"),
    ("gc_horse__horse", "the top of the horse"),
])
def test_the_top_of_one_thing_is_asked_with_its_top_half_offered(case_id, phrase) -> None:
    image, truth = realset.case_at(case_id, SIDE)
    found = PerceptionLocalizer().locate(image, phrase)
    assert found.status == "ambiguous", found.reason
    offered = found.masks[0].mask
    rows = np.flatnonzero(truth.any(axis=1))
    middle = (rows[0] + rows[-1] + 1) // 2
    assert offered.any() and not offered[middle:].any()
    assert (offered & truth).sum() >= 0.8 * offered.sum()
