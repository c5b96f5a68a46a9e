"""Text regions at native resolution: a detector's loose box tightened to the ink, and a
watermark or logo taken whole — its text *and* the mark drawn beside it.

The text detector's boxes are found on a ≤ 960-px copy and unclipped by half a line
height on every side, so a one-line caption's box is about twice its ink. ``tighten``
finds the ink inside the box (pixels far from the box border's own colour) and keeps its
extent. ``with_marks`` adds the connected high-contrast marks next to the line (a logo's
graphic), as their convex outlines. ``lines_only`` turns an answer whose region is
taller than a line of text into a question.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from pipelines.localizers.answers import int_box
from pipelines.localizers.base import Candidate, Localization, mask_box
from pipelines.perception import store
from pipelines.perception.detectors import TextReader
from pipelines.perception.words import SYNONYMS, TEXT

#: a pixel is ink when a channel differs this much from the local background colour
INK = 48
#: a text box taller than this share of the photo's height is no line of text: several
#: lines in one box, letters drawn in sand, or branches read as script (the tune's new
#: monochrome photos: boxes of 31-65 % of the height were "the writing" at IoU 0.01-0.53)
LINE = 0.2
#: a mark fills at least this share of its convex outline
MARK_SOLIDITY = 0.6
Box = tuple[int, int, int, int]


def _ink(crop: np.ndarray) -> np.ndarray:
    """Pixels of ``crop`` unlike the colour of its border (the local background)."""
    ring = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]]).astype(np.int16)
    background = np.median(ring, axis=0)
    return (np.abs(crop[..., :3].astype(np.int16) - background).max(axis=2) > INK)


def tighten(rgb: np.ndarray, box: Box) -> Box:
    """The extent of the ink inside ``box`` (the box itself when it holds none)."""
    x0, y0, x1, y1 = box
    crop = rgb[y0:y1, x0:x1]
    if crop.shape[0] < 3 or crop.shape[1] < 3:
        return box
    ink = _ink(crop)
    ink = cv2.morphologyEx(ink.astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8)) > 0
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if rows.size == 0 or ink.mean() < 0.01:
        return box
    pad = 1 + (y1 - y0) // 40
    return (max(x0, x0 + int(cols[0]) - pad), max(y0, y0 + int(rows[0]) - pad),
            min(x1, x0 + int(cols[-1]) + 1 + pad), min(y1, y0 + int(rows[-1]) + 1 + pad))


def with_marks(rgb: np.ndarray, box: Box) -> np.ndarray:
    """A bool mask of the text box and the marks beside it: solid ink components (thin
    texture opened away) within one line height of the box, level with the line, no
    larger than a few lines' area, each as its convex outline.

    Args:
        rgb: uint8 (H, W, 3) full-resolution image.
        box: the tightened text box.
    """
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = box
    line = max(4, y1 - y0)
    ex0, ex1 = max(0, x0 - 3 * line), min(w, x1 + 3 * line)
    ey0, ey1 = max(0, y0 - line), min(h, y1 + line)
    mask = np.zeros((h, w), bool)
    mask[y0:y1, x0:x1] = True
    crop = rgb[ey0:ey1, ex0:ex1]
    if crop.shape[0] < 3 or crop.shape[1] < 3:
        return mask
    ink = _ink(crop).astype(np.uint8)
    ink[y0 - ey0:y1 - ey0, x0 - ex0:x1 - ex0] = 0
    side = max(3, line // 6)            # thin texture (leaves, mortar) falls apart
    ink = cv2.morphologyEx(ink, cv2.MORPH_OPEN,
                           cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side)))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, 8)
    near = line
    for i in range(1, count):
        cx, cy, cw, ch, area = stats[i]
        if area < 0.05 * line * line or cw * ch > 4 * line * line:
            continue
        gx = max(0, (x0 - ex0) - (cx + cw), cx - (x1 - ex0))
        gy = max(0, (y0 - ey0) - (cy + ch), cy - (y1 - ey0))
        centre = cy + ch / 2 + ey0
        if gx > near or gy > near / 2 or not y0 - line / 2 <= centre <= y1 + line / 2:
            continue
        points = cv2.findNonZero((labels == i).astype(np.uint8))
        hull = cv2.convexHull(points)
        if area < MARK_SOLIDITY * cv2.contourArea(hull):      # a solid mark, not texture
            continue
        part = np.zeros(crop.shape[:2], np.uint8)
        cv2.fillConvexPoly(part, hull, 1)
        mask[ey0:ey1, ex0:ex1] |= part > 0
    return mask


#: words that make a text target its text and the mark drawn beside it
MARK_WORDS = frozenset({"watermark", "watermarks", "logo", "logos", "signature", "stamp"})
#: words of a text phrase that say nothing of what its text reads or what it is on: the
#: text nouns, the marks beside text, articles and the words that join them
PLAIN = frozenset(w for w, label in SYNONYMS.items() if label == TEXT) | MARK_WORDS | \
    frozenset({"the", "a", "an", "all", "any", "every", "this", "that", "these", "those",
               "some", "of", "in", "on", "at", "from", "with", "its", "it", "s", "photo",
               "picture", "image"})


#: a region's reading counts when its characters' mean confidence is at least this and it
#: has at least ``READ_CHARS`` letters or digits
READ_CONF, READ_CHARS = 0.5, 3
#: a named word matches a reading when at most this share of its letters differ (a
#: substitution, a missed or extra letter: "LASVEGASS" for "las vegas"), or when the
#: reading is a piece of the word that long ("ERSTO" of "eristoff", a line cut short)
READ_SLACK, READ_PIECE = 0.2, 0.6


def _letters(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _near(word: str, text: str) -> int:
    """The fewest edits that turn ``word`` into a run of ``text`` (a run of the word's
    length, one letter more or fewer)."""
    n = len(word)
    runs = {text[i:i + k] for k in (n - 1, n, n + 1) if k > 0
            for i in range(max(1, len(text) - k + 1))}
    return min(_distance(word, r) for r in runs)


def near_reading(was: str, now: str) -> bool:
    """Does ``now`` read as ``was`` did (at most ``READ_SLACK`` of its letters differ)?"""
    a, b = _letters(was), _letters(now)
    return bool(a) and len(b) >= READ_CHARS and _distance(a, b) <= int(READ_SLACK * len(a))


def unread_words(words: list[str], text: str) -> list[str]:
    """The named words (3+ letters) a region reading ``text`` does not account for: not
    read there, alone or joined with the others ("on the bumper" is read nowhere)."""
    names = [w for w in words if len(_letters(w)) >= 3]
    if len(names) > 1 and reads_as(["".join(names)], text):
        return []
    return [w for w in names if not reads_as([w], text)]


def reads_as(words: list[str], text: str) -> bool:
    """Does a region reading ``text`` say what ``words`` name? The words are joined
    ("las vegas" is "lasvegas") and also taken one by one (3+ letters); each may differ
    by ``READ_SLACK`` of its letters from a run of the reading, or the reading may be a
    piece of it (``READ_PIECE`` of its length, one edit)."""
    got = _letters(text)
    if len(got) < READ_CHARS:
        return False
    names = [w for w in (_letters(w) for w in words) if len(w) >= 3]
    if len(names) > 1:
        names.append("".join(names))
    for name in names:
        if _near(name, got) <= int(READ_SLACK * len(name)):
            return True
        if len(got) >= READ_PIECE * len(name) and _near(got, name) <= 1:
            return True
    return False


_READER: list[TextReader] = []


def shared_reader() -> TextReader | None:
    """The process's one text reader (the localiser reads regions with it, the critic
    blurred writing; its net loads on first use), or None when its file is not installed."""
    if not store.role_status()["reader"].available:
        return None
    if not _READER:
        _READER.append(TextReader())
    return _READER[0]


def _readings(found: Localization, read: Callable[[Candidate], tuple[str, float]] | None
              ) -> list[tuple[Candidate, str, float]]:
    """Every region of ``found`` with what it reads and how surely (none without a reader)."""
    return [(c, *read(c)) for c in found.candidates or found.masks] if read is not None \
        else []


def reading(reader: TextReader | None, rgb: np.ndarray, lines: dict[int, Box]
            ) -> Callable[[Candidate], tuple[str, float]] | None:
    """``unread``'s reader: a candidate's text read in its line's box (``lines``, by the
    candidate's ``id()``: the detector's box, margin included), else in its own box; None
    when there is no reader (its file is not installed)."""
    if reader is None:
        return None

    def read(cand: Candidate) -> tuple[str, float]:
        box = lines.get(id(cand)) or cand.bbox
        return reader.read(rgb, tuple(int(v) for v in box)) if box else ("", 0.0)
    return read


#: a phrase naming a number plate: its writing is the plate, told from other writing by
#: what it reads (``plate_like``)
PLATE = frozenset({"plate", "plates", "numberplate", "numberplates"})


def plate_like(text: str) -> bool:
    """A number plate's reading: 4-10 letters and digits, two or more of them digits and
    one or more a letter (a year or a price alone is no plate)."""
    got = _letters(text)
    digits = sum(ch.isdigit() for ch in got)
    return 4 <= len(got) <= 10 and digits >= 2 and digits < len(got)


#: vehicles a number plate is on (the detector's classes)
VEHICLES = frozenset({"car", "truck", "bus", "motorcycle"})


def vehicles(detector: Any, frame: np.ndarray, shape: tuple[int, ...]) -> list[Box]:
    """The detector's sure vehicle boxes on ``frame`` (a small copy of a photo of
    ``shape``), in the photo's pixels."""
    k = shape[1] / frame.shape[1]
    return [tuple(int(round(v * k)) for v in d.box) for d in detector.detect(frame, 0.4)
            if d.label in VEHICLES]


