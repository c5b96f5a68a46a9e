"""Issue 32: skies edited at 16 MP on a darker or lighter print (``bench/realset.py --edits
--upscale 16 --print gamma0.8|gamma1.25``). A sky ran a few work pixels into the land under
its horizon (a pale roof, a band of far water, the sea), past what a 16-MP edit may touch,
and "make the sky darker / bluer" was reported done. What it ran into is darker than the
sky just above it and not bluer (``sky_land.land_below``): a relative step that survives a
gamma, where the absolute brightness of "pale" does not. Each case is the tune photo (and
print) that showed it, enlarged to 16 MP as the bench enlarges it."""

from __future__ import annotations

import cv2
import numpy as np

from eval import realset
from eval.realset_edits import edited_print
from pipelines.editors.objects import growth_limit
from pipelines.layers import feather_for
from pipelines.localizers.sky import find_sky


def _found(case_id: str, how: str | None = None, mp: float | None = 16
           ) -> tuple[np.ndarray, np.ndarray]:
    """The sky found on the case's photo (or print), enlarged to ``mp`` MP (as shot for
    None), and the true mask."""
    case = realset.case(case_id)
    image, truth, _ = edited_print(case, "", how, mp)
    found = find_sky(image)
    assert found.status == "resolved", found.reason
    return found.masks[0].mask, truth


def _inside_the_reach(case_id: str, how: str | None, iou: float, feathers: int = 2) -> None:
    """No pixel of the sky found past the judge's reach round the label
    (``eval.localization.beyond_reach``) once grown by ``feathers`` times its feather (an
    edit's rim retry grows it past its own feather: the sea's edit reached that far), and
    at least ``iou`` of the label."""
    mask, truth = _found(case_id, how)
    reach = feather_for(truth) + growth_limit(truth) + 2
    dist = cv2.distanceTransform((~truth).astype(np.uint8), cv2.DIST_L2, 5)
    assert float(dist[mask].max()) + feathers * feather_for(mask) <= reach
    assert realset.mask_iou(mask, truth) >= iou


def test_far_water_under_a_hazy_horizon_leaves_the_sky_on_a_lighter_print() -> None:
    """A bay under a bridge's cables, lighter (a gamma of 0.8): the band of far water and
    sand under the hazy horizon turns pale enough to read as haze, and the sky took it, 64
    px past the reach ("make the sky darker": 14,101 px beyond it, done). It is 13-15 L
    darker than the sky above it. (The sky still takes a sliver of a pale cable where it
    crosses the horizon: within one feather of the reach, not two.)"""
    _inside_the_reach("bridge__sky", "gamma0.8", 0.96, feathers=1)


def test_a_terminals_pale_roof_leaves_the_sky_at_16_mp() -> None:
    """An airport in snow, enlarged to 16 MP: the sky ran into the terminal's pale roof
    (its Lab b about -1, the sky's -10), 18 px past the reach ("make the sky bluer": 1,733
    px beyond it, done). The roof is a little darker than the sky above it and much less
    blue."""
    _inside_the_reach("kpa_snow__sky", None, 0.97)


def test_the_sea_under_the_horizon_leaves_the_sky_on_a_darker_print() -> None:
    """A beach under an overcast sky, darker (a gamma of 1.25): a piece of the sea under
    the horizon stayed in the sky ("make the sky bluer": 1,198 px beyond the reach, done);
    it is 10 L darker than the sky above it."""
    _inside_the_reach("kpa_cold_water__sky", "gamma1.25", 0.98)


def test_darker_bluer_sky_under_clouds_stays_sky() -> None:
    """The step is no sky's own shading: the blue sky under a row of white clouds on a
    hill's horizon, and a grey-blue bank of cloud over a ridge, are darker than what is
    above them (8-11 L) but bluer (5-7 Lab b), and stay."""
    for case_id, iou in (("this_is_not_windows__sky", 0.995), ("aitzgorri__sky", 0.97)):
        mask, truth = _found(case_id, mp=None)
        assert realset.mask_iou(mask, truth) >= iou, case_id


def test_sun_glare_on_the_sea_under_a_grey_horizon_is_not_sky() -> None:
    """A beach under a grey sky, lighter (a gamma of 0.8): the sun's glare on the sea under
    the horizon is blown out, smooth where it is clipped and brighter than the sky above
    it, and the sky took it ("make the sky darker": 241 px beyond the reach, done). The sky
    itself is hardly blown out (0.1 %) and the glare glitters (its fine texture four times
    the sky's): it leaves."""
    _inside_the_reach("clouds_beach__sky", "gamma0.8", 0.99)


def test_a_blown_out_cloud_at_the_cut_under_the_horizon_stays_sky() -> None:
    """A lake under a cloudy sky, darker (a gamma of 1.25): a blown-out cloud lies on the
    line where the sky is cut under its horizon, in a sky hardly blown out, like the
    glare; but it is smooth (its fine texture twice the sky's), and stays."""
    mask, truth = _found("lake_hill__sky", "gamma1.25", mp=None)
    assert realset.mask_iou(mask, truth) >= 0.94
