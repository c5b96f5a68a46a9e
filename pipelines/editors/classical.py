"""The embedded default editor: OpenCV/PIL/numpy only, no weights.

``ClassicalEditor`` implements every non-generative operation of the catalogue. Every
operation is a pure function of the pixels, the mask and the validated parameters, in
the cheapest form that stays exact at 20 MP:

* per-channel tone curves (exposure, contrast, white balance…) are evaluated once on a
  256-step ramp and applied as an 8-bit lookup table;
* colour matrices (saturation, grayscale, sepia) go through ``cv2.transform``;
* the rest work on 8-bit pixels (vibrance, shadows/highlights, denoise) or on
  ``float32`` RGB in ``[0, 1]`` (hue, recolour, inpaint, paste, text, filters).

Alpha is split off and kept as it was. Statistics (levels, white balance, recolour
lightness) come from the masked pixels only; the base restores every pixel outside the
mask.
"""

from __future__ import annotations

import logging
import math
import textwrap
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipelines.editors.base import EditError, Editor, EditRequest, register_editor
from pipelines.editors.completion import complete
from pipelines.editors.corrections import CORRECTION_CURVES
from pipelines.editors.looks import apply_look
from pipelines.editors.objects import (
    coverage,
    cut_out,
    growth_limit,
    move_matrix,
    moved_mask,
    object_core,
)
from pipelines.editors.operations import get_operation, parse_color

log = logging.getLogger(__name__)

Op = Callable[[np.ndarray, np.ndarray, dict[str, Any]], np.ndarray]

# ----------------------------------------------------------------------------- colour


def _decode(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4).astype(np.float32)


def _encode(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 0.0031308, x * 12.92,
                    1.055 * np.power(x, 1 / 2.4) - 0.055).astype(np.float32)


#: 16-bit tables: a lookup is ~20× faster than the power law on a 20-MP frame, and its
#: error (< 0.06 grey levels) is far below 8-bit rounding
_STEPS = 65535
_TO_LINEAR = _decode(np.linspace(0.0, 1.0, _STEPS + 1, dtype=np.float32))
_TO_SRGB = _encode(np.linspace(0.0, 1.0, _STEPS + 1, dtype=np.float32))
_LINEAR8 = _decode(np.arange(256, dtype=np.float32) / 255.0)
_LUMA = np.array([0.2126, 0.7152, 0.0722], dtype=np.float32)


def _index(x: np.ndarray) -> np.ndarray:
    return (np.clip(x, 0.0, 1.0) * _STEPS + 0.5).astype(np.uint16)


def srgb_to_linear(x: np.ndarray) -> np.ndarray:
    """sRGB-encoded values in [0, 1] → linear light."""
    return _TO_LINEAR[_index(x)]


def linear_to_srgb(x: np.ndarray) -> np.ndarray:
    """Linear light in [0, 1] → sRGB-encoded values (clipped)."""
    return _TO_SRGB[_index(x)]


def to_lab(rgb: np.ndarray) -> np.ndarray:
    """Float sRGB in [0, 1] → CIE Lab (L in [0, 100])."""
    return cv2.cvtColor(np.ascontiguousarray(rgb, dtype=np.float32), cv2.COLOR_RGB2Lab)


def from_lab(lab: np.ndarray) -> np.ndarray:
    """CIE Lab → float sRGB clipped to [0, 1]."""
    rgb = cv2.cvtColor(np.ascontiguousarray(lab, dtype=np.float32), cv2.COLOR_Lab2RGB)
    return np.clip(rgb, 0.0, 1.0)


def luma(rgb: np.ndarray) -> np.ndarray:
    """Rec. 709 luma of sRGB values (H, W)."""
    return rgb @ _LUMA


def _sigma_blur(x: np.ndarray, sigma: float) -> np.ndarray:
    if sigma <= 0:
        return x
    return cv2.GaussianBlur(x, (0, 0), sigmaX=sigma, sigmaY=sigma,
                            borderType=cv2.BORDER_REFLECT)

# ------------------------------------------------------------------ tonal adjustments


