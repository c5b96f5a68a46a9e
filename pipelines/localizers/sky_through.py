"""The blue sky seen through foliage or a lattice, taken pixel by pixel (``sky.find_sky``
calls ``seen_through`` on the sky it found, at full resolution).

The sky found is a smooth region on a work copy of 512 px: a tree's crown against a clear
sky is textured there, and the many small pockets of sky seen through its leaves and
twigs, a few photo pixels each, stay out of it. ``sky_pockets`` counts them (``fringe``,
``canopy``, ``SPECKS_LEAST``) and asks when they are much of the sky; where they were
fewer the answer said "found" and left them out (tune: the giraffes' woodland on a darker
print, IoU 0.73, "a deeper blue" done on 73 % of the sky; the windmill's sky through its
sails' lattice, 0.83). Here they are taken, on a copy ``THROUGH_SIDE`` px long and then
at the photo's own pixels. A *pocket pixel* is

* blue (``sky._bluish``), in a row where the sky found is blue too: a grey or pale sky
  matches pale walls, snow and haze by colour (tune: the Golden Temple's white galleries,
  a snowy airfield's far hangars);
* of the sky's own colour in its row (``THROUGH_DE``, Lab; the rows under the sky take
  the colour of its lowest row);
* within ``THROUGH_REACH`` of the frame's long side from the sky found, and no lower than
  the sky reaches within that many columns: the sky goes on behind the crown; a lake or a
  river under the trees lies below the sky's own lowest row;
* inside a canopy: textured (fine texture over ``THROUGH_FINE`` times the sky's own, on a
  ``THROUGH_WIN`` px window) or within ``THROUGH_GROW`` px of such texture;
* framed: its connected patch of such pixels holds one whose window (``FRAME_WIN``) is
  ``THROUGH_FRAME`` or more of pixels far from the sky's colour (over ``THROUGH_FAR``),
  not blue and darker than the sky: leaves, twigs or struts seen against it. The blends
  along a white rocket's or lettering's edge are framed by something lighter. A band of
  hazy far buildings of the sky's tint under the horizon is of its colour all round; a
  blue thing in the sky (a cyan helicopter, its white lettering's edges blending to the
  sky's grey-blue) frames its own blends in blue.

The answer's evidence says what was taken (``through``, a share of the sky found), and
what was not: the pockets that pass every test but lie *below* the sky's lowest reach in
their columns (``below``, a share of the frame). Those are not taken (a
snowy airfield's blue-lit snow and far hangars lie there too), but where they are much of
the sky the sky goes on through the crowns below where it was found, and where it ends
is a question (``sky_pockets.pockets_unsure``, ``BELOW_ASK``).
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from pipelines.perception.detectors import shrink

#: the long side of the copy the pockets are found on (the fine texture's, ``FINE_SIDE``)
THROUGH_SIDE = 1024
#: the farthest a pocket lies from the sky found, as a share of the copy's long side
THROUGH_REACH = 0.1
#: a canopy: fine texture over this many times the sky's own (``sky_pockets.FRINGE_FINE``)
#: averaged over ``THROUGH_WIN`` px, grown by ``THROUGH_GROW`` px (a pocket wider than the
#: window is smooth inside)
THROUGH_FINE, THROUGH_WIN, THROUGH_GROW = 4.0, 9, 8
#: the largest Lab distance of a pocket pixel from the sky's colour in its row
#: (``sky_pockets.JOIN_DE``)
THROUGH_DE = 12.0
#: a patch is framed when one of its pixels has this share of its ``FRAME_WIN`` px window
#: over ``THROUGH_FAR`` (Lab) from the sky's colour and not blue (tune: the giraffes'
#: crowns and the windmill's lattice taken; a snowy airfield's hazy far hangars at its
#: horizon, of the dusk sky's blue-grey, not; the helicopter enlarged 4x, its lettering's
#: blends framed by its cyan body, not: 2,375 px beyond the sky's reach taken when blue
#: framing pixels counted, 276 at a share of 0.2, none at 0.3)
THROUGH_FRAME, THROUGH_FAR, FRAME_WIN = 0.3, 20.0, 15
#: the pockets are taken only when they are this share of the sky found or more (on the
#: copy): the sky seen through a canopy is many pockets (tune: the giraffes' crowns 0.07,
#: the windmill's lattice 0.03, a tree beside the Colosseum 0.015, beside the Sanchi stupa
#: 0.012), where a few blends of a thing's edges that pass for the sky's colour are not (a
#: helicopter enlarged 4x, a more saturated print of it: a line along a bar inside its
#: window, 471 px beyond the sky's reach, under 0.001)
THROUGH_LEAST = 0.005
#: the least sky (copy px) and pixels of a row it must hold to give that row's colour
LEAST_SKY, ROW_LEAST = 100, 8


def _row_colours(lab: np.ndarray, core: np.ndarray, blue: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """The sky's median Lab colour per row and whether that row of it is mostly blue, the
    rows without enough sky taking those of the nearest row above (or the first below)."""
    h = core.shape[0]
    ref, blue_row = np.zeros((h, 3), np.float32), np.zeros(h, bool)
    have = core.sum(axis=1) >= ROW_LEAST
    if not have.any():
        return None
    for r in np.flatnonzero(have):
        ref[r] = np.median(lab[r][core[r]], axis=0)
        blue_row[r] = blue[r][core[r]].mean() >= 0.5
    rows = np.maximum.accumulate(np.where(have, np.arange(h), 0))
    rows[: np.flatnonzero(have)[0]] = np.flatnonzero(have)[0]
    return ref[rows], blue_row[rows]


def _framed(candidates: np.ndarray, framed: np.ndarray) -> np.ndarray:
    """The connected patches of ``candidates`` holding a pixel framed ``THROUGH_FRAME`` or
    more (``framed``: the share of the window round it that is rim)."""
    if not candidates.any():
        return candidates
    _, labels = cv2.connectedComponents(candidates.astype(np.uint8), connectivity=8)
    keep = np.unique(labels[candidates & (framed >= THROUGH_FRAME)])
    return np.isin(labels, keep[keep > 0])


def pockets_through(small: np.ndarray, sky: np.ndarray, fine: np.ndarray,
                    bluish: Callable[[np.ndarray], np.ndarray]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The pocket pixels (module doc) of ``small`` (uint8 RGB, the copy) round ``sky``
    (bool, its size), given its fine texture ``fine``; with the sky's Lab colour per row
    and whether that row is blue (for ``seen_through``), and the pockets that pass the
    same tests under the sky's lowest reach in their columns (``below``, not taken); or
    None when there is no sky to read them by. ``bluish`` reads the blue pixels of an HSV
    copy (``sky._bluish``, passed in: sky imports this module)."""
    h, w = sky.shape
    if np.count_nonzero(sky) < LEAST_SKY:
        return None
    lab = cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    blue = bluish(cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2HSV))
    core = cv2.erode(sky.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    core = core if core.any() else sky
    rows = _row_colours(lab, core, blue)
    if rows is None:
        return None
    ref, blue_row = rows
    far = np.linalg.norm(lab - ref[:, None, :], axis=2)
    reach = max(3, int(THROUGH_REACH * max(h, w)))
    dist = cv2.distanceTransform((~sky).astype(np.uint8), cv2.DIST_L2, 5)
    lowest = np.where(sky.any(axis=0), h - 1 - np.argmax(sky[::-1], axis=0), -1)
    low_near = cv2.dilate(lowest.astype(np.float32)[None, :],
                          np.ones((1, 2 * reach + 1), np.uint8))[0]
    own = max(float(np.median(fine[core])), 0.3)
    canopy = cv2.blur(fine, (THROUGH_WIN, THROUGH_WIN)) > THROUGH_FINE * own
    grow = 2 * THROUGH_GROW + 1
    canopy = cv2.dilate(canopy.astype(np.uint8), np.ones((grow, grow), np.uint8)) > 0
    under = np.arange(h)[:, None] > low_near[None, :]
    candidates = (dist > 1.5) & (dist <= reach) & canopy & (far <= THROUGH_DE) & blue & \
        blue_row[:, None]
    rim = (far > THROUGH_FAR) & ~blue & (lab[..., 0] < ref[:, None, 0])
    framed = cv2.blur(rim.astype(np.float32), (FRAME_WIN, FRAME_WIN))
    return (_framed(candidates & ~under, framed), ref, blue_row,
            _framed(candidates & under, framed))


def seen_through(rgb: np.ndarray, mask: np.ndarray,
                 bluish: Callable[[np.ndarray], np.ndarray],
                 texture: Callable[[np.ndarray, tuple[int, int]], np.ndarray]
                 ) -> tuple[np.ndarray, float, float]:
    """``mask`` (bool, ``rgb``'s size: the sky found) with the pockets of blue sky seen
    through foliage or a lattice round it (module doc) taken, and how many were taken, a
    share of the sky found. The pockets are found on a copy ``THROUGH_SIDE`` px long and
    decided again on ``rgb``'s own pixels (their colour, where the copy's pocket or a
    pixel next to it lies), so that a pocket a few photo pixels wide is not taken with
    the leaves round it; and the share of the frame of the copy that the pockets below
    the sky's reach fill (``pockets_through``, not taken). ``bluish`` and
    ``texture`` are ``sky._bluish`` and ``sky.fine_texture`` (passed in: sky imports this
    module)."""
    small = shrink(rgb[..., :3], THROUGH_SIDE)
    h, w = small.shape[:2]
    sky = cv2.resize(mask.astype(np.uint8), (w, h), interpolation=cv2.INTER_AREA) > 0
    fine = texture(rgb, (h, w))
    found = pockets_through(small, sky, fine, bluish)
    if found is None:
        return mask, 0.0, 0.0
    pockets, ref, blue_row, under = found
    below = round(float(under.mean()), 4)
    if np.count_nonzero(pockets) < THROUGH_LEAST * np.count_nonzero(sky):
        return mask, 0.0, below
    zone = cv2.dilate(pockets.astype(np.uint8), np.ones((3, 3), np.uint8))
    big_h, big_w = mask.shape
    zone = cv2.resize(zone, (big_w, big_h), interpolation=cv2.INTER_NEAREST) > 0
    zone &= ~mask
    ys, xs = np.nonzero(zone)
    pixels = np.ascontiguousarray(rgb[ys, xs, :3]).reshape(-1, 1, 3).astype(np.float32) / 255
    lab = cv2.cvtColor(pixels, cv2.COLOR_RGB2Lab)[:, 0]
    blue = bluish(cv2.cvtColor(pixels, cv2.COLOR_RGB2HSV))[:, 0]
    row = np.minimum((ys * h) // big_h, h - 1)
    take = blue & blue_row[row] & (np.linalg.norm(lab - ref[row], axis=1) <= THROUGH_DE)
    out = mask.copy()
    out[ys[take], xs[take]] = True
    return out, round(float(np.count_nonzero(take)) / float(max(1, np.count_nonzero(mask))), 3), \
        below
