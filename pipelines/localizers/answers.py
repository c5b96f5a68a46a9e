"""How the perception localiser words and decides its answers: scores kept in [0, 1],
candidates that repeat one another dropped, plural/ordinal/place words applied, and the
line that says what the detector did see when nothing fits.
"""

from __future__ import annotations

import numpy as np

from pipelines.localizers.base import Candidate, Localization
from pipelines.localizers.phrases import Phrase, select_candidates
from pipelines.perception.detectors import Detection
from pipelines.perception.words import WordMatch

#: below this best score the answer is ``ambiguous``: shown, but the user is asked to paint
CONFIDENT = 0.35
#: the score an answer gets when it is only shown to click, never edited unasked
WEAK = 0.3


def calibrated(score: float) -> float:
    """A score clipped to [0, 1]."""
    return float(np.clip(score, 0.0, 1.0))


def int_box(box: tuple[float, ...]) -> tuple[int, int, int, int]:
    """A box rounded to whole pixels."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    return x0, y0, x1, y1


def what_for(match: WordMatch) -> str:
    """What the answer calls the target: the user's noun, with the class it matched."""
    if match.noun and match.noun != match.label:
        return f"{match.noun} ({match.label})"
    return match.label


def seen_line(seen: list[Detection]) -> str:
    """'; I saw: a cup (0.53), a person (0.31)' — what the detector did find."""
    best: dict[str, float] = {}
    for d in seen:
        best[d.label] = max(best.get(d.label, 0.0), d.score)
    if not best:
        return "; the detector saw none of its 80 object classes"
    items = sorted(best.items(), key=lambda kv: -kv[1])[:4]
    return "; I saw: " + ", ".join(f"{label} ({score:.2f})" for label, score in items)


def distinct_masks(cands: list[Candidate]) -> list[Candidate]:
    """Drop a candidate mostly inside a better one (the frame and a zoomed tile seeing the
    same object, or a part of it)."""
    kept: list[tuple[Candidate, int]] = []       # with its area, counted once
    for cand in cands:
        own = cand.area
        area = max(1, own)
        if all(np.count_nonzero(np.logical_and(cand.mask, k.mask)) < 0.6 * min(area, k_area)
               for k, k_area in kept):
            kept.append((cand, own))
    return [k for k, _ in kept]


def decide(cands: list[Candidate], parsed: Phrase, what: str,
            seen: list[Detection]) -> Localization:
    """Plural/ordinal/size/place words pick; a low best score stays ``ambiguous``."""
    if not cands:
        return Localization([], "unresolved", f"no {what} found{seen_line(seen)}")
    cands = distinct_masks(sorted(cands, key=lambda m: -m.score))
    confident = [c for c in cands if c.score >= CONFIDENT]
    if not confident:
        return Localization(cands, "ambiguous",
                            f"unsure: the best {what} scored {cands[0].score:.2f} (below "
                            f"{CONFIDENT:.2f}){seen_line(seen)}; paint it with the brush")
    selectors = parsed.plural or parsed.ordinal or parsed.last or parsed.size or \
        parsed.spatial
    if selectors:
        found = select_candidates(confident, parsed, what)
    elif len(confident) == 1 or confident[0].score - confident[1].score >= 0.15:
        found = Localization([confident[0]], "resolved", f"resolved to the {what}",
                             candidates=cands)
    else:
        found = Localization(confident, "ambiguous", f"{len(confident)} {what}s match; say "
                             "which (left/right, biggest, first…) or 'all'")
    if found.status == "resolved":
        scores = ", ".join(f"{m.score:.2f}" for m in found.masks)
        found.reason = f"{found.reason} (confidence {scores})"
    return found
