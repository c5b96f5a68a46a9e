"""Open water may fill the frame as a sky does (issue 32, part 4; wave 33).

The critic's plausible-size rule fails a change covering 85 % of the frame for a named
thing (95 % for a sky). The narwhals swim in a sea that fills 90-94 % of the photo: its
correct edits failed "far more than 'water'". Open water seen from above it is stuff,
not an instance of a thing, and reaches the frame's edges on every side as a sky may:
"the water", "the sea", "the ocean" now take the sky's bar. The whole frame is still
more than the water (the narwhals are not), and a grown sea is still failed by the
straight cut it runs into the shore with.

Photos: the labelled real set (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import Case, judged, labelled_by_id, wrong_mask

IDS = {"gc_narwhals__water", "kpa_skagen__sea"}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id(IDS)


@pytest.mark.parametrize("words", ["make the water brighter", "make the water blue"])
def test_a_sea_that_fills_most_of_the_frame_passes(cases, words):
    case = cases["gc_narwhals__water"]
    assert case.mask.mean() > 0.85          # the point: more than a thing's bar
    verdict = judged(case, words, case.mask, right=True)
    assert verdict["passed"] is True, verdict["reasons"]


def test_the_whole_frame_is_still_more_than_the_water(cases):
    case = cases["gc_narwhals__water"]
    verdict = judged(case, "make the water brighter", wrong_mask(case.mask, "whole frame"),
                     right=False)
    assert verdict["passed"] is False
    assert any("far more than 'water'" in r for r in verdict["reasons"]), verdict["reasons"]


def test_a_sea_grown_onto_the_shore_still_fails(cases):
    case = cases["kpa_skagen__sea"]
    verdict = judged(case, "make the sea brighter", wrong_mask(case.mask, "grown"),
                     right=False)
    assert verdict["passed"] is False, verdict["reasons"]
