"""WordNet 3.0, read by our own small reader: parts of speech, what a noun is, nouns.

The database ships in Debian's ``wordnet-base`` (Princeton's WordNet 3.0 licence; the
package, files, checksums and licence are in ``pipelines/perception/manifest.json``, and
``python -m pipelines.perception fetch`` installs them as ``weights/wordnet-*``). At fetch
time ``build_index`` derives one compact text file from the raw database (a few MB of
plain lines instead of 30 MB of synsets), so that a cold process loads what the planner
and the localiser ask (``Lexicon``) in well under 0.3 s (``bench/lexicon_load.py``):

* the parts of speech of every lemma (``pos("pump")`` → ``{"n", "v"}``);
* the base form of inflected words (``base("leaves", "n")`` → ``"leaf"``, from WordNet's
  exception lists and its detachment rules);
* for nouns of things a photo can show, their perception *category* (``"animal"``,
  ``"plant part"``, ``"vehicle"``, …: the first category found on the hypernym path of the
  noun's first sense that has one) and the detector class it falls under, when its hypernym
  path reaches one (``"sedan"`` → car, ``"puppy"`` → dog);
* for nouns over ImageNet's 1000 kinds (themselves WordNet synsets; their ids in class
  order ship with the perception files), which of those classes the noun's commonest senses
  cover (``imagenet("squirrel")`` → fox squirrel's index, ``imagenet("dog")`` → the 118
  breeds'), so ``pipelines.perception.imagenet`` can check a region is what was named.

``lexicon()`` returns ``None`` when the files are not installed: every caller then works
as it did before the lexicon existed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)

#: the raw database files the index is built from (installed under ``weights/wordnet``)
SOURCE_FILES = ("index.noun", "index.verb", "index.adj", "index.adv", "data.noun",
                "noun.exc", "verb.exc", "adj.exc")
#: the installed files' prefix in the weights folder ("wordnet-index.noun")
PREFIX = "wordnet-"
INDEX_NAME = "wordnet-lexicon.tsv"
#: bump when the index format or the categories change (the fetch step rebuilds it)
INDEX_VERSION = 7

#: a noun covers the ImageNet classes under its first ``KIND_SENSES`` senses; one that
#: covers more than ``KIND_MAX`` of them is too wide to check anything ("animal" covers 398)
KIND_SENSES, KIND_MAX = 3, 400

#: perception categories, most specific first: (name, WordNet "lemma#sense" roots)
CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("person", ("person#1",)),
    ("body part", ("body_part#1",)),
    ("animal", ("animal#1",)),
    ("plant part", ("plant_part#1",)),
    ("plant", ("plant#2",)),
    ("food", ("food#1", "food#2", "edible_fruit#1")),
    ("vehicle", ("vehicle#1", "craft#2")),
    ("furniture", ("furniture#1",)),
    ("clothing", ("clothing#1", "headdress#1", "footwear#2")),
    ("container", ("container#1",)),
    ("device", ("device#1", "equipment#1", "implement#1")),
    ("structure", ("structure#1", "obstruction#1")),
    ("natural object", ("natural_object#1",)),
    # a poster, a placard, a street sign: WordNet files these under communication, so
    # without this root a later reading won ("poster": one who posts, then a horse)
    ("sign", ("sign#2",)),
    ("landform", ("geological_formation#1",)),
    ("body of water", ("body_of_water#1",)),
    ("object", ("artifact#1", "whole#2")),
)

#: the detector's classes as WordNet senses (a noun under one of these is that class)
CLASS_SENSES: dict[str, str] = {
    "person": "person#1", "bicycle": "bicycle#1", "car": "car#1",
    "motorcycle": "motorcycle#1", "airplane": "airplane#1", "bus": "bus#1",
    "train": "train#1", "truck": "truck#1", "boat": "boat#1",
    "traffic light": "traffic_light#1", "fire hydrant": "fireplug#1",
    "parking meter": "parking_meter#1", "bench": "bench#1", "bird": "bird#1", "cat": "cat#1",
    "dog": "dog#1", "horse": "horse#1", "sheep": "sheep#1", "cow": "cattle#1",
    "elephant": "elephant#1", "bear": "bear#1", "zebra": "zebra#1", "giraffe": "giraffe#1",
    "backpack": "backpack#1", "umbrella": "umbrella#1", "handbag": "bag#4",
    "tie": "necktie#1", "suitcase": "bag#6", "frisbee": "frisbee#1", "skis": "ski#1",
    "snowboard": "snowboard#1", "sports ball": "ball#1", "kite": "kite#3",
    "baseball bat": "baseball_bat#1", "baseball glove": "baseball_glove#1",
    "skateboard": "skateboard#1", "surfboard": "surfboard#1", "tennis racket": "racket#4",
    "bottle": "bottle#1", "wine glass": "wineglass#1", "cup": "cup#1", "fork": "fork#1",
    "knife": "knife#1", "spoon": "spoon#1", "bowl": "bowl#3", "banana": "banana#2",
    "apple": "apple#1", "sandwich": "sandwich#1", "orange": "orange#1",
    "broccoli": "broccoli#2", "carrot": "carrot#3", "hot dog": "hotdog#2",
    "pizza": "pizza#1", "donut": "doughnut#2", "cake": "cake#3", "chair": "chair#1",
    "couch": "sofa#1", "potted plant": "pot_plant#1", "bed": "bed#1",
    "dining table": "table#2", "toilet": "toilet#2", "tv": "television_receiver#1",
    "laptop": "laptop#1", "mouse": "mouse#4", "remote": "remote_control#1",
    "keyboard": "computer_keyboard#1", "cell phone": "cellular_telephone#1",
    "microwave": "microwave#2", "oven": "oven#1", "toaster": "toaster#2",
    "sink": "sink#1", "refrigerator": "electric_refrigerator#1", "book": "book#2",
    "clock": "clock#1", "vase": "vase#1", "scissors": "scissors#1",
    "teddy bear": "teddy#1", "hair drier": "hand_blower#1", "toothbrush": "toothbrush#1",
}

#: categories of things a photo shows as an object (typo vocabulary: nouns under these)
PHYSICAL = frozenset(name for name, _ in CATEGORIES)

_POS_FILES = {"n": "index.noun", "v": "index.verb", "a": "index.adj", "r": "index.adv"}
#: WordNet's detachment rules (morphy): suffix → replacement, per part of speech
_RULES = {"n": (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
                ("men", "man"), ("ies", "y"), ("s", "")),
          "v": (("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
                ("ing", "e"), ("ing", ""), ("s", "")),
          "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e"), ("ier", "y"),
                ("iest", "y"))}


@dataclass(frozen=True)
class Sense:
    """What the lexicon knows of a noun: its category and detector class ("" if none)."""

    category: str
    label: str


class Lexicon:
    """The derived index in memory (see the module doc); build with ``load``."""

    def __init__(self, pos: dict[str, set[str]], exceptions: dict[str, dict[str, str]],
                 senses: dict[str, Sense], kinds: str = "",
                 kind_names: tuple[str, ...] = ()) -> None:
        self._pos = pos
        self._kind_names = kind_names
        self._exceptions = exceptions
        self._senses = senses
        self._kinds_text = kinds
        self._kinds: dict[str, str] | None = None

    # parts of speech ---------------------------------------------------------------
    def pos(self, word: str) -> set[str]:
        """The parts of speech (``n``, ``v``, ``a``, ``r``) of a word or any base form."""
        word = word.lower().strip().replace(" ", "_")
        found = {p for p, words in self._pos.items() if word in words}
        for p in ("n", "v", "a"):
            if p not in found and self.base(word, p) != word:
                found.add(p)
        return found

    def is_verb(self, word: str) -> bool:
        """Whether ``word`` (any inflection) is a verb lemma."""
        return "v" in self.pos(word)

    def is_noun(self, word: str) -> bool:
        """Whether ``word`` (any inflection) is a noun lemma."""
        return "n" in self.pos(word)

    def base(self, word: str, pos: str) -> str:
        """The lemma of an inflected ``word`` in part of speech ``pos`` (``word`` when it
        is a lemma already or none is found): "leaves" → "leaf", "removing" → "remove"."""
        word = word.lower().strip().replace(" ", "_")
        words = self._pos.get(pos, set())
        if word in words:
            return word
        irregular = self._exceptions.get(pos, {}).get(word)
        if irregular:
            return irregular
        for suffix, repl in _RULES.get(pos, ()):
            if word.endswith(suffix) and len(word) > len(suffix) + 1:
                stem = word[:-len(suffix)] + repl
                if stem in words:
                    return stem
                if suffix in ("ing", "ed") and len(stem) > 2 and stem[-1] == stem[-2] and \
                        stem[:-1] in words:          # "stopping" → "stop"
                    return stem[:-1]
        return word

    # nouns -------------------------------------------------------------------------
    def sense(self, noun: str) -> Sense | None:
        """The category and detector class of a noun (or its last word), or None."""
        text = " ".join(noun.lower().split())
        for key in (text.replace(" ", "_"), text.split()[-1] if text else ""):
            if not key:
                continue
            found = self._senses.get(key) or self._senses.get(self.base(key, "n"))
            if found is not None:
                return found
        return None

    def imagenet(self, noun: str) -> frozenset[int]:
        """The ImageNet-1k classes (indices) under the commonest senses of a noun (or of
        its last word); empty when none is, or the index was built without them."""
        if self._kinds is None:
            self._kinds = dict(line.split("\t", 1) for line in self._kinds_text.splitlines()
                               if "\t" in line)
        text = " ".join(noun.lower().split())
        for key in (text.replace(" ", "_"), text.split()[-1] if text else ""):
            if not key:
                continue
            found = self._kinds.get(key) or self._kinds.get(self.base(key, "n"))
            if found:
                return frozenset(int(i) for i in found.split(","))
        return frozenset()

    def imagenet_name(self, index: int) -> str:
        """An ImageNet class's name in words ("lesser panda"); "" when not in the index."""
        if 0 <= index < len(self._kind_names):
            return self._kind_names[index].replace("_", " ")
        return ""

    def object_nouns(self) -> Iterable[str]:
        """Single-word nouns of things a photo can show (for spelling correction)."""
        return (w for w in self._senses if w.isalpha())


