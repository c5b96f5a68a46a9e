"""Pixel work shared by the localisers: masks resized, cleaned and split into parts,
GrabCut (written once, started from a box or from a probability prior), box → mask
refinement.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import cv2
import numpy as np

from pipelines.color import COLOR_RANGES
from pipelines.images import downscale
from pipelines.localizers.base import Box, LocalizationError
from pipelines.localizers.holder import holder_cut
from pipelines.localizers.refine import upsample_edge
from pipelines.perception.detectors import shrink

log = logging.getLogger(__name__)

#: long side of the copy the embedded localiser analyses (masks come back at full size)
WORK_SIDE = 768


def work_copy(rgb: np.ndarray) -> np.ndarray:
    """The ≤ ``WORK_SIDE`` copy the colour and place rules analyse."""
    return downscale(rgb, WORK_SIDE)


def to_size(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Resize a bool/uint8/float mask to ``shape`` (nearest), as bool."""
    mask = np.asarray(mask)
    if mask.ndim == 3:
        mask = mask[..., -1] if mask.shape[2] in (2, 4) else mask.max(axis=2)
    binary = (mask > 0.5 if mask.dtype.kind == "f" else mask > 0).astype(np.uint8)
    if binary.shape != shape:
        binary = cv2.resize(binary, (shape[1], shape[0]), interpolation=cv2.INTER_NEAREST)
    return binary.astype(bool)


def smooth_resize(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """A bool mask resized to ``shape`` with smooth (not blocky) outlines."""
    if mask.shape == shape:
        return mask.astype(bool)
    if shape[0] >= mask.shape[0] and shape[1] >= mask.shape[1]:
        small = _enlarge_around(mask, shape)
        if small is not None:
            return small
    soft = cv2.resize(mask.astype(np.float32), (shape[1], shape[0]),
                      interpolation=cv2.INTER_LINEAR)
    return soft >= 0.5


def _enlarge_around(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray | None:
    """``smooth_resize``'s enlargement worked around the mask only, bit for bit (None when
    the mask spans too much of the frame for that to pay, or is empty).

    OpenCV's bilinear resize of floats runs along the rows first, then down the columns,
    and a pass along one axis alone (the other's scale 1: weights 1 and 0) gives those very
    values. So the first pass runs on the mask's rows alone (the others are 0 there) and
    the second on the columns the mask can reach alone (the others stay 0): the same
    answer as the whole resize at the cost of the mask's share of it.
    """
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0 or min(mask.shape) < 2:
        return None
    cols = np.flatnonzero(mask.any(axis=0))
    (r0, r1), (c0, c1) = (int(rows[0]), int(rows[-1]) + 1), (int(cols[0]), int(cols[-1]) + 1)
    # a pass over a single row takes another path in OpenCV (other roundings): two at least
    r0, r1 = (r0, r1) if r1 - r0 > 1 else (max(0, r1 - 2), max(0, r1 - 2) + 2)
    height, width = shape
    ratio = width / mask.shape[1]
    # output columns outside [d0, d1) read input columns outside [c0, c1) alone (a margin
    # of two pixels over the bilinear reach)
    d0 = max(0, int((c0 - 1) * ratio) - 3)
    d1 = min(width, int((c1 + 1) * ratio) + 3)
    if (r1 - r0) * width + height * (d1 - d0) > height * width // 2:
        return None
    along = cv2.resize(mask[r0:r1].astype(np.float32), (width, r1 - r0),
                       interpolation=cv2.INTER_LINEAR)
    part = np.zeros((mask.shape[0], d1 - d0), np.float32)
    part[r0:r1] = along[:, d0:d1]
    out = np.zeros(shape, bool)
    out[:, d0:d1] = cv2.resize(part, (d1 - d0, height), interpolation=cv2.INTER_LINEAR) >= 0.5
    return out


def hsv(rgb: np.ndarray) -> np.ndarray:
    """Float HSV: hue in degrees, saturation and value in [0, 1]."""
    return cv2.cvtColor(rgb.astype(np.float32) / 255.0, cv2.COLOR_RGB2HSV)


def colour_mask(rgb: np.ndarray, colours: list[str] | tuple[str, ...]) -> np.ndarray:
    """Pixels in any of the named colours' HSV families (``pipelines.color``)."""
    hsv_map = hsv(rgb)
    match = np.zeros(rgb.shape[:2], bool)
    for colour in colours:
        match |= COLOR_RANGES[colour].match(hsv_map)
    return match


def components(mask: np.ndarray, min_area: int, bridge: int = 3) -> list[np.ndarray]:
    """Connected parts of a cleaned mask, largest first, dropping specks.

    Pieces closer than ``bridge`` px (one object split by shading or highlights) count
    as one part; each part keeps only its own matching pixels.
    """
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    clean = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, kernel)
    clean = cv2.morphologyEx(clean, cv2.MORPH_CLOSE, kernel)
    joined = clean
    if bridge > 3:
        wide = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (bridge, bridge))
        joined = cv2.morphologyEx(clean, cv2.MORPH_CLOSE, wide)
    count, labels, _, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    if count <= 1:
        return []
    areas = np.bincount(labels[clean > 0], minlength=count)
    order = sorted(range(1, count), key=lambda i: -areas[i])
    return [(labels == i) & (clean > 0) for i in order if areas[i] >= min_area]


