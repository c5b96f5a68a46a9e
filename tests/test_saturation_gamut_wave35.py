"""Issue 32, relative words keep their size: more saturation stops short of the gamut's edge.

"Make the sky a deeper blue" plans saturation +0.375 (``agent.brain.shades``). On a clear
sky already near full saturation (the Lincoln Memorial's, gcompris-qt-data, tune split)
the plain colour matrix clipped the smallest channel at 0 on 14 % of the sky, so the
relative-size check rolled the edit back and the CLI said "not done" on a sky it had
found right (IoU 0.96). The operation now cuts its gain per pixel before that edge: none
of the sky is newly driven to full saturation, the sky still turns visibly deeper, and a
sky with headroom (the Eiffel Tower's) gets the same edit as before.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from eval import realset
from pipelines.color import delta_e76, rgb_to_lab
from pipelines.operations import get as get_operation
from pipelines.operations.pixels import saturation_matrix as _saturation_matrix

SIDE = 640
DEEPER = {"amount": 0.375}


@lru_cache(maxsize=2)
def _sky(case_id: str) -> tuple[np.ndarray, np.ndarray]:
    image, truth = realset.case_at(case_id, SIDE)
    return image, truth.astype(bool)


def _full(rgb: np.ndarray, where: np.ndarray) -> float:
    """Share of ``where`` at the saturation limit (HSV S >= 242, as the critic reads it)."""
    return float((cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV_FULL)[..., 1][where] >= 242).mean())


def _chroma(rgb: np.ndarray, where: np.ndarray) -> float:
    return float((rgb.max(-1).astype(np.int16) - rgb.min(-1))[where].mean())


def test_a_deeper_blue_on_a_vivid_sky_drives_none_of_it_to_the_limit() -> None:
    image, sky = _sky("gc_lincoln_memorial__sky")
    op = get_operation("saturation")
    plain = cv2.transform(image, _saturation_matrix(DEEPER))
    assert _full(plain, sky) - _full(image, sky) > 0.1       # what the matrix alone did
    out = op.apply(image, sky, DEEPER)
    assert _full(out, sky) - _full(image, sky) <= 0.01
    assert _chroma(out, sky) - _chroma(image, sky) >= 20      # still visibly deeper
    assert float(delta_e76(rgb_to_lab(image[sky]), rgb_to_lab(out[sky])).mean()) >= 5


def test_a_sky_with_headroom_gets_the_same_saturation_as_before() -> None:
    image, sky = _sky("gc_eiffel_tower__sky")
    out = get_operation("saturation").apply(image, sky, DEEPER)
    plain = cv2.transform(image, _saturation_matrix(DEEPER))
    assert np.abs(out.astype(int) - plain.astype(int))[sky].max(axis=-1).mean() < 0.5


def test_less_saturation_is_the_plain_matrix() -> None:
    image, sky = _sky("gc_eiffel_tower__sky")
    less = {"amount": -0.25}
    out = get_operation("saturation").apply(image, sky, less)
    assert np.array_equal(out, cv2.transform(image, _saturation_matrix(less)))