# ------------------------------------------------------------------------ loading


def index_path(folder: Path | None = None) -> Path:
    """Where the derived index lives (``weights/wordnet-lexicon.tsv``)."""
    if folder is None:
        from pipelines.config import get_settings  # settings read lazily: import-time free

        folder = get_settings().weights_dir
    return Path(folder) / INDEX_NAME


def load(path: Path) -> Lexicon:
    """Read a derived index (``build_index``'s output).

    Raises:
        OSError: unreadable file; ValueError: another format or version.
    """
    text = path.read_text(encoding="utf-8")
    blocks = text.split("\n@")
    head = blocks[0].split()
    if len(head) < 2 or head[0] != "#loupe-wordnet" or head[1] != str(INDEX_VERSION):
        raise ValueError(f"{path} is not a version-{INDEX_VERSION} lexicon index")
    pos: dict[str, set[str]] = {}
    exceptions: dict[str, dict[str, str]] = {}
    senses: dict[str, Sense] = {}
    kinds: str = ""
    names: tuple[str, ...] = ()
    for block in blocks[1:]:
        name, _, body = block.partition("\n")
        kind, _, part = name.partition(" ")
        if kind == "pos":
            pos[part] = set(body.split())
        elif kind == "exc":
            exceptions[part] = dict(line.split("\t", 1) for line in body.splitlines() if line)
        elif kind == "cat":
            category, _, label = part.partition("|")
            one = Sense(category, label)
            for word in body.split():
                senses.setdefault(word, one)
        elif kind == "inet":
            kinds = body      # read on the first question (``Lexicon.imagenet``)
        elif kind == "inetname":
            names = tuple(body.split())
    return Lexicon(pos, exceptions, senses, kinds, names)