#: a core is the part of a region at least this share of its deepest distance from the
#: outline: touching discs keep one core each, a body with a thinner head or legs one
CORE_DEPTH = 0.5
#: each piece a region splits into holds at least this share of it
MIN_PIECE = 0.12
#: the cut between two pieces is at most this share of the smaller piece's diameter (a
#: neck where two outlines meet, not a body cut in half)
NECK = 0.6


def split_touching(region: np.ndarray) -> list[np.ndarray]:
    """A region made of touching instances (two discs, three cups) split into one piece
    each, or ``[region]`` when it is one thing.

    Each instance is a core far from the outline (distance ≥ ``CORE_DEPTH`` × the
    deepest); a watershed of the distance from those seeds cuts the region along the
    necks where the outlines meet. A split is kept only when every piece is big enough
    and every cut is a narrow neck, so a body with a head or legs stays whole.

    Args:
        region: bool (h, w) one connected region (a small working copy).

    Returns:
        Bool masks at ``region``'s size, largest first.
    """
    binary = region.astype(np.uint8)
    area = int(binary.sum())
    if area < 64:
        return [region]
    dist = cv2.distanceTransform(binary, cv2.DIST_L2, 5)
    count, seeds = cv2.connectedComponents((dist >= CORE_DEPTH * dist.max()).astype(np.uint8),
                                           connectivity=8)
    if count <= 2:
        return [region]
    from skimage.segmentation import watershed

    labels = watershed(-dist, seeds, mask=binary > 0)       # flooded from each core
    pieces = [labels == i for i in range(1, count)]
    sizes = [int(p.sum()) for p in pieces]
    if min(sizes) < MIN_PIECE * area:
        return [region]
    kernel = np.ones((3, 3), np.uint8)
    for i, a in enumerate(pieces):
        grown = cv2.dilate(a.astype(np.uint8), kernel) > 0
        for j in range(i + 1, len(pieces)):
            cut = int((grown & pieces[j]).sum())
            if cut and cut > NECK * 2 * np.sqrt(min(sizes[i], sizes[j]) / np.pi):
                return [region]
    order = np.argsort(sizes)[::-1]
    return [pieces[i] for i in order]


def largest_parts(mask: np.ndarray, keep: float = 0.1) -> np.ndarray:
    """Drop specks.

    Args:
        mask: bool mask.
        keep: a component stays when its area is at least this fraction of the largest.

    Returns:
        The mask without the smaller components.
    """
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), 8)
    if count <= 2:
        return mask
    areas = stats[1:, cv2.CC_STAT_AREA]
    return np.isin(labels, np.nonzero(areas >= keep * areas.max())[0] + 1)


def centroid(mask: np.ndarray) -> tuple[float, float]:
    """The mask's centre of mass as fractions (x, y) of the width and height."""
    ys, xs = np.nonzero(mask)
    return float(xs.mean()) / mask.shape[1], float(ys.mean()) / mask.shape[0]


