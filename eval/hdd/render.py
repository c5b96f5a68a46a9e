"""The procedural renderer: any state at any resolution over a textured,
photographic-looking background."""

from __future__ import annotations

import math

import cv2
import numpy as np

from eval.hdd.scene import DEFAULT_SIZE, SIZE_RADIUS, HDDError, SceneObject, SceneState
from pipelines.color import NAMED_COLORS

# --- rendering -------------------------------------------------------------------------


def _value_noise(rng: np.random.Generator, grid: tuple[int, int], size: tuple[int, int]
                 ) -> np.ndarray:
    small = rng.standard_normal(grid).astype(np.float32)
    return cv2.resize(small, size, interpolation=cv2.INTER_CUBIC)


def _background(width: int, height: int, seed: int) -> np.ndarray:
    """A muted, textured backdrop: wall and floor gradients, soft light, wood grain, grain."""
    rng = np.random.default_rng(seed)
    hue = rng.uniform(0, 180)
    sat = rng.uniform(0.05, 0.16)
    wall = _hsv_rgb(hue, sat, rng.uniform(0.72, 0.88))
    wall_low = _hsv_rgb(hue + rng.uniform(-12, 12), sat, rng.uniform(0.6, 0.72))
    floor = _hsv_rgb(hue + rng.uniform(-25, 25), rng.uniform(0.06, 0.18), rng.uniform(0.45, 0.6))
    horizon = rng.uniform(0.42, 0.58)
    y = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None]
    x = np.linspace(0.0, 1.0, width, dtype=np.float32)[None, :]
    t_wall = np.clip(y / horizon, 0, 1)[..., None]
    blend = np.clip((y - horizon) / 0.02 + 0.5, 0, 1)[..., None]
    column = (wall * (1 - t_wall) + wall_low * t_wall) * (1 - blend) + floor * blend  # (H,1,3)
    size = (width, height)
    light = 1.0 + 0.10 * _value_noise(rng, (3, 5), size) + 0.035 * _value_noise(rng, (9, 16), size)
    light += (0.12 * rng.uniform(-1, 1)) * (x - 0.5)
    light -= 0.28 * ((x - 0.5) ** 2 + (y - 0.5) ** 2)
    warp = 2.5 * _value_noise(rng, (6, 10), size)
    grain = np.sin((y * rng.uniform(30, 60) + warp) * (2 * math.pi)).astype(np.float32)
    light += 0.035 * grain * blend[..., 0]
    light += rng.standard_normal((height, width), dtype=np.float32) * 0.012
    out = column * light[..., None]
    return np.clip(out * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _hsv_rgb(h: float, s: float, v: float) -> np.ndarray:
    pixel = np.array([[[(2 * h) % 360, s, v]]], dtype=np.float32)  # h in [0, 180)
    return cv2.cvtColor(pixel, cv2.COLOR_HSV2RGB).reshape(3).astype(np.float32)


def _outline(shape: str, cx: float, cy: float, r: float) -> np.ndarray:
    """Polygon vertices of a shape with circumradius ``r`` (pixels)."""
    if shape == "square":
        d = r / math.sqrt(2)
        pts = [(cx - d, cy - d), (cx + d, cy - d), (cx + d, cy + d), (cx - d, cy + d)]
    elif shape == "triangle":
        pts = [(cx + r * math.cos(a), cy + r * math.sin(a))
               for a in (-math.pi / 2, math.pi / 6, 5 * math.pi / 6)]
    else:  # star
        pts = []
        for k in range(10):
            rad = r if k % 2 == 0 else 0.45 * r
            a = -math.pi / 2 + k * math.pi / 5
            pts.append((cx + rad * math.cos(a), cy + rad * math.sin(a)))
    return np.array(pts, dtype=np.float64)


def _draw_object(image: np.ndarray, obj: SceneObject) -> None:
    """Draw ``obj`` into ``image`` in place: antialiased edge, soft shading, highlight."""
    height, width = image.shape[:2]
    r = SIZE_RADIUS[obj.size] * height
    cx, cy = obj.position[0] * width, obj.position[1] * height
    x0, y0 = max(0, int(cx - r) - 3), max(0, int(cy - r) - 3)
    x1, y1 = min(width, int(math.ceil(cx + r)) + 3), min(height, int(math.ceil(cy + r)) + 3)
    if x1 <= x0 or y1 <= y0:
        return
    alpha = np.zeros((y1 - y0, x1 - x0), np.uint8)
    shift = 4
    lx, ly = cx - x0, cy - y0
    if obj.shape == "circle":
        cv2.circle(alpha, (round(lx * 16), round(ly * 16)), round(r * 16), 255, -1,
                   cv2.LINE_AA, shift)
    else:
        pts = np.round(_outline(obj.shape, lx, ly, r) * 16).astype(np.int32)
        cv2.fillPoly(alpha, [pts], 255, cv2.LINE_AA, shift)
    yy, xx = np.mgrid[0:y1 - y0, 0:x1 - x0].astype(np.float32)
    dx, dy = (xx - lx) / r, (yy - ly) / r
    if obj.shape == "circle":
        shade = 1.12 - 0.32 * np.sqrt((dx + 0.35) ** 2 + (dy + 0.35) ** 2)
    else:
        shade = 1.04 - 0.09 * (dx + dy)
    color = np.array(NAMED_COLORS[obj.color], np.float32)
    body = color[None, None, :] * shade[..., None]
    if obj.material == "glossy":
        spot = np.exp(-((dx + 0.12) ** 2 + (dy + 0.08) ** 2) / (2 * 0.1 ** 2))[..., None]
        body = body * (1 - 0.92 * spot) + 250.0 * 0.92 * spot
    a = alpha.astype(np.float32)[..., None] / 255.0
    region = image[y0:y1, x0:x1].astype(np.float32)
    region = region * (1 - a) + np.clip(body, 0, 255) * a
    image[y0:y1, x0:x1] = np.clip(region + 0.5, 0, 255).astype(np.uint8)


def render(state: SceneState, size: tuple[int, int] = DEFAULT_SIZE, seed: int = 0) -> np.ndarray:
    """Draw ``state`` at ``size`` = ``(width, height)``.

    Args:
        state: the scene.
        size: output width and height in pixels (3840×2160 by default; any size works).
        seed: extra variation of the background on top of ``state.background``.

    Returns:
        ``uint8`` RGB image; the same state, size and seed give the same bytes.
    """
    width, height = int(size[0]), int(size[1])
    if width < 32 or height < 32 or width * height > 80_000_000:
        raise HDDError(f"render size {width}x{height} is out of range (32 px … 80 MP)")
    image = _background(width, height, (state.background * 1_000_003 + seed) & 0x7FFFFFFF)
    for obj in state.objects:
        _draw_object(image, obj)
    return image
