"""Masks that come from outside: a file, a brush canvas, an array of another size.

One rule for every entry point (web, API, CLIs): white (or opaque, in a mask with
transparency) marks the edit area; a mask of another size is scaled to the image only
when its aspect ratio matches (a downscaled canvas), else refused naming both sizes; a
mask that marks nothing is refused, since an empty brush is more likely a mistake than
a wish to edit the whole image.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from pipelines.config import get_settings
from pipelines.images import load_image


class MaskError(ValueError):
    """A mask that cannot be used; the message says why, for a person."""


EMPTY_MASK = ("marks nothing: brush the area to edit, or clear the mask to edit the whole "
              "image")


def marks(pixels: np.ndarray) -> np.ndarray:
    """The marked pixels of a mask image: alpha > 127 when it has transparency, else
    brightness > 127.

    Args:
        pixels: ``(H, W)`` or ``(H, W, C)`` array (``bool`` or ``uint8``).

    Returns:
        A ``bool`` (H, W) array.
    """
    arr = np.asarray(pixels)
    if arr.dtype == bool:
        return arr if arr.ndim == 2 else arr.any(axis=2)
    if arr.ndim == 2:
        return arr > 127
    if arr.shape[2] in (2, 4) and (arr[..., -1] < 255).any():
        return arr[..., -1] > 127
    return arr[..., : min(3, arr.shape[2])].max(axis=2) > 127


def aspect_matches(size: tuple[int, int], target: tuple[int, int]) -> bool:
    """Whether a ``(w, h)`` mask is a scaled copy of a ``(w, h)`` image: scaled to the
    image's width, its height is within 1 % (or one of its own pixels) of the image's."""
    (w, h), (tw, th) = size, target
    if min(w, h, tw, th) <= 0:
        return False
    return abs(h * tw / w - th) <= max(0.01 * th, tw / w)


def fit_mask(mask: Any, shape: tuple[int, int], *, label: str = "the mask",
             allow_empty: bool = False) -> np.ndarray:
    """``mask`` as a ``bool`` array of ``shape`` (H, W), scaled if its aspect matches.

    Args:
        mask: ``bool``/``uint8`` (H, W) or (H, W, C) array (see ``marks``).
        shape: the image's ``(height, width)``.
        label: the mask's name in messages.
        allow_empty: return an all-False mask instead of refusing it.

    Returns:
        The ``bool`` mask of the image's size.

    Raises:
        MaskError: a different aspect ratio, or (unless ``allow_empty``) no marked pixel.
    """
    arr = marks(mask)
    height, width = int(shape[0]), int(shape[1])
    if arr.shape != (height, width):
        if not aspect_matches((arr.shape[1], arr.shape[0]), (width, height)):
            raise MaskError(f"{label} is {arr.shape[1]}x{arr.shape[0]} but the image is "
                            f"{width}x{height}: give a mask of the image's size (or its "
                            "aspect ratio)")
        scaled = cv2.resize(arr.astype(np.uint8) * 255, (width, height),
                            interpolation=cv2.INTER_LINEAR)
        arr = scaled >= 128
    if not allow_empty and not arr.any():
        raise MaskError(f"{label} {EMPTY_MASK}")
    return arr


def load_mask(src: Any, shape: tuple[int, int], *, label: str | None = None) -> np.ndarray:
    """Read a mask image (path, bytes…) and fit it to ``shape`` (see ``fit_mask``).

    The file may hold at most four times the image's pixels (and never more than
    ``LOUPE_MAX_PIXELS``), checked from its header before decoding.

    Args:
        src: anything ``load_image`` reads.
        shape: the image's ``(height, width)``.
        label: the mask's name in messages (default: its file name).

    Returns:
        The ``bool`` mask of the image's size.
    """
    limit = min(get_settings().max_pixels, max(4 * int(shape[0]) * int(shape[1]), 4_000_000))
    loaded = load_image(src, max_pixels=limit)
    return fit_mask(loaded.pixels, shape, label=label or loaded.filename or "the mask")
