"""The zoom search: ``ObjectDetector`` over native-resolution tiles, for objects too small
to see on the downscaled frame (the zoom-in search of DLEBench and the agents' papers).

The detector's passes are the search's cost; the rest is kept off the calling thread's
critical path where that cannot change an answer: each tile and crop asks the detector for
the wanted classes only (NMS runs per class, so they are the boxes every class's pass
keeps of them), and the look-alike comparisons run on two threads, merged in one order.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

from pipelines.perception.detectors import (
    NANODET_SIDE,
    Box,
    Detection,
    ObjectDetector,
    nms,
    shrink,
    tile_grid,
)

log = logging.getLogger(__name__)

#: places that look like a sure find, looked at after the search stopped early
LOOK_ALIKES = 2
#: the least normalised cross-correlation with the find for a place to be looked at (the
#: detector decides; this keeps the passes few: textured ground reaches ~0.63)
LOOK_ALIKE_NCC = 0.7
#: the find's longest side on the copy it is compared on
LOOK_ALIKE_SIDE = 32
#: the find's sizes (and each mirrored) compared with the frame, in this order
LOOK_ALIKE_SCALES = (0.8, 1.0, 1.25)


def search(detector: ObjectDetector, rgb: np.ndarray, labels: set[str],
           min_score: float = 0.25, tile: int = 1024, max_tiles: int = 12, confirm: int = 3,
           priority: np.ndarray | None = None, enough: float | None = None
           ) -> list[Detection]:
    """Look for ``labels`` where the frame pass cannot see them, coarse to fine:

    1. overlapping native-resolution tiles (the tile grows when the grid would exceed
       ``max_tiles``), keeping even weak boxes of the wanted labels (half ``min_score``);
    2. each of the ``confirm`` best boxes is looked at again on a crop of about three
       times its size, where it fills the detector's view; only boxes that reach
       ``min_score`` there are returned.

    With ``enough``, the tiles are visited most promising first (the highest value of
    ``priority``, a low-resolution map of the frame such as the salient map, inside
    each) and a weak box that reaches ``min_score`` is confirmed at once: the search
    stops as soon as a confirmed box reaches ``enough`` (one sure object is what was
    asked for), then confirms the places that look like it (``look_alikes``), so that
    a twin elsewhere is not missed. Without it every tile is seen, and the answer does
    not depend on the order.

    Returns:
        Confirmed detections of the wanted labels, in full-image coordinates.
    """
    h, w = rgb.shape[:2]
    if max(h, w) <= tile * 1.2:
        return []
    while len(tile_grid(h, w, tile, 0.2)) > max_tiles:
        tile = int(tile * 1.25)
    tiles = tile_grid(h, w, tile, 0.2)
    if priority is not None and enough is not None:
        tiles = _by_priority(tiles, priority, (h, w))
    weak: list[Detection] = []
    confirmed: dict[Box, list[Detection]] = {}
    for x0, y0, x1, y1 in tiles:
        view = shrink(rgb[y0:y1, x0:x1], 2 * NANODET_SIDE)
        k = (x1 - x0) / view.shape[1]
        for d in detector.detect(view, min_score / 2, labels=labels):
            d.box = (d.box[0] * k + x0, d.box[1] * k + y0, d.box[2] * k + x0,
                     d.box[3] * k + y0)
            if _inside_tile(d, (x0, y0, x1, y1), (w, h)):
                weak.append(d)
        if enough is None or len(confirmed) >= confirm or not weak:
            continue
        best = nms(weak)[0]
        if best.score >= min_score and best.box not in confirmed:
            confirmed[best.box] = _confirm(detector, rgb, best, labels, min_score)
            if any(d.score >= enough for d in confirmed[best.box]):
                log.debug("zoom search: a sure %s after %d of %d tiles", best.label,
                          tiles.index((x0, y0, x1, y1)) + 1, len(tiles))
                found = nms([d for v in confirmed.values() for d in v])
                return nms(found + look_alikes(detector, rgb, found[0], labels, min_score))
    found = []
    for cand in nms(weak)[:confirm]:
        if cand.box not in confirmed:
            confirmed[cand.box] = _confirm(detector, rgb, cand, labels, min_score)
        found += confirmed[cand.box]
    return nms(found)


def look_alikes(detector: ObjectDetector, rgb: np.ndarray, found: Detection,
                labels: set[str], min_score: float, most: int = LOOK_ALIKES
                ) -> list[Detection]:
    """Confirmed boxes of ``labels`` at the ``most`` places elsewhere in the frame that
    look most like ``found`` (normalised cross-correlation of its pixels, mirrored
    too, at 0.8-1.25 times its size, on a copy where it is ~32 px tall): the early
    stop of the search must not hide a second such object ("the cup" then asks
    which). A few ms, plus one detector pass per place that looks alike."""
    h, w = rgb.shape[:2]
    bx0, by0, bx1, by1 = found.box
    k = max(1.0, max(bx1 - bx0, by1 - by0) / LOOK_ALIKE_SIDE)
    small = shrink(rgb, int(max(h, w) / k))
    k = w / small.shape[1]
    x0, y0 = int(bx0 / k), int(by0 / k)
    x1, y1 = max(x0 + 1, int(round(bx1 / k))), max(y0 + 1, int(round(by1 / k)))
    patch = small[y0:y1, x0:x1]
    if min(patch.shape[:2]) < 8:
        return []
    best = np.full(small.shape[:2], -1.0, np.float32)    # at each place's centre
    scale_at = np.ones(small.shape[:2], np.float32)
    views = [(scale, view) for scale in LOOK_ALIKE_SCALES for view in (patch, patch[:, ::-1])]
    for scale, (t, r) in zip((s for s, _ in views), _matches(small, views)):
        if r is None:
            continue
        cy, cx = t.shape[0] // 2, t.shape[1] // 2
        here = (slice(cy, cy + r.shape[0]), slice(cx, cx + r.shape[1]))
        better = r > best[here]
        best[here][better] = r[better]
        scale_at[here][better] = scale
    ph, pw = patch.shape[:2]
    # not the object itself
    best[max(0, y0 - ph // 2):y1 + ph // 2, max(0, x0 - pw // 2):x1 + pw // 2] = -1
    out: list[Detection] = []
    for _ in range(most):
        cy, cx = np.unravel_index(int(np.argmax(best)), best.shape)
        if best[cy, cx] < LOOK_ALIKE_NCC:
            break
        scale = float(scale_at[cy, cx])
        hh, hw = ph * scale / 2, pw * scale / 2
        cand = Detection(((cx - hw) * k, (cy - hh) * k, (cx + hw) * k, (cy + hh) * k),
                         float(best[cy, cx]), found.label)
        out += _confirm(detector, rgb, cand, labels, min_score)
        best[max(0, int(cy - 2 * hh)):int(cy + 2 * hh) + 1,
             max(0, int(cx - 2 * hw)):int(cx + 2 * hw) + 1] = -1
    return out


def _matches(small: np.ndarray, views: list[tuple[float, np.ndarray]]
             ) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Each ``(scale, view)`` resized by its scale, and its normalised cross-correlation
    with ``small`` (None when it does not fit), in ``views``' order. OpenCV's template
    match runs on one core: the six are shared by two threads."""
    def one(item: tuple[float, np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        scale, view = item
        t = cv2.resize(np.ascontiguousarray(view), None, fx=scale, fy=scale,
                       interpolation=cv2.INTER_AREA)
        if min(t.shape[:2]) < 6 or t.shape[0] >= small.shape[0] \
                or t.shape[1] >= small.shape[1]:
            return t, None
        return t, cv2.matchTemplate(small, t, cv2.TM_CCOEFF_NORMED)

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="look-alike") as pool:
        return list(pool.map(one, views))


def _confirm(detector: ObjectDetector, rgb: np.ndarray, cand: Detection, labels: set[str],
             min_score: float) -> list[Detection]:
    """The boxes of ``labels`` that match ``cand`` on a crop about three times its size,
    where it fills the detector's view, at ``min_score``."""
    h, w = rgb.shape[:2]
    bx0, by0, bx1, by1 = cand.box
    side = max(3.0 * max(bx1 - bx0, by1 - by0), NANODET_SIDE / 2)
    cx, cy = (bx0 + bx1) / 2, (by0 + by1) / 2
    x0, y0 = int(max(0, cx - side / 2)), int(max(0, cy - side / 2))
    x1, y1 = int(min(w, cx + side / 2)), int(min(h, cy + side / 2))
    view = shrink(rgb[y0:y1, x0:x1], 2 * NANODET_SIDE)
    k = (x1 - x0) / view.shape[1]
    found = []
    for d in detector.detect(view, min_score, labels=labels):
        d.box = (d.box[0] * k + x0, d.box[1] * k + y0, d.box[2] * k + x0,
                 d.box[3] * k + y0)
        if _box_iou(d.box, cand.box) > 0.3:
            found.append(d)
    return found


def _by_priority(tiles: list[tuple[int, int, int, int]], priority: np.ndarray,
                 size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    """``tiles`` sorted by the highest value of ``priority`` (a map of the whole frame at
    any resolution) inside each; among tiles that share their peak, the one it lies most
    centrally in first (the detector sees the object with context all around)."""
    ph, pw = priority.shape[:2]
    sy, sx = ph / size[0], pw / size[1]

    def key(t: tuple[int, int, int, int]) -> tuple[float, float]:
        x0, y0, x1, y1 = t
        top, left = int(y0 * sy), int(x0 * sx)
        part = priority[top:max(top + 1, int(np.ceil(y1 * sy))),
                        left:max(left + 1, int(np.ceil(x1 * sx)))]
        if not part.size:
            return 0.0, 0.0
        py, px = np.unravel_index(int(np.argmax(part)), part.shape)
        off = max(abs((left + px + 0.5) / sx - (x0 + x1) / 2) / max(1, x1 - x0),
                  abs((top + py + 0.5) / sy - (y0 + y1) / 2) / max(1, y1 - y0))
        return -float(part[py, px]), off

    return sorted(tiles, key=key)


def _box_iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - ix * iy
    return ix * iy / union if union > 0 else 0.0


def _inside_tile(det: Detection, tile: tuple[int, int, int, int], size: tuple[int, int]
                 ) -> bool:
    """A tile box cut by the tile's inner edge is a fragment: the frame pass or another
    tile sees the whole object."""
    x0, y0, x1, y1 = tile
    bx0, by0, bx1, by1 = det.box
    margin = 2
    cut = (bx0 <= x0 + margin and x0 > 0) or (by0 <= y0 + margin and y0 > 0) or \
        (bx1 >= x1 - margin and x1 < size[0]) or (by1 >= y1 - margin and y1 < size[1])
    return not cut
