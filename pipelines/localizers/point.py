"""Click-to-select on the CPU: the object under a point, as a pixel mask (issue 24).

``select_at(image, x, y)`` takes full-resolution coordinates and returns the object under
them: the most specific detection (object or face) whose box holds the point, refined to
a pixel mask (U²-Net-p saliency on the box's crop seeds GrabCut, ``segment.refine_box``);
else the sky, when the point lies in the sky that "the sky" resolves to (``_from_sky``:
the segmentation below cut a sky's gradient into pieces and GrabCut's window took squares
of it; 12 of the real tune set's skies went from wrong to right, none the other way);
else the salient component that holds the point; else GrabCut's part of a window round
the point when that part ends inside the window (a thing smaller than it); else the
*region* under the point: the segment holding it in a graph-based segmentation
(Felzenszwalb and Huttenlocher) of a ≤ ``REGION_SIDE``-px copy, which follows a sky's
gradient, a meadow's texture or a floor's shading to the edge where they end, its edge
re-decided on the photo. (Before it, the window's part, or the square itself, answered
every such click: 1 of the real tune set's 48 clicks on skies, grounds, water and other
things no detector names was right; ``bench/click_real.py``.) Every step works on a
bounded copy (frame ≤ 1024 px, crop ≤ 256 px), so a 20-MP photo costs about what a
small one does (``bench/select_speed.py``). Without the perception files the same
window and region answer.

When the ``segmenter`` role (SAM) has its weights here — on a GPU or the CPU, as
``ModelManager.role_status`` says — the same crop (the detection or salient component
holding the point, else a window around it) is given to SAM at its working size with the
click as a positive point (``GroundedSAMLocalizer.segment_point``: best of the multimask
outputs by predicted IoU), and the mask is mapped back to full resolution inside that crop
only; the selection's ``source`` is ``"sam"``. If SAM fails or answers nothing the CPU path
above runs.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from pipelines.localizers.base import as_rgb, mask_box
from pipelines.localizers.grounded_sam import GroundedSAMLocalizer
from pipelines.localizers.perception import PerceptionLocalizer, _Models
from pipelines.localizers.refine import upsample_region
from pipelines.localizers.scene import any_sky
from pipelines.localizers.segment import grabcut_object, refine_box, smooth_resize
from pipelines.localizers.sky import ends_unsure
from pipelines.models import get_manager
from pipelines.perception import people as person_outline
from pipelines.perception.detectors import shrink

log = logging.getLogger(__name__)

#: long side of the frame copy the detectors see
FRAME_SIDE = 1024
#: a detection needs this score to be selected by a click
MIN_SCORE = 0.3
#: side of the window GrabCut looks at when nothing detected holds the point (share of
#: the short side)
WINDOW = 0.2
#: a click this close to a detected object's mask (share of the long side) selects it
NEAR = 0.015
#: the region under a click: the segmentation's copy (px, long side), its scale (larger
#: gives larger segments; 100-300 split a sky's gradient and a meadow into pieces on the
#: real tune set), the smoothing before it and the least segment (share of the copy)
REGION_SIDE, REGION_SCALE, REGION_SIGMA, REGION_MIN = 512, 800, 0.8, 1 / 2000
#: a window's GrabCut part this close to the window's side (px of its ≤ 256-px copy) runs
#: on past it: the thing is larger than the window, and the region answers
EDGE = 3
#: a face whose salient component is this many times its box's area is a head on a body
#: (a rabbit's, a dog's): a click on it selects the body
FACE_PART = 3.0
#: a region this large a share of the frame is no thing: GrabCut on a window instead
REGION_MAX = 0.9
#: SAM's crop: the detection/component box grown by this share of its size on each side
SAM_MARGIN = 0.1
#: SAM's working side when its processor does not say
SAM_SIDE = 1024


@dataclass
class Selection:
    """What a click selected: a bool mask at the image's size, its box, what it is, and
    (for SAM) the crop ``(x0, y0, x1, y1)`` the mask was computed in."""

    mask: np.ndarray
    box: tuple[int, int, int, int]
    label: str
    source: str
    seconds: float = 0.0
    crop: tuple[int, int, int, int] | None = None

    def to_dict(self) -> dict:
        """``{"box", "label", "source", "area", "seconds"}`` (JSON-able, no mask)."""
        return {"box": list(self.box), "label": self.label, "source": self.source,
                "area": int(self.mask.sum()), "seconds": round(self.seconds, 3)}


class SelectionError(ValueError):
    """A point outside the image or a malformed one."""


def select_at(image: np.ndarray, x: float, y: float) -> Selection:
    """The object under (x, y) (full-resolution pixels), see the module doc.

    Raises:
        SelectionError: the point is not a number pair inside the image.
    """
    start = time.perf_counter()
    rgb = as_rgb(image)
    h, w = rgb.shape[:2]
    try:
        px, py = int(round(float(x))), int(round(float(y)))
    except (TypeError, ValueError, OverflowError):
        raise SelectionError(f"a point is two numbers x, y; got {x!r}, {y!r}") from None
    if not (0 <= px < w and 0 <= py < h):
        raise SelectionError(f"the point ({px}, {py}) is outside the {w}x{h} photo")
    models = _models()
    frame = shrink(rgb, FRAME_SIDE) if models is not None else None
    found = _from_sam(rgb, frame, px, py, models) if _sam_available() else None
    found = found or (models is not None and _from_detections(rgb, frame, px, py, models)) or \
        _from_sky(rgb, px, py) or \
        (models is not None and _from_saliency(rgb, frame, px, py, models)) or \
        _from_window_or_region(rgb, px, py)
    mask, label, source, *crop = found
    box = mask_box(mask) or (px, py, px + 1, py + 1)
    return Selection(mask, box, label, source, time.perf_counter() - start,
                     crop[0] if crop else None)


def _models() -> Any | None:
    try:
        if not PerceptionLocalizer.is_available()[0]:
            return None
        return _Models.get()
    except Exception as err:  # noqa: BLE001 — no eyes: GrabCut around the point
        log.warning("perception unavailable for click-to-select: %s", err)
        return None


def _sam_available() -> bool:
    try:
        return get_manager().role_status("segmenter").available
    except Exception as err:  # noqa: BLE001 — a broken status check: the CPU path
        log.warning("segmenter status unavailable for click-to-select: %s", err)
        return False


def _from_sam(rgb: np.ndarray, frame: np.ndarray | None, x: int, y: int, models: Any
              ) -> tuple[np.ndarray, str, str, tuple[int, int, int, int]] | None:
    """SAM with the click as a positive point on the crop holding it, or None."""
    h, w = rgb.shape[:2]
    held = _detection_at(rgb, frame, x, y, models) if models is not None else None
    if held is None and models is not None:
        part = _salient_part(rgb, frame, x, y, models)
        if part is not None:
            ys, xs = np.nonzero(part)
            k = (w / part.shape[1], h / part.shape[0])
            held = ("salient object", (xs.min() * k[0], ys.min() * k[1],
                                       (xs.max() + 1) * k[0], (ys.max() + 1) * k[1]))
    if held is None:
        label, (x0, y0, x1, y1) = "region", _window_box(h, w, x, y)
    else:
        label, (bx0, by0, bx1, by1) = held
        mx, my = SAM_MARGIN * (bx1 - bx0), SAM_MARGIN * (by1 - by0)
        x0, y0 = max(0, int(bx0 - mx)), max(0, int(by0 - my))
        x1, y1 = min(w, int(np.ceil(bx1 + mx))), min(h, int(np.ceil(by1 + my)))
    try:
        loaded = get_manager().load("segmenter")
        size = getattr(loaded.processor.image_processor, "size", None) or {}
        side = int(size.get("longest_edge", SAM_SIDE)) if isinstance(size, dict) else SAM_SIDE
        crop = shrink(rgb[y0:y1, x0:x1], side)
        sx, sy = crop.shape[1] / (x1 - x0), crop.shape[0] / (y1 - y0)
        point = (min(int((x - x0) * sx), crop.shape[1] - 1),
                 min(int((y - y0) * sy), crop.shape[0] - 1))
        answers = GroundedSAMLocalizer().segment_point(crop, point, label)
    except Exception as err:  # noqa: BLE001 — SAM failed: the CPU path answers
        log.warning("SAM click-to-select failed, using the CPU path: %s", err)
        return None
    if not answers:
        return None
    full = np.zeros((h, w), bool)
    full[y0:y1, x0:x1] = smooth_resize(answers[0].mask, (y1 - y0, x1 - x0))
    if not full.any():
        return None
    return full, label, "sam", (x0, y0, x1, y1)


def _detection_at(rgb: np.ndarray, frame: np.ndarray, x: int, y: int, models: Any
                  ) -> tuple[str, tuple[float, float, float, float]] | None:
    """The smallest detection (object or face) whose full-resolution box holds (x, y)."""
    k = rgb.shape[1] / frame.shape[1]
    dets = [(d.label, tuple(v * k for v in d.box)) for d in
            models.objects.detect(frame, MIN_SCORE)]
    dets += [("face", tuple(v * k for v in d.box)) for d in models.faces.detect(frame, 0.6)]
    holding = [(label, box) for label, box in dets
               if box[0] <= x < box[2] and box[1] <= y < box[3]]
    faces = [d for d in holding if d[0] == "face"]
    things = [d for d in holding if d[0] != "face"]
    # a face is part of the person or animal whose box holds it: a click on it selects
    # that whole (the face detector also fires on a dog's or a rabbit's face)
    holding = things + [f for f in faces if not any(_inside(f[1], t[1]) for t in things)]
    if not holding:
        return None
    return min(holding, key=lambda d: (d[1][2] - d[1][0]) * (d[1][3] - d[1][1]))


def _inside(small: tuple[float, ...], big: tuple[float, ...]) -> bool:
    """Whether box ``small``'s centre lies in box ``big`` and ``big`` is larger."""
    cx, cy = (small[0] + small[2]) / 2, (small[1] + small[3]) / 2
    return big[0] <= cx < big[2] and big[1] <= cy < big[3] and \
        (big[2] - big[0]) * (big[3] - big[1]) > (small[2] - small[0]) * (small[3] - small[1])


