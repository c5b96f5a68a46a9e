"""No-reference quality: BRISQUE, measurable photo indices, and the Autopilot's evaluator.

Three layers, each usable alone:

* ``brisque(image)`` — the BRISQUE score (lower is better, roughly 0–100). The natural-scene
  statistics are computed here (OpenCV filters, a tabulated generalised-Gaussian fit); the
  trained regressor (an RBF epsilon-SVR plus its feature ranges) is read from the data files
  that ship inside the ``brisque`` PyPI package (``brisque==0.2.0``), so no weight is ever
  downloaded. The package's own scoring code is not used: it fails under NumPy 2 and is
  slow. When the package is absent, ``brisque`` returns ``None`` and the evaluator drops the
  term (``quality_indices`` says why under ``brisque_status``).
* ``quality_indices(image)`` — exposure and clipping, colour cast, colourfulness, contrast,
  sharpness, noise, tilt of the dominant lines; each raw value plus a 0–1 ``*_score``.
* ``aesthetic_score(image, original=None, weights=None)`` — the weighted ensemble the
  Autopilot maximises. ``DEFAULT_WEIGHTS`` documents the default mix. Learned scorers
  (``"learned"``: CLIP aesthetic through ``pipelines.embeddings``) join when a weight is
  given for them and the model loads; otherwise they are skipped with a logged reason.

Every measure works on a copy reduced to ``ANALYSIS_SIZE`` on its long side, so scores of
a 12-MP photo and of its 1/4-resolution preview are comparable (and cheap).
"""

from __future__ import annotations

import importlib.util
import logging
import math
import pickle
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from eval import naturalness
from pipelines import embeddings
from pipelines.arrays import channel_max, channel_min, rgb_array
from pipelines.color import rgb_to_lab
from pipelines.images import downscale

log = logging.getLogger(__name__)

#: Long side (pixels) every measure works at.
ANALYSIS_SIZE = 384

#: Weights of the hand-set ensemble (normalised by their sum). Quality terms dominate;
#: preservation only matters when an ``original`` is given (it stops runaway edits).
HAND_WEIGHTS: dict[str, float] = {
    "brisque": 1.0,        # natural-scene statistics (BRISQUE mapped to 0–1)
    "exposure": 1.5,       # mid-tones near middle grey, little clipping
    "cast": 1.5,           # edges stay grey (no colour cast)
    "contrast": 1.0,       # RMS contrast of lightness near a photographic norm
    "colourfulness": 0.75,  # Hasler–Süsstrunk colourfulness near a pleasant band
    "sharpness": 0.5,      # Laplacian energy relative to the noise floor
    "noise": 1.25,         # estimated sensor noise sigma
    "level": 1.0,          # dominant lines level/plumb
    "preservation": 1.5,   # structure kept against the original (only with ``original``)
    "learned": 0.0,        # CLIP aesthetic (pipelines.embeddings), when configured
    "natural": 0.0,        # the learned naturalness model (eval.naturalness)
}

#: Weights when the learned naturalness model is present: it replaces the hand-set norms of
#: exposure, colour cast, contrast and colourfulness (it beats them on the held-out photos,
#: see ``eval/data/naturalness.json``); noise, tilt and preservation stay hand-set (the
#: model was not trained on noise, blur or geometry).
LEARNED_WEIGHTS: dict[str, float] = {
    **HAND_WEIGHTS, "exposure": 0.0, "cast": 0.0, "contrast": 0.0, "colourfulness": 0.0,
    "brisque": 0.0, "sharpness": 0.0, "natural": 6.0,
}

#: Kept for callers of the old name: the hand-set mix.
DEFAULT_WEIGHTS = HAND_WEIGHTS


def default_weights() -> dict[str, float]:
    """``LEARNED_WEIGHTS`` when the naturalness model loads, else ``HAND_WEIGHTS``."""
    return LEARNED_WEIGHTS if naturalness.load_model() is not None else HAND_WEIGHTS


