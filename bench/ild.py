"""Benchmark Image Layer Decomposition at native resolution.

For a 5460×3640 and a 7680×4320 photo (skimage's ``coffee`` upscaled), it cuts a ~1-MP
elliptical target out with ``decompose``, edits the patch (warmer and brighter), and
pastes it back with ``compose``; it compares ``compose`` with a naive full-frame float
blend of the same edit (full-frame feathered alpha, full-frame float32 arithmetic).

Each size runs in a fresh subprocess so the memory figures of one do not leak into the
other. Memory is measured two ways during one decompose → edit → compose cycle:

* ``peak_mb``: the input image plus the peak of numpy allocations traced by
  ``tracemalloc`` (numpy reports its buffers to it; OpenCV's internal scratch does not);
* ``rss_peak_mb``: the process's peak resident set (VmHWM, reset through
  ``/proc/self/clear_refs`` before the cycle) minus the resident set before it, plus the
  image: what the cycle really added to the process, whatever allocated it (Linux only).

Usage: ``python bench/ild.py [--repeat 15]``. The last printed line is one JSON object
keyed ``"5460x3640"`` and ``"7680x4320"`` with ``decompose_ms``, ``compose_ms``
(medians), ``naive_ms`` (median; full-frame alpha + float blend), ``ratio``
(naive/compose), ``naive_blend_only_ms`` / ``ratio_blend_only`` (the float blend alone,
alpha precomputed), ``peak_mb``, ``rss_peak_mb``, ``image_mb`` and ``peak_ratio``
(peak_mb / image_mb).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.layers import compose, decompose, default_feather, feather_alpha  # noqa: E402

SIZES = ((5460, 3640), (7680, 4320))
TARGET_PIXELS = 1_000_000


def make_image(width: int, height: int) -> np.ndarray:
    """A real photo upscaled to ``width``×``height`` (uint8 RGB)."""
    from skimage import data

    return np.ascontiguousarray(cv2.resize(data.coffee(), (width, height),
                                           interpolation=cv2.INTER_CUBIC))


def make_mask(width: int, height: int) -> np.ndarray:
    """An ellipse of about one megapixel, left of centre."""
    mask = np.zeros((height, width), np.uint8)
    a, b = 650, 490  # π·a·b ≈ 1.0 MP
    cv2.ellipse(mask, (int(width * 0.4), int(height * 0.55)), (a, b), 15, 0, 360, 1, -1)
    return mask.astype(bool)


def edit(patch: np.ndarray) -> np.ndarray:
    """The patch edit: warmer and 15% brighter."""
    out = cv2.convertScaleAbs(patch, alpha=1.15, beta=4)
    out[..., 2] = cv2.convertScaleAbs(out[..., 2], alpha=0.9)
    return out


def naive_blend(image: np.ndarray, mask: np.ndarray, layer, patch: np.ndarray,
                feather: int, alpha: np.ndarray | None = None) -> np.ndarray:
    """The same edit with a full-frame feathered alpha and full-frame float arithmetic
    (``alpha`` given: only the float blend is done)."""
    if alpha is None:
        alpha = feather_alpha(mask, feather).astype(np.float32)[..., None] / 255.0
    edited = image.copy()
    edited[layer.slices] = patch
    out = edited.astype(np.float32) * alpha + image.astype(np.float32) * (1.0 - alpha)
    return np.rint(out).astype(np.uint8)


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def _rss_mb(field: str) -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _reset_rss_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def measure(width: int, height: int, repeat: int) -> dict:
    """Time and measure one size (run in its own process)."""
    image = make_image(width, height)
    mask = make_mask(width, height)
    image_mb = image.nbytes / 2**20
    layer = decompose(image, mask)
    patch = edit(layer.patch)
    feather = default_feather(layer)
    # warm-up (OpenCV thread pool, page faults)
    compose(image, layer, patch)

    decompose_ms = _median_ms(lambda: decompose(image, mask), repeat)
    compose_ms = _median_ms(lambda: compose(image, layer, patch), repeat)
    naive_ms = _median_ms(lambda: naive_blend(image, mask, layer, patch, feather),
                          max(3, repeat // 5))
    alpha = feather_alpha(mask, feather).astype(np.float32)[..., None] / 255.0
    naive_blend_ms = _median_ms(lambda a=alpha: naive_blend(image, mask, layer, patch, feather, a),
                                max(3, repeat // 5))
    del alpha
    naive_out = naive_blend(image, mask, layer, patch, feather)
    ours = compose(image, layer, patch)
    max_diff = int(np.abs(naive_out.astype(np.int16) - ours).max())
    del naive_out, ours

    rss_before = _rss_mb("VmRSS")
    can_reset = _reset_rss_peak()
    tracemalloc.start()
    cycle_layer = decompose(image, mask)
    result = compose(image, cycle_layer, edit(cycle_layer.patch))
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_peak = _rss_mb("VmHWM") if can_reset else None
    del result
    peak_mb = image_mb + traced_peak / 2**20
    rss_added = None if rss_peak is None or rss_before is None else rss_peak - rss_before
    return {
        "decompose_ms": decompose_ms,
        "compose_ms": compose_ms,
        "naive_ms": naive_ms,
        "ratio": round(naive_ms / compose_ms, 1),
        "naive_blend_only_ms": naive_blend_ms,
        "ratio_blend_only": round(naive_blend_ms / compose_ms, 1),
        "peak_mb": round(peak_mb, 1),
        "rss_peak_mb": None if rss_added is None else round(image_mb + rss_added, 1),
        "image_mb": round(image_mb, 1),
        "peak_ratio": round(peak_mb / image_mb, 2),
        "patch": f"{layer.width}x{layer.height}",
        "target_mp": round(int(mask.sum()) / 1e6, 3),
        "feather": feather,
        "max_diff_vs_naive": max_diff,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per measure")
    parser.add_argument("--one", help="measure only WxH in this process (internal)")
    args = parser.parse_args(argv)
    if args.one:
        width, height = (int(v) for v in args.one.split("x"))
        print(json.dumps(measure(width, height, args.repeat)))
        return 0
    results = {}
    for width, height in SIZES:
        key = f"{width}x{height}"
        proc = subprocess.run([sys.executable, __file__, "--one", key, "--repeat",
                               str(args.repeat)], capture_output=True, text=True, check=True)
        results[key] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{key}: {results[key]}", flush=True)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
