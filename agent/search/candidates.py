"""Autopilot's candidates as pixels: one candidate applied at full resolution, with the
faces and other protected boxes kept (the search and its suggestions both use it)."""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from agent import executor
from agent.brain.perceiver import Candidate


@lru_cache(maxsize=16)
def _protect_alpha(shape: tuple[int, int], boxes: tuple[tuple[int, int, int, int], ...],
                   strength: float, scale: float) -> np.ndarray:
    """1 outside the boxes, ``strength`` inside soft ellipses fitted to them.

    Drawn and feathered at ≤ 256 px, then resized up (a smooth map needs no more).
    """
    h, w = shape
    s = min(1.0, 256 / max(h, w))
    sh, sw = max(1, round(h * s)), max(1, round(w * s))
    alpha = np.ones((sh, sw), np.float32)
    for x0, y0, x1, y1 in boxes:
        cx, cy = (x0 + x1) / 2 * scale * s, (y0 + y1) / 2 * scale * s
        ax, ay = (x1 - x0) / 2 * scale * s, (y1 - y0) / 2 * scale * s
        cv2.ellipse(alpha, (round(cx), round(cy)), (max(1, round(ax)), max(1, round(ay))),
                    0, 0, 360, float(strength), -1)
    alpha = cv2.GaussianBlur(alpha, (0, 0), max(1.0, 0.02 * max(sh, sw)))
    return cv2.resize(alpha, (w, h), interpolation=cv2.INTER_LINEAR)


def apply_candidate(image: np.ndarray, cand: Candidate, *, full_size: tuple[int, int]
                    | None = None, fast: bool = True, seed: int = 0) -> np.ndarray:
    """Run one proposed edit on ``image`` (any resolution), protecting people if asked.

    Args:
        image: ``uint8`` RGB/RGBA image.
        cand: the candidate (its ``protect`` boxes are in ``full_size`` pixels).
        full_size: (width, height) the boxes refer to; ``None`` = ``image``'s size.
        fast: use look-up tables / gain maps for the operations that allow it.
        seed: passed to the editor.

    Returns:
        The edited image, same shape as ``image``.
    """
    rgb = np.ascontiguousarray(image[..., :3])
    alpha_ch = image[..., 3:] if image.shape[2] == 4 else None
    out = executor.execute(rgb, cand.action, seed=seed, fast=fast).patch
    if cand.protect:
        scale = rgb.shape[1] / (full_size or (rgb.shape[1], rgb.shape[0]))[0]
        a = _protect_alpha(rgb.shape[:2], tuple(tuple(b) for b in cand.protect),
                           cand.protect_strength, scale)
        a3 = cv2.merge([a, a, a])
        base = rgb.astype(np.float32)
        out = cv2.add(base, cv2.multiply(cv2.subtract(out.astype(np.float32), base), a3))
        out = np.clip(out + 0.5, 0, 255).astype(np.uint8)
    if alpha_ch is not None:
        out = np.dstack([out, alpha_ch])
    return np.ascontiguousarray(out)
