"""Box → pixel mask, as pure functions: the embedded perception's refinement step.

``refine_box`` crops the box with a margin at native resolution, works on a small copy
(a salient-object map seeds GrabCut) and brings the mask back to full resolution inside
the box only, so a 20-MP photo costs about what a 256-px crop does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import cv2
import numpy as np

from pipelines.perception.detectors import shrink

log = logging.getLogger(__name__)


def refine_box(rgb: np.ndarray, box: tuple[float, ...],
               saliency: Callable[[np.ndarray], np.ndarray], side: int = 256) -> np.ndarray:
    """A pixel mask of the object in ``box``: ``saliency`` on the crop seeds GrabCut.

    Args:
        rgb: uint8 RGB image at full resolution.
        box: (x0, y0, x1, y1) in full-resolution pixels.
        saliency: crop → float map in [0, 1] at the crop's size.
        side: long side of the working copy of the crop.

    Returns:
        A bool mask at the image's size, True only inside ``box`` (the whole box when
        nothing inside stands out).
    """
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    full = np.zeros((h, w), bool)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return full
    pad = max(4, (x1 - x0 + y1 - y0) // 16)
    cx0, cy0, cx1, cy1 = max(0, x0 - pad), max(0, y0 - pad), min(w, x1 + pad), \
        min(h, y1 + pad)
    crop = shrink(rgb[cy0:cy1, cx0:cx1], side)
    s = crop.shape[1] / (cx1 - cx0)
    inner = (int((x0 - cx0) * s), int((y0 - cy0) * s),
             max(int((x0 - cx0) * s) + 1, int(round((x1 - cx0) * s))),
             max(int((y0 - cy0) * s) + 1, int(round((y1 - cy0) * s))))
    soft = grabcut_seeded(crop, inner, saliency(crop))
    mask = cv2.resize(soft.astype(np.float32), (cx1 - cx0, cy1 - cy0),
                      interpolation=cv2.INTER_LINEAR) >= 0.5
    full[cy0:cy1, cx0:cx1] = mask
    full[:y0], full[y1:], full[:, :x0], full[:, x1:] = False, False, False, False
    if not full.any():
        full[y0:y1, x0:x1] = True
    return full


def grabcut_seeded(crop: np.ndarray, inner: tuple[int, int, int, int],
                    prob: np.ndarray) -> np.ndarray:
    """GrabCut on a crop: outside the box is background, inside it the salient map says
    probably-foreground or probably-background. Falls back to the salient map (or the
    box) when GrabCut degenerates.

    Args:
        crop: uint8 RGB working copy.
        inner: the object's box in crop pixels.
        prob: salient-object probability at the crop's size.

    Returns:
        A bool foreground mask at the crop's size, inside ``inner``.
    """
    x0, y0, x1, y1 = inner
    box = np.zeros(crop.shape[:2], bool)
    box[y0:y1, x0:x1] = True
    seed = np.full(crop.shape[:2], cv2.GC_BGD, np.uint8)
    seed[box] = np.where(prob[box] >= 0.5, cv2.GC_PR_FGD, cv2.GC_PR_BGD)
    seed[box & (prob >= 0.9)] = cv2.GC_FGD
    area = box.sum()
    salient = (prob >= 0.5) & box
    if salient.sum() < 0.05 * area:          # the salient map missed it: box prior only
        seed[box] = cv2.GC_PR_FGD
    try:
        bgd, fgd = np.zeros((1, 65)), np.zeros((1, 65))
        cv2.grabCut(cv2.cvtColor(crop, cv2.COLOR_RGB2BGR), seed, None, bgd, fgd, 3,
                    cv2.GC_INIT_WITH_MASK)
        fg = ((seed == cv2.GC_FGD) | (seed == cv2.GC_PR_FGD)) & box
    except cv2.error as exc:
        log.info("GrabCut failed: %s", exc)
        fg = salient
    if not 0.05 <= fg.sum() / max(1, area) <= 0.98:
        fg = salient if 0.05 <= salient.sum() / max(1, area) else box
    return largest_parts(fg)


def largest_parts(mask: np.ndarray, keep: float = 0.1) -> np.ndarray:
    """Drop specks.

    Args:
        mask: bool mask.
        keep: a component stays when its area is at least this fraction of the largest.

    Returns:
        The mask without the smaller components.
    """
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), 8)
    if count <= 2:
        return mask
    areas = stats[1:, cv2.CC_STAT_AREA]
    return np.isin(labels, np.nonzero(areas >= keep * areas.max())[0] + 1)


def face_ellipse(shape: tuple[int, int], box: tuple[float, ...]) -> np.ndarray:
    """A face box as the ellipse inscribed in it, a little taller (BlazeFace's box stops
    at the brows; the forehead is part of the face).

    Args:
        shape: (height, width) of the image.
        box: the face box in full-resolution pixels.

    Returns:
        A bool mask of the ellipse.
    """
    x0, y0, x1, y1 = box
    mask = np.zeros(shape, np.uint8)
    centre = (int(round((x0 + x1) / 2)), int(round((y0 + y1) / 2 - 0.03 * (y1 - y0))))
    axes = (max(1, int(round((x1 - x0) * 0.5))), max(1, int(round((y1 - y0) * 0.58))))
    cv2.ellipse(mask, centre, axes, 0, 0, 360, 1, -1)
    return mask.astype(bool)
