"""The ground along the bottom of a landscape ("the grass", "the meadow", "the field"),
read twice (issue 32: an answer that holds, or a question).

``ground`` reads it column by column: up from the bottom edge while the colour stays
within ``SAME_GROUND`` of the bottom band's, then a little further while a pixel is
nearer that colour than the land above it. A field whose near part differs from its far
part (pale seed heads in front, darker grass behind) stops at a ragged line in the middle
of the grass, and whether the photo's skyline read as clear (mirrored, the same
Chambord lawn resolved at IoU 0.28) decided whether that answer was edited.

``grown_ground`` reads it another way: the pixels whose colour lies within ``GROWN_SPREAD``
of the bottom band's own spread of colours (a Mahalanobis distance, the spread widened by
``GROWN_FLOOR`` Lab so a flat band still admits texture), kept where they connect to
the bottom band. ``agreement`` of the two is the evidence: where they differ by more than
``GROUND_AGREE`` the ground's edge is not where the photo puts it and the answer is asked
(both readings offered to click), never edited unasked.

``edged_ground``: where the second reading ends at a straight line across the photo
(a lawn's far edge) and the first lies inside what is in front of it, the ground is all
of that, however its colour turns on the way (weeds, seed heads). ``frame_ground``: with
no sky and no skyline, the ground read over the whole frame from its bottom band and from
its top band (a lawn round a rabbit seen from above).

``in_front`` is what lies in front of a field or a lake (used by "the hills").
"""

from __future__ import annotations

import cv2
import numpy as np

#: a field or a lake in front of the hills spans this share of the width: then what lies
#: under its top edge is in front of the hills too
SPANS = 0.6
#: ... and its top edge at a column is at most this share of the height under the line
#: fitted to the edge
EDGE_DROP = 0.03
#: the ground's colour is read on this share of the height along the bottom edge, and
#: pixels this close to it (Lab, blurred) are ground
BOTTOM_BAND, SAME_GROUND = 0.06, 12.0
#: the ground then reaches up to this share of the height further while its pixels are
#: nearer its colour than the colour of the land above
ABOVE = 0.04


def bottom_band(land: np.ndarray) -> np.ndarray:
    """The land within ``BOTTOM_BAND`` of the height (2 rows at least) of the bottom edge:
    where both readings of the ground learn its colour."""
    band = land.copy()
    band[:land.shape[0] - max(2, int(BOTTOM_BAND * land.shape[0]))] = False
    return band


def ground(small: np.ndarray, land: np.ndarray) -> np.ndarray:
    """The land along the bottom edge of the bottom rows' colour: per column, the run
    up from the bottom edge of pixels within ``SAME_GROUND`` (Lab, on a blurred copy) of
    the bottom band's median colour."""
    h, w = land.shape
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0).astype(np.float32) / 255.0,
                       cv2.COLOR_RGB2Lab)
    band = bottom_band(land)
    if not band.any():
        return np.zeros((h, w), bool)
    ref = np.median(lab[band], axis=0)
    near = (np.linalg.norm(lab - ref, axis=2) <= SAME_GROUND) & land
    near = cv2.morphologyEx(near.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((5, 1), np.uint8))
    # per column, from the bottom up to the first pixel of another colour; the tops
    # median-filtered along the row so that a dark tree trunk does not lift the edge
    run = np.flip(np.minimum.accumulate(np.flip(near > 0, 0), axis=0), 0)
    tops = (h - run.sum(axis=0)).astype(np.uint8)
    tops = cv2.medianBlur(tops[None, :], 9)[0] if w >= 9 else tops
    # then up while a pixel is nearer the ground's colour than the colour of the land
    # above it (the far edge of a field is darker than its front, but no hill)
    rows = np.arange(h)[:, None]
    lift = max(2, int(ABOVE * h))
    above = land & (rows < tops[None, :] - lift) & (rows >= tops[None, :] - 3 * lift)
    if above.sum() >= 20:
        other = np.median(lab[above], axis=0)
        closer = (np.linalg.norm(lab - ref, axis=2) < np.linalg.norm(lab - other, axis=2)) \
            & land
        for _ in range(lift * 2):
            up = np.clip(tops.astype(int) - 1, 0, h - 1)
            step = closer[up, np.arange(w)] & (tops > 0)
            if not step.any():
                break
            tops = np.where(step, up, tops).astype(np.uint8)
        tops = cv2.medianBlur(tops[None, :], 9)[0] if w >= 9 else tops
    out = rows >= tops[None, :]
    return out & land


