"""The critic's own reading of an edit's extent on real photographs (issue 32, part 4).

Wave 11: a half edit cut along a faint line inside the thing (a fruit's segment wall)
fails, the whole thing passes; a mask grown past a flower onto the grass around it fails
where the flower's own outline lies well inside the edited area; the agent's own removal of
a dark dog on dark ground passes (its outline peaks twice as high as the ground beside it).

Wave 12: a half edit cut straight through a textured thing fails where the photo's fine
change is as strong on both sides of the line (the same stuff goes on past it); a tone
change aimed at stuff already at its limit (white pins made brighter) is still judged by
the area it was aimed at; a thing thinner than the reading beside its border (a beach
umbrella's ribs and pole) is not read as cut along it.

Photos: the labelled real set (``eval/data/realphotos``) at ``critic_real_pairs.SIDE``;
only the extent checks run (no detector), so each case costs well under a second.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.critic_real_pairs import extent_of, labelled_by_id, photo, wrong_mask

IDS = {
    "circuit_board__pins",
    "citrus_fruits__lime_middle",
    "citrus_fruits__orange_bottom",
    "clouds_beach__umbrella",
    "dogs_under_tree__dog_left",
    "flowers__pink_centre",
}


@pytest.fixture(scope="module")
def cases():
    return labelled_by_id(IDS)


def test_half_a_lime_cut_along_a_segment_wall_fails_and_the_whole_lime_passes(cases):
    """The cut runs along a faint wall between two segments: the photo peaks a little
    on the line, but both sides of it are the same lime flesh."""
    lime = cases["citrus_fruits__lime_middle"]   # a lime slice among citrus slices
    half = extent_of(lime, "make the lime slice brighter", wrong_mask(lime.mask, "half"))
    assert half.checks["extent"] is False, half.measures
    assert any("runs straight through" in f for f in half.fix)
    ok = extent_of(lime, "make the lime slice brighter", lime.mask)
    assert ok.checks["extent"] is True, ok.fix


def test_a_flower_grown_onto_the_grass_fails_where_its_outline_lies_well_inside(cases):
    """The grown border runs through grass blades (texture on both sides, so the border
    alone reads as edges here and there); the flower's own outline, a third of the way
    in, follows the photo's edges all round."""
    flower = cases["flowers__pink_centre"]   # a pink flower among grass and flowers
    grown = extent_of(flower, "make the pink flower brighter", wrong_mask(flower.mask,
                                                                         "grown"))
    assert grown.checks["extent"] is False, grown.measures
    assert any("ends inside the edited area" in f for f in grown.fix)
    ok = extent_of(flower, "make the pink flower brighter", flower.mask)
    assert ok.checks["extent"] is True, ok.fix


def test_the_agents_removal_of_a_dark_dog_on_dark_ground_passes(cases, monkeypatch):
    """The localiser's mask of the dog (IoU 0.87 with the true one), removed by the
    executor: the border inside the mask's grown edge runs straight along the dog's back,
    where both sides are dark (3-9 px out) but the outline peaks twice as high as the
    ground beside it. It was read as a cut and the CLI asked instead of removing. (The
    mask as it was then: since wave 16 the strip it shares with the other dog leaves it,
    ``assurance.SHARED``, and that straight cut is rightly read as one.)"""
    from agent.brain.extent import extent_checks  # noqa: PLC0415 — the check itself
    from agent.brain.judge import _target  # noqa: PLC0415 — the mask as the judge grows it
    from agent.brain.planner import get_planner  # noqa: PLC0415 — the words' action
    from agent.executor import execute  # noqa: PLC0415 — the agent's own removal
    from pipelines.localizers import (  # noqa: PLC0415 — its own mask, the look-alikes' strip
        PerceptionLocalizer,
        assurance,
    )

    monkeypatch.setattr(assurance, "SHARED", 2.0)       # no outline shares twice itself

    dog = cases["dogs_under_tree__dog_left"]   # two dark dogs in a tree's shade
    image = photo(dog.photo)
    found = np.asarray(PerceptionLocalizer().locate(image, "dog on the left").masks[0].mask,
                       bool)
    assert (found & dog.mask).sum() / (found | dog.mask).sum() > 0.8   # the right dog
    action = get_planner(name="rules").plan("remove the dog on the left", has_mask=True,
                                            image_size=(image.shape[1],
                                                        image.shape[0])).actions[0]
    after = execute(image, action, found).paste(image)
    judged = extent_checks(image, after, action, _target(image, action, found, None))
    assert judged.checks["extent"] is True, judged.fix

def test_half_an_orange_slice_cut_through_its_flesh_fails_and_the_whole_slice_passes(cases):
    """The cut runs across the slice's segments: the line peaks a little where it meets a
    segment wall, but the flesh's fine texture is as strong on both sides of it."""
    orange = cases["citrus_fruits__orange_bottom"]   # citrus slices side by side
    words = "make the orange slice at the bottom in the middle brighter"
    half = extent_of(orange, words, wrong_mask(orange.mask, "half"))
    assert half.checks["extent"] is False, half.measures
    assert any("runs straight through" in f for f in half.fix)
    ok = extent_of(orange, words, orange.mask)
    assert ok.checks["extent"] is True, ok.fix


def test_white_pins_made_brighter_through_half_their_mask_fail(cases):
    """The pins are near white: "brighter" changes little more than the feather's rim, so
    the change alone says nothing; the area the edit was aimed at is cut down the middle
    of a pin. The whole row of pins passes."""
    pins = cases["circuit_board__pins"]   # a connector's pins on a circuit board
    words = "make the connector pins on the left edge brighter"
    half = extent_of(pins, words, wrong_mask(pins.mask, "half"))
    assert half.checks.get("extent") is False, (half.measures, half.undecided)
    ok = extent_of(pins, words, pins.mask)
    assert ok.checks["extent"] is True, ok.fix


def test_a_thin_beach_umbrella_made_brighter_on_its_own_outline_passes(cases):
    """At the critic's work size the umbrella's canopy and pole are a few pixels wide:
    lines 5-9 px in from its border lie on the sand and sky past it, so its straight
    stretches (the ribs, the pole) read as the same stuff on both sides. They are no
    evidence of a cut; the edit on the hand-drawn outline passes."""
    umbrella = cases["clouds_beach__umbrella"]   # a small umbrella on a beach
    for words in ("make the umbrella brighter", "make the umbrella darker"):
        ok = extent_of(umbrella, words, umbrella.mask)
        assert ok.checks["extent"] is True, (words, ok.fix)


def test_bluer_on_a_grey_sky_is_retried_until_it_shows() -> None:
    """A pale overcast sky (kpa_cold_water, a new colour tune photo, 0.5 MP) made "bluer"
    by the planned saturation step rose 4.4 chroma levels, mostly where it was tinted
    already, and its colour moved ΔE 1.6 on average: nothing to see, and the critic said
    10/10. The change must move the colour visibly (ΔE 2, about one just-noticeable
    difference); the critic asks for more and the CLI's second attempt shows it, within
    the size a relative word allows."""
    from eval import realset
    from eval.realset_edits import run_edit

    case = realset.case("kpa_cold_water__sky")
    done = run_edit(case, "make the sky bluer")
    assert done.exit == 0 and done.verdict == "right", done.why