def _from_detections(rgb: np.ndarray, frame: np.ndarray, x: int, y: int, models: Any
                     ) -> tuple[np.ndarray, str, str] | None:
    held = _detection_at(rgb, frame, x, y, models)
    if held is None:
        return None
    label, box = held
    if label == "face":     # a face on a salient body no class named: the body answers
        body = _body_of(rgb, frame, x, y, models, box)
        if body is not None:
            return _salient_selection(rgb, body)
    salient = models.salient
    mask = refine_box(rgb, box, lambda crop: salient.saliency(crop, 224), 256,
                      outline=person_outline.cut_for(label))
    if not mask[y, x]:
        # on the box but off the refined object: take it only when the click is close
        reach = max(4, int(NEAR * max(rgb.shape[:2])))
        x0, y0 = max(0, x - reach), max(0, y - reach)
        if not mask[y0:y + reach + 1, x0:x + reach + 1].any():
            return None
    return mask, label, f"detector+{person_outline.cut_name(label)}"


def _salient_part(rgb: np.ndarray, frame: np.ndarray, x: int, y: int, models: Any
                  ) -> np.ndarray | None:
    """The salient component holding (x, y), on a ≤ 512-px copy of the frame, or None."""
    frame = shrink(frame, 512)
    prob = models.salient.saliency(frame, 224)
    sx, sy = int(x * frame.shape[1] / rgb.shape[1]), int(y * frame.shape[0] / rgb.shape[0])
    sx, sy = min(sx, frame.shape[1] - 1), min(sy, frame.shape[0] - 1)
    if prob[sy, sx] < 0.5:
        return None
    return _component_at(prob >= 0.5, sx, sy)


