"""Issue 32, wave 39: a grey sky read above a skyline by its colours alone
(``scene.grey_sky``, a question by design) is answered when its cut is a skyline
(``sky_grey.grey_settled``): the land under it darker than the sky right above it all along,
the cut rising and falling, the region smooth nearly all over.

Real tune photos at 768 px: the constellation's night sky over a tree (offered at IoU 0.91
and asked before) is answered; beam's storm sky over misty hills, whose cut runs over a
bank of lit mist, is still asked; an aquarium's water under its ceiling, read as a grey sky
above the visitors, is not answered."""

from __future__ import annotations

import numpy as np

from eval import realset
from pipelines.localizers.scene import any_sky
from pipelines.localizers.sky_grey import grey_settled


def _sky(case_id: str):
    image, truth = realset.case_at(case_id, 768)
    image = np.ascontiguousarray(image)
    return grey_settled(image, any_sky(image)), truth


def test_a_grey_sky_over_a_skyline_is_answered() -> None:
    found, truth = _sky("constellation__sky")
    assert found.status == "resolved", found.reason
    assert realset.mask_iou(found.masks[0].mask > 0.5, truth) >= 0.85


def test_a_grey_sky_cut_over_lit_mist_is_still_asked() -> None:
    found, truth = _sky("beam__sky")
    assert found.status == "ambiguous", found.reason
    assert found.masks[0].evidence["edge_along"] < 0.9


def test_an_aquariums_water_read_as_a_grey_sky_is_not_answered() -> None:
    found, _ = _sky("aquarium__ray")      # the photo; its case names no sky
    assert found.status != "resolved", found.reason
