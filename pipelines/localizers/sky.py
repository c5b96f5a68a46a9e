"""The sky, wherever it is in the frame, or an honest "no sky".

A pixel is *sky-like* when it is smooth (little local gradient) and has a sky's colour —
blue or cyan at any brightness (a dusk is dark navy), or nearly colourless and bright
(haze, overcast, clouds). Sky-like regions are then judged as regions:

* the **main sky** is the largest sky-like region that reaches the frame's top, left or
  right border in its upper part, sits in the upper part of the frame and does not run
  along the bottom edge (a plain backdrop or a floor does; so does a sea of the sky's
  blue joined to it);
* more sky-like regions join it when they lie above its horizon (patches between
  branches, sky on the other side of a tower); a region that starts below the horizon —
  water, a road, a reflection under a shore line — is not sky;
* holes of cloud colour inside the sky are filled (clouds are sky), other holes (a bird,
  a plane, a tower) stay out.
* a smooth grey region too dark to read as pale joins it when it reaches the top
  border, ends above the horizon and goes on from the sky with no edge between them (the
  overcast half of a monochrome sky, ``_grey_above``).
* what it ran into under its horizon leaves last (``sky_land.land_below``): a piece at
  its lower edge darker and not bluer than the sky right above it, or a blown-out glitter
  of sun on the water under a sky hardly blown out; and a thing of the sky's hue far more
  saturated than it, in a colour the rest of the sky lacks (``sky_land.objects_out``).
* a region of the sky's colour that starts above its horizon and lies mostly below it
  makes where the sky ends a question (``ends_unsure``, ``STRADDLE``); so does one going
  on far under the horizon, but for the blue sky beside a building (``sky_beside``).

The region is found on a copy of about ``WORK_SIDE`` px and brought to full resolution
with ``refine.upsample_edge`` (a guided filter on the edge band). The answer's reason
says how sure it is and what decided.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.localizers.base import Candidate, Localization
from pipelines.localizers.refine import upsample_region
from pipelines.localizers.sky_beside import WIRES, beside, wired
from pipelines.localizers.sky_land import edge_contrast, land_below, necked, objects_out, open_below
from pipelines.localizers.sky_pockets import RUN_STEPS, framed_pockets, pockets_unsure, runs_on
from pipelines.localizers.sky_through import seen_through
from pipelines.perception.detectors import shrink

WORK_SIDE = 512
#: local gradient (Lab L per pixel, after a light blur) below which a pixel is smooth
SMOOTH = 2.2
#: the smallest sky, as a share of the frame
MIN_SHARE = 0.03
#: sky-like pixels this far (share of the height) below the main sky's horizon are ground
#: (a dark launch pad, a lit road), not sky
BELOW_HORIZON = 0.08
#: a region running along this share of the bottom edge is a backdrop or floor, not sky
BOTTOM_RUN = 0.3
#: growing the sky back to its edge: largest Lab distance from the sky's colour nearby,
#: rings of one work pixel, and the half-side of the window that colour is taken over
EDGE_DE, EDGE_STEPS, EDGE_WINDOW = 10.0, 6, 4
#: a sky-like region above the horizon joins the main sky when its colour (median Lab) is
#: this close to the main sky's over the same rows (tune: patches of sky 2-8, lit facade
#: columns and blue glass 20-58)
JOIN_DE = 12.0
#: fine texture (mean absolute high-pass of the grey levels on a copy ``FINE_SIDE`` px
#: long) above which a pixel is no sky: sunlit rock or a pale facade is smooth and pale at
#: the work size but not at this one (tune: skies' p90 0.9-4.2, rock 8-16); the limit is
#: ``FINE_TIMES`` the sky's own median, and at least ``FINE_MIN``
FINE_SIDE, FINE_TIMES, FINE_MIN = 1024, 4.0, 4.0
#: ... and a sky whose own median fine texture is this or more is none at all: the limit
#: above is relative to the sky, and a photo all of one texture passes it (tune: sand seen
#: from above 11.5, found as a grey sky; skies 0.03-1.35, a sea taken for sky 3.4)
TEXTURED = 6.0
#: the textured patches that leave the sky take with them the pixels joined to them, not of
#: a blue sky's colour, whose fine texture is ``TRIM_LOW`` of the limit or more, where they
#: are ``TRIM_OPEN`` work px thick: pale rock under a mist at a crest (fine 3-5, limit 4)
#: and pale sea under a horizon stayed as sky only because they were a little less
#: textured than the limit, 2-8 work px beyond the true sky, past what a 16-MP edit may
#: touch (tune at 16 MP: the mountains' sky 654 px beyond the reach, the cold beach's
#: 132). Blue sky is never taken (a bright sky between cables), nor a band thinner than
#: ``TRIM_OPEN`` (the blur of the texture along a skyline)
TRIM_LOW, TRIM_OPEN = 0.75, 3
#: the main sky-like region goes on below the cut under its horizon by this share of what
#: is kept or more: the cut runs through open sky (a night sky between a bridge's cables,
#: tune 0.35) rather than along a shore or a skyline (tune 0.00-0.07), and where the sky
#: ends is a question
GOES_ON = 0.2
#: the sky is textured below its open top where this share of its rows or more are mostly
#: over twice the fine texture of its top ``TOP_ROWS`` of rows (at least ``ROUGH_FLOOR``):
#: haze over a distant city was taken in (tune 0.54-0.83 at 800-2048 px) where a sky ends at
#: its skyline (tune 0.00-0.14 at 640-2048 px; scikit-image's rocket between lattice towers
#: 0.03-0.06), and where the sky ends is a question
ROUGH_EDGE, TOP_ROWS, ROUGH_FLOOR = 0.3, 0.1, 0.5
#: a piece of the sky apart from its main body, off the top border and mostly pale, is
#: mist or a pale surface on the land when less than ``MIST_SKY`` of the band ``MIST_RING``
#: work px wide round it is sky (tune: mist on a rock face under a crest, pale sea under a
#: beach's horizon 0.03-0.20, all of it beyond the true sky; pale pieces of sky between a
#: bridge's cables at its horizon 0.34-0.40); so is such a piece of any colour whose top
#: lies under the main sky's horizon (a patch of grass between grazing sheep, blue-grey on
#: a lighter print, hue 191, value 0.52, ringed by the field, joined the sky under its
#: horizon and was darkened with it at 16 MP, 58k px beyond the reach)
MIST_RING, MIST_SKY = 15, 0.25
#: the most saturation (HSV) of a grey region that may go on from the sky (``_grey_above``)
GREY_SAT = 0.16
#: a cloud's pale body parted from the sky by its own textured rim joins it when its top is
#: ``BAY_TOP`` of the height or more above the horizon (tune: a cloud between peaks on a
#: darker print 0.11; pale water under the horizon, joined on a lighter print, 0.003), at
#: least ``BAY_PALE`` of it is cloud-coloured, the sky lies within ``BAY_GAP`` of the
#: height above the top of at least ``BAY_ABOVE`` of its columns (the cloud 0.67), and the
#: sky is at least ``BAY_BLUE`` blue (a pale region in a grey sky, a backdrop, is no cloud)
BAY_TOP, BAY_PALE, BAY_GAP, BAY_ABOVE, BAY_BLUE = 0.05, 0.7, 0.06, 0.6, 0.5
#: a region of the sky's own colour (``JOIN_DE``) that starts above the horizon but lies
#: mostly below it, as large as this share of the sky found or more, says the horizon is
#: not level there: a castle's keep lifts the horizon read over the sky's columns (median)
#: while the sky goes on down beside its lower walls, under leaves, and was cut there, 20 %
#: of the frame taken for 37 % (tune: the castle 0.24 of its sky, on every print; sky
#: between a bridge's cables on a darker print 0.03, the sky found right; no other tune
#: sky has one)
STRADDLE = 0.1
#: a sky less than ``FLAT_BLUE`` blue whose lower edge is no edge of the photo (the median
#: Lab step across it under ``FLAT_EDGE``, ``sky_land.edge_contrast``) is a plain backdrop
#: or a blur cut where its tone turns, not a sky over a horizon: asked (tune, found by a
#: sweep of "make the sky darker": a studio's grey backdrop 3.96, a macro's bokeh 1.16;
#: skies that are not blue end at 7.3-25, blue ones at 5.1 and more)
FLAT_EDGE, FLAT_BLUE = 5.5, 0.5
#: a bright clear sky turns cyan (hue from ``CYAN_HUE`` up to blue's 185) towards the sun
#: or its horizon: of this brightness (HSV value) or more it is sky-coloured too (tune: a
#: clear sky over a cliff runs from hue 192 at the top to 173-182 down its sides, and
#: without them the sky stopped at the cyan, 28 % of the frame taken as 20 %)
CYAN_HUE, CYAN_VAL = 170, 0.75


def sky_likelihood(small: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-pixel (smooth, sky colour) bool maps of a small RGB copy."""
    blur = cv2.GaussianBlur(small, (5, 5), 0)
    lab = cv2.cvtColor(blur.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    grad = np.hypot(cv2.Sobel(lab[..., 0], cv2.CV_32F, 1, 0, ksize=3),
                    cv2.Sobel(lab[..., 0], cv2.CV_32F, 0, 1, ksize=3)) / 8.0
    grad = cv2.blur(grad, (5, 5))
    hsv = cv2.cvtColor(blur.astype(np.float32) / 255.0, cv2.COLOR_RGB2HSV)
    hue, sat, val = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    blue = (hue >= 185) & (hue <= 260) & (sat >= 0.12) & (val >= 0.08)
    cyan = (hue >= CYAN_HUE) & (hue < 185) & (sat >= 0.12) & (val >= CYAN_VAL)
    # haze, overcast and clouds: nearly colourless and bright, never warm-tinted
    pale = (sat <= 0.16) & (val >= 0.62) & ~((hue >= 10) & (hue <= 60) & (sat > 0.08))
    # a dusk or night sky: dark and bluish
    dusk = (hue >= 200) & (hue <= 265) & (sat >= 0.25) & (val >= 0.05) & (val <= 0.55)
    return grad <= SMOOTH, blue | cyan | pale | dusk


def _regions(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    clean = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, kernel)
    clean = cv2.morphologyEx(clean, cv2.MORPH_CLOSE, kernel)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(clean, 8)
    return count, labels, stats


def _horizon(region: np.ndarray) -> float:
    """The region's lower edge: the median over its columns of its lowest row."""
    cols = np.flatnonzero(region.any(axis=0))
    lowest = region.shape[0] - 1 - np.argmax(region[::-1, cols], axis=0)
    return float(np.median(lowest))


def _same_colour(lab: np.ndarray, region: np.ndarray, sky: np.ndarray) -> bool:
    """Whether ``region`` has the sky's colour (``JOIN_DE``), compared row by row over the
    rows they share (a sky pales towards its horizon: a piece low on the right is matched
    with the sky's own low rows, however few), or with the whole sky when they share none.
    ``find_sky`` passes the sky joined so far: a sky deepens to the zenith (a windmill's
    top corner matched the sky below at dE 12+, the piece beside it at 6)."""
    rows = np.flatnonzero(region.any(axis=1) & sky.any(axis=1))
    if rows.size == 0:
        return float(np.linalg.norm(np.median(lab[region], axis=0) -
                                    np.median(lab[sky], axis=0))) <= JOIN_DE
    per_row = np.array([np.median(lab[r][sky[r]], axis=0) for r in rows])
    weight = region[rows].sum(axis=1).astype(np.float32)
    expected = (per_row * weight[:, None]).sum(axis=0) / weight.sum()
    seen = np.median(lab[rows][region[rows]], axis=0)
    return float(np.linalg.norm(seen - expected)) <= JOIN_DE


def find_sky(rgb: np.ndarray) -> Localization:
    """The sky of ``rgb`` (uint8 (H, W, 3)) at full resolution: ``resolved`` with one
    candidate (score = how sure), ``ambiguous`` for a pale region that may be a backdrop,
    or ``unresolved`` ("no sky") with why there is none."""
    small = shrink(rgb[..., :3], WORK_SIDE)
    h, w = small.shape[:2]
    smooth, colour = sky_likelihood(small)
    hsv = cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2HSV)
    pale = (hsv[..., 1] <= 0.2) & (hsv[..., 2] >= 0.6)   # cloud-coloured
    count, labels, stats = _regions(smooth & colour)
    best, best_score, parts = 0, 0.0, {}
    for i in range(1, count):
        if stats[i][cv2.CC_STAT_AREA] < MIN_SHARE * h * w:
            continue
        region = labels == i
        if region[-1].mean() >= BOTTOM_RUN:     # a sky joined to sand through a neck?
            region = parts[i] = necked(region)
        upper = region[: max(1, int(0.6 * h))]
        touches = upper[0].any() or upper[:, 0].any() or upper[:, -1].any()
        centre_y = float(np.nonzero(region)[0].mean()) / h
        if not touches or region[-1].mean() >= BOTTOM_RUN or centre_y > 0.6 or \
                region.mean() < MIN_SHARE:
            continue
        score = float(region.mean()) * (1.2 - centre_y)
        if score > best_score:
            best, best_score = i, score
    if not best:
        return Localization([], "unresolved", "no sky: no smooth blue, dusky or pale region "
                            "reaches the frame's edge in its upper part")
    sky = parts.get(best, labels == best)
    horizon = _horizon(sky)
    main = sky.copy()
    lab = cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    straddles = 0
    for i in range(1, count):      # more sky above the horizon (between branches …)
        if i == best or stats[i][cv2.CC_STAT_AREA] < 0.002 * h * w:
            continue
        top, middle = stats[i][cv2.CC_STAT_TOP], \
            stats[i][cv2.CC_STAT_TOP] + stats[i][cv2.CC_STAT_HEIGHT] / 2
        if middle < horizon and top < horizon - 0.02 * h:
            region = labels == i
            if _same_colour(lab, region, sky):
                sky |= region
        elif top < horizon <= middle and _same_colour(lab, labels == i, main):
            straddles += int(stats[i][cv2.CC_STAT_AREA])    # sky going on below (STRADDLE)
    sky |= _grey_above(sky, smooth, hsv, horizon)
    blue = _bluish(hsv)
    if blue[sky].mean() >= BAY_BLUE:
        sky |= _clouds_in_bays(sky, labels, stats, pale, horizon)
    cut = int(min(h, horizon + BELOW_HORIZON * h))
    goes_on = float(np.count_nonzero(sky[cut:])) / max(1, np.count_nonzero(sky[:cut]))
    # the ground under it, but for the sky going on beside a low skyline or a building
    aside = goes_on >= GOES_ON and blue[sky].mean() >= FLAT_BLUE
    taken = open_below(sky, lab, horizon, cut) | (beside(sky, cut) if aside else False)
    left = float(np.count_nonzero(sky[cut:] & ~taken[cut:])) / max(1, np.count_nonzero(sky[:cut]))
    sky[cut:] = taken[cut:]
    sky = reach_edge(_fill_clouds(sky, pale), small)
    fine = fine_texture(rgb, sky.shape)
    grown = sky      # a cloud's textured rim comes out, then the mist among the land
    sky = _without_mist(_fill_clouds(_smooth_only(grown, fine), pale), pale, horizon)
    if not sky.any():
        return Localization([], "unresolved", "no sky: what looked like sky is textured "
                            "(rock, a facade) when seen closer")
    if float(np.median(fine[sky])) >= TEXTURED:
        return Localization([], "unresolved", "no sky: what looked like sky is textured all "
                            "over when seen closer (sand, rock, a wall)")
    # how far the sky ran into texture is read before the trim takes the textured land out
    rough = rough_edge(sky, fine)
    trimmed = _without_mist(_fill_clouds(_smooth_only(grown, fine, ~blue), pale), pale,
                            horizon)
    sky = trimmed if trimmed.any() else sky
    sky = stepped if (stepped := land_below(sky, small, lab, fine)).any() else sky
    sky = objects_out(sky, small, lab)      # a vivid thing of the sky's hue in it
    joined, pockets = framed_pockets(sky, labels > 0, lab, fine, grown, blue)  # an arch
    sky |= reach_edge(joined & ~sky, small)
    plain = smooth & (fine <= max(FINE_MIN, FINE_TIMES * float(np.median(fine[sky]))))
    share = float(sky.mean())
    blue_share = float(colour[sky].mean())
    bluish = float(blue[sky].mean())
    touches_top = bool(sky[0].any())
    sure = 0.55 + 0.25 * bluish + 0.1 * touches_top + 0.1 * min(1.0, share / 0.2)
    mask, pockets["through"], pockets["below"] = seen_through(rgb, upsample_region(rgb, sky),
                                                              _bluish, fine_texture)
    where = "along the top" if touches_top else "below something that covers the top"
    evidence = {"colour": round(blue_share, 3), "position": 1.0 if touches_top else 0.6,
                "size": round(share, 3), "continues": round(min(1.0, goes_on), 3),
                "rough_edge": round(rough, 3), "straddles": round(straddles / (h * w), 3),
                "blue": round(bluish, 3), "edge_contrast": round(edge_contrast(sky, lab), 2),
                "beside": round(min(1.0, left), 3) if aside else 1.0, **pockets,
                "runs_on": runs_on(sky, reach_edge(sky, small, RUN_STEPS), plain)}
    if aside:      # read only where ``ends_unsure`` weighs it: the sky beside a building
        evidence["wires"] = round(wired(sky, lab, smooth, JOIN_DE), 3)
    cand = Candidate(mask, round(min(0.95, sure), 3), "sky", "sky-colour+smooth+horizon",
                     evidence)
    reason = (f"found the sky ({share:.0%} of the frame, {where}; {bluish:.0%} of it blue, "
              f"horizon at {horizon / h:.0%} of the height), confidence {cand.score:.2f}")
    # small and pale: an overcast sky or a backdrop; off the top it is even less sure (in
    # a tune photo brightened by a gamma of 0.8, one cloud bank was taken for its grey sky)
    if bluish < 0.3 and share < 0.08:
        return Localization([cand], "ambiguous", f"a small pale region {where} may be an "
                            "overcast sky or a plain backdrop")
    return Localization([cand], "resolved", reason)


