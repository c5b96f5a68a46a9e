"""Metric speed at 12 MP: our SSIM vs scikit-image's, and LPIPS / ST-LPIPS.

Usage::

    .venv/bin/python bench/metrics_speed.py [--repeats 3] [--native-lpips]

The last printed line is one JSON object: ``ssim_ours_s``, ``ssim_skimage_s``,
``ssim_speedup``, ``ssim_abs_diff``, ``psnr_s``, ``otsu_s``, ``lpips_kind``,
``lpips_1024_s`` (and ``lpips_native_s`` with ``--native-lpips``), ``megapixels``.
Times are the best of ``--repeats`` runs (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval import metrics  # noqa: E402


def _pair(width: int = 4000, height: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    from skimage import data

    a = cv2.resize(data.astronaut(), (width, height), interpolation=cv2.INTER_CUBIC)
    rng = np.random.default_rng(0)
    b = np.clip(a.astype(np.int16) + rng.integers(-6, 7, a.shape, dtype=np.int16), 0, 255)
    b = b.astype(np.uint8)
    b[1000:1400, 1500:2300] = (250, 30, 30)
    return a, b


def _best(fn, repeats: int) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--native-lpips", action="store_true")
    args = parser.parse_args()
    from skimage.metrics import structural_similarity

    a, b = _pair()
    ours_s, ours = _best(lambda: metrics.ssim(a, b), args.repeats)
    ref_s, ref = _best(lambda: structural_similarity(a, b, channel_axis=2, data_range=255),
                       args.repeats)
    psnr_s, _ = _best(lambda: metrics.psnr(a, b), args.repeats)
    otsu_s, _ = _best(lambda: metrics.otsu_background(a, b), args.repeats)
    kind = metrics.perceptual_backend()
    metrics.lpips_distance(a[:256, :256], b[:256, :256])  # warm-up
    lp_s, _ = _best(lambda: metrics.lpips_distance(a, b, max_side=1024), args.repeats)
    result = {"megapixels": round(a.shape[0] * a.shape[1] / 1e6, 2),
              "ssim_ours_s": round(ours_s, 3), "ssim_skimage_s": round(ref_s, 3),
              "ssim_speedup": round(ref_s / ours_s, 2), "ssim_abs_diff": abs(ours - ref),
              "psnr_s": round(psnr_s, 3), "otsu_s": round(otsu_s, 3), "lpips_kind": kind,
              "lpips_1024_s": round(lp_s, 3)}
    if args.native_lpips:
        native_s, _ = _best(lambda: metrics.lpips_distance(a, b, max_side=None), 1)
        result["lpips_native_s"] = round(native_s, 3)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
