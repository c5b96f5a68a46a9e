"""Who wears the named colour: "the man in the white sweater", "the woman wearing a red
coat" (issue 32: people look alike to the detector; what they wear tells them apart).

Before, the garment was read as another thing the man relates to, which nothing checked:
with two men the answer was a question ("I cannot check how the man relates …"), and the
colour path took the sweatshirt alone ("may be something the man wears").

Now the person words alone are located as any phrase is ("the man"). Each person outline
the detector holds at ``PERSON_FLOOR`` or more is read for the named colour
(``segment.colour_mask``) over the band of its height the garment covers (``BANDS``: a
shirt the torso, trousers the legs, a coat both). The one that wears it is the answer when

* at least ``WEARS`` of its band is that colour, and every other person's band is under
  ``RIVAL`` times its share (two people in red stay a question);
* the detector is sure of it itself (``assurance.DETECTOR_SURE``): a weak box in red may
  be a poster, and a sure man elsewhere would make ``assure`` take it;
* its outline passes the checks any found thing passes (``assurance.assure``: it fills its
  box, does not stop short of it, is no weak detection), and it was not cut back from a
  neighbour's box (``fusion.check_extent``; evidence ``caught``).

Otherwise the answer is a question offering the people, the likeliest wearer first. One
person found for sure must wear the colour too, or it is asked about. A colour the phrase
does not name, or a garment that is no clothing ("the man with the red ball"), keeps the
reading as before.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

import numpy as np

from pipelines.color import COLOURS
from pipelines.localizers import assurance
from pipelines.localizers.base import Localization
from pipelines.localizers.segment import colour_mask
from pipelines.perception.detectors import shrink

log = logging.getLogger(__name__)

#: the share of a person's height (from the top of the outline) each garment covers
UPPER, LOWER, WHOLE = (0.15, 0.6), (0.5, 0.95), (0.15, 0.9)
BANDS: dict[str, tuple[float, float]] = {
    **dict.fromkeys(("shirt", "t-shirt", "tshirt", "sweater", "sweatshirt", "jumper",
                     "jacket", "hoodie", "top", "blouse", "vest", "jersey", "cardigan",
                     "fleece", "pullover", "polo", "tank", "anorak", "windbreaker"), UPPER),
    **dict.fromkeys(("trousers", "pants", "jeans", "shorts", "skirt", "leggings"), LOWER),
    **dict.fromkeys(("coat", "dress", "suit", "tracksuit", "overalls", "uniform", "gown",
                     "robe", "raincoat", "parka", "clothes", "outfit"), WHOLE),
}
#: words that name a person (the detector's "person")
PEOPLE = frozenset({"man", "woman", "person", "child", "boy", "girl", "lady", "guy", "kid",
                    "gentleman", "player", "skier", "surfer", "runner", "walker", "worker"})
#: "<who> in|wearing|dressed in [a|the|his|her] <colour> <garment>"
WORN = re.compile(r"^(?P<who>(?:the |a |an |that |this )?[a-z -]*?(?P<noun>[a-z]+))\s+"
                  r"(?:in|wearing|dressed in|with)\s+(?:a |an |the |his |her |their )?"
                  r"(?P<colour>[a-z]+)\s+(?P<garment>[a-z-]+)$")
#: the wearer's band holds at least this share of the colour ...
WEARS = 0.3
#: ... and every other person's band under this times the wearer's share
RIVAL = 0.5
#: people the detector holds this sure are rivals (a lower box is rarely a person: the
#: tune pool's posters and lamps read 0.06-0.10)
PERSON_FLOOR = 0.2
#: the band is read on a copy of at most this long side (a 20-MP outline costs no more)
READ_SIDE = 768


def split(text: str) -> tuple[str, str, str] | None:
    """(who, colour, garment) of "the man in the red shirt", or None when the phrase does
    not dress a person in a named colour."""
    m = WORN.match(" ".join(text.lower().split()))
    if not m or m.group("noun") not in PEOPLE or m.group("colour") not in COLOURS \
            or m.group("garment") not in BANDS:
        return None
    who = m.group("who").strip()
    return (who if who.split()[0] in {"the", "a", "an", "that", "this"} else f"the {who}",
            m.group("colour"), m.group("garment"))


def share(rgb: np.ndarray, mask: np.ndarray, colour: str, band: tuple[float, float]) -> float:
    """The share of ``mask``'s rows within ``band`` (of its height, from its top) that is
    ``colour`` (``segment.colour_mask`` on a copy of at most ``READ_SIDE``)."""
    ys = np.nonzero(mask.any(axis=1))[0]
    if ys.size == 0:
        return 0.0
    top, height = ys[0], ys[-1] - ys[0] + 1
    y0, y1 = top + int(band[0] * height), top + max(1, int(band[1] * height))
    small = shrink(rgb[y0:y1], READ_SIDE)
    region = shrink(mask[y0:y1].astype(np.uint8) * 255, READ_SIDE) > 127
    if small.shape[:2] != region.shape:
        return 0.0
    total = int(region.sum())
    return float((colour_mask(small, [colour]) & region).sum() / total) if total else 0.0


def choose(locate: Callable[[np.ndarray, str], Localization], rgb: np.ndarray, who: str,
           colour: str, garment: str) -> Localization:
    """The person among those ``who`` finds who wears ``colour`` (module doc), or a
    question."""
    found = locate(rgb, who)
    if found.status == "unresolved":
        return found
    noun = who.split()[-1]
    said = f"{who} in the {colour} {garment}"
    pool = found.candidates or found.masks
    people = [c for c in pool if c.label == "person"
              and c.evidence.get("detector", 0.0) >= PERSON_FLOOR]
    if not people:
        return found
    band = BANDS[garment]
    read = sorted(((share(rgb, np.asarray(c.mask, bool), colour, band), c) for c in people),
                  key=lambda sc: -sc[0])
    best_share, best = read[0]
    rival = read[1][0] if len(read) > 1 else 0.0
    log.debug("worn: %s: %s", said, [round(s, 2) for s, _ in read])
    ranked = [c for _, c in read] + [c for c in pool if all(c is not p for p in people)]

    def ask(why: str) -> Localization:
        return Localization(ranked[:len(found.masks) or 4], "ambiguous",
                            f"unsure which is {said}: {why}; click the one you mean",
                            candidates=ranked)

    if best_share < WEARS:
        return ask(f"no {noun} I found wears much {colour} there (at most {best_share:.0%})")
    if rival >= RIVAL * best_share:
        return ask(f"more than one wears {colour} ({best_share:.0%} and {rival:.0%})")
    if best.evidence.get("detector", 0.0) < assurance.DETECTOR_SURE:   # a poster, a statue
        return ask(f"the detector is only {best.evidence.get('detector', 0.0):.0%} sure that "
                   f"the one wearing {colour} is a {noun}")
    if best.evidence.get("caught"):
        return ask(f"the outline of the {noun} wearing {colour} ran into a neighbour's and "
                   "was cut back, so where it ends is a guess")
    best.evidence["worn"] = round(best_share, 3)
    chosen = Localization([best], "resolved", f"the {noun} wearing {colour} ({best_share:.0%} "
                          f"of the {garment}'s reach; the next {rival:.0%}), confidence "
                          f"{best.score:.2f}", candidates=ranked)
    return assurance.assure(chosen, noun=noun, names_thing=True, selectors=True)
