"""Half edits on real photographs fail the critic (issue 32, part 4; wave 32).

A half mask cuts the named thing along a straight line through its own interior. The
critic's straight-cut reading (``agent.brain.extent_lines.smooth_cut``) failed such a cut
only through smooth stuff (the photo nearly flat across it); through a textured thing
(a cheetah's spots, a castle's stone wall) the change across the line is as strong as
beside it, so the line reads as no edge, but its share of a large thing's ragged border
stayed under the bar and the half passed, said done. Now a straight stretch with no
edge whose two sides are one colour (``FLAT_SIDES``), at least ``FLAT_PX`` long, counts
as a cut through one region too: a thing does not end on a straight line in the middle
of stuff that is the same on both sides of it.

Each case: the bench's half edit ("brighter" through ``wrong_mask(..., "half")``) fails
with that reason; the same edit through the true mask still passes.

Photos: the labelled real set (``eval/data/realphotos``) at ``critic_real_pairs.SIDE``.
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import Case, judged, labelled_by_id, wrong_mask

IDS = {"gc_cheetah__cheetah", "jz_castle__castle"}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id(IDS)


@pytest.mark.parametrize("case_id, words", [
    ("gc_cheetah__cheetah", "make the cheetah brighter"),   # only its tail and haunch
    ("jz_castle__castle", "make the castle brighter"),      # cut down its stone wall
])
def test_a_half_edit_cut_through_one_colour_fails_and_the_whole_passes(cases, case_id,
                                                                       words):
    case = cases[case_id]
    half = judged(case, words, wrong_mask(case.mask, "half"), right=False)
    assert half["passed"] is False, half["reasons"]
    assert any("straight line in the middle of a smooth region or of one colour" in r
               for r in half["reasons"]), half["reasons"]
    whole = judged(case, words, case.mask, right=True)
    assert whole["passed"] is True, whole["reasons"]
