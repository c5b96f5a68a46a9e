"""Autopilot quality on photos degraded in known ways, and on photos that are already good.

Usage: ``python bench/autopilot_quality.py [--iterations 3 --simulations 20 --depth 3]``

Photos: scikit-image's astronaut, coffee, chelsea, rocket and camera (long side 384 px).
Degradations: under-exposure (−1.5 stops), over-exposure (+1.2 stops), a warm colour cast,
low contrast (×0.45 around the mean), Gaussian noise (σ = 12) and a tilt (4°, cropped to
fill). For every pair, Autopilot runs from the degraded photo; the bench counts how often
the evaluator score rises and how often the result moves closer to the undegraded original
(PSNR). For the tilt the reference is the original as a perfect fill-crop straighten must
frame it: a rotation cropped to fill loses the corners for good, and undoing it with the
editor's ``straighten`` (the same rotate-and-zoom-to-fill model as the degradation) zooms
once more, so the best reachable result is the original zoomed by the square of the fill
scale, without rotation. Both the degraded photo and the result are compared with that
framing (an untouched tilted photo stays as far from it as before; the plain PSNR against
the unzoomed original is printed too). On the undegraded photos it reports how much
Autopilot changes them (PSNR result vs input, steps taken). The last line is one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.search.autopilot_memory import AutopilotMemory  # noqa: E402
from agent.search.mcts import autopilot  # noqa: E402

PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "camera")


def load(name: str, size: int = 384) -> np.ndarray:
    """A scikit-image photo as RGB uint8 with long side ``size``."""
    from skimage import data

    img = getattr(data, name)()
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    img = np.ascontiguousarray(img[..., :3])
    h, w = img.shape[:2]
    s = size / max(h, w)
    return cv2.resize(img, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)


def _linear_gain(img: np.ndarray, stops: float) -> np.ndarray:
    x = img.astype(np.float32) / 255
    lin = np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4) * 2 ** stops
    lin = np.clip(lin, 0, 1)
    out = np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055)
    return (out * 255 + 0.5).astype(np.uint8)


def _tilt(img: np.ndarray, degrees: float) -> np.ndarray:
    h, w = img.shape[:2]
    a = np.radians(abs(degrees))
    scale = max((w * np.cos(a) + h * np.sin(a)) / w, (w * np.sin(a) + h * np.cos(a)) / h)
    m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), degrees, scale)
    return cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_CUBIC,
                          borderMode=cv2.BORDER_REFLECT)


def _fill_scale(w: int, h: int, degrees: float) -> float:
    a = np.radians(abs(degrees))
    return float(max((w * np.cos(a) + h * np.sin(a)) / w, (w * np.sin(a) + h * np.cos(a)) / h))


def straightened_reference(img: np.ndarray, degrees: float) -> np.ndarray:
    """The original as a perfect straighten of a ``degrees`` fill-crop tilt frames it.

    The tilt zooms by the fill scale s and the correcting rotation zooms by s again, so the
    ideal correction is the original zoomed by s² about its centre (no rotation).
    """
    h, w = img.shape[:2]
    m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), 0.0, _fill_scale(w, h, degrees) ** 2)
    return cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REFLECT)


TILT_DEGREES = 4.0

DEGRADATIONS = {
    "under_exposed": lambda im: _linear_gain(im, -1.5),
    "over_exposed": lambda im: _linear_gain(im, 1.2),
    "colour_cast": lambda im: np.clip(im * np.array([1.18, 1.0, 0.72]), 0, 255)
    .astype(np.uint8),
    "low_contrast": lambda im: np.clip((im.astype(np.float32) - im.mean()) * 0.45 + im.mean(),
                                       0, 255).astype(np.uint8),
    "noise": lambda im: np.clip(im + np.random.default_rng(0).normal(0, 12, im.shape), 0, 255)
    .astype(np.uint8),
    "tilt": lambda im: _tilt(im, TILT_DEGREES),
}


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """PSNR in dB of two same-size uint8 images."""
    return float(cv2.PSNR(a, b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--simulations", type=int, default=20)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--photos", default=",".join(PHOTOS))
    parser.add_argument("--size", type=int, default=384, help="long side of the photos")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    budget = dict(iterations=args.iterations, simulations=args.simulations, depth=args.depth)
    rows, start = [], time.perf_counter()
    for name in args.photos.split(","):
        clean = load(name, args.size)
        for kind, degrade in DEGRADATIONS.items():
            bad = degrade(clean)
            result = autopilot(bad, memory=AutopilotMemory(), **budget)
            ref = straightened_reference(clean, TILT_DEGREES) if kind == "tilt" else clean
            row = {"photo": name, "degradation": kind,
                   "score_before": round(result.score_before, 4),
                   "score_after": round(result.score_after, 4),
                   "psnr_before": round(psnr(bad, ref), 2),
                   "psnr_after": round(psnr(result.image, ref), 2),
                   "steps": [s.description for s in result.steps]}
            if kind == "tilt":
                row["plain_psnr_before"] = round(psnr(bad, clean), 2)
                row["plain_psnr_after"] = round(psnr(result.image, clean), 2)
            rows.append(row)
            print(f"{name:16s} {kind:14s} score {row['score_before']:.3f}->"
                  f"{row['score_after']:.3f}  PSNR {row['psnr_before']:5.2f}->"
                  f"{row['psnr_after']:5.2f}  {'; '.join(row['steps'])}", flush=True)
        good = autopilot(clean, memory=AutopilotMemory(), **budget)
        rows.append({"photo": name, "degradation": "none",
                     "score_before": round(good.score_before, 4),
                     "score_after": round(good.score_after, 4),
                     "psnr_vs_input": round(psnr(good.image, clean), 2) if good.steps else None,
                     "steps": [s.description for s in good.steps]})
        print(f"{name:16s} {'(good photo)':14s} score {good.score_before:.3f}->"
              f"{good.score_after:.3f}  steps: {'; '.join(rows[-1]['steps']) or 'none'}",
              flush=True)
    degraded = [r for r in rows if r["degradation"] != "none"]
    good_rows = [r for r in rows if r["degradation"] == "none"]
    per_kind = {k: {"score_up": sum(r["score_after"] > r["score_before"] for r in degraded
                                    if r["degradation"] == k),
                    "closer": sum(r["psnr_after"] > r["psnr_before"] for r in degraded
                                  if r["degradation"] == k),
                    "n": sum(r["degradation"] == k for r in degraded)}
                for k in DEGRADATIONS}
    changed = [r["psnr_vs_input"] for r in good_rows if r["psnr_vs_input"] is not None]
    print(json.dumps({
        "cases": len(degraded),
        "score_raised_rate": round(np.mean([r["score_after"] > r["score_before"]
                                            for r in degraded]), 3),
        "closer_psnr_rate": round(np.mean([r["psnr_after"] > r["psnr_before"]
                                           for r in degraded]), 3),
        "per_degradation": per_kind,
        "good_photos_unchanged": sum(r["psnr_vs_input"] is None for r in good_rows),
        "good_photos": len(good_rows),
        "good_photos_min_psnr_vs_input": round(min(changed), 2) if changed else None,
        "good_photos_mean_score_gain": round(float(np.mean(
            [r["score_after"] - r["score_before"] for r in good_rows])), 4),
        "budget": budget, "size": args.size, "seconds": round(time.perf_counter() - start, 1)}))


if __name__ == "__main__":
    main()
