"""The salient subject as a stand-in for a noun no detector class names, narrowed by what
the noun is (issue 34: a noun reaches what the eyes know through WordNet).

The stand-in alone is only a guess (``assurance``). Two second cues narrow it to the
named thing; the shape confirms it, the kind only makes a better guess:

* **shape** — a round noun ("the water drop", "the bead"; ``assurance.ROUND``) is the
  subject's round part (``shapes.round_part``), not the grass blade it hangs on;
* **kind** — a noun WordNet files under plants, plant parts or food ("the fig": an
  edible fruit) is what the detector sees there as one of its food or plant classes
  (``KIND_CLASSES``; detectors confuse fruit as they confuse animals: a halved fig reads
  as a donut), when that detection lies inside the subject, is smaller than it (the
  fig in its bowl), stands out in colour from the rest of the subject (a bush on a
  hillside read as broccoli does not) and is weak: a sure detection says the thing *is*
  that class (an orange is no strawberry). The detection's box is cut out at the crop's
  level, as any detected thing is. It stays a question with that part as the guess: a
  weak food detection would stand as well for "the lemon" asked of the fig.

Anything else comes back unchanged and stays a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from pipelines.localizers.assurance import DETECTOR_SURE, is_round
from pipelines.localizers.base import Localization
from pipelines.localizers.shapes import round_part
from pipelines.perception.detectors import shrink
from pipelines.perception.words import WordMatch, understood

#: the detector's classes that stand for each WordNet category of plants and food
_FOOD = ("banana", "apple", "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza",
         "donut", "cake", "potted plant")
KIND_CLASSES: dict[str, tuple[str, ...]] = {"food": _FOOD, "plant part": _FOOD,
                                            "plant": _FOOD}
#: a detection of the noun's kind needs this score to narrow the subject (tune: the fig
#: read as a donut at 0.32; the specks on a twig or a blade score under 0.2), and less
#: than ``assurance.DETECTOR_SURE``: a surer one is that class (oranges at 0.48-0.69
#: where "the strawberry" was asked for and there is none), and the subject stays a guess
KIND_SCORE = 0.3
#: ... this share of its box inside the subject's mask
INSIDE = 0.6
#: ... and at most this share of the subject's area: it is a part of what stands out
SMALLER = 0.7
#: long side of the frame the detector sees
FRAME_SIDE = 1024
#: the thing stands out from the rest of the subject by this Lab distance of their mean
#: colours, L* 0-100 (tune: the fig in its bowl 28; a bush on a hillside read as broccoli,
#: where "the berry" was asked for and there is none, 15)
STANDS_OUT = 22.0


def narrow(found: Localization, rgb: np.ndarray, match: WordMatch, models: Any,
           refine: Callable[[np.ndarray, tuple[float, ...]], np.ndarray]) -> Localization:
    """``found`` narrowed by the noun's shape or kind when it is a salient stand-in
    (module doc), else as it was.

    Args:
        found: the localiser's answer.
        rgb: uint8 (H, W, 3), the photo.
        match: what the noun was read as (its words and WordNet category).
        models: the localiser's loaded nets (``models.get().objects`` is the detector).
        refine: a box (full-resolution) → the pixel mask of the thing in it.
    """
    if found.status != "resolved" or len(found.masks) != 1:
        return found
    top = found.masks[0]
    if top.source != "u2netp" or "salient" not in top.evidence or top.evidence.get("kind") \
            or top.evidence.get("kind_guess"):
        return found
    if is_round(match.noun):
        got = round_part(rgb, top.mask)
        if got is not None:
            top.mask, roundness = got
            top.box = None
            top.evidence["shape"] = round(roundness, 3)
            # the shape, not WordNet's first sense ("drop: a landform"), said what it is
            lead = f"{understood(match)}; found the salient {match.category}: "
            if match.category and found.reason.startswith(lead):
                found.reason = found.reason[len(lead):]
            found.reason += (f"; kept its round part (a {match.noun.split()[-1]} is round; "
                             f"the outline runs round it over {roundness:.0%} of the turn)")
        return found
    classes = KIND_CLASSES.get(match.category)
    if not classes:
        return found
    frame = shrink(rgb[..., :3], FRAME_SIDE)
    scale = rgb.shape[1] / frame.shape[1]
    area = max(1, int(top.mask.sum()))
    for det in models.get().objects.detect(frame, KIND_SCORE):      # best first
        if det.label not in classes:
            continue
        box = tuple(v * scale for v in det.box)
        x0, y0, x1, y1 = (max(0, int(v)) for v in box)
        size = max(1, (x1 - x0) * (y1 - y0))
        if top.mask[y0:y1, x0:x1].sum() < INSIDE * size or size > SMALLER * area:
            continue
        if det.score >= DETECTOR_SURE:      # it is an orange, not "the strawberry"
            return found
        mask = refine(rgb, box) & top.mask
        if not mask.any() or _contrast(rgb, mask, top.mask) < STANDS_OUT:
            continue        # a bush on a hill read as broccoli: no thing of its own
        top.mask, top.box = mask, (x0, y0, x1, y1)
        # a weak detection of a food or plant class, not of the noun itself: the best
        # guess (the fig, not its bowl), still a question ("the lemon" would find it too)
        top.evidence["kind_guess"] = round(float(det.score), 3)
        found.reason += (f"; narrowed to the food or plant the detector sees inside it "
                         f"(read as a {det.label}, {det.score:.2f}; a "
                         f"{match.noun.split()[-1]} is a {match.category})")
        return found
    return found



def _contrast(rgb: np.ndarray, part: np.ndarray, whole: np.ndarray) -> float:
    """The Lab distance between the mean colours of ``part`` and of the rest of
    ``whole`` (on every 4th pixel; 0 when nothing of ``whole`` is left)."""
    inner, rest = part[::4, ::4], (whole & ~part)[::4, ::4]
    if not inner.any() or not rest.any():
        return 0.0
    lab = cv2.cvtColor(np.ascontiguousarray(rgb[::4, ::4, :3]).astype(np.float32) / 255.0,
                       cv2.COLOR_RGB2Lab)
    return float(np.linalg.norm(lab[inner].mean(axis=0) - lab[rest].mean(axis=0)))
