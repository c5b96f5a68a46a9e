"""Pixel helpers the operations share: blurs, histograms, 8-bit I/O, a 16-bit LUT index.

Colour maths (sRGB ⇄ linear, Lab, luma) is ``pipelines.color``'s, re-exported here under
the names the operations use.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from pipelines.color import LUMA_709 as LUMA
from pipelines.color import lab_to_rgb as from_lab
from pipelines.color import linear_to_srgb, luma, srgb_to_linear
from pipelines.color import rgb_to_lab as to_lab

__all__ = ["GAMUT_KEEP", "LINEAR8", "LUMA", "RAMP", "STEPS", "from_lab", "histograms",
           "index16", "linear_to_srgb", "luma", "saturated8", "saturation_matrix", "sigma_blur",
           "srgb_to_linear", "to_lab", "to_u8", "wide_blur"]

#: steps of the 16-bit look-up tables the tone operations build
STEPS = 65535
#: linear light of each 8-bit sRGB value
LINEAR8 = srgb_to_linear(np.arange(256, dtype=np.float32) / 255.0)


def index16(x: np.ndarray) -> np.ndarray:
    """Values in [0, 1] → indices into a ``STEPS``-step table."""
    return (np.clip(x, 0.0, 1.0) * STEPS + 0.5).astype(np.uint16)


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


def saturation_matrix(p: dict[str, Any]) -> np.ndarray:
    """Scale each pixel's distance from its luma by 1 + amount (luma kept)."""
    k = 1.0 + p["amount"]
    return (k * np.eye(3) + (1.0 - k) * np.outer(np.ones(3), LUMA)).astype(np.float32)


#: more saturation stops short of the gamut's edge: a pixel's HSV saturation ((max - min) /
#: max) rises to at most this, or stays where it was when already above. Past it the
#: smallest channel is clipped at 0 and the colour goes flat: a clear blue sky made "a
#: deeper blue" by +0.375 drove 14-48 % of itself to full saturation (the Lincoln
#: Memorial's, Windows' hills'), which ``agent.brain.extent_relative`` rightly refuses
GAMUT_KEEP = 0.93


def saturated8(rgb8: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Each pixel's distance from its luma scaled by 1 + amount; a positive amount is cut
    per pixel where it would reach the gamut's edge (``GAMUT_KEEP``)."""
    k = 1.0 + float(p["amount"])
    plain = cv2.transform(rgb8, saturation_matrix(p))
    if k <= 1.0:
        return plain
    rgb = rgb8.astype(np.float32)
    grey = cv2.transform(rgb, LUMA[None, :].astype(np.float32))
    d = rgb - grey[..., None]
    hi, lo = d.max(axis=-1), d.min(axis=-1)
    top = rgb.max(axis=-1)
    was = np.where(top > 0, (top - rgb.min(axis=-1)) / np.maximum(top, 1e-6), 0.0)
    cap = np.maximum(was, GAMUT_KEEP)
    # HSV saturation at factor f: f (hi - lo) / (grey + f hi) = cap  ->  f = cap grey / den
    den = (hi - lo) - cap * hi
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(den > 1e-6, cap * grey / np.maximum(den, 1e-6), k)
    # (a channel clipped at 255 instead only lowers the saturation reached, as before)
    f = np.clip(f, 1.0, k)
    cut = f < k - 1e-6
    if not cut.any():
        return plain
    out = plain.copy()
    out[cut] = to_u8((grey[cut][:, None] + d[cut] * f[cut][:, None]) / 255.0)
    return out
