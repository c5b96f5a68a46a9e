"""The critic's own reading of an edit's extent on real photographs, wave 12 (issue 32,
part 4): a half edit cut straight through a textured thing fails where the photo's fine
change is as strong on both sides of the line (the same stuff goes on past it); a tone
change aimed at stuff already at its limit (white pins made brighter) is still judged by
the area it was aimed at; a thing thinner than the reading beside its border (a beach
umbrella's ribs and pole) is not read as cut along it.

Photos: the labelled real set (``eval/data/realphotos``) at ``critic_real_pairs.SIDE``;
only the extent checks run (no detector), so each case costs well under a second.
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import _edit, labelled_cases, photo, wrong_mask

IDS = {"citrus_fruits__orange_bottom", "circuit_board__pins", "clouds_beach__umbrella"}


@pytest.fixture(scope="module")
def cases():
    found = {c.id: c for c in labelled_cases(IDS)}
    assert set(found) == IDS   # the labelled set ships these cases
    return found


def _extent(case, words, used):
    """The extent checks on an edit of ``words`` made through ``used`` (the agent's own
    planner and executor)."""
    from agent.brain.extent import extent_checks  # noqa: PLC0415 — the check itself
    from agent.brain.planner import get_planner  # noqa: PLC0415 — the words' action

    image = photo(case.photo)
    action = get_planner(name="rules").plan(words, has_mask=True, image_size=(
        image.shape[1], image.shape[0])).actions[0]
    return extent_checks(image, _edit(image, words, used, right=True), action, used)


def test_half_an_orange_slice_cut_through_its_flesh_fails_and_the_whole_slice_passes(cases):
    """The cut runs across the slice's segments: the line peaks a little where it meets a
    segment wall, but the flesh's fine texture is as strong on both sides of it."""
    orange = cases["citrus_fruits__orange_bottom"]   # citrus slices side by side
    words = "make the orange slice at the bottom in the middle brighter"
    half = _extent(orange, words, wrong_mask(orange.mask, "half"))
    assert half.checks["extent"] is False, half.measures
    assert any("runs straight through" in f for f in half.fix)
    ok = _extent(orange, words, orange.mask)
    assert ok.checks["extent"] is True, ok.fix


def test_white_pins_made_brighter_through_half_their_mask_fail(cases):
    """The pins are near white: "brighter" changes little more than the feather's rim, so
    the change alone says nothing; the area the edit was aimed at is cut down the middle
    of a pin. The whole row of pins passes."""
    pins = cases["circuit_board__pins"]   # a connector's pins on a circuit board
    words = "make the connector pins on the left edge brighter"
    half = _extent(pins, words, wrong_mask(pins.mask, "half"))
    assert half.checks.get("extent") is False, (half.measures, half.undecided)
    ok = _extent(pins, words, pins.mask)
    assert ok.checks["extent"] is True, ok.fix


def test_a_thin_beach_umbrella_made_brighter_on_its_own_outline_passes(cases):
    """At the critic's work size the umbrella's canopy and pole are a few pixels wide:
    lines 5-9 px in from its border lie on the sand and sky past it, so its straight
    stretches (the ribs, the pole) read as the same stuff on both sides. They are no
    evidence of a cut; the edit on the hand-drawn outline passes."""
    umbrella = cases["clouds_beach__umbrella"]   # a small umbrella on a beach
    for words in ("make the umbrella brighter", "make the umbrella darker"):
        ok = _extent(umbrella, words, umbrella.mask)
        assert ok.checks["extent"] is True, (words, ok.fix)
