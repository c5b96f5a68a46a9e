"""Phrase parsing: the colour, ordinal, size, position and plural cues of a target phrase.

``parse_phrase("the second red one on the left")`` → colours ``["red"]``, ordinal 2,
horizontal ``left``. Words that are none of these stay in ``unknown`` (the nouns a
detector looks for).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from pipelines.localizers.base import Candidate, Localization, resolved
from pipelines.localizers.segment import centroid


@dataclass(frozen=True)
class HsvRange:
    """Hue intervals in degrees and saturation/value bounds in [0, 1]."""

    hues: tuple[tuple[float, float], ...] = ((0.0, 360.0),)
    s_min: float = 0.0
    s_max: float = 1.0
    v_min: float = 0.0
    v_max: float = 1.0

    def match(self, hsv: np.ndarray) -> np.ndarray:
        h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
        hue_ok = np.zeros(h.shape, bool)
        for lo, hi in self.hues:
            hue_ok |= (h >= lo) & (h <= hi)
        return hue_ok & (s >= self.s_min) & (s <= self.s_max) & \
            (v >= self.v_min) & (v <= self.v_max)


#: colour words → HSV ranges (broad families, tolerant of shading)
COLOR_RANGES: dict[str, HsvRange] = {
    "red": HsvRange(((0, 14), (340, 360)), 0.45, 1, 0.25),
    "maroon": HsvRange(((0, 15), (335, 360)), 0.45, 1, 0.12, 0.55),
    "orange": HsvRange(((14, 40),), 0.55, 1, 0.3),
    "yellow": HsvRange(((40, 68),), 0.4, 1, 0.35),
    "gold": HsvRange(((36, 56),), 0.45, 1, 0.35),
    "olive": HsvRange(((45, 80),), 0.35, 1, 0.2, 0.6),
    "lime": HsvRange(((68, 105),), 0.45, 1, 0.35),
    "green": HsvRange(((70, 165),), 0.25, 1, 0.12),
    "teal": HsvRange(((160, 200),), 0.35, 1, 0.2, 0.7),
    "turquoise": HsvRange(((160, 190),), 0.3, 1, 0.4),
    "cyan": HsvRange(((175, 200),), 0.35, 1, 0.4),
    "blue": HsvRange(((195, 255),), 0.3, 1, 0.15),
    "navy": HsvRange(((205, 250),), 0.35, 1, 0.08, 0.5),
    "violet": HsvRange(((250, 290),), 0.25, 1, 0.3),
    "purple": HsvRange(((255, 300),), 0.3, 1, 0.15),
    "magenta": HsvRange(((285, 335),), 0.4, 1, 0.3),
    "pink": HsvRange(((300, 360), (0, 10)), 0.15, 0.65, 0.5),
    "brown": HsvRange(((5, 45),), 0.3, 1, 0.1, 0.65),
    "beige": HsvRange(((20, 55),), 0.1, 0.4, 0.65),
    "black": HsvRange(v_max=0.2),
    "white": HsvRange(s_max=0.15, v_min=0.8),
    "gray": HsvRange(s_max=0.15, v_min=0.25, v_max=0.8),
    "grey": HsvRange(s_max=0.15, v_min=0.25, v_max=0.8),
    "silver": HsvRange(s_max=0.12, v_min=0.55, v_max=0.9),
}

ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3,
            "fourth": 4, "4th": 4, "fifth": 5, "5th": 5, "sixth": 6, "6th": 6}
WHOLE = re.compile(r"\b(whole|entire|everything|full (image|photo|picture|frame)|"
                   r"all of it|the (image|photo|picture|frame))\b")
PLURAL = {"all", "every", "each", "both", "ones", "them", "these", "those"}
FILLER = {
    "the", "a", "an", "of", "on", "in", "at", "to", "and", "one", "ones", "object",
    "objects", "thing", "things", "shape", "shapes", "part", "parts", "region", "area",
    "side", "half", "corner", "corners", "image", "photo", "picture", "frame", "that", "is",
    "which", "with", "most", "color", "colour", "colored", "coloured", "bit", "piece",
    "all", "every", "each", "both", "them", "these", "those", "this", "it", "its",
    "big", "bigger", "biggest", "large", "larger", "largest", "small", "smaller",
    "smallest", "tiny", "last", "light", "dark", "bright", "pale", "deep", "left",
    "leftmost", "right", "rightmost", "top", "topmost", "upper", "bottom", "bottommost",
    "lower", "middle", "centre", "center", "central", "sky", "background", "foreground",
    "subject", "main", "whole", "entire", "everything", "full",
}


@dataclass
class Phrase:
    """What the embedded localiser understood of a phrase."""

    text: str
    words: list[str]
    colors: list[str]
    ordinal: int | None = None
    last: bool = False
    size: str | None = None          # "largest" | "smallest"
    horizontal: str | None = None    # "left" | "right" | "centre"
    vertical: str | None = None      # "top" | "bottom" | "centre"
    plural: bool = False
    unknown: list[str] = field(default_factory=list)

    @property
    def spatial(self) -> bool:
        return bool(self.horizontal or self.vertical)


def parse_phrase(phrase: str) -> Phrase:
    """Split a target phrase into colour, ordinal, size, position and plural cues."""
    text = " ".join(str(phrase or "").lower().split())[:200]
    words = re.findall(r"[a-z0-9]+", text)
    parsed = Phrase(text, words, [w for w in words if w in COLOR_RANGES])
    for w in words:
        if w in ORDINALS and parsed.ordinal is None:
            parsed.ordinal = ORDINALS[w]
        parsed.last |= w == "last"
        if w in ("largest", "biggest", "big", "large", "larger", "bigger"):
            parsed.size = "largest"
        elif w in ("smallest", "small", "tiny", "smaller"):
            parsed.size = "smallest"
        if w in ("left", "leftmost"):
            parsed.horizontal = "left"
        elif w in ("right", "rightmost"):
            parsed.horizontal = "right"
        elif w in ("top", "topmost", "upper", "above"):
            parsed.vertical = "top"
        elif w in ("bottom", "bottommost", "lower", "below"):
            parsed.vertical = "bottom"
    if re.search(r"\b(centre|center|middle|central)\b", text):
        parsed.horizontal = parsed.horizontal or "centre"
        parsed.vertical = parsed.vertical or "centre"
    parsed.unknown = [w for w in words if w not in FILLER and w not in COLOR_RANGES
                      and w not in ORDINALS and not w.isdigit()]
    nouns = [w for w in parsed.unknown if len(w) > 3]
    parsed.plural = bool(PLURAL & set(words)) or any(
        w.endswith("s") and not w.endswith(("ss", "us", "is")) for w in nouns)
    return parsed


# ------------------------------------------------------------- choosing by the words

#: a region this many times larger than every other one is "the" object
DOMINANT_RATIO = 5.0


def select_candidates(cands: list[Candidate], parsed: Phrase, colour: str) -> Localization:
    """Apply plural, ordinal, size and position words to candidates.

    Args:
        cands: colour regions or detected objects.
        parsed: the phrase's cues.
        colour: how the reason names the candidates ("red", "cup").

    Returns:
        The chosen candidate(s) among all of them, or ``ambiguous`` with all of them.
    """
    cands = sorted(cands, key=lambda m: -m.score)
    if parsed.plural:
        return resolved(cands, f"all {len(cands)} {colour} regions", plural=True)
    if len(cands) == 1:
        return resolved(cands, f"the only {colour} region")
    if parsed.ordinal or parsed.last:
        reading = sorted(cands, key=lambda m: centroid(m.mask))   # left to right
        index = len(reading) - 1 if parsed.last else parsed.ordinal - 1
        if index >= len(reading):
            return Localization(cands, "ambiguous", f"asked for number {index + 1} but "
                                f"there are only {len(reading)} {colour} regions")
        return resolved([reading[index]], f"{colour} region number {index + 1} "
                        "from the left", cands)
    if parsed.size:
        pick = max if parsed.size == "largest" else min
        return resolved([pick(cands, key=lambda m: m.area)], f"the {parsed.size} {colour} "
                        "region", cands)
    if parsed.spatial:
        ideal = ({"left": 0.0, "right": 1.0, "centre": 0.5, None: None}[parsed.horizontal],
                 {"top": 0.0, "bottom": 1.0, "centre": 0.5, None: None}[parsed.vertical])

        def distance(m: Candidate) -> float:
            cx, cy = centroid(m.mask)
            return sum((c - i) ** 2 for c, i in zip((cx, cy), ideal) if i is not None)

        for cand in cands:
            cand.evidence["position"] = float(max(0.0, 1.0 - np.sqrt(distance(cand))))
        return resolved([min(cands, key=distance)], f"the {colour} region nearest the "
                        f"{' '.join(x for x in (parsed.vertical, parsed.horizontal) if x)}",
                        cands)
    by_area = sorted(cands, key=lambda m: -m.area)
    if by_area[0].area >= DOMINANT_RATIO * by_area[1].area:
        main = by_area[0]
        main.score = min(main.score, 0.8)
        return resolved([main], f"the main {colour} region ({len(cands) - 1} much smaller "
                        "ones ignored)", cands)
    return Localization(cands, "ambiguous", f"{len(cands)} {colour} regions match; say which "
                        "(left/right, largest, first…) or 'all'")
