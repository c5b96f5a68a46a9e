"""A sky behind people: a studio backdrop around a portrait's head, or an open sky.

``find_sky`` (``pipelines.localizers.sky``) takes any smooth blue, dusky or pale region
along the top; behind a tall person that region may be the plain backdrop of a studio.
``backdrop_behind`` turns such an answer into a question unless ``open_sky`` shows the
region beside the people reaching the top border and ending at a horizon over textured
ground, as an outdoor sky does.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.localizers.base import Localization
from pipelines.localizers.sky import WORK_SIDE, sky_likelihood

#: a person this tall (share of the frame's height) makes the photo a portrait
PORTRAIT = 0.45
#: share of the person's head zone (the top quarter of its box) that the "sky" fills
#: for it to be the backdrop around the head
AROUND_HEAD = 0.15


#: share of the frame's width outside the tall people's boxes needed to judge the sky there
OPEN_WIDTH = 0.2
#: share of those free columns in which an open sky reaches the top border
OPEN_SPAN = 0.8
#: the ground band judged under each column's lowest sky pixel (shares of the height)
GROUND_BAND = (0.02, 0.12)
#: most of that band (all free columns together) that may be smooth for it to be ground
#: (trees, roofs, grass, water: textured); a studio floor or wall under a backdrop is not
GROUND_SMOOTH = 0.5


def open_sky(mask: np.ndarray, small: np.ndarray, people: list[tuple[int, ...]]) -> str:
    """Why a sky-coloured region behind people is an outdoor sky, or "" when nothing shows
    it: beside the people (the columns outside their boxes) it reaches the top border
    across the free width and ends at a horizon with textured ground under it (trees,
    roofs, grass, water), where a studio backdrop meets a plain floor or wall, or stops
    at the person. When the people fill nearly the whole width, or the ground is smooth
    (sand, a road: told from a studio floor by nothing here), it stays a question ("").

    Args:
        mask: bool (h, w) the sky found, on a small copy.
        small: uint8 (h, w, 3) the photo at the same small size.
        people: person boxes (x0, y0, x1, y1) in the small copy's pixels.
    """
    h, w = mask.shape
    free = np.ones(w, bool)
    for x0, _, x1, _ in people:
        free[max(0, x0):max(0, x1)] = False
    if free.mean() < OPEN_WIDTH:
        return ""
    cols = mask[:, free]
    span = float(cols[: max(1, h // 20)].any(axis=0).mean())
    has = cols.any(axis=0)
    if span < OPEN_SPAN or not has.any():
        return ""
    smooth, _ = sky_likelihood(small)
    smooth = smooth[:, free]
    lowest = h - 1 - np.argmax(cols[::-1], axis=0)
    under = np.zeros(cols.shape, bool)          # the band under each column's horizon
    for j in np.flatnonzero(has):
        under[lowest[j] + int(GROUND_BAND[0] * h):lowest[j] + int(GROUND_BAND[1] * h), j] \
            = True
    below = float((under.sum(axis=0) >= 0.05 * h).mean())
    plain = float(smooth[under].mean()) if under.any() else 1.0
    if below < OPEN_SPAN or plain > GROUND_SMOOTH:
        return ""
    return (f"it spans the {free.mean():.0%} of the width beside the people from the top "
            f"border down to a horizon with textured ground under it ({1 - plain:.0%} of it)")


def backdrop_behind(sky: Localization, people: list[tuple[float, ...]],
                    rgb: np.ndarray | None = None) -> Localization:
    """A resolved sky that surrounds a portrait's head and reaches below it is more
    likely a studio backdrop than a sky: the answer becomes ``ambiguous`` (shown to click,
    nothing edited until the user picks), with why — unless, with ``rgb`` given, it is
    plainly an open sky (``open_sky``: across the width beside the people, down to a
    horizon over ground), which stays resolved.

    Args:
        sky: ``find_sky``'s answer.
        people: boxes (x0, y0, x1, y1, full resolution) of the confident people seen.
        rgb: the photo (uint8, full resolution), for the open-sky evidence.
    """
    if sky.status != "resolved" or not sky.masks or not people:
        return sky
    mask = sky.masks[0].mask
    h, w = mask.shape
    step = max(1, max(h, w) // WORK_SIDE)
    small = mask[::step, ::step]
    boxes = [tuple(int(round(v / step)) for v in box) for box in people]
    for x0, y0, x1, y1 in boxes:
        bh = y1 - y0
        if bh < PORTRAIT * small.shape[0] or x1 <= x0:
            continue
        head = small[max(0, y0):max(0, y0) + max(1, bh // 4), max(0, x0):x1]
        rows = np.flatnonzero(small[:, max(0, x0):x1].any(axis=1))
        below = rows.size and rows[-1] > y0 + bh // 4      # reaches beside the shoulders
        if head.size and head.mean() >= AROUND_HEAD and below:
            if rgb is not None:
                photo = cv2.resize(np.ascontiguousarray(rgb[..., :3]),
                                   (small.shape[1], small.shape[0]),
                                   interpolation=cv2.INTER_AREA)
                outdoor = open_sky(small, photo, boxes)
                if outdoor:
                    return Localization(sky.masks, "resolved", f"{sky.reason}; a person "
                                        f"stands in front of it, and {outdoor}: an open "
                                        "sky, not a backdrop", candidates=sky.candidates)
            return Localization(sky.masks, "ambiguous", "the plain region around the "
                                f"person's head ({head.mean():.0%} of the head's zone) "
                                "reaches down beside them: more likely a backdrop than a "
                                "sky; click it if it is the sky you mean")
    return sky
