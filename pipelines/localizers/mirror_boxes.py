"""Whether the detector sees a found thing the same way on the mirror image.

``steady.settle`` asks a thing the detector found again on the mirror image, because the
detector's boxes are not the same there: on the tune set's owl photo a larger owl box
(0.44 against the owl's own 0.50) is drawn on one side only, and only the side with it
asks where the owl ends. That second localisation costs a whole pass (1.2-1.7 s of a
12-MP turn on a detected dog). Its answer can only differ from the first through what the
detector draws, when the rest (the outline cut in a box) is the same on both sides:

- a larger box of the thing's kind around it, or another one of its kind, about as sure
  (``fusion.larger_reading`` and the choice among instances weigh those from
  ``fusion.LARGER_SHARE`` = 0.6 of the thing's own score);
- the thing's own box moving, or its score moving across a limit;
- a sure box of another kind over it (a rival class, a neighbour the outline must stop
  at), read otherwise.

``seen_alike`` runs the detector alone on the mirror image of the frame the first answer
was found on (one net pass at 416 px, the as-shot frame's boxes are remembered by the net)
and says whether the thing is drawn alike on both sides (its box and score), with no
other box of its kind near as sure on either side, and the same sure boxes of other kinds
over it. When they are, the mirror
copy's whole localisation is not run. It is only said for an answer the frame's boxes
decided alone: one thing, named without place, order, size or plural words (a row's count
reads every weak box), found by NanoDet on the whole frame (not by a closer look at a
crop, nor by the zoom search over tiles: those boxes are not on the frame).

Measured on the tune cases whose answers go through the detector (as shot and on the
mirrored, lighter and darker prints: ``BENCHMARKS.md``, wave 37), no answer, its kind, its
mask or its verdict, changed; the owl's print still asks.
"""

from __future__ import annotations

import logging

import numpy as np

from pipelines.localizers import fusion, portion, relations
from pipelines.localizers import parts as colour_parts
from pipelines.localizers.base import Localization, as_rgb
from pipelines.localizers.perception import FRAME_SIDE, SMALL, _Models
from pipelines.localizers.phrases import parse_phrase
from pipelines.perception.detectors import Detection, shrink

log = logging.getLogger(__name__)

#: no other box of the thing's kind from this share of its own score on either side
#: (below ``fusion.LARGER_SHARE``, 0.6, and ``steady.HOLD_SHARE``, 0.7, of it): a larger
#: reading or a second instance to choose from is for the whole localisation to weigh
KIND_SHARE = 0.55
#: boxes of another kind over the thing (this IoU with its box) from this score (below
#: ``fusion.SURE_OTHER``, 0.35) must be drawn on both sides: the same box (``SAME`` IoU)
#: of the same kind, its score within ``OWN_SCORE`` (a rival read surer on one side, a
#: dog's horse of 0.52 read 0.71, may take the answer there)
OVER, OTHER, SAME = 0.3, 0.3, 0.7
#: the thing's own box: found again at this IoU, its score within this difference
OWN_IOU, OWN_SCORE = 0.8, 0.1


def mirrored_back(dets: list[Detection], width: float) -> list[Detection]:
    """``dets`` found on a mirror image ``width`` px wide, in the unmirrored frame."""
    return [Detection((width - d.box[2], d.box[1], width - d.box[0], d.box[3]), d.score,
                      d.label) for d in dets]


def _matched(det: Detection, pool: list[Detection]) -> bool:
    return any(o.label == det.label and abs(o.score - det.score) <= OWN_SCORE and
               fusion.box_iou(o.box, det.box) >= SAME for o in pool)


def boxes_alike(seen: list[Detection], flipped: list[Detection], box: tuple[float, ...],
                label: str) -> bool:
    """Whether the detector draws the thing in ``box`` (of ``label``) alike on both sides:
    ``seen`` as shot, ``flipped`` on the mirror image brought back (one frame's px)."""
    own = [d for d in seen if d.label == label and fusion.box_iou(d.box, box) >= OWN_IOU]
    back = [d for d in flipped if d.label == label and fusion.box_iou(d.box, box) >= OWN_IOU]
    if not own or not back:
        return False
    score, other = max(d.score for d in own), max(d.score for d in back)
    if abs(score - other) > OWN_SCORE:
        return False
    for mine, theirs in ((seen, flipped), (flipped, seen)):
        for det in mine:
            if det in own or det in back:
                continue
            if det.label == label and det.score >= KIND_SHARE * min(score, other):
                return False
            if det.label != label and det.score >= OTHER and \
                    fusion.box_iou(det.box, box) >= OVER and not _matched(det, theirs):
                return False
    return True


def _simple(phrase: str) -> bool:
    """Whether ``phrase`` names one thing with no words that choose among several or
    relate it to something else (those read more than the thing's own boxes)."""
    parsed = parse_phrase(phrase)
    if parsed.plural or parsed.ordinal or parsed.last or parsed.size or parsed.spatial or \
            parsed.exclude is not None:
        return False
    text = parsed.text
    return not (portion.two(text) or portion.split(text) or relations.split(text)
                or colour_parts.possessed(text))


def seen_alike(image: np.ndarray, phrase: str, found: Localization) -> bool:
    """Whether the mirror copy's localisation may be left out for ``found``, the answer
    to ``phrase`` on ``image`` (module doc): one thing found by NanoDet on the whole frame
    (``perception.FRAME_SIDE`` px: the same tensor, so the net remembers its boxes), and
    drawn alike on the mirror image of that frame. A thing filling less than
    ``perception.SMALL`` of the frame is not said alike: the zoom search's tiles may
    decide it."""
    best = found.best
    if best is None or len(found.masks) != 1 or best.box is None or \
            not best.source.startswith("nanodet") or not _simple(phrase):
        return False
    ev = best.evidence
    if "frame" not in ev or ev["frame"] < fusion.SURE_OTHER or \
            ev.get("detector", 0.0) != ev["frame"]:      # a closer look lifted it
        return False
    detector = _Models.get().objects
    frame = shrink(as_rgb(image), FRAME_SIDE)
    scale = image.shape[1] / frame.shape[1]
    box = tuple(v / scale for v in best.box)
    if (box[2] - box[0]) * (box[3] - box[1]) < SMALL * frame.shape[0] * frame.shape[1]:
        return False
    seen = detector.detect(frame, fusion.FLOOR)
    flipped = mirrored_back(detector.detect(np.ascontiguousarray(frame[:, ::-1]),
                                            fusion.FLOOR), frame.shape[1])
    alike = boxes_alike(seen, flipped, box, best.label)
    log.debug("%r: the detector's boxes on the mirror image are %s", phrase,
              "alike" if alike else "not alike")
    return alike