def _plates(found: Localization, plural: bool,
            read: Callable[[Candidate], tuple[str, float]] | None,
            on: list[Box]) -> Localization:
    """The text regions that read like a number plate and lie on a vehicle (``on``): one
    (or, for "plates", every one); else a question that says what was read. Without a
    reader nothing tells a plate from a sticker, and a shop sign that reads "OPEN 24H" is
    on no vehicle: either is asked."""
    readings = _readings(found, read)

    def on_vehicle(c: Candidate) -> bool:
        box = c.bbox
        if box is None:
            return False
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        return any(v[0] <= cx <= v[2] and v[1] <= cy <= v[3] for v in on)
    plates = [(c, t) for c, t, conf in readings
              if conf >= READ_CONF and plate_like(t) and on_vehicle(c)]
    if plates and (plural or len(plates) == 1):
        # the reading tells them from the other regions: those are no twins to ask about
        return Localization([c for c, _ in plates], "resolved", "found the number plate"
                            f"{'s' if len(plates) > 1 else ''} reading "
                            f"{', '.join(repr(t) for _, t in plates)}")
    heard = (f"I read {', '.join(repr(t) for _, t, _ in readings[:4])}" if readings else
             "I cannot read text")
    return Localization(found.masks, "ambiguous", f"{found.reason}; {heard}, and "
                        f"{len(plates)} of it read{'s' if len(plates) == 1 else ''} like a "
                        f"number plate on one of the {len(on)} vehicle(s) I see: click the "
                        "plate or paint it with the brush",
                        candidates=found.candidates)


