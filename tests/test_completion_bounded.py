"""The fill's cost is bounded by its working size, not by the crop's (issue 23, "Bounded
cost at any size"): a large hole in a large crop is completed on a copy of at most
``completion.MAX_WORK_PIXELS`` and only the hole's pixels are touched at full resolution."""

from __future__ import annotations

import tracemalloc

import cv2
import numpy as np
from skimage import data

from pipelines.editors import completion
from pipelines.operations.fill import patch_fill

#: traced peak of the whole fill, in units of the float32 crop it is given (the caller's
#: own copy not counted): the output, a few full-resolution arrays and the working copy's
#: pyramid, descriptors and field. Measured 4.2 on the case below; the same fill run at
#: full resolution (no working size) peaks at 14.2 and takes four times the CPU.
PEAK_CROPS = 6.0


def _gravel_crop(width: int, height: int, radius: int) -> tuple[np.ndarray, np.ndarray]:
    tile = np.dstack([data.gravel()] * 3)
    reps = (height // tile.shape[0] + 1, width // tile.shape[1] + 1, 1)
    img = np.tile(tile, reps)[:height, :width].astype(np.float32) / 255.0
    hole = np.zeros((height, width), np.uint8)
    cv2.circle(hole, (width // 2, height // 2), radius, 1, -1)
    return np.ascontiguousarray(img), hole.astype(bool)


def test_a_large_hole_in_a_large_crop_is_filled_in_bounded_memory_and_keeps_the_rest():
    img, hole = _gravel_crop(3600, 3000, 900)          # 10.8-MP crop, 2.5-MP hole
    assert img.shape[0] * img.shape[1] > 4 * completion.MAX_WORK_PIXELS
    tracemalloc.start()
    try:
        out = patch_fill(img, hole)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK_CROPS * img.nbytes, (peak >> 20, img.nbytes >> 20)
    assert np.array_equal(out[~hole], img[~hole])       # bit-identical outside the hole
    ring = (cv2.dilate(hole.view(np.uint8), np.ones((121, 121), np.uint8)) > 0) & ~hole
    grey_in, grey_ring = out[hole].mean(axis=1), out[ring].mean(axis=1)
    assert abs(grey_in.mean() - grey_ring.mean()) < 0.03
    assert 0.6 < grey_in.std() / grey_ring.std() < 1.4  # texture, not a smooth smear
