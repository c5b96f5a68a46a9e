"""The sky seen through or between things in front of it: pockets (``sky.find_sky`` calls
``framed_pockets`` last, on its work copy).

``find_sky`` takes the main sky-like region that reaches the frame's border and what lies
above its horizon; the sky framed by an arch, seen between a gate's columns under its beam,
lies apart from it and below that horizon, and was left out while the answer said
"found": a tower seen through an arch got only the sliver of sky above the arch (IoU 0.12).
A *pocket* is a smooth sky-like region (``sky.sky_likelihood``, the same cleaning) that

* lies apart from the sky found, off the frame's left and right borders and hardly on its
  bottom edge (``BOTTOM_TOUCH``): snow, a lake, a road or a backdrop runs out of the frame
  at the bottom or the sides; a hole in the foreground does not;
* is smooth seen closer too (fine texture under ``POCKET_FINE`` times the sky's own):
  water and snow glitter or are grained where the sky is smooth;
* has the sky somewhere above it in at least ``UNDER_SKY`` of its columns: the sky goes on
  behind the thing that frames the pocket;
* is not a band across the frame (``WATER_WIDE``): a smooth pocket of the sky's colour that
  runs across most of the frame's width and is wider than tall lies as a lake or the sea
  does between its shores, below a horizon; the sky seen through an arch or between
  columns is bounded by their sides;
* is framed by things of another colour (``FRAME_DE``: the median Lab distance between the
  pocket and the band just round it): a blur of the same tone round it (a bokeh behind a
  bird) is no frame.

A pocket of the colour of the sky's lowest rows (``JOIN_DE``) joins the sky. One of the
sky's hue but paler or brighter, as a sky is towards its horizon (``paler``), cannot be told
from a pale wall or water this way: it is left out and counted (``left``), and the answer
becomes a question (``sky.ends_unsure`` reads it as ``pockets``) when that is
``POCKETS_ASK`` of the sky found or more.

The sky seen through foliage is many *specks*, each under a pocket's least size: they pass
the same tests and count as pockets only when ``SPECKS_LEAST`` of them or more do. And the
sky-like pixels taken out as textured (the sky through twigs or a canopy, in bits too fine
to be smooth) make the answer a question when they are much of the sky found: the blue ones
(``FRINGE_ASK``) or those of any sky colour, pale too (``CANOPY_ASK``); so does a cloud
bank left apart from the sky, smooth and pale, running out of the frame above the sky's
horizon (``BANK_ASK``): a lit bank of cloud low in a blue sky is not the sky's colour.
The blue pockets seen through foliage or a lattice are then taken pixel by pixel at the
photo's own size (``sky_through``), after these counts were read.
"""

from __future__ import annotations

import logging

import cv2
import numpy as np

from pipelines.localizers.base import Localization

log = logging.getLogger(__name__)