def clip_box(box: Box, shape: tuple[int, int]) -> Box | None:
    """``box`` as ints inside an image of ``shape``, or None when nothing is left.

    Raises:
        LocalizationError: ``box`` is not four numbers.
    """
    try:
        x0, y0, x1, y1 = (int(round(float(v))) for v in box)
    except (TypeError, ValueError):
        raise LocalizationError(f"a box is (x0, y0, x1, y1), got {box!r}") from None
    x0, x1 = sorted((max(0, min(shape[1], x0)), max(0, min(shape[1], x1))))
    y0, y1 = sorted((max(0, min(shape[0], y0)), max(0, min(shape[0], y1))))
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None

# ------------------------------------------------------------------------- GrabCut


def grabcut(rgb: np.ndarray, box: Box, prior: np.ndarray | None = None,
            iterations: int = 4) -> np.ndarray | None:
    """GrabCut's foreground inside ``box``; outside the box is background.

    Args:
        rgb: uint8 RGB working copy.
        box: (x0, y0, x1, y1) in ``rgb``'s pixels.
        prior: optional foreground probability at ``rgb``'s size: inside the box ≥ 0.9 is
            foreground, ≥ 0.5 probably foreground, the rest probably background (a prior
            covering under 5 % of the box is ignored). Without it GrabCut starts from the
            rectangle.
        iterations: GrabCut iterations.

    Returns:
        The bool foreground mask (inside ``box``), or None when OpenCV fails.
    """
    x0, y0, x1, y1 = box
    inside = np.zeros(rgb.shape[:2], bool)
    inside[y0:y1, x0:x1] = True
    if prior is None:
        seed, rect, mode = np.zeros(rgb.shape[:2], np.uint8), (x0, y0, x1 - x0, y1 - y0), \
            cv2.GC_INIT_WITH_RECT
    else:
        seed = np.full(rgb.shape[:2], cv2.GC_BGD, np.uint8)
        seed[inside] = np.where(prior[inside] >= 0.5, cv2.GC_PR_FGD, cv2.GC_PR_BGD)
        seed[inside & (prior >= 0.9)] = cv2.GC_FGD
        if ((prior >= 0.5) & inside).sum() < 0.05 * inside.sum():
            seed[inside] = cv2.GC_PR_FGD        # the prior missed it: the box alone
        rect, mode = None, cv2.GC_INIT_WITH_MASK
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    # GrabCut seeds its colour models with k-means on OpenCV's thread-wide RNG: start it
    # the same way every call (0 = a fresh thread's state), so one request gives one mask
    # whatever ran before it in this thread (a batch worker, a Gradio thread, a test order)
    cv2.setRNGSeed(0)
    try:
        cv2.grabCut(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), seed, rect, bgd, fgd, iterations,
                    mode)
    except cv2.error as exc:
        log.info("GrabCut failed: %s", exc)
        return None
    return ((seed == cv2.GC_FGD) | (seed == cv2.GC_PR_FGD)) & inside


def grabcut_object(rgb: np.ndarray, box: Box) -> np.ndarray | None:
    """The main object inside ``box`` (GrabCut from the rectangle), or None when GrabCut
    degenerates (box too small, nearly nothing or nearly everything foreground)."""
    x0, y0, x1, y1 = box
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    fg = grabcut(rgb, box)
    if fg is None or not 0.04 <= fg[y0:y1, x0:x1].mean() <= 0.97:
        return None
    parts = components(fg, max(4, int(0.01 * (x1 - x0) * (y1 - y0))))
    return parts[0] if parts else None


def grabcut_seeded(crop: np.ndarray, inner: Box, prob: np.ndarray,
                   or_box: bool = True) -> np.ndarray:
    """GrabCut seeded by a salient-object map, falling back to the map (or the box) when
    it degenerates.

    Args:
        crop: uint8 RGB working copy.
        inner: the object's box in crop pixels.
        prob: salient-object probability at the crop's size.
        or_box: when neither GrabCut nor the map finds the object, the whole box (True)
            or nothing (False: the caller says no outline was found).

    Returns:
        A bool foreground mask at the crop's size, inside ``inner``.
    """
    x0, y0, x1, y1 = inner
    box = np.zeros(crop.shape[:2], bool)
    box[y0:y1, x0:x1] = True
    area = box.sum()
    salient = (prob >= 0.5) & box
    fg = grabcut(crop, inner, prior=prob, iterations=3)
    if fg is None:
        fg = salient
    if not 0.05 <= fg.sum() / max(1, area) <= 0.98:
        fg = salient if 0.05 <= salient.sum() / max(1, area) else box
        if fg is box and not or_box:
            return np.zeros_like(box)
    fg = holder_cut(crop, inner, fg, prob)
    return largest_parts(shadow_cut(crop, unsalient_cut(crop, fg, prob), prob))


