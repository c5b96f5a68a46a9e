"""The critic's own reading of an edit's extent on real photographs, wave 10 (issue 32,
part 4): a half edit that stops on a straight line in the middle of a smooth region
fails, a recolour whose mask the agent grew over the object's soft edge still passes, an
edit of "the background" is judged by the subject it leaves out, and the detector route
finds the phrase's head noun ("the bottle held by the man" is a bottle).

Photos: the labelled real set (``eval/data/realphotos``) at ``critic_real_pairs.SIDE``;
only the extent checks run (no detector), so each case costs well under a second.
"""

from __future__ import annotations

import pytest

from agent.brain.extent_lines import SMOOTH_LENGTH
from tests.critic_real_pairs import _edit, labelled_cases, photo, wrong_mask

IDS = {"aitzgorri__sky", "picture_0b__bowl", "picture_1a__pink_brush",
       "kitten_white__background"}


@pytest.fixture(scope="module")
def cases():
    found = {c.id: c for c in labelled_cases(IDS)}
    assert set(found) == IDS   # the labelled set ships these cases
    return found


def _extent(case, words, used, *, grow=False):
    """The extent checks on an edit of ``words`` made through ``used`` (the agent's own
    planner and executor); ``grow``: the critic's mask is grown over the object's edge
    first, as ``agent.brain.judge`` does for whole-object operations."""
    from agent.brain.extent import extent_checks  # noqa: PLC0415 — the check itself
    from agent.brain.planner import get_planner  # noqa: PLC0415 — the words' action
    from pipelines.editors.objects import grow_object_mask  # noqa: PLC0415 — as the judge

    image = photo(case.photo)
    action = get_planner(name="rules").plan(words, has_mask=True, image_size=(
        image.shape[1], image.shape[0])).actions[0]
    after = _edit(image, words, used, right=True)
    judged = grow_object_mask(image, used)[0] if grow else used
    return extent_checks(image, after, action, judged)


def test_half_a_sky_cut_off_in_the_open_sky_fails(cases):
    sky = cases["aitzgorri__sky"]            # a sky over a mountain ridge
    half = _extent(sky, "make the sky darker", wrong_mask(sky.mask, "half"))
    assert half.checks["extent"] is False
    assert half.measures["extent_smooth_cut"] >= SMOOTH_LENGTH
    assert any("straight line in the middle of a smooth region" in f for f in half.fix)
    ok = _extent(sky, "make the sky darker", sky.mask)
    assert ok.checks["extent"] is True and ok.measures["extent_smooth_cut"] < SMOOTH_LENGTH, \
        ok.fix


def test_half_a_bowl_fails_and_the_whole_bowl_passes(cases):
    bowl = cases["picture_0b__bowl"]         # a white bowl on a pale table
    half = _extent(bowl, "make the bowl brighter", wrong_mask(bowl.mask, "half"))
    assert half.checks["extent"] is False, half.measures
    ok = _extent(bowl, "make the bowl brighter", bowl.mask)
    assert all(ok.checks.values()), ok.fix


def test_a_recolour_through_the_mask_grown_for_its_edge_passes(cases):
    """The agent recolours a whole object through its mask grown over the soft edge: the
    flood that asks "does the thing go on past the edit?" starts inside that margin."""
    brush = cases["picture_1a__pink_brush"]   # a pink brush among other brushes
    ok = _extent(brush, "make the pink brush blue", brush.mask, grow=True)
    assert ok.checks["extent"] is True, ok.fix
    assert ok.measures["extent_floods"] <= 0.5
    moved = _extent(brush, "make the pink brush brighter", wrong_mask(brush.mask, "moved"))
    assert moved.checks["extent"] is False


def test_the_background_is_judged_by_the_subject_it_leaves_out(cases):
    back = cases["kitten_white__background"]  # everything but a white kitten
    ok = _extent(back, "make the background brighter", back.mask)
    assert ok.checks["extent"] is True, ok.fix
    whole = _extent(back, "make the background brighter", wrong_mask(back.mask,
                                                                      "whole frame"))
    assert whole.checks["extent"] is False
    assert any("the subject changed too" in f for f in whole.fix)
    moved = _extent(back, "make the background brighter", wrong_mask(back.mask, "moved"))
    assert moved.checks["extent"] is False
