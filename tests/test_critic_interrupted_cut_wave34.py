"""A half mask's cut interrupted by a thing in front is one cut (issue 32, part 4; wave 34).

The half of the grass a sheep stands on, or of a floor a dog stands on, is cut by one
straight line through the grass above the sheep and again below it. The critic read each
piece of that line on its own (``agent.brain.extent_lines.smooth_cut``): each was under
the bar of a straight cut through one region (0.35 and 0.28 of the area's radius against
0.6), and the half passed, said done. Stretches on one line with something else between
them (most of the line across the gap lies outside the edited area) are now one cut;
neighbouring stretches along one bending outline (a lizard's back) are not joined.

Photos: the labelled real set (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import Case, judged, labelled_by_id, wrong_mask

IDS = {"gc_sheep__grass", "gc_komodo_dragon__lizard"}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id(IDS)


def test_the_half_of_the_grass_cut_above_and_below_the_sheep_fails(cases):
    case = cases["gc_sheep__grass"]
    half = judged(case, "make the grass brighter", wrong_mask(case.mask, "half"), right=False)
    assert half["passed"] is False, half["reasons"]
    assert any("straight line in the middle of a smooth region or of one colour" in r
               for r in half["reasons"]), half["reasons"]


@pytest.mark.parametrize("case_id, words", [
    ("gc_sheep__grass", "make the grass brighter"),
    ("gc_komodo_dragon__lizard", "make the lizard brighter"),   # two pieces of its back
])
def test_the_right_edit_still_passes(cases, case_id, words):
    verdict = judged(cases[case_id], words, cases[case_id].mask, right=True)
    assert verdict["passed"] is True, verdict["reasons"]