def _body_of(rgb: np.ndarray, frame: np.ndarray, x: int, y: int, models: Any,
             box: tuple[float, ...]) -> np.ndarray | None:
    """The salient component holding (x, y) when it is a body ``FACE_PART`` times the
    area of ``box`` (full-resolution) or more, else None."""
    part = _salient_part(rgb, frame, x, y, models)
    if part is None:
        return None
    k = (part.shape[1] / rgb.shape[1]) * (part.shape[0] / rgb.shape[0])
    big = float(part.sum()) >= FACE_PART * (box[2] - box[0]) * (box[3] - box[1]) * k
    return part if big else None


def _salient_selection(rgb: np.ndarray, part: np.ndarray) -> tuple[np.ndarray, str, str]:
    return smooth_resize(part, rgb.shape[:2]), "salient object", "u2netp"


def _from_saliency(rgb: np.ndarray, frame: np.ndarray, x: int, y: int, models: Any
                   ) -> tuple[np.ndarray, str, str] | None:
    part = _salient_part(rgb, frame, x, y, models)
    return None if part is None else _salient_selection(rgb, part)


def _from_sky(rgb: np.ndarray, x: int, y: int) -> tuple[np.ndarray, str, str] | None:
    """The sky when (x, y) lies in the one "the sky" resolves to (the localiser's own
    answer, ``scene.any_sky`` and ``sky.ends_unsure``), else None: a question about where
    the sky ends is no selection."""
    found = ends_unsure(any_sky(rgb))
    if found.status != "resolved" or not found.masks:
        return None
    sky = found.union()
    return (sky, "sky", "sky") if sky[y, x] else None


