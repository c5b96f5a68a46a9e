"""A layer's faint border is the end of the layer, a half's cut is not (issue 32, part 4; wave 36).

The Golden Temple's pool ends on the walkway's foot, the helicopter photo's sea on the
quay's: level lines across the frame where one layer of the photo meets the next, faint
in haze, with the labelled border 3-5 work px off the edge. Read on the line alone they
showed no edge, so the correct edits of the water and the sea failed as "runs straight
through ... a part of it cut off". A layer's border has an edge a few px off the
stretch all along it, and that edge does not run on past the edited area; a half mask's
level border has the same edge, but it runs on past the cut with none of the layer
edited, and the grown mask's level border lies in the next layer, with no edge near it
(``agent.brain.extent_layers``).

Photos: the labelled real set (``eval/data/realphotos``, tune split) at
``critic_real_pairs.SIDE``; the edits are the bench's (``bench/critic_real.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from agent.brain.extent import _filled, _fit
from agent.brain.extent_lines import straight_stretches
from agent.brain.independent import work_copy
from tests.critic_real_pairs import Case, extent_of, judged, labelled_by_id, photo, wrong_mask

IDS = {"gc_golden_temple__water", "jz_helicopter__sea"}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return labelled_by_id(IDS)


def _level(case: Case, mask: np.ndarray) -> list:
    small = work_copy(photo(case.photo), 512)
    region = _filled(_fit(mask, small.shape[:2]))
    return [s for s in straight_stretches(small, region) if not s.steep and s.radii >= 1.0]


@pytest.mark.parametrize("case_id, words", [
    ("gc_golden_temple__water", "make the water brighter"),
    ("jz_helicopter__sea", "make the sea darker"),
])
def test_the_right_edit_of_a_layer_passes(cases, case_id, words):
    verdict = judged(cases[case_id], words, cases[case_id].mask, right=True)
    assert verdict["passed"] is True, verdict["reasons"]


@pytest.mark.parametrize("kind", ["half", "grown", "moved"])
def test_the_wrong_extents_of_the_pool_still_fail(cases, kind):
    case = cases["gc_golden_temple__water"]
    verdict = judged(case, "make the water brighter", wrong_mask(case.mask, kind), right=False)
    assert verdict["passed"] is False, verdict["reasons"]


def test_the_walkway_line_ends_the_whole_pool_not_its_half(cases):
    case = cases["gc_golden_temple__water"]
    whole = _level(case, case.mask)
    assert whole and all(s.layer for s in whole)
    # the half's level border lies on the same line, which runs on past the cut
    half = _level(case, wrong_mask(case.mask, "half"))
    assert half and not any(s.layer and s.no_edge for s in half)
    assert any(not s.layer for s in half)
    # the grown pool's level border lies in the walkway and the buildings: no layer there
    grown = _level(case, wrong_mask(case.mask, "grown"))
    assert grown and not any(s.layer for s in grown)


def test_greenish_water_made_bluer_by_saturation_is_not_bluer(cases):
    # once its shore line no longer failed the pool's edit, "bluer" done as more
    # saturation (the water turns greener) was said done on the edits bench
    case = cases["gc_golden_temple__water"]
    verdict = judged(case, "make the water bluer", case.mask, right=False)
    assert verdict["passed"] is False, verdict["reasons"]
    assert any("lead fell" in r for r in verdict["reasons"]), verdict["reasons"]


def test_a_blue_sky_made_bluer_by_saturation_is_bluer():
    case = labelled_by_id({"gc_chichen_itza__sky"})["gc_chichen_itza__sky"]
    found = extent_of(case, "make the sky bluer", case.mask)
    assert found.measures["named_colour_rise"] > 0, found.measures
    assert found.checks.get("relative_visible", True) is True, found.fix