def unread(found: Localization, words: list[str], picked: bool,
           read: Callable[[Candidate], tuple[str, float]] | None = None,
           plural: bool = False, vehicles: Callable[[], list[Box]] | None = None
           ) -> Localization:
    """``found`` (text regions), or the regions that read what the phrase names, or a
    question when the phrase says what the text reads or what it is on ("the LAS VEGAS
    lettering", "the script on the bumper").

    With a reader (``read``: a candidate's text and confidence) each region is read; the
    ones whose reading matches a named word (``reads_as``) are the answer. Without one, or
    when no region reads a named word (the writing meant may not be found, or the word
    names what it is on), which region is meant is a guess and is asked (tune: a bus's
    bumper script, not detected, "found" as the one text region elsewhere, IoU 0); the
    question says what was read. Several regions that read it for a thing named once are
    asked about, and so is a reading of the name when other named words ("on the
    bumper") are read nowhere: where the writing is cannot be checked. Place, size and
    ordinal words (``picked``) choose among the regions and are checked; colour words are
    left to the regions' colour."""
    if found.status != "resolved" or picked:
        return found
    if PLATE & set(words):
        return _plates(found, bool({"plates", "numberplates"} & set(words)), read,
                       vehicles() if vehicles is not None else [])
    said = [w for w in words if w not in PLAIN]
    if not said:
        return found
    readings = _readings(found, read)
    legible = [(c, text) for c, text, conf in readings
               if conf >= READ_CONF and len(_letters(text)) >= READ_CHARS]
    hits = [(c, text) for c, text in legible if reads_as(said, text)]
    rest = sorted({w for _, text in hits for w in unread_words(said, text)})
    if hits and rest:   # read the name, but where it is ("on the bumper") is not checked
        return Localization([c for c, _ in hits], "ambiguous", f"I read "
                            f"{', '.join(repr(t) for _, t in hits[:4])}, but nothing here "
                            f"checks '{' '.join(rest)}': click it if it is the one you mean",
                            candidates=[c for c, _ in hits], guess=len(hits))
    if len(hits) > 1 and not plural:    # one named, several read so: which is a question
        return Localization([c for c, _ in hits], "ambiguous", f"{len(hits)} text regions "
                            f"read '{' '.join(said)}' "
                            f"({', '.join(repr(t) for _, t in hits[:4])}): click the one "
                            "you mean", candidates=[c for c, _ in hits])
    if hits:
        shown = ", ".join(f"'{text}'" for _, text in hits)
        return Localization([c for c, _ in hits], "resolved", f"found the writing that reads "
                            f"{shown} ('{' '.join(said)}'; {len(hits)} of {len(readings)} "
                            "text regions)")     # read apart from the others: no twins
    heard = (f"I read {', '.join(repr(t) for _, t in legible[:4])} and nothing that reads "
             f"'{' '.join(said)}'" if legible else
             "but I cannot read text" if read is None else "but I could read none of it")
    return Localization(found.masks, "ambiguous", f"{found.reason}; {heard}, so which "
                        f"writing is the '{' '.join(said)}' one is a guess: click it or "
                        "paint it with the brush", candidates=found.candidates)


