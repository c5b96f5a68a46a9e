"""Colour in one place: sRGB ↔ linear light, RGB ↔ CIE Lab, ΔE, luma, and colour names.

One Lab convention everywhere: **float CIE Lab, L in [0, 100], a and b about
[-128, 127]** (D65), from sRGB given either as ``uint8`` or as float in [0, 1]. Code that
needs OpenCV's 8-bit encoding (L·255/100, a+128, b+128) derives it with ``lab_to_8bit``.

Colour names are listed once, in ``COLOURS``: each name's sRGB swatch (what "make it
blue" paints) and its HSV family (what "the blue car" matches). ``NAMED_COLORS`` and
``COLOR_RANGES`` are views of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

__all__ = [
    "COLOR_RANGES", "COLOURS", "LUMA_709", "NAMED_COLORS", "ColourName", "HsvRange",
    "delta_e76", "delta_e2000", "lab_to_8bit", "lab_to_rgb", "linear_to_srgb", "luma",
    "linear_to_oklab", "oklab_to_linear", "rgb_to_lab", "shade_ramp", "srgb_to_linear",
    "to_float",
]

# ------------------------------------------------------------------ transfer curves


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
#: Rec. 709 luma weights
LUMA_709 = np.array([0.2126, 0.7152, 0.0722], dtype=np.float32)


def _index(x: np.ndarray) -> np.ndarray:
    return (np.clip(x, 0.0, 1.0) * _STEPS + 0.5).astype(np.uint16)


def srgb_to_linear(x: np.ndarray) -> np.ndarray:
    """sRGB-encoded values in [0, 1] → linear light."""
    return _TO_LINEAR[_index(x)]


def linear_to_srgb(x: np.ndarray) -> np.ndarray:
    """Linear light in [0, 1] → sRGB-encoded values (clipped)."""
    return _TO_SRGB[_index(x)]


def to_float(rgb: np.ndarray) -> np.ndarray:
    """RGB as contiguous float32 in [0, 1]: ``uint8`` is divided by 255, floats kept."""
    rgb = np.asarray(rgb)
    if rgb.dtype == np.uint8:
        return np.ascontiguousarray(rgb, dtype=np.float32) / 255.0
    return np.ascontiguousarray(rgb, dtype=np.float32)


def luma(rgb: np.ndarray) -> np.ndarray:
    """Rec. 709 luma of the values given (float in [0, 1] → [0, 1]; uint8 → 0–255)."""
    return np.asarray(rgb)[..., :3] @ LUMA_709

# ------------------------------------------------------------------------------ Lab


def rgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """sRGB (``uint8``, or float in [0, 1]) of any shape ``(..., 3|4)`` → float32 CIE Lab.

    Alpha is ignored; L is in [0, 100].
    """
    x = to_float(np.asarray(rgb)[..., :3])
    shape = x.shape
    flat = x.reshape(-1, 1, 3) if x.ndim != 3 else x
    lab = cv2.cvtColor(np.ascontiguousarray(flat), cv2.COLOR_RGB2Lab)
    return lab.reshape(shape)


def lab_to_rgb(lab: np.ndarray) -> np.ndarray:
    """CIE Lab (L in [0, 100]) → float sRGB clipped to [0, 1], same shape."""
    lab = np.asarray(lab, np.float32)
    shape = lab.shape
    flat = lab.reshape(-1, 1, 3) if lab.ndim != 3 else lab
    rgb = cv2.cvtColor(np.ascontiguousarray(flat), cv2.COLOR_Lab2RGB)
    return np.clip(rgb, 0.0, 1.0).reshape(shape)


def lab_to_8bit(lab: np.ndarray) -> np.ndarray:
    """Float Lab → OpenCV's 8-bit encoding (L·255/100, a+128, b+128), as uint8."""
    scaled = np.asarray(lab, np.float32) * np.array([255 / 100, 1, 1], np.float32) + \
        np.array([0, 128, 128], np.float32)
    return np.clip(np.round(scaled), 0, 255).astype(np.uint8)


