"""Whether the region found for a noun shows that kind of thing, by ImageNet's 1000 kinds.

The detector knows 80 classes. For any other noun the localiser takes the photo's main
subject, and without more it can only ask ("nothing here recognises 'squirrel'"). ImageNet's
classes are WordNet synsets, so the lexicon knows which of them a noun covers
(``wordnet.Lexicon.imagenet``); ``pipelines.perception.imagenet`` says how much of a
crop's probability falls on them. When most of it does (``NAMED_SURE``), the region is
that kind of thing, and the answer says so (``confirm``); ``assurance`` then lets it stand.
A noun ImageNet has no class under ("kingfisher", "kitten") is not checked, and asks as
before.
"""

from __future__ import annotations

import logging

import numpy as np

from pipelines.localizers.base import Localization

log = logging.getLogger(__name__)

#: the share of a crop's ImageNet probability on the noun's classes that confirms it
#: (tune: a gibbon 0.98, a meerkat 0.64-0.73 on the whole photo; ...)
NAMED_SURE = 0.5
#: the kinds of noun checked: an animal's body is the salient subject, where a castle's or
#: a cliff's salient region is only a part of it (tune: ImageNet sure of both, the regions
#: at IoU 0.32 and 0.57 of theirs)
CHECKED = ("animal",)
#: the crop round the region's box, as a share of the box's larger side on each side
MARGIN = 0.1
#: two detector boxes are apart (``several``) when they overlap less than this (IoU) and
#: neither lies this much inside the other
APART_IOU, INSIDE = 0.3, 0.7


def imagenet_share(rgb: np.ndarray, mask: np.ndarray, noun: str) -> float | None:
    """The share of the ImageNet probability of the crop round ``mask`` that falls on the
    classes ``noun`` covers; None when it covers none or the classifier is not installed."""
    from pipelines.operations.wordnet import lexicon

    words = lexicon()
    classes = words.imagenet(noun) if words is not None else frozenset()
    if not classes or not mask.any():
        return None
    from pipelines.perception.imagenet import WEIGHTS, named_share, probabilities
    from pipelines.perception.store import WeightsMissing, model_path

    try:
        model_path(WEIGHTS)
    except WeightsMissing as err:
        log.info("ImageNet kinds unavailable (%s): '%s' is not checked", err, noun)
        return None
    y0, x0, y1, x1 = _box(mask)
    pad = int(MARGIN * max(y1 - y0, x1 - x0))
    h, w = mask.shape[:2]
    crop = rgb[max(0, y0 - pad):min(h, y1 + pad), max(0, x0 - pad):min(w, x1 + pad)]
    if min(crop.shape[:2]) < 16:
        return None
    return named_share(probabilities(crop), classes)


def scaled(box: tuple[float, ...], k: float) -> tuple[float, float, float, float]:
    """A box ``(x0, y0, x1, y1)`` found on a copy ``k`` times smaller, at full size."""
    return (box[0] * k, box[1] * k, box[2] * k, box[3] * k)


def _box(mask: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(mask)
    return int(ys.min()), int(xs.min()), int(ys.max()) + 1, int(xs.max()) + 1


def several(mask: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> bool:
    """Whether two detector boxes ``(x0, y0, x1, y1)`` within the region are apart
    (``APART_IOU``, ``INSIDE``): the detector may not know the kind (three meerkats read
    as dogs, cows and bears), but it draws one box round each, where one animal's boxes
    nest (a gibbon's whole body, and a bird box on its foot)."""
    y0, x0, y1, x1 = _box(mask)
    within = []
    for b in boxes:
        ix = max(0.0, min(b[2], x1) - max(b[0], x0))
        iy = max(0.0, min(b[3], y1) - max(b[1], y0))
        area = max(1.0, (b[2] - b[0]) * (b[3] - b[1]))
        if ix * iy >= 0.5 * area:
            within.append((b, area))
    for i, (a, area_a) in enumerate(within):
        for b, area_b in within[i + 1:]:
            ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
            iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
            inter = ix * iy
            if inter / (area_a + area_b - inter) < APART_IOU and \
                    inter / min(area_a, area_b) < INSIDE:
                return True
    return False


def confirm(rgb: np.ndarray, found: Localization, noun: str,
            boxes: list[tuple[float, float, float, float]]) -> Localization:
    """``found`` (a resolved guess of the main subject) with ``imagenet`` evidence on its
    region when ``noun`` is of a ``CHECKED`` kind, ImageNet's classes under it take
    ``NAMED_SURE`` of the region or more and the detector's ``boxes`` (full-resolution) do
    not show ``several`` things in it."""
    from pipelines.operations.wordnet import lexicon

    words = lexicon()
    sense = words.sense(noun) if words is not None else None
    if found.status != "resolved" or not found.masks or sense is None or \
            sense.category not in CHECKED:
        return found
    top = found.masks[0]
    mask = top.mask > 0.5 if top.mask.dtype != bool else top.mask
    share = imagenet_share(rgb, mask, noun)
    if share is None or share < NAMED_SURE:
        return found
    if several(mask, boxes):
        found.reason += f"; it looks like {noun}s, more than one"
        return found
    top.evidence["imagenet"] = round(share, 3)
    found.reason += f"; it looks like a {noun} ({share:.0%} of ImageNet's kinds)"
    return found
