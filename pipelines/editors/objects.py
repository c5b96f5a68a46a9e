"""Object edges: where an object really ends, and how much of each edge pixel is object.

A localiser's mask is rarely exact at native resolution: it is found on a small copy and
scaled up, so it can stop a few pixels short of the anti-aliased edge or the cast shadow.
Removing or recolouring inside such a mask leaves a rim of the old colour. Two measured
steps fix that, for any editor:

* ``grow_to_edge(rgb, mask)`` grows the mask ring by ring while the ring still differs
  from the background farther out by more than that background's own texture (measured
  on the edge, not a fixed pixel count), up to a limit that scales with the object;
* ``coverage(rgb, mask, core)`` unmixes every pixel of the grown band into "object" and
  "local background" (an anti-aliased edge pixel is ``a·object + (1 − a)·background``),
  so a recolour or a move can treat edge pixels by their alpha instead of cutting them.

Pure functions on ``uint8`` RGB crops; the callers crop around the mask first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from pipelines.color import rgb_to_lab

#: growth stops when a ring's 90th-percentile difference from the background falls below
#: this many times the background's own (texture) 90th percentile, plus ``MIN_EXCESS`` ΔE
EDGE_NOISE_FACTOR = 1.15
MIN_EXCESS = 2.0
#: rings kept beyond the last one that still differed (the anti-aliased tail)
SAFETY_PX = 1
#: how much more of a ring than of the ring ``max(3, limit // 4)`` px farther out must
#: stand out for the growth to go on (an edge or a shadow fades outwards; clutter does not)
EDGE_DECLINE = 0.05


@dataclass(frozen=True)
class EdgeGrowth:
    """The result of ``grow_to_edge``.

    Attributes:
        mask: the grown mask (bool, the input's size).
        grown: pixels added on the widest side (0 when the mask already covered the edge).
        noise: the background's own 90th-percentile colour difference (ΔE, CIE76).
        limit: the most the mask was allowed to grow.
    """

    mask: np.ndarray
    grown: int
    noise: float
    limit: int


def growth_limit(mask: np.ndarray) -> int:
    """The most a mask may grow: a quarter of the object's equivalent radius, 4–64 px."""
    radius = math.sqrt(max(1, int(np.count_nonzero(mask))) / math.pi)
    return int(np.clip(round(0.25 * radius), 4, 64))


#: Gaussian blurs wider than this (sigma, px) run on a copy shrunk by sigma / this
BLUR_SHRINK_SIGMA = 4.0


def _blur(values: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur; a wide one runs on an area-shrunk copy and is enlarged back (the
    result is smooth at that scale anyway: seconds become milliseconds at 12 MP)."""
    factor = int(sigma // BLUR_SHRINK_SIGMA)
    if factor < 2:
        return cv2.GaussianBlur(values, (0, 0), sigma)
    h, w = values.shape[:2]
    size = (max(1, round(w / factor)), max(1, round(h / factor)))
    small = cv2.resize(values, size, interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigma / factor)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR).reshape(values.shape)


def _masked_mean_at(values: np.ndarray, where: np.ndarray, at: tuple[np.ndarray, np.ndarray],
                    shape: tuple[int, int], sigma: float) -> np.ndarray:
    """Local mean (a normalised Gaussian) over the pixels ``where`` of ``values``, read at
    the pixels ``at`` only; ``values`` (N, 3) and ``where`` (N,) are given at ``at`` alone
    (the pixels averaged are among them). A channel at a time: one full-size plane, never
    a full-size colour image."""
    flat = np.ravel_multi_index(at, shape)   # one index per pixel: faster than two
    plane = np.zeros(shape, np.float32)
    line = plane.reshape(-1)
    line[flat] = where
    den = _blur(plane, sigma).reshape(-1)[flat]
    out = np.empty(values.shape, np.float32)
    for c in range(values.shape[1]):
        line[flat] = values[:, c] * where
        out[:, c] = _blur(plane, sigma).reshape(-1)[flat]
    return out / np.maximum(den, 1e-6)[:, None]


def _spread_mean(values: np.ndarray, where: np.ndarray, sigma: float,
                 need: np.ndarray | None = None) -> np.ndarray:
    """``_masked_mean`` that reaches everywhere: wider blurs fill where narrow ones have no
    support (a local colour carried across a band of any width). With ``need`` (bool) the
    answer is exact there only (other pixels may stay 0): no wider blur is made once every
    pixel needed has its value."""
    weight = where.astype(np.float32)
    weighted = values * weight[..., None]
    out = np.zeros(values.shape, np.float32)
    todo = np.ones(where.shape, bool) if need is None else need.copy()
    for s in (sigma, 3 * sigma, 9 * sigma, 27 * sigma):
        num = _blur(weighted, s)
        den = _blur(weight, s)
        ready = todo & (den > 0.02)
        # in place where ready: the same quotients as gathering them, without the copies
        np.divide(num, den[..., None], out=out, where=ready[..., None])
        todo &= ~ready
        if not todo.any():
            return out
    out[todo] = values[where].mean(axis=0) if where.any() else 0.0
    return out


def grow_to_edge(rgb: np.ndarray, mask: np.ndarray, limit: int | None = None,
                 avoid: np.ndarray | None = None, band: int | None = None,
                 fade: bool = True) -> EdgeGrowth:
    """Grow ``mask`` over the object's anti-aliased edge and cast shadow.

    The background is measured in a reference ring just beyond the growth limit (its local
    mean, so gradients do not count, and its own texture as the noise level); rings at
    1, 2, … px outside the mask are compared with it, and the mask grows to the last ring
    whose 90th-percentile difference still stands out of that noise (plus ``SAFETY_PX``).
    Narrow parts the localiser cut short (tips too thin to lift a ring's percentile) are
    then added pixel by pixel: those within the limit that stand out of the noise and
    connect to the grown mask.

    Args:
        rgb: uint8 (H, W, 3) crop around the object (room for ``limit`` + a ring around).
        mask: bool (H, W) object mask from a localiser or a brush.
        limit: most pixels to grow; default ``growth_limit(mask)``.
        avoid: bool (H, W), the other objects seen (neighbours): never grown into, left
            out of the rings and of the background's measure, and a grown pixel closer in
            colour to a neighbour than to the object is not taken.
        band: the most the result may reach beyond ``mask`` (px): the growth runs as
            above (its reference ring past ``limit``, its neighbour rules) and is then cut
            to this.
        fade: grow only while the share of a ring that stands out still falls over the
            next rings (``EDGE_DECLINE``: an edge or a shadow fades outwards, a cluttered
            surround does not); False grows while a ring stands out at all (a removal's
            hole, on which the fill check's measures were set).

    Returns:
        An ``EdgeGrowth``.
    """
    mask = mask.astype(bool)
    limit = growth_limit(mask) if limit is None else int(limit)
    if not mask.any() or mask.all() or limit <= 0:
        return EdgeGrowth(mask.copy(), 0, 0.0, limit)
    free = _free(mask, avoid)
    distance = cv2.distanceTransform((~mask).astype(np.uint8), cv2.DIST_L2, 5)
    width = max(4, limit // 2)
    reference = (distance > limit + 1) & (distance <= limit + 1 + width) & free
    if reference.sum() < 16:
        return EdgeGrowth(mask.copy(), 0, 0.0, limit)
    # the colour difference from the background is read on a band only: the rings, the
    # reference ring and the mask's own edge (deeper inside it changes nothing; a 50-MP
    # object's crop in Lab alone is 600 MB)
    inner = cv2.erode(mask.view(np.uint8), np.ones((5, 5), np.uint8)) > 0
    at = np.nonzero((distance <= limit + 1 + width) & ~inner)
    del inner
    lab_at = rgb_to_lab(rgb[at])
    background = _masked_mean_at(lab_at, reference[at], at, mask.shape,
                                 sigma=max(4.0, 1.5 * limit))
    deviation = np.zeros(mask.shape, np.float32)
    deviation[at] = np.linalg.norm(lab_at - background, axis=1)
    del background, lab_at, at
    noise = float(np.percentile(deviation[reference], 90))
    threshold = EDGE_NOISE_FACTOR * noise + MIN_EXCESS
    grown = 0
    # ring d holds the free pixels with d - 1 < distance <= d: sorted by ring once, each
    # ring's deviations are one slice (the same values, so the same percentiles); with
    # ``fade`` the rings run ``ahead`` px past the limit, for the decline test
    ahead = max(3, limit // 4) if fade else 0
    near = free & (distance > 0) & (distance <= limit + ahead)
    rings, values = np.ceil(distance[near]).astype(np.int32), deviation[near]
    order = np.argsort(rings, kind="stable")
    rings, values = rings[order], values[order]
    starts = np.searchsorted(rings, np.arange(1, limit + ahead + 2))
    share = [float(np.mean(values[starts[d - 1]:starts[d]] > threshold))
             if starts[d] > starts[d - 1] else 0.0
             for d in range(1, limit + ahead + 1)] if fade else []
    for d in range(1, limit + 1):
        ring = values[starts[d - 1]:starts[d]]
        if ring.size < 4:
            break
        if float(np.percentile(ring, 90)) > threshold:
            # an edge or a shadow fades outwards: the share of the ring that stands out
            # must still fall over the next ``ahead`` px; a cluttered surround (a bezel,
            # cables) stands out as much at every distance and is not the object's
            if fade and share[d - 1] - share[d - 1 + ahead] < EDGE_DECLINE:
                break
            grown = d
    reach = min(limit, grown + SAFETY_PX) if grown else 0
    out = mask | ((distance <= reach) & free) if reach else mask.copy()
    # parts that poke out farther than most of the outline (a star's tips, an ear): too few
    # pixels to lift a ring's percentile, so taken pixel by pixel where they connect
    # (a single pixel is judged against the background's 99th percentile, not its 90th)
    single = max(threshold, float(np.percentile(deviation[reference], 99)) + MIN_EXCESS)
    tips = _connected(out, (deviation > single) & (distance <= limit))
    if tips.any():
        tips = cv2.dilate(tips.astype(np.uint8), np.ones((2 * SAFETY_PX + 1,) * 2, np.uint8)) > 0
        out |= tips & (distance <= limit) & free
        reach = max(reach, int(np.ceil(distance[out].max())))
    if avoid is not None and (out & ~mask).any():
        # beside neighbours, only what stands out of the background (the edge, the
        # shadow; a plain surface shared with a neighbour is neither), and only pixels
        # nearer the object's colour than a neighbour's
        kernel = np.ones((2 * SAFETY_PX + 1,) * 2, np.uint8)
        stands = cv2.dilate((deviation > threshold).astype(np.uint8), kernel) > 0
        added = out & ~mask & (stands | (distance <= SAFETY_PX))
        out = mask | _connected(mask, _nearer_object(rgb_to_lab(rgb), mask, added,
                                                     ~free & ~mask, limit))
        reach = int(np.ceil(distance[out].max())) if (out & ~mask).any() else 0
    if band is not None and reach > band:
        out, reach = out & (distance <= band), int(band)
    return EdgeGrowth(out, reach, noise, limit)


#: pixels around a neighbour's mask that count as the neighbour (its own anti-aliased
#: edge, which its localised mask may stop short of)
NEIGHBOUR_EDGE_PX = 2


def _free(mask: np.ndarray, avoid: np.ndarray | None) -> np.ndarray:
    """Where a mask may grow: everywhere but the neighbours (and their edge)."""
    if avoid is None or not np.any(avoid):
        return np.ones(mask.shape, bool)
    size = 2 * NEIGHBOUR_EDGE_PX + 1
    near = cv2.dilate(np.asarray(avoid, np.uint8), np.ones((size, size), np.uint8)) > 0
    return ~near | mask


def _nearer_object(lab: np.ndarray, mask: np.ndarray, added: np.ndarray,
                   neighbours: np.ndarray, limit: int) -> np.ndarray:
    """The ``added`` pixels, less those nearer a neighbour than the object, and those
    within ``limit`` of a neighbour that are closer in colour to the neighbour's body
    (its core, not its mixed edge) than to the object's own nearby pixels (by more than
    ``MIN_EXCESS``)."""
    size = 4 * NEIGHBOUR_EDGE_PX + 1
    body = cv2.erode(neighbours.astype(np.uint8), np.ones((size, size), np.uint8)) > 0
    if not body.any():
        return added
    to_neighbour = cv2.distanceTransform((~neighbours).astype(np.uint8), cv2.DIST_L2, 5)
    to_object = cv2.distanceTransform((~mask).astype(np.uint8), cv2.DIST_L2, 5)
    near = to_neighbour <= limit
    added = added & ~(to_neighbour < to_object)         # the neighbour's side of the gap
    own = _spread_mean(lab, mask, 4.0)
    other = _spread_mean(lab, body, 4.0)
    closer = np.linalg.norm(lab - other, axis=2) + MIN_EXCESS < \
        np.linalg.norm(lab - own, axis=2)          # (look-alike neighbours: no tie-break)
    return added & ~(near & closer)


def _connected(seed: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The ``candidates`` outside ``seed`` that connect to it (8-neighbours) through
    candidates."""
    joined = (seed | candidates).astype(np.uint8)
    count, labels = cv2.connectedComponents(joined, connectivity=8)
    if count <= 1:
        return np.zeros(seed.shape, bool)
    keep = np.zeros(count, bool)
    keep[labels[seed]] = True   # (no sorted copy of a large seed's labels, as unique made)
    keep[0] = False
    return keep[labels] & candidates & ~seed


@dataclass(frozen=True)
class Unmixed:
    """An object's band split into coverage and the two colours each pixel mixes.

    Attributes:
        alpha: float32 (H, W), 1 on the core, 0 outside the mask, the object's share between.
        obj: float32 (H, W, 3) sRGB in [0, 1]: the local object colour (from the core).
        background: float32 (H, W, 3): the local background colour (just outside the mask).
    """

    alpha: np.ndarray
    obj: np.ndarray
    background: np.ndarray


def coverage(rgb: np.ndarray, mask: np.ndarray, core: np.ndarray, *,
             band_only: bool = False) -> Unmixed:
    """How much of each pixel is object: 1 on ``core``, 0 outside ``mask``, unmixed between.

    A pixel of the band (``mask`` minus ``core``) is modelled as ``a·O + (1 − a)·B``, with
    ``O`` the local object colour (the nearby core) and ``B`` the local background (just
    outside ``mask``); ``a`` is its projection on the line from ``B`` to ``O``. Where the
    two colours are too close to tell apart, the band counts as object.

    Args:
        rgb: uint8 (H, W, 3) or float32 in [0, 1].
        mask: bool (H, W), the grown object mask.
        core: bool (H, W), the pixels surely inside the object (``core ⊆ mask``).
        band_only: ``obj`` is needed on ``mask`` only and ``background`` on the band only
            (a recolour's reads): elsewhere they may hold anything. ``alpha`` is the same.

    Returns:
        The ``Unmixed`` band.
    """
    img = rgb[..., :3].astype(np.float32) / (255.0 if rgb.dtype == np.uint8 else 1.0)
    mask, core = mask.astype(bool), core.astype(bool) & mask.astype(bool)
    alpha = np.where(mask, 1.0, 0.0).astype(np.float32)
    band = mask & ~core
    outside = ~mask & (cv2.dilate(mask.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0)
    if not band.any() or not core.any() or not outside.any():
        return Unmixed(alpha, img, img)
    obj = _spread_mean(img, core, 4.0, mask if band_only else None)
    bg = _spread_mean(img, outside, 4.0, band if band_only else None)
    # the unmixing is read on the band alone: computed there (the same per-pixel values)
    o, b = obj[band], bg[band]
    span = o - b
    length2 = np.sum(span * span, axis=-1)
    a = np.clip(np.sum((img[band] - b) * span, axis=-1) / np.maximum(length2, 1e-6), 0.0, 1.0)
    alpha[band] = np.where(length2 < 0.1 ** 2, 1.0, a)   # alike: no unmixing
    return Unmixed(alpha, obj, bg)


def object_core(mask: np.ndarray, grown: int) -> np.ndarray:
    """The pixels surely inside the object: ``mask`` eroded by the grown width + 3 px
    (the anti-aliased edge and the localiser's own error)."""
    width = int(grown) + 3
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * width + 1, 2 * width + 1))
    m = mask.astype(np.uint8)
    core = _erode_wide(m, kernel) if width >= WIDE_ERODE else None
    if core is None:
        core = cv2.erode(m, kernel, borderType=cv2.BORDER_REPLICATE) > 0
    return core if core.any() else mask.astype(bool)


#: an in-place edit's unmixed rim: this share of ``growth_limit``, at least ``UNMIX_MIN_PX``
UNMIX_SHARE, UNMIX_MIN_PX = 1 / 3, 4


def unmix_core(mask: np.ndarray) -> np.ndarray:
    """The pixels an in-place edit (a recolour) takes as wholly object: ``mask`` less a rim
    of a third of ``growth_limit`` (≥ 4 px) + 3 px, where ``coverage`` unmixes.

    Such a mask grows over the edge by 0.5 % of the long side (the executor's
    ``EDGE_BAND``), not by a removal's quarter radius. A rim that wide (42 px on a
    kookaburra at 768 px) unmixed a many-coloured thing against colours from far across
    it: its white head and belly read as background and stayed white, and the sunlit
    half of a 35-px train stayed grey, inside the mask of a "make it blue".
    """
    limit = growth_limit(mask)
    return object_core(mask, min(limit, max(UNMIX_MIN_PX, round(UNMIX_SHARE * limit))))


#: from this half-width on, ``object_core`` erodes through a distance transform: OpenCV's
#: erode costs a large elliptical kernel's every row per pixel (0.1–0.5 s at 12 MP)
WIDE_ERODE = 24


def _erode_wide(mask: np.ndarray, kernel: np.ndarray, budget: int = 8_000_000
                ) -> np.ndarray | None:
    """``cv2.erode(mask, kernel, borderType=BORDER_REPLICATE) > 0``, bit for bit, for a
    symmetric (2w+1)² kernel; None when too many pixels would need the exact test.

    With ``d`` the exact Euclidean distance to the nearest 0 (OpenCV's precise transform
    on the edge-replicated mask): a pixel whose ``d²`` exceeds every kernel offset's
    squared length keeps its 1; one with a 0 nearer than the shortest offset the kernel
    leaves out loses it; the few in between (a ring one or two pixels wide) are tested
    against the kernel offsets of that length directly. Squared lengths are whole
    numbers, so a margin of 0.5 absorbs the float rounding of ``d``.
    """
    width = kernel.shape[0] // 2
    h, w = mask.shape
    k = width + 1
    pad = cv2.copyMakeBorder(mask, k, k, k, k, cv2.BORDER_REPLICATE)
    dist = cv2.distanceTransform(pad, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)[k:k + h, k:k + w]
    d2 = dist * dist
    ys, xs = np.mgrid[-width:width + 1, -width:width + 1]
    norm2 = xs * xs + ys * ys
    inside = kernel > 0
    shortest_out = min(int(norm2[~inside].min()) if (~inside).any() else k * k, k * k)
    out = d2 > int(norm2[inside].max()) + 0.5
    uy, ux = np.nonzero((d2 >= shortest_out - 0.5) & ~out)
    vy, vx = np.nonzero(inside & (norm2 >= shortest_out - 1))
    if uy.size * vy.size > budget:
        return None
    if uy.size:
        flat = pad.reshape(-1)
        at = (uy + k) * pad.shape[1] + (ux + k)
        offsets = (vy - width) * pad.shape[1] + (vx - width)
        out[uy, ux] = ~(flat[at[:, None] + offsets[None, :]] == 0).any(axis=1)
    return out


def grow_object_mask(image: np.ndarray, mask: np.ndarray, avoid: np.ndarray | None = None,
                     band: int | None = None, fade: bool = True) -> tuple[np.ndarray, int]:
    """``grow_to_edge`` at native resolution, worked on the mask's box plus its margin only.

    Args:
        image: uint8 (H, W, 3|4) full frame.
        mask: bool (H, W) object mask.
        avoid: bool (H, W), the other objects seen (see ``grow_to_edge``).
        band: the most the result may reach beyond ``mask`` (see ``grow_to_edge``).
        fade: see ``grow_to_edge``.

    Returns:
        ``(grown mask at the frame's size, pixels grown)``; a whole-frame or empty mask is
        returned as it is.
    """
    mask = np.asarray(mask, dtype=bool)
    if not mask.any() or mask.all():
        return mask, 0
    limit = growth_limit(mask)
    pad = limit + 2 + max(4, limit // 2) + 2
    x, y, w, h = cv2.boundingRect(mask.view(np.uint8))
    y0, y1 = max(0, y - pad), min(mask.shape[0], y + h + pad)
    x0, x1 = max(0, x - pad), min(mask.shape[1], x + w + pad)
    near = None if avoid is None else np.asarray(avoid, bool)[y0:y1, x0:x1]
    found = grow_to_edge(image[y0:y1, x0:x1, :3], mask[y0:y1, x0:x1], limit, near, band,
                         fade)
    if found.grown == 0:
        return mask, 0
    out = mask.copy()
    out[y0:y1, x0:x1] |= found.mask
    return out, found.grown


def move_matrix(mask: np.ndarray, scale: float, shift: tuple[float, float]) -> np.ndarray:
    """2×3 affine matrix: scale about the mask's centroid, then shift by ``(dx, dy)`` px."""
    ys, xs = np.nonzero(mask)
    cx, cy = (float(xs.mean()), float(ys.mean())) if xs.size else (0.0, 0.0)
    return np.array([[scale, 0.0, (1 - scale) * cx + shift[0]],
                     [0.0, scale, (1 - scale) * cy + shift[1]]], np.float64)


def moved_mask(mask: np.ndarray, scale: float, shift: tuple[float, float]) -> np.ndarray:
    """Where ``mask`` lands after ``move_matrix`` (bool, same size, clipped to it)."""
    if not mask.any():
        return mask.copy()
    warped = cv2.warpAffine(mask.astype(np.uint8) * 255, move_matrix(mask, scale, shift),
                            (mask.shape[1], mask.shape[0]), flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return warped > 0


def cut_out(rgb: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The object as premultiplied colour and alpha (float32), edges unmixed from the
    background so a moved object carries none of its old surroundings."""
    img = rgb[..., :3].astype(np.float32) / (255.0 if rgb.dtype == np.uint8 else 1.0)
    split = coverage(img, mask, object_core(mask, growth_limit(mask)))
    alpha = split.alpha
    colour = np.where((alpha < 1.0)[..., None], split.obj, img)
    return colour * alpha[..., None], alpha
