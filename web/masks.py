"""Masks and boxes from the outside: the brush canvas, uploaded mask files, box text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from agent.session import SessionError
from pipelines.masks import MaskError, fit_mask, load_mask


def mask_from_editor(value: Any, shape: tuple[int, int]) -> np.ndarray | None:
    """Turn an image-editor value (background, brush layers, composite) into a native mask.

    The brush is painted on a downscaled canvas; the painted area (any layer pixel with
    alpha > 0) is scaled to the native ``(H, W)`` of the photo. A canvas of another aspect
    ratio is refused (``pipelines.masks.fit_mask``).

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
        if arr.ndim not in (2, 3) or arr.dtype == object or 0 in arr.shape:
            raise SessionError("The brush layer is not an image.")
        alpha = arr[..., 3] > 0 if arr.ndim == 3 and arr.shape[2] == 4 else arr.reshape(
            arr.shape[0], arr.shape[1], -1).max(axis=2) > 0
        if painted is not None and painted.shape != alpha.shape:
            raise SessionError("The brush layers differ in size.")
        painted = alpha if painted is None else painted | alpha
    if painted is None or not painted.any():
        return None
    try:
        mask = fit_mask(painted, shape, label="the brushed canvas", allow_empty=True)
    except MaskError as exc:
        raise SessionError(str(exc)) from None
    return mask if mask.any() else None


def load_mask_file(path: str | Path | None, shape: tuple[int, int]) -> np.ndarray | None:
    """Read a mask image (white = edit area) and scale it to ``shape``.

    A mask of another size is scaled only when its aspect ratio matches; one that marks
    nothing is refused with a message (see ``pipelines.masks``).

    Args:
        path: image file; ``None`` or empty gives ``None``.
        shape: native ``(height, width)``.

    Returns:
        A ``bool`` mask, or ``None`` when no file was given.
    """
    if not path:
        return None
    try:
        return load_mask(path, shape, label=Path(str(path)).name)
    except ValueError as exc:  # MaskError, ImageLoadError
        raise SessionError(str(exc)) from None


def box_mask(box: Any, shape: tuple[int, int]) -> np.ndarray:
    """A native ``(H, W)`` mask that is True inside ``[x0, y0, x1, y1]`` (clipped).

    Raises:
        SessionError: when the box leaves nothing inside the image.
    """
    height, width = shape
    try:
        x0, y0, x1, y1 = (int(v) for v in box)
    except (TypeError, ValueError) as exc:
        raise SessionError("The selection must be a box x0,y0,x1,y1.") from exc
    x0, x1 = max(0, min(x0, width)), max(0, min(x1, width))
    y0, y1 = max(0, min(y0, height)), max(0, min(y1, height))
    if x1 <= x0 or y1 <= y0:
        raise SessionError("The selected area lies outside the photo.")
    mask = np.zeros((height, width), bool)
    mask[y0:y1, x0:x1] = True
    return mask


def parse_bbox(text: str | None) -> tuple[int, int, int, int] | None:
    """Parse ``"x0,y0,x1,y1"`` (empty → None); raise ``SessionError`` when malformed."""
    if not text or not str(text).strip():
        return None
    parts = re.split(r"[,\s]+", str(text).strip()[:200])
    try:
        x0, y0, x1, y1 = (int(float(p)) for p in parts)
    except (ValueError, OverflowError) as exc:
        raise SessionError("The box must be four numbers: x0,y0,x1,y1.") from exc
    if x1 <= x0 or y1 <= y0:
        raise SessionError("The box must have x1 > x0 and y1 > y0.")
    if min(x0, y0) < 0 or max(x1, y1) > 1_000_000:
        raise SessionError("The box must lie inside the image (pixels from 0).")
    return x0, y0, x1, y1