def in_front(part: np.ndarray) -> np.ndarray:
    """``part`` (a field or a lake along the bottom) and what lies in front of it: per
    column, everything under its top edge, the edge carried across the columns it misses
    (a patch of weeds in a corner of the field is not the hills behind it; tune: "the
    green hills brighter" brightened one). ``part`` itself where it spans less than
    ``SPANS`` of the width."""
    h, w = part.shape
    has = part.any(axis=0)
    if has.mean() < SPANS:
        return part
    cols = np.arange(w)
    tops = np.interp(cols, cols[has], part.argmax(axis=0)[has])
    # a column whose top lies far under the edge's line (weeds standing in the field,
    # with a strip of the field's colour under them, even in a corner) takes the line's
    line = np.polyval(np.polyfit(cols, tops, 1), cols)
    for _ in range(2):      # refit on the columns near the line (the edge may slope)
        near = np.abs(tops - line) <= EDGE_DROP * h
        if near.sum() < 2:
            break
        line = np.polyval(np.polyfit(cols[near], tops[near], 1), cols)
    tops = np.minimum(tops, line + EDGE_DROP * h)
    return part | (np.arange(h)[:, None] >= np.ceil(tops)[None, :])


#: ``grown_ground``: the colour model's reach (Mahalanobis distance), its spread's floor
#: (Lab), and the blur (px at the scene's work size) its colours are read through
GROWN_SPREAD, GROWN_FLOOR, GROWN_BLUR = 2.5, 2.0, 5
#: the two readings agree by this IoU or more, or the ground is asked (tune, each case on
#: its plain, mirrored, lighter, darker and cropped prints: right meadows and a ploughed
#: field agree by 0.88-0.99, and one field, darker, by 0.60; lawns cut along a line
#: through the grass, a lawn under a hedge and a rabbit's blurred grass 0.21-0.80, and one
#: cropped lawn wrong both ways, 0.88)
GROUND_AGREE = 0.85


