"""Image Layer Decomposition (ILD): edit a cut-out of the image, never the whole frame.

``decompose`` crops the mask's box with an adaptive context margin (DLEBench's λ(s)
rule), ``compose`` pastes an edited patch back through a feathered alpha that is exactly
zero farther than the feather width from the mask, so every such pixel stays
bit-identical to the input. The patch may come back at another size (an editor's working
size); it is resized inside the box only, the rest of the frame is never resampled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from pipelines.arrays import rgb_array

Box = tuple[int, int, int, int]

#: λ(s) breakpoints from DLEBench: small targets get a large relative context.
LAMBDA_SMALL, LAMBDA_LARGE = 6.0, 0.3
SIZE_SMALL, SIZE_LARGE = 32.0, 256.0


@dataclass(frozen=True)
class Layer:
    """One cut-out of an image.

    Attributes:
        bbox: ``(x0, y0, x1, y1)`` of the patch in the full-resolution image.
        patch: the image pixels inside ``bbox`` (a copy, ``uint8`` HWC).
        mask: ``bool`` array of the patch's height and width, ``True`` on the target.
    """

    bbox: Box
    patch: np.ndarray
    mask: np.ndarray

    @property
    def width(self) -> int:
        return self.bbox[2] - self.bbox[0]

    @property
    def height(self) -> int:
        return self.bbox[3] - self.bbox[1]

    @property
    def slices(self) -> tuple[slice, slice]:
        """``(rows, cols)`` slices that select the patch in the full image."""
        x0, y0, x1, y1 = self.bbox
        return slice(y0, y1), slice(x0, x1)


def context_lambda(s: float) -> float:
    """DLEBench's adaptive context ratio λ(s) for a target whose box has short side ``s``.

    6.0 at or below 32 px, 0.3 at or above 256 px, linear in between.
    """
    if s <= SIZE_SMALL:
        return LAMBDA_SMALL
    if s >= SIZE_LARGE:
        return LAMBDA_LARGE
    t = (s - SIZE_SMALL) / (SIZE_LARGE - SIZE_SMALL)
    return LAMBDA_SMALL + t * (LAMBDA_LARGE - LAMBDA_SMALL)


def mask_bbox(mask: np.ndarray) -> Box | None:
    """Tight box ``(x0, y0, x1, y1)`` of the ``True`` pixels, or ``None`` for an empty mask."""
    points = np.ascontiguousarray(mask if mask.dtype == bool else mask != 0).view(np.uint8)
    x, y, w, h = cv2.boundingRect(points)  # box of the non-zero pixels, no copy
    if w == 0 or h == 0:
        return None
    return int(x), int(y), int(x + w), int(y + h)


def expand_box(box: Box, image_size: tuple[int, int], *, context: float | None = None,
               multiple: int = 1) -> Box:
    """Grow ``box`` by ``context · s`` on each side (λ(s) when ``context`` is None).

    Args:
        box: the target's tight box.
        image_size: ``(width, height)`` of the full image; the result is clamped to it.
        context: fixed ratio instead of λ(s); 0 keeps the tight box.
        multiple: round the box's width and height up to this multiple (8/16/64 for
            editors), growing around the target and shifting inside the image; where the
            image itself is smaller than the rounded size, the box covers the image.

    Returns:
        The expanded box; it always contains ``box``.
    """
    x0, y0, x1, y1 = box
    width, height = image_size
    s = min(x1 - x0, y1 - y0)
    ratio = context_lambda(s) if context is None else float(context)
    if ratio < 0:
        raise ValueError(f"context must be >= 0, got {context}")
    pad = int(math.ceil(ratio * s))
    x0, y0 = max(0, x0 - pad), max(0, y0 - pad)
    x1, y1 = min(width, x1 + pad), min(height, y1 + pad)
    if multiple > 1:
        x0, x1 = _round_span(x0, x1, width, multiple)
        y0, y1 = _round_span(y0, y1, height, multiple)
    return x0, y0, x1, y1


def _round_span(a: int, b: int, limit: int, multiple: int) -> tuple[int, int]:
    size = min(limit, int(math.ceil((b - a) / multiple)) * multiple)
    grow = size - (b - a)
    a = max(0, a - grow // 2)
    b = a + size
    if b > limit:
        a, b = limit - size, limit
    return a, b


def decompose(image: np.ndarray, mask: np.ndarray | Sequence[np.ndarray], *,
              context: float | None = None, multiple: int = 1) -> Layer | list[Layer]:
    """Cut the layer(s) around ``mask`` out of ``image``.

    Args:
        image: ``uint8`` HWC image.
        mask: ``bool`` (H, W) mask, or a sequence of masks (or an (N, H, W) stack) for
            several targets (one Layer each, in the same order).
        context: fixed context ratio; ``None`` uses DLEBench's λ(s).
        multiple: round the patch size to this multiple (see ``expand_box``).

    Returns:
        A ``Layer`` for one mask, a list of them for a sequence.

    Raises:
        ValueError: a mask is empty or does not match the image's size.
    """
    if not isinstance(mask, np.ndarray) or mask.ndim == 3 and mask.shape[1:] == image.shape[:2]:
        return [decompose(image, m, context=context, multiple=multiple) for m in mask]
    mask = _check_mask(image, mask)
    tight = mask_bbox(mask)
    if tight is None:
        raise ValueError("the mask is empty: nothing is marked to edit")
    height, width = image.shape[:2]
    bbox = expand_box(tight, (width, height), context=context, multiple=multiple)
    x0, y0, x1, y1 = bbox
    return Layer(bbox=bbox, patch=image[y0:y1, x0:x1].copy(), mask=mask[y0:y1, x0:x1].copy())


def feather_for(mask: np.ndarray) -> int:
    """Feather width in pixels for a target: about 2% of its short side, 2 to 24 px."""
    tight = mask_bbox(mask)
    if tight is None:
        return 2
    s = min(tight[2] - tight[0], tight[3] - tight[1])
    return int(min(24, max(2, round(0.02 * s))))


def default_feather(layer: Layer) -> int:
    """The feather width ``compose`` uses for a layer (``feather_for`` its mask)."""
    return feather_for(layer.mask)


#: OpenCV's 5×5 chamfer distance never underestimates the Euclidean distance by more than
#: this factor (its longest step costs 2.1969 for a true √5 = 2.2361), so an alpha that
#: ends at ``_CHAMFER_SAFETY · feather`` of chamfer distance is exactly 0 farther than
#: ``feather`` of true distance.
_CHAMFER_SAFETY = 0.98


def feather_alpha(mask: np.ndarray, feather: int, inner: int = 0) -> np.ndarray:
    """Soft alpha (``uint8`` 0..255) that is 255 on ``mask`` and exactly 0 farther than
    ``feather`` pixels (Euclidean) from it: a Gaussian falloff of the distance to the
    mask (the normalised Gaussian CDF, from 255 at the mask's edge to 0 at ``feather``).
    With ``inner`` the fade starts that many pixels inside the mask instead (255 only
    deeper than ``inner``): a wider, softer edge that still ends at ``feather`` outside.

    Args:
        mask: ``bool`` (H, W) mask.
        feather: feather width in pixels outside the mask; 0 or less gives the hard mask
            (faded inside when ``inner`` > 0).
        inner: how far inside the mask the fade begins (0: at its edge).

    Returns:
        ``uint8`` (H, W) alpha.
    """
    feather = int(feather)
    mask_u8 = np.ascontiguousarray(mask, dtype=bool).view(np.uint8)
    if int(inner) > 0 and mask_u8.any():
        return _two_sided_alpha(mask_u8, max(0, feather), int(inner))
    if feather <= 0 or not mask_u8.any():
        return mask_u8 * np.uint8(255)
    outside = mask_u8 ^ np.uint8(1)  # zero on the mask: distances are to it
    distance = cv2.distanceTransform(outside, cv2.DIST_L2, 5)
    scale = 250.0 / (feather * _CHAMFER_SAFETY)
    index = cv2.convertScaleAbs(distance, alpha=scale)  # round(d · scale), saturated
    return cv2.LUT(index, _falloff_table(feather))


@lru_cache(maxsize=64)
def _falloff_table(feather: int) -> np.ndarray:
    """256-entry LUT from the quantised distance index to alpha for ``feather_alpha``."""
    reach = feather * _CHAMFER_SAFETY
    scale = 250.0 / reach
    sigma = 0.25  # of the feather width: the fade is a ±2σ Gaussian CDF
    lo, hi = _phi(-0.5 / sigma), _phi(0.5 / sigma)
    table = np.zeros(256, np.uint8)
    cutoff = int(math.floor(reach * scale)) - 1  # index < cutoff  ⇒  d < reach
    for i in range(min(cutoff, 256)):
        t = i / scale / reach
        table[i] = round(255 * (_phi((0.5 - t) / sigma) - lo) / (hi - lo))
    table[0] = 255
    return table


def _two_sided_alpha(mask_u8: np.ndarray, feather: int, inner: int) -> np.ndarray:
    """``feather_alpha`` with a fade from ``inner`` px inside the mask to ``feather`` px
    outside it (the same Gaussian CDF over the whole span); exactly 0 wherever the
    chamfer distance outside reaches ``_CHAMFER_SAFETY · feather`` (so farther than
    ``feather`` Euclidean), exactly 255 deeper than ``inner``."""
    # the erf pipelines.embeddings uses; imported here: only a retry's wider edge needs it
    from scipy.special import erf

    outside = cv2.distanceTransform(mask_u8 ^ np.uint8(1), cv2.DIST_L2, 5)
    depth = cv2.distanceTransform(mask_u8, cv2.DIST_L2, 5)   # 1 on the mask's edge pixels
    reach = feather * _CHAMFER_SAFETY
    # the signed distance to the mask's border, which runs between pixel centres: -0.5
    # on the mask's edge pixels, +0.5 on the pixels just outside
    signed = outside - depth + np.where(mask_u8 != 0, np.float32(0.5), np.float32(-0.5))
    t = (signed + np.float32(inner)) / np.float32(inner + reach)
    sigma = 0.25
    lo, hi = _phi(-0.5 / sigma), _phi(0.5 / sigma)
    z = (0.5 - np.clip(t, 0.0, 1.0)) / (sigma * math.sqrt(2.0))
    phi = 0.5 * (1.0 + erf(z))
    alpha = np.rint(255.0 * (phi - lo) / (hi - lo))
    alpha = np.clip(alpha, 0, 255).astype(np.uint8)
    alpha[(mask_u8 == 0) & (outside >= reach)] = 0
    alpha[(mask_u8 != 0) & (depth > inner)] = 255
    return alpha


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def compose(image: np.ndarray, layer: Layer, patch: np.ndarray, *,
            feather: int | None = None, out: np.ndarray | None = None, inner: int = 0
            ) -> np.ndarray:
    """Paste an edited ``patch`` back into ``image`` through the layer's feathered mask.

    Args:
        image: the full-resolution image the layer was cut from (not modified unless it
            is passed as ``out``).
        layer: the layer from ``decompose``.
        patch: the edited patch, ``uint8``, at the layer's size or any other size (it is
            resized back into the box, and only there). RGB and RGBA are accepted; the
            result keeps ``image``'s channels.
        feather: feather width in pixels; ``None`` picks ``default_feather(layer)``.
        out: write into this array (may be ``image`` itself for an in-place compose).
        inner: fade the edit in from this many pixels inside the mask (a softer edge that
            still ends ``feather`` outside it: ``feather_alpha``).

    Returns:
        The composed image. Every pixel farther than ``feather`` from the mask equals the
        input bit for bit.
    """
    rgb_array(patch, "patch", alpha=True)
    if image.ndim != 3 or image.shape[0] < layer.bbox[3] or image.shape[1] < layer.bbox[2]:
        raise ValueError(f"the layer's box {layer.bbox} does not fit the image "
                         f"{image.shape[1]}x{image.shape[0]}")
    feather = default_feather(layer) if feather is None else int(feather)
    if feather < 0:
        raise ValueError(f"feather must be >= 0, got {feather}")
    channels = image.shape[2]
    if out is None:
        out = image.copy()
    elif out is not image:
        np.copyto(out, image)
    tight = mask_bbox(layer.mask)
    if tight is None:
        return out  # an empty layer changes nothing
    # Only the mask's box grown by the feather can change: work there, nowhere else.
    reach = feather + 1
    cx0, cy0 = max(0, tight[0] - reach), max(0, tight[1] - reach)
    cx1, cy1 = min(layer.width, tight[2] + reach), min(layer.height, tight[3] + reach)
    patch = _match_channels(patch, channels, layer.patch)
    if patch.shape[:2] != (layer.height, layer.width):
        shrink = patch.shape[0] > layer.height
        interp = cv2.INTER_AREA if shrink else cv2.INTER_CUBIC
        patch = cv2.resize(patch, (layer.width, layer.height), interpolation=interp)
    alpha = feather_alpha(layer.mask[cy0:cy1, cx0:cx1], feather, inner)
    x0, y0 = layer.bbox[0] + cx0, layer.bbox[1] + cy0
    region = out[y0:y0 + (cy1 - cy0), x0:x0 + (cx1 - cx0)]
    _blend_into(region, patch[cy0:cy1, cx0:cx1], alpha)
    return out


#: pixels ``_blend_into`` weighs at a time (its float weights for a 50-MP region would
#: be 400 MB at once)
BLEND_ROWS_PIXELS = 4_000_000


def _blend_into(region: np.ndarray, new: np.ndarray, alpha: np.ndarray) -> None:
    """``region ← new·a + region·(1−a)`` rounded, with ``a = alpha/255``: exactly the old
    pixel where alpha is 0, exactly ``new`` where it is 255 (OpenCV's threaded, vectorised
    blend, writing into the view without an intermediate frame), a strip of rows at a
    time (the blend is per pixel: the same result)."""
    step = max(1, BLEND_ROWS_PIXELS // max(1, region.shape[1]))
    for top in range(0, region.shape[0], step):
        rows = slice(top, top + step)
        weight = alpha[rows].astype(np.float32)
        weight *= np.float32(1.0 / 255.0)
        rest = np.float32(1.0) - weight
        view = region[rows]
        result = cv2.blendLinear(new[rows], view, weight, rest, dst=view)
        if not np.shares_memory(result, view):  # OpenCV could not write into the view
            view[...] = result


def spread_beyond(before: np.ndarray, after: np.ndarray, mask: np.ndarray,
                  feather: int) -> int:
    """How many pixels of ``after`` differ from ``before`` (any channel, any amount)
    farther than ``feather`` pixels from ``mask`` (bool, their size): the Layer invariant
    says none may. Chamfer distances never exceed the true ones, so a pixel counted here
    is truly that far. The distances are measured only in the box of the changed pixels
    outside the mask, grown by ``feather + 1`` (every mask pixel nearer than that to one of
    them lies in it)."""
    diff = cv2.absdiff(before, after)
    if diff.ndim == 3:   # a saturated sum of the channels: non-zero where any moved
        diff = cv2.transform(diff, np.ones((1, diff.shape[2]), np.float32))
    mask_u8 = np.ascontiguousarray(mask, dtype=bool).view(np.uint8)
    moved = (diff > 0) & (mask_u8 == 0)
    box = mask_bbox(moved)
    if box is None:
        return 0
    grow = max(0, int(feather)) + 1
    height, width = moved.shape
    x0, y0 = max(0, box[0] - grow), max(0, box[1] - grow)
    x1, y1 = min(width, box[2] + grow), min(height, box[3] + grow)
    near = np.ascontiguousarray(mask_u8[y0:y1, x0:x1])
    if not near.any():
        return int(np.count_nonzero(moved))
    distance = cv2.distanceTransform(near ^ np.uint8(1), cv2.DIST_L2, 5)
    return int(np.count_nonzero(moved[y0:y1, x0:x1] & (distance > max(0, int(feather)))))


def compose_many(image: np.ndarray, edits: Sequence[tuple[Layer, np.ndarray]], *,
                 feather: int | None = None) -> np.ndarray:
    """Compose several ``(layer, patch)`` edits, in order, onto one copy of ``image``."""
    out = image.copy()
    for layer, patch in edits:
        compose(out, layer, patch, feather=feather, out=out)
    return out


def _check_mask(image: np.ndarray, mask: np.ndarray) -> np.ndarray:
    rgb_array(image, "image", alpha=True)
    if mask.shape != image.shape[:2]:
        raise ValueError(f"mask is {mask.shape[1]}x{mask.shape[0]} but the image is "
                         f"{image.shape[1]}x{image.shape[0]}")
    return mask if mask.dtype == bool else mask > 0


def _match_channels(patch: np.ndarray, channels: int, original: np.ndarray) -> np.ndarray:
    if patch.shape[2] == channels:
        return patch
    if channels == 3:
        return patch[..., :3]
    # RGBA image, RGB patch: keep the original alpha (resized to the patch if needed).
    alpha = original[..., 3]
    if alpha.shape != patch.shape[:2]:
        alpha = cv2.resize(alpha, (patch.shape[1], patch.shape[0]),
                           interpolation=cv2.INTER_NEAREST)
    return np.dstack([patch, alpha])
