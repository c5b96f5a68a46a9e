"""Geometry and the frame: straighten, crop, rotate, flip, resize.

Crop, rotate, flip and resize change the frame: ``pipelines.editors.frame`` does them (the
state graph stores a frame change). ``straighten`` also runs here as the same-size
rotate-and-zoom the searches use on their working frames.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from pipelines.editors.frame import ASPECTS
from pipelines.operations.base import Family, Operation, ParamSpec, Proposal, asks
from pipelines.operations.engines import FloatOp

family = Family("geometry")


def fill_scale(w: int, h: int, degrees: float) -> float:
    """Zoom that lets a ``w × h`` frame rotated by ``degrees`` still cover the frame."""
    a = math.radians(abs(degrees))
    c, s = math.cos(a), math.sin(a)
    return max((w * c + h * s) / w, (w * s + h * c) / h)


def _straighten(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    h, w = rgb.shape[:2]
    if p["angle"] == 0 or min(h, w) < 2:
        return rgb
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), p["angle"],
                                     fill_scale(w, h, p["angle"]))
    return cv2.warpAffine(rgb, matrix, (w, h), flags=cv2.INTER_CUBIC,
                          borderMode=cv2.BORDER_REFLECT)


class _FrameEdit(Operation):
    """A frame change done by ``pipelines.editors.frame`` (no patch implementation)."""

    flags = frozenset({"frame"})


@family
class Crop(_FrameEdit):
    name = "crop"
    description = ("Crop the frame: an aspect ratio, trims, or around the target / a box (a "
                   "negative margin keeps room around a target).")
    params = (ParamSpec("aspect", "choice", "free", "width:height, 'original' or 'free'",
                        choices=ASPECTS),
              ParamSpec("margin", "float", 0.0, "fraction trimmed from every side",
                        -1.0, 0.45),
              *(ParamSpec(side, "float", 0.0, f"fraction trimmed from the {side}",
                          0.0, 0.9) for side in ("left", "top", "right", "bottom")))
    main = "aspect"
    words = ("crop", "trim", "square crop", "widescreen crop")
    wording = "crop the photo"
    asks = (
        asks("crop_square", {"aspect": "1:1"}, "Crop to a square",
             "crop to a square|square crop|make it square|square for instagram", "frame"),
        asks("crop_tighter", {"margin": 0.1}, "Crop tighter",
             "crop in tighter|crop closer|zoom in a bit|trim the edges|crop a little off the "
             "sides|tighter framing", "frame"),
        asks("crop_wide", {"aspect": "16:9"}, "Crop to 16:9",
             "widescreen crop|crop to 16:9|cinematic wide frame|banner crop", "frame"),
    )


@family
class Rotate(_FrameEdit):
    name = "rotate"
    description = "Turn the frame by quarter turns."
    params = (ParamSpec("degrees", "int", 90, "clockwise, a multiple of 90 (negative: "
                        "anticlockwise)", -270, 270),)
    main = "degrees"
    words = ("rotate", "quarter turn", "upside down", "sideways")
    wording = "rotate the photo"
    asks = (
        asks("rotate_cw", {"degrees": 90}, "Rotate right",
             "rotate clockwise|rotate right|turn it to the right|rotate 90 degrees|it is "
             "sideways", "frame"),
        asks("rotate_ccw", {"degrees": -90}, "Rotate left",
             "rotate counterclockwise|rotate left|turn it to the left|rotate anticlockwise",
             "frame"),
        asks("rotate_180", {"degrees": 180}, "Turn upside down",
             "turn it upside down|rotate 180 degrees|it is upside down", "frame"),
    )


@family
class Flip(_FrameEdit):
    name = "flip"
    description = "Mirror the frame."
    params = (ParamSpec("axis", "choice", "horizontal", "horizontal: left-right mirror; "
                        "vertical: upside down", choices=("horizontal", "vertical")),)
    main = "axis"
    words = ("flip", "mirror")
    wording = "flip the photo"
    asks = (
        asks("flip_h", {"axis": "horizontal"}, "Mirror",
             "flip horizontally|mirror the image|mirror it|flip left to right", "frame"),
        asks("flip_v", {"axis": "vertical"}, "Flip vertically",
             "flip vertically|flip it upside down|flip top to bottom", "frame"),
    )


@family
class Straighten(FloatOp):
    name = "straighten"
    description = ("Rotate to level the horizon or the dominant lines; the empty corners are "
                   "cropped away.")
    params = (ParamSpec("angle", "float", 0.0, "degrees, counter-clockwise +", -45, 45),
              ParamSpec("auto", "bool", False, "find the tilt from the horizon or the "
                        "dominant lines (angle ignored)"))
    main = "angle"
    flags = frozenset({"frame_filter", "frame"})
    words = ("straighten", "level the horizon", "tilted", "crooked")
    wording = "straighten the photo"
    proposals = (Proposal("need:tilt", {}),)
    asks = (asks("straighten", {"auto": True}, "Straighten",
                 "straighten the horizon|level the horizon|the horizon is crooked|it is "
                 "tilted|fix the tilt|straighten the photo|the buildings are leaning",
                 "frame"),)

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _straighten(rgb, mask, p)


@family
class Resize(_FrameEdit):
    name = "resize"
    description = ("Make the frame smaller (for sharing): a width, a height, a long side in "
                   "pixels, or a scale.")
    params = (ParamSpec("scale", "float", 0.5, "size factor when no pixels are given",
                        0.01, 1.0),
              ParamSpec("long_side", "int", 0, "long side in pixels (0: unset)", 0, 65535),
              ParamSpec("width", "int", 0, "width in pixels (0: unset)", 0, 65535),
              ParamSpec("height", "int", 0, "height in pixels (0: unset)", 0, 65535))
    main = "scale"
    words = ("resize", "downscale", "make the file smaller")
    wording = "make the photo smaller"
    asks = (asks("resize", {"scale": 0.5}, "Make the file smaller",
                 "resize the image|make the file smaller|smaller for email|downscale it|reduce "
                 "the resolution", "frame"),)
