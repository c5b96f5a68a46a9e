"""A thing known by its shape, found inside the salient subject (issue 34): "the water
drop" on a grass blade is the round part of what stands out, not the blade it hangs on.

For some nouns what the eyes can check is their shape. The **round part** of a mask is
the largest disc inside it (its distance transform's peak), kept when the mask's outline
runs round that disc close to its rim over most of the turn (``ROUND_TURN`` of the rays
from its centre end within ``RIM`` of its radius) and the disc is a part of the mask, not
all of it (``PART``). A blade, a twig or a hand the round thing sits on leaves the disc in
a few directions only; a mask with no round part (a leaf, a hand) has none, and neither
has one round as a whole (a bowl holding a fig). ``stand_in`` uses it for round nouns.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.localizers.refine import upsample_edge

#: long side of the copy of the subject's box the shape is read on
WORK_SIDE = 256
#: a ray from the disc's centre ends within this multiple of its radius at the rim
RIM = 1.3
#: at least this share of the rays must end at the rim: the outline is round
ROUND_TURN = 0.7
#: rays cast round the disc's centre
RAYS = 72
#: the round part is at least this many work pixels across (else it is a speck)
LEAST_RADIUS = 4.0
#: and a part: its disc is at most this share of the mask (a mask round as a whole, a
#: bowl or a plate, is not narrowed: the whole may be the round thing or hold it)
PART = 0.5


def round_part(rgb: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The round part of ``mask`` (module doc), its edge decided at ``rgb``'s resolution,
    with the share of the turn whose rays end at the rim.

    Args:
        rgb: uint8 (H, W, 3), the photo.
        mask: bool (H, W), one subject.

    Returns:
        (bool mask at ``mask``'s size, roundness in [0, 1]) or None when no part of the
        mask is round.
    """
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return None
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    k = WORK_SIDE / max(y1 - y0, x1 - x0)
    size = (max(1, round((x1 - x0) * k)), max(1, round((y1 - y0) * k)))
    small = cv2.resize(mask[y0:y1, x0:x1].astype(np.uint8), size,
                       interpolation=cv2.INTER_AREA)
    small = np.pad(small, 2)
    dist = cv2.distanceTransform(small, cv2.DIST_L2, 5)
    radius = float(dist.max())
    if radius < LEAST_RADIUS:
        return None
    if np.pi * radius * radius > PART * float(small.sum()):
        return None
    cy, cx = np.unravel_index(int(np.argmax(dist)), dist.shape)
    # where each ray from the centre leaves the mask, as a multiple of the radius
    steps = np.arange(0.0, 3.0 * radius, 0.5)
    angles = np.linspace(0.0, 2 * np.pi, RAYS, endpoint=False)
    ry = np.clip((cy + np.outer(np.sin(angles), steps)).round().astype(int), 0,
                 small.shape[0] - 1)
    rx = np.clip((cx + np.outer(np.cos(angles), steps)).round().astype(int), 0,
                 small.shape[1] - 1)
    inside = small[ry, rx] > 0
    ends = np.where(inside.all(axis=1), steps[-1], steps[np.argmin(inside, axis=1)])
    roundness = float(np.mean(ends <= RIM * radius))
    if roundness < ROUND_TURN:
        return None
    yy, xx = np.mgrid[:small.shape[0], :small.shape[1]]
    disc = (small > 0) & (np.hypot(yy - cy, xx - cx) <= radius)
    part = cv2.GaussianBlur(disc[2:-2, 2:-2].astype(np.float32), (3, 3), 0)
    out = np.zeros(mask.shape, bool)
    # the edge decided at native resolution, as the subject's was
    out[y0:y1, x0:x1] = upsample_edge(rgb[y0:y1, x0:x1, :3], part)
    return out, roundness
