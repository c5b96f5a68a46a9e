"""Frame edits in a turn: from a crop/rotate/flip/straighten/resize action to a frame
state of the graph.

``run_frame_action`` resolves what the action leaves open (straighten's angle from the
horizon or the dominant lines, measured by ``eval.noref``; a crop's box from the user's
box, brush mask or a located target), carries it out with ``pipelines.editors.frame`` and
returns the ``FrameChange`` record plus the layers the graph must store: none for exact
edits (crop, quarter turns, flips replay bit-exact from the parent), the whole new frame
for resampling ones (straighten, resize).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import cv2
import numpy as np

from agent.actions import Action, RegionType
from agent.session.store import StoredLayer, split_layer
from eval.noref import estimate_tilt, estimate_tilt_lines
from pipelines.editors.frame import Box, FrameChange, FrameError, clamp_box, plan_frame
from pipelines.editors.operations import get_operation
from pipelines.images import downscale
from pipelines.layers import mask_bbox

#: Below this tilt (degrees) a photo counts as level.
LEVEL_DEGREES = 0.2


def is_frame_action(action: Action) -> bool:
    """Whether the action changes the frame (crop, rotate, flip, straighten, resize)."""
    return bool(action.operation) and get_operation(action.operation).has("frame")


@dataclass
class FrameResult:
    """A carried-out frame edit: the record, the layers to store and a line for people."""

    change: FrameChange
    layers: list[StoredLayer] = field(default_factory=list)
    pixels: np.ndarray | None = None
    message: str = ""


def detect_tilt(image: np.ndarray) -> tuple[float, int]:
    """The correction (degrees, counter-clockwise +) that levels the photo, and the
    confidence of the measurement (0 when no horizon or dominant lines were found)."""
    # area-averaged down to 1024 px (plain subsampling aliases thin lines and biases the angle)
    gray = downscale(cv2.cvtColor(np.ascontiguousarray(image[..., :3]), cv2.COLOR_RGB2GRAY),
                     1024)
    tilt, confidence = estimate_tilt_lines(gray)
    if confidence < 6:
        tilt, confidence = estimate_tilt(downscale(gray, 256))
    return (-float(tilt), int(confidence)) if confidence >= 6 else (0.0, 0)


def run_frame_action(image: np.ndarray, action: Action, *, user_mask: np.ndarray | None = None,
                     locate: Callable[[Action, np.ndarray], np.ndarray] | None = None
                     ) -> FrameResult:
    """Carry out one frame action on ``image`` (the current frame).

    Args:
        image: ``uint8`` HWC frame before the edit.
        action: a crop/rotate/flip/straighten/resize action.
        user_mask: the brush mask of this turn (a crop's region may be it).
        locate: finds a phrase target's mask (a crop "on the dog").

    Returns:
        The ``FrameResult``.

    Raises:
        FrameError: the edit cannot be done (nothing to level, an empty box…).
    """
    params = dict(action.params)
    around: Box | None = None
    height, width = image.shape[:2]
    if action.operation == "straighten" and params.get("auto"):
        angle, confidence = detect_tilt(image)
        if abs(angle) < LEVEL_DEGREES:
            raise FrameError("I found no tilted horizon or lines to level (the photo looks "
                             "straight); give an angle, e.g. 'rotate 2 degrees clockwise'")
        params["angle"] = round(float(np.clip(angle, -45, 45)), 2)
    if action.operation == "crop":
        kind = action.region.type
        if kind is RegionType.box:
            around = clamp_box(action.region.box, width, height)
        elif kind is RegionType.mask and user_mask is not None:
            around = mask_bbox(user_mask)
        elif kind is RegionType.phrase and locate is not None:
            around = mask_bbox(locate(action, image))
        if kind is not RegionType.image and around is None:
            raise FrameError("the crop's region is empty")
    change, pixels = plan_frame(image, action.operation, params, around)
    layers: list[StoredLayer] = []
    if not change.exact:   # the new frame's pixels, all of them (replayed onto a blank frame)
        full = StoredLayer((0, 0, change.size[0], change.size[1]), _patch=pixels,
                           _mask=np.ones(pixels.shape[:2], bool))
        layers = split_layer(full)
    before, after = f"{width}x{height}", f"{change.size[0]}x{change.size[1]}"
    detail = f" by {params['angle']:+.1f}°" if action.operation == "straighten" else ""
    return FrameResult(change, layers, pixels,
                       f"{action.operation}{detail}: {before} → {after}")
