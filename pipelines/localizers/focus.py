"""Focus as a cue: in a photo with a shallow depth of field, the thing named is the sharp
one, not its blurred look-alikes in the bokeh (issue 32, class "focus").

A region's sharpness is how strong the Laplacian is along its outline (the 90th
percentile over a thin ring across its edge, on the work copy): an outline in focus is a
step, one in the bokeh a slow ramp. Among candidate regions of the named colour, when the
sharpest outline is ``SPREAD`` times the weakest or more (some of them lie in the bokeh),
the ones under ``KEEP`` of the sharpest are left out; a photo sharp throughout keeps all.

When words no class fits find no main subject ("the flower" in a meadow of anemones),
a photo with a shallow depth of field still says where to look: its strongest edges
(the 99th percentile of the Laplacian's local energy) are ``SHALLOW_TOP`` or more, and
the median of the frame is ``SHALLOW_RATIO`` times weaker (most of it is bokeh). The zones
in focus are then offered to click (``sharp_things``), never taken: focus says which
things the photographer meant, not which of them is the named one.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.localizers.base import Candidate, Localization, mask_box
from pipelines.localizers.refine import upsample_region
from pipelines.perception.detectors import shrink

#: a candidate stays when its outline is at least this share of the sharpest one's
KEEP = 0.25
#: the sharpest outline must be this many times the weakest for focus to decide anything
SPREAD = 4.0
#: and at least this strong (grey levels per pixel², 3×3 Laplacian): not mere noise
FLOOR = 40.0
#: half-width of the ring across the outline, in work pixels
RING = 2
#: a shallow depth of field: the strongest edges' local energy at least this (tune: the
#: anemones 151, the apple twig 99, the butterfly 116, the dandelion 102; a rainbow, clouds,
#: fog, a church and moonlight 33-64, a beach 104 and a harbour 94 but sharp throughout) ...
SHALLOW_TOP = 80.0
#: ... and this many times the frame's median (tune: bokeh 9-43; sharp throughout 2-4;
#: skies, fog and dusk with weak edges below SHALLOW_TOP anyway)
SHALLOW_RATIO = 8.0
#: a zone in focus is where the energy reaches this share of the strongest edges' ...
ZONE = 0.35
#: ... and holds at least this share of the frame
ZONE_MIN = 0.002
#: the local energy is the |Laplacian| blurred by this sigma, on the work copy
ENERGY_SIGMA = 4.0
#: the work copy's long side for the zones
WORK_SIDE = 512
#: at most this many zones are offered
MAX_ZONES = 6


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


def sharp_zones(small: np.ndarray) -> list[np.ndarray]:
    """The zones in focus of a work copy with a shallow depth of field, largest first
    (module doc); none when the photo is sharp throughout or has no strong edge."""
    energy = cv2.GaussianBlur(laplacian(small), (0, 0), ENERGY_SIGMA)
    top, median = np.percentile(energy, [99, 50])
    if top < SHALLOW_TOP or top < SHALLOW_RATIO * max(1e-6, float(median)):
        return []
    count, labels, stats, _ = cv2.connectedComponentsWithStats(
        (energy >= ZONE * top).astype(np.uint8), connectivity=8)
    order = sorted(range(1, count), key=lambda i: -stats[i, cv2.CC_STAT_AREA])
    return [labels == i for i in order[:MAX_ZONES]
            if stats[i, cv2.CC_STAT_AREA] >= ZONE_MIN * energy.size]


def sharp_things(rgb: np.ndarray, text: str) -> Localization:
    """What words no class fits get when no main subject stands out: the zones in focus
    offered to click when the photo has a shallow depth of field, else a refusal."""
    small = shrink(rgb, WORK_SIDE)
    zones = sharp_zones(small)
    if not zones:
        return Localization([], "unresolved", f"{text!r}: no detector class fits those "
                            "words and no subject stands out; not found (paint it with "
                            "the brush)")
    cands = []
    for zone in zones:
        mask = upsample_region(rgb, zone)     # its edge decided at native resolution
        cands.append(Candidate(mask, 0.2, "in focus", "focus", {"focus": 1.0},
                               mask_box(mask)))
    return Localization(cands, "ambiguous", f"{text!r}: no detector class fits those "
                        f"words and no one subject stands out, but {len(cands)} zone(s) "
                        "are in focus among blurred ones; click the thing you mean in "
                        "them (or paint it with the brush)", candidates=cands)
