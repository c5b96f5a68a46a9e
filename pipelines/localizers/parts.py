"""A part of a thing, found inside the thing by the colour such parts have (issue 34):
"the dog's tongue" is the pink part of the dog, "the leaves of the twig" its green part.

WordNet says a tongue is a body part and a leaf a plant part; what the detectors can see
of it is its colour inside the whole (``TYPICAL_COLOURS``). The whole is located first, as
any phrase is; the part is the largest region of the part's colours inside the whole's
mask (grown a little: a lolling tongue sticks out of a dog's outline).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np

from pipelines.color import COLOR_RANGES
from pipelines.localizers.base import Candidate, Localization
from pipelines.localizers.segment import hsv, smooth_resize
from pipelines.perception.detectors import shrink

#: parts of a thing known by their colour
TYPICAL_COLOURS: dict[str, tuple[str, ...]] = {
    "tongue": ("pink", "red"), "lip": ("red", "pink"), "lips": ("red", "pink"),
    "leaf": ("green", "lime"), "leaves": ("green", "lime"), "foliage": ("green", "lime"),
}
#: "the dog's tongue" / "the tongue of the dog"
POSSESSIVE = re.compile(r"\b([a-z]+)'s ([a-z]+)\b|\b([a-z]+) of (?:the |a |an |this |that )?"
                        r"([a-z]+)\b")
#: long side of the crop of the whole the part is looked for on
WORK_SIDE = 384
#: the whole's mask is grown by this share of its box's larger side
GROW = 0.06
#: the most a part found by colour is trusted (below the whole's own score)
SURE = 0.5
#: holes up to this share of a part's area are glints, filled
HOLE = 0.1
#: with several parts asked for, the others are at least this share of the largest
KIN_SIZE = 0.1
#: a part fills between these shares of its whole
SHARE = (0.002, 0.6)


def possessed(text: str) -> tuple[str, str] | None:
    """(whole, part) when ``text`` names a part of a thing by a word of
    ``TYPICAL_COLOURS`` ("the dog's tongue" → ("dog", "tongue")), else None."""
    for m in POSSESSIVE.finditer(text.lower().replace("\u2019", "'")):
        whole, part = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        if part in TYPICAL_COLOURS:
            return whole, part
    return None


def _filled(mask: np.ndarray) -> np.ndarray:
    """``mask`` with its small holes filled (a glint; not a blossom a ring of leaves and
    stem goes round): holes up to ``HOLE`` of its area."""
    holes = (~mask).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(holes, 4)
    h, w = mask.shape
    out = mask.copy()
    for i in range(1, count):
        x, y, bw, bh, area = stats[i]
        if x > 0 and y > 0 and x + bw < w and y + bh < h and area <= HOLE * mask.sum():
            out |= labels == i
    return out


def _joined(region: np.ndarray, colours: np.ndarray, part: str,
            inside: np.ndarray) -> np.ndarray:
    """``region`` and the paler pixels of its colours that touch it (the hue of one of
    ``part``'s colours, half its least saturation, no darker than most of it), holes
    filled: a pale stretch of a tongue is the tongue (on a tune photo brightened by a gamma
    of 0.8, half the dog's tongue fell under pink's saturation floor and the other half
    was taken alone)."""
    pale = np.zeros(region.shape, bool)
    for colour in TYPICAL_COLOURS[part]:
        rng = COLOR_RANGES[colour]
        pale |= replace(rng, s_min=rng.s_min / 2).match(colours)
    # paler, so no darker than most of the region (the gums round a tongue are darker)
    light = colours[..., 2] >= np.percentile(colours[..., 2][region], 25)
    near = (pale & light & inside) | region
    _, labels = cv2.connectedComponents(near.astype(np.uint8), connectivity=8)
    keep = np.unique(labels[region])
    return _filled(np.isin(labels, keep[keep > 0]))


def part_within(rgb: np.ndarray, whole: np.ndarray, part: str, every: bool = False,
                grow: float = GROW) -> np.ndarray | None:
    """The largest region of ``part``'s colours inside ``whole`` (bool, full size), or
    with ``every`` all regions at least ``KIN_SIZE`` of the largest ("the leaves"); None
    when there is none of a plausible size. ``whole`` is grown by ``grow`` (a share of
    its larger side; 0 for a salient mask, whose halo is the background's colour)."""
    ys, xs = np.nonzero(whole)
    if ys.size == 0:
        return None
    h, w = whole.shape
    pad = int(max(grow, 0.02) * max(ys.max() - ys.min(), xs.max() - xs.min()))
    y0, y1 = max(0, ys.min() - pad), min(h, ys.max() + pad + 1)
    x0, x1 = max(0, xs.min() - pad), min(w, xs.max() + pad + 1)
    crop = rgb[y0:y1, x0:x1, :3]
    small = shrink(crop, WORK_SIDE)
    sh, sw = small.shape[:2]
    inside = cv2.resize(whole[y0:y1, x0:x1].astype(np.uint8), (sw, sh),
                        interpolation=cv2.INTER_NEAREST)
    if grow > 0:
        k = max(1, int(grow * max(sh, sw)))
        inside = cv2.dilate(inside, np.ones((2 * k + 1, 2 * k + 1), np.uint8))
    inside = inside > 0
    colours = hsv(small)
    match = np.zeros((sh, sw), bool)
    for colour in TYPICAL_COLOURS[part]:
        match |= COLOR_RANGES[colour].match(colours)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    match = cv2.morphologyEx((match & inside).astype(np.uint8), cv2.MORPH_OPEN, kernel)
    match = cv2.morphologyEx(match, cv2.MORPH_CLOSE, kernel)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(match, 8)
    if count <= 1:
        return None
    areas = stats[1:, cv2.CC_STAT_AREA]
    best = 1 + int(np.argmax(areas))
    keep = [1 + i for i, a in enumerate(areas) if a >= KIN_SIZE * areas.max()] if every \
        else [best]
    region = _joined(np.isin(labels, keep), colours, part, inside)
    share = region.sum() / max(1, int(inside.sum()))
    if not SHARE[0] <= share <= SHARE[1]:
        return None
    # glints on a wet tongue or a glossy leaf are paler than its colour: a bright,
    # pale pixel touching the region joins it
    if grow > 0:        # (not inside a salient twig: its pale blossoms are no glint)
        glint = (colours[..., 1] <= 0.35) & (colours[..., 2] >= 0.6) & inside
        near = cv2.dilate(region.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
        region = _filled(region | (glint & near))
    region = smooth_resize(region, (y1 - y0, x1 - x0))
    out = np.zeros((h, w), bool)
    out[y0:y1, x0:x1] = region
    return out


def find_part(locate: Callable[[np.ndarray, str], Localization], rgb: np.ndarray,
              whole: str, part: str) -> Localization:
    """"the dog's tongue": ``locate`` the whole ("the dog"), then its part by colour
    (``part_within``); the part is never surer than ``SURE`` nor than its whole."""
    owner = locate(rgb, f"the {whole}")
    # a whole known but for where it ends (``assurance``) still holds its part
    sure_of_it = owner.status == "resolved" or (
        owner.status == "ambiguous" and owner.masks
        and owner.masks[0].evidence.get("end_unsure"))
    if not sure_of_it or not owner.masks:
        return Localization([], "unresolved", f"{part} of the {whole}: the {whole} itself "
                            f"was not found for sure ({owner.reason})",
                            candidates=owner.candidates)
    colours = " or ".join(TYPICAL_COLOURS[part])
    region = part_within(rgb, owner.masks[0].mask, part)
    if region is None:
        return Localization([], "unresolved", f"no {colours} part of the {whole} to be its "
                            f"{part} (a {part} is {colours}); paint it with the brush")
    score = round(min(SURE, owner.masks[0].score), 3)
    return Localization([Candidate(region, score, part, "part:colour",
                                   {"whole": owner.masks[0].score, "colour": 1.0})],
                        "resolved", f"{part}: a part of the {whole}, usually {colours}; "
                        f"found the {whole} ({owner.reason}) and took its {colours} part, "
                        f"confidence {score:.2f}")