@lru_cache(maxsize=1)
def lexicon() -> Lexicon | None:
    """The installed lexicon, loaded once per process; None when it is not installed."""
    path = index_path()
    try:
        return load(path)
    except (OSError, ValueError) as err:
        log.info("WordNet lexicon not available (%s): planning and localising without it "
                 "(install it with `python -m pipelines.perception fetch`)", err)
        return None


# ------------------------------------------------------------------------ building


def _read_index(path: Path) -> dict[str, list[str]]:
    """lemma → its synset offsets in sense order."""
    out: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith(" "):
            continue
        parts = line.split()
        synsets = int(parts[2])
        out[parts[0]] = parts[-synsets:]
    return out


def _read_hypernyms(path: Path) -> tuple[dict[str, list[str]], set[str]]:
    """synset offset → its hypernyms' offsets, and the offsets of instances (proper names:
    "Crane" the poet, "Skye" the island), which are left out of the paths so a common noun
    is never read as a named person or place."""
    out: dict[str, list[str]] = {}
    instances: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith(" "):
            continue
        fields = line.split(" | ", 1)[0].split()
        words = int(fields[3], 16)
        at = 4 + 2 * words
        count = int(fields[at])
        ptrs = fields[at + 1: at + 1 + 4 * count]
        out[fields[0]] = [ptrs[i + 1] for i in range(0, len(ptrs), 4)
                          if ptrs[i] == "@" and ptrs[i + 2] == "n"]
        if "@i" in ptrs[::4]:
            instances.add(fields[0])
    return out, instances


