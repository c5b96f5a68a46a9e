"""A recolour turns the whole named thing the new colour, however many colours it had
(wave 29, issue 32 part 4: correct edits the critic failed on their own colour).

On the real tune photos, inside the hand-drawn masks of the labelled set, "make the bird
blue" left a kookaburra's white head and belly white and "make the train blue" left the
sunlit half of a 35-px train grey: the recolour unmixed a rim as deep as a removal grows
(a quarter radius, 42 px on the bird) into "object" and "background", against object
colours read from across the thing, so whole parts of it counted as background
(``objects.unmix_core``: the rim is now the grown edge's). The critic then measured a
colour 11-13 ΔE2000 from blue and failed a correct edit.

Photos: the labelled real set at ``critic_real_pairs.SIDE``, edited by the agent's own
planner and executor inside the true mask.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from pipelines.color import delta_e2000, linear_to_oklab, shade_ramp, srgb_to_linear
from pipelines.operations.colour import _ramp_at
from pipelines.operations.measures import hue_distance, lab, oklab_hue
from tests.critic_real_pairs import _edit, labelled_by_id, photo

CASES = {"jz_kookaburra__bird": "make the bird blue", "city_rail__train": "make the train blue"}
BLUE_OK_HUE = oklab_hue(np.array([0, 0, 255], np.uint8))


@pytest.fixture(scope="module")
def edits():
    found = labelled_by_id(set(CASES))
    out = {}
    for cid, words in CASES.items():
        case = found[cid]
        before = photo(case.photo)
        out[cid] = (before, _edit(before, words, case.mask, right=True), case.mask)
    return out


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_the_whole_thing_reads_blue(edits, case_id):
    before, after, mask = edits[case_id]
    changed = np.abs(after.astype(int) - before.astype(int)).max(axis=-1) > 6
    assert changed[mask].mean() >= 0.85          # was 0.61 (bird) and 0.64 (train)
    la = lab(after)[mask]
    # hues are read in Oklab, where a light blue keeps blue's hue (CIE Lab's turns violet
    # as it lightens, and so did the recolour's shades until wave 30)
    ok = linear_to_oklab(srgb_to_linear(after[mask].astype(np.float32) / 255.0))
    hues = np.degrees(np.arctan2(ok[:, 2], ok[:, 1])) % 360
    off = np.minimum(np.abs(hues - BLUE_OK_HUE), 360 - np.abs(hues - BLUE_OK_HUE))
    # coloured and blue (the rest: white-ish tints, near-black shadows)
    assert ((np.hypot(la[:, 1], la[:, 2]) > 15) & (off <= 25)).mean() >= 0.7
    assert hue_distance(oklab_hue(after[mask]), BLUE_OK_HUE) <= 10
    # against blue at each pixel's own lightness, as much of it as sRGB holds there:
    # three pixels in four within 10 ΔE2000 (8.7 and 8.3; was 19.6 and 36)
    ref = lab(np.round(255 * _ramp_at(la[:, 0], shade_ramp((0, 0, 255)))).astype(
        np.uint8)[None])[0]
    assert np.percentile(delta_e2000(la.astype(np.float64), ref.astype(np.float64)),
                         75) <= 10
    # the shading is kept: lightness follows the photo's
    assert np.corrcoef(lab(before)[mask][:, 0], la[:, 0])[0, 1] > 0.9


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_nothing_beyond_the_grown_and_feathered_edge_moves(edits, case_id):
    before, after, mask = edits[case_id]
    # the executor grows a recolour's mask by EDGE_BAND of the long side (4 px here); the
    # edge pixels it holds are unmixed, nothing farther changes
    reach = 5
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1,) * 2)
    near = cv2.dilate(mask.astype(np.uint8), kernel) > 0
    assert np.array_equal(after[~near], before[~near])


WHITE_FUR = {"gc_goat__goat": "make the goat blue", "gc_panda__panda": "make the panda blue"}


@pytest.mark.parametrize("case_id", sorted(WHITE_FUR))
def test_white_fur_turns_light_blue_not_lavender(case_id):
    """Wave 30: the shades of a recolour keep the named colour's Oklab hue at every
    lightness. Built on CIE Lab's constant hue, blue turned lavender as it lightened: the
    goat's and the panda's white fur came out (224, 203, 255)-like, 24-28° of Oklab hue
    from blue, and the critic failed the edit (10.3-10.8 ΔE2000)."""
    case = labelled_by_id({case_id})[case_id]
    before = photo(case.photo)
    after = _edit(before, WHITE_FUR[case_id], case.mask, right=True)
    light = case.mask & (lab(before)[..., 0] > 75)           # the white fur
    assert light.sum() > 2000
    assert hue_distance(oklab_hue(after[light]), BLUE_OK_HUE) <= 8
    # light blue, not grey: the fur took colour, and kept its shading
    assert np.hypot(*lab(after)[light][:, 1:].mean(axis=0)) > 20
    assert np.corrcoef(lab(before)[light][:, 0], lab(after)[light][:, 0])[0, 1] > 0.7