def grown_ground(small: np.ndarray, land: np.ndarray, trim: float | None = None
                 ) -> np.ndarray:
    """The land connected to the bottom band whose colours lie within ``GROWN_SPREAD`` of
    the band's (module doc); bool, ``small``'s size. With ``trim``, the band's colours
    farther than that (Lab) from its median are left out of the spread (what stands on
    the bottom edge: a rabbit's white feet)."""
    h, w = land.shape
    band = bottom_band(land)
    if band.sum() < 4:
        return np.zeros((h, w), bool)
    blurred = cv2.GaussianBlur(small, (GROWN_BLUR, GROWN_BLUR), 0)
    lab = cv2.cvtColor(blurred.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    samples = lab[band]
    if trim is not None:
        kept = np.linalg.norm(samples - np.median(samples, axis=0), axis=1) <= trim
        samples = samples[kept] if kept.sum() >= 4 else samples
    spread = np.cov(samples.T) + np.eye(3) * GROWN_FLOOR ** 2
    offset = lab - np.median(samples, axis=0)
    distance = np.sqrt(np.einsum("hwi,ij,hwj->hw", offset, np.linalg.inv(spread), offset))
    near = ((distance <= GROWN_SPREAD) & land).astype(np.uint8)
    near = cv2.morphologyEx(near, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    _, labels = cv2.connectedComponents(near, connectivity=4)
    touching = np.unique(labels[band & (near > 0)])
    out = np.isin(labels, touching[touching > 0]).astype(np.uint8)
    return (cv2.morphologyEx(out, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8)) > 0) & land


def agreement(a: np.ndarray, b: np.ndarray) -> float:
    """IoU of two bool maps (1.0 when both are empty)."""
    union = int(np.count_nonzero(a | b))
    return 1.0 if union == 0 else int(np.count_nonzero(a & b)) / union


#: a lawn's far edge seen from in front of it is a straight line (the foot of a hedge, a
#: wall or a far bank): where the second reading spans ``EDGE_SPAN`` of the width and its
#: top edge keeps within ``STRAIGHT`` of the height of a line fitted to it (90th
#: percentile of the columns' distances), the ground is all that lies in front of that
#: line, however its colour turns on the way (tune: Chambord's lawn, pale seed heads and
#: weeds in front of the grass, 0.005, the lawn in front of it IoU 0.99 where both
#: readings stopped short, 0.28 and 0.79; meadows and a ploughed field 0.007-0.011; a
#: lawn under a hedge and a strip of grass before a pyramid, cut by the hedge's and the
#: path's ragged feet, 0.032-0.033: not straight, still asked)
EDGE_SPAN, STRAIGHT = 0.9, 0.015
#: ... and the column reading lies this much inside what is in front of the line (it
#: stopped short of the edge, it did not climb past it onto a hedge)
INSIDE = 0.95


def straightness(part: np.ndarray) -> float:
    """How far the top edge of ``part`` (bool) strays from a straight line fitted to it:
    the 90th percentile of its columns' distances from the line, a share of the height
    (1.0 where it spans under ``EDGE_SPAN`` of the width)."""
    h, w = part.shape
    has = part.any(axis=0)
    if has.mean() < EDGE_SPAN:
        return 1.0
    cols = np.arange(w)[has]
    tops = part.argmax(axis=0)[has]
    line = np.polyval(np.polyfit(cols, tops, 1), cols)
    return float(np.percentile(np.abs(tops - line), 90)) / h


def edged_ground(first: np.ndarray, second: np.ndarray, land: np.ndarray) -> np.ndarray | None:
    """The land in front of the second reading's straight far edge (``STRAIGHT``) when the
    first reading lies inside it (``INSIDE``); ``None`` when the edge is not straight or
    the first reading runs past it."""
    if straightness(second) > STRAIGHT:
        return None
    front = in_front(second) & land
    if first.any() and np.count_nonzero(first & front) < INSIDE * np.count_nonzero(first):
        return None
    return front


def under_the_land(front: np.ndarray, land: np.ndarray) -> bool:
    """Whether ``front``'s top edge lies inside the land, under the skyline, in
    ``EDGE_SPAN`` of the columns (by ``ABOVE`` of the height or more): then a straight far
    edge, not the skyline, draws where the ground ends, however unclear the skyline."""
    h = land.shape[0]
    has = front.any(axis=0) & land.any(axis=0)
    below = front.argmax(axis=0) - land.argmax(axis=0) >= ABOVE * h
    return bool(has.any() and (below & has).sum() >= EDGE_SPAN * land.shape[1])


#: the ground fills the frame (grass round a rabbit or a sheep seen from above it, no sky)
#: when its reading from the bottom band covers this share of the top band too; read with
#: the band's colours this far (Lab) from its median left out (a subject standing on the
#: bottom edge: with a rabbit's white feet in the band its lawn took 800 px of its white
#: chest at 256 px, and "make the grass greener" changed them)
FILLS, FRAME_TRIM = 0.5, 20.0


def frame_ground(small: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Where no sky is found and no skyline splits the photo, the ground may fill the frame:
    its colour-spread reading (``grown_ground``) from the bottom band over the whole frame,
    when it covers ``FILLS`` of the top band, and the same reading learned from the top
    band (the evidence: where the two agree, the same ground lies at both edges and all
    round what stands on it). ``None`` when the reading does not reach the top."""
    full = np.ones(small.shape[:2], bool)
    up = grown_ground(small, full, FRAME_TRIM)
    if float(up[bottom_band(full)[::-1]].mean()) < FILLS:
        return None
    return up, grown_ground(np.ascontiguousarray(small[::-1]), full, FRAME_TRIM)[::-1]
