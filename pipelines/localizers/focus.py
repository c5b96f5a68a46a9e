"""Focus as a cue: in a photo with a shallow depth of field, the thing named is the sharp
one, not its blurred look-alikes in the bokeh (issue 32, class "focus").

A region's sharpness is how strong the Laplacian is along its outline (the 90th
percentile over a thin ring across its edge, on the work copy): an outline in focus is a
step, one in the bokeh a slow ramp. Among candidate regions of the named colour, when the
sharpest outline is ``SPREAD`` times the weakest or more (some of them lie in the bokeh),
the ones under ``KEEP`` of the sharpest are left out; a photo sharp throughout keeps all.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.localizers.base import Candidate

#: a candidate stays when its outline is at least this share of the sharpest one's
KEEP = 0.25
#: the sharpest outline must be this many times the weakest for focus to decide anything
SPREAD = 4.0
#: and at least this strong (grey levels per pixel², 3×3 Laplacian): not mere noise
FLOOR = 40.0
#: half-width of the ring across the outline, in work pixels
RING = 2


def laplacian(small: np.ndarray) -> np.ndarray:
    """|Laplacian| of the grey work copy (float32)."""
    gray = cv2.cvtColor(np.ascontiguousarray(small[..., :3]), cv2.COLOR_RGB2GRAY)
    return np.abs(cv2.Laplacian(gray.astype(np.float32), cv2.CV_32F, ksize=3))


def sharpness(lap: np.ndarray, mask: np.ndarray) -> float:
    """How sharp ``mask``'s outline is: the 90th percentile of ``lap`` on the ring across it."""
    m = mask.astype(np.uint8)
    kernel = np.ones((2 * RING + 1, 2 * RING + 1), np.uint8)
    ring = (cv2.dilate(m, kernel) > 0) & ~(cv2.erode(m, kernel) > 0)
    return float(np.percentile(lap[ring], 90)) if ring.any() else 0.0


def in_focus(small: np.ndarray, cands: list[Candidate]) -> tuple[list[Candidate], int]:
    """The candidates in focus (module doc), each with its relative sharpness as the
    ``focus`` evidence, and how many blurred ones were left out (0: focus decided
    nothing, and the list is returned as it was)."""
    if len(cands) < 2:
        return cands, 0
    lap = laplacian(small)
    sharp = [sharpness(lap, c.mask) for c in cands]
    best = max(sharp)
    if best < FLOOR or best < SPREAD * max(1e-6, min(sharp)):
        return cands, 0
    kept = []
    for cand, value in zip(cands, sharp, strict=True):
        if value >= KEEP * best:
            cand.evidence["focus"] = round(value / best, 3)
            kept.append(cand)
    return kept, len(cands) - len(kept)
