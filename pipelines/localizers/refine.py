"""Masks found on a small copy, brought to native resolution with edges that follow the
photo: a guided filter (He, Sun and Tang) on a band around the edge only.

``upsample_edge(rgb, soft, band_px)`` enlarges a soft mask found on a downscaled copy and
re-decides only the pixels of a thin band around its edge, with the full-resolution grey
image as the guide: the cost grows with the edge's length, not the photo's area, and
nothing away from the edge changes. ``upsample_region(rgb, region)`` does it for a bool
region found on a small copy (its edge softened by one work pixel first).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

#: guided-filter regularisation (grey levels in [0, 1])
EPS = 1e-3
#: side of the tiles the band is filtered in (tiles the edge does not cross are skipped;
#: smaller tiles filter less beyond the band: 256 px cost 0.6x what 512 did on a 12-MP
#: cup crop, the same answer)
TILE = 256
#: an edge crossing at least this many tiles is filtered on two threads (fewer: the
#: threads' start costs about what they save)
PARALLEL_TILES = 4


def guided_filter(guide: np.ndarray, src: np.ndarray, radius: int, eps: float = EPS
                  ) -> np.ndarray:
    """The grey guided filter: ``src`` smoothed but keeping ``guide``'s edges.

    Args:
        guide: float32 (H, W) in [0, 1].
        src: float32 (H, W).
        radius: box radius in pixels.
        eps: regularisation (larger = smoother).

    Returns:
        float32 (H, W).
    """
    size = (2 * radius + 1, 2 * radius + 1)

    def box(x: np.ndarray) -> np.ndarray:
        return cv2.boxFilter(x, cv2.CV_32F, size, borderType=cv2.BORDER_REFLECT)

    mean_i, mean_p = box(guide), box(src)
    cov = box(guide * src) - mean_i * mean_p
    var = box(guide * guide) - mean_i * mean_i
    a = cov / (var + eps)
    b = mean_p - a * mean_i
    return box(a) * guide + box(b)


def upsample_edge(rgb: np.ndarray, soft: np.ndarray, band_px: int | None = None
                  ) -> np.ndarray:
    """A bool mask at ``rgb``'s size from a soft mask of a smaller copy.

    The mask is enlarged (bilinear); inside a band of ``band_px`` around its edge the
    guided filter, guided by the full-resolution grey image, decides each pixel.

    Args:
        rgb: uint8 (H, W, 3) full-resolution image.
        soft: float32 or bool (h, w) mask of a downscaled copy (same aspect).
        band_px: half-width of the band in full-resolution pixels (default: 1.5 × the
            scale factor, at least 4).

    Returns:
        bool (H, W).
    """
    h, w = rgb.shape[:2]
    soft = soft.astype(np.float32)
    scale = w / soft.shape[1]
    band_px = band_px or max(4, int(round(1.5 * scale)))
    # the band, found on the small copy: pixels whose neighbourhood holds both sides
    k = max(1, int(np.ceil(band_px / scale)))
    kernel = np.ones((2 * k + 1, 2 * k + 1), np.uint8)
    binary = (soft >= 0.5).astype(np.uint8)
    edge_small = cv2.dilate(binary, kernel) != cv2.erode(binary, kernel)
    big = cv2.resize(soft, (w, h), interpolation=cv2.INTER_LINEAR)
    out = big >= 0.5
    if not edge_small.any():
        return out
    band = cv2.resize(edge_small.astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST)
    band_full = band.view(bool)
    radius = max(2, band_px // 2)
    pad = 2 * radius + 1            # the filter's reach (two box passes): tiles agree
    tile = max(TILE, 4 * pad)
    boxes = []
    for top in range(0, h, tile):   # only tiles the edge crosses: cost ∝ the edge's length
        for left in range(0, w, tile):
            # the band's own box inside the tile, filtered with the filter's reach around it
            x, y, bw, bh = cv2.boundingRect(band[top:top + tile, left:left + tile])
            if bw:
                boxes.append((top + y, top + y + bh, left + x, left + x + bw))

    def decided(box: tuple[int, int, int, int]) -> np.ndarray:
        t, b, lt, r = box
        pt, pb, pl, pr = max(0, t - pad), min(h, b + pad), max(0, lt - pad), min(w, r + pad)
        grey = cv2.cvtColor(np.ascontiguousarray(rgb[pt:pb, pl:pr, :3]),
                            cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
        filtered = guided_filter(grey, big[pt:pb, pl:pr], radius)
        return filtered[t - pt:b - pt, lt - pl:r - pl] >= 0.5

    # each tile's band is decided from its own window alone, so the tiles are shared by
    # two threads (the filter's small calls run on one core each) and written in order
    if len(boxes) < PARALLEL_TILES:
        found = map(decided, boxes)
    else:
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="edge-tiles") as pool:
            found = list(pool.map(decided, boxes))
    for (t, b, lt, r), inner in zip(boxes, found):
        sel = band_full[t:b, lt:r]
        out[t:b, lt:r][sel] = inner[sel]
    return out


def upsample_region(rgb: np.ndarray, region: np.ndarray) -> np.ndarray:
    """A bool ``region`` found on a downscaled copy of ``rgb``, at full resolution: its
    edge softened by a 3-px blur at the work size, then re-decided on the photo
    (``upsample_edge``)."""
    return upsample_edge(rgb, cv2.GaussianBlur(region.astype(np.float32), (3, 3), 0))
