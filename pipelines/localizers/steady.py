"""An answer that holds on another exposure of the same photo, or a question.

A localiser's rules read colours and levels: a sky is *pale or blue and smooth*, a subject
is *brighter than its ground*, a shadow is *a little darker*. Where a region sits near one
of those limits (a pale facade under a pale sky, a sea of the sky's blue, a support of the
subject's tone) its answer is decided by a few levels of exposure, and the answer that
takes the wrong region is given as calmly as the right one. ``settle`` asks the same
localiser again on a darker and a lighter copy of the photo (a gamma of ``GAMMAS``, which
keeps every edge where it is; at most ``COPY_SIDE`` px long). When one of them resolves to
a region that differs from the first answer by more than ``STEADY`` (``agreement``), where
the thing ends is decided by the exposure, not by the photo: the answer becomes a
question, with both extents offered to click.

A copy that does not resolve (it asks, or finds nothing) is no evidence either way: on the
tune set a right sky and a right dog ask on the lighter copy. But for one: a copy that
finds the same region (``STEADY``) and doubts only where it ends (the sky's own questions,
``sky.ends_unsure`` and ``sky_pockets.pockets_unsure``: foliage, cloud banks, pockets, a
backdrop's flat edge, each a share measured against a limit) says that the first answer's
extent sits near that limit too, and its doubt holds for the first (``DOUBTS_HOLD``): on a
darker print of the giraffes' photo the sky seen through the crowns was left out (IoU 0.73,
"a deeper blue" done on 76 % of the sky) while the photo as shot asked about that fringe.
A found thing's own question about where it ends (``EXTENT_DOUBT``: a larger box of its
kind, its outline past its box) holds the same way; a thing the detector found is also
asked on the mirror image (``DETECTED_COPIES``), where the detector draws other boxes;
that copy's whole localisation is run only where the detector alone, run on the mirror
image of the frame, draws the thing's boxes otherwise (``mirror_boxes.seen_alike``).
The right sky that asks on its lighter copy (hazy mountains taken in there) asks about
another extent, and stays found. Answers to a hint (a click,
a brush, a box) are the user's and are not asked again.

Measured on the real tune set (``eval.realset``, each case as shot), the 33 answers that
resolve and are right agree with every copy that resolves by 0.89 or more, but one: a
ploughed field on the darker copy, 0.781 (its plain IoU 0.773). The mirror image agreed
by 0.917 or more (a number plate); it is asked only of what the detector found. A smaller copy
was not taken: at half size a right bottle and a right lettering drop to an IoU of 0.55
and 0.63 (their details fall under the detectors' sizes).
"""

from __future__ import annotations

import logging
import re

import cv2
import numpy as np

from pipelines.localizers.base import Candidate, Hint, Localization, Localizer
from pipelines.localizers.mirror_boxes import seen_alike
from pipelines.localizers.sky_pockets import pale_doubt

log = logging.getLogger(__name__)

#: the copies asked again: darker and lighter (``eval.realset.printed``'s gamma prints).
#: The mirror image ("left" and "right" swapped) is supported but not asked by default: on
#: the tune set no answer moved on it (rights 0.917 and above), and each copy costs a whole
#: localisation (1-1.3 s for a detected person or cat on this machine)
COPIES = ("darker", "lighter")
GAMMAS = {"darker": 1.25, "lighter": 0.8}
#: the least ``agreement`` between the first answer and a copy's resolved answer (tune:
#: rights 0.781 and above; a sky that takes a facade a third of its size is at 0.75)
STEADY = 0.75
#: the copies are asked at most this many px long (a 16-MP photo's copies at its full size
#: tripled a turn's localising; the rules read the frame on copies of 512-1,024 px)
COPY_SIDE = 2048
#: the work size and the edge band of ``agreement``
WORK_SIDE, EDGE_SHARE = 1024, 0.02
WHY = {"darker": "the exposure", "lighter": "the exposure", "mirrored": "the way it is seen"}
#: the labels whose questions doubt where one region ends (module doc): a copy asking one
#: about the same extent makes the first answer a question. Other localisers' questions
#: choose between things or kinds, and are no evidence (a right dog asks on a lighter copy)
DOUBTS_HOLD = ("sky",)
#: ... and the evidence a found thing's question about where it ends carries when the
#: detector draws more of it than the outline holds (``assurance``: a larger box of its
#: kind around it; ``perception``: its outline ran past its box): a copy asking it of the
#: same region makes the first answer a question too (tune prints: a kookaburra whose
#: branch in front of it was taken, IoU 0.74, asked "ran past its box" on its darker copy
#: at 0.88 agreement; an owl cut off at its branch, IoU 0.75, asked "a larger owl" on its
#: mirror image at 1.00). Doubts that sit on a share's limit are not held: a right black
#: dog (0.97) whose box "runs out of the photo" beyond its outline on a darker or mirrored
#: copy only, a right kitten (0.96) that "fills 33 % of its box" (35 % is the limit) on a
#: lighter one. On the 95 tune answers that resolve as shot, and on the support, focus,
#: text and logo cases' mirrored, darker and lighter prints, no right answer moved
EXTENT_DOUBT = "extent_doubt"
#: ... held when the copy's doubting reading (a larger box's score; 1 for an outline past
#: its box) is this share of the first answer's own detector score: a right cat (0.98) on
#: a darker print asked on its darker copy about a larger cat of 0.23 against its own 0.50,
#: while the owl's larger box (0.44) stood against its own 0.50
HOLD_SHARE = 0.7
#: a detector's boxes are not the same on a mirror image (the owl's larger box is drawn
#: on one side only): a thing found through the detector is asked on the mirror image too
#: (one more localisation, 1.2-1.7 s of a 12-MP turn; on the 95 tune answers that resolve
#: as shot, the mirror image agreed with every one it resolved, by 0.75 or more), unless
#: the detector draws it alike there (``mirror_boxes``: one net pass instead)
DETECTED_COPIES = (*COPIES, "mirrored")


