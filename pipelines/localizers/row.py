"""Place words that rank look-alikes along a row: "the woman in the middle", "the second
person from the right", "the man on the far left".

The detector's instances of the named class (every plausible one, not only those whose
outline was cut) are read left to right by their boxes; the words count from one end
("second from the right") or take the middle one. The answer is a question, never a
guess, when

* the order is not clear: the boxes counted (or the middle one's row) overlap each other
  so much that which comes first is a matter of depth (people in rows, one behind the
  other), or the row's people are of very different sizes (at different depths);
* there is no middle one (an even number) or fewer instances than the count;
* the detector saw another one there, too weakly to be a candidate (``WEAK_SEEN``): a
  person at the row's end it is unsure of may be the one the user counts from (the
  aquarium's leftmost woman, 0.31 beside a man at 0.65, was left out of the count).
  Such a one is looked at again on a crop where it fills the detector's view
  (``fusion.look_closer``): one the detector is then sure of (``CONFIRMED``) is counted
  too (the woman reads 0.54 there, so the man beside her is the second from the left);
  one it stays unsure of keeps the question, and so does one that is itself the one
  named (it was never outlined: cut on its own, the leftmost woman's outline followed
  her box on the mirror image, IoU 0.63);
* the chosen one's outline is not that instance, whole: it was cut back from a
  neighbour's box (``fusion.check_extent`` caught it), or it covers little of its box.

Phrases without such words (``rank`` is None) keep ``phrases.select_candidates``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from pipelines.localizers import fusion
from pipelines.localizers.assurance import box_fill
from pipelines.localizers.base import Candidate, Localization, resolved
from pipelines.localizers.phrases import Phrase, select_candidates
from pipelines.perception.detectors import ObjectDetector

log = logging.getLogger(__name__)

MIDDLE = frozenset({"middle", "centre", "center", "central"})
FAR = frozenset({"far", "leftmost", "rightmost", "outermost"})
#: neighbours in the row whose boxes overlap by this share of the narrower box's width
#: stand one behind the other: which comes first is unclear
OVERLAP = 0.5
#: the middle one's row: the others' box heights within this factor of its own, and their
#: vertical centres inside its box (a second row, or someone far behind, is no row)
HEIGHTS = 2.0
#: the chosen outline must fill this share of its box to be the whole instance
MIN_FILL = 0.25
#: a detection of the class this sure, not one of the candidates nor mostly inside one,
#: is an instance the count may have missed
WEAK_SEEN = 0.2
#: a weak one looked at again this sure is an instance, counted (``assurance``'s sure)
CONFIRMED = 0.44
#: a question offers the outlines nearest where the words point: this many, or the count
#: and two more ("the fourth from the left": the six from that end)
OFFER = 3


def rank(parsed: Phrase) -> tuple[str, int] | None:
    """``("middle", 0)``, ``("left", k)`` or ``("right", k)`` when the phrase ranks
    instances along a row; None otherwise (place words are then nearness to a point)."""
    words = set(parsed.words)
    sides = [s for s in ("left", "right") if s in words or f"{s}most" in words]
    if parsed.size or parsed.last or parsed.corner or parsed.plural or len(sides) > 1:
        return None
    if parsed.ordinal and sides:
        return sides[0], parsed.ordinal
    if sides and words & FAR and parsed.vertical is None:
        return sides[0], 1
    if words & MIDDLE and not sides and not parsed.ordinal and \
            parsed.vertical in (None, "centre"):
        return "middle", 0
    return None


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Horizontal overlap of two boxes as a share of the narrower one's width."""
    inter = min(a[2], b[2]) - max(a[0], b[0])
    return max(0.0, inter) / max(1.0, min(a[2] - a[0], b[2] - b[0]))


