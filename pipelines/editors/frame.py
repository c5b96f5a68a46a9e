"""Frame edits: crop, rotate by quarter turns, flip, straighten and resize.

These change the frame itself (its size or orientation), so they are not patch edits:
a state graph stores each as a ``FrameChange`` record that ``apply_frame`` replays on the
parent's pixels. Crops, quarter turns and flips are exact (array slicing, no
resampling), so replaying them is bit-exact everywhere. Straighten and resize resample;
their record is a ``canvas`` of the new size whose pixels the graph stores as a layer.

Conventions: images are ``uint8`` HWC; boxes ``(x0, y0, x1, y1)`` are end-exclusive in
the parent's pixels; ``rotate`` degrees are clockwise (the way people say "rotate right");
``straighten`` angles are counter-clockwise-positive like ``eval.noref``'s tilt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

Box = tuple[int, int, int, int]

#: Aspect ratios a crop may ask for ("free": keep the box's own shape; "original": the
#: frame's shape).
ASPECTS = ("free", "original", "1:1", "4:5", "5:4", "4:3", "3:4", "3:2", "2:3", "16:9",
           "9:16", "21:9", "2:1", "1:2", "5:7", "7:5")
#: Record kinds ``apply_frame`` replays exactly; ``canvas`` takes its pixels from layers.
EXACT_KINDS = ("crop", "rotate", "flip")


class FrameError(ValueError):
    """A frame edit that cannot be done (an empty box, an angle out of range…)."""


@dataclass(frozen=True)
class FrameChange:
    """How a state's frame derives from its parent's.

    Attributes:
        kind: ``crop`` (``box``), ``rotate`` (``degrees`` clockwise, a multiple of 90),
            ``flip`` (``axis``) or ``canvas`` (a new blank frame of ``size`` whose pixels
            come from the state's layers: straighten, resize).
        params: the kind's parameters (JSON-able).
        size: ``(width, height)`` of the new frame.
    """

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    size: tuple[int, int] = (0, 0)

    def to_json(self) -> dict[str, Any]:
        """The record as stored in the session file."""
        return {"kind": self.kind, "params": dict(self.params), "size": list(self.size)}

    @classmethod
    def from_json(cls, data: Any) -> FrameChange:
        """Read a stored record back, checking its kind, parameters and size.

        Raises:
            FrameError: anything malformed.
        """
        if not isinstance(data, dict):
            raise FrameError(f"a frame record must be an object, got {type(data).__name__}")
        kind = data.get("kind")
        if kind not in (*EXACT_KINDS, "canvas"):
            raise FrameError(f"unknown frame kind {kind!r}")
        params = data.get("params") or {}
        size = data.get("size")
        if not isinstance(params, dict) or not isinstance(size, (list, tuple)) or \
                len(size) != 2 or not all(isinstance(v, int) and 0 < v <= 1_000_000
                                          for v in size):
            raise FrameError(f"bad frame record {data!r}")
        change = cls(str(kind), dict(params), (int(size[0]), int(size[1])))
        change.check_params()
        return change

    def check_params(self) -> None:
        """Raise ``FrameError`` unless the parameters suit the kind."""
        p = self.params
        if self.kind == "crop":
            box = p.get("box")
            if not (isinstance(box, (list, tuple)) and len(box) == 4
                    and all(isinstance(v, int) for v in box)):
                raise FrameError(f"a crop record needs an integer box, got {box!r}")
        elif self.kind == "rotate":
            degrees = p.get("degrees")
            if not isinstance(degrees, int) or degrees % 90:
                raise FrameError(f"rotate needs a multiple of 90 degrees, got {degrees!r}")
        elif self.kind == "flip" and p.get("axis") not in ("horizontal", "vertical"):
            raise FrameError(f"flip needs axis horizontal or vertical, got {p.get('axis')!r}")

    @property
    def exact(self) -> bool:
        """Replayed from the parent's pixels alone (no stored pixels needed)."""
        return self.kind in EXACT_KINDS


# --------------------------------------------------------------------------- geometry


def parse_aspect(aspect: str, width: int, height: int) -> float | None:
    """Width/height ratio of an aspect name (``"16:9"``, ``"original"``); None for free."""
    if aspect in ("", "free"):
        return None
    if aspect == "original":
        return width / height
    try:
        a, b = (float(v) for v in aspect.split(":"))
    except ValueError:
        raise FrameError(f"aspect {aspect!r} is not a ratio like 16:9") from None
    if a <= 0 or b <= 0:
        raise FrameError(f"aspect {aspect!r} must have positive sides")
    return a / b


def crop_box(width: int, height: int, *, aspect: str = "free", margin: float = 0.0,
             left: float = 0.0, top: float = 0.0, right: float = 0.0, bottom: float = 0.0,
             around: Box | None = None) -> Box:
    """The crop box for a request, inside a ``width × height`` frame.

    1. Start from the frame, or from ``around`` (a subject's box) when given.
    2. Trim ``margin`` from every side and ``left``/``top``/``right``/``bottom`` from
       one side each (fractions of the start box; a negative margin grows a subject box).
    3. Fit the aspect ratio: the largest box of that ratio inside the trimmed frame,
       centred; around a subject, the smallest box of that ratio containing it, moved
       (and if need be shrunk) to stay inside the frame.

    Returns:
        ``(x0, y0, x1, y1)`` end-exclusive, at least 1×1.

    Raises:
        FrameError: the trims leave nothing.
    """
    x0, y0, x1, y1 = around if around is not None else (0, 0, width, height)
    w, h = x1 - x0, y1 - y0
    if w <= 0 or h <= 0:
        raise FrameError(f"the crop starts from an empty box {(x0, y0, x1, y1)}")
    fx0 = x0 + w * (margin + left)
    fx1 = x1 - w * (margin + right)
    fy0 = y0 + h * (margin + top)
    fy1 = y1 - h * (margin + bottom)
    fx0, fy0 = max(0.0, fx0), max(0.0, fy0)
    fx1, fy1 = min(float(width), fx1), min(float(height), fy1)
    if fx1 - fx0 < 1 or fy1 - fy0 < 1:
        raise FrameError("those trims leave nothing of the photo")
    ratio = parse_aspect(aspect, width, height)
    if ratio is not None:
        cx, cy = (fx0 + fx1) / 2, (fy0 + fy1) / 2
        bw, bh = fx1 - fx0, fy1 - fy0
        if around is None:   # the largest box of this ratio inside
            bw, bh = (bh * ratio, bh) if bw / bh > ratio else (bw, bw / ratio)
        else:                # the smallest box of this ratio around the subject
            bw, bh = (bh * ratio, bh) if bw / bh < ratio else (bw, bw / ratio)
            scale = min(1.0, width / bw, height / bh)
            bw, bh = bw * scale, bh * scale
        cx = min(max(cx, bw / 2), width - bw / 2)
        cy = min(max(cy, bh / 2), height - bh / 2)
        fx0, fx1, fy0, fy1 = cx - bw / 2, cx + bw / 2, cy - bh / 2, cy + bh / 2
    box = (int(round(fx0)), int(round(fy0)), int(round(fx1)), int(round(fy1)))
    return clamp_box(box, width, height)


def crop_overlay(image: np.ndarray, box: Box, *, dim: float = 0.35) -> np.ndarray:
    """``image`` with everything outside ``box`` dimmed and a two-line frame (white on
    black, visible on any photo) along the box's edge: what a crop would keep.

    Args:
        image: uint8 RGB (usually a display preview).
        box: ``(x0, y0, x1, y1)`` in ``image``'s pixels, end-exclusive.
        dim: brightness kept outside the box (0 black … 1 unchanged).
    """
    h, w = image.shape[:2]
    x0, y0, x1, y1 = clamp_box(box, w, h)
    out = (image[..., :3].astype(np.float32) * dim).astype(np.uint8)
    out[y0:y1, x0:x1] = image[y0:y1, x0:x1, :3]
    line = max(1, round(max(h, w) / 400))
    for colour, grow in (((0, 0, 0), line), ((255, 255, 255), 0)):
        a0, b0 = max(0, x0 - grow), max(0, y0 - grow)
        a1, b1 = min(w, x1 + grow), min(h, y1 + grow)
        out[b0:b0 + line, a0:a1] = colour
        out[max(b0, b1 - line):b1, a0:a1] = colour
        out[b0:b1, a0:a0 + line] = colour
        out[b0:b1, max(a0, a1 - line):a1] = colour
    return out


def clamp_box(box: Any, width: int, height: int) -> Box:
    """``box`` as integers clipped to the frame, at least 1×1.

    Raises:
        FrameError: not four numbers, or no overlap with the frame.
    """
    try:
        x0, y0, x1, y1 = (int(round(float(v))) for v in box)
    except (TypeError, ValueError):
        raise FrameError(f"a box must be four numbers [x0, y0, x1, y1], got {box!r}") from None
    x0, x1 = max(0, min(x0, width)), max(0, min(x1, width))
    y0, y1 = max(0, min(y0, height)), max(0, min(y1, height))
    if x1 - x0 < 1 or y1 - y0 < 1:
        raise FrameError(f"the box {list(box)} lies outside the {width}x{height} photo")
    return x0, y0, x1, y1


def inscribed_size(width: int, height: int, degrees: float) -> tuple[int, int]:
    """The largest frame of the same aspect ratio that fits inside the ``width × height``
    frame rotated by ``degrees`` (what straightening keeps without empty corners)."""
    a = math.radians(abs(degrees))
    c, s = math.cos(a), math.sin(a)
    zoom = max((width * c + height * s) / width, (width * s + height * c) / height)
    return max(1, int(math.floor(width / zoom))), max(1, int(math.floor(height / zoom)))


# --------------------------------------------------------------------------- pixels


def crop(image: np.ndarray, box: Box) -> np.ndarray:
    """The pixels inside ``box`` (a contiguous copy)."""
    h, w = image.shape[:2]
    x0, y0, x1, y1 = clamp_box(box, w, h)
    return np.ascontiguousarray(image[y0:y1, x0:x1])


def rotate(image: np.ndarray, degrees: int) -> np.ndarray:
    """Rotate by a multiple of 90° clockwise (exact; negative turns anticlockwise).

    Raises:
        FrameError: ``degrees`` is not a multiple of 90.
    """
    if int(degrees) != degrees or int(degrees) % 90:
        raise FrameError(f"rotate takes quarter turns (90, 180, 270); got {degrees}°. "
                         "Small angles are a straighten.")
    turns = (int(degrees) // 90) % 4
    if turns == 0:
        return np.ascontiguousarray(image)
    if turns == 2:
        return np.ascontiguousarray(image[::-1, ::-1])
    # one transpose + one flip: a single strided copy, cache-friendlier than np.rot90
    flipped = cv2.ROTATE_90_CLOCKWISE if turns == 1 else cv2.ROTATE_90_COUNTERCLOCKWISE
    if image.ndim == 3 and image.shape[2] <= 4:
        return cv2.rotate(np.ascontiguousarray(image), flipped)
    return np.ascontiguousarray(np.rot90(image, -turns))


def flip(image: np.ndarray, axis: str) -> np.ndarray:
    """Mirror left–right (``horizontal``) or top–bottom (``vertical``), exactly."""
    if axis == "horizontal":
        return cv2.flip(np.ascontiguousarray(image), 1)
    if axis == "vertical":
        return cv2.flip(np.ascontiguousarray(image), 0)
    raise FrameError(f"flip axis must be horizontal or vertical, got {axis!r}")


def straighten(image: np.ndarray, degrees: float) -> np.ndarray:
    """Rotate by ``degrees`` (counter-clockwise +) and keep the largest same-shape frame
    with no empty corner, at native resolution (the frame gets smaller; nothing is
    enlarged).

    Raises:
        FrameError: ``|degrees|`` over 45.
    """
    if abs(degrees) > 45:
        raise FrameError(f"straighten takes at most 45 degrees, got {degrees:g}")
    h, w = image.shape[:2]
    if degrees == 0:
        return np.ascontiguousarray(image)
    out_w, out_h = inscribed_size(w, h, degrees)
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), degrees, 1.0)
    matrix[0, 2] += (out_w - w) / 2.0
    matrix[1, 2] += (out_h - h) / 2.0
    return cv2.warpAffine(np.ascontiguousarray(image), matrix, (out_w, out_h),
                          flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def resize(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Resample to ``(width, height)`` (area filter down, cubic up)."""
    w, h = int(size[0]), int(size[1])
    if w < 1 or h < 1:
        raise FrameError(f"cannot resize to {w}x{h}")
    if (w, h) == (image.shape[1], image.shape[0]):
        return np.ascontiguousarray(image)
    shrink = w * h < image.shape[0] * image.shape[1]
    return cv2.resize(np.ascontiguousarray(image), (w, h),
                      interpolation=cv2.INTER_AREA if shrink else cv2.INTER_CUBIC)


def resize_size(width: int, height: int, *, scale: float = 0.5, long_side: int = 0,
                new_width: int = 0, new_height: int = 0) -> tuple[int, int]:
    """The new size of a resize: an explicit width and/or height (aspect kept when only
    one is given), else a long side, else a scale."""
    if new_width and new_height:
        return int(new_width), int(new_height)
    if new_width:
        return int(new_width), max(1, round(height * new_width / width))
    if new_height:
        return max(1, round(width * new_height / height)), int(new_height)
    if long_side:
        factor = long_side / max(width, height)
    else:
        factor = scale
    return max(1, round(width * factor)), max(1, round(height * factor))


# --------------------------------------------------------------------------- records


def plan_frame(image: np.ndarray, operation: str, params: dict[str, Any],
               around: Box | None = None) -> tuple[FrameChange, np.ndarray]:
    """Carry out one frame operation: its record and the new frame's pixels.

    Args:
        image: the frame before.
        operation: ``crop``, ``rotate``, ``flip``, ``straighten`` or ``resize``.
        params: the operation's validated parameters (``straighten``'s angle resolved).
        around: for a crop, an explicit box (the user's) or a subject's box.

    Returns:
        ``(change, pixels)``.

    Raises:
        FrameError: the request cannot be met.
    """
    h, w = image.shape[:2]
    if operation == "crop":
        box = crop_box(w, h, aspect=str(params.get("aspect", "free")),
                       margin=float(params.get("margin", 0.0)),
                       left=float(params.get("left", 0.0)), top=float(params.get("top", 0.0)),
                       right=float(params.get("right", 0.0)),
                       bottom=float(params.get("bottom", 0.0)),
                       around=clamp_box(around, w, h) if around is not None else None)
        if box == (0, 0, w, h):
            raise FrameError("that crop keeps the whole photo; nothing to crop")
        out = crop(image, box)
        return FrameChange("crop", {"box": list(box)}, (out.shape[1], out.shape[0])), out
    if operation == "rotate":
        degrees = int(round(float(params.get("degrees", 90))))
        out = rotate(image, degrees)
        return FrameChange("rotate", {"degrees": degrees % 360},
                           (out.shape[1], out.shape[0])), out
    if operation == "flip":
        axis = str(params.get("axis", "horizontal"))
        out = flip(image, axis)
        return FrameChange("flip", {"axis": axis}, (w, h)), out
    if operation == "straighten":
        angle = float(params.get("angle", 0.0))
        out = straighten(image, angle)
        return FrameChange("canvas", {"operation": "straighten", "angle": angle},
                           (out.shape[1], out.shape[0])), out
    if operation == "resize":
        size = resize_size(w, h, scale=float(params.get("scale", 0.5)),
                           long_side=int(params.get("long_side", 0)),
                           new_width=int(params.get("width", 0)),
                           new_height=int(params.get("height", 0)))
        out = resize(image, size)
        return FrameChange("canvas", {"operation": "resize"}, size), out
    raise FrameError(f"{operation!r} is not a frame operation")


def apply_frame(image: np.ndarray, change: FrameChange) -> np.ndarray:
    """Replay a record on the parent's pixels: the new frame (for ``canvas``, a blank
    frame of the new size that the state's layers then fill)."""
    if change.kind == "crop":
        return crop(image, tuple(change.params["box"]))
    if change.kind == "rotate":
        return rotate(image, int(change.params["degrees"]))
    if change.kind == "flip":
        return flip(image, str(change.params["axis"]))
    w, h = change.size
    return np.zeros((h, w, image.shape[2]), image.dtype)
