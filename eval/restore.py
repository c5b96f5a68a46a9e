"""The degradation a photo has suffered, estimated from its own statistics, and its inverse.

The benchmark's faults are global (issue 15): exposure down or up, an illuminant cast,
fading, and mixtures. Each has an exact inverse when the scene had a black and a white:

* **gains** (exposure and white balance act on linear light): each channel's brightest
  value is where the scene's white went, so dividing each channel in linear light by it
  undoes the change (``channel_levels`` with ``linear``, ``low`` = ``high`` = 0);
* **fade** (tones squeezed towards grey): each channel's darkest and brightest values are
  where black and white went, so a per-channel stretch in sRGB undoes it (``channel_levels``
  without ``linear``).

``estimate(image)`` reads the photo's statistics (``features``: ``eval.naturalness``'s
colour and tone statistics, each channel's extreme quantiles, the two inverses' white
points and how far each would move the photo, issue 28's evaluator's predictions, the
dark channel, entropy, local contrast and channel correlations, haze statistics that a gain
or a fade leave alone (``HAZE_NAMES``), and the same evaluator's
view of each inverse's *result*: a degraded photo's inverse looks more like a photograph
than the photo itself) and returns an ``Estimate``: which family of fault the photo most
likely has, the inverse as operation parameters (the fade's stretch bounded by
``MAX_LIFT``), how far it moves the photo, whether the fault model can explain the photo
at all (``Estimate.explained``), and the calibrated probability that the photo is
degraded (moved by more than 4.5 grey levels RMSE, i.e. below 35 dB from what it was).
Two small gradient-boosted tree ensembles (``eval/data/restore.json``, written by
``scripts/train_restore.py`` on ``REAL_TRAIN`` + ``TRAIN_PHOTOS`` and their crops under
random degradations, calibrated on ``REAL_VALIDATION``) do the judging; they are data,
evaluated here with numpy. Without the file ``estimate`` returns ``None``.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from eval import naturalness
from pipelines.arrays import rgb_array
from pipelines.color import srgb_to_linear
from pipelines.images import downscale
from pipelines.operations import registry

log = logging.getLogger(__name__)

MODEL_PATH = Path(__file__).resolve().parent / "data" / "restore.json"
#: Long side (px) the statistics and the inverse's move are measured at.
SIZE = naturalness.FEATURE_SIZE
#: Each channel's quantiles (percent) read as features.
QUANTILES = (0.1, 0.5, 1, 2, 5, 25, 50, 75, 95, 98, 99, 99.5, 99.9)
#: The operation that inverts both families, and its parameters per family.
INVERSE_OP = "channel_levels"
INVERSE_PARAMS: dict[str, dict[str, Any]] = {
    "gains": {"low": 0.0, "high": 0.0, "linear": True},
    "fade": {"low": 0.0, "high": 0.0, "linear": False},
}
FAMILIES = ("gains", "fade")

#: The widest fade of the fault model (``eval.photos.random_degradation`` lifts black by
#: 0.04–0.28): the fade's inverse never pulls a channel's darkest value down by more, so a
#: scene with no black of its own (fog, a cloud) is not stretched as if it had one.
MAX_LIFT = 0.28
#: Atmospheric haze against a global fault (issue 33's fog): each is measured relative to the
#: photo's own white, so a gain (exposure, cast) barely changes it. Haze grows with depth,
#: so the dark channel is lifted far away (the top, usually) and not near by, and where it
#: is lifted the local contrast drops; a fade lifts it by the same amount everywhere.
HAZE_NAMES: tuple[str, ...] = ("haze_dark_white", "haze_top_bottom", "haze_spread",
                               "haze_contrast_corr")
#: Shape statistics read on the photo and (the first four) on each inverse's result: the
#: dark channel's quantiles (haze and fade lift it everywhere, a scene's own shadows only in
#: places), lightness entropy, local contrast, and the channels' correlations.
SHAPE_NAMES: tuple[str, ...] = ("dark_q1", "dark_q10", "dark_q50", "dark_q90", "entropy",
                                "laplacian", "local_contrast", "local_relative",
                                "corr_rg", "corr_rb", "corr_gb", *HAZE_NAMES)
#: Naturalness statistics compared before and after each inverse (the two-sided test: a
#: degraded photo's inverse looks more like a photograph than the photo itself).
FIX_DELTAS: tuple[str, ...] = ("L_p50", "L_std", "clip_white", "clip_black", "chroma_mean",
                               "colourfulness", "hsv_saturation", "neutral_a", "neutral_b",
                               "L_p1", "L_p99")
_DELTA_INDEX = [naturalness.FEATURE_NAMES.index(k) for k in FIX_DELTAS]

FEATURE_NAMES: tuple[str, ...] = (
    *naturalness.FEATURE_NAMES,
    *(f"{c}_q{q:g}" for c in "rgb" for q in QUANTILES),
    *(f"{c}_clip{e}" for c in "rgb" for e in ("0", "255")),
    *(f"{c}_white_stops" for c in "rgb"),
    *(f"moves_{f}" for f in FAMILIES),
    "natural_self", "natural_best", *SHAPE_NAMES,
    *(f"{f}_{k}" for f in FAMILIES for k in (
        "fix_self", "fix_best", "fix_gain_self", *(f"d_{n}" for n in FIX_DELTAS),
        *SHAPE_NAMES[:4])))


def _inverse(rgb8: np.ndarray, family: str) -> np.ndarray:
    op = registry.get(INVERSE_OP)
    params = op.validate(INVERSE_PARAMS[family])
    return op.apply(rgb8, np.ones(rgb8.shape[:2], bool), params)


def _rmse(a: np.ndarray, b: np.ndarray) -> float:
    d = a.astype(np.float32) - b.astype(np.float32)
    return float(np.sqrt(np.mean(d * d)))


def _dark(small: np.ndarray) -> list[float]:
    """The dark channel's quantiles (the first four ``SHAPE_NAMES``)."""
    dark = cv2.erode(small.min(axis=2), np.ones((9, 9), np.uint8)).astype(np.float32) / 255.0
    return [float(v) for v in np.percentile(dark, (1, 10, 50, 90))]


