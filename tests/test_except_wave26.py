"""Issue 32, wave 26: "except" after a named thing was dropped. "the sky except the
clouds" was the whole sky, resolved, so the clouds were edited with it and the answer
said found; the exclusion worked only after "everything". And "make the sky bluer except
the clouds" (the exclusion said after the edit) was asked as 'warmer' or 'recover the
highlights'. Now the named thing less the left-out one is the target: resolved when both
are, a question when the left-out thing cannot be told (the clouds are a colour threshold,
always asked), the named thing as it is when the left-out one is not there. Real tune
photos at 640 px."""

from __future__ import annotations

import pytest

from agent.brain.rules import RulePlanner
from eval import realset
from pipelines.localizers.perception import PerceptionLocalizer


def test_the_man_except_his_face_leaves_the_face_out() -> None:
    image, _ = realset.case_at("kpa_grand_canyon_2__sky", 640)
    loc = PerceptionLocalizer()
    man, face = loc.locate(image, "the man"), loc.locate(image, "the face")
    less = loc.locate(image, "the man except his face")
    assert man.status == face.status == less.status == "resolved", less.reason
    kept, face_px = less.union(), face.union()
    assert not (kept & face_px).any()
    assert (kept | (face_px & man.union())).sum() == man.union().sum()


def test_the_sky_except_the_clouds_is_asked_not_the_whole_sky() -> None:
    image, _ = realset.case_at("gc_eiffel_tower__sky", 640)
    found = PerceptionLocalizer().locate(image, "the sky except the clouds")
    assert found.status == "ambiguous", found.reason
    assert "clouds" in found.reason


def test_all_the_cups_except_one_is_still_a_choice_among_them() -> None:
    from pipelines.localizers.phrases import other_thing as _other_thing

    assert not _other_thing(["cups"], ["cup"])
    assert _other_thing(["sky"], ["clouds"])
    assert not _other_thing(["cups"], [])          # "except the left one"


@pytest.mark.parametrize("instruction", ["make the sky bluer except the clouds",
                                         "make the sky except the clouds bluer"])
def test_an_exclusion_said_after_the_edit_goes_with_the_target(instruction: str) -> None:
    plan = RulePlanner().plan(instruction)
    assert plan.is_edit, plan.message
    assert plan.actions and all(a.target == "sky except the clouds" for a in plan.actions)
    assert all(a.operation != "recolor" for a in plan.actions)      # still "more of it"
