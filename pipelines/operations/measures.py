"""Measures the critic and the operations' checks share (no model, pixels only).

``Measured`` is what an operation's ``check`` receives: the before/after patches (uint8),
their CIE Lab, the target mask and the parameters asked for. ``Verdict`` is what it
returns; ``ratio_verdict`` compares a signed measured change with the expected one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import cv2
import numpy as np

from pipelines.color import delta_e2000, linear_to_oklab, rgb_to_lab, srgb_to_linear


def lab(image: np.ndarray) -> np.ndarray:
    """CIE Lab of a uint8 RGB(A) patch (``pipelines.color.rgb_to_lab``)."""
    return rgb_to_lab(image)


def dilate(mask: np.ndarray, radius: int) -> np.ndarray:
    if radius <= 0:
        return mask.copy()
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    return cv2.dilate(mask.astype(np.uint8), kernel).astype(bool)


def erode(mask: np.ndarray, radius: int) -> np.ndarray:
    if radius <= 0:
        return mask.copy()
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    return cv2.erode(mask.astype(np.uint8), kernel, borderType=cv2.BORDER_REPLICATE
                     ).astype(bool)


def chroma(lab: np.ndarray) -> np.ndarray:
    return np.hypot(lab[..., 1], lab[..., 2])


def hue_deg(a: float, b: float) -> float:
    return math.degrees(math.atan2(b, a)) % 360.0


def hue_distance(h1: float, h2: float) -> float:
    d = abs(h1 - h2) % 360.0
    return min(d, 360.0 - d)


def detail(grey: np.ndarray, where: np.ndarray) -> float:
    """High-frequency energy: mean |Laplacian| over ``where``."""
    lap = np.abs(cv2.Laplacian(grey, cv2.CV_32F, ksize=3))
    return float(lap[where].mean()) if where.any() else 0.0


def noise_sigma(grey: np.ndarray, where: np.ndarray) -> float:
    """Noise level (grey levels): robust spread of the fine residual in flat areas."""
    g = grey.astype(np.float32)
    residual = g - cv2.medianBlur(grey, 3).astype(np.float32)
    edges = grad(cv2.GaussianBlur(g, (0, 0), 1.5)) > 8.0
    flat = where & ~edges
    if flat.sum() < 50:
        flat = where
    return float(1.4826 * np.median(np.abs(residual[flat])) * 1.5)


def changed(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """True where any colour channel differs (fast: OpenCV absdiff, channel ORs)."""
    d = cv2.absdiff(np.ascontiguousarray(before[..., :3]), np.ascontiguousarray(after[..., :3]))
    return (d[..., 0] | d[..., 1] | d[..., 2]) > 0


def cmin(rgb: np.ndarray) -> np.ndarray:
    return np.minimum(np.minimum(rgb[..., 0], rgb[..., 1]), rgb[..., 2])


def cmax(rgb: np.ndarray) -> np.ndarray:
    return np.maximum(np.maximum(rgb[..., 0], rgb[..., 1]), rgb[..., 2])


def grad(light: np.ndarray) -> np.ndarray:
    gx = cv2.Sobel(light, cv2.CV_32F, 1, 0, ksize=3) / 8.0
    gy = cv2.Sobel(light, cv2.CV_32F, 0, 1, ksize=3) / 8.0
    return np.hypot(gx, gy)


@dataclass
class Verdict:
    """One check's contribution: achieved 0..1, words, suggestions."""

    achieved: float
    keep: list[str] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    retry: dict[str, Any] = field(default_factory=dict)
    measures: dict[str, float] = field(default_factory=dict)
    checks: dict[str, bool] = field(default_factory=dict)
    grow: int = 0


