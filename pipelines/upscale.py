"""The enhancer: bring a generated crop from the model's working size to native resolution.

A generative editor works on the layer's crop at its model's native size (about 1 MP);
the crop it returns must go back into a box that may be several times larger. Agent Banana
restores it with a super-resolution step rather than plain resampling. Here the
``upscaler`` role decides how: ``lanczos`` (Lanczos-4 resampling) or a super-resolution
network shipped in a package (``pipelines.ncnn.PACKAGE_MODELS``, e.g. Real-ESRGAN x4plus).
The default is whichever restored downscaled photos more faithfully in ``bench/upscale.py``
(figures in BENCHMARKS.md). When the network cannot load, Lanczos serves and the log says
why. Shrinking (a crop larger than the box) always uses area averaging.
"""

from __future__ import annotations

import logging
from typing import Any

import cv2
import numpy as np

from pipelines.models import ModelUnavailable, get_manager

log = logging.getLogger(__name__)

#: input tile side for the network (memory stays bounded on large crops)
TILE = 256
#: context pixels around each tile (dropped after the network)
PAD = 16


def lanczos(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``image`` resized to ``size`` (w, h): Lanczos-4 up, area averaging down."""
    if image.shape[1] == size[0] and image.shape[0] == size[1]:
        return image
    shrink = size[0] * size[1] < image.shape[0] * image.shape[1]
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA if shrink
                      else cv2.INTER_LANCZOS4)


def restore(image: np.ndarray, size: tuple[int, int], *, method: str | None = None) -> np.ndarray:
    """Bring ``image`` (uint8 RGB/RGBA) to ``size`` (w, h) with the configured upscaler.

    Args:
        image: the generated crop at the model's working size.
        size: the native box size to fill.
        method: ``lanczos`` or a package model name; default: the ``upscaler`` role.

    Returns:
        A uint8 image of ``size`` with the input's channels (alpha is resampled).
    """
    width, height = size
    if width <= 0 or height <= 0:
        raise ValueError(f"empty target size {size}")
    if width <= image.shape[1] and height <= image.shape[0]:
        return lanczos(image, size)
    manager = get_manager()
    status = manager.role_status("upscaler", method)
    if status.backend == "lanczos" or not status.available:
        if not status.available:
            log.info("upscaler %s unavailable (%s): Lanczos instead", status.id, status.reason)
        return lanczos(image, size)
    try:
        loaded = manager.load("upscaler", status.id)
    except ModelUnavailable as exc:
        log.warning("upscaler unavailable (%s): Lanczos instead", exc.reason)
        return lanczos(image, size)
    rgb = np.ascontiguousarray(image[..., :3])
    while rgb.shape[1] < width or rgb.shape[0] < height:
        rgb = super_resolve(loaded.model, rgb, device=loaded.device)
    out = lanczos(rgb, size)
    if image.shape[2] == 4:
        out = np.dstack([out, lanczos(image[..., 3], size)])
    return out


def super_resolve(model: Any, rgb: np.ndarray, *, device: str = "cpu") -> np.ndarray:
    """One pass of a super-resolution ``model`` (its ``scale``) over ``rgb``, tile by tile.

    Each tile is run with ``PAD`` pixels of context (reflected at the borders) and only its
    centre is kept, so no seam shows between tiles.
    """
    import torch

    scale = int(model.scale)
    height, width = rgb.shape[:2]
    padded = cv2.copyMakeBorder(rgb, PAD, PAD, PAD, PAD, cv2.BORDER_REFLECT_101)
    out = np.zeros((height * scale, width * scale, 3), np.uint8)
    dtype = next(model.parameters()).dtype
    for y in range(0, height, TILE):
        for x in range(0, width, TILE):
            h, w = min(TILE, height - y), min(TILE, width - x)
            tile = padded[y:y + h + 2 * PAD, x:x + w + 2 * PAD]
            batch = torch.from_numpy(tile).to(device, dtype).permute(2, 0, 1)[None] / 255.0
            with torch.inference_mode():
                result = model(batch)[0].float().clamp(0, 1)
            result = (result * 255.0 + 0.5).byte().permute(1, 2, 0).cpu().numpy()
            core = result[PAD * scale:(PAD + h) * scale, PAD * scale:(PAD + w) * scale]
            out[y * scale:(y + h) * scale, x * scale:(x + w) * scale] = core
    return out
