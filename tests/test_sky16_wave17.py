"""Issue 32: skies edited at 16 MP (``bench/realset.py --edits --upscale 16``). The judge's
reach is capped in pixels (the true mask's feather plus the most an edge may grow), so a
sky a few work pixels too generous, harmless on the photo as shot, changes pixels beyond
it once the photo is enlarged. Each rule is checked on the tune photo (and print) that
showed it, enlarged to 16 MP as the bench enlarges it."""

from __future__ import annotations

import cv2
import numpy as np

from eval import realset
from eval.realset_edits import edited_print
from pipelines.editors.objects import growth_limit
from pipelines.layers import feather_for
from pipelines.localizers.sky import ends_unsure, find_sky


def _at_16mp(case_id: str, how: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The case's photo (or print) and true mask as the bench's 16-MP edits see them."""
    case = realset.case(case_id)
    image, truth, _ = edited_print(case, "", how, 16)
    return image, truth


def _overshoot(mask: np.ndarray, truth: np.ndarray) -> float:
    """How far (px) the mask, feathered as an edit feathers it, reaches past the judge's
    reach round ``truth`` (``eval.localization.beyond_reach``); <= 0 when inside."""
    reach = feather_for(truth) + growth_limit(truth) + 2
    dist = cv2.distanceTransform((~truth).astype(np.uint8), cv2.DIST_L2, 5)
    return float(dist[mask].max()) + feather_for(mask) - reach


def _inside_the_reach(case_id: str, iou: float) -> None:
    """The sky found on the case's photo at 16 MP is resolved, no pixel of it past the
    judge's reach (less the edit's feather), and at least ``iou`` of the label."""
    image, truth = _at_16mp(case_id)
    found = find_sky(image)
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask
    assert _overshoot(mask, truth) <= 0
    assert realset.mask_iou(mask, truth) >= iou


def test_pale_rock_under_mist_at_a_crest_leaves_the_sky_at_16_mp() -> None:
    """Mountains under a blue sky, enlarged to 16 MP: a patch of pale rock under a wisp of
    mist below the crest (fine texture 3-5, the limit 4) stayed in the sky, 25 px past
    the reach, and "make the sky darker" changed 1,139 px beyond it, reported done. The
    textured patch that leaves the sky takes the less textured, not-blue rock joined to
    it."""
    _inside_the_reach("picosdeeuropa__sky", 0.9)


def test_pale_sea_under_the_horizon_leaves_the_sky_at_16_mp() -> None:
    """A beach under an overcast sky, enlarged to 16 MP from 800 px: the sea under the
    horizon reads smoother on the enlarged photo, and a piece of it by the people stayed
    in the sky, 9 px past the reach ("make the sky bluer": 16 px beyond it, done)."""
    _inside_the_reach("kpa_cold_water__sky", 0.95)


def test_a_sky_that_ran_into_the_sea_is_still_asked_after_the_trim() -> None:
    """The same beach, lighter (a gamma of 0.8): the sky ran deep into the sea (31 % of
    its rows textured under its open top), which is asked. The trim takes most of that
    sea out, but not all of it (645 px still past the reach): how far the sky ran into
    texture is read before the trim, so the answer stays a question."""
    image, _ = _at_16mp("kpa_cold_water__sky", "gamma0.8")
    found = ends_unsure(find_sky(image))
    assert found.status == "ambiguous", found.reason