def _offset(nouns: dict[str, list[str]], key: str) -> str:
    lemma, _, sense = key.partition("#")
    return nouns[lemma][int(sense or 1) - 1]


def _ancestors(offset: str, hypernyms: dict[str, list[str]]) -> list[str]:
    """The synset and all its hypernyms, nearest first."""
    seen, order, todo = set(), [], [offset]
    while todo:
        nxt = []
        for off in todo:
            if off not in seen:
                seen.add(off)
                order.append(off)
                nxt.extend(hypernyms.get(off, []))
        todo = nxt
    return order


def build_index(source: Path, out: Path, imagenet: Path | None = None) -> Path:
    """Derive the compact index from WordNet's database files in ``source``.

    Args:
        source: a folder holding ``SOURCE_FILES``.
        out: the index file to write.
        imagenet: ImageNet-1k's WordNet ids in class order (``n01440764`` per line), or
            None for an index without ImageNet's classes.

    Returns:
        ``out``.
    """
    lemmas = {p: _read_index(source / f) for p, f in _POS_FILES.items()}
    nouns = lemmas["n"]
    hypernyms, instances = _read_hypernyms(source / "data.noun")
    # a lemma that only names instances is a proper name, not a noun for our purposes
    lemmas["n"] = {w: o for w, o in nouns.items() if not set(o) <= instances}
    nouns = lemmas["n"]
    roots = {_offset(nouns, k): name for name, keys in CATEGORIES for k in keys}
    rank = {name: i for i, (name, _) in enumerate(CATEGORIES)}
    classes = {_offset(nouns, k): label for label, k in CLASS_SENSES.items()}
    groups: dict[tuple[str, str], list[str]] = {}
    for lemma, offsets in nouns.items():
        readings = []
        for off in offsets[:4]:          # the commonest senses, in order
            chain = _ancestors(off, hypernyms)
            found = [roots[a] for a in chain if a in roots]
            if found:
                readings.append((min(found, key=rank.__getitem__),
                                 next((classes[a] for a in chain if a in classes), "")))
        # the first reading wins, but a role said of a person ("jumper", "mug": a fool)
        # yields to a thing the same word names: a photo's targets are mostly things
        things = [r for r in readings if r[0] != "person"]
        if readings:
            groups.setdefault(things[0] if things and readings[0][0] == "person"
                              else readings[0], []).append(lemma)
    lines = [f"#loupe-wordnet {INDEX_VERSION} WordNet 3.0 (Princeton), derived index"]
    for p, words in lemmas.items():
        lines.append(f"@pos {p}")
        lines.append(" ".join(sorted(words)))
    for p in ("n", "v", "a"):
        lines.append(f"@exc {p}")
        exc = source / {"n": "noun.exc", "v": "verb.exc", "a": "adj.exc"}[p]
        for line in exc.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) >= 2:
                lines.append(f"{parts[0]}\t{parts[1]}")
    for (category, label), words in sorted(groups.items()):
        lines.append(f"@cat {category}|{label}")
        lines.append(" ".join(sorted(words)))
    if imagenet is not None:
        lines.append("@inet")
        for lemma, classes in sorted(_imagenet_classes(imagenet, nouns, hypernyms).items()):
            lines.append(f"{lemma}\t{','.join(map(str, sorted(classes)))}")
        lines.append("@inetname")       # each class's first lemma, in class order
        lines.append(" ".join(_imagenet_names(imagenet, source / "data.noun")))
    out.parent.mkdir(parents=True, exist_ok=True)
    from pipelines.files import atomic_write  # file helper; pipelines.files is a leaf

    atomic_write(out, "\n".join(lines) + "\n")
    return out