#: the least area of a pocket, as a share of the frame (what ``find_sky`` joins at least)
POCKET_LEAST = 0.002
#: smaller pockets, specks of ``SPECK_LEAST`` of the frame up to ``POCKET_LEAST``, pass the
#: same tests, but count only when ``SPECKS_LEAST`` of them or more do: the sky seen through
#: foliage is dozens of specks, each under ``POCKET_LEAST`` (held-out, wave 26: all dropped,
#: IoU 0.73, said found), where a lone pale speck is as likely a window or a wall
SPECK_LEAST, SPECKS_LEAST = 0.0003, 5
#: a pocket may run along at most this share of the bottom edge (a sky seen low through an
#: arch reaches it between the tower and the wall: tune 0.04; snow 0.70, a lake 0.99)
BOTTOM_TOUCH = 0.1
#: a pocket's median fine texture is under this many times the sky's own (tune pockets
#: 0.6-2.7; water between rocks and snow 4-30)
POCKET_FINE = 3.0
#: the share of a pocket's columns with the sky above it
UNDER_SKY = 0.3
#: a pocket spanning at least ``WATER_WIDE`` of the frame's width and ``WATER_FLAT`` times
#: wider than tall (in pixels) is taken for water, neither joined nor asked about (tune: the
#: Qutub arch's sky 0.63 wide and taller than wide; a canyon's river 0.69 wide, 3x wider
#: than tall; every other tune pocket under 0.4 of the width)
WATER_WIDE, WATER_FLAT = 0.5, 1.5
#: the band round a pocket (from ``FRAME_GAP`` to ``FRAME_RING`` work px out: past the blur
#: of its edge) and the least median Lab distance from the pocket's colour across it
FRAME_GAP, FRAME_RING, FRAME_DE = 3, 8, 15.0
#: a pocket joins when its median colour lies this close (Lab) to the sky's own lowest rows
#: (the lowest ``LOW_ROWS`` of the rows it spans)
JOIN_DE, LOW_ROWS = 12.0, 0.15
#: a paler pocket: its Lab hue within ``PALE_TURN`` degrees of the sky's, its chroma at most
#: the sky's, and at least as light as the sky's lowest rows less ``PALE_DARK``; or nearly
#: colourless (chroma under ``GREYISH``) and lighter
PALE_TURN, PALE_DARK, GREYISH = 30.0, 5.0, 6.0
#: the blue sky-like pixels taken out because they are textured seen closer (over this many
#: times the sky's own fine texture): sky seen through twigs at the top of tree crowns
FRINGE_FINE = 4.0
#: ... as a share of the sky found, that makes where the sky ends a question (tune: tree
#: crowns against a clear sky 0.24; skies over palaces, a windmill, snow, a helicopter
#: 0.05-0.08; a hazy mountain sky, asked already, 0.13). Not lower: either half of the
#: crowns' photo alone reads 0.16 (IoU 0.71-0.74, said found) as scikit-image's rocket
#: between lattice towers does (found right)
FRINGE_ASK = 0.2
#: the pockets left out, as a share of the sky found, that make where the sky ends a question
POCKETS_ASK = 0.05
#: the sky-like pixels of any sky colour (pale too) taken out as textured, as a share of the
#: sky found, that make where the sky ends a question: a pale sky seen through a canopy
#: (tune: redwoods from below 0.34, their top third alone 0.38, found at IoU 0.51 and said
#: found; tree crowns against a clear sky 0.28; every sky found right 0.13 or less: a cold
#: beach's grey sea 0.13, snow 0.08, a windmill's sky 0.07)
CANOPY_ASK = 0.25
#: the pockets of the sky's colour seen through a canopy below the sky's lowest reach in
#: their columns (``sky_through.pockets_through``, evidence ``below``), as a share of the sky
#: found, that make where the sky ends a question: the sky goes on through the crowns under
#: where it was found (tune: the giraffes' woodland 0.046-0.048 of the sky, IoU 0.775 on a
#: darker print and said found at the localiser; every sky found right, as shot and on
#: every print, 0.015 or less: a lake's hill 0.015, horses under trees 0.009)
BELOW_ASK = 0.025
#: a cloud bank: a smooth region apart from the sky found, nearly colourless (Lab chroma
#: under ``BANK_GREY``) and light (L from ``BANK_LIGHT``), running out of the frame at its
#: top or a side above the sky's horizon; ``BANK_ASK`` of the sky found or more left out
#: makes where it ends a question (tune: the Taj Mahal's photo from its minarets' tops
#: down, its grey-white cloud bank on the left 0.78 of the blue sky found, IoU 0.45 and
#: said found; the castle framed by leaves 0.23 and a group photo's pale wall 0.19, both
#: asked already; every sky found right 0)
BANK_LIGHT, BANK_GREY, BANK_ASK = 60.0, 12.0, 0.25
#: the sky found, grown on ``RUN_STEPS`` work px by ``sky.reach_edge`` (its colour nearby,
#: ring by ring) into pixels smooth at both scales (``sky.sky_likelihood``, and the fine
#: texture under ``_smooth_only``'s limit), gains ``RUNS_ON`` of its own size or more: its
#: edge is no edge of the photo but a level crossed in a smooth gradient (a cloud's grey
#: underside on a darker print of the Taj Mahal, 0.053, its lower clouds left out and
#: "darker" done on 82 % of the sky; a blurred snowy mountain or pale rock taken for a
#: sky 0.040-0.066; an owl's bokeh 0.10-0.34), and where the sky ends is a question (tune:
#: every sky found right, as shot, darker and lighter, 0.030 or less)
RUN_STEPS, RUNS_ON = 12, 0.04


