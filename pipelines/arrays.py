"""The one check of an image array that comes from outside: "a uint8 RGB image".

Every module that takes pixels from a caller (localisers, editors, critics, eval) calls
``rgb_array`` instead of writing its own test, so the rule and its message are the same
everywhere: ``<what> must be a uint8 RGB/RGBA array (height × width × 3 or 4), got …``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["describe", "rgb_array"]


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
        raise error(f"{what} must be a uint8 RGB/RGBA array (height × width × 3 or 4), "
                    f"got {describe(image)}")
    return np.ascontiguousarray(image if alpha else image[..., :3])
