"""Issue 32, wave 37: a lawn's straight far edge (``ground.edged_ground``), and the ground
that fills the frame (``ground.frame_ground``).

Chambord's lawn has pale seed heads and a strip of weeds in front of the grass: the column
reading stopped at the weeds and the colour-spread reading left them out, so the two
disagreed (0.34) and "the grass" was asked although its far edge, the foot of the
terrace, is a straight line across the photo. All that lies in front of that line is the
lawn, and it is found. A lawn cut by the ragged foot of a hedge (Victoria Memorial) has no
straight edge and is still asked; a photo whose ground is no grass (a river bank under a
bridge) is still not edited as grass.

A rabbit on a lawn seen from above has no sky and no skyline: the skyline read from the
colours of the top and bottom rows cut the lawn in two (IoU 0.23, asked). The lawn read
from the bottom band over the whole frame reaches the top band, and read from the top band
it is the same lawn (0.87): it fills the frame and is found. A gorilla's grass, with a bush
and a log along the top, does not reach the top and is asked as before."""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from pipelines.localizers.ground import edged_ground, frame_ground, straightness
from pipelines.localizers.phrases import parse_phrase
from pipelines.localizers.scene import find_region

#: the long side the photos are read at (the scene reads a 256 px copy of it anyway)
SIDE = 800


def _grass(case_id: str) -> tuple:
    """"the grass" found on a small copy of the case's photo, and the truth at that size."""
    image, truth = realset.case_at(case_id, SIDE)
    return find_region(image, "ground", parse_phrase("the grass"), "grass"), truth


def test_a_lawn_in_front_of_a_straight_far_edge_is_found_whole() -> None:
    found, truth = _grass("gc_chambord__grass")
    assert found.status == "resolved", found.reason
    assert realset.mask_iou(found.union(), truth) >= 0.95
    assert "straight far edge" in found.reason


@pytest.mark.parametrize("case_id", ["gc_victoria_memorial__grass", "bridge__grass"])
def test_a_ragged_edge_or_no_grass_is_still_asked(case_id: str) -> None:
    found, _ = _grass(case_id)
    assert found.status != "resolved", found.reason
    assert "straight far edge" not in found.reason


def test_the_far_edge_mechanics() -> None:
    """On a plain picture: a lawn whose second reading ends at a straight line is taken
    whole in front of it; a column reading that climbs past the line gives no edge."""
    land = np.zeros((100, 160), bool)
    land[40:] = True
    second = np.zeros_like(land)
    second[60:] = True
    second[85:95, 20:60] = False                    # weeds the colour reading left out
    first = np.zeros_like(land)
    first[90:] = True
    assert straightness(second) < 0.01
    front = edged_ground(first, second, land)
    assert front is not None and front[60:].all() and not front[:60].any()
    first[45:, :30] = True                          # climbs onto a hedge past the edge
    assert edged_ground(first, second, land) is None
    ragged = second.copy()
    ragged[50:60, ::8] = True                       # a ragged foot: no straight edge
    assert straightness(ragged) > 0.015 and edged_ground(first, ragged, land) is None


def test_a_lawn_that_fills_the_frame_is_found_round_the_rabbit() -> None:
    found, truth = _grass("kpa_spiff__grass")
    assert found.status == "resolved", found.reason
    assert realset.mask_iou(found.union(), truth) >= 0.85
    assert "fills the frame" in found.reason


def test_grass_under_a_bush_and_a_log_does_not_fill_the_frame() -> None:
    found, _ = _grass("jz_gorilla__grass")
    assert found.status != "resolved", found.reason
    assert "fills the frame" not in found.reason


def test_the_frame_filling_mechanics() -> None:
    """On a plain picture: grass all round a white square fills the frame, read alike from
    both edges; grass under a blue band does not reach the top."""
    small = np.zeros((100, 160, 3), np.uint8)
    small[:] = (60, 140, 50)
    small[30:70, 60:100] = (240, 240, 240)
    up, down = frame_ground(small)
    assert up[:5].all() and up[-5:].all() and not up[35:65, 65:95].any()
    assert (up == down).mean() > 0.95
    small[:40] = (120, 170, 230)
    assert frame_ground(small) is None
