"""Which restores a generated crop better: Lanczos or a super-resolution network?

The enhancer (``pipelines.upscale.restore``) brings a crop from the model's working size
back to its native box. This bench measures each method on the same task with ground truth:
take a native crop, shrink it by the factor (area averaging, as a model's working copy is
made), restore it to the native size, and compare with the original (PSNR and SSIM, RGB).

Crops come from two sets of photos that never mix: ``tune`` (scikit-image's astronaut,
coffee, chelsea) decides the default, ``heldout`` (rocket, immunohistochemistry and a
rendered HDD background) only reports. Nothing is tuned beyond the choice itself.

Run: ``.venv/bin/python bench/upscale.py`` (``--factors 2 4``, ``--methods lanczos
realesrgan-x4plus …``, ``--crop 96``, ``--per-image 3``). The last printed line is one JSON
object: ``{"factors", "crop", "methods", "results": {set: {factor: {method: {"psnr",
"ssim", "s_per_mp"}}}}, "best_tune"}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval.hdd import SceneState, render  # noqa: E402
from pipelines.upscale import restore  # noqa: E402

SETS = {"tune": ("astronaut", "coffee", "chelsea"),
        "heldout": ("rocket", "immunohistochemistry", "hdd-render")}


def photo(name: str) -> np.ndarray:
    """A scikit-image photo, or an HDD background rendered at 768 px."""
    if name == "hdd-render":
        return render(SceneState(background=7), (768, 768))
    from skimage import data

    image = getattr(data, name)()
    return image[..., :3] if image.ndim == 3 else np.stack([image] * 3, axis=-1)


def crops(image: np.ndarray, side: int, count: int, seed: int) -> list[np.ndarray]:
    """``count`` textured crops of ``side`` pixels (the most detailed of 4×count tries)."""
    rng = np.random.default_rng(seed)
    height, width = image.shape[:2]
    tries = []
    for _ in range(4 * count):
        y, x = int(rng.integers(0, height - side)), int(rng.integers(0, width - side))
        crop = image[y:y + side, x:x + side]
        detail = float(cv2.Laplacian(cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY), cv2.CV_32F).var())
        tries.append((detail, crop))
    tries.sort(key=lambda t: -t[0])
    return [np.ascontiguousarray(c) for _, c in tries[:count]]


def score(truth: np.ndarray, restored: np.ndarray) -> tuple[float, float]:
    """PSNR (dB) and SSIM of ``restored`` against ``truth``."""
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    return (float(peak_signal_noise_ratio(truth, restored, data_range=255)),
            float(structural_similarity(truth, restored, channel_axis=2, data_range=255)))


def run(methods: list[str], factors: list[int], side: int, per_image: int) -> dict[str, Any]:
    """PSNR/SSIM/speed per set, factor and method (means over the crops)."""
    results: dict[str, Any] = {}
    for set_name, names in SETS.items():
        results[set_name] = {}
        samples = [c for i, n in enumerate(names) for c in crops(photo(n), side, per_image, i)]
        for factor in factors:
            row: dict[str, Any] = {}
            for method in methods:
                psnrs, ssims, seconds, pixels = [], [], 0.0, 0
                for truth in samples:
                    small = cv2.resize(truth, (side // factor, side // factor),
                                       interpolation=cv2.INTER_AREA)
                    started = time.perf_counter()
                    restored = restore(small, (side, side), method=method)
                    seconds += time.perf_counter() - started
                    pixels += side * side
                    p, s = score(truth, restored)
                    psnrs.append(p)
                    ssims.append(s)
                row[method] = {"psnr": round(float(np.mean(psnrs)), 3),
                               "ssim": round(float(np.mean(ssims)), 4),
                               "s_per_mp": round(seconds / (pixels / 1e6), 2),
                               "crops": len(samples)}
                print(json.dumps({"set": set_name, "factor": factor, "method": method,
                                  **row[method]}), file=sys.stderr)
            results[set_name][str(factor)] = row
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--methods", nargs="+",
                        default=["lanczos", "realesrgan-x4plus", "realesr-animevideov3-x2"])
    parser.add_argument("--factors", nargs="+", type=int, default=[2, 4])
    parser.add_argument("--crop", type=int, default=96, help="native crop side (pixels)")
    parser.add_argument("--per-image", type=int, default=3, help="crops per photo")
    args = parser.parse_args(argv)
    import torch

    torch.manual_seed(0)
    results = run(args.methods, args.factors, args.crop, args.per_image)
    tune = results["tune"]
    mean_psnr = {m: float(np.mean([tune[str(f)][m]["psnr"] for f in args.factors]))
                 for m in args.methods}
    print(json.dumps({"factors": args.factors, "crop": args.crop, "methods": args.methods,
                      "results": results, "best_tune": max(mean_psnr, key=mean_psnr.get)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