def _imagenet_classes(path: Path, nouns: dict[str, list[str]],
                      hypernyms: dict[str, list[str]]) -> dict[str, set[int]]:
    """lemma → the ImageNet classes under one of its ``KIND_SENSES`` commonest senses (at
    most ``KIND_MAX`` classes: a word as wide as "organism" checks nothing)."""
    wnids = path.read_text(encoding="utf-8").split()
    if len(wnids) != 1000 or not all(re.fullmatch(r"n\d{8}", w) for w in wnids):
        raise ValueError(f"{path.name}: not 1000 ImageNet WordNet ids")
    by_offset: dict[str, list[str]] = {}
    for lemma, offsets in nouns.items():
        for off in offsets[:KIND_SENSES]:
            by_offset.setdefault(off, []).append(lemma)
    out: dict[str, set[int]] = {}
    for index, wnid in enumerate(wnids):
        for off in _ancestors(wnid[1:], hypernyms):
            for lemma in by_offset.get(off, ()):
                out.setdefault(lemma, set()).add(index)
    return {lemma: classes for lemma, classes in out.items() if len(classes) <= KIND_MAX}


def _imagenet_names(path: Path, data: Path) -> list[str]:
    """ImageNet-1k's classes in class order, each as its synset's first lemma
    ("lesser_panda"), for messages that say what a region looks like instead."""
    wnids = path.read_text(encoding="utf-8").split()
    first: dict[str, str] = {}
    for line in data.read_text(encoding="utf-8", errors="replace").splitlines():
        if line[:1].isdigit():
            fields = line.split(" ", 5)
            first[fields[0]] = fields[4]
    return [first.get(w[1:], w) for w in wnids]


def describe(noun: str, sense: Sense) -> str:
    """How a noun was understood, for the chat: "squirrel: an animal"."""
    article = "an" if re.match(r"[aeiou]", sense.category) else "a"
    text = f"{noun}: {article} {sense.category}"
    if sense.label and sense.label != noun:
        text += f" (a kind of {sense.label})"
    return text
