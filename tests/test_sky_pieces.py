"""Issue 32: a sky cut into pieces by a bridge's cables is one sky on every print.

Darkened (a gamma of 1.25: ``bench/realset.py --edits --print gamma1.25``), the bridge
photo's sky lost the piece low on the right under two cables: "make the sky darker"
changed 81 % of it and said done. The piece's colour was compared with the whole sky
over the rows they share, mostly the deep blue high on the left; a sky pales towards
its horizon, so each row is now matched with the sky's own colour in that row.
"""

from __future__ import annotations

import numpy as np
import pytest

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import get_localizer


def _darker(rgb: np.ndarray) -> np.ndarray:
    return np.round(255 * (rgb / 255.0) ** 1.25).astype(np.uint8)


@pytest.mark.parametrize("darkened", [False, True])
def test_a_sky_cut_by_cables_is_found_whole(darkened) -> None:
    photo, truth = realset.case_at("bridge__sky", 1200)
    if darkened:
        photo = _darker(photo)
    found = get_localizer().locate(photo, "the sky")
    assert found.status == "resolved", found.reason
    assert mask_iou(found.union(), truth) >= 0.9, found.reason
    low_right = truth & (np.arange(truth.shape[1]) > 0.8 * truth.shape[1])[None, :]
    assert (found.union() & low_right).sum() > 0.9 * low_right.sum()