#: GrabCut's mask is trusted to the salient map where the map sees the object: at least
#: this share of the mask is salient (>= 0.5) ...
SALIENT_TRUST = 0.7
#: ... and a part of the mask the map reads below this ...
UNSALIENT = 0.35
#: ... at least this share of the mask, on its outline, and of the colour of what lies
#: just outside it (median Lab within this distance) is what the object stands on, or what
#: is seen through a gap in it (the canyon between a man's arm and his body: 1.6 % of the
#: mask, salient 0.0-0.4, 11.8 ΔE from the canyon beside it; at 16 MP 48k px brightened
#: past his reach, reported done, while the part had to reach 2 %)
UNSALIENT_PART = 0.01
UNSALIENT_DE = 12.0
#: ... or a smaller part, of at least ``UNSALIENT_SMALL`` of the mask, that the map reads as
#: plain background (median below ``UNSALIENT_NONE``) and whose colour is nearer what lies
#: outside it than the object's own salient pixels beside it (the outside's Lab distance at
#: most ``UNSALIENT_NEARER`` of the object's, lightness weighted by ``UNSALIENT_L_WEIGHT``
#: as in CMC's 2:1, since shade and a print's tone move L more than chroma): a bump of
#: blue-grey rock on a brown jacket's shoulder (0.6-0.7 % of the mask, salient 0.0; 7-8
#: from the paler rock beside it, 20-26 from the jacket, on prints from gamma 0.8 to 1.25;
#: at 16 MP 6k px of rock brightened with the man, reported done)
UNSALIENT_SMALL, UNSALIENT_NONE, UNSALIENT_NEARER = 0.005, 0.1, 0.6
UNSALIENT_L_WEIGHT = 0.5