def lines_only(found: Localization) -> Localization:
    """``found`` (text regions), or a question when a region taken is taller than a line
    of text (``LINE`` of the photo's height): its box holds more than the writing."""
    if found.status != "resolved" or not found.masks:
        return found
    height = found.masks[0].mask.shape[0]
    boxes = [mask_box(m.mask) for m in found.masks]
    tall = max((b[3] - b[1] for b in boxes if b is not None), default=0)
    if tall <= LINE * height:
        return found
    return Localization(found.masks, "ambiguous", f"{found.reason}; but a region is "
                        f"{tall / height:.0%} of the photo's height, taller than a line of "
                        "text: click the writing you mean or paint it with the brush",
                        candidates=found.candidates)


#: a sign's ground: pixels within this many levels (max over channels) of the colour
#: under its letters, tried in these steps; the sign is the region that stays the same
#: (area within ``PLATE_STEADY``) over ``PLATE_RUN`` steps running (a wider step leaks
#: onto the wall: tune kpa_pool's poster holds at 20-35 levels, takes the wall at 40)
PLATE_STEPS, PLATE_STEADY, PLATE_RUN = tuple(range(15, 60, 5)), 0.1, 3
#: a sign is at least this many times its letters' box and at most this share of the photo
PLATE_MIN, PLATE_MAX = 3.0, 0.25
#: how far from its letters a sign is looked for, in line heights
PLATE_REACH = 12
#: a photo whose name is read nowhere is read again on a copy enlarged to this side (px)
READ_SIDE = 960
#: when that is at least this many times its size
READ_ENLARGE = 1.5


