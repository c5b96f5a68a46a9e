"""Phrase parsing: the colour, ordinal, size, position and plural cues of a target phrase.

``parse_phrase("the second red one on the left")`` → colours ``["red"]``, ordinal 2,
horizontal ``left``. Words that are none of these stay in ``unknown`` (the nouns a
detector looks for).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from pipelines.color import COLOR_RANGES
from pipelines.localizers.base import Candidate, Localization, resolved
from pipelines.localizers.segment import centroid

ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3,
            "fourth": 4, "4th": 4, "fifth": 5, "5th": 5, "sixth": 6, "6th": 6}
#: the phrase names the photo itself, the whole of it ("the whole image", "the photo",
#: "everything"), matched on the whole phrase: "the whole sky" and "the entire meadow" are
#: all of a thing, "the picture frame" and "the photo on the wall" things in the photo
#: (wave 26: each was the whole image, edited and said done)
WHOLE = re.compile(r"^(?:(?:the|this|my)\s+)?(?:(?:whole|entire|full)\s+)?"
                   r"(?:image|photo|photograph|picture|pic|frame|shot)\W*$"
                   r"|^(?:the\s+)?(?:whole|entire)(?:\s+(?:thing|scene))?\W*$"
                   r"|^everything\W*$|^all(?: of it)?\W*$")
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


#: nouns of two letters that name a thing (a longer word is a noun candidate by its length;
#: two-letter words are mostly "up", "me", "so" …): "the tv" is the television
SHORT_NOUNS = frozenset({"tv", "pc", "ox"})


def noun_words(parsed: Phrase, skip: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The words of ``parsed`` that may name a thing: its unknown words of three letters or
    more, or ``SHORT_NOUNS``, less ``skip``."""
    return [w for w in parsed.unknown if (len(w) > 2 or w in SHORT_NOUNS) and w not in skip]


def other_thing(nouns: list[str], left_out: list[str]) -> bool:
    """Whether "except …" names a thing other than the one named ("the sky except the
    clouds"), not one of its look-alikes ("all the cups except the red cup")."""
    own = {n.rstrip("s") for n in nouns}
    return bool(left_out) and not own & {n.rstrip("s") for n in left_out}


#: materials said instead of a colour: "the wooden cabinet" has wood's orange hues
#: ("brown" would take shaded beige fur as well)
MATERIAL_COLOURS: dict[str, tuple[str, ...]] = {"wooden": ("orange",), "timber": ("orange",)}


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
    corner: bool = False             # "in the corner": which one, or the nearest
    exclude: Phrase | None = None    # "except the left one": the cues of what is left out

    @property
    def spatial(self) -> bool:
        return bool(self.horizontal or self.vertical or self.corner)


#: "all the cups except the left one": the words after these name what is left out
EXCEPT = re.compile(r"\b(?:except(?: for)?|but not|other than|apart from|excluding|"
                    r"besides)\b")


#: "the cow in front", "the nearest boat": the one nearest the camera, which among look-alikes
#: is the one that looks biggest ("in front of the house" and "nearest the door" relate it
#: to another thing instead)
NEAREST = re.compile(r"\b(?:in (?:the )?front|in the foreground|nearest|closest|foremost)\b"
                     r"(?! (?:of|to|the)\b)")


#: "… of the photo", "… in this picture": where the target is, said after what it is
IN_FRAME = re.compile(r"\b(?:of|in|on|from|across) (?:the|this) (?:image|photo|picture|frame)\b")


