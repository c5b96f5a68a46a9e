"""A part of a thing named by where it lies in it: "the left half of the sky", "the top of
the tower", "the bottom of the sky"; and the sky named with a side of it ("the sky on the
left", "the upper sky": ``side_of``), which is one sky, not a choice among skies.

The position words also choose among look-alikes ("the left cup"), and that is how these
phrases were read: with one sky or one horse there was nothing to choose, so "darken the
top of the sky" darkened all of it and said done (wave 26). Here the thing after "of" is
located as the whole phrase would be, and each of its masks is cut to the named side of
its own box. A *half* is a cut the words define, so a resolved thing gives a resolved
half; "the top", "the left side" or "the bottom edge" end where the user says, so the cut
is offered as a question. A plural or counted thing after "of" ("the left of the two
cups") is a choice among them, not a part, and is left to the usual reading.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from pipelines.localizers.answers import WEAK
from pipelines.localizers.base import Candidate, Localization, mask_box
from pipelines.localizers.phrases import parse_phrase

#: "the <side> [<unit>] of <thing>"
PORTION = re.compile(r"^(?:the\s+)?(?P<side>left|right|top|bottom|upper|lower)"
                     r"(?:\s+(?P<unit>half|side|part|edge|end|portion|section))?\s+of\s+"
                     r"(?P<thing>.+)$")
#: which half of the box each side word keeps: (axis, first half) with axis 0 = rows
HALVES = {"top": (0, True), "upper": (0, True), "bottom": (0, False), "lower": (0, False),
          "left": (1, True), "right": (1, False)}
#: words after "of" that make it a choice among several, not a part of one
COUNTED = frozenset({"two", "three", "four", "five", "both", "all", "several", "many"})


#: position words said of the sky itself ("the sky on the left", "the upper sky"); "above"
#: and "below" relate it to another thing ("the sky above the hills": all of it)
SIDE_WORDS = {"left": "left", "leftmost": "left", "right": "right", "rightmost": "right",
              "upper": "top", "top": "top", "lower": "bottom", "bottom": "bottom"}


def side_of(words: list[str]) -> str | None:
    """The side "the sky on the left" or "the upper sky" names (``SIDE_WORDS``), or None."""
    return next((SIDE_WORDS[w] for w in words if w in SIDE_WORDS), None)


def split(text: str) -> tuple[str, str, str] | None:
    """(side, unit, thing) of "the left half of the sky" ("" when no unit), or None when
    the phrase names no part of one thing (module doc)."""
    hit = PORTION.match(" ".join(text.lower().split()))
    if not hit:
        return None
    thing = hit["thing"].strip()
    parsed = parse_phrase(thing)
    if parsed.plural or COUNTED & set(parsed.words) or not parsed.words:
        return None
    return hit["side"], hit["unit"] or "", thing


def cut(mask: np.ndarray, side: str) -> np.ndarray:
    """The ``side`` half of ``mask``'s box (a candidate's bool mask), within the mask."""
    box = mask_box(mask)
    if box is None:
        return mask
    x0, y0, x1, y1 = box
    axis, first = HALVES[side]
    lo, hi = (y0, y1) if axis == 0 else (x0, x1)
    mid = (lo + hi) // 2
    keep = np.zeros_like(mask)
    span = slice(lo, mid) if first else slice(mid, hi)
    if axis == 0:
        keep[span] = True
    else:
        keep[:, span] = True
    return mask & keep


def of(locate: Callable[[np.ndarray, str], Localization], rgb: np.ndarray, side: str,
       unit: str, thing: str) -> Localization:
    """The ``side`` part of what ``thing`` names in ``rgb`` (module doc), through
    ``locate`` (the localiser's own ``locate``)."""
    whole = locate(rgb, thing)
    if not whole.masks:
        return whole
    named = f"the {side}{f' {unit}' if unit else ''} of {thing}"
    parts = [Candidate(cut(c.mask, side), c.score, c.label, f"{c.source}+portion",
                       dict(c.evidence)) for c in whole.masks]
    parts = [p for p in parts if p.mask.any()]
    if not parts:
        return Localization([], "unresolved", f"{named}: nothing of it is left on that side "
                            f"({whole.reason}); paint it with the brush",
                            candidates=whole.candidates)
    if whole.status == "resolved" and unit == "half":
        return Localization(parts, "resolved", f"{named}: the {side} half of its outline "
                            f"({whole.reason})", plural=whole.plural, candidates=parts)
    if whole.status == "resolved":
        why = f"where the {side} of it ends is yours to say"
    else:
        why = whole.reason
    for part in parts:
        part.score = min(part.score, WEAK)
    return Localization(parts, "ambiguous", f"{named}: outlined the {side} half of it, but "
                        f"{why}; click it to confirm, or paint the part with the brush",
                        plural=whole.plural, candidates=parts)


def less(locate: Callable[[np.ndarray, str], Localization], rgb: np.ndarray, thing: str,
         left_out: str) -> Localization:
    """What ``thing`` names less what ``left_out`` names ("the sky except the clouds",
    "the car except the wheels"): the exclusion was dropped for a named thing, so the
    clouds were edited with the sky and the answer said found (wave 26). A left-out thing
    that is not there leaves the answer as it is (said so); one that cannot be told makes
    it a question."""
    found = locate(rgb, thing)
    if found.status != "resolved" or not found.masks:
        return found
    out = locate(rgb, left_out)
    if out.status == "unresolved" or not out.masks:
        found.reason += f"; no {left_out} to leave out was found ({out.reason})"
        return found
    gone = out.union()
    parts = [Candidate(c.mask & ~gone, c.score, c.label, f"{c.source}-less", dict(c.evidence))
             for c in found.masks]
    parts = [p for p in parts if p.mask.any()]
    if not parts:
        return Localization([], "unresolved", f"{thing} less {left_out}: nothing is left "
                            f"({found.reason}; {out.reason}); paint it with the brush",
                            candidates=found.candidates)
    if out.status != "resolved":
        for part in parts:
            part.score = min(part.score, WEAK)
        return Localization(parts, "ambiguous", f"{thing} less {left_out}: {found.reason}; "
                            f"but which is {left_out} is unsure ({out.reason}): click the "
                            "part you mean, or paint it with the brush", candidates=parts)
    return Localization(parts, "resolved", f"{thing} less {left_out}: {found.reason}; "
                        f"less {out.reason}", plural=found.plural, candidates=parts)


#: "the sky and the sea": two things, each with its own article (not "the black and white
#: dog" nor "the cup and saucer", one thing)
BOTH = re.compile(r"^(?P<a>(?:the|a|an|its|his|her|their|this|that) .+?),?\s+and\s+"
                  r"(?P<b>(?:the|a|an|its|his|her|their|this|that) .+)$")


def two(text: str) -> tuple[str, str] | None:
    """The two things of "the sky and the sea", or None."""
    m = BOTH.match(" ".join(text.lower().split()))
    return (m.group("a"), m.group("b")) if m else None


def both(locate: Callable[[np.ndarray, str], Localization], rgb: np.ndarray, first: str,
         second: str) -> Localization:
    """Both things of "the sky and the sea": each located as a phrase of its own; resolved
    when both are, a question offering what was found when either is unsure, and
    unresolved when either is not there (wave 27: the whole phrase found the sky alone
    and said found)."""
    found = [locate(rgb, first), locate(rgb, second)]
    missing = [(w, f) for w, f in zip((first, second), found)
               if f.status == "unresolved" or not f.masks]
    if missing:
        what, why = missing[0]
        return Localization([], "unresolved", f"{what} not found ({why.reason}), so not "
                            f"{first} and {second}")
    parts = [c for f in found for c in f.masks]
    reason = f"{first} ({found[0].reason}) and {second} ({found[1].reason})"
    if any(f.status != "resolved" for f in found):
        for part in parts:
            part.score = min(part.score, WEAK)
        return Localization(parts, "ambiguous", f"{reason}; one of them is unsure: click "
                            "what you mean, or paint it with the brush", candidates=parts)
    return Localization(parts, "resolved", reason, plural=True, candidates=parts)
