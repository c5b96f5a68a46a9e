"""Where a sky found by colour and smoothness ran on into the land under its horizon
(``sky.find_sky`` calls ``land_below`` last, on its work copy), and where it goes on under
its horizon as open sky beside a low skyline (``open_below``, at the cut under the horizon).

A sky's colour rules are absolute (pale is bright, blue is of a hue and saturation), so on a
lighter or darker print, or a photo enlarged to 16 MP, the sky found takes a few work pixels
of what lies under its horizon: a pale roof, a band of far water and sand under a hazy
horizon, the sea. What it took differs from the sky *right above it*, in the same column,
in a way a gamma keeps: it is darker and not bluer (``_darker_below``), or it is a blown-out
glitter of sun on water under a sky that is itself hardly blown out (``_glare_below``),
or it is both textured and darker than the sky as a whole, however slowly its colour turned
(``_rough_below``). Only pieces at the sky's lower edge are judged: a darker cloud with sky
under it stays.

And a sky-like region that runs along the frame's bottom edge (a backdrop or a floor, not a
sky) may be a sky joined to pale sand or snow only through a neck a few pixels wide at the
frame's edge, where a pyramid's corner or a ridge's foot nearly meets it (``necked``).
"""

from __future__ import annotations

import logging

import cv2
import numpy as np

log = logging.getLogger(__name__)

#: the sky ends where, going down a column, it turns ``STEP_DARK`` Lab L darker than its
#: mean ``STEP_ROWS`` work px above (or half as dark and less blue by as much again): a sky
#: pales towards its horizon (tune, its lowest rows: median -0.9 to -3.4), where a pale
#: roof, a band of far water and sand, or the sea it ran into is darker than the sky above
#: it (median -5 to -15) on every print. A step relative to the sky above survives a gamma
#: where the absolute brightness of "pale" (``sky_likelihood``) does not.
STEP_DARK, STEP_ROWS = 7.0, (6, 20)
#: such a piece at the sky's lower edge is land when it is not much bluer than the sky
#: above it (median over the piece of its Lab b less the sky's: ``STEP_BLUE`` or more; tune
#: land -2.0 to +9.8, while the sky under a row of white clouds, a cloud's shaded underside
#: or a bank of grey-blue cloud over a ridge is bluer, -5.4 to -8.3) and ``STEP_THICK`` work
#: px thick or more (the sky's last row along a skyline, blended with it, is thinner)
STEP_BLUE, STEP_THICK = -3.5, 3
#: ... but bluer is no sky's own shading under a clear blue sky: the sky under white
#: clouds is bluer than the colourless cloud above it (tune: Lab chroma above 2-7), while
#: a clear sky pales, not darkens, towards its horizon, and the hazy far hills it ran into
#: are darker and bluer than it by the air between (tune: hills under a sky of chroma
#: 27-36, 9-16 L darker, 14-19 Lab b bluer, taken for sky). Under a sky this colourful
#: (median chroma of the sky above the piece) a darker piece is land however blue, when
#: it lies along the sky's lower edge: at least ``ALONG`` of its columns end on it (a band
#: of blue sky between streaks of cloud, darker than the cloud above, has sky under it)
CLEAR_CHROMA, ALONG = 18.0, 0.8
#: ... nor is a darker, bluer piece whose colour the sky has nowhere else in its rows: under
#: ``FOREIGN`` of the rest of the sky there lies within ``FOREIGN_DE`` (Lab) of its median
#: colour, and it is more colourful (Lab chroma) than ``COLOURFUL`` of that rest. The sky
#: under a white cloud is the blue of the sky beside the cloud (tune: 0.17-1.0 of it alike);
#: a helicopter's cyan nose against a grey-blue sky (chroma 28 in a sky of 11-17) is 0.05,
#: and at 16 MP it stayed as sky and was darkened with it, 35,000 px beyond the reach
FOREIGN, FOREIGN_DE, COLOURFUL = 0.1, 12.0, 0.95
#: in a sky with under ``GLARE_SKY`` of its pixels blown out (a channel at ``CLIPPED`` or
#: more), a blown-out piece at its lower edge, with what is ``STEP_DARK`` brighter than the
#: sky above joined to it, is sun glare on the water under the horizon when it glitters:
#: its median fine texture is ``GLARE_FINE`` times the sky's or more (tune: a beach's grey
#: sky 0.1 % blown out, its glare 4.0-5.6 times, none of it in the label; a blown-out cloud
#: on a darker print's cut under the horizon 2.0 times; skies whose blown-out clouds reach
#: the horizon are 6-65 % blown out)
GLARE_SKY, CLIPPED, GLARE_FINE = 0.01, 250, 3.0
#: a thing in the sky of the sky's hue (within ``OBJECT_HUE`` degrees of the sky's median
#: hue over ``OBJECT_ROWS`` work rows either side) but far more saturated than it
#: (``OBJECT_SAT`` times, and ``OBJECT_GAP`` more, HSV), ``OBJECT_LEAST`` of the frame or
#: more, whose colour the rest of the sky has nowhere (``FOREIGN``), is no sky: a cyan
#: helicopter (saturation 0.83) in a grey-blue sky (0.20) joined it on a darker or more
#: saturated print, as an edit's second step sees the photo after its first ("a deeper
#: blue": the saturation raised, then the sky found again), and was edited with it at 16 MP
#: (411,000 px beyond the reach). A blue bay between white clouds, as saturated against
#: the clouds in its rows, has the colour of the sky above the clouds and stays (tune).
OBJECT_HUE, OBJECT_ROWS, OBJECT_SAT, OBJECT_GAP, OBJECT_LEAST = 30.0, 10, 2.5, 0.3, 0.001


