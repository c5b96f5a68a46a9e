"""The critic's extent rule of wave 26 on the real tune photos that showed it (issue 32,
part 4).

A sky ends on a skyline, a cloud's edge or the frame, never in open sky. Half a sky, cut
on a straight line through open sky, passed where that line is short against the area
(the Colosseum's: from the top of the frame down to the arena's rim, 36 px at the
critic's work size; the helicopter's: from the top down to the rotor; the lighthouse's:
across the sky beside the tower, a horizontal cut): the photo across it is flat (0.5-1.7
ΔE) and the two sides are the same blue. Such a stretch of border is a cut
(``agent.brain.extent_lines.flat_cut``); the true skies of the same photos, whose borders
run along the photo's edges, still pass.

Photos: the labelled real set at ``critic_real_pairs.SIDE``; only the extent checks run.
"""

from __future__ import annotations

import pytest

from tests.critic_real_pairs import extent_of, labelled_by_id, wrong_mask

IDS = {"gc_colosseum__sky", "jz_helicopter__sky", "tux_lighthouse__sky"}


@pytest.fixture(scope="module")
def cases():
    return labelled_by_id(IDS)


@pytest.mark.parametrize("case_id", sorted(IDS))
def test_half_a_sky_cut_across_open_sky_fails(cases, case_id):
    sky = cases[case_id]
    half = extent_of(sky, "make the sky darker", wrong_mask(sky.mask, "half"))
    assert half.checks["extent"] is False, half.measures
    assert half.measures["extent_flat_cut"] > 0
    assert any("goes on past it" in f for f in half.fix), half.fix


@pytest.mark.parametrize("case_id", sorted(IDS))
def test_the_whole_sky_still_passes(cases, case_id):
    sky = cases[case_id]
    for words in ("make the sky darker", "make the sky brighter"):
        ok = extent_of(sky, words, sky.mask)
        assert ok.checks["extent"] is True, (words, ok.fix, ok.measures)
        assert ok.measures["extent_flat_cut"] == 0, ok.measures
