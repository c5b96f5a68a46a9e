"""Issue 32, class "sky_boundary": the sky reaches its horizon.

The smoothness test that finds the sky blurs the gradient, so the region stopped a few
work pixels short of the hills (14-18 px at native size on the real tune photos: boundary
F 0.01 at 2 px). ``sky.reach_edge`` grows it back while the colour stays the sky's. On a
real photo (aitzgorri, lomiri-wallpapers-16.04, tune split, its hand-drawn sky mask) at
1280 px: the boundary F-score rises far, and the sky does not spill onto the ridge.
"""

from __future__ import annotations

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import sky

SIDE = 1280


def test_the_sky_reaches_the_ridge_and_stops_there(monkeypatch) -> None:
    small, truth = realset.case_at("aitzgorri__sky", SIDE)
    grown = sky.find_sky(small)
    monkeypatch.setattr(sky, "reach_edge", lambda mask, rgb: mask)
    short = sky.find_sky(small)
    assert grown.status == short.status == "resolved"
    f_grown = realset.boundary_f(grown.union(), truth)
    f_short = realset.boundary_f(short.union(), truth)
    assert f_grown >= f_short + 0.3, (f_grown, f_short)
    spill = grown.union() & ~truth
    assert spill.sum() <= 0.01 * truth.sum()
    assert mask_iou(grown.union(), truth) >= mask_iou(short.union(), truth)