def _ground(rgb: np.ndarray, box: Box, near: int) -> np.ndarray:
    """The region of the colour under the letters in ``box`` (within ``near`` levels),
    gaps narrower than a line closed, connected to the box, its holes (the letters, a
    picture on the poster) filled."""
    x0, y0, x1, y1 = box
    under = np.median(rgb[y0:y1, x0:x1, :3].reshape(-1, 3).astype(np.int16), axis=0)
    like = (np.abs(rgb[..., :3].astype(np.int16) - under).max(axis=2) <= near)
    side = max(3, (y1 - y0) // 2)
    like = cv2.morphologyEx(like.astype(np.uint8), cv2.MORPH_CLOSE,
                            cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side)))
    like = cv2.morphologyEx(like, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    _, labels = cv2.connectedComponents(like, connectivity=4)
    ids = np.unique(labels[y0:y1, x0:x1])
    region = np.isin(labels, ids[ids > 0]).astype(np.uint8)
    region[y0:y1, x0:x1] = 1
    outside = np.pad(1 - region, 1, constant_values=1)
    cv2.floodFill(outside, None, (0, 0), 0)
    return (region | outside[1:-1, 1:-1]) > 0


def _squared(region: np.ndarray) -> np.ndarray:
    """``region`` within its main box: the rows and columns at least a quarter as full as its
    fullest (a sign is a rectangle; a dark head of hair against a dark poster's edge is a
    short run of columns: tune kpa_pool, whose edits then changed the man's hair)."""
    cols, rows = region.sum(axis=0), region.sum(axis=1)
    keep_c, keep_r = np.flatnonzero(cols >= cols.max() / 4), np.flatnonzero(rows >= rows.max() / 4)
    out = np.zeros_like(region)
    out[keep_r[0]:keep_r[-1] + 1, keep_c[0]:keep_c[-1] + 1] = True
    return out & region


def plate_around(rgb: np.ndarray, box: Box) -> np.ndarray | None:
    """The sign or poster that ``box``'s letters are printed on: the region of the colour
    under them that stays the same over ``PLATE_RUN`` widening colour steps, larger than
    the letters (``PLATE_MIN``) and no more than ``PLATE_MAX`` of the photo; None when no
    such steady region exists (the ground runs on into the wall, or there is none). It is
    looked for within ``PLATE_REACH`` line heights of the letters (a region reaching that
    window's edge inside the photo runs on: no sign)."""
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = box
    reach = PLATE_REACH * max(4, y1 - y0)
    wx0, wy0, wx1, wy1 = max(0, x0 - reach), max(0, y0 - reach), min(w, x1 + reach), \
        min(h, y1 + reach)
    inner = (x0 - wx0, y0 - wy0, x1 - wx0, y1 - wy0)
    letters = max(1, (x1 - x0) * (y1 - y0))
    run: list[np.ndarray] = []
    for near in PLATE_STEPS:
        region = _ground(rgb[wy0:wy1, wx0:wx1], inner, near)
        open_edges = (region[0].any() and wy0 > 0, region[-1].any() and wy1 < h,
                      region[:, 0].any() and wx0 > 0, region[:, -1].any() and wx1 < w)
        if any(open_edges):
            return None
        if run and abs(int(region.sum()) - run[-1].sum()) > PLATE_STEADY * run[-1].sum():
            run = []
        run.append(region)
        if len(run) >= PLATE_RUN:
            if not PLATE_MIN * letters <= run[-1].sum() <= PLATE_MAX * h * w:
                return None
            mask = np.zeros((h, w), bool)
            mask[wy0:wy1, wx0:wx1] = _squared(run[-1])
            return mask
    return None


#: things that carry a name in letters: "the Eristoff poster" names its poster by what
#: the poster reads
SIGNS = frozenset({"poster", "posters", "sign", "signs", "badge", "badges", "plaque",
                   "plaques", "banner", "banners", "billboard", "billboards", "placard",
                   "placards", "signboard", "emblem"})


def read_sign(rgb: np.ndarray, parsed: Any, models: Any) -> Localization | None:
    """"The Eristoff poster": a sign named by what it reads (a main-subject guess took the
    man in front of it, and refused: tune kpa_pool). One text region that reads the name,
    on a steady ground (``plate_around``), is the sign; several, one whose ground runs on,
    or one read while other named words ("on the grille") are read nowhere, are a question
    offering the writing read (the thing is in the photo; which, or where it ends, is a
    guess). None when the phrase names no sign by a word, no reader is installed, or
    nothing reads the name: the usual path answers then."""
    names = [w for w in parsed.unknown if w not in SIGNS and w not in PLAIN]
    if not SIGNS & set(parsed.words) or not names or models.reader is None:
        return None
    hits: list[tuple[Candidate, str, Box]] = []
    # nothing read on a small photo: a second look on a copy enlarged to the detector's
    # side (tune voc_2011_000025, 500 px: the bus's LEYLAND sign is found only so)
    enlarge = READ_SIDE / max(rgb.shape[:2])
    for k in (1.0, enlarge) if enlarge >= READ_ENLARGE else (1.0,):
        if hits:
            break
        big = rgb if k == 1.0 else cv2.resize(rgb, None, fx=k, fy=k,
                                              interpolation=cv2.INTER_LANCZOS4)
        for d in models.text.detect(big)[:12]:
            text, conf = models.reader.read(big, int_box(d.box))
            if conf >= READ_CONF and reads_as(names, text):
                x0, y0, x1, y1 = tight = tighten(rgb, int_box(tuple(v / k for v in d.box)))
                mask = np.zeros(rgb.shape[:2], bool)
                mask[y0:y1, x0:x1] = True
                hits.append((Candidate(mask, 0.3, TEXT, "ppocr-det+ink"), text, tight))
    if not hits:
        return None
    sign = next(w for w in parsed.words if w in SIGNS)
    rest = sorted({w for _, text, _ in hits for w in unread_words(names, text)})
    plate = plate_around(rgb, hits[0][2]) if len(hits) == 1 and not rest else None
    if plate is not None:
        return Localization([Candidate(plate, 0.7, sign, "ppocr-det+ground")], "resolved",
                            f"found the {sign} around the writing that reads "
                            f"{hits[0][1]!r} ('{' '.join(names)}')")
    why = (f"nothing here checks '{' '.join(rest)}'" if rest else
           f"{len(hits)} regions read so" if len(hits) > 1 else
           f"where the {sign} around that writing ends is a guess")
    return Localization([c for c, *_ in hits], "ambiguous", f"I read "
                        f"{', '.join(repr(t) for _, t, _ in hits[:4])} ('{' '.join(names)}'), "
                        f"but {why}: click the {sign} or paint it with the brush",
                        candidates=[c for c, *_ in hits])
