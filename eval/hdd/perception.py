"""Classical perception: a rendered (or edited) image back to a scene state."""

from __future__ import annotations

import math
from functools import cache

import cv2
import numpy as np

from eval.hdd.scene import PALETTE, HDDError, SceneObject, SceneState
from pipelines.arrays import rgb_array
from pipelines.color import NAMED_COLORS, rgb_to_lab

# --- perception ------------------------------------------------------------------------

_WORK_HEIGHT = 540
#: saturation (0–255) above which a pixel belongs to an object; backgrounds stay below ~50
_MIN_SAT = 64
_UNIT_AREA = {"circle": math.pi, "square": 2.0, "triangle": 3 * math.sqrt(3) / 4,
              "star": 10 * 0.5 * 0.45 * math.sin(math.pi / 5)}


def _lab(rgb: np.ndarray) -> np.ndarray:
    return rgb_to_lab(np.asarray(rgb, np.float32).reshape(-1, 3) / 255.0)


@cache
def _palette_lab() -> np.ndarray:
    """The palette in Lab, worked out on first use: OpenCV's first float Lab conversion
    in a process costs ~0.15 s, which every ``python -m agent log|undo|…`` paid at import."""
    return _lab(np.array([NAMED_COLORS[c] for c in PALETTE]))


def _classify_shape(contour: np.ndarray, area: float) -> str:
    hull_area = cv2.contourArea(cv2.convexHull(contour))
    perimeter = cv2.arcLength(contour, True)
    if hull_area <= 0 or perimeter <= 0:
        return "circle"
    if area / hull_area < 0.8:
        return "star"
    circularity = 4 * math.pi * area / perimeter ** 2
    if circularity > 0.86:
        return "circle"
    vertices = len(cv2.approxPolyDP(contour, 0.05 * perimeter, True))
    if vertices == 3:
        return "triangle"
    if vertices == 4:
        return "square"
    return "square" if circularity > 0.7 else "triangle"


def perceive(image: np.ndarray) -> SceneState:
    """Map a rendered (or edited) scene back to a symbolic state.

    Objects are the saturated blobs on the muted background; colour is the nearest
    palette colour (CIELAB) of the blob's median, shape comes from solidity, circularity
    and a polygon fit, size from the area relative to the shape's unit area, material from
    a bright, unsaturated highlight inside the blob.

    Args:
        image: ``uint8`` RGB/RGBA image of any size.

    Returns:
        The perceived state (ids ``p0``, ``p1`` … in reading order; background 0).
    """
    rgb = rgb_array(image, "perceive's image", error=HDDError)
    height, width = rgb.shape[:2]
    scale = min(1.0, _WORK_HEIGHT / height)
    small = rgb if scale == 1.0 else cv2.resize(
        rgb, (max(1, round(width * scale)), max(1, round(height * scale))),
        interpolation=cv2.INTER_AREA)
    h_s, w_s = small.shape[:2]
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)
    sat, val = hsv[..., 1], hsv[..., 2]
    blob = ((sat > _MIN_SAT) & (val > 50)).astype(np.uint8)
    blob = cv2.morphologyEx(blob, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    found = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if area < 0.0015 * h_s * h_s:
            continue
        filled = np.zeros((h_s, w_s), np.uint8)
        cv2.drawContours(filled, [contour], -1, 1, -1)
        found.append(_describe_blob(small, sat, val, contour, filled.astype(bool), area))
    found.sort(key=lambda o: (round(o[1][1] * 3), o[1][0]))
    objects = tuple(SceneObject(id=f"p{i}", color=c, size=s, material=m, shape=sh, position=p)
                    for i, ((c, s, m, sh), p) in enumerate(found))
    return SceneState(objects=objects, next_id=len(objects))


def _describe_blob(small: np.ndarray, sat: np.ndarray, val: np.ndarray, contour: np.ndarray,
                   filled: np.ndarray, area: float) -> tuple[tuple[str, str, str, str],
                                                         tuple[float, float]]:
    h_s, w_s = small.shape[:2]
    shape = _classify_shape(contour, area)
    inner = cv2.erode(filled.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    inner = inner if inner.sum() > 8 else filled
    body = inner & (sat > _MIN_SAT)
    pixels = small[body] if body.sum() > 4 else small[inner]
    color = PALETTE[int(np.argmin(np.linalg.norm(
        _palette_lab() - _lab(np.median(pixels, axis=0)), axis=1)))]
    body_sat = float(np.median(sat[body])) if body.any() else 255.0
    highlight = inner & (sat < 0.55 * body_sat) & (val > 200)
    material = "glossy" if highlight.sum() > 0.004 * inner.sum() + 1 else "matte"
    radius = math.sqrt(area / _UNIT_AREA[shape]) / h_s
    size = "small" if radius < 0.0625 else "medium" if radius < 0.09 else "large"
    m = cv2.moments(contour)
    if m["m00"] > 0:
        cx, cy = m["m10"] / m["m00"], m["m01"] / m["m00"]
    else:
        cx, cy = float(contour[:, 0, 0].mean()), float(contour[:, 0, 1].mean())
    return (color, size, material, shape), ((cx + 0.5) / w_s, (cy + 0.5) / h_s)
