"""Whole-frame edits at native resolution.

A global edit (style, relighting, season, "make it evening") runs through an editor on the
whole frame at its working size (about 1 MP). Upscaling that result would replace a 20-MP
photo's detail with a blurred 1-MP picture and carry the model's pixel shift along.
Instead ``transfer_edit`` carries only the low-frequency change — fitted between source
and edited at working size, as a smooth local gain and offset (or a smoothed difference) —
onto the native source, so every native detail stays (scaled as the edit scales it).
``refine_tiled`` then optionally runs a low-strength pass tile by tile over overlapping,
feathered tiles (no seams) for changes that need native-scale texture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import cv2
import numpy as np

from pipelines.arrays import rgb_array
from pipelines.editors.diffusion import working_dims

if TYPE_CHECKING:
    from pipelines.editors.base import Editor, EditRequest

#: default smoothing of the change, in working-size pixels
DEFAULT_SIGMA = 1.0
#: neighbourhood radius and regularisation of the affine fit (working-size pixels, levels²)
DEFAULT_RADIUS = 4
DEFAULT_EPS = 25.0
#: rows processed at a time at native size (bounds the float32 working memory)
STRIPE_ROWS = 1024


def _check(image: np.ndarray, what: str) -> None:
    rgb_array(image, what, alpha=True)


def working_copy(native: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The native frame at working size ``(w, h)`` (area filter), the editor's input."""
    _check(native, "native")
    return cv2.resize(native, size, interpolation=cv2.INTER_AREA)


def transfer_edit(source_native: np.ndarray, source_small: np.ndarray,
                  edited_small: np.ndarray, *, sigma: float | None = None,
                  mode: str = "affine", radius: int = DEFAULT_RADIUS,
                  eps: float = DEFAULT_EPS) -> np.ndarray:
    """Carry an edit made at working size onto the native-resolution source.

    Two models of the change, both fitted at working size and applied at native size:

    * ``affine`` (default): per channel and per neighbourhood, ``edited ≈ a·source + b``
      (a guided-filter fit whose gain ``a`` is pulled towards 1 where the source is flat);
      the smooth ``a`` and ``b`` are upsampled and applied to the native pixels, so a
      change of brightness, colour or contrast also scales the native detail as the edit
      would have.
    * ``add``: the smoothed difference ``edited − source`` is upsampled and added.

    Args:
        source_native: the full-resolution frame, ``uint8`` RGB/RGBA.
        source_small: the frame the editor saw (``working_copy`` of the native one).
        edited_small: the editor's result; resized to ``source_small``'s size if it
            differs.
        sigma: Gaussian smoothing of the change, in working-size pixels (``None``: 1.0);
            larger values carry only broader changes and hide more of the model's pixel
            shift, 0 carries the change as is.
        mode: ``affine`` or ``add``.
        radius: neighbourhood radius of the affine fit, in working-size pixels.
        eps: regularisation of the affine fit (in squared 8-bit levels); larger keeps the
            gain closer to 1.

    Returns:
        ``uint8`` image of ``source_native``'s shape (alpha, when present, is the source's).
    """
    _check(source_native, "source_native")
    _check(source_small, "source_small")
    _check(edited_small, "edited_small")
    sigma = DEFAULT_SIGMA if sigma is None else float(sigma)
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    if mode not in ("affine", "add"):
        raise ValueError(f"mode must be 'affine' or 'add', got {mode!r}")
    small_h, small_w = source_small.shape[:2]
    if edited_small.shape[:2] != (small_h, small_w):
        edited_small = cv2.resize(edited_small, (small_w, small_h),
                                  interpolation=cv2.INTER_AREA)
    src = source_small[..., :3].astype(np.float32)
    edit = edited_small[..., :3].astype(np.float32)
    if sigma > 0:
        edit = src + cv2.GaussianBlur(edit - src, (0, 0), sigmaX=sigma,
                                      borderType=cv2.BORDER_REFLECT)
    if mode == "affine":
        gain, offset = _affine_fit(src, edit, max(1, int(radius)), float(eps))
    else:
        gain, offset = None, edit - src
    height, width = source_native.shape[:2]
    out = source_native.copy()
    for y0, y1 in _stripes(height):
        rows = out[y0:y1, :, :3].astype(np.float32)
        if gain is not None:
            rows *= _upsample_rows(gain, width, height, y0, y1)
        rows += _upsample_rows(offset, width, height, y0, y1)
        np.clip(rows + 0.5, 0, 255, out=rows)
        out[y0:y1, :, :3] = rows.astype(np.uint8)
    return out


