"""The embedded default editor: OpenCV/PIL/numpy only, no weights.

``ClassicalEditor`` runs every operation of ``pipelines.operations`` that has a classical
implementation (``Operation.apply``), at native resolution. Each operation computes its
pixels in the cheapest form that stays exact at 20 MP (``pipelines.operations.engines``):
tone curves as 8-bit look-up tables, colour matrices through ``cv2.transform``, the rest
on 8-bit or ``float32`` RGB.

Alpha is split off and kept as it was. Statistics (levels, white balance, recolour
lightness) come from the masked pixels only; the base restores every pixel outside the
mask.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from pipelines.editors.base import EditError, Editor, EditRequest, register_editor
from pipelines.operations.detail import DENOISE_FULL_SEARCH_PIXELS, estimate_noise
from pipelines.operations.fill import THIN_HOLE, exemplar_fill, harmonic_fill, inpaint, patch_fill
from pipelines.operations.geometry import fill_scale
from pipelines.operations.pixels import from_lab, linear_to_srgb, luma, srgb_to_linear, to_lab
from pipelines.operations.registry import REGISTRY, get
from pipelines.operations.text import font_path, inner_box

log = logging.getLogger(__name__)

__all__ = ["DENOISE_FULL_SEARCH_PIXELS", "IMPLEMENTED", "THIN_HOLE", "ClassicalEditor",
           "apply_operation", "estimate_noise", "exemplar_fill", "fill_scale", "font_path",
           "from_lab", "harmonic_fill", "inner_box", "inpaint", "linear_to_srgb", "luma",
           "patch_fill", "srgb_to_linear", "to_lab"]


def apply_operation(rgb8: np.ndarray, mask: np.ndarray, operation: str,
                    params: dict[str, Any]) -> np.ndarray:
    """Run one validated operation on 8-bit RGB pixels.

    Args:
        rgb8: uint8 (H, W, 3).
        mask: bool (H, W); statistics come from it, the caller keeps what lies outside.
        operation: a registered operation with a classical implementation.
        params: parameters already validated by the operation.

    Returns:
        uint8 (H, W, 3).
    """
    op = REGISTRY.get(operation)
    if op is None or not op.classical:
        raise EditError(f"the classical editor has no implementation of {operation!r}")
    return op.apply(rgb8, mask, params)


#: Everything ``apply_operation`` implements. Frame edits (crop, rotate, flip, resize)
#: are not patch edits: ``pipelines.editors.frame`` does them. Straightening is here
#: too, as the same-size rotate-and-zoom the searches use on their working frames.
IMPLEMENTED = frozenset(name for name, op in REGISTRY.items() if op.classical)


@register_editor
class ClassicalEditor(Editor):
    """OpenCV/PIL/numpy editor for every non-generative patch operation (no weights)."""

    name = "classical"
    operations = IMPLEMENTED
    requires_weights = False
    working_size = None

    def _edit(self, patch: np.ndarray, mask: np.ndarray, request: EditRequest,
              params: dict[str, Any]) -> np.ndarray:
        op = get(request.operation)
        rgb = np.ascontiguousarray(patch[..., :3])
        if op.has("moves_target"):
            out = op.transform(rgb, mask, params, request.shift_px(params))
        else:
            if op.fills_on_replace:   # replacing a region fills it; adding fits inside it
                params = {**params, "fill": request.kind == "replace"}
            out = apply_operation(rgb, mask, request.operation, params)
        if patch.shape[2] == 4:
            out = np.dstack([out, patch[..., 3]])
        return out
