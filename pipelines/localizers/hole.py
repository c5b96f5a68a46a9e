"""Whether an outline holds all of the thing the classifier names: the photo around it
with the outline greyed out should no longer read as that kind.

The classifier says what a crop shows, not where it ends: a weak dog read as a Samoyed
close and wide had its outline stop short of its body (IoU 0.77), a salient guess at a
castle took its keep and left the walls below, a cheetah's guess took its head and chest
and left its body lying in the grass. In each case the crop around the outline, with the
outline's pixels (grown a little) painted mid-grey, still shows the rest of the thing,
and the classifier still reads the kind there: the Samoyed's body, the castle's walls
(castle 0.88), the cheetah's flank (0.53). Where the outline holds the whole thing, what
is left is its ground (a branch, leaves, grass: a gibbon 0.004, a hedgehog 0.001, a
koala 0.14, a butterfly 0.14).

``left_over`` is that reading: the share of ``kinds`` the classifier gives the crop
around ``mask`` (its box grown by ``AROUND`` of its long side each way: a narrow outline
cut out of a wide thing leaves the rest of it beside, not above) once the outline is
greyed out. It is a second, independent check of the extent: it can fail (the share is
high) on exactly the outlines that stop inside the thing.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.localizers.base import mask_box
from pipelines.perception import imagenet

#: the crop around the outline: its box grown by this share of its long side each way
AROUND = 0.3
#: the outline is grown by this share of the crop's long side before it is greyed out (its
#: edge pixels, half thing and half ground, would keep a trace of the thing)
GROW = 0.03


def left_over(rgb: np.ndarray, mask: np.ndarray, kinds: frozenset[int]) -> float | None:
    """The share of ``kinds`` (ImageNet classes) in the crop around ``mask`` with the
    outline greyed out (module doc); None for an empty or a tiny outline."""
    box = mask_box(mask)
    if box is None or not kinds:
        return None
    x0, y0, x1, y1 = box
    h, w = mask.shape[:2]
    d = round(AROUND * max(y1 - y0, x1 - x0))     # a narrow outline's sides as far
    rows, cols = slice(max(0, y0 - d), min(h, y1 + d)), slice(max(0, x0 - d), min(w, x1 + d))
    crop = np.ascontiguousarray(rgb[rows, cols, :3]).copy()
    if min(crop.shape[:2]) < 8:
        return None
    held = mask[rows, cols].astype(np.uint8)
    k = max(3, round(GROW * max(held.shape)))
    crop[cv2.dilate(held, np.ones((k, k), np.uint8)) > 0] = 127
    return imagenet.named_share(imagenet.probabilities(crop), kinds)
