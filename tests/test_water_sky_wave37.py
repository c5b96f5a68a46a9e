"""Issue 32, wave 37: water is blue or of the sky's tint (``water_sky.not_water``).

On a darker print of Petra's Monastery, "the water" (there is none) was edited: the smooth
base of the sandstone facade under a level row "mirrored" the carving above it (0.64) and
the skyline read clear. It is neither blue (0 %) nor of its blue sky's tint (58 apart):
stone, "no water found". So is the Sanchi stupa's orange dirt (asked before). A lake under
a red hill, its water mostly the hill's reflection, is blue enough and stays found."""

from __future__ import annotations

import cv2
import numpy as np

from eval import realphotos, realset
from pipelines.localizers.phrases import parse_phrase
from pipelines.localizers.scene import find_region
from pipelines.localizers.water_sky import blue_share, not_water, sky_tint
from pipelines.perception.detectors import shrink

#: the long side the photos are read at (the scene reads a 256 px copy of it anyway)
SIDE = 800


def _water(case_id: str, print_as: str | None = None) -> tuple:
    """"the water" found on a small copy of the case's photo (or a print of it), and the
    truth at that size."""
    case = realset.case(case_id)
    image, truth = realphotos.load(case.photo)[..., :3], case.truth()
    if print_as:
        image, truth, _ = realset.printed(image, truth, case.phrase, print_as)
    image = shrink(np.ascontiguousarray(image), SIDE)
    if truth is not None:
        truth = cv2.resize(truth.astype(np.uint8), image.shape[1::-1],
                           interpolation=cv2.INTER_NEAREST) > 0
    return find_region(image, "water", parse_phrase("the water"), "water"), truth


def test_a_sandstone_facade_that_mirrors_is_no_water() -> None:
    found, _ = _water("gc_petra__water", "gamma0.8")
    assert found.status == "unresolved", found.reason
    assert "neither blue nor of the sky's tint" in found.reason


def test_orange_dirt_is_no_water() -> None:
    found, _ = _water("gc_sanchi_stupa__water")
    assert found.status == "unresolved", found.reason


def test_a_lake_under_a_red_hill_is_still_water() -> None:
    found, truth = _water("lake_hill__lake")
    assert found.status == "resolved", found.reason
    assert realset.mask_iou(found.union(), truth) >= 0.9


def test_the_tint_mechanics() -> None:
    """A blue pool, a grey pool under a grey sky, and orange earth under a blue sky."""
    small = np.zeros((40, 40, 3), np.uint8)
    sky, low = np.zeros((40, 40), bool), np.zeros((40, 40), bool)
    sky[:20], low[20:] = True, True
    small[:20] = (110, 160, 230)
    small[20:] = (40, 80, 150)
    assert blue_share(small, low) == 1.0 and not not_water(small, low, sky)
    small[20:] = (200, 130, 60)
    assert blue_share(small, low) == 0.0 and sky_tint(small, low, sky) >= 45
    assert not_water(small, low, sky)
    small[:20], small[20:] = (180, 180, 185), (120, 120, 118)
    assert not not_water(small, low, sky)
