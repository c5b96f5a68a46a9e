"""The photo's main subject taken for words no class fits ("the hedgehog"): how the answer
reads and which of its parts is kept, and which detections hold it.

``PerceptionLocalizer._salient`` finds the salient parts and the detections that may
explain them; what follows once one subject is taken lives here (a pure function of the
answer and the photo): the reason says what the subject was taken as, a noun whose things
are usually one colour ("the leaves") keeps that coloured part, and a support cut away
("left out what it sits on") is said.
"""

from __future__ import annotations

import numpy as np

from pipelines.localizers import parts as colour_parts
from pipelines.localizers.base import Localization
from pipelines.localizers.phrases import Phrase
from pipelines.perception import words as kinds
from pipelines.perception.detectors import Detection
from pipelines.perception.words import WordMatch


def described(found: Localization, rgb: np.ndarray, match: WordMatch, parsed: Phrase
              ) -> Localization:
    """``found`` with its reason written, and its typical-colour part kept, when resolved.

    Args:
        found: the salient answer (resolved, ambiguous or unresolved).
        rgb: the photo (uint8 HWC, full resolution).
        match: how the words were read (the noun, its category).
        parsed: the phrase's cues (colours, plural).
    """
    if found.status != "resolved":
        return found
    top = found.masks[0]
    found.reason = (f"took the photo's main subject as {match.noun!r} (no detector "
                    f"class fits the word; salient {top.evidence.get('salient', 0):.2f}"
                    f", confidence {top.score:.2f})")
    if match.category:     # "squirrel: an animal; found the salient animal"
        found.reason = f"{kinds.understood(match)}; found the salient " \
            f"{match.category}: {found.reason}"
    word = match.noun.split()[-1] if match.noun else ""
    if word in colour_parts.TYPICAL_COLOURS and not parsed.colors:
        part = colour_parts.part_within(rgb, found.union(), word,
                                        every=parsed.plural, grow=0.0)
        if part is not None:        # the twig stands out; its leaves are green
            top.mask = part
            found.masks = [top]
            found.reason += (f"; kept its {' or '.join(colour_parts.TYPICAL_COLOURS[word])}"
                             f" part ({word} are usually that colour)")
    if top.evidence.get("support_cut"):
        found.reason += (f"; left out what it sits on ({top.evidence['support_cut']:.0%}"
                         " of the salient region)")
    return found


def covers(det: Detection, mask: np.ndarray, scale: float) -> bool:
    """Whether a frame detection's box (frame pixels, ``scale`` to full resolution) holds
    most of ``mask``."""
    x0, y0, x1, y1 = (int(v * scale) for v in det.box)
    inside = np.count_nonzero(mask[max(0, y0):y1, max(0, x0):x1])
    return inside > 0.5 * max(1, np.count_nonzero(mask))


def in_subject(det: Detection, subject: np.ndarray) -> bool:
    """Whether a detection (full-resolution box) is part of the salient subject: its box
    holds most of the subject, or the subject fills much of its box."""
    x0, y0, x1, y1 = (max(0, int(v)) for v in det.box)
    inside = np.count_nonzero(subject[y0:y1, x0:x1])
    return inside > 0.5 * max(1, np.count_nonzero(subject)) or \
        inside > 0.4 * max(1, (x1 - x0) * (y1 - y0))


#: a detection of the subject's own kind elsewhere counts as a look-alike from this score
LOOKALIKE_SCORE = 0.5
#: ... and from this share of the subject's box area (a herd far off is not a rival)
LOOKALIKE_AREA = 0.05


def lookalikes(kind: Detection, dets: list[Detection], mask: np.ndarray, scale: float
               ) -> list[Detection]:
    """The detections of the subject's own kind (``kind``, the detection that says what
    sort of thing the guessed subject is: "cow" for "the bison") that lie apart from it,
    sure and large enough to be another one the words may name: "the bison" beside a
    second bison is a question, not the one that stands out. Boxes in frame pixels,
    ``scale`` to ``mask``'s."""
    x0, y0, x1, y1 = kind.box
    area = max(1.0, (x1 - x0) * (y1 - y0))
    found = []
    for d in dets:
        if d.label != kind.label or d.score < LOOKALIKE_SCORE:
            continue
        bx0, by0, bx1, by1 = d.box
        if (bx1 - bx0) * (by1 - by0) < LOOKALIKE_AREA * area:
            continue
        if in_subject(Detection(tuple(v * scale for v in d.box), d.score, d.label), mask):
            continue        # the subject itself (``kind``'s own box), or a box mostly of it
        found.append(d)
    return found