def _affine_fit(src: np.ndarray, edit: np.ndarray, radius: int,
                eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-pixel ``edit ≈ a·src + b`` over ``(2r+1)²`` windows, gain shrunk towards 1."""
    ksize = (2 * radius + 1, 2 * radius + 1)

    def box(z: np.ndarray) -> np.ndarray:
        return cv2.boxFilter(z, -1, ksize, borderType=cv2.BORDER_REFLECT)

    mean_s, mean_e = box(src), box(edit)
    var = box(src * src) - mean_s * mean_s
    cov = box(src * edit) - mean_s * mean_e
    gain = (cov + eps) / (np.maximum(var, 0) + eps)
    offset = mean_e - gain * mean_s
    return box(gain), box(offset)


def edit_whole_frame(native: np.ndarray, editor: Editor, request: EditRequest, *,
                     area: int | None = None, sigma: float | None = None,
                     mode: str = "affine") -> np.ndarray:
    """A global edit of a native-resolution frame through ``editor`` at its working size.

    The frame is downsampled (aspect kept) to about ``area`` pixels — the editor's own
    ``working_area`` by default, 1 MP for editors without one — edited there with a
    whole-frame mask, and the change is carried back with ``transfer_edit``.

    Args:
        native: ``uint8`` RGB/RGBA frame at full resolution.
        editor: any ``Editor``; generative ones may return their working size.
        request: the edit (a global operation).
        area: working pixel count; None uses the editor's.
        sigma: see ``transfer_edit``.
        mode: see ``transfer_edit``.

    Returns:
        The edited frame at native resolution.
    """
    _check(native, "native")
    area = int(area or getattr(editor, "working_area", 0) or 1024 * 1024)
    multiple = int(getattr(editor, "multiple", 16))
    height, width = native.shape[:2]
    if width * height <= area:
        return editor.edit(native, np.ones((height, width), bool), request)
    size = working_dims(width, height, area, multiple)
    small = working_copy(native, size)
    edited = editor.edit(small, np.ones(small.shape[:2], bool), request)
    return transfer_edit(native, small, edited, sigma=sigma, mode=mode)


def _stripes(height: int) -> Iterator[tuple[int, int]]:
    for y0 in range(0, height, STRIPE_ROWS):
        yield y0, min(height, y0 + STRIPE_ROWS)


def _upsample_rows(delta: np.ndarray, width: int, height: int, y0: int, y1: int) -> np.ndarray:
    """Rows ``y0:y1`` of ``delta`` bilinearly upsampled to ``(width, height)``."""
    small_h, small_w = delta.shape[:2]
    # pixel-centre mapping, as cv2.resize does
    ys = (np.arange(y0, y1, dtype=np.float32) + 0.5) * (small_h / height) - 0.5
    xs = (np.arange(width, dtype=np.float32) + 0.5) * (small_w / width) - 0.5
    map_x = np.broadcast_to(xs[None, :], (y1 - y0, width)).astype(np.float32)
    map_y = np.broadcast_to(ys[:, None], (y1 - y0, width)).astype(np.float32)
    return cv2.remap(delta, map_x, map_y, interpolation=cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)


def tile_boxes(height: int, width: int, tile: int, overlap: int) -> list[tuple[int, int, int, int]]:
    """Overlapping tiles ``(x0, y0, x1, y1)`` covering a ``height``×``width`` frame.

    Args:
        height: frame height.
        width: frame width.
        tile: tile side (clipped to the frame).
        overlap: pixels shared by neighbours (less than ``tile``).

    Returns:
        The boxes, row by row; the last row/column is shifted to end at the frame's edge.
    """
    if tile <= 0 or overlap < 0 or overlap >= tile:
        raise ValueError(f"need tile > overlap >= 0, got tile={tile} overlap={overlap}")

    def starts(size: int) -> list[int]:
        if size <= tile:
            return [0]
        step = tile - overlap
        out = list(range(0, size - tile, step))
        return out + [size - tile]

    th, tw = min(tile, height), min(tile, width)
    return [(x, y, x + tw, y + th) for y in starts(height) for x in starts(width)]


def _window(h: int, w: int, overlap: int, box: tuple[int, int, int, int],
            frame: tuple[int, int]) -> np.ndarray:
    """Blend weight of one tile: a raised-cosine ramp over the overlap on inner edges."""
    def ramp(n: int, lo_inner: bool, hi_inner: bool) -> np.ndarray:
        weight = np.ones(n, np.float32)
        k = min(overlap, n // 2)
        if k > 0:
            edge = 0.5 - 0.5 * np.cos(np.pi * (np.arange(k, dtype=np.float32) + 0.5) / k)
            if lo_inner:
                weight[:k] = edge
            if hi_inner:
                weight[-k:] = np.minimum(weight[-k:], edge[::-1])
        return weight

    x0, y0, x1, y1 = box
    height, width = frame
    wy = ramp(h, y0 > 0, y1 < height)
    wx = ramp(w, x0 > 0, x1 < width)
    return np.maximum(wy[:, None] * wx[None, :], 1e-4)


def refine_tiled(image: np.ndarray, refine: Callable[[np.ndarray], np.ndarray], *,
                 tile: int = 1024, overlap: int = 128, strength: float = 0.3) -> np.ndarray:
    """Run ``refine`` over overlapping tiles and blend them with feathered seams.

    Args:
        image: ``uint8`` RGB/RGBA frame (typically ``transfer_edit``'s result).
        refine: tile → refined tile of the same shape (e.g. an img2img pass).
        tile: tile side in pixels.
        overlap: overlap between neighbouring tiles; the blend ramps across it.
        strength: how much of the refinement is kept (0 none … 1 all of it).

    Returns:
        The refined frame, same shape; alpha is kept from ``image``.
    """
    _check(image, "image")
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength must be in [0, 1], got {strength}")
    height, width = image.shape[:2]
    acc = np.zeros((height, width, 3), np.float32)
    weight = np.zeros((height, width, 1), np.float32)
    for box in tile_boxes(height, width, tile, overlap):
        x0, y0, x1, y1 = box
        patch = image[y0:y1, x0:x1]
        refined = np.asarray(refine(patch.copy()))
        if refined.shape[:2] != patch.shape[:2] or refined.dtype != np.uint8:
            raise ValueError(f"refine returned {refined.dtype} {refined.shape} for a "
                             f"{patch.shape} tile")
        w = _window(y1 - y0, x1 - x0, overlap, box, (height, width))[..., None]
        acc[y0:y1, x0:x1] += refined[..., :3].astype(np.float32) * w
        weight[y0:y1, x0:x1] += w
    blended = acc / weight
    base = image[..., :3].astype(np.float32)
    mixed = base + strength * (blended - base)
    out = image.copy()
    out[..., :3] = np.clip(mixed + 0.5, 0, 255).astype(np.uint8)
    return out
