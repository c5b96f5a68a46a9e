"""The open sky beside a building, under the horizon the sky's columns give it
(``sky.find_sky`` calls ``beside`` at the cut under its horizon), a sky that stops at a
wire rather than at a skyline (``wired``).

``find_sky`` reads the sky's horizon as the median of its columns' lowest rows and cuts
the sky a little under it. Beside a cathedral, an arena or a memorial that rises into the
sky, the sky goes on down to the trees or the roofs at the frame's sides: it was cut
there, and because so much of the sky-like region went on under the cut
(``sky.GOES_ON``) every such answer was a question (tune: four, their sky found at IoU
0.84-0.92 without that part). The part under the cut is the sky beside the building
when

* the sky is blue (``sky.FLAT_BLUE`` of its region or more): a clear day's sky, not a
  pale backdrop or a bokeh that runs on down behind a bird;
* it runs out of the frame at its left or right border, as the sky does behind
  something standing in the middle of the view, and not along its bottom edge (a lake
  or a road under a skyline does; water seen between hills is bounded by their slopes
  at the sides);

and then it joins the sky, which is answered, unless what is left out under the cut is
still ``sky.GOES_ON`` of the sky kept (a lighthouse seen from below: the sky beside it
runs to the bottom edge). The question stays too where the sky stops at a wire
(``wired``): under most of the sky's lower edge, past a line a few work px thick, the
photo goes on smooth and in the sky's colour (``sky.JOIN_DE``). That is the sky seen
between a bridge's cables, lit by its lamps to a violet no sky colour rule takes (tune:
the Cincinnati bridge, 0.65 of its edge), not a skyline: a roof, trees or a facade under
the sky are another colour or textured (tune: every sky found right, 0.44 at most).

A sky-like region that runs along the frame's bottom edge stays no sky (``sky.BOTTOM_RUN``),
blue or not: a rule taking one that is blue across the whole top border (the sky over
the Great Pyramid meeting the sand at the frame's corners) was tried in wave 32 and
reverted: the sea of a sky's own blue joins it into one region that reaches both
borders (issue 32's class "a sea of similar blue"), and it was found with the sea.
"""

from __future__ import annotations

import cv2
import numpy as np

#: a sky whose lower edge goes on past a wire under this share of its columns or more
#: stops at a wire, not at a skyline: "most of its edge"
WIRES = 0.5
#: the rows read just above the sky's lower edge, the thickness of a wire skipped under
#: it, and the rows read past the wire (work px)
ABOVE_ROWS, WIRE_ROWS, PAST_ROWS = 6, 3, 8
#: the share of the rows past the wire that must be smooth
PAST_SMOOTH = 0.75


def beside(sky: np.ndarray, cut: int) -> np.ndarray:
    """The pieces of ``sky`` (bool, the work copy) under the row ``cut`` that run out of
    the frame at its left or right border and not along its bottom edge (module doc)."""
    h = sky.shape[0]
    below = sky.copy()
    below[:cut] = False
    out = np.zeros_like(sky)
    if not below.any():
        return out
    count, labels = cv2.connectedComponents(below.astype(np.uint8), connectivity=8)
    for i in range(1, count):
        piece = labels == i
        sides = piece[:, 0].any() or piece[:, -1].any()
        if sides and not piece[h - 1].any():
            out |= piece
    return out


def wired(sky: np.ndarray, lab: np.ndarray, smooth: np.ndarray, join_de: float) -> float:
    """The share of ``sky``'s lower-edge columns under which, past a line ``WIRE_ROWS``
    thick, the photo goes on smooth (``smooth``) and within ``join_de`` (Lab) of the sky
    just above its edge; ``lab``: the work copy in Lab. 0 for a sky with no edge read."""
    h = sky.shape[0]
    cols = np.flatnonzero(sky.any(axis=0))
    if cols.size == 0:
        return 0.0
    low = h - 1 - np.argmax(sky[::-1, cols], axis=0)
    read = went_on = 0
    for col, row in zip(cols, low):
        past = slice(row + WIRE_ROWS, row + WIRE_ROWS + PAST_ROWS)
        if row < ABOVE_ROWS or row + WIRE_ROWS + PAST_ROWS >= h:
            continue
        read += 1
        if sky[past, col].any() or smooth[past, col].mean() < PAST_SMOOTH:
            continue
        up = slice(row - ABOVE_ROWS, row + 1)
        above = np.median(lab[up, col][sky[up, col]], axis=0)
        went_on += float(np.linalg.norm(np.median(lab[past, col], axis=0) - above)) <= join_de
    return went_on / read if read else 0.0
