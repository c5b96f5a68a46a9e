"""Another thing of the same kind inside the named one's box: did the outline take it?

A detector sometimes draws one box around two touching things of the same kind (two
buses side by side, the near one's box stretched over the far one's flank), while it
also sees the far one on its own. ``fusion.check_extent`` cannot catch this: the
neighbour lies inside the named thing's own box, so nothing the mask takes there lies
"beyond its box". Of the same colour and touching, the cut-out then runs into the
neighbour and an edit paints part of it.

The evidence is the neighbour's own box: a part the detector saw of the named thing lies
inside the named thing's outline (a bus's front seen as "a bus" on its own), while a
neighbour sticks out of it. When the outline covers a real share of such a box that
sticks out, which pixels are whose is not known, and the answer is a question.
"""

from __future__ import annotations

import numpy as np

from pipelines.localizers.base import mask_box
from pipelines.localizers.fusion import box_iou, inside_share
from pipelines.perception.detectors import Detection

#: a detection of the named class at this score or more is a thing of that kind
KIN_SCORE = 0.3
#: boxes overlapping more than this (IoU) are the same thing seen twice
SAME_THING = 0.5
#: a neighbour's box sticks out of the outline's bounding box by at least this share of
#: its width or height (a part of the thing itself lies inside it)
STICKS_OUT = 0.2
#: the outline takes at least this share of the neighbour's box
TAKEN = 0.12
#: how the answer that asks begins (no colour region then stands in for the thing found)
UNSURE_END = "unsure where the"


def reached_into_kin(mask: np.ndarray, box: tuple[float, ...], label: str,
                     seen: list[Detection]) -> str:
    """What the outline ``mask`` of the thing in ``box`` took of a neighbour of its kind.

    Args:
        mask: bool (H, W) outline of the named thing, in the photo's pixels.
        box: the named thing's box (x0, y0, x1, y1), the same pixels.
        label: the named class.
        seen: every detection of the photo (boxes in the same pixels).

    Returns:
        "" when no neighbour of the same kind was taken, else a sentence saying what was.
    """
    outline = mask_box(mask)
    if outline is None:
        return ""
    mx0, my0, mx1, my1 = outline
    h, w = mask.shape
    for det in seen:
        if det.label != label or det.score < KIN_SCORE or box_iou(det.box, box) >= SAME_THING:
            continue
        if inside_share(det.box, box) < 0.5:       # beside the box: check_extent's job
            continue
        x0, y0, x1, y1 = (int(round(v)) for v in det.box)
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
        bw, bh = x1 - x0, y1 - y0
        if bw <= 0 or bh <= 0:
            continue
        out = max(mx0 - x0, x1 - mx1, 0) / bw, max(my0 - y0, y1 - my1, 0) / bh
        if max(out) < STICKS_OUT:                   # inside the outline: a part of it
            continue
        taken = np.count_nonzero(mask[y0:y1, x0:x1]) / (bw * bh)
        if taken >= TAKEN:
            return (f"the outline takes {taken:.0%} of another {label} the detector sees "
                    f"({det.score:.2f}) touching it")
    return ""
