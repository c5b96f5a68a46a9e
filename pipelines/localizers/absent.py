"""Things that are not there: "the piano" on a photo of a cinema's blank screen.

For a noun no detector class names, ``assurance`` offers the photo's main subject as
"only a guess" (a question), and ``second_look`` refuses that guess when ImageNet's
classifier covers the noun with kinds of its own (an animal with three kinds or more, or
a class named by the noun) and gives them next to nothing of the subject. Objects that
ImageNet knows by one or two kinds were left asking: "the piano" over a cinema's screen
offered the screen, "the fan" on a motherboard offered the board, "the eraser" on a page
of lines and "the towel" on a beach of footprints offered the page and the sand: four
pointless questions with a wrong guess to click.

``refuse_guess`` looks at the whole photo for those nouns, and refuses only when both hold:

* **ImageNet knows most kinds of it** (``kinds_known``): WordNet's kinds of the noun (the
  direct hyponyms of the sense its ImageNet classes fall under, read from the installed
  ``wordnet-data.noun``) hold a class in ``KINDS_KNOWN`` of cases or more, or a class is
  the noun's own sense; a noun with several senses must be known so in each. Known: piano
  2 of 3 (grand, upright; not the player piano), camel 1 of 2, pen 3 of 5. Left out (at
  first, from 0.3 on, they were refused, until "the rocket", 1 of 3, a missile, was
  refused on scikit-image's Saturn V, which ImageNet's missile reads at 9 % at most):
  fan 1 of 3 (electric fan), eraser 1 of 3 (rubber eraser), towel 2 of 6 (bath, paper),
  crocodile 1 of 3, kangaroo 1 of 4 (a wallaby), lemur 2 of 9, hat 4 of 22, lamp 3 of 17 (and
  1 of 3 in its other sense), tower 1 of 17 (a beacon), house 1 of 27, and the module
  doc's owl (1 of 15) and swan (1 of 9) of ``second_look``: a kind or two of many, so
  a street lamp, a stone tower, a top hat or a white swan reads as none of them.
* **none of those kinds registers anywhere**: the subject's crop gives them less than
  ``second_look.SAME_FLOOR`` (passed as ``floor``), and no tile of the photo (the whole
  frame, its 2 x 2, 3 x 3 and 4 x 4 grids and its centre half: 31 looks, about half a
  second) gives them ``TILE_FLOOR`` or more. Tune: the absent piano 0.11 at most (a
  3 x 3 tile of the cinema's seats), eraser 0.09 (the page with a pen and a hand), towel
  0.02, fan 0.00; the present things of such nouns 0.30 (punishment's pen: its subject's
  crop gives pens only 0.035, so this tile is all that keeps it a question; 0.22 without
  the 4 x 4 grid, which is why it is there) to 0.98 (a crocodile). The camel asked on
  the bent pyramid stays a question: a 3 x 3 tile of its desert gives 0.31. A small
  thing that no tile frames well (a screw on a circuit board: 0.003) is why nouns
  ImageNet knows only by a class's name ("screw", "slot", "dome": classes that are other
  senses of those words) are not refused here: the screw, the slot and a palace's dome
  are on their photos (0.003, 0.002, 0.017).

The refusal says what was looked for and how to point at it (the app's click, the
command line's ``--point X,Y``). Without the classifier or WordNet's files it changes
nothing.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path

import numpy as np

from pipelines.localizers.base import Localization
from pipelines.operations import wordnet
from pipelines.perception import imagenet, store

log = logging.getLogger(__name__)

#: ImageNet knows a noun when its classes fall under this share of its kinds (module doc)
KINDS_KNOWN = 0.5
#: a tile that gives the noun's kinds this much may show one (module doc)
TILE_FLOOR = 0.18
#: a synset's line in ``data.noun`` is never longer than this (the longest is ~11 kB)
MAX_LINE = 64 * 1024
#: ... and its offset never beyond this (the file is ~15 MB)
MAX_OFFSET = 64 * 1024 * 1024
#: how far up the hypernyms a class's path is followed to meet the noun
MAX_DEPTH = 24
DATA_FILE = "wordnet-data.noun"


class SynsetError(ValueError):
    """A line of WordNet's ``data.noun`` that is not a synset."""


def parse_synset(line: str, offset: str) -> tuple[list[str], list[str], list[str]]:
    """A ``data.noun`` line's lemmas (lower case), noun hypernyms and noun hyponyms.

    Args:
        line: the line, as read at ``offset``.
        offset: the 8-digit offset it was read at (it starts the line).

    Raises:
        SynsetError: the line is not the synset at ``offset`` or is malformed.
    """
    if len(line) > MAX_LINE:
        raise SynsetError(f"synset {offset}: a line of over {MAX_LINE} characters")
    fields = line.split(" | ", 1)[0].split()
    if len(fields) < 5 or fields[0] != offset:
        raise SynsetError(f"synset {offset}: the line read there is not that synset")
    try:
        count = int(fields[3], 16)
        at = 4 + 2 * count
        pointers = int(fields[at])
    except (ValueError, IndexError):
        raise SynsetError(f"synset {offset}: malformed lemma or pointer count") from None
    ptrs = fields[at + 1:at + 1 + 4 * pointers]
    if count < 1 or len(ptrs) != 4 * pointers:
        raise SynsetError(f"synset {offset}: the line is cut short")
    lemmas = [fields[4 + 2 * i].lower() for i in range(count)]
    up = [ptrs[i + 1] for i in range(0, len(ptrs), 4) if ptrs[i] == "@" and ptrs[i + 2] == "n"]
    down = [ptrs[i + 1] for i in range(0, len(ptrs), 4) if ptrs[i] == "~" and ptrs[i + 2] == "n"]
    return lemmas, up, down


