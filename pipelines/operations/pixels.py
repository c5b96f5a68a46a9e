"""Pixel helpers the operations share: sRGB ⇄ linear tables, Lab, luma, blurs, 8-bit I/O.

(Colour maths moves to ``pipelines.color`` once it lands; these stay thin wrappers.)
"""

from __future__ import annotations

import cv2
import numpy as np


def _decode(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4).astype(np.float32)


def _encode(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 0.0031308, x * 12.92,
                    1.055 * np.power(x, 1 / 2.4) - 0.055).astype(np.float32)


#: 16-bit tables: a lookup is ~20× faster than the power law on a 20-MP frame, and its
#: error (< 0.06 grey levels) is far below 8-bit rounding
STEPS = 65535
_TO_LINEAR = _decode(np.linspace(0.0, 1.0, STEPS + 1, dtype=np.float32))
_TO_SRGB = _encode(np.linspace(0.0, 1.0, STEPS + 1, dtype=np.float32))
LINEAR8 = _decode(np.arange(256, dtype=np.float32) / 255.0)
LUMA = np.array([0.2126, 0.7152, 0.0722], dtype=np.float32)


def index16(x: np.ndarray) -> np.ndarray:
    return (np.clip(x, 0.0, 1.0) * STEPS + 0.5).astype(np.uint16)


def srgb_to_linear(x: np.ndarray) -> np.ndarray:
    """sRGB-encoded values in [0, 1] → linear light."""
    return _TO_LINEAR[index16(x)]


def linear_to_srgb(x: np.ndarray) -> np.ndarray:
    """Linear light in [0, 1] → sRGB-encoded values (clipped)."""
    return _TO_SRGB[index16(x)]


def to_lab(rgb: np.ndarray) -> np.ndarray:
    """Float sRGB in [0, 1] → CIE Lab (L in [0, 100])."""
    return cv2.cvtColor(np.ascontiguousarray(rgb, dtype=np.float32), cv2.COLOR_RGB2Lab)


def from_lab(lab: np.ndarray) -> np.ndarray:
    """CIE Lab → float sRGB clipped to [0, 1]."""
    rgb = cv2.cvtColor(np.ascontiguousarray(lab, dtype=np.float32), cv2.COLOR_Lab2RGB)
    return np.clip(rgb, 0.0, 1.0)


def luma(rgb: np.ndarray) -> np.ndarray:
    """Rec. 709 luma of sRGB values (H, W)."""
    return rgb @ LUMA


def sigma_blur(x: np.ndarray, sigma: float) -> np.ndarray:
    if sigma <= 0:
        return x
    return cv2.GaussianBlur(x, (0, 0), sigmaX=sigma, sigmaY=sigma,
                            borderType=cv2.BORDER_REFLECT)



def wide_blur(x: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur of a large radius, done at a reduced scale (same look, far faster)."""
    factor = int(sigma // 4)
    if factor < 2:
        return sigma_blur(x, sigma)
    h, w = x.shape[:2]
    small = cv2.resize(x, (max(1, w // factor), max(1, h // factor)),
                       interpolation=cv2.INTER_AREA)
    small = sigma_blur(small, sigma / factor)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def histograms(rgb8: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(3, 256) counts of each channel's values over the mask (all pixels if empty)."""
    where = mask.astype(np.uint8) if mask.any() and not mask.all() else None
    return np.stack([cv2.calcHist([rgb8], [c], where, [256], [0, 256]).ravel()
                     for c in range(3)]).astype(np.float64)



def to_u8(rgb: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(rgb * 255.0), 0, 255).astype(np.uint8)



#: a 256-step ramp (1, 256, 3) in [0, 1]: curves are evaluated on it, then applied as a LUT
RAMP = np.repeat(np.arange(256, dtype=np.float32)[None, :, None] / 255.0, 3, axis=2)
