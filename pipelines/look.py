"""A photo's look as numbers, the distance between two looks, and whether structure survived.

The maths of ``eval.look`` (the documented measure): it lives here because the
``match_reference`` operation fits and checks with the same statistics, and ``pipelines``
cannot import ``eval``.

A **look** is measured on a small copy (long side ``LOOK_SIDE``) in CIE Lab
(``pipelines.color``, L 0–100), over a mask when one is given:

* ``lightness``: the L quantiles at ``QUANTILES`` (the lightness distribution);
* ``chroma``: the chroma ``C = hypot(a, b)`` quantiles at the same points;
* ``white``: the mean (a, b) of the shadows, mid-tones and highlights (the thirds of the
  pixels by L): the white point and any tint that differs by tone.

The **look distance** of two looks (all terms in Lab units, like ΔE76):

    distance = mean|ΔL quantiles| + mean|ΔC quantiles| + mean over the 3 tones of |Δ(a, b)|

The first two terms are 1-D Wasserstein (earth mover's) distances of the distributions;
the third is how far the tints sit apart. 0 means the same look; a strong grade moves it
by 10–30.

The **structure** measure is the correlation of the two photos' lightness gradients
(``gradient_correlation``: x and y Sobel gradients of L on a small copy, one Pearson
correlation over both), with L first replaced by its rank (histogram-equalised), so that
any monotone tone curve leaves the measure at about 1 however strong it is. A tone curve
or colour transform keeps it high (≥ 0.85 on real photos); pasting another photo in, or a
flat grey, drops it near 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from pipelines.color import rgb_to_lab

#: long side of the copy every look statistic is measured on
LOOK_SIDE = 256
#: the quantiles of the lightness and chroma distributions (2 % … 98 %, 25 points)
QUANTILES = np.linspace(0.02, 0.98, 25)
#: fewest pixels a look is measured from (fewer: the statistics mean nothing)
MIN_PIXELS = 64


class LookError(ValueError):
    """A look cannot be measured (too few pixels in the mask)."""


@dataclass(frozen=True)
class Look:
    """A photo's look (see the module doc). Arrays are float64."""

    lightness: np.ndarray   # L at QUANTILES
    chroma: np.ndarray      # C at QUANTILES
    white: np.ndarray       # (3, 2): mean (a, b) of shadows, mid-tones, highlights

    def vector(self) -> np.ndarray:
        """The look as one vector (for spreads and projections)."""
        return np.concatenate([self.lightness, self.chroma, self.white.ravel()])


@dataclass(frozen=True)
class LookDistance:
    """The look distance and its three terms (Lab units)."""

    lightness: float
    chroma: float
    white: float

    @property
    def total(self) -> float:
        return self.lightness + self.chroma + self.white

    def as_dict(self) -> dict[str, float]:
        return {"lightness": round(self.lightness, 3), "chroma": round(self.chroma, 3),
                "white": round(self.white, 3), "total": round(self.total, 3)}


def small_copy(image: np.ndarray, mask: np.ndarray | None = None, side: int = LOOK_SIDE
               ) -> tuple[np.ndarray, np.ndarray | None]:
    """``image`` (RGB) and ``mask`` shrunk so the long side is at most ``side`` (area
    averaging; the mask keeps pixels at least half inside)."""
    rgb = np.ascontiguousarray(image[..., :3])
    h, w = rgb.shape[:2]
    scale = side / max(h, w)
    if scale >= 1.0:
        return rgb, None if mask is None else mask.astype(bool)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    if mask is None:
        return small, None
    shrunk = cv2.resize(mask.astype(np.float32), size, interpolation=cv2.INTER_AREA) >= 0.5
    return small, shrunk