def to_analysis(image: np.ndarray, size: int = ANALYSIS_SIZE) -> np.ndarray:
    """RGB ``uint8`` copy with its long side at most ``size`` (area interpolation)."""
    return downscale(_rgb(image), size)


def _rgb(image: np.ndarray) -> np.ndarray:
    image = rgb_array(image, "image", grey=True)
    if min(image.shape[:2]) < 8:
        raise ValueError(f"image {image.shape[1]}x{image.shape[0]} is too small to measure")
    return image


# --------------------------------------------------------------------------- BRISQUE

@dataclass(frozen=True)
class _SVR:
    gamma: float
    rho: float
    coef: np.ndarray          # (n_sv,)
    vectors: np.ndarray       # (n_sv, 36)
    low: np.ndarray           # feature ranges used to scale into [-1, 1]
    high: np.ndarray


class _ListsOnly(pickle.Unpickler):
    """The feature-range file holds only dicts/lists/floats; refuse anything else."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a data file")


def _brisque_folder() -> Path:
    """The ``brisque`` package's model folder, found without importing the package (its
    ``__init__`` pulls in scipy.signal and libsvm, which we do not need)."""
    spec = importlib.util.find_spec("brisque")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the brisque package is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "models"


@lru_cache(maxsize=1)
def _load_svr() -> _SVR | None:
    try:
        folder = _brisque_folder()
        text = (folder / "svm.txt").read_text()
        with (folder / "normalize.pickle").open("rb") as handle:
            ranges = _ListsOnly(handle).load()
    except (ModuleNotFoundError, FileNotFoundError, OSError, pickle.UnpicklingError) as err:
        log.info("BRISQUE disabled: the brisque package's model files are unavailable (%s)", err)
        return None
    header, _, body = text.partition("SV\n")
    fields = dict(line.split(maxsplit=1) for line in header.splitlines() if " " in line)
    coefs, vectors = [], []
    for line in body.splitlines():
        parts = line.split()
        if not parts:
            continue
        coefs.append(float(parts[0]))
        row = np.zeros(36)
        for item in parts[1:]:
            idx, val = item.split(":")
            row[int(idx) - 1] = float(val)
        vectors.append(row)
    return _SVR(float(fields["gamma"]), float(fields["rho"]), np.array(coefs),
                np.array(vectors), np.array(ranges["min_"], float),
                np.array(ranges["max_"], float))


_ALPHAS = np.arange(0.2, 10.0, 0.001)
_GAM = np.vectorize(math.gamma)
_PHI = _GAM(2 / _ALPHAS) ** 2 / (_GAM(1 / _ALPHAS) * _GAM(3 / _ALPHAS))


def _aggd(x: np.ndarray) -> tuple[float, float, float, float]:
    """Asymmetric generalised Gaussian fit → (alpha, mean, sigma_l², sigma_r²)."""
    x = x.ravel()
    sq = x * x
    neg = x < 0
    n_neg = int(np.count_nonzero(neg))
    sum_sq, sum_neg = float(sq.sum()), float(sq[neg].sum())
    sl2 = sum_neg / n_neg if n_neg else 1e-12
    sr2 = (sum_sq - sum_neg) / (x.size - n_neg) if x.size > n_neg else 1e-12
    sl, sr = math.sqrt(max(sl2, 1e-12)), math.sqrt(max(sr2, 1e-12))
    gamma_hat = sl / sr
    r_hat = (float(np.abs(x).sum()) / x.size) ** 2 / max(sum_sq / x.size, 1e-12)
    big_r = r_hat * (gamma_hat ** 3 + 1) * (gamma_hat + 1) / (gamma_hat ** 2 + 1) ** 2
    alpha = float(_ALPHAS[np.argmin((_PHI - big_r) ** 2)])
    const = math.sqrt(math.gamma(1 / alpha) / math.gamma(3 / alpha))
    mean = (sr - sl) * const * math.gamma(2 / alpha) / math.gamma(1 / alpha)
    return alpha, mean, sl2, sr2


@lru_cache(maxsize=1)
def _kernel() -> np.ndarray:
    y, x = np.indices((7, 7)) - 3
    k = np.exp(-(x ** 2 + y ** 2) / (2 * (7 / 6) ** 2))
    return (k / k.sum()).astype(np.float32)


def _brisque_features(gray: np.ndarray) -> list[float]:
    kernel = _kernel()
    mu = cv2.filter2D(gray, -1, kernel, borderType=cv2.BORDER_CONSTANT)
    sq = cv2.filter2D(gray * gray, -1, kernel, borderType=cv2.BORDER_CONSTANT)
    mscn = (gray - mu) / (np.sqrt(np.abs(mu * mu - sq)) + 1 / 255)
    alpha, _, sl2, sr2 = _aggd(mscn)
    feats = [alpha, (sl2 + sr2) / 2]
    for pair in (mscn[:, :-1] * mscn[:, 1:], mscn[:-1, :] * mscn[1:, :],
                 mscn[:-1, :-1] * mscn[1:, 1:], mscn[1:, :-1] * mscn[:-1, 1:]):
        feats.extend(_aggd(pair))
    return feats


def brisque(image: np.ndarray, *, size: int | None = ANALYSIS_SIZE) -> float | None:
    """BRISQUE score of ``image`` (lower is better; ``None`` when the model is unavailable).

    Args:
        image: ``uint8`` RGB/RGBA/grey image.
        size: long side to measure at (``None``: the image's own size).

    Returns:
        The SVR's quality prediction, or ``None`` without the ``brisque`` package.
    """
    svr = _load_svr()
    if svr is None:
        return None
    rgb = to_analysis(image, size) if size else _rgb(image)
    gray = rgb.astype(np.float32) @ np.array([0.2125, 0.7154, 0.0721], np.float32) / 255.0
    half = cv2.resize(gray, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_CUBIC)
    feats = np.array(_brisque_features(gray) + _brisque_features(half))
    scaled = -1 + 2.0 * (feats - svr.low) / (svr.high - svr.low)
    dist = np.sum((svr.vectors - scaled) ** 2, axis=1)
    return float(svr.coef @ np.exp(-svr.gamma * dist) - svr.rho)


# --------------------------------------------------------------------------- indices

def _band(value: float, lo: float, hi: float, soft: float) -> float:
    """1 inside [lo, hi], falling smoothly to 0 over ``soft`` outside it."""
    if value < lo:
        return float(math.exp(-((lo - value) / soft) ** 2))
    if value > hi:
        return float(math.exp(-((value - hi) / soft) ** 2))
    return 1.0


def _shrink(gray: np.ndarray, size: int) -> np.ndarray:
    return downscale(gray, size)


def grey_edge_cast(rgb: np.ndarray) -> float:
    """Colour cast (percent) from the per-channel RMS gradient energy (grey-edge, p = 2).

    0 for a neutral edge colour; about 30–50 for a strong tungsten/daylight mismatch.
    """
    x = rgb.astype(np.float32) / 255.0
    energy = []
    for c in range(3):
        gx = cv2.Sobel(x[..., c], cv2.CV_32F, 1, 0)
        gy = cv2.Sobel(x[..., c], cv2.CV_32F, 0, 1)
        energy.append(math.sqrt(float(np.mean(gx * gx + gy * gy))))
    e = np.array(energy)
    if e.mean() < 1e-6:
        return 0.0
    e = e / e.mean()
    return float(np.hypot(e[0] - e[1], 0.5 * (e[0] + e[1]) - e[2]) * 100)


def _centre_gray(rgb: np.ndarray, size: int) -> np.ndarray:
    """The central ``size``×``size`` crop at native resolution, in grey (noise lives there)."""
    h, w = rgb.shape[:2]
    y0, x0 = max(0, (h - size) // 2), max(0, (w - size) // 2)
    crop = np.ascontiguousarray(rgb[y0:y0 + size, x0:x0 + size])
    return cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY)


def estimate_noise(gray: np.ndarray) -> float:
    """Noise sigma (grey levels) by Immerkær's Laplacian-difference estimator."""
    kernel = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)
    response = cv2.filter2D(gray.astype(np.float32), -1, kernel)[1:-1, 1:-1]
    h, w = response.shape
    return float(math.sqrt(math.pi / 2) * np.abs(response).sum() / (6 * h * w))


