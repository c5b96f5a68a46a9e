"""Photographic first-aid corrections whose curve follows the photo's own statistics.

What a photographer reaches for first, as per-channel tone curves measured on the target's
pixels (the classical editor evaluates each on a 256-step ramp and applies it as a look-up
table, so a 12-MP frame costs one ``cv2.LUT``):

* ``channel_levels`` — auto levels per channel: each channel's clipping percentiles go to
  black and white (in sRGB values, or as white-point gains in linear light, which undoes an
  exposure or illuminant change exactly when the scene had a white);
* ``white_patch`` — white balance from the brightest pixels (each channel's top percentile
  made equal, in linear light, exposure kept);
* ``auto_exposure`` — an exposure change in stops that puts the median luminance at a
  target lightness.

Grey-world balance (``auto_white_balance``), local contrast (``clahe``), vibrance and
highlight/shadow recovery already live in ``classical``. Each curve function takes
``(ramp, rgb8, mask, params)`` and returns the curve on ``ramp`` (floats in [0, 1], HxWx3).
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from pipelines.color import linear_to_srgb, srgb_to_linear

#: No correction multiplies a channel by more than this (three stops) or less than its inverse.
MAX_GAIN = 8.0


def channel_histograms(rgb8: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(3, 256) counts of each channel's values over the mask (all pixels if it is empty)."""
    where = mask.astype(np.uint8) if mask.any() and not mask.all() else None
    return np.stack([cv2.calcHist([rgb8], [c], where, [256], [0, 256]).ravel()
                     for c in range(3)]).astype(np.float64)


def channel_percentiles(hist: np.ndarray, percent: float) -> np.ndarray:
    """Each channel's value (0–255) below which ``percent`` % of its pixels lie.

    0 % gives the darkest value present and 100 % the brightest (not 0 and 255).
    """
    cdf = np.cumsum(hist, axis=1)
    cdf /= np.maximum(cdf[:, -1:], 1.0)
    share = min(max(percent / 100.0, 1e-9), 1.0 - 1e-9)
    return np.array([float(np.searchsorted(c, share)) for c in cdf])


def _blend(ramp: np.ndarray, curve: np.ndarray, amount: float) -> np.ndarray:
    return ramp + float(amount) * (curve - ramp)


def channel_levels_curve(ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
                         p: dict[str, Any]) -> np.ndarray:
    """Per-channel auto levels: ``low`` % of each channel to black, ``high`` % to white.

    With ``linear`` the stretch is done in linear light (gains, and a black offset only
    when ``low`` > 0), which is how a camera's exposure and white balance act.
    """
    hist = channel_histograms(rgb8, mask)
    lo = channel_percentiles(hist, p["low"]) / 255.0
    hi = channel_percentiles(hist, 100.0 - p["high"]) / 255.0
    if np.any(hi - lo < 0.02):
        return ramp
    if p["linear"]:
        lo_l, hi_l = srgb_to_linear(lo), srgb_to_linear(hi)
        if p["low"] <= 0:
            lo_l = np.zeros(3, np.float32)
        span = np.maximum(hi_l - lo_l, 1.0 / MAX_GAIN)
        curve = linear_to_srgb((srgb_to_linear(ramp) - lo_l) / span)
    else:
        span = np.maximum(hi - lo, 1.0 / MAX_GAIN)
        curve = np.clip((ramp - lo) / span, 0.0, 1.0)
    return _blend(ramp, curve, p["amount"])


def white_patch_curve(ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
                      p: dict[str, Any]) -> np.ndarray:
    """White patch: linear gains that make each channel's top ``percentile`` % agree.

    The brightest channel keeps its level (no exposure change); the others are raised to it.
    """
    hist = channel_histograms(rgb8, mask)
    top = srgb_to_linear(channel_percentiles(hist, 100.0 - p["percentile"]) / 255.0)
    if top.min() < 0.02:
        return ramp
    gains = np.clip(top.max() / top, 1.0 / MAX_GAIN, MAX_GAIN)
    gains = 1.0 + p["amount"] * (gains - 1.0)
    return linear_to_srgb(srgb_to_linear(ramp) * gains.astype(np.float32))


def median_luminance(rgb8: np.ndarray, mask: np.ndarray) -> float:
    """Median relative luminance (0–1) of the masked pixels, from their 8-bit luma."""
    grey = cv2.cvtColor(np.ascontiguousarray(rgb8), cv2.COLOR_RGB2GRAY)
    where = mask.astype(np.uint8) if mask.any() and not mask.all() else None
    hist = cv2.calcHist([grey], [0], where, [256], [0, 256]).ravel().astype(np.float64)
    cdf = np.cumsum(hist) / max(hist.sum(), 1.0)
    level = int(np.searchsorted(cdf, 0.5))
    below = cdf[level - 1] if level > 0 else 0.0
    share = hist[level] / max(hist.sum(), 1.0)
    # interpolate inside the median's bin: a resampled copy then gives the same answer
    value = (level + (0.5 - below) / share if share > 0 else level + 0.5) / 255.0
    return float(srgb_to_linear(np.array([min(value, 1.0)]))[0])


def exposure_stops(rgb8: np.ndarray, mask: np.ndarray, target: float) -> float:
    """Stops that move the median luminance to lightness ``target`` (L*, 0–100), ±3 at most."""
    y_target = ((target + 16.0) / 116.0) ** 3
    return float(np.clip(math.log2(y_target / max(median_luminance(rgb8, mask), 1e-4)),
                         -3.0, 3.0))


def auto_exposure_curve(ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
                        p: dict[str, Any]) -> np.ndarray:
    """Exposure from the histogram's median: ``amount`` × the stops to the ``target``."""
    stops = p["amount"] * exposure_stops(rgb8, mask, p["target"])
    return linear_to_srgb(srgb_to_linear(ramp) * np.float32(2.0 ** stops))
