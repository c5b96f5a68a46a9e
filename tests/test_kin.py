"""``kin.reached_into_kin``: a neighbour of the named kind inside the named thing's box
that the outline covers in part while it sticks out of it is a neighbour taken; a part of
the thing the detector also saw (inside the outline) or a thing of another kind is not.
Mechanics on drawn masks (the real case: ``test_recolour_real``)."""

from __future__ import annotations

import numpy as np

from pipelines.localizers.kin import reached_into_kin
from pipelines.perception.detectors import Detection


def _outline() -> np.ndarray:
    mask = np.zeros((200, 300), bool)
    mask[40:190, 60:280] = True          # the named thing, its flank over x 60..90
    return mask


def test_a_neighbour_sticking_out_of_the_outline_is_named() -> None:
    seen = [Detection((0, 50, 90, 190), 0.6, "bus")]
    note = reached_into_kin(_outline(), (0, 20, 290, 200), "bus", seen)
    assert "another bus" in note and "0.60" in note


def test_a_part_of_the_thing_or_another_kind_or_a_weak_one_is_not() -> None:
    box, flank = (0, 20, 290, 200), (0, 50, 90, 190)
    part = [Detection((70, 60, 150, 180), 0.7, "bus")]
    assert reached_into_kin(_outline(), box, "bus", part) == ""
    assert reached_into_kin(_outline(), box, "bus", [Detection(flank, 0.6, "car")]) == ""
    assert reached_into_kin(_outline(), box, "bus", [Detection(flank, 0.2, "bus")]) == ""
    untouched = _outline()
    untouched[:, :100] = False           # the outline stops before the neighbour
    assert reached_into_kin(untouched, box, "bus", [Detection(flank, 0.6, "bus")]) == ""