def lab_pixels(image: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """The Lab values (N, 3) of ``image``'s pixels inside ``mask`` (all when None), from
    its small copy."""
    small, where = small_copy(image, mask)
    lab = rgb_to_lab(small).reshape(-1, 3).astype(np.float64)
    if where is not None:
        lab = lab[where.ravel()]
    return lab


def look_of_lab(lab: np.ndarray) -> Look:
    """The look of Lab pixels (N, 3)."""
    if len(lab) < MIN_PIXELS:
        raise LookError(f"too few pixels to measure a look ({len(lab)}, need {MIN_PIXELS})")
    light = lab[:, 0]
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    edges = np.quantile(light, [1 / 3, 2 / 3])
    bands = np.digitize(light, edges)
    white = np.zeros((3, 2))
    for band in range(3):
        inside = bands == band
        if inside.any():
            white[band] = lab[inside, 1:].mean(axis=0)
        else:
            white[band] = lab[:, 1:].mean(axis=0)
    return Look(np.quantile(light, QUANTILES), np.quantile(chroma, QUANTILES), white)


def look_of(image: np.ndarray, mask: np.ndarray | None = None) -> Look:
    """The look of a uint8 RGB(A) image, inside ``mask`` when given.

    Raises:
        LookError: fewer than ``MIN_PIXELS`` pixels of the small copy in the mask.
    """
    return look_of_lab(lab_pixels(image, mask))


def distance(a: Look, b: Look) -> LookDistance:
    """The look distance of two looks (see the module doc)."""
    return LookDistance(float(np.mean(np.abs(a.lightness - b.lightness))),
                        float(np.mean(np.abs(a.chroma - b.chroma))),
                        float(np.mean(np.hypot(*(a.white - b.white).T))))


def look_distance(image: np.ndarray, reference: np.ndarray | Look,
                  mask: np.ndarray | None = None,
                  reference_mask: np.ndarray | None = None) -> LookDistance:
    """How far ``image``'s look (inside ``mask``) is from ``reference``'s (inside
    ``reference_mask``); ``reference`` may be a ``Look`` already measured."""
    ref = reference if isinstance(reference, Look) else look_of(reference, reference_mask)
    return distance(look_of(image, mask), ref)


def gradient_correlation(before: np.ndarray, after: np.ndarray,
                         mask: np.ndarray | None = None, side: int = 512) -> float:
    """The correlation (−1…1) of the lightness gradients of two same-size images, inside
    ``mask`` (see the module doc); 0 when either has no gradient there."""
    if before.shape[:2] != after.shape[:2]:
        raise ValueError(f"the images differ in size: {before.shape[:2]} vs {after.shape[:2]}")
    a, where = small_copy(before, mask, side)
    b, _ = small_copy(after, None, side)
    grads = []
    for img in (a, b):
        light = _equalised(rgb_to_lab(img)[..., 0], where)
        gx = cv2.Sobel(light, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(light, cv2.CV_32F, 0, 1, ksize=3)
        if where is not None:
            gx, gy = gx[where], gy[where]
        grads.append(np.concatenate([gx.ravel(), gy.ravel()]).astype(np.float64))
    x, y = grads
    x, y = x - x.mean(), y - y.mean()
    norm = float(np.sqrt((x * x).sum() * (y * y).sum()))
    return float((x * y).sum() / norm) if norm > 1e-9 else 0.0


def _equalised(light: np.ndarray, where: np.ndarray | None) -> np.ndarray:
    """Lightness replaced by its rank (0…100, ties averaged; ranks from the pixels in
    ``where``): any monotone tone curve leaves it as it was."""
    levels = np.round(light.astype(np.float64), 1)
    sample = levels if where is None else levels[where]
    values, counts = np.unique(sample, return_counts=True)
    if len(values) < 2:
        return np.zeros(light.shape, np.float32)
    ranks = (np.cumsum(counts) - counts / 2.0) / counts.sum() * 100.0
    return np.interp(levels, values, ranks).astype(np.float32)


def hue_histogram(lab: np.ndarray, bins: int = 12) -> np.ndarray:
    """The chroma-weighted hue histogram (sums to 1; all zeros for a grey image) of Lab
    pixels (N, 3). The fit never looks at it: an independent check of colour."""
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1])) % 360.0
    weight = np.clip(chroma - 3.0, 0.0, None)   # near-greys carry no hue
    hist, _ = np.histogram(hue, bins=bins, range=(0.0, 360.0), weights=weight)
    total = hist.sum()
    return hist / total if total > 1e-9 else np.zeros(bins)


def hue_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Half the L1 distance of two hue histograms (0 same … 1 disjoint; 1 when one is
    grey and the other is not)."""
    if not a.any() or not b.any():
        return 0.0 if not a.any() and not b.any() else 1.0
    return float(0.5 * np.abs(a - b).sum())


def spread(looks: list[Look]) -> float:
    """How different a set of looks is: the mean look distance of each to their mean
    look (0 = all alike)."""
    if len(looks) < 2:
        return 0.0
    mean = Look(np.mean([lk.lightness for lk in looks], axis=0),
                np.mean([lk.chroma for lk in looks], axis=0),
                np.mean([lk.white for lk in looks], axis=0))
    return float(np.mean([distance(lk, mean).total for lk in looks]))
