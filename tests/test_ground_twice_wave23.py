"""Issue 32: "the grass" read twice. The ground along the bottom was read column by column
from the bottom band's colour; on Chambord's lawn the pale seed heads in front are not the
colour of the grass behind them, and the ground stopped along a ragged line in the middle
of the lawn (IoU 0.28). Whether that answer was edited hung on the skyline: on the photo
as shot it read as unclear and was asked; mirrored, it read as clear and "the grass" was
edited, reported done. ``ground.grown_ground`` reads the ground a second way (the colours
of the bottom band's spread, connected to it); where the two readings disagree, the
answer is a question offering both, and the second is the lawn."""

from __future__ import annotations

import numpy as np

from eval import realphotos, realset
from pipelines.localizers import PerceptionLocalizer
from pipelines.localizers.ground import agreement, ground, grown_ground


def _case(case_id: str) -> realset.RealCase:
    return realset.case(case_id)


def test_a_lawn_cut_through_its_middle_is_asked_with_the_lawn_offered() -> None:
    """Chambord's lawn, taken whole in front of its straight far edge since wave 37
    (``tests/test_ground_far_edge_wave37.py``), is no longer asked; the Victoria Memorial's
    lawn is: the column reading climbs onto the hedge behind it (0.71), the second reading
    is the lawn, and the hedge's ragged foot is no straight edge."""
    case = _case("gc_victoria_memorial__grass")
    image, truth, phrase = realset.printed(realphotos.load(case.photo), case.truth(),
                                           case.phrase, "flip")
    found = PerceptionLocalizer().locate(image, phrase)
    assert found.status == "ambiguous", found.reason
    assert "agrees only" in found.reason
    ious = [realset.mask_iou(c.mask > 0.5, truth) for c in found.masks]
    assert ious[0] < 0.8 and max(ious) >= 0.85, ious


def test_a_meadow_both_readings_agree_on_is_still_edited() -> None:
    photo, truth = realset.case_shot("aitzgorri__meadow")
    found = PerceptionLocalizer().locate(photo, "the meadow")
    assert found.status == "resolved", found.reason
    assert realset.mask_iou(found.masks[0].mask > 0.5, truth) >= 0.95


def test_the_readings_of_a_plain_ground() -> None:
    """Mechanics on a plain two-band picture: grass under a sky. Both readings take the
    grass; a grey square standing in it is no ground for either."""
    small = np.zeros((100, 160, 3), np.uint8)
    small[:40] = (120, 170, 230)
    small[40:] = (60, 140, 50)
    small[60:80, 70:90] = (128, 128, 128)
    land = np.zeros((100, 160), bool)
    land[40:] = True
    first, second = ground(small, land), grown_ground(small, land)
    assert not second[60:80, 70:90].any() and second[85:].all() and second[42:58].all()
    assert agreement(first, second) >= 0.85
    assert agreement(np.zeros_like(land), np.zeros_like(land)) == 1.0