def region_at(rgb: np.ndarray, x: int, y: int) -> np.ndarray:
    """The segment holding (x, y) in a Felzenszwalb segmentation of a copy at most
    ``REGION_SIDE`` px long, as a bool mask at that copy's size."""
    small = shrink(rgb, REGION_SIDE)
    h, w = small.shape[:2]
    sx = min(int(x * w / rgb.shape[1]), w - 1)
    sy = min(int(y * h / rgb.shape[0]), h - 1)
    # imported here, not at the top: with scipy.ndimage it cost ~0.5 s of CPU in every
    # ``python -m agent`` process, most of which (log, undo, export…) never read a click
    from skimage.segmentation import felzenszwalb  # noqa: PLC0415

    segments = felzenszwalb(small, scale=REGION_SCALE, sigma=REGION_SIGMA,
                            min_size=max(8, round(REGION_MIN * h * w)))
    return segments == segments[sy, sx]


def _from_region(rgb: np.ndarray, x: int, y: int) -> tuple[np.ndarray, str, str] | None:
    """The region under (x, y) at full resolution (``region_at``), or None when it is
    (nearly) the whole frame."""
    part = region_at(rgb, x, y)
    if part.mean() > REGION_MAX:
        return None
    full = upsample_region(rgb, part)
    if not full[y, x]:             # the edge re-decided just past the click: keep it on
        full |= smooth_resize(part, rgb.shape[:2])
    return full, "region", "segment"


def _from_window_or_region(rgb: np.ndarray, x: int, y: int) -> tuple[np.ndarray, str, str]:
    """What nothing detected or salient holds: GrabCut's part of the window round (x, y)
    when it ends inside the window (a thing smaller than it, which a segmentation of the
    whole frame may merge with its ground); else the region under the point; else the
    window's part, or the window itself."""
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = _window_box(h, w, x, y)
    part = _window_part(rgb, x, y, (x0, y0, x1, y1))
    inside = part is not None and not (part[:EDGE].any() or part[-EDGE:].any() or
                                       part[:, :EDGE].any() or part[:, -EDGE:].any())
    found = None if inside else _from_region(rgb, x, y)
    if found is not None:
        return found
    full = np.zeros((h, w), bool)
    if part is None:
        full[y0:y1, x0:x1] = True
        return full, "region", "window"
    full[y0:y1, x0:x1] = smooth_resize(part, (y1 - y0, x1 - x0))
    return full, "region", "grabcut"


def _window_box(h: int, w: int, x: int, y: int) -> tuple[int, int, int, int]:
    """A square window around (x, y), a share ``WINDOW`` of the short side, in the image."""
    r = max(8, int(WINDOW * min(h, w) / 2))
    return max(0, x - r), max(0, y - r), min(w, x + r), min(h, y + r)


def _window_part(rgb: np.ndarray, x: int, y: int, window: tuple[int, int, int, int]
                 ) -> np.ndarray | None:
    """GrabCut's part of ``window`` holding (x, y), on the window's ≤ 256-px copy, or
    None when GrabCut finds nothing there."""
    x0, y0, x1, y1 = window
    crop = shrink(rgb[y0:y1, x0:x1], 256)
    s = crop.shape[1] / (x1 - x0)
    refined = grabcut_object(crop, (1, 1, crop.shape[1] - 1, crop.shape[0] - 1))
    return None if refined is None else _component_at(
        refined, min(int((x - x0) * s), crop.shape[1] - 1),
        min(int((y - y0) * s), crop.shape[0] - 1))


def _component_at(mask: np.ndarray, x: int, y: int) -> np.ndarray | None:
    """The 8-connected component of ``mask`` holding (x, y), or None."""
    if not mask[y, x]:
        return None
    _, labels = cv2.connectedComponents(mask.astype(np.uint8), connectivity=8)
    return labels == labels[y, x]