def _exposure(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return linear_to_srgb(srgb_to_linear(rgb) * 2.0 ** p["stops"])


def _brightness(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    a = p["amount"]
    return rgb + a * (1.0 - rgb) if a >= 0 else rgb * (1.0 + a)


def _contrast(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return (rgb - 0.5) * (1.0 + p["amount"]) + 0.5


def _gamma(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return np.power(np.clip(rgb, 0, 1), 1.0 / p["gamma"])


def _wide_blur(x: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur of a large radius, done at a reduced scale (same look, far faster)."""
    factor = int(sigma // 4)
    if factor < 2:
        return _sigma_blur(x, sigma)
    h, w = x.shape[:2]
    small = cv2.resize(x, (max(1, w // factor), max(1, h // factor)),
                       interpolation=cv2.INTER_AREA)
    small = _sigma_blur(small, sigma / factor)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _tone_weight(lightness: np.ndarray, shadows: bool) -> np.ndarray:
    """How much a pixel belongs to the shadows (or highlights), from a softened lightness."""
    sigma = max(1.0, min(lightness.shape) / 60.0)
    level = 0.5 * lightness + 0.5 * _wide_blur(lightness, sigma)
    w = 1.0 - level / 0.5 if shadows else (level - 0.5) / 0.5
    return np.clip(w, 0.0, 1.0) ** 1.5


def _luminance_to_lightness(y: np.ndarray) -> np.ndarray:
    """Relative luminance Y (0–1) → CIE L* (0–100)."""
    return np.where(y > 0.008856, 116.0 * np.cbrt(y) - 16.0, 903.3 * y).astype(np.float32)


def _lightness_to_luminance(light: np.ndarray) -> np.ndarray:
    """CIE L* (0–100) → relative luminance Y (0–1)."""
    f = (light + 16.0) / 116.0
    return np.where(light > 8.0, f ** 3, light / 903.3).astype(np.float32)


_GRID = np.linspace(0.0, 1.0, _STEPS + 1, dtype=np.float32)
_Y_TO_L = _luminance_to_lightness(_GRID) / 100.0          # both in [0, 1]
_L_TO_Y = _lightness_to_luminance(_GRID * 100.0)


def _shadows_highlights(rgb8: np.ndarray, amount: float, shadows: bool) -> np.ndarray:
    """Move the lightness of the shadows (or highlights) and keep every pixel's hue.

    The new lightness becomes a luminance ratio applied to linear RGB, so colours keep
    their chromaticity instead of drifting out of gamut as a fixed a*/b* would.
    """
    linear = _LINEAR8[rgb8]
    y_old = cv2.transform(linear, _LUMA[None, :])
    light = _Y_TO_L[_index(y_old)]
    w = _tone_weight(light, shadows) * (0.5 * abs(amount))
    new = light + w * (1.0 - light) if amount >= 0 else light - w * light
    y_new = _L_TO_Y[_index(new)]
    ratio = np.minimum(y_new / np.maximum(y_old, 1e-5), 50.0)
    # what the capped ratio cannot lift (near-black pixels) is added in the pixel's own
    # colour direction, so deep shadows brighten without turning grey:
    # out = linear * ratio + rest * (linear + eps) / (y_old + eps)
    rest = np.maximum(y_new - y_old * ratio, 0.0) / (y_old + 1e-3)
    gain, offset = (ratio + rest)[..., None], (1e-3 * rest)[..., None]
    return linear_to_srgb(linear * gain + offset)


def _shadows8(rgb8: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return _to_u8(_shadows_highlights(rgb8, p["amount"], shadows=True))


def _highlights8(rgb8: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return _to_u8(_shadows_highlights(rgb8, p["amount"], shadows=False))


def _histograms(rgb8: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(3, 256) counts of each channel's values over the mask (all pixels if empty)."""
    where = mask.astype(np.uint8) if mask.any() and not mask.all() else None
    return np.stack([cv2.calcHist([rgb8], [c], where, [256], [0, 256]).ravel()
                     for c in range(3)]).astype(np.float64)


def _levels_curve(ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
                  p: dict[str, Any]) -> np.ndarray:
    cdf = np.cumsum(_histograms(rgb8, mask).sum(axis=0)) / 1.0
    cdf /= cdf[-1]
    lo = np.searchsorted(cdf, p["clip"] / 100.0) / 255.0
    hi = np.searchsorted(cdf, 1.0 - p["clip"] / 100.0) / 255.0
    if hi - lo < 1e-3:
        return ramp
    return (ramp - lo) / (hi - lo)


def _clahe(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    lab = to_lab(rgb)
    light = np.clip(lab[..., 0] * 655.35, 0, 65535).astype(np.uint16)
    tiles = max(1, min(p["tile"], *light.shape))
    clahe = cv2.createCLAHE(clipLimit=p["clip_limit"], tileGridSize=(tiles, tiles))
    lab[..., 0] = clahe.apply(light).astype(np.float32) / 655.35
    return from_lab(lab)


def _vignette(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    h, w = rgb.shape[:2]
    dx = ((np.arange(w, dtype=np.float32) + 0.5) / w - 0.5)[None, :] ** 2
    dy = ((np.arange(h, dtype=np.float32) + 0.5) / h - 0.5)[:, None] ** 2
    r = np.sqrt(dx + dy) / math.hypot(0.5, 0.5)
    t = np.clip((r - 0.25) / 0.75, 0.0, 1.0)
    falloff = (t * t * (3 - 2 * t))[..., None] * 0.8 * abs(p["amount"])
    return rgb * (1.0 - falloff) if p["amount"] >= 0 else rgb + falloff * (1.0 - rgb)

# ------------------------------------------------------------------ colour adjustments


def _saturation_matrix(p: dict[str, Any]) -> np.ndarray:
    """Scale each pixel's distance from its luma by 1 + amount (luma kept)."""
    k = 1.0 + p["amount"]
    return (k * np.eye(3) + (1.0 - k) * np.outer(np.ones(3), _LUMA)).astype(np.float32)


def _grayscale_matrix(p: dict[str, Any]) -> np.ndarray:
    grey = np.outer(np.ones(3), _LUMA)
    return ((1.0 - p["amount"]) * np.eye(3) + p["amount"] * grey).astype(np.float32)


def _sepia_matrix(p: dict[str, Any]) -> np.ndarray:
    return ((1.0 - p["amount"]) * np.eye(3) + p["amount"] * _SEPIA).astype(np.float32)


def _vibrance8(rgb8: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Saturation weighted towards dull colours (vivid ones change least)."""
    r, g, b = cv2.split(rgb8)
    vivid = cv2.subtract(cv2.max(cv2.max(r, g), b), cv2.min(cv2.min(r, g), b))
    gain_lut = 1.0 + p["amount"] * (1.0 - np.clip(np.arange(256) / 204.0, 0.0, 1.0))
    factor = gain_lut.astype(np.float32)[vivid][..., None]
    rgb = rgb8.astype(np.float32)
    grey = cv2.transform(rgb, _LUMA[None, :])[..., None]
    return _to_u8((grey + (rgb - grey) * factor) / 255.0)


def _gains(rgb: np.ndarray, gains: np.ndarray) -> np.ndarray:
    return linear_to_srgb(srgb_to_linear(rgb) * gains.astype(np.float32))


def _temperature(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    a = p["amount"]
    return _gains(rgb, np.array([1.0 + 0.35 * a, 1.0, 1.0 - 0.35 * a]))


def _tint(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    a = p["amount"]
    return _gains(rgb, np.array([1.0 + 0.1 * a, 1.0 - 0.3 * a, 1.0 + 0.1 * a]))


def _white_balance_curve(ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
                        p: dict[str, Any]) -> np.ndarray:
    """Grey-world gains from the linear-light channel means over the mask."""
    hist = _histograms(rgb8, mask)
    linear = srgb_to_linear(np.arange(256, dtype=np.float32) / 255.0)
    means = (hist * linear).sum(axis=1) / max(hist[0].sum(), 1.0)
    if means.min() < 1e-4:
        return ramp
    gains = means.mean() / means
    return _gains(ramp, 1.0 + p["amount"] * (gains - 1.0))


def _hue(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Rotate every hue (float HSV: exact, no 8-bit round-trip loss)."""
    hsv = cv2.cvtColor(np.ascontiguousarray(rgb, dtype=np.float32), cv2.COLOR_RGB2HSV)
    hsv[..., 0] = np.mod(hsv[..., 0] + p["degrees"], 360.0)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)


_SEPIA = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]],
                  dtype=np.float32)

# ------------------------------------------------------------------ detail and geometry


def _sharpen(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return rgb + p["amount"] * (rgb - _sigma_blur(rgb, p["radius"]))


def _blur(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return _sigma_blur(rgb, p["radius"])


_IMMERKAER = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], dtype=np.float32)


def estimate_noise(rgb: np.ndarray) -> float:
    """Noise standard deviation in grey levels (0–255), Immerkær's fast estimator.

    Args:
        rgb: uint8 RGB image (or float in [0, 1]).

    Returns:
        The estimated σ of additive Gaussian noise on the luma, in 0–255 units.
    """
    scale = 1.0 if rgb.dtype == np.uint8 else 255.0
    grey = luma(rgb[..., :3].astype(np.float32) * scale)
    h, w = grey.shape
    if min(h, w) < 3:
        return 0.0
    response = cv2.filter2D(grey, -1, _IMMERKAER)[1:-1, 1:-1]
    return float(math.sqrt(math.pi / 2) * np.abs(response).sum() / (6.0 * (w - 2) * (h - 2)))


#: above this many pixels non-local means takes the faster luma + half-size chroma path
DENOISE_FULL_SEARCH_PIXELS = 4_000_000


def _denoise8(rgb8: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Non-local means with a strength scaled to the measured noise.

    Up to ``DENOISE_FULL_SEARCH_PIXELS`` the colour version runs as is; above, the luma
    gets a smaller search window and the chroma is denoised at half size (chroma noise
    is coarse), which keeps a 20-MP frame to a fraction of the time.
    """
    if p["strength"] <= 0 or min(rgb8.shape[:2]) < 3:
        return rgb8
    h = p["strength"] * (1.0 + 1.6 * estimate_noise(rgb8))   # ≈ 0.8 σ at the default
    if rgb8.shape[0] * rgb8.shape[1] <= DENOISE_FULL_SEARCH_PIXELS:
        return cv2.fastNlMeansDenoisingColored(rgb8, None, h=h, hColor=h,
                                               templateWindowSize=7, searchWindowSize=21)
    ycc = cv2.cvtColor(rgb8, cv2.COLOR_RGB2YCrCb)
    luma8 = cv2.fastNlMeansDenoising(np.ascontiguousarray(ycc[..., 0]), None, h=h,
                                     templateWindowSize=5, searchWindowSize=11)
    height, width = rgb8.shape[:2]
    half = cv2.resize(ycc[..., 1:], (width // 2, height // 2), interpolation=cv2.INTER_AREA)
    chroma = np.dstack([cv2.fastNlMeansDenoising(np.ascontiguousarray(half[..., c]), None,
                                                 h=h, templateWindowSize=5,
                                                 searchWindowSize=11) for c in range(2)])
    chroma = cv2.resize(chroma, (width, height), interpolation=cv2.INTER_LINEAR)
    return cv2.cvtColor(np.dstack([luma8, chroma]), cv2.COLOR_YCrCb2RGB)


def fill_scale(w: int, h: int, degrees: float) -> float:
    """Zoom that lets a ``w × h`` frame rotated by ``degrees`` still cover the frame."""
    a = math.radians(abs(degrees))
    c, s = math.cos(a), math.sin(a)
    return max((w * c + h * s) / w, (w * s + h * c) / h)


def _straighten(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    h, w = rgb.shape[:2]
    if p["angle"] == 0 or min(h, w) < 2:
        return rgb
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), p["angle"],
                                     fill_scale(w, h, p["angle"]))
    return cv2.warpAffine(rgb, matrix, (w, h), flags=cv2.INTER_CUBIC,
                          borderMode=cv2.BORDER_REFLECT)

# ------------------------------------------------------------------------- recolour

@lru_cache(maxsize=64)
def _recolor_ramp(color: tuple[int, int, int]) -> np.ndarray:
    """(1001, 3) sRGB colours of ``color``'s CIE hue and chroma at L* = 0, 0.1, … 100.

    At each lightness the chroma is the named colour's, reduced only as far as the sRGB
    gamut requires (so the hue never drifts, as clipping would make it).
    """
    target = to_lab(np.array([[color]], dtype=np.float32) / 255.0)[0, 0]
    light = np.linspace(0.0, 100.0, 1001, dtype=np.float32)
    lo, hi = np.zeros_like(light), np.ones_like(light)
    for _ in range(18):   # largest chroma share that stays inside the gamut
        mid = (lo + hi) / 2
        lab = np.stack([light, mid * target[1], mid * target[2]], axis=-1)[None]
        rgb = cv2.cvtColor(lab.astype(np.float32), cv2.COLOR_Lab2RGB)
        # OpenCV clamps out-of-gamut results: a colour is inside when it round-trips
        back = cv2.cvtColor(np.clip(rgb, 0.0, 1.0), cv2.COLOR_RGB2Lab)
        inside = np.linalg.norm(back[0] - lab[0], axis=-1) < 0.5
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    lab = np.stack([light, lo * target[1], lo * target[2]], axis=-1)[None]
    return np.clip(cv2.cvtColor(lab.astype(np.float32), cv2.COLOR_Lab2RGB)[0], 0.0, 1.0)


def _centred_lightness(light: np.ndarray, mask: np.ndarray, mean: float,
                       target: float) -> np.ndarray:
    """Lightness centred on ``target`` with the source's shading, squeezed only if needed."""
    values = light[mask] if mask.any() else light.ravel()
    lo, hi = np.percentile(values - mean, [2.0, 98.0])
    room = [1.0]
    if hi > 1e-3:
        room.append((100.0 - target) / hi)
    if lo < -1e-3:
        room.append(target / -lo)
    k = float(np.clip(min(room), 0.5, 1.0))
    centre = float(np.clip(target, -k * lo, 100.0 - k * hi))
    return np.clip(centre + k * (light - mean), 0.0, 100.0)


def _to_ramp(rgb: np.ndarray, ramp: np.ndarray, mask: np.ndarray, mean: float,
             target_light: float) -> np.ndarray:
    light = _centred_lightness(to_lab(rgb)[..., 0], mask, mean, target_light)
    pos = np.clip(light * 10.0, 0.0, 1000.0)
    i0 = np.floor(pos).astype(np.int32)
    i1 = np.minimum(i0 + 1, 1000)
    t = (pos - i0)[..., None].astype(np.float32)
    return ramp[i0] * (1.0 - t) + ramp[i1] * t


def _recolor(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """New hue, chroma and (``lightness`` = 1) lightness of the named colour; the source's
    shading kept as lightness offsets. Edge pixels are unmixed into object and background
    (``objects.coverage``) and only their object share changes, so no halo is left."""
    color = parse_color(p["color"])
    target = to_lab(np.array([[color]], dtype=np.float32) / 255.0)[0, 0]
    partial = bool(mask.any() and not mask.all())
    # the mask may have grown by up to growth_limit over the edge: the object's own
    # lightness (the mean the named colour's replaces) is read on the core beyond it
    core = object_core(mask, growth_limit(mask)) if partial else np.ones(mask.shape, bool)
    light = to_lab(rgb)[..., 0]
    mean = float(light[core].mean())
    goal = mean + p.get("lightness", 1.0) * (float(target[0]) - mean)
    ramp = _recolor_ramp(color)
    out = _to_ramp(rgb, ramp, core, mean, goal)
    if partial:
        split = coverage(rgb, mask, core)
        band = mask & (split.alpha < 1.0)
        if band.any():
            alpha = np.where(split.alpha > 0.85, 1.0, split.alpha)[..., None]
            shifted = rgb + alpha * (_to_ramp(split.obj, ramp, core, mean, goal) - split.obj)
            out = np.where(band[..., None], shifted, out)
        out = np.where(mask[..., None], np.clip(out, 0.0, 1.0), rgb)   # edges are unmixed
    return rgb + p["strength"] * (out - rgb)

# ------------------------------------------------------------------------- inpainting


def _to_u8(rgb: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(rgb * 255.0), 0, 255).astype(np.uint8)


def _masked_down(img: np.ndarray, known: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Half-size image averaged over known pixels only, and its known mask."""
    h, w = img.shape[:2]
    size = (max(1, (w + 1) // 2), max(1, (h + 1) // 2))
    weight = known.astype(np.float32)
    num = cv2.resize(img * weight[..., None], size, interpolation=cv2.INTER_AREA)
    den = cv2.resize(weight, size, interpolation=cv2.INTER_AREA)
    small = num / np.maximum(den, 1e-6)[..., None]
    return small.astype(np.float32), den > 0.2


_CROSS = np.array([[0, 0.25, 0], [0.25, 0, 0.25], [0, 0.25, 0]], dtype=np.float32)


def harmonic_fill(img: np.ndarray, hole: np.ndarray, iterations: int = 60) -> np.ndarray:
    """Fill ``hole`` with the smooth (membrane) interpolation of its border, coarse to fine.

    Args:
        img: float32 (H, W, 3) image; values in the hole are ignored.
        hole: bool (H, W), True where pixels are unknown.
        iterations: relaxation sweeps per pyramid level.

    Returns:
        The image with the hole filled; known pixels unchanged.
    """
    known = ~hole
    if not known.any():
        return img
    if hole.any() and min(img.shape[:2]) > 8 and (~known).sum() > 16:
        small, small_known = _masked_down(img, known)
        coarse = harmonic_fill(small, ~small_known, iterations)
        up = cv2.resize(coarse, (img.shape[1], img.shape[0]), interpolation=cv2.INTER_LINEAR)
    else:
        up = np.broadcast_to(img[known].mean(axis=0), img.shape)
    out = np.where(hole[..., None], up, img).astype(np.float32)
    rows, cols = np.nonzero(hole)
    if rows.size == 0:
        return out
    # relax only the hole's box (plus its known one-pixel rim): the rest never changes
    y0, y1 = max(0, rows.min() - 1), min(hole.shape[0], rows.max() + 2)
    x0, x1 = max(0, cols.min() - 1), min(hole.shape[1], cols.max() + 2)
    window, where = out[y0:y1, x0:x1], np.repeat(hole[y0:y1, x0:x1, None], 3, axis=2)
    for _ in range(iterations):
        relaxed = cv2.filter2D(window, -1, _CROSS, borderType=cv2.BORDER_REPLICATE)
        np.copyto(window, relaxed, where=where)
    return out


def exemplar_fill(img: np.ndarray, hole: np.ndarray, block: int = 9,
                  offsets: np.ndarray | None = None) -> np.ndarray:
    """Criminisi-style exemplar fill: grow the hole's border inwards with copied blocks.

    Each step takes a border pixel with the most known neighbours, finds the fully
    known block nearby that best matches the block's known part (masked SSD), and
    copies the missing pixels from it, so textures and straight structures continue.

    Args:
        img: float32 (H, W, 3); values in the hole are ignored.
        hole: bool (H, W), True where pixels are unknown.
        block: block side in pixels (odd).
        offsets: optional int32 (H, W, 2) array that receives, for every filled pixel,
            the (dy, dx) from it to the known pixel it was copied from.

    Returns:
        The filled image (known pixels unchanged).
    """
    h, w = hole.shape
    half = block // 2
    if min(h, w) <= block:
        return harmonic_fill(img, hole)
    out = np.where(hole[..., None], 0.0, img).astype(np.float32)
    unknown = hole.copy()
    valid = cv2.boxFilter(hole.astype(np.float32), -1, (block, block), normalize=False,
                          anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)[:h - block + 1,
                                                                         :w - block + 1] < 0.5
    if not valid.any():
        return harmonic_fill(img, hole)
    kernel = np.ones((3, 3), np.uint8)
    while unknown.any():
        front = unknown & (cv2.dilate((~unknown).astype(np.uint8), kernel) > 0)
        conf = cv2.boxFilter((~unknown).astype(np.float32), -1, (block, block))
        ys, xs = np.nonzero(front)
        order = np.argsort(-conf[ys, xs], kind="stable")
        for y, x in zip(ys[order], xs[order]):
            if not unknown[y, x]:
                continue
            ty = int(np.clip(y - half, 0, h - block))
            tx = int(np.clip(x - half, 0, w - block))
            sy, sx = _exemplar_source(out, unknown, valid, ty, tx, block)
            todo = unknown[ty:ty + block, tx:tx + block]
            out[ty:ty + block, tx:tx + block][todo] = out[sy:sy + block, sx:sx + block][todo]
            if offsets is not None:
                offsets[ty:ty + block, tx:tx + block][todo] = (sy - ty, sx - tx)
            unknown[ty:ty + block, tx:tx + block] = False
    return out


def _exemplar_source(out: np.ndarray, unknown: np.ndarray, valid: np.ndarray, ty: int,
                     tx: int, block: int) -> tuple[int, int]:
    """Top-left of the fully known block that best matches the known part at (ty, tx)."""
    vh, vw = valid.shape
    radius = 4 * block
    while True:
        y0, y1 = max(0, ty - radius), min(vh, ty + radius + 1)
        x0, x1 = max(0, tx - radius), min(vw, tx + radius + 1)
        ok = valid[y0:y1, x0:x1]
        if ok.any() or (y0 == 0 and x0 == 0 and y1 == vh and x1 == vw):
            break
        radius *= 2
    known = (~unknown[ty:ty + block, tx:tx + block]).astype(np.float32)
    search = out[y0:y1 + block - 1, x0:x1 + block - 1]
    cost = cv2.matchTemplate(search, out[ty:ty + block, tx:tx + block], cv2.TM_SQDIFF,
                             mask=np.repeat(known[..., None], 3, axis=2))
    cost = np.where(ok, cost, np.inf)
    cost += 1e-4 * np.hypot(*np.mgrid[y0 - ty:y1 - ty, x0 - tx:x1 - tx])  # prefer near
    sy, sx = np.unravel_index(int(np.argmin(cost)), cost.shape)
    return int(sy + y0), int(sx + x0)


def inpaint(rgb_u8: np.ndarray, hole: np.ndarray, method: str = "auto",
            radius: int = 5) -> np.ndarray:
    """Fill ``hole`` from its surroundings.

    Args:
        rgb_u8: uint8 (H, W, 3) image.
        hole: bool (H, W), True on the pixels to replace.
        method: ``telea`` / ``ns`` (OpenCV); ``patch``: exemplar fill (blocks copied
            from the surroundings continue textures and straight structures; multi-scale
            for large holes); ``auto``: ``patch``, except for thin holes (scratches,
            wires), which go to Telea.
        radius: neighbourhood radius of the OpenCV methods.

    Returns:
        uint8 image with the hole filled.
    """
    if not hole.any() or hole.all():
        return rgb_u8
    if method == "auto":
        thin = cv2.distanceTransform(hole.astype(np.uint8), cv2.DIST_L2, 3).max() <= THIN_HOLE
        method = "telea" if thin else "patch"
    if method in ("telea", "ns"):
        flag = cv2.INPAINT_TELEA if method == "telea" else cv2.INPAINT_NS
        return cv2.inpaint(rgb_u8, hole.astype(np.uint8) * 255, radius, flag)
    # work on the hole's box plus a margin; the rest is untouched
    rows, cols = np.nonzero(hole)
    size = max(np.ptp(rows) + 1, np.ptp(cols) + 1)
    margin = int(max(16, 0.5 * size))
    y0, y1 = max(0, rows.min() - margin), min(hole.shape[0], rows.max() + 1 + margin)
    x0, x1 = max(0, cols.min() - margin), min(hole.shape[1], cols.max() + 1 + margin)
    crop = rgb_u8[y0:y1, x0:x1].astype(np.float32) / 255.0
    sub = hole[y0:y1, x0:x1]
    filled = patch_fill(crop, sub)
    out = rgb_u8.copy()
    out[y0:y1, x0:x1] = _to_u8(filled)
    return out


#: holes at most this many pixels from their border (scratches, wires) go to Telea, which
#: measured best on them; wider holes get the exemplar fill
THIN_HOLE = 5.0


def patch_fill(img: np.ndarray, hole: np.ndarray) -> np.ndarray:
    """Exemplar fill at a scale where the hole is at most ``COARSE_SIDE`` px, refined up to
    full resolution by PatchMatch completion (``completion.complete``).

    The exemplar blocks lay out the structure (lines and textures continue); the patch
    rounds at each finer scale replace the blocks by voted full-resolution patches, so no
    block seams or smeared areas remain.

    Args:
        img: float32 (H, W, 3) crop around the hole.
        hole: bool (H, W).

    Returns:
        The filled crop.
    """
    return complete(img, hole, first_guess=_exemplar_guess)


def _exemplar_guess(img: np.ndarray, hole: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(hole)
    size = max(np.ptp(rows) + 1, np.ptp(cols) + 1)
    return exemplar_fill(img, hole, block=int(np.clip(size // 8, 3, 6)) * 2 + 1,
                         offsets=offsets)


def _inpaint(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    hole = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    out = inpaint(_to_u8(rgb), hole, p["method"], p["radius"])
    return out.astype(np.float32) / 255.0

# ------------------------------------------------------------------------ transform


def _transform(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any],
               shift: tuple[float, float]) -> np.ndarray:
    """Move/resize the object: fill where it was, paste its unmixed cut-out where it lands.

    Args:
        rgb: float32 (H, W, 3) patch holding both the old and the new place.
        mask: bool (H, W) the object (grown over its edge).
        p: validated ``transform`` parameters.
        shift: ``(dx, dy)`` in pixels.
    """
    if not mask.any():
        return rgb
    matrix = move_matrix(mask, p["scale"], shift)
    dest = moved_mask(mask, p["scale"], shift)
    if dest.sum() < 0.25 * mask.sum() * min(1.0, p["scale"] ** 2):
        raise EditError("the moved object would land mostly outside the image; move it less")
    colour, alpha = cut_out(rgb, mask)
    if p["scale"] < 0.6:   # shrinking: pre-blur so the warp does not alias
        sigma = 0.5 / p["scale"] - 0.5
        colour, alpha = _sigma_blur(colour, sigma), _sigma_blur(alpha, sigma)
    size = (rgb.shape[1], rgb.shape[0])
    warp = {"flags": cv2.INTER_LINEAR, "borderMode": cv2.BORDER_CONSTANT, "borderValue": 0}
    moved = cv2.warpAffine(colour, matrix, size, **warp)
    moved_alpha = np.clip(cv2.warpAffine(alpha, matrix, size, **warp), 0.0, 1.0)
    hole = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    background = inpaint(_to_u8(rgb), hole, "auto").astype(np.float32) / 255.0
    return moved + background * (1.0 - moved_alpha[..., None])


# --------------------------------------------------------------------- paste and text


def _fit_reference(ref: np.ndarray, box_w: int, box_h: int,
                   cover: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Resize ``ref`` to fit (or, with ``cover``, to fill and crop to) the box, keeping its
    aspect; return (rgb float, alpha float)."""
    ref = np.asarray(ref)
    if ref.dtype != np.uint8 or ref.ndim not in (2, 3):
        raise EditError(f"paste.image must be a uint8 RGB/RGBA array, got {ref.dtype} "
                        f"{ref.shape}")
    if ref.ndim == 2:
        ref = np.dstack([ref] * 3)
    if ref.shape[2] not in (3, 4) or min(ref.shape[:2]) == 0:
        raise EditError(f"paste.image must be RGB or RGBA, got shape {ref.shape}")
    pick = max if cover else min
    scale = pick(box_w / ref.shape[1], box_h / ref.shape[0])
    size = (max(1, round(ref.shape[1] * scale)), max(1, round(ref.shape[0] * scale)))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    fitted = cv2.resize(ref, size, interpolation=interp)
    if fitted.ndim == 2:
        fitted = fitted[..., None]
    if cover:   # centre crop to the box
        top, left = max(0, (size[1] - box_h) // 2), max(0, (size[0] - box_w) // 2)
        fitted = fitted[top:top + box_h, left:left + box_w]
    alpha = fitted[..., 3].astype(np.float32) / 255.0 if fitted.shape[2] == 4 else \
        np.ones(fitted.shape[:2], np.float32)
    return fitted[..., :3].astype(np.float32) / 255.0, alpha


def _paste(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    if not mask.any():
        return rgb
    rows, cols = np.nonzero(mask)
    y0, x0, bh, bw = rows.min(), cols.min(), np.ptp(rows) + 1, np.ptp(cols) + 1
    # replacing a region fills it; adding an object fits it inside the region
    src, alpha = _fit_reference(p["image"], int(bw), int(bh), cover=p.get("fill", False))
    ph, pw = alpha.shape
    oy, ox = int(y0 + (bh - ph) // 2), int(x0 + (bw - pw) // 2)
    canvas = rgb.copy()
    canvas[oy:oy + ph, ox:ox + pw] = src
    full_alpha = np.zeros(mask.shape, np.float32)
    full_alpha[oy:oy + ph, ox:ox + pw] = alpha
    full_alpha *= mask
    if p["mode"] != "normal":
        canvas = _seamless(rgb, canvas, full_alpha > 0.5, p["mode"])
    a = full_alpha[..., None]
    return canvas * a + rgb * (1.0 - a)


def _seamless(dst: np.ndarray, src: np.ndarray, region: np.ndarray, mode: str) -> np.ndarray:
    """Poisson-clone ``src`` over ``dst`` inside ``region`` (same-size float images)."""
    if region.sum() < 4 or min(dst.shape[:2]) < 3:
        return src
    pad = 8
    dst_p = cv2.copyMakeBorder(_to_u8(dst), pad, pad, pad, pad, cv2.BORDER_REFLECT)
    src_p = cv2.copyMakeBorder(_to_u8(src), pad, pad, pad, pad, cv2.BORDER_REFLECT)
    reg = cv2.copyMakeBorder(region.astype(np.uint8) * 255, pad, pad, pad, pad,
                             cv2.BORDER_CONSTANT, value=0)
    rows, cols = np.nonzero(reg)
    y0, y1, x0, x1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    centre = (int(x0 + (x1 - x0) // 2), int(y0 + (y1 - y0) // 2))
    flag = cv2.MIXED_CLONE if mode == "mixed" else cv2.NORMAL_CLONE
    try:
        out = cv2.seamlessClone(src_p, dst_p, reg, centre, flag)
    except cv2.error as exc:   # degenerate region: fall back to a plain paste
        log.warning("seamless clone failed (%s); pasting without blending", exc)
        return src
    return out[pad:-pad, pad:-pad].astype(np.float32) / 255.0


@lru_cache(maxsize=1)
def font_path() -> str | None:
    """A TrueType font file: matplotlib's bundled DejaVu Sans, or None (PIL default)."""
    try:
        import matplotlib

        path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
        return str(path) if path.is_file() else None
    except ImportError:
        return None


def _font(size: int) -> Any:
    from PIL import ImageFont

    path = font_path()
    return ImageFont.truetype(path, size) if path else ImageFont.load_default(size)


def _layout(text: str, box_w: int, box_h: int) -> tuple[str, int]:
    """Line breaks and font size that make ``text`` as large as fits the box."""
    from PIL import Image, ImageDraw

    draw = ImageDraw.Draw(Image.new("L", (1, 1)))
    words = text.split() or [text]
    best = ("\n".join(words) if len(words) > 1 else text, 1)
    for lines in range(1, min(len(words), 6) + 1):
        width = max(1, math.ceil(len(text) / lines))
        wrapped = "\n".join(textwrap.wrap(text, width=width, break_long_words=False,
                                             break_on_hyphens=False)) if lines > 1 else text
        lo, hi = 1, max(2, box_h * 2)
        while lo < hi:   # largest size that fits
            mid = (lo + hi + 1) // 2
            x0, y0, x1, y1 = draw.multiline_textbbox((0, 0), wrapped, font=_font(mid))
            if x1 - x0 <= box_w and y1 - y0 <= box_h:
                lo = mid
            else:
                hi = mid - 1
        if lo > best[1]:
            best = (wrapped, lo)
    return best


def inner_box(mask: np.ndarray, coverage: float = 0.97) -> tuple[int, int, int, int]:
    """``(x, y, w, h)``: the mask's box shrunk about its centroid until the mask fills it.

    Text fitted to this box stays inside round or irregular regions.
    """
    rows, cols = np.nonzero(mask)
    cy, cx = rows.mean(), cols.mean()
    y0, y1, x0, x1 = rows.min(), rows.max() + 1.0, cols.min(), cols.max() + 1.0
    for _ in range(30):
        box = mask[int(y0):max(int(y0) + 1, int(y1)), int(x0):max(int(x0) + 1, int(x1))]
        if box.mean() >= coverage:
            break
        y0, y1 = cy + 0.93 * (y0 - cy), cy + 0.93 * (y1 - cy)
        x0, x1 = cx + 0.93 * (x0 - cx), cx + 0.93 * (x1 - cx)
    x, y = int(x0), int(y0)
    return x, y, max(1, int(x1) - x), max(1, int(y1) - y)


def _text(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    from PIL import Image, ImageDraw

    text = p["text"].strip()
    if not text or not mask.any():
        return rgb
    x0, y0, bw, bh = inner_box(mask)
    wrapped, size = _layout(text, max(1, int(bw * p["scale"])), max(1, int(bh * p["scale"])))
    font = _font(size)
    layer = Image.new("L", (rgb.shape[1], rgb.shape[0]), 0)
    draw = ImageDraw.Draw(layer)
    tx0, ty0, tx1, ty1 = draw.multiline_textbbox((0, 0), wrapped, font=font, align="center")
    origin = (x0 + (bw - (tx1 - tx0)) / 2 - tx0, y0 + (bh - (ty1 - ty0)) / 2 - ty0)
    draw.multiline_text(origin, wrapped, fill=255, font=font, align="center")
    alpha = (np.asarray(layer, dtype=np.float32) / 255.0)[..., None]
    colour = np.array(parse_color(p["color"]), dtype=np.float32) / 255.0
    return rgb * (1.0 - alpha) + colour * alpha

# ---------------------------------------------------------------------------- editor

#: per-channel tone curves: evaluated once on a 256-step ramp, applied with cv2.LUT
CURVES: dict[str, Op] = {
    "exposure": _exposure, "brightness": _brightness, "contrast": _contrast,
    "gamma": _gamma, "temperature": _temperature, "tint": _tint,
}
#: curves that need the target's statistics: (ramp, rgb8, mask, params) -> curve
STAT_CURVES = {"auto_levels": _levels_curve, "auto_white_balance": _white_balance_curve,
               **CORRECTION_CURVES}
#: 3×3 colour matrices applied with cv2.transform on 8-bit pixels
MATRICES: dict[str, Callable[[dict[str, Any]], np.ndarray]] = {
    "saturation": _saturation_matrix, "grayscale": _grayscale_matrix, "sepia": _sepia_matrix,
}
#: operations that work on 8-bit pixels directly
EIGHT_BIT: dict[str, Op] = {"vibrance": _vibrance8, "shadows": _shadows8,
                            "highlights": _highlights8, "denoise": _denoise8}
#: the rest work on float RGB in [0, 1]
OPS: dict[str, Op] = {
    "hue": _hue, "sharpen": _sharpen, "blur": _blur, "vignette": _vignette,
    "clahe": _clahe, "straighten": _straighten, "recolor": _recolor, "inpaint": _inpaint,
    "paste": _paste, "text": _text,
}
_RAMP = np.repeat(np.arange(256, dtype=np.float32)[None, :, None] / 255.0, 3, axis=2)


def apply_operation(rgb8: np.ndarray, mask: np.ndarray, operation: str,
                    params: dict[str, Any]) -> np.ndarray:
    """Run one validated operation on 8-bit RGB pixels.

    Args:
        rgb8: uint8 (H, W, 3).
        mask: bool (H, W); statistics come from it, the caller keeps what lies outside.
        operation: a catalogue name implemented here.
        params: parameters already validated by the catalogue.

    Returns:
        uint8 (H, W, 3).
    """
    if operation in CURVES:
        return cv2.LUT(rgb8, _to_u8(CURVES[operation](_RAMP, mask, params)))
    if operation in STAT_CURVES:
        return cv2.LUT(rgb8, _to_u8(STAT_CURVES[operation](_RAMP, rgb8, mask, params)))
    if operation in MATRICES:
        return cv2.transform(rgb8, MATRICES[operation](params))
    if operation in EIGHT_BIT:
        return EIGHT_BIT[operation](rgb8, mask, params)
    if operation in OPS:
        return _to_u8(OPS[operation](rgb8.astype(np.float32) / 255.0, mask, params))
    if operation == "look":
        return apply_look(rgb8, mask, params["style"], params["strength"], _run_step)
    raise EditError(f"the classical editor has no implementation of {operation!r}")


def _run_step(rgb8: np.ndarray, mask: np.ndarray, operation: str,
              params: dict[str, Any]) -> np.ndarray:
    """One catalogue step of a look, its parameters validated first."""
    return apply_operation(rgb8, mask, operation, get_operation(operation).validate(params))


#: Everything ``apply_operation`` implements. Frame edits (crop, rotate, flip, resize)
#: are not patch edits: ``pipelines.editors.frame`` does them. ``straighten`` is here
#: too, as the same-size rotate-and-zoom the searches use on their working frames.
IMPLEMENTED = frozenset({*CURVES, *STAT_CURVES, *MATRICES, *EIGHT_BIT, *OPS, "look", "transform"})


@register_editor
class ClassicalEditor(Editor):
    """OpenCV/PIL/numpy editor for every non-generative patch operation (no weights)."""

    name = "classical"
    operations = IMPLEMENTED
    requires_weights = False
    working_size = None

    def _edit(self, patch: np.ndarray, mask: np.ndarray, request: EditRequest,
              params: dict[str, Any]) -> np.ndarray:
        if request.operation == "paste":
            params = {**params, "fill": request.kind == "replace"}
        if request.operation == "transform":
            out = _to_u8(_transform(patch[..., :3].astype(np.float32) / 255.0, mask, params,
                                    request.shift_px(params)))
            return np.dstack([out, patch[..., 3]]) if patch.shape[2] == 4 else out
        out = apply_operation(np.ascontiguousarray(patch[..., :3]), mask, request.operation,
                              params)
        if patch.shape[2] == 4:
            out = np.dstack([out, patch[..., 3]])
        return out