def haze(small: np.ndarray) -> list[float]:
    """``HAZE_NAMES`` of a ``uint8`` RGB image (read at ``SIZE``): the dark channel's median
    over the white (the 99.9th percentile of the brightest channel), its top third's mean
    less its bottom third's, its 90th less its 10th percentile of 16-px blocks (each over
    the white), and the correlation across those blocks of its mean with the lightness's
    standard deviation."""
    dark = cv2.erode(small.min(axis=2), np.ones((9, 9), np.uint8)).astype(np.float32) / 255.0
    white = max(float(np.percentile(small.max(axis=2), 99.9)) / 255.0, 0.05)
    h, w = dark.shape
    third = max(h // 3, 1)
    bh, bw = max(h // 16, 1), max(w // 16, 1)
    grey = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.float32) / 255.0
    crop = (slice(0, bh * 16), slice(0, bw * 16))
    blocks = dark[crop].reshape(16, bh, 16, bw).mean(axis=(1, 3)).ravel()
    spread = grey[crop].reshape(16, bh, 16, bw).std(axis=(1, 3)).ravel()
    corr = float(np.corrcoef(blocks, spread)[0, 1]) if blocks.std() > 1e-6 and \
        spread.std() > 1e-6 else 0.0
    q10, q90 = np.percentile(blocks, (10, 90))
    return [float(np.median(dark)) / white,
            float(dark[:third].mean() - dark[-third:].mean()) / white,
            float(q90 - q10) / white, corr]


def shape(small: np.ndarray) -> list[float]:
    """``SHAPE_NAMES`` of a ``uint8`` RGB image (read at ``SIZE``)."""
    x = small.astype(np.float32) / 255.0
    grey = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)
    hist = np.bincount(grey.ravel(), minlength=256).astype(np.float64)
    hist = hist[hist > 0] / hist.sum()
    g = grey.astype(np.float32) / 255.0
    local = float(np.sqrt(np.mean((g - cv2.GaussianBlur(g, (0, 0), 8)) ** 2)))
    corr = np.nan_to_num(np.corrcoef(x.reshape(-1, 3).T), nan=1.0)
    return [*_dark(small), float(-(hist * np.log2(hist)).sum()),
            float(np.abs(cv2.Laplacian(g, cv2.CV_32F)).mean()), local,
            local / (float(g.std()) + 1e-3), float(corr[0, 1]), float(corr[0, 2]),
            float(corr[1, 2]), *haze(small)]