def _low_colour(sky: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """The median Lab colour of the sky's lowest rows (``LOW_ROWS`` of those it spans)."""
    rows = np.flatnonzero(sky.any(axis=1))
    low = sky.copy()
    low[: rows[-1] + 1 - max(3, int(round(LOW_ROWS * (rows[-1] - rows[0] + 1))))] = False
    return np.median(lab[low], axis=0)


def paler(colour: np.ndarray, sky_colour: np.ndarray) -> bool:
    """Whether Lab ``colour`` is ``sky_colour`` paled towards a horizon (module doc)."""
    chroma, sky_chroma = float(np.hypot(*colour[1:])), float(np.hypot(*sky_colour[1:]))
    lighter = colour[0] >= sky_colour[0] - PALE_DARK
    if chroma < GREYISH:
        return bool(lighter and colour[0] >= sky_colour[0])
    turn = abs((np.degrees(np.arctan2(colour[2], colour[1]) -
                           np.arctan2(sky_colour[2], sky_colour[1])) + 180.0) % 360.0 - 180.0)
    return bool(lighter and turn <= PALE_TURN and chroma <= sky_chroma + 2.0)


def framed_pockets(sky: np.ndarray, likely: np.ndarray, lab: np.ndarray, fine: np.ndarray,
                   grown: np.ndarray, blue: np.ndarray
                   ) -> tuple[np.ndarray, dict[str, float]]:
    """``sky`` (bool, the work size) with the pockets of its colour joined, and as evidence
    (shares of the frame) ``pockets``, the paler pockets left out, ``fringe``, the blue
    sky-like pixels taken out as textured, ``canopy``, those of any sky colour, and
    ``bank``, the cloud banks apart from it (``_banks``; module doc).

    Args:
        sky: the sky found so far.
        likely: the smooth, sky-coloured regions (bool, cleaned as ``find_sky`` does).
        lab: the work copy in Lab (float32).
        fine: its fine texture (``sky.fine_texture``).
        grown: the sky-like region before its textured patches left.
        blue: the blue pixels (``sky._bluish``).
    """
    if not sky.any():
        return sky, {"pockets": 0.0, "fringe": 0.0}
    h, w = sky.shape
    count, labels, stats, _ = cv2.connectedComponentsWithStats(likely.astype(np.uint8), 8)
    own = max(float(np.median(fine[sky])), 0.05)
    low = _low_colour(sky, lab)
    seen = np.maximum.accumulate(sky, axis=0)       # the sky lies somewhere above
    out, left = sky.copy(), 0.0
    near = cv2.dilate(sky.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    gap_kernel = np.ones((2 * FRAME_GAP + 1, 2 * FRAME_GAP + 1), np.uint8)
    ring_kernel = np.ones((2 * FRAME_RING + 1, 2 * FRAME_RING + 1), np.uint8)
    specks: list[tuple[np.ndarray, int, bool]] = []     # (speck, area, joins)
    for i in range(1, count):
        x, y, bw, bh, area = stats[i]
        if area < SPECK_LEAST * h * w or x == 0 or x + bw >= w:
            continue
        pocket = labels == i
        if (pocket & near).any() or pocket[-1].mean() > BOTTOM_TOUCH:
            continue
        cols = np.flatnonzero(pocket.any(axis=0))
        tops = np.argmax(pocket[:, cols], axis=0)
        under = float(seen[np.maximum(tops - 1, 0), cols].mean()) if y > 0 else 0.0
        texture = float(np.median(fine[pocket])) / own
        colour = np.median(lab[pocket], axis=0)
        ring = (cv2.dilate(pocket.astype(np.uint8), ring_kernel) > 0) & ~sky & \
            ~(cv2.dilate(pocket.astype(np.uint8), gap_kernel) > 0)
        frame = float(np.median(np.linalg.norm(lab[ring] - colour, axis=1))) if ring.any() \
            else 0.0
        de = float(np.linalg.norm(colour - low))
        log.debug("pocket %d: %.3f of the frame (%.2f of its width, %.2f of its height), under "
                  "the sky %.2f, texture %.1f, frame %.1f, dE %.1f, paler %s", i,
                  area / (h * w), bw / w, bh / h, under, texture, frame, de,
                  paler(colour, low))
        flat = bw >= WATER_WIDE * w and bw >= WATER_FLAT * bh
        if under < UNDER_SKY or texture > POCKET_FINE or frame < FRAME_DE or flat:
            continue
        if area < POCKET_LEAST * h * w:
            if de <= JOIN_DE or paler(colour, low):
                specks.append((pocket, int(area), de <= JOIN_DE))
        elif de <= JOIN_DE:
            out |= pocket
        elif paler(colour, low):
            left += area / (h * w)
    if len(specks) >= SPECKS_LEAST:          # the sky seen through foliage
        for speck, area, joins in specks:
            if joins:
                out |= speck
            else:
                left += area / (h * w)
    textured = grown & ~out & (fine > FRINGE_FINE * own)
    fringe, canopy = float((textured & blue).mean()), float(textured.mean())
    return out, {"pockets": round(left, 3), "fringe": round(fringe, 3),
                 "canopy": round(canopy, 3), "bank": _banks(out, labels, stats, lab, fine, own)}


def _banks(sky: np.ndarray, labels: np.ndarray, stats: np.ndarray, lab: np.ndarray,
           fine: np.ndarray, own: float) -> float:
    """The share of the frame of the cloud banks left out of ``sky``: smooth, cloud-pale
    sky-like regions apart from it (``BANK_*``) that run out of the frame at its top or a
    side, as the sky goes on beyond it, start above the sky's horizon and keep off the
    bottom edge (a white wall or a dome stands inside the frame; snow, a beach or water
    runs out at the bottom)."""
    h, w = sky.shape
    cols = np.flatnonzero(sky.any(axis=0))
    horizon = float(np.median(h - 1 - np.argmax(sky[::-1, cols], axis=0)))
    bank = 0.0
    for i in range(1, len(stats)):
        x, y, bw, bh, area = stats[i]
        if area < POCKET_LEAST * h * w or y > horizon or (y > 0 and x > 0 and x + bw < w):
            continue
        region = labels == i
        if (region & sky).any() or region[-1].mean() > BOTTOM_TOUCH:
            continue
        colour = np.median(lab[region], axis=0)
        texture = float(np.median(fine[region])) / own
        if colour[0] >= BANK_LIGHT and np.hypot(*colour[1:]) <= BANK_GREY and \
                texture <= POCKET_FINE:
            bank += area / (h * w)
    return round(bank, 3)


def runs_on(sky: np.ndarray, grown: np.ndarray, plain: np.ndarray) -> float:
    """The share of ``sky``'s own size that ``grown`` (it, grown ``RUN_STEPS`` rings by its
    colour) adds in ``plain`` pixels, smooth at both scales (``RUNS_ON``)."""
    if not sky.any():
        return 0.0
    added = grown & ~sky & plain
    return round(float(np.count_nonzero(added)) / float(np.count_nonzero(sky)), 3)


#: what a found sky may have left out, in the order ``pockets_unsure`` asks about it: the
#: evidence's key, its limit as a share of the sky's size (``runs_on``: already one), and
#: the question's words (the share is the evidence's, of the frame or of the sky)
DOUBTS = (
    ("pockets", POCKETS_ASK, "smooth pockets of a paler sky colour ({:.0%} of the frame) lie "
     "apart from it, framed by what stands in front of it"),
    ("fringe", FRINGE_ASK, "blue pixels round it ({:.0%} of the frame) were left out as "
     "textured, as sky seen through twigs or a lattice is"),
    ("bank", BANK_ASK, "a smooth pale region beside it ({:.0%} of the frame, a cloud bank?) "
     "runs on out of the frame above its horizon"),
    ("canopy", CANOPY_ASK, "sky-coloured pixels round it ({:.0%} of the frame) were left out "
     "as textured, as sky seen through leaves or a canopy is"),
    ("below", BELOW_ASK, "pockets of its colour ({:.1%} of the frame) show through the leaves "
     "or branches below where it was found"),
    ("runs_on", None, "its edge runs on into smooth stuff of its own colour ({:.0%} of its "
     "size more within a few pixels), as a cloud's grey underside, haze or a blurred "
     "backdrop does, not at an edge of the photo"),
)


def _doubt(ev: dict) -> tuple[str, str] | None:
    """The first of ``DOUBTS`` a sky with evidence ``ev`` reaches: its key and words."""
    size = ev.get("size", 1.0)
    for key, share, words in DOUBTS:
        if ev.get(key, 0.0) >= (RUNS_ON if share is None else share * size):
            return key, words.format(ev.get(key, 0.0))
    return None


def pale_doubt(ev: dict) -> bool:
    """Whether the question a sky with evidence ``ev`` asks rests on pale pixels: the paler
    pockets, a cloud bank or a pale canopy left out (``pockets_unsure``), or any question
    about a sky hardly blue (``blue`` under a half). A lighter copy of a photo turns land
    pale and such doubts are its own making (``steady.settle``: on a lightened print its
    lighter copy asked about a 'canopy' of pale land round Mount Rushmore's clear sky)."""
    key = (_doubt(ev) or ("", ""))[0]
    if key in ("pockets", "bank", "canopy"):
        return True
    return key not in ("fringe", "below") and ev.get("blue", 1.0) < 0.5   # blue: asked first


def pockets_unsure(found: Localization) -> Localization:
    """``found`` (a resolved sky), or a question when what it left out is much of it: the
    paler pockets (evidence ``pockets``, a share of the frame) ``POCKETS_ASK`` of it or more
    (the sky between a gate's columns pales towards the horizon like a pale wall or water),
    or the blue textured fringe (``fringe``) ``FRINGE_ASK`` of it or more (the sky through
    twigs at the top of tree crowns, textured like the crowns), or the textured sky-like
    pixels of any colour (``canopy``) ``CANOPY_ASK`` of it or more (a pale sky through a
    canopy), or a cloud bank left apart (``bank``) ``BANK_ASK`` of it or more, or the blue
    pockets through a canopy below its reach (``below``) ``BELOW_ASK`` of it, or an edge
    that runs on (``runs_on``, ``RUNS_ON``), asked in ``DOUBTS``' order. Whether it is sky
    the user says, shown the sky found to click."""
    ev = found.masks[0].evidence if found.masks else {}
    doubt = _doubt(ev) if found.status == "resolved" else None
    if doubt is None:
        return found
    return Localization(found.masks, "ambiguous", f"{found.reason}; but {doubt[1]}: is that sky "
                        "too? Click the sky or paint it with the brush",
                        candidates=found.candidates)
