"""The critic judges an edit's extent on its own, on real photographs (issue 32, part 4).

Edits are made by the agent's own planner and executor inside a human-drawn mask (good)
or through a wrong extent (grown onto the support, moved onto the neighbour, cut in half,
the whole frame); the critic gets the mask each edit was made with, as in the turn loop,
so only the checks that do not trust it can catch a wrong one. Photos: labelme's examples
(``eval.realphotos``) at ``critic_real_pairs.SIDE``; the perception files are installed by
``make install`` (as ``tests/test_independent.py``, these tests need them and never skip).
"""

from __future__ import annotations

import numpy as np
import pytest

from agent.brain.judge import critique_images
from tests.critic_real_pairs import _edit, photo, polygon_cases, wrong_mask


@pytest.fixture(scope="module")
def by_id():
    return {c.id: c for c in polygon_cases() if c.split == "tune"}


def _judge(case, words, kind):
    image = photo(case.photo)
    used = case.mask if kind == "good" else wrong_mask(case.mask, kind)
    after = _edit(image, words, used, right=kind == "good")
    verdict = critique_images(image, after, words, used)
    return verdict, verdict["steps"][0].get("checks", {}) if verdict["steps"] else {}


def test_a_mask_grown_onto_the_support_fails_and_the_true_extent_passes(by_id):
    notes = by_id["shelf_objects__self_stick_notes"]   # sticky notes lying on a shelf
    ok, _ = _judge(notes, "make the self stick notes darker", "good")
    bad, checks = _judge(notes, "make the self stick notes darker", "grown")
    assert ok["passed"], ok["reasons"]
    assert not bad["passed"] and checks["extent"] is False
    # its border runs through the shelf (and straight along it, where the notes' box grew)
    assert any("does not end where" in r or "runs straight through" in r
               for r in bad["reasons"])


def test_a_mask_moved_onto_the_neighbour_fails(by_id):
    person = by_id["voc_2011_000003__person_on_the_right"]
    ok, _ = _judge(person, "make the person on the right brighter", "good")
    bad, checks = _judge(person, "make the person on the right brighter", "moved")
    assert ok["passed"], ok["reasons"]
    assert not bad["passed"] and bad["score"] <= 3
    assert checks.get("extent") is False or checks.get("second_route") is False


def test_a_half_mask_fails(by_id):
    person = by_id["voc_2011_000003__person_on_the_left"]
    bad, checks = _judge(person, "make the person on the left darker", "half")
    assert not bad["passed"] and checks["covers"] is False      # the person found again
    assert any("only part of" in r for r in bad["reasons"])
    ball = by_id["shelf_objects__squeakair_tennis_ball"]        # no detector sees it
    bad, checks = _judge(ball, "make the squeakair tennis ball brighter", "half")
    assert not bad["passed"] and checks["extent"] is False


def test_the_whole_frame_for_a_named_thing_fails(by_id):
    car = by_id["voc_2011_000025__car"]
    bad, checks = _judge(car, "make the car darker", "whole frame")
    assert not bad["passed"] and checks["plausible_size"] is False
    assert any("far more than" in r for r in bad["reasons"])


def test_paint_over_a_touching_look_alike_fails(by_id):
    """The bus in front, its mask grown over the bus touching it on the left."""
    bus = by_id["voc_2011_000025__bus_on_the_right"]
    other = by_id["voc_2011_000025__bus_on_the_left"]
    ok, _ = _judge(bus, "make the bus on the right blue", "good")
    assert ok["passed"], ok["reasons"]
    image = photo(bus.photo)
    used = bus.mask | other.mask
    after = _edit(image, "make the bus on the right blue", used)
    verdict = critique_images(image, after, "make the bus on the right blue", used)
    assert not verdict["passed"]
    assert np.count_nonzero(used) > 1.05 * np.count_nonzero(bus.mask)


class _Located:
    """A localiser that hands the turn loop a fixed mask for any phrase (the wrong extent
    the real one produced on such photos)."""

    name = "fixed"

    def __init__(self, mask: np.ndarray) -> None:
        self.mask = mask

    def locate(self, image, phrase, hint=None):  # noqa: ANN001, ANN201
        from pipelines.localizers.base import Candidate, resolved  # noqa: PLC0415 — test only

        return resolved([Candidate(self.mask, 0.9, phrase, "fixed")], phrase)


def test_the_turn_loop_never_reports_done_on_an_edit_its_critic_fails(by_id, tmp_path):
    from agent.session import EditSession  # noqa: PLC0415 — the session only for this test

    notes = by_id["shelf_objects__self_stick_notes"]
    image = photo(notes.photo)
    grown = wrong_mask(notes.mask, "grown")
    session = EditSession.create(image, tmp_path / "wrong", localizer=_Located(grown),
                                 max_attempts=2)
    result = session.turn("make the self stick notes darker")
    assert not result.ok and not result.changed and session.head == "n0"
    assert np.array_equal(session.current_image(), image)          # nothing was applied
    assert "not sure" in result.message and "Click it on the photo" in result.message
    assert "Nothing was changed" in result.message
    right = EditSession.create(image, tmp_path / "right", localizer=_Located(notes.mask),
                               max_attempts=2)
    done = right.turn("make the self stick notes darker")
    assert done.ok and done.steps[0].status == "applied"
    changed = np.any(right.current_image() != image, axis=2)
    assert changed[notes.mask].mean() > 0.5 and not changed[~wrong_mask(notes.mask,
                                                                          "grown")].any()