def parse_phrase(phrase: str) -> Phrase:
    """Split a target phrase into colour, ordinal, size, position and plural cues.

    "… except the X" (or "but not", "other than", "apart from", "excluding") parses X on
    its own into ``exclude``; the rest is then plural (everything it names but X)."""
    text = " ".join(str(phrase or "").lower().split())[:200]
    # "the logo in the corner of the photo": the photo is where, not what
    placed = IN_FRAME.sub("", text).strip()
    text = " ".join(placed.split()) if placed else text
    cut = EXCEPT.search(text)
    if cut and text[:cut.start()].strip():
        parsed = parse_phrase(text[:cut.start()].strip())
        parsed.exclude = parse_phrase(text[cut.end():].strip())
        parsed.plural = True
        return parsed
    words = re.findall(r"[a-z0-9]+", text)
    colours = [w for w in words if w in COLOR_RANGES]
    colours += [c for w in words for c in MATERIAL_COLOURS.get(w, ()) if c not in colours]
    parsed = Phrase(text, words, colours)
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
    if parsed.size is None and NEAREST.search(text):     # the nearest of them looks biggest
        parsed.size = "largest"
    parsed.corner = bool({"corner", "corners"} & set(words))
    if re.search(r"\b(centre|center|middle|central)\b", text):
        parsed.horizontal = parsed.horizontal or "centre"
        parsed.vertical = parsed.vertical or "centre"
    parsed.unknown = [w for w in words if w not in FILLER and w not in COLOR_RANGES
                      and w not in MATERIAL_COLOURS and w not in ORDINALS and not w.isdigit()]
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
    if parsed.exclude is not None:
        return _all_but(cands, parsed, colour)
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
        ideals = places(parsed)

        def distance(m: Candidate) -> float:
            cx, cy = centroid(m.mask)
            return min(sum((c - i) ** 2 for c, i in zip((cx, cy), ideal) if i is not None)
                       for ideal in ideals)

        for cand in cands:
            cand.evidence["position"] = float(max(0.0, 1.0 - np.sqrt(distance(cand))))
        best = min(cands, key=distance)
        place = " ".join(x for x in (parsed.vertical, parsed.horizontal) if x)
        if parsed.corner and len(ideals) > 1:       # "in the corner": the nearest one
            cx, cy = centroid(best.mask)
            place = f"{'top' if cy < 0.5 else 'bottom'} {'left' if cx < 0.5 else 'right'}"
        what = f"{place} corner" if parsed.corner else place
        return resolved([best], f"the {colour} region nearest the {what}", cands)
    by_area = sorted(cands, key=lambda m: -m.area)
    if by_area[0].area >= DOMINANT_RATIO * by_area[1].area:
        main = by_area[0]
        main.score = min(main.score, 0.8)
        return resolved([main], f"the main {colour} region ({len(cands) - 1} much smaller "
                        "ones ignored)", cands)
    return Localization(cands, "ambiguous", f"{len(cands)} {colour} regions match; say which "
                        "(left/right, largest, first…) or 'all'")


def places(parsed: Phrase) -> list[tuple[float | None, float | None]]:
    """Where the phrase's place words point, as (x, y) fractions of the frame (None: that
    axis is free): one point, or every corner the words allow ("in the corner": all four;
    "in a right corner": the two on the right)."""
    xs = {"left": 0.0, "right": 1.0, "centre": 0.5, None: None}
    ys = {"top": 0.0, "bottom": 1.0, "centre": 0.5, None: None}
    x, y = xs[parsed.horizontal], ys[parsed.vertical]
    if not parsed.corner:
        return [(x, y)]
    return [(cx, cy) for cx in ((x,) if x in (0.0, 1.0) else (0.0, 1.0))
            for cy in ((y,) if y in (0.0, 1.0) else (0.0, 1.0))]


def _all_but(cands: list[Candidate], parsed: Phrase, colour: str) -> Localization:
    """Every candidate but the one(s) ``parsed.exclude`` picks ("all the cups except the
    left one"); ambiguous when the excluded part cannot be told."""
    left_out = parsed.exclude
    if not (left_out.plural or left_out.ordinal or left_out.last or left_out.size
            or left_out.spatial) or len(cands) < 2:
        return Localization(cands, "ambiguous", f"{len(cands)} {colour} regions; say which "
                            "one to leave out (left/right, biggest, first…)")
    out = select_candidates(cands, left_out, colour)
    if out.status != "resolved":
        return out
    gone = {id(m) for m in out.masks}
    rest = [m for m in cands if id(m) not in gone]
    if not rest:
        return Localization(cands, "ambiguous", f"nothing is left of the {colour} regions "
                            "once the excepted ones are left out")
    return resolved(rest, f"all {len(rest)} {colour} regions except {out.reason[12:]}",
                    cands, plural=len(rest) > 1)