def estimate_tilt(gray: np.ndarray) -> tuple[float, int]:
    """Tilt (degrees, + = counter-clockwise) of the dominant near-level/plumb edges.

    A magnitude-weighted histogram of gradient orientations folded onto ±45° around the
    axes; a clear peak within ±12° gives the tilt. Scenes without such a peak (no horizon,
    no architecture) report 0 with confidence 0.

    Returns:
        ``(tilt, confidence)`` where confidence is the peak's height over the uniform level
        (an int; below 6 the tilt is reported as 0).
    """
    g = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), 1.0)
    gx, gy = cv2.Sobel(g, cv2.CV_32F, 1, 0), cv2.Sobel(g, cv2.CV_32F, 0, 1)
    mag = cv2.magnitude(gx, gy)
    strong = mag > np.percentile(mag, 90)
    if not strong.any():
        return 0.0, 0
    theta = np.degrees(np.arctan2(gy[strong], gx[strong]))
    dev = (-theta + 45.0) % 90.0 - 45.0
    hist, edges = np.histogram(dev, bins=180, range=(-45, 45), weights=mag[strong])
    hist = np.convolve(np.concatenate([hist[-3:], hist, hist[:3]]),
                       np.array([1, 2, 3, 2, 1], float) / 9, mode="same")[3:-3]
    centre = (edges[:-1] + edges[1:]) / 2
    near = np.abs(centre) <= 12
    peak = int(np.argmax(np.where(near, hist, -1)))
    level = float(np.median(hist)) + 1e-9
    confidence = float(hist[peak] / level)
    if confidence < 6:
        return 0.0, int(confidence)
    lo, mid, hi = hist[max(peak - 1, 0)], hist[peak], hist[min(peak + 1, 179)]
    offset = 0.5 * (lo - hi) / (lo - 2 * mid + hi) if (lo - 2 * mid + hi) != 0 else 0.0
    return float(centre[peak] + float(np.clip(offset, -0.5, 0.5)) * 0.5), int(confidence)


