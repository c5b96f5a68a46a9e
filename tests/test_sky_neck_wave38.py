"""Issue 32, wave 38: a sky joined to pale sand only through a neck at the frame's edge is
found, not refused as a floor (``sky_land.necked``).

``find_sky`` takes no sky-like region that runs along the frame's bottom edge (a backdrop
or a floor does). The Great Pyramid's clear sky (a tune photo) met the white sand at the
frame's right edge, under the pyramid's corner, through a neck of a few work pixels: one
region, along the bottom, refused ("no sky"). Now such a region is opened at its necks and
the part holding the top border is judged alone."""

from __future__ import annotations

import numpy as np

from eval import realset
from pipelines.localizers.sky import ends_unsure, find_sky

SKY = (110, 160, 225)       # a clear blue sky
SAND = (235, 232, 225)      # pale sand: sky-coloured (pale) and smooth


def _frame(neck: int) -> np.ndarray:
    """A 400 x 600 frame: sky over a textured grey-brown pyramid filling rows 150-330
    from edge to edge but for a gap ``neck`` px wide at the right edge, where the sky pales
    smoothly down to the pale sand under it (a hazy horizon)."""
    rng = np.random.default_rng(2)
    image = np.zeros((400, 600, 3), np.uint8)
    image[:] = SKY
    stone = rng.integers(0, 70, (180, 600, 1)) + np.array([120, 105, 80])
    image[150:330] = np.clip(stone, 0, 255).astype(np.uint8)
    if neck:
        ramp = np.linspace(0.0, 1.0, 180)[:, None, None]
        fade = (1 - ramp) * np.array(SKY) + ramp * np.array(SAND)
        image[150:330, 600 - neck:] = np.repeat(fade, neck, axis=1).astype(np.uint8)
    image[330:] = SAND
    return image


def test_a_sky_joined_to_sand_through_a_neck_is_found_without_the_sand() -> None:
    found = find_sky(_frame(neck=7))
    assert found.status == "resolved", found.reason
    mask = found.masks[0].mask > 0.5
    assert mask[:140].mean() > 0.95            # the sky
    assert not mask[340:].any()                # not the sand


def test_a_broad_join_still_reads_as_a_floor() -> None:
    """Sky-like stuff joined to the sand by a wide band (a backdrop running down to the
    floor) is still one region along the bottom: no sky."""
    found = find_sky(_frame(neck=60))
    assert found.status == "unresolved"


def test_the_great_pyramids_sky_is_found() -> None:
    """The Great Pyramid (a tune photo, at 768 px): refused before, found now at IoU 0.98."""
    image, truth = realset.case_at("gc_great_pyramid__sky", 768)
    found = ends_unsure(find_sky(np.ascontiguousarray(image)))
    assert found.status == "resolved", found.reason
    assert realset.mask_iou(found.masks[0].mask > 0.5, truth) >= 0.95
