"""What the critic's detector route sees, as boxes on the work copy, and the geometry it
reads them with (``agent.brain.independent``).

One instance may be seen twice: by the detector on the whole frame and again on a zoomed
crop around what changed. The two views' boxes of it often differ (the crop saw a toucan
without its tail, the frame with it; the frame saw a sailboat's hull, the crop the hull
and its sail). ``dedupe`` keeps the surer box of each instance; ``views_of`` gives back the
boxes it dropped as the same instance, so that the checks can read the thing's extent as
either view saw it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipelines.localizers.fusion import box_iou as iou
from pipelines.localizers.fusion import inside_share as inside

#: a weaker box this much inside a better one of its class is a part of it
PART_OF = 0.6
#: two boxes of one class overlapping this much (IoU), or one lying this much inside the
#: other, are one instance
SAME_IOU, SAME_INSIDE = 0.5, 0.8


@dataclass
class Seen:
    """One thing detected in the before image (work-copy pixels)."""

    label: str
    box: tuple[float, float, float, float]
    score: float
    kind: str   # "object" | "face" | "text"

    @property
    def area(self) -> float:
        return max(1.0, (self.box[2] - self.box[0]) * (self.box[3] - self.box[1]))


def box_mask(shape: tuple[int, int], box: tuple[float, ...], grow: int = 0) -> np.ndarray:
    """``box`` (x0, y0, x1, y1) grown by ``grow`` px as a bool mask of ``shape``."""
    h, w = shape
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    m = np.zeros(shape, bool)
    m[max(0, y0 - grow):min(h, y1 + grow), max(0, x0 - grow):min(w, x1 + grow)] = True
    return m


def one_instance(a: Seen, b: Seen) -> bool:
    """Whether boxes ``a`` and ``b`` are one instance (``SAME_IOU``, ``SAME_INSIDE``)."""
    return iou(a.box, b.box) >= SAME_IOU or inside(a.box, b.box) >= SAME_INSIDE \
        or inside(b.box, a.box) >= SAME_INSIDE


def dedupe(items: list[Seen]) -> list[Seen]:
    """One box per instance: the best of boxes that overlap, and no weaker box lying
    mostly inside a better one, kept or not (the zoomed crop's wheel of a motorcycle the
    frame saw is no third, leftmost motorcycle)."""
    kept: list[Seen] = []
    ranked = sorted(items, key=lambda s: -s.score)
    for i, s in enumerate(ranked):
        if not any(one_instance(s, k) for k in kept) and \
                all(inside(s.box, b.box) < PART_OF for b in ranked[:i]):
            kept.append(s)
    return kept


def views_of(items: list[Seen], picked: list[Seen]) -> list[Seen]:
    """The boxes of ``items`` that ``dedupe`` dropped as one of the ``picked`` instances
    (another view's box of the same thing; its parts are left out: they add nothing)."""
    return [s for s in items if all(s is not p for p in picked) and any(
        one_instance(s, p) and inside(s.box, p.box) < SAME_INSIDE for p in picked)]