def ends_unsure(found: Localization) -> Localization:
    """``found`` (``find_sky``'s answer), or a question when much of it is textured under
    its open top (``ROUGH_EDGE``: haze over a distant city was taken in), when it is hardly
    blue and its lower edge is no edge of the photo (``FLAT_EDGE``), when a region of
    the sky's colour starts above its horizon and lies mostly below it (``STRADDLE`` of the
    sky or more: the horizon is not level there), or its sky-like region goes on well
    below the horizon where it was cut (``GOES_ON``) and is not the blue sky beside a
    building (``sky_beside``: taken, and stopping at no wire): sky between cables and water
    or a road under a skyline look alike there, and which it is the user says."""
    if found.status != "resolved" or not found.masks:
        return found
    ev = found.masks[0].evidence
    rough = ev.get("rough_edge", 0.0)
    if rough >= ROUGH_EDGE:
        return Localization(found.masks, "ambiguous", f"{found.reason}; but {rough:.0%} of "
                            "it runs through texture under its open top (haze over far "
                            "buildings or hills?), so where the sky ends is unclear: click "
                            "the sky or paint it with the brush", candidates=found.candidates)
    straddles = ev.get("straddles", 0.0)
    if straddles >= STRADDLE * ev.get("size", 1.0):
        return Localization(found.masks, "ambiguous", f"{found.reason}; but more smooth "
                            f"region of the sky's colour ({straddles:.0%} of the frame) "
                            "starts above that horizon and goes on below it, beside what "
                            "rises into the sky: is it sky too? Click the sky or paint it "
                            "with the brush", candidates=found.candidates)
    if ev.get("edge_contrast", 100.0) < FLAT_EDGE and ev.get("blue", 1.0) < FLAT_BLUE:
        return Localization(found.masks, "ambiguous", f"{found.reason}; but it is hardly "
                            "blue and its lower edge runs through one smooth region (the "
                            "photo does not change there, as it does at a horizon): a plain "
                            "backdrop or a blur? Click the sky or paint it with the brush",
                            candidates=found.candidates)
    goes_on = ev.get("continues", 0.0)
    if goes_on < GOES_ON or (ev.get("beside", 1.0) < GOES_ON and ev.get("wires", 1.0) < WIRES):
        return pockets_unsure(found)
    return Localization(found.masks, "ambiguous", f"{found.reason}; but the smooth "
                        f"sky-coloured region goes on below that horizon ({goes_on:.0%} more "
                        "of it, taken only where it runs on unbroken from the sky above): "
                        "is the rest sky too? Click the sky or paint it with the brush",
                        candidates=found.candidates)


