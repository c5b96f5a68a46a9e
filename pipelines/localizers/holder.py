"""What enters a detector's box from outside it is not the object: the hand that holds it.

A detector's box is drawn round the object. Where the outline GrabCut finds in the box
touches one of its sides over a short run only, and just past that side the salient map
goes on reading something, of the colour the outline has at the side, all the way to the
crop's edge, a thing that continues far beyond the box (an arm) reaches into it there (the
fingers round a bottle). What the outline holds there past the reach the object has
towards that side on its other rows, joined to the run, is cut. An object the box cuts off
keeps its end: it ends within the crop's margin (a tail's tip), or it runs along much of
the side, where ``segment.refine_box`` grows the box instead.
"""

from __future__ import annotations

import logging

import cv2
import numpy as np

log = logging.getLogger(__name__)

#: a run along a side shorter than this share of it (a longer one is an object the box cut
#: off, ``segment.BOX_CUT``) and of at least ``RUN_MIN`` px ...
RUN_SHARE, RUN_MIN = 0.25, 3
#: ... past which, over ``BEYOND`` px (or the crop's margin, at least ``BEYOND_MIN``), the
#: salient map reads at least ``SEEN`` and the colour stays within ``GOES_ON`` (Lab, L
#: weighted ``L_WEIGHT``) of the outline's at the side on that row, for at least
#: ``GOES_ON_SHARE`` of the run ...
BEYOND, BEYOND_MIN, SEEN, GOES_ON, GOES_ON_SHARE = 8, 3, 0.5, 12.0, 0.5
L_WEIGHT = 0.5
#: ... and the map still reads ``SEEN`` at the crop's edge beyond that share of the run
#: (it runs on past the margin): what the outline holds past the object's own reach
#: towards that side (the ``OWN_REACH`` percentile of its last pixel on the box's rows off
#: the run, which are at least ``OWN_ROWS`` of its height), joined to the run, is cut when
#: it is at most ``MOST`` of the outline
OWN_REACH, OWN_ROWS, MOST = 50, 0.25, 0.25


def _side(rgb: np.ndarray, fg: np.ndarray, prob: np.ndarray, box: tuple[int, int, int, int]
          ) -> np.ndarray | None:
    """The holder's pixels in ``fg`` entering through the box's right side (the caller
    turns the arrays so that each side is the right one), or None."""
    x0, y0, x1, y1 = box
    width = fg.shape[1]
    beyond = min(BEYOND, width - x1)
    if beyond < BEYOND_MIN or x1 - x0 < 8:
        return None
    run = np.nonzero(fg[y0:y1, x1 - 3:x1].any(axis=1))[0] + y0
    if len(run) < RUN_MIN or len(run) >= RUN_SHARE * (y1 - y0):
        return None
    if float(np.mean(prob[run, width - 1] >= SEEN)) < GOES_ON_SHARE:
        return None
    # Lab (L weighted) of the strip across the side only: the rows of the run, 3 px in
    strip = rgb[run.min():run.max() + 1, x1 - 3:x1 + beyond, :3].astype(np.float32) / 255.0
    lab = cv2.cvtColor(strip, cv2.COLOR_RGB2Lab) * np.array([L_WEIGHT, 1.0, 1.0], np.float32)
    rows_in = run - run.min()
    at_side = np.array([np.median(lab[r, :3][fg[r + run.min(), x1 - 3:x1]], axis=0)
                        for r in rows_in])
    goes_on = (np.linalg.norm(lab[rows_in, 3:] - at_side[:, None], axis=2) <= GOES_ON) & \
        (prob[run, x1:x1 + beyond] >= SEEN)
    if goes_on.mean() < GOES_ON_SHARE:
        return None
    # how far the object reaches towards this side on its other rows
    rows = np.zeros(fg.shape[0], bool)
    rows[y0:y1] = fg[:, x0:x1].any(axis=1)[y0:y1]
    rows[run.min():run.max() + 1] = False
    if rows.sum() < OWN_ROWS * (y1 - y0):
        return None
    last = x1 - 1 - np.argmax(fg[rows, x0:x1][:, ::-1], axis=1)
    reach = int(np.ceil(np.percentile(last, OWN_REACH)))
    if reach >= x1 - 1:
        return None
    past = np.zeros(fg.shape, np.uint8)
    past[y0:y1, reach + 1:x1] = fg[y0:y1, reach + 1:x1]
    _, labels = cv2.connectedComponents(past, connectivity=8)
    entering = np.unique(labels[run, x1 - 3:x1])
    cut = np.isin(labels, entering[entering > 0])
    return cut if 0 < cut.sum() <= MOST * fg.sum() else None


def holder_cut(crop: np.ndarray, box: tuple[int, int, int, int], fg: np.ndarray,
               prob: np.ndarray) -> np.ndarray:
    """``fg`` without what enters the detector's box through a side (the module's rule).

    Args:
        crop: uint8 RGB working copy of the box and its margin.
        box: the detector's box in ``crop`` pixels (x0, y0, x1, y1).
        fg: bool outline found inside ``box``.
        prob: salient-object probability at the crop's size.

    Returns:
        A bool mask at the crop's size (``fg`` itself when nothing enters).
    """
    if not fg.any():
        return fg
    h, w = fg.shape
    x0, y0, x1, y1 = box
    out = fg.copy()
    # each side turned to be the right one: (turn, the box in the turned frame, undo)
    turns = [(lambda a: a, (x0, y0, x1, y1), lambda a: a),
             (lambda a: a[:, ::-1], (w - x1, y0, w - x0, y1), lambda a: a[:, ::-1]),
             (lambda a: a.swapaxes(0, 1), (y0, x0, y1, x1), lambda a: a.swapaxes(0, 1)),
             (lambda a: a.swapaxes(0, 1)[:, ::-1], (h - y1, x0, h - y0, x1),
              lambda a: a[:, ::-1].swapaxes(0, 1))]
    for turn, turned, undo in turns:
        cut = _side(np.ascontiguousarray(turn(crop)), np.ascontiguousarray(turn(fg)),
                    np.ascontiguousarray(turn(prob)), turned)
        if cut is not None:
            out &= ~undo(cut)
    if out.sum() < fg.sum():
        log.info("a thing reaching into the box from past its side left the outline: %d px "
                 "(what holds the object)", int(fg.sum() - out.sum()))
    return out if out.any() else fg
