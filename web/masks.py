"""Masks and boxes from the outside: the brush canvas, uploaded mask files, box text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from agent.session import SessionError
from pipelines.images import load_image


def mask_from_editor(value: Any, shape: tuple[int, int]) -> np.ndarray | None:
    """Turn an image-editor value (background, brush layers, composite) into a native mask.

    The brush is painted on a downscaled canvas; the painted area (any layer pixel with
    alpha > 0) is scaled to the native ``(H, W)`` of the photo.

    Args:
        value: ``{"background", "layers", "composite"}`` with numpy arrays (or None).
        shape: native ``(height, width)``.

    Returns:
        A ``bool`` mask of ``shape``, or ``None`` when nothing was painted.
    """
    if not isinstance(value, dict):
        return None
    painted = None
    for layer in value.get("layers") or []:
        if layer is None:
            continue
        arr = np.asarray(layer)
        alpha = arr[..., 3] > 0 if arr.ndim == 3 and arr.shape[2] == 4 else arr.reshape(
            arr.shape[0], arr.shape[1], -1).max(axis=2) > 0
        painted = alpha if painted is None else painted | alpha
    if painted is None or not painted.any():
        return None
    h, w = shape
    scaled = cv2.resize(painted.astype(np.uint8) * 255, (w, h), interpolation=cv2.INTER_LINEAR)
    mask = scaled >= 128
    return mask if mask.any() else None


def load_mask_file(path: str | Path | None, shape: tuple[int, int]) -> np.ndarray | None:
    """Read a mask image (white = edit area, any size) and scale it to ``shape``.

    Args:
        path: image file; ``None`` or empty gives ``None``.
        shape: native ``(height, width)``.

    Returns:
        A ``bool`` mask or ``None`` when the file is empty of marks.
    """
    if not path:
        return None
    pixels = load_image(path).pixels
    marks = pixels[..., 3] > 0 if pixels.shape[2] == 4 and pixels[..., 3].min() < 255 \
        else pixels[..., :3].max(axis=2) > 127
    return mask_from_editor({"layers": [np.dstack([marks] * 3).astype(np.uint8)]}, shape)


def parse_bbox(text: str | None) -> tuple[int, int, int, int] | None:
    """Parse ``"x0,y0,x1,y1"`` (empty → None); raise ``SessionError`` when malformed."""
    if not text or not str(text).strip():
        return None
    parts = re.split(r"[,\s]+", str(text).strip())
    try:
        x0, y0, x1, y1 = (int(float(p)) for p in parts)
    except ValueError as exc:
        raise SessionError("The box must be four numbers: x0,y0,x1,y1.") from exc
    if x1 <= x0 or y1 <= y0:
        raise SessionError("The box must have x1 > x0 and y1 > y0.")
    return x0, y0, x1, y1
