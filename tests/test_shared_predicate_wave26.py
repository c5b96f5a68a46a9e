"""Issue 32, wave 26, two readings that edited more than was named and said done.

* "make the sky and the trees darker" was split at "and" into "make the sky" and "the
  trees darker"; the intent library read "make the sky" as a highlights edit of the whole
  photo, which was applied and scored 10/10. A target said alone before "and" now takes
  what is said of the next one: the sky and the trees are both darkened, each in its own
  region.
  So does each target in a list ("the sky, the sea and the sand"), a target said without a
  verb ("the sea and the sky should be bluer" dropped the sea), and targets a pronoun
  stands for ("the dog and the cat, make them brighter" brightened the whole photo).
* "the sky on the left", "the left sky" and "the upper sky" were the whole sky (the side
  words choose among look-alikes, and there is one sky). They are its left or top half,
  offered as a question (``portion``), on a real tune photo at 640 px."""

from __future__ import annotations

import numpy as np
import pytest

from agent.brain.rules import RulePlanner
from eval import realset
from pipelines.localizers.embedded import EmbeddedLocalizer
from pipelines.localizers.perception import PerceptionLocalizer


def _steps(instruction: str) -> list[tuple[str, str]]:
    plan = RulePlanner().plan(instruction)
    assert plan.is_edit, plan.message
    return [(a.operation, a.target or "the whole image") for a in plan.actions]


@pytest.mark.parametrize(("instruction", "want"), [
    ("make the sky and the trees darker", [("brightness", "sky"), ("brightness", "trees")]),
    ("make the tower and the sky brighter", [("brightness", "tower"), ("brightness", "sky")]),
    # a list: the whole photo's highlights and the sand were all that was edited
    ("make the sky, the sea and the sand brighter",
     [("brightness", "sky"), ("brightness", "sea"), ("brightness", "sand")]),
    # the sea was dropped
    ("the sea and the sky should be bluer",
     [("saturation", "sea"), ("temperature", "sea"), ("saturation", "sky"),
      ("temperature", "sky")]),
    # the next target without its article: the whole photo's highlights were edited
    ("make the sky and clouds more dramatic", [("contrast", "sky"), ("contrast", "clouds")]),
    # "them" was the whole photo
    ("the dog and the cat, make them brighter", [("brightness", "dog"), ("brightness", "cat")]),
])
def test_a_target_said_before_and_shares_what_is_said_of_the_next(instruction, want) -> None:
    assert _steps(instruction) == want


@pytest.mark.parametrize(("instruction", "first"), [
    ("make the photo warmer and the sky bluer", ("temperature", "the whole image")),
    ("make the photo pop and the sky bluer", ("saturation", "the whole image")),
])
def test_an_edit_said_in_full_before_and_keeps_its_own_words(instruction, first) -> None:
    steps = _steps(instruction)
    assert steps[0] == first and all(t == "sky" for _, t in steps[1:])


@pytest.mark.parametrize(("phrase", "side"), [("the sky on the left", "left"),
                                               ("the left sky", "left"),
                                               ("the upper sky", "top")])
def test_a_side_of_the_sky_is_asked_with_that_half_offered(phrase, side) -> None:
    image, truth = realset.case_at("gc_eiffel_tower__sky", 640)
    cols = np.flatnonzero(truth.any(axis=0))
    rows = np.flatnonzero(truth.any(axis=1))
    for loc in (PerceptionLocalizer(), EmbeddedLocalizer()):
        found = loc.locate(image, phrase)
        assert found.status == "ambiguous", found.reason
        offered = found.masks[0].mask
        assert offered.any() and offered.sum() < 0.7 * truth.sum()
        if side == "left":
            assert not offered[:, (cols[0] + cols[-1] + 1) // 2 + 2:].any()
        else:
            assert not offered[(rows[0] + rows[-1] + 1) // 2 + 2:].any()


def test_the_sky_above_a_thing_is_all_of_the_sky() -> None:
    image, _ = realset.case_at("gc_eiffel_tower__sky", 640)
    found = PerceptionLocalizer().locate(image, "the sky above the trees")
    assert found.status == "resolved", found.reason