def exposed(image: np.ndarray, gamma: float) -> np.ndarray:
    """``image`` (uint8, RGB or RGBA) through a gamma curve; alpha is kept."""
    lut = np.round(255.0 * (np.arange(256) / 255.0) ** gamma).astype(np.uint8)
    out = lut[image]
    if image.ndim == 3 and image.shape[2] == 4:
        out[..., 3] = image[..., 3]
    return out


def _shrunk(image: np.ndarray) -> np.ndarray:
    """``image`` at most ``COPY_SIDE`` px long (the copies are made from it)."""
    h, w = image.shape[:2]
    k = COPY_SIDE / max(h, w)
    if k >= 1.0:
        return image
    return cv2.resize(image, (max(1, round(w * k)), max(1, round(h * k))),
                      interpolation=cv2.INTER_AREA)


def mirrored(image: np.ndarray, phrase: str) -> tuple[np.ndarray, str]:
    """The mirror image of ``image`` and ``phrase`` with "left" and "right" swapped."""
    swap = {"left": "right", "right": "left"}
    return (np.ascontiguousarray(image[:, ::-1]),
            re.sub(r"\b(left|right)\b", lambda m: swap[m.group(1)], phrase))


def _copy(image: np.ndarray, phrase: str, how: str) -> tuple[np.ndarray, str]:
    """The copy ``how`` of ``image`` and the words to ask it with."""
    if how == "mirrored":
        return mirrored(image, phrase)
    return exposed(image, GAMMAS[how]), phrase


def agreement(a: np.ndarray, b: np.ndarray) -> float:
    """The IoU of two masks (``b`` may be at another size), forgiving a thin band along
    their edges: a GrabCut outline wobbles by a few pixels between copies (a right
    motorcycle half the frame's height overlaps its own answer on a lighter copy by
    0.74), while a region taken or left (a facade, the sea, the trunk under an animal) is
    thick. The two masks are compared on a copy at most ``WORK_SIDE`` px long, where their
    difference is opened by ``EDGE_SHARE`` of the union's size (at least one pixel)
    before it is counted."""
    return _agree(_work(a), b)


def _work(mask: np.ndarray, size: tuple[int, int] | None = None) -> np.ndarray:
    """``mask`` on a copy at most ``WORK_SIDE`` px long (or of ``size``, w × h)."""
    if size is None:
        h, w = mask.shape
        k = min(1.0, WORK_SIDE / max(h, w))
        size = (max(1, round(w * k)), max(1, round(h * k)))
    if (mask.shape[1], mask.shape[0]) == size:
        return mask.astype(bool)
    return cv2.resize(mask.view(np.uint8) * np.uint8(255), size,
                      interpolation=cv2.INTER_AREA) >= 128


def _agree(small: np.ndarray, b: np.ndarray) -> float:
    other = _work(b, (small.shape[1], small.shape[0]))
    union = np.count_nonzero(small | other)
    if not union:
        return 1.0
    r = max(1, round(EDGE_SHARE * np.sqrt(union)))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    thick = cv2.morphologyEx((small ^ other).astype(np.uint8), cv2.MORPH_OPEN, disc)
    return 1.0 - float(np.count_nonzero(thick)) / union