def delta_e76(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIE 1976 ΔE (Euclidean distance in Lab), per pixel."""
    diff = np.asarray(lab1, np.float32) - np.asarray(lab2, np.float32)
    return np.sqrt((diff ** 2).sum(axis=-1))


def delta_e2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIEDE2000 ΔE, per pixel (arrays of shape ``(..., 3)``; a single colour gives a
    0-d array — wrap in ``float``)."""
    from skimage.color import deltaE_ciede2000  # noqa: PLC0415 — scikit-image is slow to import

    return deltaE_ciede2000(np.asarray(lab1, np.float64), np.asarray(lab2, np.float64))

# ---------------------------------------------------------------------------- Oklab

# Björn Ottosson's Oklab (2020): linear sRGB → LMS → cube root → L, a, b (L in [0, 1]).
# Its hues stay put as a colour lightens or darkens, where CIE Lab's blue turns violet.
_TO_LMS = np.array([[0.4122214708, 0.5363325363, 0.0514459929],
                    [0.2119034982, 0.6806995451, 0.1073969566],
                    [0.0883024619, 0.2817188376, 0.6299787005]])
_LMS_TO_LAB = np.array([[0.2104542553, 0.7936177850, -0.0040720468],
                        [1.9779984951, -2.4285922050, 0.4505937099],
                        [0.0259040371, 0.7827717662, -0.8086757660]])
_FROM_LMS, _LAB_TO_LMS = np.linalg.inv(_TO_LMS), np.linalg.inv(_LMS_TO_LAB)


def linear_to_oklab(rgb: np.ndarray) -> np.ndarray:
    """Linear-light sRGB ``(..., 3)`` → Oklab ``(..., 3)`` (float64, L in [0, 1])."""
    return np.cbrt(np.asarray(rgb, np.float64) @ _TO_LMS.T) @ _LMS_TO_LAB.T


def oklab_to_linear(lab: np.ndarray) -> np.ndarray:
    """Oklab ``(..., 3)`` → linear-light sRGB (float64, not clipped: out of gamut shows
    as values outside [0, 1])."""
    lms = np.asarray(lab, np.float64) @ _LAB_TO_LMS.T
    return (lms ** 3) @ _FROM_LMS.T


def shade_ramp(color: tuple[int, int, int], steps: int = 1001) -> np.ndarray:
    """``(steps, 3)`` float sRGB shades of ``color`` at CIE L* = 0 … 100, evenly spaced.

    Every shade has the colour's Oklab hue, and its Oklab chroma reduced only as far as
    the sRGB gamut requires at that lightness: a light blue stays blue (CIE Lab's constant
    hue turns it lavender). Built on a fine Oklab lightness scale, then read at each L*.
    """
    target = linear_to_oklab(srgb_to_linear(np.asarray(color, np.float32) / 255.0))
    light = np.linspace(0.0, 1.0, 4001)
    lo, hi = np.zeros_like(light), np.ones_like(light)
    for _ in range(20):   # the largest share of the chroma inside the gamut, per lightness
        mid = (lo + hi) / 2
        lin = oklab_to_linear(np.stack([light, mid * target[1], mid * target[2]], -1))
        inside = ((lin >= -1e-7) & (lin <= 1 + 1e-7)).all(axis=-1)
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
    # darker than the colour, the colour itself darkened (linear light scaled) keeps its
    # hue exactly and its chroma in proportion: near a primary it holds more chroma than
    # the search finds (the constant-hue region there is not convex)
    lo = np.maximum(lo, np.where(light <= target[0], light / max(target[0], 1e-9), 0.0))
    lin = np.clip(oklab_to_linear(np.stack([light, lo * target[1], lo * target[2]], -1)),
                  0.0, 1.0)
    y = lin @ LUMA_709.astype(np.float64)
    cie = np.maximum.accumulate(np.where(y > 216 / 24389, 116 * np.cbrt(y) - 16,
                                         y * 24389 / 27))
    srgb = _encode(lin)
    at = np.linspace(0.0, 100.0, steps)
    return np.stack([np.interp(at, cie, srgb[:, c]) for c in range(3)], -1).astype(
        np.float32)

# ---------------------------------------------------------------------- colour names


@dataclass(frozen=True)
class HsvRange:
    """Hue intervals in degrees and saturation/value bounds in [0, 1]."""

    hues: tuple[tuple[float, float], ...] = ((0.0, 360.0),)
    s_min: float = 0.0
    s_max: float = 1.0
    v_min: float = 0.0
    v_max: float = 1.0

    def match(self, hsv: np.ndarray) -> np.ndarray:
        """Which pixels of a float HSV image (hue in degrees) fall in this family."""
        h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
        hue_ok = np.zeros(h.shape, bool)
        for lo, hi in self.hues:
            hue_ok |= (h >= lo) & (h <= hi)
        return hue_ok & (s >= self.s_min) & (s <= self.s_max) & \
            (v >= self.v_min) & (v <= self.v_max)


@dataclass(frozen=True)
class ColourName:
    """A colour word: the sRGB swatch it paints and the HSV family it matches."""

    rgb: tuple[int, int, int]
    family: HsvRange


_GREY = HsvRange(s_max=0.15, v_min=0.25, v_max=0.8)

#: every colour word the localiser, recolour, planners and benchmarks understand
COLOURS: dict[str, ColourName] = {
    "red": ColourName((220, 30, 30), HsvRange(((0, 14), (340, 360)), 0.45, 1, 0.25)),
    "maroon": ColourName((120, 20, 30), HsvRange(((0, 15), (335, 360)), 0.45, 1, 0.12, 0.55)),
    "orange": ColourName((245, 130, 20), HsvRange(((14, 40),), 0.55, 1, 0.3)),
    "yellow": ColourName((240, 215, 30), HsvRange(((40, 68),), 0.4, 1, 0.35)),
    "gold": ColourName((212, 175, 55), HsvRange(((36, 56),), 0.45, 1, 0.35)),
    "olive": ColourName((120, 120, 30), HsvRange(((45, 80),), 0.35, 1, 0.2, 0.6)),
    "lime": ColourName((150, 230, 40), HsvRange(((68, 105),), 0.45, 1, 0.35)),
    "green": ColourName((40, 170, 50), HsvRange(((70, 165),), 0.25, 1, 0.12)),
    "teal": ColourName((20, 140, 140), HsvRange(((160, 200),), 0.35, 1, 0.2, 0.7)),
    "turquoise": ColourName((60, 210, 200), HsvRange(((160, 190),), 0.3, 1, 0.4)),
    "cyan": ColourName((30, 210, 230), HsvRange(((175, 200),), 0.35, 1, 0.4)),
    "blue": ColourName((30, 70, 220), HsvRange(((195, 255),), 0.3, 1, 0.15)),
    "navy": ColourName((20, 30, 110), HsvRange(((205, 250),), 0.35, 1, 0.08, 0.5)),
    "violet": ColourName((150, 90, 220), HsvRange(((250, 290),), 0.25, 1, 0.3)),
    "purple": ColourName((130, 40, 170), HsvRange(((255, 300),), 0.3, 1, 0.15)),
    "magenta": ColourName((220, 40, 200), HsvRange(((285, 335),), 0.4, 1, 0.3)),
    "pink": ColourName((245, 130, 180), HsvRange(((300, 360), (0, 10)), 0.15, 0.65, 0.5)),
    "brown": ColourName((120, 70, 30), HsvRange(((5, 45),), 0.3, 1, 0.1, 0.65)),
    "beige": ColourName((225, 205, 165), HsvRange(((20, 55),), 0.1, 0.4, 0.65)),
    "black": ColourName((15, 15, 15), HsvRange(v_max=0.2)),
    "white": ColourName((245, 245, 245), HsvRange(s_max=0.15, v_min=0.8)),
    "gray": ColourName((128, 128, 128), _GREY),
    "grey": ColourName((128, 128, 128), _GREY),
    "silver": ColourName((192, 192, 192), HsvRange(s_max=0.12, v_min=0.55, v_max=0.9)),
}

#: colour word → sRGB swatch
NAMED_COLORS: dict[str, tuple[int, int, int]] = {k: v.rgb for k, v in COLOURS.items()}
#: colour word → HSV family
COLOR_RANGES: dict[str, HsvRange] = {k: v.family for k, v in COLOURS.items()}