def _long_lines(gray: np.ndarray, high: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Long straight edge segments (probabilistic Hough): deviation from level/plumb, length.

    Returns:
        ``(deviation_deg, relative_length)``: each segment's angle folded onto ±45° around
        the axes (+ = counter-clockwise) and its length over the image's long side.
    """
    g = cv2.GaussianBlur(gray, (0, 0), 1.0)
    if high is None:   # thresholds that follow the photo's own gradient scale
        mag = np.abs(cv2.Sobel(g, cv2.CV_32F, 1, 0)) + np.abs(cv2.Sobel(g, cv2.CV_32F, 0, 1))
        high = max(24.0, float(np.percentile(mag, 80)))
    edges = cv2.Canny(g, 0.4 * high, high)
    long_side = max(gray.shape)
    min_len = 0.12 * long_side
    lines = cv2.HoughLinesP(edges, 1, np.pi / 720, threshold=max(20, int(min_len * 0.6)),
                            minLineLength=min_len, maxLineGap=3)
    if lines is None:
        return np.zeros(0), np.zeros(0)
    seg = np.asarray(lines).reshape(-1, 4).astype(np.float64)
    dx, dy = seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1]
    dev = (np.degrees(np.arctan2(-dy, dx)) + 45.0) % 90.0 - 45.0
    return dev, np.hypot(dx, dy) / long_side


def estimate_tilt_lines(gray: np.ndarray) -> tuple[float, int]:
    """Tilt (degrees, + = counter-clockwise) from long near-level and near-plumb lines.

    Segments from a probabilistic Hough transform at two scales and two edge thresholds
    (fixed and relative to the photo's gradients) are pooled; those within
    ±10° of an axis vote, the length-weighted median is the estimate, and the answer counts
    only when at least three segments and half the voting length agree within 1°.

    Returns:
        ``(tilt, confidence)``; confidence is 6 + the number of agreeing segments when the
        lines agree, else 0 (and the tilt 0).
    """
    devs, lens = [], []
    for size in (256, 384):
        for high in (150.0, None):   # fixed and photo-relative edge thresholds
            d, length = _long_lines(_shrink(gray, size), high)
            devs.append(d)
            lens.append(length)
    dev, length = np.concatenate(devs), np.concatenate(lens)
    near = np.abs(dev) <= 10
    if near.sum() < 3:
        return 0.0, 0
    d, w = dev[near], length[near]
    order = np.argsort(d)
    cum = np.cumsum(w[order])
    median = float(d[order][np.searchsorted(cum, cum[-1] / 2)])
    agree = np.abs(d - median) <= 1.0
    if agree.sum() < 3 or w[agree].sum() < 0.5 * w.sum():
        return 0.0, 0
    return float(np.average(d[agree], weights=w[agree])), 6 + int(agree.sum())


#: A photo whose 99th lightness percentile reaches this uses the whole tonal range.
FULL_RANGE_P99 = 70.0


def _low_key_floor(p99: float) -> float:
    """Lowest mean lightness the exposure term accepts without penalty.

    A dark photo whose highlights still reach near white is low-key by intent (night,
    stage, space), not under-exposed: its floor drops from 38 to 22. Under-exposure
    compresses the highlights too, so it keeps the normal floor.
    """
    return 22.0 if p99 >= FULL_RANGE_P99 else 38.0


def quality_indices(image: np.ndarray, *, tilt: bool = True,
                    with_brisque: bool = True) -> dict[str, float | int | str | None]:
    """Measurable photo indices, each raw value with a 0–1 score (1 = good).

    Args:
        image: ``uint8`` RGB/RGBA/grey image of any size (measured at ``ANALYSIS_SIZE``).
        tilt: measure the tilt of the dominant lines (the costliest index); without it the
            tilt is reported as 0 with confidence 0 (the Autopilot carries its input's).
        with_brisque: compute BRISQUE (without it, ``brisque`` is None, status "skipped").

    Returns:
        A dict: ``mean_lightness``, ``clip_low``, ``clip_high``, ``light_p01`` and
        ``light_p99`` (lightness percentiles, 0–100), ``exposure_score``;
        ``cast`` (grey-edge cast, percent), ``cast_score``; ``colourfulness``,
        ``colourfulness_score``; ``contrast`` (RMS of L/100), ``contrast_score``;
        ``sharpness`` (Laplacian std), ``sharpness_score``; ``noise_sigma`` (measured on a
        central crop at the image's own resolution, where noise lives), ``noise_score``;
        ``tilt_deg``, ``tilt_confidence``, ``level_score``; ``brisque``
        (None when unavailable), ``brisque_score``, ``brisque_status``.
    """
    native = _rgb(image)
    rgb = to_analysis(native)
    lab = rgb_to_lab(rgb)
    light = lab[..., 0]
    gray8 = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    out: dict[str, float | int | str | None] = {}
    # exposure: median lightness and the clipped shares at each end
    mean_l = float(np.mean(light))
    clip_low = float(np.count_nonzero(channel_max(rgb) <= 3)) / gray8.size
    clip_high = float(np.count_nonzero(channel_min(rgb) >= 252)) / gray8.size
    p01, p99 = (float(v) for v in np.percentile(light, (1, 99)))
    out.update(mean_lightness=mean_l, clip_low=clip_low, clip_high=clip_high,
               light_p01=p01, light_p99=p99)
    clipped = max(0.0, clip_low - 0.12) + max(0.0, clip_high - 0.03)
    out["exposure_score"] = _band(mean_l, _low_key_floor(p99), 62, 14) * math.exp(-8 * clipped)
    # colour cast by the grey-edge hypothesis: edges average to grey under neutral light,
    # so unequal per-channel edge energy means a cast (robust to scenes that are simply
    # warm or green, unlike grey-world means)
    cast = grey_edge_cast(rgb)
    out.update(cast=cast, cast_score=_band(cast, 0, 18, 10))
    # colourfulness (Hasler & Süsstrunk 2003)
    r, g, b = (rgb[..., i].astype(np.float32) for i in range(3))
    rg, yb = r - g, 0.5 * (r + g) - b
    colourful = float(np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean()))
    out.update(colourfulness=colourful, colourfulness_score=_band(colourful, 25, 75, 20))
    contrast = float(light.std() / 100)
    out.update(contrast=contrast, contrast_score=_band(contrast, 0.15, 0.30, 0.06))
    noise = estimate_noise(_centre_gray(native, ANALYSIS_SIZE))
    out.update(noise_sigma=noise, noise_score=_band(noise, 0, 4.0, 4.0))
    sharp = float(cv2.Laplacian(cv2.GaussianBlur(gray8, (3, 3), 0), cv2.CV_32F).std())
    out.update(sharpness=sharp, sharpness_score=_band(sharp, 6, 40, 6))
    # long straight lines first (horizons, buildings, door frames); the orientation
    # histogram covers dense regular texture (brick, tiles) where single lines are ambiguous
    angle, confidence = 0.0, 0
    if tilt:
        angle, confidence = estimate_tilt_lines(gray8)
        if confidence < 6:
            angle, confidence = estimate_tilt(_shrink(gray8, 256))
    out.update(tilt_deg=angle, tilt_confidence=confidence,
               level_score=_band(abs(angle), 0, 0.5, 2.0) if confidence >= 6 else 1.0)
    value = brisque(rgb, size=None) if with_brisque else None
    out["brisque"] = value
    out["brisque_score"] = None if value is None else float(np.clip(1 - value / 100, 0, 1))
    out["brisque_status"] = "ok" if value is not None else \
        ("skipped" if not with_brisque else "brisque package not installed")
    return out


# --------------------------------------------------------------------------- evaluator

def _grad_field(img: np.ndarray) -> np.ndarray:
    g = cv2.cvtColor(to_analysis(img, 96), cv2.COLOR_RGB2GRAY).astype(np.float32)
    g = (g - g.mean()) / (g.std() + 1e-6)
    return np.hypot(cv2.Sobel(g, cv2.CV_32F, 1, 0), cv2.Sobel(g, cv2.CV_32F, 0, 1))


_LAST_ORIGINAL: list[Any] = [None, None]   # (the original array object, its gradient field)


def preservation(image: np.ndarray, original: np.ndarray) -> float:
    """How much of the original's structure survives (0–1), blind to tone and colour.

    Compares the normalised gradient fields of both images at 96 px on the long side: global
    tone/colour edits score ~1; blur, heavy crops or content changes score lower. The
    small size makes it tolerant of a few degrees of straightening. The original's field is
    cached (the same original is compared against many candidates).
    """
    if _LAST_ORIGINAL[0] is original:
        b = _LAST_ORIGINAL[1]
    else:
        b = _grad_field(original)
        _LAST_ORIGINAL[:] = [original, b]
    a = _grad_field(image)
    if a.shape != b.shape:
        b = cv2.resize(b, (a.shape[1], a.shape[0]), interpolation=cv2.INTER_AREA)
    corr = _corr(a, b)
    if corr < 0.9:
        # a global rotate-and-zoom (straighten, crop) keeps the content; align and compare,
        # charging for the share of the original's frame that was cropped away
        corr = max(corr, _aligned_corr(a, b))
    return float(np.clip(corr, 0, 1))


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / (np.sqrt((a * a).sum() * (b * b).sum()) + 1e-9))


def _aligned_corr(a: np.ndarray, b: np.ndarray) -> float:
    """Correlation of field ``a`` with ``b`` warped onto it by an ECC similarity fit, times
    the square root of the kept share of ``b``'s frame (0 when the fit fails)."""
    warp = np.eye(2, 3, dtype=np.float32)
    sa, sb = (cv2.GaussianBlur(x, (0, 0), 1.0) for x in (a, b))
    try:
        _, warp = cv2.findTransformECC(sa, sb, warp, cv2.MOTION_AFFINE,
                                       (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 40,
                                        1e-4), None, 1)
    except cv2.error:
        return 0.0
    kept = abs(float(np.linalg.det(warp[:, :2].astype(np.float64))))
    if not 0.5 <= kept <= 1.05:
        return 0.0
    aligned = cv2.warpAffine(b, warp, (a.shape[1], a.shape[0]),
                             flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_REFLECT)
    return _corr(a, aligned) * math.sqrt(min(1.0, kept))


def _learned_score(image: np.ndarray) -> float | None:
    """CLIP aesthetic from ``pipelines.embeddings`` when configured, else None (logged)."""
    try:
        return float(embeddings.aesthetic_score(image))
    except Exception as err:  # noqa: BLE001 - model loading failures are many and varied
        log.info("learned scorer skipped: %s", err)
        return None


def score_components(image: np.ndarray, original: np.ndarray | None = None,
                     weights: dict[str, float] | None = None,
                     indices: dict[str, Any] | None = None,
                     natural: float | None = None) -> dict[str, float]:
    """The ensemble's terms (each 0–1) that ``aesthetic_score`` combines.

    Args:
        image: the candidate.
        original: the image before any edit; enables the ``preservation`` term.
        weights: as in ``aesthetic_score`` (terms with weight 0 are not computed).
        indices: ``quality_indices(image)`` when the caller already has them.
        natural: the learned term when the caller already knows it (the Autopilot reads a
            correction's result off the model's head for it on the photo it was applied to).

    Returns:
        ``{term: value}`` for every term that could be computed.
    """
    weights = {**default_weights(), **(weights or {})}
    idx = indices if indices is not None else quality_indices(
        image, with_brisque=weights.get("brisque", 0) > 0)
    terms = {name: float(idx[f"{name}_score"]) for name in
             ("exposure", "cast", "contrast", "colourfulness", "sharpness", "noise", "level")
             if weights.get(name, 0) > 0}
    if idx["brisque_score"] is not None and weights.get("brisque", 0) > 0:
        terms["brisque"] = float(idx["brisque_score"])
    if weights.get("natural", 0) > 0:
        if natural is None:
            natural = naturalness.naturalness(image)
        if natural is not None:
            terms["natural"] = natural
    if original is not None and weights.get("preservation", 0) > 0:
        terms["preservation"] = preservation(image, original)
    if weights.get("learned", 0) > 0:
        learned = _learned_score(image)
        if learned is not None:
            terms["learned"] = float(np.clip(learned, 0, 1))
    return terms


def aesthetic_score(image: np.ndarray, original: np.ndarray | None = None,
                    weights: dict[str, float] | None = None) -> float:
    """The Autopilot's reward: a weighted mean of quality terms, in [0, 1] (higher is better).

    Args:
        image: ``uint8`` image to score (any size; measured at ``ANALYSIS_SIZE``).
        original: the unedited image; adds the ``preservation`` term.
        weights: overrides of ``DEFAULT_WEIGHTS`` (``{"learned": 1.0}`` adds the CLIP
            aesthetic when ``pipelines.embeddings`` provides it).

    Returns:
        ``sum(w_i * term_i) / sum(w_i)`` over the terms available.
    """
    merged = {**default_weights(), **(weights or {})}
    return combine(score_components(image, original, merged), merged)


def combine(terms: dict[str, float], weights: dict[str, float] | None = None) -> float:
    """Weighted mean of ensemble terms (``weights`` override ``default_weights()``)."""
    merged = {**default_weights(), **(weights or {})}
    total = sum(merged.get(k, 0.0) for k in terms)
    if total <= 0:
        raise ValueError("aesthetic_score: the weights give no term a positive weight")
    return float(sum(merged.get(k, 0.0) * v for k, v in terms.items()) / total)