def unsalient_cut(crop: np.ndarray, fg: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``fg`` without the parts on its outline that the salient map says are not the
    object and that continue what lies outside it: GrabCut takes a floor tile of the
    dog's own white from colour alone (Loupe's real set, class "support": 5.7 % of the
    mask, salient 0.0 where the dog is 1.0). Only when the map sees most of the object; a
    part is cut only when it is sizeable, touches the outside and has the outside's colour
    there (a man's dark trousers the map misses are not the floor beside them)."""
    if not fg.any() or float((prob[fg] >= 0.5).mean()) < SALIENT_TRUST:
        return fg
    low = (fg & (prob < UNSALIENT)).astype(np.uint8)
    low = cv2.morphologyEx(low, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(low, 8)
    if count <= 1:
        return fg
    lab = cv2.cvtColor(crop[..., :3].astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    out = fg.copy()
    for i in range(1, count):
        if stats[i, cv2.CC_STAT_AREA] < UNSALIENT_SMALL * fg.sum():
            continue
        part = labels == i
        near = cv2.dilate(part.view(np.uint8), np.ones((7, 7), np.uint8)) > 0
        beside = near & ~fg
        if beside.sum() < 8:
            continue
        colour, ground = np.median(lab[part], axis=0), np.median(lab[beside], axis=0)
        gap = float(np.linalg.norm(colour - ground))
        if stats[i, cv2.CC_STAT_AREA] >= UNSALIENT_PART * fg.sum() and gap <= UNSALIENT_DE:
            out &= ~part
            continue
        body = near & fg & ~part & (prob >= 0.5)
        if body.sum() < 8 or float(np.median(prob[part])) >= UNSALIENT_NONE:
            continue
        weight = np.array([UNSALIENT_L_WEIGHT, 1.0, 1.0], np.float32)
        outside = float(np.linalg.norm(weight * (colour - ground)))
        own = float(np.linalg.norm(weight * (colour - np.median(lab[body], axis=0))))
        if outside <= UNSALIENT_NEARER * own:
            out &= ~part
    if out.sum() < fg.sum():
        log.info("parts the salient map reads as not the object left the outline: %d px",
                 int(fg.sum() - out.sum()))
    return out if out.any() else fg


#: a cast shadow on the outline: the mask's pixels within this share of the object's
#: short side of its outline, smooth (texture, the mean |L - blur(L)| over 5 px, under
#: ``SHADOW_SMOOTH`` Lab L) and reached from outside without an edge ...
SHADOW_DEPTH, SHADOW_SMOOTH = 0.06, 2.5
#: ... are cut as a part the salient map is unsure of (median below ``SHADOW_UNSURE``: its
#: soft fall-off, where the object itself reads 1.0), at least ``SHADOW_DARKER`` L darker
#: than the smooth ground just beside it and within ``SHADOW_CHROMA`` of its chroma (a,b):
#: the ground darkened, not a part of another kind. A white kitten on white paper: its
#: soft shadow (L 58-67 beside paper at 71-98, a/b 2 apart, salient 0.5-0.95) was taken
#: whole; at 16 MP 32k px past its reach were brightened and reported done
SHADOW_UNSURE, SHADOW_DARKER, SHADOW_CHROMA = 0.9, 8.0, 6.0
#: ... and a soft shadow (one with no edge) keeps at least this share of the ground's L:
#: a black dog's smooth shoulder on a dark backdrop (L 10 beside 30, the map unsure at
#: 0.36) is fur, not the backdrop in shade
SHADOW_KEEPS = 0.5


def shadow_cut(crop: np.ndarray, fg: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``fg`` without the cast shadow it took on its outline (the constants above): a
    part is cut only where nothing marks an edge between it and the ground beside it,
    it is the ground's chroma a little darker, and the salient map fades there. An
    object's own smooth parts keep an edge to the ground or read as salient (a dark tail
    on paper, the pale inside of an ear)."""
    if not fg.any():
        return fg
    lab = cv2.cvtColor(crop[..., :3].astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    light = lab[..., 0]
    tex = cv2.blur(np.abs(light - cv2.GaussianBlur(light, (0, 0), 1.0)), (5, 5))
    depth = cv2.distanceTransform(fg.astype(np.uint8), cv2.DIST_L2, 3)
    _, _, bw, bh = cv2.boundingRect(fg.astype(np.uint8))
    near = fg & (tex < SHADOW_SMOOTH) & (depth <= max(2.0, SHADOW_DEPTH * min(bw, bh)))
    _, labels, stats, _ = cv2.connectedComponentsWithStats(near.astype(np.uint8), 8)
    rim = np.unique(labels[near & (depth <= 1.5)])     # the parts on the outline
    out = fg.copy()
    for i in rim[rim > 0]:
        x, y, w, h, area = stats[i]
        if area < 4:
            continue
        # the part's box and the 3 px its 7-px neighbourhood reaches: a window, not the frame
        win = np.s_[max(0, y - 3):y + h + 3, max(0, x - 3):x + w + 3]
        part = labels[win] == i
        if float(np.median(prob[win][part])) >= SHADOW_UNSURE:
            continue
        beside = (cv2.dilate(part.view(np.uint8), np.ones((7, 7), np.uint8)) > 0) & ~fg[win]
        if beside.sum() < 8 or float(np.median(tex[win][beside])) >= SHADOW_SMOOTH:
            continue
        mine, ground = np.median(lab[win][part], axis=0), np.median(lab[win][beside], axis=0)
        if ground[0] - mine[0] >= SHADOW_DARKER and mine[0] >= SHADOW_KEEPS * ground[0] and \
                float(np.linalg.norm(mine[1:] - ground[1:])) <= SHADOW_CHROMA:
            out[win] &= ~part
    if out.sum() < fg.sum():
        log.info("a smooth, darker part of the ground's chroma left the outline: %d px "
                 "(a cast shadow)", int(fg.sum() - out.sum()))
    return out if out.any() else fg


#: a mask that runs along a side of the detector's box (off the frame's edge) for at least
#: this share of that side is cut by the box: a white cat's ears above the box drawn round
#: its head end on the box's straight top edge
BOX_CUT = 0.25
#: ... the box is grown on each such side by this share of its size and the object cut
#: again; what the new cut finds past the box, joined to the first cut, is added when the
#: object ends inside the grown box (it runs along none of its grown sides for
#: ``BOX_CUT``) and it is at most ``BOX_GROWTH`` of the first cut
BOX_REACH, BOX_GROWTH = 0.25, 0.5
#: ... unless the first crop's salient map reads nothing past each such side (below
#: ``UNSALIENT_NONE``, plain background, from ``BOX_CUT_GAP`` px past it on): the object
#: ends there, and the grown box's third net pass and second GrabCut are not run (a small
#: object at 20 MP: ~0.2 s of the zoom's ~1 s)
BOX_CUT_GAP = 2


def refine_box(rgb: np.ndarray, box: tuple[float, ...],
               saliency: Callable[[np.ndarray], np.ndarray], side: int = 256,
               or_box: bool = True, outline: Callable[..., np.ndarray | None] | None = None
               ) -> np.ndarray:
    """A pixel mask of the object in ``box``: ``saliency`` on the crop seeds GrabCut.

    The box is cropped with a margin at native resolution and worked on a small copy, so
    a 20-MP photo costs about what a 256-px crop does. A mask cut off by a side of the box
    (``BOX_CUT``) is cut again in a box grown on that side (``BOX_REACH``), kept when the
    object ends inside it; not when the first crop's salient map reads nothing past every
    such side (``_ends_at``): the object ends on the box there.

    Args:
        rgb: uint8 RGB image at full resolution.
        box: (x0, y0, x1, y1) in full-resolution pixels.
        saliency: crop → float map in [0, 1] at the crop's size.
        side: long side of the working copy of the crop.
        or_box: what to answer when nothing inside the box stands out: the whole box
            (True) or an empty mask (False).
        outline: another one-box cut tried first (``(rgb, box, or_box)`` → a mask as
            ``_cut_in_box``'s, or None to leave it to ``saliency``): a person's outline
            from ``pipelines.perception.people``.

    Returns:
        A bool mask at the image's size, True only inside ``box`` (or its grown sides).
    """
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)

    maps: list[tuple[np.ndarray, tuple[int, int, int, int]]] = []    # (map, box in it)

    def one(img: np.ndarray, b: tuple[int, int, int, int], keep: bool) -> np.ndarray:
        found = outline(img, b, keep) if outline else None
        return _cut_in_box(img, b, saliency, side, keep, maps) if found is None else found

    full = one(rgb, (x0, y0, x1, y1), or_box)
    cut = _box_cut_sides(full, (x0, y0, x1, y1))
    if not cut or (maps and _ends_at(*maps[0], cut)):
        return full
    bw, bh = x1 - x0, y1 - y0
    grown = (max(0, x0 - round(BOX_REACH * bw)) if 0 in cut else x0,
             max(0, y0 - round(BOX_REACH * bh)) if 1 in cut else y0,
             min(w, x1 + round(BOX_REACH * bw)) if 2 in cut else x1,
             min(h, y1 + round(BOX_REACH * bh)) if 3 in cut else y1)
    again = one(rgb, grown, or_box)
    if any(k in _box_cut_sides(again, grown) for k in cut):
        return full         # it runs on past the grown box too: not an end cut off
    # only what continues the first cut across the box's side; inside the box it stands.
    # Both cuts lie in the grown box: its window is read, not the frame (50 MP at most)
    gx0, gy0, gx1, gy1 = grown
    first = full[gy0:gy1, gx0:gx1]
    past = again[gy0:gy1, gx0:gx1].copy()
    past[y0 - gy0:y1 - gy0, x0 - gx0:x1 - gx0] = False
    _, labels = cv2.connectedComponents((past | first).astype(np.uint8), connectivity=8)
    keep = np.unique(labels[first])
    past &= np.isin(labels, keep[keep > 0])
    if not past.any() or past.sum() > BOX_GROWTH * full.sum():
        return full
    log.info("the mask ran along the box's side(s) %s: %d px past it added", sorted(cut),
             int(past.sum()))
    full[gy0:gy1, gx0:gx1] |= past
    return full


def _box_cut_sides(mask: np.ndarray, box: tuple[int, int, int, int]) -> set[int]:
    """The sides of ``box`` (0 left, 1 top, 2 right, 3 bottom) off the frame's edge along
    which ``mask`` runs for at least ``BOX_CUT`` of the side (within 2 px of it)."""
    h, w = mask.shape
    x0, y0, x1, y1 = box
    if x1 - x0 < 8 or y1 - y0 < 8 or not mask.any():
        return set()
    bands = {0: (x0 > 0, mask[y0:y1, x0:x0 + 2].any(axis=1)),
             1: (y0 > 0, mask[y0:y0 + 2, x0:x1].any(axis=0)),
             2: (x1 < w, mask[y0:y1, x1 - 2:x1].any(axis=1)),
             3: (y1 < h, mask[y1 - 2:y1, x0:x1].any(axis=0))}
    return {k for k, (inside, run) in bands.items() if inside and run.mean() >= BOX_CUT}


def _ends_at(prob: np.ndarray, inner: tuple[int, int, int, int], sides: set[int]) -> bool:
    """Whether the salient map ``prob`` of a crop reads nothing (below ``UNSALIENT_NONE``)
    from ``BOX_CUT_GAP`` px past each of the ``sides`` of ``inner`` (the box in the crop)
    to the crop's edge, along the box's extent; False where the crop has nothing there."""
    x0, y0, x1, y1 = inner
    gap = BOX_CUT_GAP
    past = {0: prob[y0:y1, :max(0, x0 - gap)], 1: prob[:max(0, y0 - gap), x0:x1],
            2: prob[y0:y1, x1 + gap:], 3: prob[y1 + gap:, x0:x1]}
    return all(past[k].size and float(past[k].max()) < UNSALIENT_NONE for k in sides)


def _cut_in_box(rgb: np.ndarray, box: tuple[int, int, int, int],
                saliency: Callable[[np.ndarray], np.ndarray], side: int, or_box: bool,
                maps: list | None = None) -> np.ndarray:
    """``refine_box``'s one cut: the object in the (clamped) ``box``, a mask at the image's
    size that is True only inside it (its crop's salient map and the box in that crop are
    appended to ``maps`` when given)."""
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = box
    full = np.zeros((h, w), bool)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return full
    pad = max(4, (x1 - x0 + y1 - y0) // 16)
    cx0, cy0, cx1, cy1 = max(0, x0 - pad), max(0, y0 - pad), min(w, x1 + pad), \
        min(h, y1 + pad)
    crop = shrink(rgb[cy0:cy1, cx0:cx1], side)
    s = crop.shape[1] / (cx1 - cx0)
    inner = (int((x0 - cx0) * s), int((y0 - cy0) * s),
             max(int((x0 - cx0) * s) + 1, int(round((x1 - cx0) * s))),
             max(int((y0 - cy0) * s) + 1, int(round((y1 - cy0) * s))))
    prob = saliency(crop)
    if maps is not None:
        maps.append((prob, inner))
    soft = grabcut_seeded(crop, inner, prob, or_box)
    win = full[cy0:cy1, cx0:cx1]     # only the crop is written, not the whole (20-MP) frame
    win[:] = to_native(rgb[cy0:cy1, cx0:cx1], soft)
    bx0, by0, bx1, by1 = x0 - cx0, y0 - cy0, x1 - cx0, y1 - cy0     # the box in the window
    win[:by0], win[by1:], win[:, :bx0], win[:, bx1:] = False, False, False, False
    if not win.any() and or_box:
        full[y0:y1, x0:x1] = True
    return full


#: a working copy at least this many times smaller than the native crop has its edge
#: decided again at native resolution; a nearly native copy's enlarged edge is already
#: within a pixel, and a filter there only moves it by noise
NATIVE_EDGE_SCALE = 2.0


def to_native(crop: np.ndarray, soft: np.ndarray) -> np.ndarray:
    """A mask found on a small copy of ``crop``, at ``crop``'s size, its edge decided at
    native resolution (``refine.upsample_edge``: a guided filter on the edge band only)
    when the copy was much smaller; a plain bilinear enlargement otherwise.

    Args:
        crop: uint8 (H, W, 3) native-resolution pixels.
        soft: bool or float (h, w) mask of the small copy (same aspect).

    Returns:
        bool (H, W).
    """
    h, w = crop.shape[:2]
    soft = soft.astype(np.float32)
    if w / soft.shape[1] < NATIVE_EDGE_SCALE:
        return cv2.resize(soft, (w, h), interpolation=cv2.INTER_LINEAR) >= 0.5
    return upsample_edge(crop, cv2.GaussianBlur(soft, (3, 3), 0))