def order(boxes: list[tuple[float, ...]], how: tuple[str, int]) -> tuple[int | None, str]:
    """The index (into ``boxes``) the rank names, or None with why it cannot be told."""
    side, k = how
    n = len(boxes)
    along = sorted(range(n), key=lambda i: (boxes[i][0] + boxes[i][2]) / 2)
    if side == "right":
        along = along[::-1]
    if side == "middle":
        if n < 3 or n % 2 == 0:
            return None, f"there are {n}: no one is in the middle"
        pick, counted = along[n // 2], along
        x0, y0, x1, y1 = boxes[pick]
        for i in along:
            bx0, by0, bx1, by1 = boxes[i]
            tall = max(y1 - y0, by1 - by0) / max(1.0, min(y1 - y0, by1 - by0))
            if tall > HEIGHTS or not y0 <= (by0 + by1) / 2 <= y1:
                return None, "they are not in one row (some stand behind, or higher up)"
    else:
        if k > n:
            return None, f"there are only {n}"
        pick, counted = along[k - 1], along[:k + 1]
    for a, b in zip(counted, counted[1:]):
        if _overlap(boxes[a], boxes[b]) > OVERLAP:
            return None, "some stand one behind the other, so their order is unclear"
    return pick, ""


def along(masks: list[Candidate], side: str, boxes: list[tuple[float, ...]]
          ) -> list[Candidate]:
    """The outlines from the named end of the row (nearest the row's middle first, for the
    middle): a question offers the first of them, where the one meant may be (the user
    sees them best score first)."""
    def x(m: Candidate) -> float:
        box = m.bbox or (0, 0, 0, 0)
        return (box[0] + box[2]) / 2

    if side == "middle":
        centres = sorted((b[0] + b[2]) / 2 for b in boxes)
        mid = centres[len(centres) // 2] if centres else 0.0
        return sorted(masks, key=lambda m: abs(x(m) - mid))
    return sorted(masks, key=x, reverse=side == "right")


def _outline(masks: list[Candidate], box: tuple[float, ...]) -> Candidate | None:
    """The cut outline whose box is ``box`` (None when it was not cut)."""
    best = max(masks, key=lambda m: fusion.box_iou(m.bbox or (0, 0, 0, 0), box), default=None)
    if best is None or fusion.box_iou(best.bbox or (0, 0, 0, 0), box) < 0.9:
        return None
    return best


def missed(objects: list[fusion.ObjectEvidence], seen: list[fusion.ObjectEvidence],
           label: str) -> list[tuple[float, ...]]:
    """Boxes of ``seen`` the detector gives ``label`` at ``WEAK_SEEN`` or more that are none
    of ``objects`` (nor mostly inside one): instances left out of the count."""
    return [o.box for o in seen if o.scores.get(label, 0.0) >= WEAK_SEEN and not any(
        _one(o.box, c.box) for c in objects)]


def _one(box: tuple[float, ...], other: tuple[float, ...]) -> bool:
    """Whether ``box`` is the instance of ``other`` (overlapping it, or mostly inside it)."""
    return fusion.box_iou(box, other) >= 0.3 or fusion.inside_share(box, other) >= 0.5


def _before(box: tuple[float, ...], pick: tuple[float, ...], side: str) -> bool:
    """Whether ``box`` is counted before ``pick`` from ``side`` (anywhere, for the middle)."""
    centre, own = (box[0] + box[2]) / 2, (pick[0] + pick[2]) / 2
    return side == "middle" or (centre < own if side == "left" else centre > own)


@dataclass
class Looks:
    """What a second look at a weaker detection needs: the detector and the photo."""

    detector: ObjectDetector
    rgb: np.ndarray


def _confirmed(objects: list[fusion.ObjectEvidence], seen: list[fusion.ObjectEvidence],
               label: str, looks: Looks | None) -> list[fusion.ObjectEvidence]:
    """``objects`` and the weaker ones of ``seen`` the count may have missed that a closer
    look (``fusion.look_closer``) makes the detector sure of (``CONFIRMED``)."""
    if looks is None:
        return objects
    left = set(missed(objects, seen, label))
    weak = [o for o in seen if o.box in left]
    sure = []
    for obj in sorted(weak, key=lambda o: -o.scores.get(label, 0.0)):
        if any(_one(obj.box, s.box) for s in sure):
            continue
        fusion.look_closer(looks.detector, looks.rgb, obj)
        if obj.scores.get(label, 0.0) >= CONFIRMED:
            log.debug("row: a weak %s at %s confirmed (%.2f)", label, obj.box,
                      obj.scores[label])
            sure.append(obj)
    return objects + sure


def choose(masks: list[Candidate], objects: list[fusion.ObjectEvidence], parsed: Phrase,
           what: str, seen: list[fusion.ObjectEvidence] = (), label: str = "",
           looks: Looks | None = None) -> Localization:
    """The instance the phrase's row words name among ``objects`` (their outlines are
    ``masks``, those cut; ``seen``: every object the detector saw, ``label`` the class), or
    a question with the outlines to click; words that do not rank a row (``rank``) choose
    as ``phrases.select_candidates``. With ``looks``, a weaker one where the count runs is
    looked at again (module doc)."""
    how = rank(parsed)
    if how is None or len(objects) < 2 or not masks:
        return select_candidates(masks, parsed, what)
    side, k = how
    said = "in the middle" if side == "middle" else f"number {k} from the {side}"

    def ask(why: str) -> Localization:
        log.debug("row: %s %s: %s", what, said, why)
        offered = along(masks, side, [o.box for o in objects])[:max(OFFER, k + 2)]
        return Localization(offered, "ambiguous", f"which {what} is {said} is unclear: {why}; "
                            "click the one you mean", candidates=masks)

    pick, why = order([o.box for o in objects], how)
    if pick is None:
        return ask(why)
    obj, added = objects[pick], []
    if any(_before(box, obj.box, side) for box in missed(objects, list(seen), label)):
        counted = _confirmed(objects, list(seen), label, looks)
        added = counted[len(objects):]
        pick, why = order([o.box for o in counted], how) if len(counted) > len(objects) \
            else (None, "")
        if pick is None:
            return ask(why or f"the detector also saw a {what} it is unsure of where I "
                       "would count")
        objects, obj = counted, counted[pick]
        if any(_before(box, obj.box, side) for box in missed(objects, list(seen), label)):
            return ask(f"the detector also saw a {what} it is unsure of where I would count")
    found = _outline(masks, obj.box)
    if found is None and any(obj is o for o in added):
        return ask(f"the {what} {said} was seen only on a closer look, and not outlined")
    if found is None:
        return ask(f"the {what} {said} was not among those I outlined")
    if fusion.CAUGHT in obj.why:
        return ask(f"the outline of the {what} {said} ran into a neighbour's and was cut "
                   "back, so where it ends is a guess")
    if box_fill(found.mask, obj.box) < MIN_FILL:
        return ask(f"the outline of the {what} {said} covers only part of its box")
    return resolved([found], f"the {what} {said} of {len(objects)}", masks)
