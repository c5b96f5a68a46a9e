"""Where a thing is said to be against another: "the white flower under the butterfly"
(issue 34: a noun no detector knows, told apart from its look-alikes by a noun it does).

When the target alone is a question (two white regions match), the anchor named after
the relation word is located; if it is found for sure, the candidates on the named side
of it are kept and the one nearest to it is the answer, when it is clearly nearer than
the next (``CLEAR``). Otherwise the answer stays the question it was. A target that was
resolved, refused or whose anchor is not found is left as it was: the relation only
chooses, it never finds anything on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from pipelines.localizers.base import Candidate, Localization
from pipelines.localizers.segment import centroid

#: "<target> <relation> the <anchor>"
RELATION = re.compile(r"^(?P<target>.+?)\s+(?P<rel>under|underneath|beneath|below|above|"
                      r"over|on top of|next to|beside|near|by)\s+(?:the|a|an|this|that)\s+"
                      r"(?P<anchor>[a-z' -]+)$")
#: which side each word keeps: (axis, sign) with axis 0 = x, 1 = y; None keeps any side
SIDES = {"under": (1, 1), "underneath": (1, 1), "beneath": (1, 1), "below": (1, 1),
         "above": (1, -1), "over": (1, -1), "on top of": (1, -1), "next to": None,
         "beside": None, "near": None, "by": None}
#: the nearest candidate must be this many times nearer than the next to be the answer
CLEAR = 1.5
#: the chosen one must lie this near the anchor (share of the frame's diagonal, from its
#: centroid to the anchor's nearest pixel): "under the butterfly" is by the butterfly
NEAR = 0.08
#: the most a choice made by a relation is trusted
SURE = 0.5


def split(text: str) -> tuple[str, str, str] | None:
    """(target, relation, anchor) of "the white flower under the butterfly", or None."""
    m = RELATION.match(" ".join(text.lower().split()))
    if not m or not m.group("target").strip():
        return None
    return m.group("target").strip(), m.group("rel"), f"the {m.group('anchor').strip()}"


def _gap(cand: Candidate, anchor: np.ndarray) -> float:
    """The distance (share of the frame's diagonal) between a candidate's centroid and
    the anchor's nearest pixel (coarse: on every 8th pixel)."""
    h, w = anchor.shape
    ys, xs = np.nonzero(anchor[::8, ::8])
    if ys.size == 0:
        return 1.0
    cx, cy = centroid(cand.mask)
    return float(np.min(np.hypot(xs * 8 / w - cx, ys * 8 / h - cy)))


def choose(locate: Callable[[np.ndarray, str], Localization], rgb: np.ndarray,
           target: Localization, rel: str, anchor_phrase: str) -> Localization:
    """The candidate of an ambiguous ``target`` that the relation to the anchor picks
    (module doc), or ``target`` unchanged."""
    cands = target.masks if len(target.masks) > 1 else target.candidates
    if target.status != "ambiguous" or len(cands) < 2:
        return target
    anchor = locate(rgb, anchor_phrase)
    if anchor.status != "resolved" or anchor.union() is None:
        return target
    where = anchor.union()
    ax, ay = centroid(where)
    side = SIDES[rel]
    kept = [c for c in cands if not (c.mask & where).sum() > 0.5 * max(1, c.area)]
    if side is not None:
        axis, sign = side
        kept = [c for c in kept if sign * (centroid(c.mask)[axis] - (ax, ay)[axis]) > 0]
    if not kept:
        return target
    ranked = sorted(kept, key=lambda c: _gap(c, where))
    if _gap(ranked[0], where) > NEAR:          # none is by the anchor: still a question
        return target
    if len(ranked) > 1 and _gap(ranked[1], where) < CLEAR * max(1e-3, _gap(ranked[0], where)):
        return target
    best = ranked[0]
    best.score = round(min(best.score, SURE), 3)
    best.evidence["relation"] = 1.0
    return Localization([best], "resolved", f"the one {rel} {anchor_phrase} (found: "
                        f"{anchor.reason}); of {len(cands)} that matched, confidence "
                        f"{best.score:.2f}", candidates=cands)