def fine_texture(rgb: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Fine texture of ``rgb`` (a copy at most ``FINE_SIDE`` px long: mean absolute
    high-pass of its grey levels over 5 px) resized to ``shape`` (float32, grey levels)."""
    grey = cv2.cvtColor(shrink(rgb[..., :3], FINE_SIDE), cv2.COLOR_RGB2GRAY).astype(np.float32)
    fine = cv2.blur(np.abs(grey - cv2.GaussianBlur(grey, (0, 0), 1.5)), (5, 5))
    return cv2.resize(fine, (shape[1], shape[0]), interpolation=cv2.INTER_AREA)


def rough_edge(sky: np.ndarray, fine: np.ndarray) -> float:
    """The share of ``sky``'s rows that are mostly textured (``fine``, the same shape, over
    twice the sky's own: its median over its top ``TOP_ROWS`` of the rows it spans, the
    open sky, and at least ``ROUGH_FLOOR``): 0 for an empty sky. By rows, not pixels: sky
    seen through a lattice or branches is textured at its edges in every column, yet each
    row is mostly open sky; haze over a far city fills whole rows under the open sky."""
    rows = np.flatnonzero(sky.any(axis=1))
    if rows.size == 0:
        return 0.0
    top = rows[0] + max(2, int(round(TOP_ROWS * (rows[-1] - rows[0] + 1))))
    own = float(np.median(fine[:top][sky[:top]]))
    textured = (fine > 2 * max(own, ROUGH_FLOOR)) & sky
    per_row = textured[rows].sum(axis=1) / sky[rows].sum(axis=1)
    return float((per_row > 0.5).mean())


def _smooth_only(sky: np.ndarray, fine: np.ndarray, loose: np.ndarray | None = None
                 ) -> np.ndarray:
    """``sky`` without the patches that are textured seen closer (``FINE_SIDE``): a pale
    sunlit peak or facade joins a sky at the work size, where it is smooth and pale too.
    Patches 3 work px across or more leave (a speck of a cloud's edge stays), with what
    they leave cut off and small (under 0.2 % of the frame).

    With ``loose`` (bool, the pixels that are not a blue sky's colour), a patch also takes
    the ``loose`` pixels joined to it that are less textured, down to ``TRIM_LOW`` of the
    limit, where they are ``TRIM_OPEN`` work px thick or more (``TRIM_LOW``)."""
    if not sky.any():
        return sky
    limit = max(FINE_MIN, FINE_TIMES * float(np.median(fine[sky])))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    rough = cv2.morphologyEx(((fine > limit) & sky).astype(np.uint8), cv2.MORPH_OPEN,
                             kernel) > 0
    if not rough.any():
        return sky
    if loose is not None:
        _, labels = cv2.connectedComponents(((fine > TRIM_LOW * limit) & sky & loose)
                                            .astype(np.uint8), connectivity=8)
        seeds = np.unique(labels[rough])
        joined = np.isin(labels, seeds[seeds > 0]) & ~rough
        thick = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (TRIM_OPEN, TRIM_OPEN))
        rough |= cv2.morphologyEx(joined.astype(np.uint8), cv2.MORPH_OPEN, thick) > 0
    out = sky & ~rough
    count, labels, stats, _ = cv2.connectedComponentsWithStats(out.astype(np.uint8), 8)
    small = np.flatnonzero(stats[1:, cv2.CC_STAT_AREA] < 0.002 * sky.size) + 1
    out[np.isin(labels, small)] = False
    return out


def _grey_above(sky: np.ndarray, smooth: np.ndarray, hsv: np.ndarray,
                horizon: float) -> np.ndarray:
    """Smooth colourless regions too dark to read as pale that reach the top border, end
    above the sky's horizon and go on from the sky with no edge between them (a boundary
    of smooth pixels at least as long as the region is tall): the grey overcast half of a
    monochrome sky, darker on a darker print (tune: the beach's right half, 6-19k work px,
    its boundary 2.1-2.4 times its height, on every print). A roof or a wall against the
    sky is parted from it by its edge (no smooth pixels there)."""
    h, w = sky.shape
    count, labels, stats = _regions(smooth & (hsv[..., 1] <= GREY_SAT) & ~sky)
    touch = cv2.dilate(sky.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    out = np.zeros_like(sky)
    for i in range(1, count):
        _, y, _, bh, area = stats[i]
        if y != 0 or area < 0.002 * h * w:
            continue
        region = labels == i
        if _horizon(region) <= horizon + 0.02 * h and np.count_nonzero(region & touch) >= bh:
            out |= region
    return out


def _bluish(hsv: np.ndarray) -> np.ndarray:
    """Pixels of a blue sky's hue and some saturation (HSV as float, hue in degrees)."""
    return (hsv[..., 0] >= 185) & (hsv[..., 0] <= 265) & (hsv[..., 1] >= 0.12)


def _clouds_in_bays(sky: np.ndarray, labels: np.ndarray, stats: np.ndarray,
                    pale: np.ndarray, horizon: float) -> np.ndarray:
    """Cloud-coloured smooth regions that start well above the horizon with the sky right above
    most of their columns (``BAY_ABOVE``, ``BAY_GAP``): a cloud in a gap between peaks whose
    rim is too textured to read as smooth on a darker print, so that it stands apart from
    the sky rather than as a hole in it (``_fill_clouds``). Mist on a rock face or snow
    under a crest has the rock above it."""
    h, w = sky.shape
    gap = max(1, int(BAY_GAP * h))
    out = np.zeros_like(sky)
    for i in range(1, len(stats)):
        x, y, bw, bh, area = stats[i]
        if area < 0.002 * h * w or y > horizon - BAY_TOP * h:
            continue
        piece = labels[:, x:x + bw] == i
        if piece[sky[:, x:x + bw]].any() or pale[:, x:x + bw][piece].mean() < BAY_PALE:
            continue
        cols = np.flatnonzero(piece.any(axis=0))
        tops = np.argmax(piece[:, cols], axis=0)
        above = [sky[max(0, t - gap):t, x + c].any() for c, t in zip(cols, tops)]
        if float(np.mean(above)) >= BAY_ABOVE:
            out[:, x:x + bw] |= piece
    return out


def reach_edge(sky: np.ndarray, small: np.ndarray, steps: int = EDGE_STEPS) -> np.ndarray:
    """The sky grown back to its edge: the smoothness test blurs the gradient, so the
    region found stops a few work pixels short of the horizon (10-20 px at 12 MP). Pixels
    next to it join while their colour stays within ``EDGE_DE`` of the sky's own colour
    nearby (the facade, hill or sea beyond the edge differs more); ``steps`` rings of
    one pixel at most."""
    lab = cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    out = sky.copy()
    window = (2 * EDGE_WINDOW + 1, 2 * EDGE_WINDOW + 1)
    ring_kernel = np.ones((3, 3), np.uint8)
    for _ in range(steps):
        inside = out.astype(np.float32)
        weight = cv2.blur(inside, window)
        ref = cv2.blur(lab * inside[..., None], window) / np.maximum(weight, 1e-6)[..., None]
        ring = (cv2.dilate(out.astype(np.uint8), ring_kernel) > 0) & ~out
        close = np.linalg.norm(lab - ref, axis=2) <= EDGE_DE
        grown = ring & close & (weight > 0.2)
        if not grown.any():
            break
        out |= grown
    return out


def _without_mist(sky: np.ndarray, pale: np.ndarray, horizon: float | None = None
                  ) -> np.ndarray:
    """``sky`` without its pale pieces that lie among the land (``MIST_SKY``): a wisp of
    mist on a rock face under a crest, a pale sea under a far horizon, is smooth and pale
    like a cloud, yet a cloud is sky only where sky surrounds it. Only pieces apart from
    the main body and off the top border are judged: pale ones, and with ``horizon`` (the
    main sky's, in rows) those of any colour whose top lies under it."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(sky.astype(np.uint8), 8)
    if count <= 2:
        return sky
    main = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    band = np.ones((2 * MIST_RING + 1, 2 * MIST_RING + 1), np.uint8)
    out = sky.copy()
    for i in range(1, count):
        if i == main or stats[i, cv2.CC_STAT_TOP] == 0:
            continue
        x, y, bw, bh, _ = stats[i]
        y0, x0 = max(0, y - MIST_RING), max(0, x - MIST_RING)
        y1, x1 = y + bh + MIST_RING + 1, x + bw + MIST_RING + 1
        piece = labels[y0:y1, x0:x1] == i
        under = horizon is not None and y > horizon
        if pale[y0:y1, x0:x1][piece].mean() < 0.5 and not under:
            continue
        ring = (cv2.dilate(piece.astype(np.uint8), band) > 0) & ~piece
        if ring.any() and float(sky[y0:y1, x0:x1][ring].mean()) < MIST_SKY:
            out[y0:y1, x0:x1][piece] = False
    return out


def _fill_clouds(sky: np.ndarray, pale: np.ndarray) -> np.ndarray:
    """Holes of the sky that are mostly ``pale`` (cloud-coloured) join it; other holes (a
    bird, a tower) stay out."""
    holes = ~sky
    count, labels, stats, _ = cv2.connectedComponentsWithStats(holes.astype(np.uint8), 8)
    out = sky.copy()
    h, w = sky.shape
    for i in range(1, count):
        x, y, bw, bh, area = stats[i]
        if x == 0 or y == 0 or x + bw >= w or y + bh >= h:      # open to the border
            continue
        hole = labels == i
        if pale[hole].mean() >= 0.7:
            out |= hole
    return out