def read_synset(path: Path, offset: str) -> tuple[list[str], list[str], list[str]]:
    """The synset at ``offset`` of ``data.noun`` (``parse_synset``), at most ``MAX_LINE``
    bytes read."""
    if not (len(offset) == 8 and offset.isdigit()) or int(offset) > MAX_OFFSET:
        raise SynsetError(f"synset {offset[:12]!r}: not an offset of the noun database")
    with path.open("rb") as f:
        f.seek(int(offset))
        raw = f.readline(MAX_LINE + 1)
    return parse_synset(raw.decode("utf-8", errors="replace").rstrip("\n"), offset)


def kinds_known(lex: wordnet.Lexicon, noun: str, folder: Path | None = None) -> float:
    """The smallest share, over the senses of ``noun`` its ImageNet classes fall under, of
    that sense's kinds (direct hyponyms) that hold a class; 1.0 for a sense that is a
    class; 0.0 when it has no classes or WordNet's file is not installed (module doc)."""
    classes = lex.imagenet(noun)
    folder = folder or store.weights_dir()
    data, ids = folder / DATA_FILE, folder / store.IMAGENET_IDS
    if not classes or not data.is_file() or not ids.is_file():
        return 0.0
    return _known(noun, classes, str(data), str(ids), lex.base(noun.split()[-1].lower(), "n")
                  or noun.split()[-1].lower())


@lru_cache(maxsize=256)
def _known(noun: str, classes: frozenset[int], data: str, ids: str, key: str) -> float:
    path = Path(data)
    wnids = Path(ids).read_text(encoding="utf-8").split()
    held: dict[str, set[str]] = {}      # the noun's senses met → their kinds on the paths
    try:
        for index in classes:
            todo, seen = [(wnids[index][1:], "")], set()
            for _ in range(MAX_DEPTH):
                nxt = []
                for off, child in todo:
                    if off in seen:
                        continue
                    seen.add(off)
                    lemmas, up, _down = read_synset(path, off)
                    if key in lemmas:
                        held.setdefault(off, set()).add(child or "self")
                    else:
                        nxt.extend((o, off) for o in up)
                todo = nxt
        shares = []
        for off, kids in held.items():
            _lemmas, _up, down = read_synset(path, off)
            shares.append(1.0 if "self" in kids or not down else len(kids) / len(down))
    except (SynsetError, IndexError) as err:
        log.warning("WordNet's kinds of %r not read: %s", noun, err)
        return 0.0
    return min(shares) if shares else 0.0


def tiles(rgb: np.ndarray) -> list[np.ndarray]:
    """The whole frame, its 2 x 2, 3 x 3 and 4 x 4 grids and its centre half."""
    h, w = rgb.shape[:2]
    out = [rgb]
    for n in (2, 3, 4):
        ys, xs = np.linspace(0, h, n + 1).astype(int), np.linspace(0, w, n + 1).astype(int)
        out += [rgb[ys[i]:ys[i + 1], xs[j]:xs[j + 1]] for i in range(n) for j in range(n)]
    out.append(rgb[h // 4:3 * h // 4, w // 4:3 * w // 4])
    return [t for t in out if min(t.shape[:2]) >= 8]


def refuse_guess(found: Localization, rgb: np.ndarray, crop: np.ndarray, noun: str,
                 lex: wordnet.Lexicon, floor: float) -> Localization:
    """``found`` (the main subject offered as a guess for ``noun``) or a refusal when
    ImageNet knows most kinds of the noun and none registers anywhere (module doc).

    Args:
        found: ``assurance``'s question with the subject as its guess.
        rgb: the photo (uint8 HWC).
        crop: the subject's crop (``second_look``'s).
        noun: the words that name the target.
        lex: the lexicon.
        floor: below this share of the subject's crop, the subject is not one
            (``second_look.SAME_FLOOR``).
    """
    known = kinds_known(lex, noun)
    if known < KINDS_KNOWN:
        return found
    classes = lex.imagenet(noun)
    subject = imagenet.named_share(imagenet.probabilities(crop), classes)
    if subject >= floor:
        log.debug("%r: the subject gives its kinds %.3f", noun, subject)
        return found
    best = max(imagenet.named_share(imagenet.probabilities(t[..., :3]), classes)
               for t in tiles(rgb))
    log.debug("%r: kinds known %.2f, subject %.3f, best tile %.3f", noun, known, subject,
              best)
    if best >= TILE_FLOOR:
        return found
    names = ", ".join(sorted(lex.imagenet_name(i) for i in classes))
    return Localization([], "unresolved", f"no {noun} found: a model that knows 1000 kinds "
                        f"of thing, {names} among them, sees none in any part of the photo "
                        f"(at most {best:.0%}), and its main subject is not one; click it "
                        "if it is there, or paint it with the brush",
                        candidates=found.candidates)