def features(image: np.ndarray, base: np.ndarray | None = None) -> np.ndarray:
    """The estimator's statistics of ``image`` (``FEATURE_NAMES`` order), at ``SIZE`` px.

    Args:
        image: ``uint8`` RGB/RGBA image of any size.
        base: ``eval.naturalness.features(image)`` when the caller has it already.
    """
    small = np.ascontiguousarray(downscale(rgb_array(image, "image", grey=True)[..., :3], SIZE))
    base = naturalness.features(small) if base is None else base
    out: list[float] = []
    clips: list[float] = []
    for c in range(3):
        hist = cv2.calcHist([small], [c], None, [256], [0, 256]).ravel().astype(np.float64)
        cdf = np.cumsum(hist) / max(hist.sum(), 1.0)
        out += [float(np.searchsorted(cdf, q / 100.0)) / 255.0 for q in QUANTILES]
        clips += [float(cdf[0]), float(1.0 - cdf[254])]
    whites = [out[c * len(QUANTILES) + len(QUANTILES) - 1] for c in range(3)]
    stops = [math.log2(max(float(srgb_to_linear(np.float32(w))), 1e-3)) for w in whites]
    fixed = [_inverse(small, f) for f in FAMILIES]
    moves = [_rmse(f, small) for f in fixed]
    model = naturalness.load_model()
    pred = model.predict_log(base) if model is not None else np.zeros(2)
    own = [float(pred[0]), float(np.min(pred))]
    after: list[float] = []
    for img in fixed:      # the two-sided test: does the inverse look more natural?
        fb = naturalness.features(img)
        fp = model.predict_log(fb) if model is not None else np.zeros(2)
        after += [float(fp[0]), float(np.min(fp)), float(fp[0]) - own[0],
                  *(fb[_DELTA_INDEX] - base[_DELTA_INDEX]), *_dark(img)]
    return np.asarray([*base, *out, *clips, *stops, *moves, *own, *shape(small), *after],
                      np.float64)


def lowest(image: np.ndarray) -> np.ndarray:
    """Each channel's darkest value (0–1) at ``SIZE``."""
    small = downscale(rgb_array(image, "image", grey=True)[..., :3], SIZE)
    return small.reshape(-1, 3).min(axis=0).astype(np.float64) / 255.0


def fade_amount(image: np.ndarray, low: np.ndarray | None = None) -> float:
    """How much of the fade's inverse to apply: all of it unless a channel's darkest value
    lies above ``MAX_LIFT`` (then only as much as pulls it down by ``MAX_LIFT``)."""
    top = float(np.max(lowest(image) if low is None else low))
    return 1.0 if top <= MAX_LIFT else round(MAX_LIFT / top, 3)


# ----------------------------------------------------------------------------- the trees

@dataclass(frozen=True)
class Trees:
    """A gradient-boosted ensemble of binary trees: raw score = base + Σ leaf values."""

    base: float
    feature: np.ndarray      # (trees, nodes) int; -1 at leaves
    threshold: np.ndarray    # (trees, nodes) float; go left when x <= threshold
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    missing_left: np.ndarray

    @classmethod
    def from_json(cls, data: dict, n_features: int) -> Trees:
        """Build from the training script's JSON (checked, never executed)."""
        arrays = {k: np.asarray(data[k]) for k in
                  ("feature", "threshold", "left", "right", "value", "missing_left")}
        shape = arrays["feature"].shape
        if len(shape) != 2 or any(a.shape != shape for a in arrays.values()):
            raise ValueError("the trees' arrays have inconsistent shapes")
        feat, left, right = (arrays[k].astype(np.int64) for k in ("feature", "left", "right"))
        if feat.max() >= n_features or feat.min() < -1 or left.max() >= shape[1] or \
                right.max() >= shape[1] or min(left.min(), right.min()) < 0:
            raise ValueError("the trees point outside their nodes or features")
        value, thr = arrays["value"].astype(np.float64), arrays["threshold"].astype(np.float64)
        if not (np.isfinite(value).all() and np.isfinite(thr).all()):
            raise ValueError("the trees hold non-finite values")
        return cls(float(data["base"]), feat, thr, left, right, value,
                   arrays["missing_left"].astype(bool))

    def raw(self, x: np.ndarray) -> float:
        """The ensemble's raw score (log-odds) for one feature vector."""
        total = self.base
        for t in range(self.feature.shape[0]):
            node, depth = 0, 0
            while self.feature[t, node] >= 0 and depth < 64:
                v = x[self.feature[t, node]]
                go_left = self.missing_left[t, node] if math.isnan(v) else \
                    v <= self.threshold[t, node]
                node = int(self.left[t, node] if go_left else self.right[t, node])
                depth += 1
            total += float(self.value[t, node])
        return total


