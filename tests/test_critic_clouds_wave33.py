""""The clouds" are not held to a smooth sky's texture (issue 32, part 4; wave 33).

For a sky the critic fails an edit whose changed area is more than 35 % textured: a
facade, trees or ground, not sky. Clouds are the textured part of a sky: a cloud bank's
puffs and rims, and the bare branches it is seen through, read 67-73 % textured, so
the correct edits of "the clouds" failed "not sky". Texture cannot tell clouds from a
facade; that check now says "cannot decide" for them, and their extent is judged by the
border readings alone, which fail every wrong-extent cloud edit of the tune split.

Photos: the labelled real set (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import Case, judged, labelled_by_id, wrong_mask

IDS = {"jz_tree_clouds__clouds", "tux_sun_behind_clouds__clouds"}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id(IDS)


@pytest.mark.parametrize("case_id", sorted(IDS))
def test_clouds_edited_right_pass(cases, case_id):
    verdict = judged(cases[case_id], "make the clouds darker", cases[case_id].mask,
                     right=True)
    assert verdict["passed"] is True, verdict["reasons"]
    assert "one_region" in verdict["steps"][0]["undecided"]


@pytest.mark.parametrize("case_id, kind", [
    ("jz_tree_clouds__clouds", "half"), ("jz_tree_clouds__clouds", "moved"),
    ("tux_sun_behind_clouds__clouds", "half"), ("tux_sun_behind_clouds__clouds", "moved"),
])
def test_clouds_edited_through_a_wrong_extent_still_fail(cases, case_id, kind):
    case = cases[case_id]
    verdict = judged(case, "make the clouds darker", wrong_mask(case.mask, kind), right=False)
    assert verdict["passed"] is False, verdict["reasons"]