def land_below(sky: np.ndarray, small: np.ndarray, lab: np.ndarray, fine: np.ndarray
               ) -> np.ndarray:
    """``sky`` (bool, the work size) without the land it ran into at its lower edge
    (module doc). ``small``, ``lab``: the work copy in RGB (uint8) and in Lab (float32);
    ``fine``: its fine texture (``sky.fine_texture``)."""
    out = _rough_below(_glare_below(_darker_below(sky, lab), small, lab, fine), lab, fine)
    if out.sum() < sky.sum():
        log.debug("the sky's lower edge gave up %d work px of land", sky.sum() - out.sum())
    return out


def _above(values: np.ndarray, sky: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel, the mean of ``values`` over the ``sky`` pixels ``STEP_ROWS`` above it in
    its column, and how many there are."""
    h, w = sky.shape
    near, far = STEP_ROWS
    inside = sky.astype(np.float32)
    counts = np.vstack([np.zeros((1, w), np.float32), np.cumsum(inside, axis=0)])
    sums = np.vstack([np.zeros((1, w), np.float32), np.cumsum(values * inside, axis=0)])
    rows = np.arange(h)
    lo, hi = np.clip(rows - far, 0, h), np.clip(rows - near, 0, h)
    seen = counts[hi] - counts[lo]
    return (sums[hi] - sums[lo]) / np.maximum(seen, 1.0), seen


def _lower_edge(sky: np.ndarray, thick: int = 1) -> np.ndarray:
    """The pixels of ``sky`` with nothing of it right below, grown to ``thick`` rows."""
    edge = sky & ~np.vstack([sky[1:], np.zeros((1, sky.shape[1]), bool)])
    return edge if thick <= 1 else \
        cv2.dilate(edge.astype(np.uint8), np.ones((thick, 1), np.uint8)) > 0


def _darker_below(sky: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """``sky`` without the pieces at its lower edge that are darker than the sky right above
    them (``STEP_DARK``), not much bluer (``STEP_BLUE``) and ``STEP_THICK`` work px thick:
    the land it ran into at its horizon (``lab``: the work copy in Lab). The sky under a
    white cloud or a cloud's shaded underside is darker but bluer, a darker cloud with
    sky under it does not reach the lower edge, and the sky's last row along a skyline is
    thinner: they stay. What the cut leaves apart and small (under 0.2 % of the frame)
    leaves too."""
    light = cv2.blur(lab[..., 0], (3, 3))
    yellow = cv2.blur(lab[..., 2], (3, 3))
    above, seen = _above(light, sky)
    less_blue = yellow - _above(yellow, sky)[0]
    chroma_above = _above(np.hypot(lab[..., 1], lab[..., 2]), sky)[0]
    dark = above - light
    # darker than the sky above by STEP_DARK, or by half as much and less blue as well
    step = (dark >= STEP_DARK) | ((dark >= STEP_DARK / 2) &
                                  (dark ** 2 + np.maximum(less_blue, 0) ** 2 >= STEP_DARK ** 2))
    darker = sky & (seen >= (STEP_ROWS[1] - STEP_ROWS[0]) / 2) & step
    column = np.ones((STEP_THICK, 1), np.uint8)
    darker = cv2.morphologyEx(darker.astype(np.uint8), cv2.MORPH_OPEN, column) > 0
    if not darker.any():
        return sky
    edge = _lower_edge(sky, STEP_THICK)
    _, labels = cv2.connectedComponents(darker.astype(np.uint8), connectivity=8)
    out = sky.copy()
    for i in np.unique(labels[edge & darker]):
        piece = labels == i
        if i and (float(np.median(less_blue[piece])) >= STEP_BLUE or
                  (float(np.median(chroma_above[piece])) >= CLEAR_CHROMA and
                   _along_lower_edge(piece, sky) >= ALONG) or _foreign(piece, sky, lab)):
            out &= ~piece
    return _without_specks(out)


def objects_out(sky: np.ndarray, small: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """``sky`` (bool, the work copy ``small`` in RGB and ``lab`` in Lab) without the things
    of its hue but far more saturated (``OBJECT_SAT`` and the rest), and without what their
    cut leaves apart and small (the white lettering on a helicopter's side)."""
    hsv = cv2.cvtColor(cv2.GaussianBlur(small, (3, 3), 0).astype(np.float32) / 255.0,
                       cv2.COLOR_RGB2HSV)
    hue, sat = hsv[..., 0], hsv[..., 1]
    h = sky.shape[0]
    ref_sat = np.ones((h, 1), np.float32)
    ref_hue = np.zeros((h, 1), np.float32)
    for r in np.flatnonzero(sky.any(axis=1)):
        rows = slice(max(0, r - OBJECT_ROWS), r + OBJECT_ROWS + 1)
        ref_sat[r], ref_hue[r] = np.median(sat[rows][sky[rows]]), np.median(hue[rows][sky[rows]])
    turn = np.abs((hue - ref_hue + 180.0) % 360.0 - 180.0)
    vivid = sky & (sat > OBJECT_SAT * ref_sat) & (sat > ref_sat + OBJECT_GAP) & \
        (turn <= OBJECT_HUE)
    vivid = cv2.morphologyEx(vivid.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(vivid, connectivity=8)
    out = sky.copy()
    for i in np.flatnonzero(stats[1:, cv2.CC_STAT_AREA] >= OBJECT_LEAST * sky.size) + 1:
        piece = labels == i
        if _foreign(piece, sky, lab, rows_only=False):
            out &= ~piece
    return _without_specks(out) if out.sum() < sky.sum() else sky


#: a piece at the sky's lower edge that is both ``ROUGH_TIMES`` as finely textured as the
#: sky's own median (``sky.fine_texture``) and ``ROUGH_DARK`` Lab L darker than the sky's
#: median is the land it ran into, however slowly its colour turned: a pyramid's lit
#: casing in haze (fine 2-20 times the sky's 0.18, 15-22 L darker) joined a grey sky as
#: a tongue 40 work px long, under the absolute texture limit ``sky.FINE_MIN``, and the
#: feathered edit changed 430 px of the pyramid beyond the reach. Tune, as shot and on
#: gamma 0.8 / 1.25 prints: no other sky's IoU moves by more than 0.001 (a few work px of
#: a cloud's shaded underside at a castle's skyline)
ROUGH_TIMES, ROUGH_DARK = 3.0, 14.0


def _rough_below(sky: np.ndarray, lab: np.ndarray, fine: np.ndarray) -> np.ndarray:
    """``sky`` (bool, the work copy; ``lab`` its Lab, ``fine`` its fine texture) without
    the pieces at its lower edge that are textured and darker than it (``ROUGH_TIMES``),
    and without what their cut leaves apart and small."""
    if not sky.any():
        return sky
    own = max(float(np.median(fine[sky])), 0.05)
    light = float(np.median(lab[..., 0][sky]))
    rough = sky & (fine > ROUGH_TIMES * own) & (lab[..., 0] < light - ROUGH_DARK)
    rough = cv2.morphologyEx(rough.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    if not rough.any():
        return sky
    _, labels = cv2.connectedComponents(rough, connectivity=8)
    pieces = np.unique(labels[_lower_edge(sky, STEP_THICK)])
    out = sky & ~np.isin(labels, pieces[pieces > 0])
    return _without_specks(out) if out.sum() < sky.sum() else sky


def _foreign(piece: np.ndarray, sky: np.ndarray, lab: np.ndarray, rows_only: bool = True
             ) -> bool:
    """Whether ``piece`` (of ``sky``, bool maps of the work copy; ``lab`` its Lab) has a
    colour the rest of the sky (in its rows, or anywhere) does not have, and more of it
    (``FOREIGN``)."""
    rest = sky & ~piece
    if rows_only:
        rest[~piece.any(axis=1)] = False
    if not rest.any():
        return False
    colour = np.median(lab[piece], axis=0)
    alike = float((np.linalg.norm(lab[rest] - colour, axis=1) <= FOREIGN_DE).mean())
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    return alike < FOREIGN and \
        float(np.hypot(colour[1], colour[2])) > float(np.quantile(chroma[rest], COLOURFUL))


def _along_lower_edge(piece: np.ndarray, sky: np.ndarray) -> float:
    """The share of ``piece``'s columns whose lowest pixel has no sky within
    ``STEP_THICK`` rows under it (the piece ends where the sky does)."""
    h = sky.shape[0]
    cols = np.flatnonzero(piece.any(axis=0))
    if cols.size == 0:
        return 0.0
    low = h - 1 - np.argmax(piece[::-1, cols], axis=0)
    ends = [not sky[r + 1:r + 1 + STEP_THICK, c].any() for r, c in zip(low, cols)]
    return float(np.mean(ends))


def _glare_below(sky: np.ndarray, small: np.ndarray, lab: np.ndarray, fine: np.ndarray
                 ) -> np.ndarray:
    """``sky`` without the blown-out, glittering pieces at its lower edge when it is itself
    hardly blown out (``GLARE_SKY``): sun glare on the sea under a grey sky's horizon,
    smooth where it is clipped. ``small``, ``lab``: the work copy in RGB and in Lab;
    ``fine``: its fine texture (``fine_texture``)."""
    clipped = small.max(axis=-1) >= CLIPPED
    if not sky.any() or float(clipped[sky].mean()) >= GLARE_SKY:
        return sky
    light = cv2.blur(lab[..., 0], (3, 3))
    above, seen = _above(light, sky)
    bright = sky & (clipped | ((seen >= (STEP_ROWS[1] - STEP_ROWS[0]) / 2) &
                               (light >= above + STEP_DARK)))
    edge = _lower_edge(sky)
    _, labels = cv2.connectedComponents(bright.astype(np.uint8), connectivity=8)
    seeds = np.intersect1d(labels[edge & bright], labels[clipped & bright])
    own = float(np.median(fine[sky]))
    glare = [i for i in seeds[seeds > 0]
             if float(np.median(fine[labels == i])) >= GLARE_FINE * own]
    return _without_specks(sky & ~np.isin(labels, glare))


def _without_specks(sky: np.ndarray) -> np.ndarray:
    """``sky`` without its pieces under 0.2 % of the frame (what a cut left apart)."""
    _, labels, stats, _ = cv2.connectedComponentsWithStats(sky.astype(np.uint8), 8)
    specks = np.flatnonzero(stats[1:, cv2.CC_STAT_AREA] < 0.002 * sky.size) + 1
    out = sky.copy()
    out[np.isin(labels, specks)] = False
    return out


#: the rows read on each side of the sky's lower edge (work px; one row between them is
#: skipped: the edge's own blur)
EDGE_BAND = 4


def edge_contrast(sky: np.ndarray, lab: np.ndarray) -> float:
    """The median Lab distance, over the columns where something lies under the sky,
    between ``EDGE_BAND`` rows just above the sky's lowest row and as many just under it:
    a horizon or a skyline is an edge of the photo; a cut through one smooth region (a
    studio backdrop, a bokeh) is not. 100.0 when the sky reaches the bottom everywhere."""
    h = sky.shape[0]
    cols = np.flatnonzero(sky.any(axis=0))
    lowest = h - 1 - np.argmax(sky[::-1, cols], axis=0)
    keep = lowest + 2 + EDGE_BAND <= h
    cols, lowest = cols[keep], lowest[keep]
    if cols.size == 0:
        return 100.0
    rows = np.arange(EDGE_BAND)
    above = lab[np.clip(lowest[None, :] - rows[:, None], 0, h - 1), cols[None, :]].mean(axis=0)
    below = lab[lowest[None, :] + 2 + rows[:, None], cols[None, :]].mean(axis=0)
    return float(np.median(np.linalg.norm(above - below, axis=1)))


#: the largest change of tone (Lab) over ``OPEN_ROWS`` work rows within a column of sky
#: that goes on under the cut (``open_below``; tune: clear skies beside a palace and a
#: cathedral at most 2.2, a misty shore under a hazy sky 4.2-4.9)
OPEN_STEP, OPEN_ROWS = 3.0, 3


def open_below(sky: np.ndarray, lab: np.ndarray, horizon: float, cut: int) -> np.ndarray:
    """The part of ``sky`` under the row ``cut`` that goes straight on, column by column,
    from the sky at its ``horizon``, its tone changing by less than ``OPEN_STEP`` over any
    ``OPEN_ROWS`` rows all the way: the sky a palace's roofs leave open beside them down to
    a lower skyline, where a shore under a horizon is a step of tone, however smooth the
    water past it. A piece that runs down to the photo's bottom edge is left out."""
    h = sky.shape[0]
    keep = np.zeros_like(sky)
    start = int(horizon)
    if start < OPEN_ROWS or cut >= h:
        return keep
    smooth = cv2.blur(lab, (7, 3))
    step = np.linalg.norm(smooth[OPEN_ROWS:] - smooth[:-OPEN_ROWS], axis=2)
    alive = sky[start].copy()
    for row in range(start + 1, h):
        alive &= sky[row] & (step[row - OPEN_ROWS] <= OPEN_STEP)
        if not alive.any():
            break
        if row >= cut:
            keep[row] = alive
    # a run down to the photo's bottom edge is no sky ending at a skyline: dusk's dark
    # blue runs smoothly into a dark launch pad between a tower's girders
    count, labels = cv2.connectedComponents(keep.astype(np.uint8), connectivity=8)
    for i in set(np.unique(labels[-1])) - {0}:
        keep[labels == i] = False
    return keep


#: a sky-like region running along the bottom edge is cut at necks this many work px wide
#: or less (an opening): the part holding the frame's top border is judged alone (tune: the
#: Great Pyramid's clear sky joined to the white sand at the frame's right edge by a neck of
#: 2-4 px, refused as a floor)
NECK = 5


def necked(region: np.ndarray) -> np.ndarray:
    """``region`` (bool, the work copy) without what joins it only through necks of up to
    ``NECK`` px (an opening): the parts that touch the frame's top border, or the whole
    region when no part does."""
    kernel = np.ones((NECK, NECK), np.uint8)      # beyond the frame is no region: a neck
    core = cv2.erode(region.astype(np.uint8), kernel, borderType=cv2.BORDER_CONSTANT,
                     borderValue=0)                # along its edge is cut too
    _, labels = cv2.connectedComponents(core)
    top = np.unique(labels[NECK // 2][labels[NECK // 2] > 0])
    if top.size == 0:
        return region
    return (cv2.dilate(np.isin(labels, top).astype(np.uint8), kernel) > 0) & region