@dataclass(frozen=True)
class RestoreModel:
    """The two judges: is the photo degraded (calibrated), and is it faded or gained."""

    degraded: Trees
    faded: Trees
    platt: tuple[float, float]      # calibrated p = sigmoid(a * raw + b)
    info: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict) -> RestoreModel:
        """Build from ``eval/data/restore.json``."""
        if tuple(data.get("features", ())) != FEATURE_NAMES:
            raise ValueError("the restore model's feature list does not match this code's")
        n = len(FEATURE_NAMES)
        a, b = (float(v) for v in data["platt"])
        if not (math.isfinite(a) and math.isfinite(b)):
            raise ValueError("the restore model's calibration is not finite")
        return cls(Trees.from_json(data["degraded"], n), Trees.from_json(data["faded"], n),
                   (a, b), dict(data.get("info", {})))

    def probability(self, x: np.ndarray) -> float:
        """Calibrated probability that the photo is degraded."""
        a, b = self.platt
        return float(1.0 / (1.0 + math.exp(-(a * self.degraded.raw(x) + b))))


@lru_cache(maxsize=2)
def load_model(path: str | None = None) -> RestoreModel | None:
    """The trained model (``MODEL_PATH`` by default), or ``None`` when absent or unreadable."""
    where = Path(path) if path else MODEL_PATH
    try:
        return RestoreModel.from_json(json.loads(where.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as err:
        log.info("restore model unavailable (%s): %s", where.name, err)
        return None


@dataclass(frozen=True)
class Estimate:
    """What ``estimate`` found: the likely fault, its inverse and how sure it is."""

    family: str                 # "gains" (exposure / white balance) or "fade"
    probability: float          # calibrated P(the photo is degraded)
    moves: float                # RMSE (grey levels, at ``SIZE``) the inverse moves it
    stops: tuple[float, float, float]   # each channel's white point, stops below white
    operation: str = INVERSE_OP
    amount: float = 1.0         # the share of the inverse applied (``fade_amount``)
    bounded: bool = False       # the fade's stretch is bounded (``MAX_LIFT``)
    darkest: float = 0.0        # the darkest channel's darkest value (0–1)

    @property
    def explained(self) -> bool:
        """Whether the fault model can explain the photo: its darkest tone is within
        ``MAX_LIFT`` of black (gains keep black black; no fade lifts it further). A photo
        with no black of its own (fog, a cloud) is not a degraded copy of one with a
        black, so its inverse is never sure."""
        return self.darkest <= MAX_LIFT

    @property
    def params(self) -> dict[str, Any]:
        """The inverse's parameters for ``operation``."""
        return {**INVERSE_PARAMS[self.family], "amount": self.amount}

    def part(self, share: float) -> Estimate:
        """The same estimate with ``share`` (0–1) of its inverse."""
        return replace(self, amount=round(self.amount * min(max(share, 0.0), 1.0), 3))

    def describe(self) -> str:
        """The estimated fault in plain words ("under-exposed by 1.0 stop, cool cast")."""
        if self.family == "fade":
            return "faded (black and white lifted towards grey)" + (
                "; no black of its own, so the stretch is bounded" if self.bounded else "")
        r, g, b = self.stops
        exposure = max(self.stops)
        words = []
        if exposure < -0.15:
            words.append(f"under-exposed by {-exposure:.1f} stop{'s' if exposure < -1.05 else ''}")
        if b - r > 0.2:
            words.append("cool cast")
        elif r - b > 0.2:
            words.append("warm cast")
        elif abs(g - (r + b) / 2) > 0.15:
            words.append("green cast" if g > (r + b) / 2 else "magenta cast")
        return ", ".join(words) or "exposure or white balance off"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"family": self.family, "probability": round(self.probability, 3),
                "moves": round(self.moves, 2), "amount": self.amount,
                "darkest": round(self.darkest, 3), "fault": self.describe(),
                "operation": self.operation, "params": self.params}


def estimate(image: np.ndarray, model: RestoreModel | None = None,
             base: np.ndarray | None = None) -> Estimate | None:
    """The photo's likely global fault and its inverse (see the module doc).

    Args:
        image: ``uint8`` RGB/RGBA image of any size.
        model: default ``load_model()``.
        base: ``eval.naturalness.features(image)`` when the caller has it.

    Returns:
        An ``Estimate``, or ``None`` without a model.
    """
    model = model or load_model()
    if model is None:
        return None
    x = features(image, base)
    family = "fade" if model.faded.raw(x) > 0 else "gains"
    i = FEATURE_NAMES.index
    stops = tuple(float(x[i(f"{c}_white_stops")]) for c in "rgb")
    low = lowest(image)
    amount = fade_amount(image, low) if family == "fade" else 1.0
    return Estimate(family, model.probability(x), amount * float(x[i(f"moves_{family}")]),
                    stops, amount=amount, bounded=amount < 1.0, darkest=float(low.min()))
