"""The one check of an image array that comes from outside: "a uint8 RGB image".

Every module that takes pixels from a caller (localisers, editors, critics, eval) calls
``rgb_array`` instead of writing its own test, so the rule and its message are the same
everywhere: ``<what> must be uint8 RGB/RGBA (an H×W×3 or H×W×4 array), got …``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["channel_max", "channel_min", "describe", "rgb_array"]


def describe(value: object) -> str:
    """A short description of what a caller passed: ``uint16 (10, 10, 3)``, ``list``."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype} {tuple(value.shape)}"
    return type(value).__name__


def rgb_array(image: object, what: str = "image", *, error: type[Exception] = ValueError,
              alpha: bool = False, grey: bool = False) -> np.ndarray:
    """Check ``image`` is a non-empty ``uint8`` HWC RGB/RGBA array.

    Args:
        image: the caller's array.
        what: how the message names it ("image", "the mask's image", "patch").
        error: the exception class raised (a module's own ``ValueError`` subclass).
        alpha: keep a fourth (alpha) channel instead of dropping it.
        grey: accept a 2-D grey array and stack it to three channels.

    Returns:
        A C-contiguous ``uint8`` array with 3 channels (4 when ``alpha`` and present).

    Raises:
        error: with one message naming ``what`` and what was passed instead.
    """
    if isinstance(image, np.ndarray) and grey and image.ndim == 2:
        image = np.dstack([image] * 3)
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 \
            or image.shape[2] not in (3, 4) or min(image.shape[:2]) < 1:
        raise error(f"{what} must be uint8 RGB/RGBA (an H×W×3 or H×W×4 array), "
                    f"got {describe(image)}")
    return np.ascontiguousarray(image if alpha else image[..., :3])


def channel_max(image: np.ndarray) -> np.ndarray:
    """Each pixel's largest channel of an HWC array (``image.max(axis=2)``, same values):
    element-wise over the channel planes, ~30× numpy's reduction along a 3-long axis."""
    out = image[..., 0].copy()
    for c in range(1, image.shape[2]):
        np.maximum(out, image[..., c], out=out)
    return out


def channel_min(image: np.ndarray) -> np.ndarray:
    """Each pixel's smallest channel of an HWC array (``image.min(axis=2)``, same values)."""
    out = image[..., 0].copy()
    for c in range(1, image.shape[2]):
        np.minimum(out, image[..., c], out=out)
    return out
