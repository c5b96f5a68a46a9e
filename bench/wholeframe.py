"""Whole-frame edits at native resolution: change transfer vs plain upscaling, on 4K renders.

A procedural 4K scene (smooth sky and hills, fine grain, bricks, thin wires, text) is
edited by a stand-in whole-frame editor at its ~1-MP working size: an analytic "evening"
look (a darkening ramp, warmer colour, softer contrast), plus what generative editors do
to a frame — a 1-px pixel shift and a slight re-synthesis blur. Because the look is
analytic, the same edit applied at native resolution is the ground truth.

Compared:
* ``upscale``: the edited working-size frame resized (bicubic) to native;
* ``transfer_affine`` / ``transfer_add``: ``pipelines.wholeframe.transfer_edit`` in its two
  modes (smooth local gain+offset, or smoothed difference, carried onto the source).

Measured: SSIM of the high-pass band (grey minus its Gaussian blur, sigma 2 px) against the
source's and against the ground truth's; PSNR against the ground truth; seams of the tiled
refine (feathered vs hard tiles) as the ratio of the mean gradient on tile edges to the
mean elsewhere (1.0 = invisible); seconds per transfer at 4K and at 20 MP.

Run: ``.venv/bin/python bench/wholeframe.py`` (add ``--quick`` for a 1080p smoke run).
The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np
from skimage.metrics import structural_similarity

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.editors.diffusion import working_dims  # noqa: E402
from pipelines.wholeframe import refine_tiled, tile_boxes, transfer_edit, working_copy  # noqa: E402


def render_scene(width: int, height: int, seed: int = 0) -> np.ndarray:
    """A procedural photo-like frame with detail at every scale."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    sky = np.stack([110 + 60 * y / height, 150 + 50 * y / height, 230 - 30 * y / height], -1)
    img = np.broadcast_to(sky, (height, width, 3)).copy()
    horizon = 0.55 * height + 0.08 * height * np.sin(x[0] / width * 7.0)
    ground = y > horizon[None, :]
    img[ground] = (70, 110, 50)
    for octave, amp in ((64, 18.0), (16, 10.0), (4, 8.0), (1, 10.0)):
        grid = rng.standard_normal((height // octave + 2, width // octave + 2, 1))
        noise = cv2.resize(grid.astype(np.float32), (width, height),
                           interpolation=cv2.INTER_CUBIC)
        img += amp * (noise[..., None] if noise.ndim == 2 else noise) * ground[..., None]
    # a brick wall
    x0, x1, y0, y1 = int(0.1 * width), int(0.35 * width), int(0.45 * height), int(0.8 * height)
    bricks = img[y0:y1, x0:x1]
    bricks[:] = (150, 70, 50)
    bh, bw = max(6, height // 120), max(12, width // 80)
    for row, top in enumerate(range(0, y1 - y0, bh)):
        bricks[top:top + 2] = 200
        shift = (row % 2) * bw // 2
        for left in range(shift, x1 - x0, bw):
            bricks[top:top + bh, left:left + 2] = 200
    # thin wires and text
    img = np.clip(img, 0, 255).astype(np.uint8)
    for k in range(6):
        cv2.line(img, (0, int(0.1 * height + 9 * k)), (width, int(0.2 * height + 13 * k)),
                 (30, 30, 30), 1, cv2.LINE_AA)
    scale = height / 900
    cv2.putText(img, "LOUPE 4K detail test 0123456789", (int(0.45 * width), int(0.9 * height)),
                cv2.FONT_HERSHEY_SIMPLEX, scale, (250, 250, 250), max(1, int(scale)), cv2.LINE_AA)
    grain = rng.normal(0, 3.0, img.shape).astype(np.float32)  # sensor grain
    return np.clip(img + grain, 0, 255).astype(np.uint8)


def evening(image: np.ndarray) -> np.ndarray:
    """The analytic global edit: darker towards the top, warmer, softer contrast."""
    h = image.shape[0]
    ramp = np.linspace(0.55, 0.95, h, dtype=np.float32)[:, None, None]
    warm = np.array([1.08, 0.93, 0.78], np.float32)
    out = image.astype(np.float32) * ramp * warm
    out = 128 + 0.85 * (out - 128)
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def editor_at_working_size(small: np.ndarray, artefacts: bool) -> np.ndarray:
    """The stand-in editor: the look, plus a 1-px shift and a re-synthesis blur."""
    out = evening(small)
    if artefacts:
        out = np.roll(out, (1, 1), axis=(0, 1))
        out = cv2.GaussianBlur(out, (0, 0), 0.7)
    return out


def _grey(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image[..., :3], cv2.COLOR_RGB2GRAY).astype(np.float32)


def high_pass(image: np.ndarray, sigma: float = 2.0) -> np.ndarray:
    grey = _grey(image)
    return grey - cv2.GaussianBlur(grey, (0, 0), sigma)


def hp_ssim(a: np.ndarray, b: np.ndarray) -> float:
    ha, hb = high_pass(a), high_pass(b)
    return float(structural_similarity(ha, hb, data_range=float(hb.max() - hb.min())))


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float32) - b.astype(np.float32)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def seam_ratio(result: np.ndarray, source: np.ndarray, tile: int, overlap: int) -> float:
    """Mean |horizontal gradient of (result - source)| on tile edges over elsewhere."""
    diff = _grey(result) - _grey(source)
    grad = np.abs(np.diff(diff, axis=1))
    height, width = source.shape[:2]
    edges = set()
    for x0, _, x1, _ in tile_boxes(height, width, tile, overlap):
        edges.update(e for e in (x0 - 1, x1 - 1) if 0 <= e < width - 1)
    cols = np.zeros(width - 1, bool)
    cols[sorted(edges)] = True
    return float(grad[:, cols].mean() / max(grad[:, ~cols].mean(), 1e-6))


def _drift_refine():
    count = [0]

    def refine(tile: np.ndarray) -> np.ndarray:
        """A tile pass whose brightness drifts per tile (what diffusion tiles do)."""
        count[0] += 1
        offset = 8 * ((count[0] % 3) - 1)
        return np.clip(tile.astype(np.int16) + offset, 0, 255).astype(np.uint8)

    return refine


def run(width: int, height: int, big: tuple[int, int] | None) -> dict:
    source = render_scene(width, height)
    truth = evening(source)
    size = working_dims(width, height, 1024 * 1024, 16)
    small = working_copy(source, size)
    report: dict = {"native": f"{width}x{height}", "working": f"{size[0]}x{size[1]}"}
    for artefacts in (False, True):
        edited = editor_at_working_size(small, artefacts)
        upscaled = cv2.resize(edited, (width, height), interpolation=cv2.INTER_CUBIC)
        started = time.perf_counter()
        affine = transfer_edit(source, small, edited)
        seconds = time.perf_counter() - started
        add = transfer_edit(source, small, edited, mode="add")
        results = {"upscale": upscaled, "transfer_affine": affine, "transfer_add": add}
        key = "shifted_blurred_editor" if artefacts else "ideal_editor"
        report[key] = {
            "hp_ssim_vs_source": {k: hp_ssim(v, source) for k, v in results.items()},
            "hp_ssim_vs_truth": {k: hp_ssim(v, truth) for k, v in results.items()},
            "psnr_vs_truth": {k: psnr(v, truth) for k, v in results.items()},
            "transfer_seconds": seconds,
        }
    tile, overlap = 1024, 128
    feathered = refine_tiled(source, _drift_refine(), tile=tile, overlap=overlap, strength=1.0)
    hard = refine_tiled(source, _drift_refine(), tile=tile, overlap=1, strength=1.0)
    report["tiled_refine_seam_ratio"] = {
        "feathered": seam_ratio(feathered, source, tile, overlap),
        "hard_tiles": seam_ratio(hard, source, tile, 1)}
    if big:
        frame = cv2.resize(source, big, interpolation=cv2.INTER_CUBIC)
        bsize = working_dims(big[0], big[1], 1024 * 1024, 16)
        bsmall = working_copy(frame, bsize)
        started = time.perf_counter()
        transfer_edit(frame, bsmall, evening(bsmall))
        report["transfer_seconds_20mp"] = time.perf_counter() - started
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1920x1080, no 20-MP timing")
    args = parser.parse_args(argv)
    if args.quick:
        report = run(1920, 1080, None)
    else:
        report = run(3840, 2160, (5460, 3640))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
