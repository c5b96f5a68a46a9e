"""A man holding a cue out is covered by his correct edit; halves still are not (issue 32;
wave 37).

The critic's ``covers`` check asks that the change span most of the one instance found
again by the detector. Its box is widened across the thing by an arm held out or a thing
held (the pool player's cue): the correct edit of the man spans 0.97 of his box's height
and 0.75 of its width, and failed as "only part of 'man on the right' changed". The
change must now span ``COVERS`` of the box's long side and ``COVERS_ACROSS`` of its short
side: the halves (cut across a person's height, or across the toucan's box, 0.727) still
fail.

Photos: the labelled real set (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import Case, judged, labelled_by_id, wrong_mask

POOL, RED, TOUCAN = "kpa_pool__man_right", "kpa_pool__man_red", "gc_toucan__bird"


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id({POOL, RED, TOUCAN})


def test_the_man_holding_a_cue_out_is_covered_by_his_correct_edit(cases):
    verdict = judged(cases[POOL], "make the man on the right darker", cases[POOL].mask,
                     right=True)
    assert verdict["passed"] is True, verdict["reasons"]
    step = verdict["steps"][0]
    assert step["checks"]["covers"] is True
    assert step["measures"]["change_spans_across"] < 0.78   # the width his cue adds


@pytest.mark.parametrize("case_id, words", [
    (POOL, "make the man on the right brighter"),
    (RED, "make the man in the red shirt brighter"),
    (TOUCAN, "make the bird brighter"),
])
def test_wrong_extents_still_fail(cases, case_id, words):
    case = cases[case_id]
    kind = "moved" if case_id == POOL else "half"
    verdict = judged(case, words, wrong_mask(case.mask, kind), right=False)
    assert verdict["passed"] is False, verdict["reasons"]
    if kind == "half":   # the half is caught by the covers check itself
        assert verdict["steps"][0]["checks"]["covers"] is False, verdict["reasons"]
