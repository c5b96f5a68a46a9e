"""Masks found on a small copy, brought to native resolution with edges that follow the
photo: a guided filter (He, Sun and Tang) on a band around the edge only.

``upsample_edge(rgb, soft, band_px)`` enlarges a soft mask found on a downscaled copy and
re-decides only the pixels of a thin band around its edge, with the full-resolution grey
image as the guide: the cost grows with the edge's length, not the photo's area, and
nothing away from the edge changes.
"""

from __future__ import annotations

import cv2
import numpy as np

#: guided-filter regularisation (grey levels in [0, 1])
EPS = 1e-3
#: most pixels of one band crop worked at full resolution (beyond it, the crop is
#: filtered on a copy scaled to fit: the cost stays bounded at any photo size)
MAX_BAND_PIXELS = 6_000_000


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
    rows = np.flatnonzero(edge_small.any(axis=1))
    y0 = max(0, int(rows[0] * scale) - band_px)
    y1 = min(h, int((rows[-1] + 1) * scale) + band_px)
    step = max(1, MAX_BAND_PIXELS // max(1, w))        # strips of bounded size
    band_full = cv2.resize(edge_small.astype(np.uint8), (w, h),
                           interpolation=cv2.INTER_NEAREST) > 0
    for top in range(y0, y1, step):
        bottom = min(y1, top + step)
        pad_top, pad_bottom = max(0, top - band_px), min(h, bottom + band_px)
        grey = cv2.cvtColor(np.ascontiguousarray(rgb[pad_top:pad_bottom, :, :3]),
                            cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
        filtered = guided_filter(grey, big[pad_top:pad_bottom], max(2, band_px // 2))
        inner = slice(top - pad_top, bottom - pad_top)
        sel = band_full[top:bottom]
        out[top:bottom][sel] = filtered[inner][sel] >= 0.5
    return out
