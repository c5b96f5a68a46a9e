"""A learned no-reference evaluator: how far a photo is from its undegraded self.

``predict(image)`` reads colour and tone statistics (``features``: channel percentiles, the
lightness histogram's quantiles, clipping, grey-world / white-patch / grey-edge colour
ratios, neutral-pixel and highlight casts, chroma) and estimates, in RMSE grey levels at
``FEATURE_SIZE`` px, the distance between the photo and what it was before anything
darkened, brightened, tinted or faded it — for the photo as it is (head ``"input"``) and
for the photo after each of the photographer's first-aid corrections (one head per
correction, named by ``action_key``). ``naturalness(image)`` maps the first to a 0–1 score
(1 = looks untouched); the Autopilot scores a correction's result by its head on the photo
it was applied to, which ranks corrections far better than reading the result alone (a
stretched histogram looks "natural" whether or not the stretch was right).

The model is a one-hidden-layer perceptron whose weights are data, not code:
``eval/data/naturalness.json`` is written by ``scripts/train_naturalness.py`` from photos
that ship with our dependencies (``eval.photos.TRAIN_PHOTOS``) under random degradations of
our own, and records its training command and held-out figures. Nothing is trained at run
time; without the file, ``load_model`` returns ``None`` and callers fall back to the
hand-set norms of ``eval.noref``.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipelines.arrays import channel_max, channel_min, rgb_array
from pipelines.color import lab_to_8bit, rgb_to_lab
from pipelines.images import downscale

log = logging.getLogger(__name__)

#: Long side (pixels) the features are measured at.
FEATURE_SIZE = 256
#: Where the trained weights live.
MODEL_PATH = Path(__file__).resolve().parent / "data" / "naturalness.json"

_L_QUANTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


_LIN8 = np.where(np.arange(256) / 255.0 <= 0.04045, np.arange(256) / 255.0 / 12.92,
                 ((np.arange(256) / 255.0 + 0.055) / 1.055) ** 2.4)


def _log_ratio(a: float, b: float) -> float:
    return math.log(max(a, 1e-4) / max(b, 1e-4))


def _grad_energy(channel: np.ndarray) -> float:
    gx = cv2.Sobel(channel, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(channel, cv2.CV_32F, 0, 1)
    return math.sqrt(float(np.mean(gx * gx + gy * gy)))


def _quantiles(hist: np.ndarray, q: tuple[float, ...] | np.ndarray) -> np.ndarray:
    """Bin index (0–255) at each quantile ``q`` (percent) of a 256-bin histogram."""
    cdf = np.cumsum(hist)
    return np.searchsorted(cdf, np.asarray(q, np.float64) / 100.0 * cdf[-1]).astype(np.float64)


def _hist(values: np.ndarray) -> np.ndarray:
    return np.bincount(values.ravel(), minlength=256).astype(np.float64)


FEATURE_NAMES: tuple[str, ...] = (
    *(f"{c}_p{q}" for c in "rgb" for q in ("0.5", "50", "99.5")),
    *(f"L_p{q}" for q in _L_QUANTILES), "L_mean", "L_std", "clip_white", "clip_black",
    "greyworld_rg", "greyworld_bg", "whitepatch_rg", "whitepatch_bg", "greyedge_rg",
    "greyedge_bg", "a_mean", "b_mean", "neutral_a", "neutral_b", "bright_a", "bright_b",
    "dark_a", "dark_b", "chroma_mean", "chroma_p90", "colourfulness", "hsv_saturation")


def features(image: np.ndarray) -> np.ndarray:
    """Colour and tone statistics of ``image`` (``FEATURE_NAMES`` order), at 256 px.

    Quantiles come from 256-bin histograms (no sorting), so one call costs a few
    milliseconds.

    Args:
        image: ``uint8`` RGB/RGBA (or grey) image of any size.

    Returns:
        A float64 vector of ``len(FEATURE_NAMES)`` values.
    """
    rgb8 = np.ascontiguousarray(downscale(rgb_array(image, "image", grey=True), FEATURE_SIZE))
    hists = [_hist(rgb8[..., c]) for c in range(3)]
    n = float(rgb8.shape[0] * rgb8.shape[1])
    out: list[float] = []
    for h in hists:
        out.extend(float(v) / 255.0 for v in _quantiles(h, (0.5, 50, 99.5)))
    lab8 = lab_to_8bit(rgb_to_lab(rgb8))
    light = lab8[..., 0].astype(np.float32) / 255.0            # L*/100
    a = lab8[..., 1].astype(np.float32) - 128.0
    b = lab8[..., 2].astype(np.float32) - 128.0
    l_hist = _hist(lab8[..., 0])
    out.extend(float(v) / 255.0 for v in _quantiles(l_hist, _L_QUANTILES))
    mx, mn = channel_max(rgb8), channel_min(rgb8)
    out += [float(light.mean()), float(light.std()),
            float(np.count_nonzero(mx >= 250)) / n, float(np.count_nonzero(mn <= 5)) / n]
    mean = [float(h @ _LIN8) / n for h in hists]
    top = [float(_LIN8[int(_quantiles(h, (99.0,))[0])]) for h in hists]
    edges = [_grad_energy(rgb8[..., c].astype(np.float32) / 255.0) for c in range(3)]
    out += [_log_ratio(mean[0], mean[1]), _log_ratio(mean[2], mean[1]),
            _log_ratio(top[0], top[1]), _log_ratio(top[2], top[1]),
            _log_ratio(edges[0], edges[1]), _log_ratio(edges[2], edges[1])]
    chroma = cv2.magnitude(a, b)
    c_bins = np.minimum(chroma * 2.0, 255).astype(np.uint8)
    c25, c90 = _quantiles(_hist(c_bins), (25, 90))
    l10, l90 = _quantiles(l_hist, (10, 90))
    neutral = c_bins <= c25        # bins, not values: never empty
    bright = lab8[..., 0] >= l90
    dark = lab8[..., 0] <= l10
    out += [float(a.mean()) / 50, float(b.mean()) / 50,
            float(a[neutral].mean()) / 50, float(b[neutral].mean()) / 50,
            float(a[bright].mean()) / 50, float(b[bright].mean()) / 50,
            float(a[dark].mean()) / 50, float(b[dark].mean()) / 50,
            float(chroma.mean()) / 50, float(c90) / 100]
    x = rgb8.astype(np.float32)
    rg = x[..., 0] - x[..., 1]
    yb = 0.5 * (x[..., 0] + x[..., 1]) - x[..., 2]
    colourful = float(np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean()))
    sat = (mx.astype(np.float32) - mn) / np.maximum(mx.astype(np.float32), 1.0)
    out += [colourful / 100.0, float(sat.mean())]
    return np.asarray(out, dtype=np.float64)


def action_key(operation: str, params: dict[str, Any]) -> str:
    """A stable name for an edit: ``operation(param=value,…)``, params sorted, floats 3 g."""
    args = ",".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in sorted(params.items()))
    return f"{operation}({args})"


#: The head that estimates the distance of the photo as it is.
SELF = "input"


@dataclass(frozen=True)
class NaturalnessModel:
    """A one-hidden-layer perceptron: standardised features → tanh → log distance per head."""

    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray          # (n_features, hidden)
    b1: np.ndarray
    w2: np.ndarray          # (hidden, heads)
    b2: np.ndarray          # (heads,)
    heads: tuple[str, ...]  # SELF first, then one ``action_key`` per correction
    info: dict

    @classmethod
    def from_json(cls, data: dict) -> NaturalnessModel:
        """Build from the JSON the training script writes (checked, never executed)."""
        names = tuple(data.get("features", ()))
        if names != FEATURE_NAMES:
            raise ValueError("the model's feature list does not match this code's")
        heads = tuple(str(h) for h in data.get("heads", ()))
        if not heads or heads[0] != SELF or len(set(heads)) != len(heads):
            raise ValueError(f"the model's heads must start with {SELF!r} and be distinct")
        arrays = {k: np.asarray(data[k], dtype=np.float64)
                  for k in ("mean", "scale", "w1", "b1", "w2", "b2")}
        n, h, k = len(names), arrays["b1"].shape[0], len(heads)
        if arrays["mean"].shape != (n,) or arrays["scale"].shape != (n,) or \
                arrays["w1"].shape != (n, h) or arrays["w2"].shape != (h, k) or \
                arrays["b2"].shape != (k,):
            raise ValueError("the model's weight shapes are inconsistent")
        if not all(np.isfinite(v).all() for v in arrays.values()):
            raise ValueError("the model holds non-finite weights")
        return cls(arrays["mean"], np.maximum(arrays["scale"], 1e-9), arrays["w1"],
                   arrays["b1"], arrays["w2"], arrays["b2"], heads, dict(data.get("info", {})))

    def predict_log(self, feats: np.ndarray) -> np.ndarray:
        """log(1 + RMSE) per head, for one feature vector (→ (heads,)) or a batch."""
        z = (np.nan_to_num(np.asarray(feats, np.float64)) - self.mean) / self.scale
        return np.tanh(z @ self.w1 + self.b1) @ self.w2 + self.b2


#: A model file used instead of ``MODEL_PATH`` (``use_model``); None = the shipped one.
_override: Path | None = None


def use_model(path: str | Path | None) -> None:
    """Make ``predict``/``naturalness`` read another trained model file (None: the shipped
    one) — for benches that judge the Autopilot on a photo with an evaluator fitted without
    it (``scripts/train_naturalness.py --leave-one-out``)."""
    global _override
    _override = Path(path) if path is not None else None
    load_model.cache_clear()


@lru_cache(maxsize=4)
def load_model(path: str | None = None) -> NaturalnessModel | None:
    """The trained model (``MODEL_PATH``, or the file given to ``use_model``, by default),
    or ``None`` when absent or unreadable."""
    where = Path(path) if path else (_override or MODEL_PATH)
    try:
        return NaturalnessModel.from_json(json.loads(where.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as err:
        log.info("learned naturalness model unavailable (%s): %s", where.name, err)
        return None


def predict(image: np.ndarray, model: NaturalnessModel | None = None) -> dict[str, float]:
    """Estimated distance (RMSE, grey levels) to the undegraded photo, per head.

    Args:
        image: ``uint8`` image of any size.
        model: default ``load_model()``.

    Returns:
        ``{SELF: distance as it is, action_key: distance after that correction, …}``;
        empty without a model.
    """
    model = model or load_model()
    if model is None:
        return {}
    logs = model.predict_log(features(image))
    return {h: float(max(0.0, math.expm1(v))) for h, v in zip(model.heads, logs, strict=True)}


def distance_to_score(distance: float) -> float:
    """Map a distance (RMSE) to 0–1: 1 at 0, falling with its logarithm (0 at 255).

    Logarithmic, so equal ratios of distance are equal score steps whatever the photo.
    """
    return float(1.0 - math.log1p(max(0.0, distance)) / math.log1p(255.0))


def naturalness(image: np.ndarray, model: NaturalnessModel | None = None) -> float | None:
    """0–1: how untouched ``image`` looks to the learned model (None without a model)."""
    distances = predict(image, model)
    return distance_to_score(distances[SELF]) if distances else None
