"""When a grey sky read above a skyline from the photo's colours alone (``scene.grey_sky``,
a question by design) is sure enough to answer.

``grey_sky`` asks because a skyline read from colours can go wrong in two ways: it can run
over a bank of bright mist between ridges (the mist taken for sky, or the sky left above a
cloud bank it stopped at), or it can be no skyline at all (a pale wall over a floor). Both
leave a trace a gamma keeps, at the cut under the region:

* **an edge under the whole cut**: going down each column, the land right under the cut is
  darker than the sky right above it (``STEP_L`` Lab L or more, ``STEP_NEAR`` to
  ``STEP_FAR`` px either side on a copy ``EDGE_SIDE`` px long) in ``EDGE_ALONG`` of the
  columns or more. Where the cut runs over lit mist or stops on a cloud bank, what lies
  under it is as bright as the sky or brighter, and the step fails there;
* **smooth nearly all over**: ``SMOOTH_ALL`` of the region or more is smooth on the work
  copy (``sky.sky_likelihood``); ``grey_sky`` lets 85 % do, and the water of an aquarium
  with its fish, its ceiling's edge and the people's heads in it passes there, while a
  storm's clouds have soft edges;
* **a skyline, not a line**: the cut rises and falls (the spread of its columns' rows,
  5th to 95th percentile, ``RISES`` of the height or more). A wall meets a floor, and a sea
  meets the sky, along a straight line: those stay questions.

Before they are read, the region gives up what ``sky_land.land_below`` finds at its lower
edge, as ``find_sky``'s sky does: a piece darker than the sky right above it (a far ridge
in mist that the colour skyline took for sky), so what is answered is cut where the step is.

All hold: the guess is answered (``resolved``), its reason says why; else the question
stands as ``grey_sky`` asked it.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.localizers.base import Candidate, Localization
from pipelines.localizers.sky import WORK_SIDE, fine_texture, sky_likelihood
from pipelines.localizers.sky_land import land_below
from pipelines.perception.detectors import shrink

#: the side of the copy the step is read on, and where either side of the cut (px on it)
EDGE_SIDE, STEP_NEAR, STEP_FAR = 1024, 3, 12
#: the land under the cut is this much darker (Lab L) than the sky above it ...
STEP_L = 5.0
#: ... in this share of the cut's columns or more (tune, module doc)
EDGE_ALONG = 0.9
#: the cut's rows spread over this share of the height or more (5th to 95th percentile)
RISES = 0.05
#: the share of the region smooth on the work copy (tune: grey skies 0.95-0.98 on every
#: print; an aquarium's water under its ceiling, read as a grey sky, 0.88)
SMOOTH_ALL = 0.93
#: the source ``scene.grey_sky`` names its candidate with
GREY_SOURCE = "scene:grey-sky"


def cut_profile(rgb: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """(the share of the cut's columns with an edge under them, the cut's spread as a
    share of the height) of ``mask`` (bool, ``rgb``'s size) over ``rgb``; the cut is each
    column's lowest pixel of the mask, columns whose cut is at the bottom edge left out."""
    small = shrink(rgb[..., :3], EDGE_SIDE)
    h, w = small.shape[:2]
    light = cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)[..., 0]
    k = max(h, w) / EDGE_SIDE         # a smaller photo: the same share of its side
    near, far = max(1, round(STEP_NEAR * k)), max(2, round(STEP_FAR * k))
    sky = cv2.resize(mask.astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST) > 0
    cols = np.flatnonzero(sky.any(axis=0))
    if cols.size == 0:
        return 0.0, 0.0
    lowest = h - 1 - np.argmax(sky[::-1, cols], axis=0)
    keep = lowest < h - far
    cols, lowest = cols[keep], lowest[keep]
    if cols.size == 0:
        return 0.0, 0.0
    steps = np.empty(cols.size, np.float32)
    for i, (x, y) in enumerate(zip(cols, lowest)):
        above = light[max(0, y - far):max(1, y - near + 1), x]
        below = light[y + near:y + far + 1, x]
        steps[i] = float(np.median(above) - np.median(below))
    spread = float(np.percentile(lowest, 95) - np.percentile(lowest, 5)) / h
    return float((steps >= STEP_L).mean()), spread


def without_land(rgb: np.ndarray, small: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``mask`` (bool, ``rgb``'s size) less the land ``sky_land.land_below`` finds at its
    lower edge on the work copy ``small`` (the pieces it gives up, brought to ``mask``'s
    size)."""
    h, w = small.shape[:2]
    sky = cv2.resize(mask.astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST) > 0
    lab = cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    land = sky & ~land_below(sky, small, lab, fine_texture(rgb, (h, w)))
    if not land.any():
        return mask
    land = cv2.resize(land.astype(np.uint8), mask.shape[::-1], interpolation=cv2.INTER_NEAREST)
    return mask & ~(land > 0)


def smooth_share(small: np.ndarray, mask: np.ndarray) -> float:
    """The share of ``mask`` (bool, the photo's size) smooth on the work copy ``small``."""
    smooth = sky_likelihood(small)[0]
    region = cv2.resize(mask.astype(np.uint8), smooth.shape[::-1],
                        interpolation=cv2.INTER_NEAREST) > 0
    return float(smooth[region].mean()) if region.any() else 0.0


def grey_settled(rgb: np.ndarray, found: Localization) -> Localization:
    """``found`` (``scene.any_sky``'s answer), answered when it is ``grey_sky``'s question
    and its cut has an edge under it all along and rises and falls (module doc)."""
    if found.status != "ambiguous" or not found.candidates or \
            found.candidates[0].source != GREY_SOURCE:
        return found
    cand = found.candidates[0]
    small = shrink(rgb[..., :3], WORK_SIDE)     # the work copy both readings use
    mask = without_land(rgb, small, np.asarray(cand.mask, bool))
    along, spread = cut_profile(rgb, mask)
    smooth = smooth_share(small, mask)
    cand.evidence.update({"edge_along": round(along, 3), "rises": round(spread, 3),
                          "smooth_all": round(smooth, 3)})
    if along < EDGE_ALONG or spread < RISES or smooth < SMOOTH_ALL:
        return found
    said = found.reason.split("; is the first one")[0]
    cand = Candidate(mask, cand.score, cand.label, cand.source, cand.evidence)
    return Localization([cand], "resolved", f"{said}; the land under it is darker than the "
                        f"sky right above it along {along:.0%} of the cut, and the cut rises "
                        f"and falls over {spread:.0%} of the height: a skyline")