@pytest.fixture(scope="module")
def labelled():
    from tests.critic_real_pairs import labelled_cases  # noqa: PLC0415 — the set's cases

    # the three cases the tests below judge: loading all 41 photos costs ~6 s of CPU
    return {c.id: c for c in labelled_cases({"aitzgorri__sky", "lake_hill__sky",
                                             "picture_0b__fig", "gc_petra__sky"})
            if c.split == "tune"}


@pytest.fixture(scope="module")
def skies(labelled):
    return {k: labelled[k] for k in ("aitzgorri__sky", "lake_hill__sky", "gc_petra__sky")}


def _extent(case, words, used, *, right=False):
    from agent.brain.extent import extent_checks  # noqa: PLC0415 — the check itself
    from agent.brain.planner import get_planner  # noqa: PLC0415 — the words' action

    image = photo(case.photo)
    action = get_planner(name="rules").plan(words, has_mask=True, image_size=(
        image.shape[1], image.shape[0])).actions[0]
    return extent_checks(image, _edit(image, words, used, right=right), action, used)


def test_a_sky_that_takes_the_ridge_below_it_fails(skies):
    sky = skies["aitzgorri__sky"]          # a sky meeting a mountain ridge
    ok = _extent(sky, "make the sky darker", sky.mask)
    grown = _extent(sky, "make the sky darker", wrong_mask(sky.mask, "grown"))
    assert ok.checks == {"extent": True, "one_region": True}, ok.fix
    assert grown.checks["extent"] is False and grown.fix


def test_a_sky_moved_onto_the_lake_below_fails(skies):
    sky = skies["lake_hill__sky"]          # a sky above a lake of similar blue
    ok = _extent(sky, "make the sky brighter", sky.mask)
    moved = _extent(sky, "make the sky brighter", wrong_mask(sky.mask, "moved"))
    assert all(ok.checks.values()), ok.fix
    assert moved.checks["one_region"] is False and moved.checks["extent"] is False
    assert any("not sky" in f for f in moved.fix)


def test_a_deeper_blue_must_not_drive_saturation_to_its_limit(skies):
    sky = skies["lake_hill__sky"]
    words = "make the sky a deeper blue"
    right = _extent(sky, words, sky.mask, right=True)       # more colour, a little darker
    limit = _extent(sky, words, sky.mask)                   # the named blue at full strength
    assert right.checks["relative_size"] is True
    assert limit.checks["relative_size"] is False
    # the named blue painted in its Oklab shades (wave 30) drives few pixels to the HSV
    # limit (0.1 %; CIE Lab's shades drove more than 10 %): the colour strength it adds
    # is what tells it from a deeper blue
    assert right.measures["saturated_new_share"] <= 0.1
    assert limit.measures["chroma_jump"] > 30 > 4 > right.measures["chroma_jump"]
    assert any("a new colour painted over it" in f or "full saturation" in f
               for f in limit.fix)


def test_blue_painted_over_a_blue_sky_is_no_deeper_blue(skies):
    """A sky already blue (C* about 44): blue painted at full strength doubles its colour
    strength and drives no pixel to the HSV limit; until wave 30 it passed as "a deeper
    blue" (the rise was held against C* + 30). A strong relative word stays within the
    size rule."""
    sky = skies["gc_petra__sky"]
    limit = _extent(sky, "make the sky a deeper blue", sky.mask)
    assert limit.checks["relative_size"] is False, limit.measures
    vivid = _extent(sky, "make the sky much more vivid", sky.mask)   # saturation +0.5
    assert vivid.checks["relative_size"] is True, vivid.measures
    assert vivid.measures["chroma_jump"] > 12                  # it did add colour (20.5)


def test_a_half_mask_cut_straight_through_a_fig_fails_and_the_whole_fig_passes(labelled):
    fig = labelled["picture_0b__fig"]                        # a halved fig in a bowl
    ok = _extent(fig, "make the fig brighter", fig.mask)
    half = _extent(fig, "make the fig brighter", wrong_mask(fig.mask, "half"))
    # the cut runs through the fig's seeds and flesh: no edge in the photo along it
    assert half.checks["extent"] is False and half.measures["extent_straight_cut"] > 0.12
    assert any("runs straight through" in f for f in half.fix)
    assert ok.checks["extent"] is True and ok.measures["extent_straight_cut"] == 0.0, ok.fix