def _same_doubt(found: Localization, other: Localization, small: np.ndarray, side: str
                ) -> str | None:
    """The copy's doubt (its reason past "but") when ``other``, the ``side`` copy's answer,
    asks about one region of a ``DOUBTS_HOLD`` label, or about where a found thing ends
    (``EXTENT_DOUBT``, at least ``HOLD_SHARE`` of the first answer's detector score), and
    agrees with the first answer (``small``, at the work size) by ``STEADY`` or more; else
    None (module doc). A lighter copy's doubt about a sky's pale pixels is its own making
    (``sky_pockets.pale_doubt``)."""
    first, seen = found.best, other.best
    if other.status != "ambiguous" or first is None or seen is None or \
            seen.label != first.label:
        return None
    region = first.label in DOUBTS_HOLD and len(other.masks) == 1
    if not region and seen.evidence.get(EXTENT_DOUBT, 0.0) < \
            max(1e-6, HOLD_SHARE * first.evidence.get("detector", 0.0)):
        return None
    if region and side == "lighter" and pale_doubt(seen.evidence):
        return None
    mask = np.asarray(seen.mask, bool)
    if _agree(small, mask[:, ::-1] if side == "mirrored" else mask) < STEADY:
        return None
    why = other.reason.rsplit("; but ", 1)[-1]
    return why if why != other.reason else f"asked: {other.reason}"


def settle(localizer: Localizer, image: np.ndarray, phrase: str,
           hint: Hint | None = None, found: Localization | None = None,
           copies: tuple[str, ...] | None = None) -> Localization:
    """``localizer.locate(image, phrase, hint)``, asked again on the ``COPIES`` when it
    resolves without a hint (module doc).

    Args:
        localizer: any localiser.
        image: uint8 HWC at full resolution.
        phrase: the words, as given to ``locate``.
        hint: the user's click, brush or box; when it is given nothing is asked again.
        found: the first answer when the caller has it already.
        copies: which copies to ask; by default ``COPIES``, and ``DETECTED_COPIES`` for
            a thing found through the detector. The mirror image is left out where the
            detector draws the thing alike on it (``mirror_boxes.seen_alike``).

    Returns:
        The first answer, or an ``ambiguous`` one offering both extents when a copy
        resolves to a region that differs by more than ``STEADY``.
    """
    if found is None:
        found = localizer.locate(image, phrase, hint)
    first = found.union() if found.status == "resolved" else None
    if (hint is not None and hint.given) or first is None or not first.any():
        return found
    base, small = _shrunk(image), _work(first)
    if copies is None:
        detected = found.best is not None and "detector" in found.best.evidence
        copies = DETECTED_COPIES if detected else COPIES
    # the detector draws it alike on the mirror image (``mirror_boxes``): that copy is not
    # asked. Checked first, while the net still remembers the frame's boxes
    alike = "mirrored" in copies and seen_alike(image, phrase, found)
    for side in copies:
        if side == "mirrored" and alike:
            continue
        other = localizer.locate(*_copy(base, phrase, side), None)
        doubt = _same_doubt(found, other, small, side)
        if doubt is not None:
            log.info("%r: the %s copy doubts the same extent", phrase, side)
            return Localization(found.masks, "ambiguous", f"{found.reason}; but on a {side} "
                                f"copy of the photo the same region was found and {doubt}",
                                candidates=found.candidates)
        seen = other.union() if other.status == "resolved" else None
        if seen is None:
            continue
        if side == "mirrored":
            seen = np.ascontiguousarray(seen[:, ::-1])
        agree = _agree(small, seen)
        if agree >= STEADY:
            continue
        log.info("%r is not steady: agreement %.3f with the %s copy", phrase, agree, side)
        kept = found.best if not found.plural else found.masks[0]
        if seen.shape != first.shape:     # offered (and compared) at the photo's size
            seen = cv2.resize(seen.view(np.uint8), (first.shape[1], first.shape[0]),
                              interpolation=cv2.INTER_NEAREST) > 0
        change = np.count_nonzero(seen) / max(1, np.count_nonzero(first)) - 1.0
        alt = Candidate(seen, min(kept.score, other.best.score), kept.label,
                        f"{other.best.source}, on a {side} copy")
        return Localization(
            [kept, alt], "ambiguous",
            f"'{phrase}': where it ends changes with {WHY[side]} (on a {side} copy of "
            f"the photo it covers {abs(change):.0%} {'more' if change > 0 else 'less'}, "
            f"overlap {agree:.2f}); click it to say which: {found.reason}",
            candidates=[kept, alt])
    return found