def ratio_verdict(op: Any, name: str, value: float, measured: float, expected: float,
                  what: str, unit: str) -> Verdict:
    """Compare a signed measured change with the signed expected one (``op`` clamps the
    suggested retry values: an ``Operation``)."""
    m = {f"{what}_change": round(measured, 3), f"{what}_expected": round(expected, 3)}
    if abs(expected) < 1e-6:
        return Verdict(1.0, [f"{what} left as asked"], measures=m)
    ratio = measured / expected
    m["achieved_ratio"] = round(ratio, 3)
    direction = "up" if expected > 0 else "down"
    if ratio <= 0.05:
        wrong = ratio < -0.05
        words = (f"the {what} went the wrong way" if wrong
                 else f"the {what} barely changed ({measured:+.1f}{unit})")
        retry = {name: op.clamp(name, value * (2.0 if not wrong else 1.0), digits=3)}
        return Verdict(0.1 if wrong else 0.15, fix=[f"{words}; it should go {direction}"],
                       retry=retry, measures=m)
    if ratio < 0.6:
        scale = min(3.0, 1.0 / max(ratio, 0.2))
        return Verdict(0.35 + 0.6 * ratio,
                       keep=[f"the {what} moved {direction}"],
                       fix=[f"the {what} changed only {ratio:.0%} of what was asked; "
                            "make it stronger"],
                       retry={name: op.clamp(name, value * scale, digits=3)}, measures=m)
    if ratio > 3.0:
        return Verdict(0.7, keep=[f"the {what} moved {direction}"],
                       fix=[f"the {what} changed much more than asked; tone it down"],
                       retry={name: op.clamp(name, value * 0.5, digits=3)}, measures=m)
    return Verdict(1.0, keep=[f"the {what} moved {direction} about as asked"], measures=m)


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> float:
    """CIEDE2000 colour difference of two Lab colours."""
    return float(delta_e2000(np.asarray(lab1, np.float64), np.asarray(lab2, np.float64)))


@dataclass
class Measured:
    """One attempt as an operation's ``check`` sees it.

    Attributes:
        before: the patch before the edit (uint8 HxWx3/4; the critic's work copy).
        after: the composed patch after the edit, same size.
        inside: the target mask (bool HxW).
        params: the parameters the user asked for (the action's).
        frame_side: the square root of the whole frame's area, in the patch's pixels
            (0: the frame is not known), for measures relative to the photo's size.
    """

    before: np.ndarray
    after: np.ndarray
    inside: np.ndarray
    params: dict[str, Any]
    frame_side: float = 0.0

    @cached_property
    def lb(self) -> np.ndarray:
        """CIE Lab of ``before``."""
        return lab(self.before)

    @cached_property
    def la(self) -> np.ndarray:
        """CIE Lab of ``after``."""
        return lab(self.after)


#: two colour clusters of a surround closer than this (ΔE, Lab centres) are one region
REGION_DE = 20.0
#: a cluster smaller than this share of the surround is no region of its own
REGION_SHARE = 0.15


def colour_regions(lab_px: np.ndarray, most: int = 4) -> int:
    """How many distinct colour regions a set of Lab pixels holds: the most k-means
    clusters (up to ``most``) whose centres are all ``REGION_DE`` apart and that each
    hold ``REGION_SHARE`` of the pixels (1 for a surround of one kind, however textured).
    """
    values = np.ascontiguousarray(lab_px, dtype=np.float32).reshape(-1, 3)
    if len(values) < 40:
        return 1
    if len(values) > 4000:   # a spread sample is as good and bounded
        values = values[np.linspace(0, len(values) - 1, 4000).astype(int)]
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(0)
    found = 1
    for k in range(2, most + 1):
        _, labels, centres = cv2.kmeans(values, k, None, criteria, 3, cv2.KMEANS_PP_CENTERS)
        shares = np.bincount(labels.ravel(), minlength=k) / len(values)
        gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)
        gaps[np.eye(k, dtype=bool)] = np.inf
        if shares.min() < REGION_SHARE or gaps.min() < REGION_DE:
            break
        found = k
    return found


def oklab_hue(rgb: np.ndarray) -> float:
    """The Oklab hue (degrees) of the mean Oklab colour of ``rgb`` (uint8 pixels, any
    shape ``(..., 3)``): a hue that stays put as a colour lightens, where CIE Lab's blue
    turns violet."""
    ok = linear_to_oklab(srgb_to_linear(np.asarray(rgb, np.float32)[..., :3] / 255.0))
    mean = ok.reshape(-1, 3).mean(axis=0)
    return hue_deg(float(mean[1]), float(mean[2]))
