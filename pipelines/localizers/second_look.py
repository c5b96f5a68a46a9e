"""A second look at what the named thing is, through ImageNet's 1000 kinds.

The detector knows ten animals (COCO's bird, cat, dog, horse, sheep, cow, elephant, bear,
zebra, giraffe), so every other animal it sees is forced into one of them: a red panda
reads as a cat, a long-haired goat as a horse. The edit then lands on the wrong animal and
is reported done. ImageNet's classifier knows 398 animals; the lexicon says which of its
classes a noun covers (``wordnet.Lexicon.imagenet``).

``vet`` looks again in these cases, and each can only turn an answer into a question or
a refusal (the user may still click the thing; the candidates stay):

* **an animal the detector named** — the crop of the mask's box (padded by ``PAD``) goes
  through the classifier; when the classes under the named noun and under the detector's
  class together get less than ``SAME_FLOOR`` while other animals get ``OTHER_SURE`` or
  more, it may not be one: a question, not a refusal, since two models disagree (a black
  horse's silhouette reads as a curly-coated retriever at 0.85, the detector 0.75 sure of
  the horse). Tune, as shot: the red panda named "cat" gives the
  cats 0.00 and the lesser panda 0.93; the goat named "horse" gives the horses 0.00 and
  other animals 0.89. When the detector too is under ``DETECTOR_UNSURE`` (the red panda's
  cat 0.45; the goat's horse 0.62 and the black horse's 0.75 stay questions), neither
  model holds it for one and nothing else here looks for one: a refusal (wave 29; on
  tune only these two answers have such readings). The right answers that name a
  detector's animal give their own kind 0.21 (a small cat before a television) to 0.99.
  Two models that are both unsure and disagree ask too: the detector under
  ``DETECTOR_UNSURE`` while the classifier gives the named kinds under ``SAME_WEAK`` and
  other animals ``OTHER_RIVAL`` or more. Tune:
  a rabbit, a foal and a cat named "dog" (detector 0.45-0.55; dogs 0.28-0.44, other
  animals 0.30-0.40: a hare, an impala, a Siamese cat) were resolved and their edits
  reported done; every right answer under 0.6 of the detector gives its own kind 0.73
  or more, or other animals 0.13 or less (a kitten 0.48 / 0.13); a horse the detector
  is 0.86 sure of keeps its 0.28 / 0.43. When the crop of the outline's own box
  (``TIGHT``) reads the same (the rabbit: dogs 0.29, other animals 0.44; the cat 0.42 /
  0.26), it is refused (wave 37); the foal's tight crop gives dogs 0.65: asked.
* **a weak detection** (``assurance``'s "the detector is only 37% sure", or a weak box
  that the outline fills little of: evidence ``weak``, ``weak_part``; ``stand_in``'s
  ``kind_guess``) — the guess is read on both crops (``PAD`` and ``TIGHT``), wave 37:

  - an animal, chosen by no place or order word (not a person), that gives its kinds
    under ``SAME_FLOOR`` on both crops, as does every other candidate the detector holds
    for one at ``DETECTOR_ABSENT`` or more, is not there: a refusal that says what it
    read. Tune: a white rock in an alpine meadow (cow 0.37; oxen 0.01 and 0.00, a
    komondor 0.72), a loafer (cat 0.35; cats 0.00); mirrored, the red panda (cat 0.42)
    and a jellyfish said "the diver" (0.27). Right weak guesses give 0.58 or more (a hen,
    dogs); a goat the detector took for a sheep (0.21) gives 0.10 and 0.12: asked still.
  - one guess whose likeliest class on both crops bears the very name said ("hen",
    "fig") is found, unless the rest of the photo (the padded crop greyed out), or the
    strip beyond it on the side a place word names ("left of it"), gives that class
    ``SAME_FLOOR`` or more: another one may be there, the detector as weak on it. Tune:
    the hen on the left (bird 0.36; "hen" 0.59 and 0.38; IoU 0.96), a fig in a bowl
    (read as a donut, 0.32; "fig" 0.86 and 0.90; IoU 0.98); at 640-1280 px, as shot and
    on the three prints, 0.89 or more, or asked. A breed under the noun does not confirm
    it: mirrored and shrunk to 720 px, a weak dog read as a Samoyed had its outline
    stop short of its body (IoU 0.77), and would have been found. The "tv" (a "screen"
    at 0.20) and the cocktail glass (a "cocktail shaker") stay questions.
  - a kind under the noun confirms it only with its extent (wave 39): the likeliest class
    of both crops is one of the noun's kinds (a Samoyed for "dog"), half or more of each
    crop reads as them (``SAME_WEAK``), and the crop around the outline with the outline
    greyed out reads under ``LEFT_OVER`` of them (``hole.left_over``: what the outline
    left out of the thing is still there to read); then the box and rest-of-photo checks
    above, the rest read for every kind of the noun. Tune, mirrored: the dog on the left
    at 640 px (Samoyed; greyed out 0.12; IoU 0.91) is found; at 720 px its guess is a
    strip of the other dog (IoU 0.29), and greyed out its crop reads 0.58 dog: asked.
* **the main subject offered for a noun nothing here recognises** (``assurance``'s
  question, marked ``subject_guess``), or taken for an animal noun no detector class names
  because the detector sees an animal there (evidence ``kind``: "the snake" on a photo of a
  duck was the duck, resolved) — when ImageNet covers the noun (``covered``: an
  animal with ``COVERED`` classes or more under it, or a noun that is a class's own name)
  and its classes get less than ``SAME_FLOOR`` of the subject's crop, the subject is not
  one, and nothing else here looks for one: "the snake" over a garden lizard (snakes
  0.01), "the fish" over a kingfisher (0.00), "the bee" over a dandelion (0.03). Nouns
  ImageNet knows only by a kind or two of them ("the owl": a great grey owl; "the swan":
  a black one; "the tower": a beacon) are left asking: a barn owl or a white swan would
  read as none of them. Right subjects of covered nouns give them 0.13 (a blank screen)
  to 1.00.

Without the classifier's files it changes nothing.
"""

from __future__ import annotations

import logging

import numpy as np

from pipelines.localizers import absent, hole
from pipelines.localizers.assurance import (
    DETECTOR_ABSENT,
    FILLS_BOX,
    box_fill,
    stops_short,
    unsure,
)
from pipelines.localizers.base import Localization, mask_box
from pipelines.localizers.phrases import Phrase
from pipelines.operations import wordnet
from pipelines.perception import imagenet, store

log = logging.getLogger(__name__)

#: the crop is the mask's box grown by this share of its sides (the classifier sees context)
PAD = 0.15
#: below this, the named kind is absent from the classifier's reading
SAME_FLOOR = 0.05
#: at or above this, the classifier is sure the region is another animal
OTHER_SURE = 0.5
#: both unsure and disagreeing (module doc): the detector under this ...
DETECTOR_UNSURE = 0.6
#: ... the named kinds under this share of the crop ...
SAME_WEAK = 0.5
#: ... and other animals at least this
OTHER_RIVAL = 0.25
#: an animal noun with at least this many ImageNet classes under it is covered by them
COVERED = 3
#: the second crop of a weak detection's guess: the outline's own box, nothing around it
TIGHT = 0.0
#: a weak guess confirmed through a kind under its noun needs the crop around it, its
#: outline greyed out, to read under this share of the noun's kinds (``hole``)
LEFT_OVER = 0.25


def _padded(mask: np.ndarray, pad: float) -> tuple[slice, slice] | None:
    """The rows and columns of ``mask``'s box grown by ``pad`` of its size each way,
    within the photo; None for an empty mask."""
    box = mask_box(mask)
    if box is None:
        return None
    x0, y0, x1, y1 = box
    dy, dx = round(pad * (y1 - y0)), round(pad * (x1 - x0))
    h, w = mask.shape[:2]
    return slice(max(0, y0 - dy), min(h, y1 + dy)), slice(max(0, x0 - dx), min(w, x1 + dx))


def _crop(rgb: np.ndarray, mask: np.ndarray, pad: float = PAD) -> np.ndarray | None:
    where = _padded(mask, pad)
    if where is None:
        return None
    crop = rgb[where[0], where[1], :3]
    return crop if min(crop.shape[:2]) >= 8 else None


def _lexicon() -> wordnet.Lexicon | None:
    """The lexicon, when it and the classifier's files (the ``kinds`` role) are here."""
    lex = wordnet.lexicon()
    return lex if lex is not None and store.role_status()["kinds"].available else None


def reading(rgb: np.ndarray, mask: np.ndarray, noun: str, label: str, pad: float = PAD
            ) -> tuple[float, float, str] | None:
    """What the classifier makes of the region (its box grown by ``pad``): the share of
    the kinds ``noun`` and the detector's ``label`` cover, the share of other animals, and
    the likeliest other animal's name; None when the classifier or the lexicon's kinds
    are not installed."""
    lex = _lexicon()
    if lex is None:
        return None
    animals = lex.imagenet("animal")
    same = _kinds(lex, noun, label)
    if not animals or not same:
        return None
    crop = _crop(rgb, mask, pad)
    if crop is None:
        return None
    probs = imagenet.probabilities(crop)
    others = sorted(animals - same)
    top = others[int(np.argmax(probs[others]))]
    return (imagenet.named_share(probs, same), float(probs[others].sum()),
            lex.imagenet_name(top))


def _kinds(lex: wordnet.Lexicon, noun: str, label: str) -> frozenset[int]:
    """The ImageNet classes the named noun and the detector's class cover (``reading``)."""
    same = lex.imagenet(noun)
    if label in wordnet.CLASS_SENSES:
        same = same | lex.imagenet(wordnet.CLASS_SENSES[label].partition("#")[0])
    return same


def _named(lex: wordnet.Lexicon, noun: str, index: int) -> bool:
    """Whether ImageNet class ``index`` bears the very name ``noun`` says ("fig", "hen";
    not a breed under "dog": a weak dog the classifier read as a Samoyed was confirmed on a
    mirrored, shrunk print with its outline short of its body, IoU 0.77)."""
    said = {" ".join(noun.lower().split()), noun.lower().split()[-1]}
    return lex.imagenet_name(index).lower() in said


def covered(lex: wordnet.Lexicon, noun: str) -> frozenset[int]:
    """The ImageNet classes under ``noun`` when they stand for all of it (module doc):
    those of an animal with ``COVERED`` or more, or a noun that is a class's own name
    ("bee", "strawberry"); empty otherwise."""
    classes = lex.imagenet(noun)
    sense = lex.sense(noun)
    if not classes or sense is None:
        return frozenset()
    said = {" ".join(noun.lower().split()), noun.lower().split()[-1]}
    if any(lex.imagenet_name(i).lower() in said for i in classes):
        return classes
    return classes if sense.category == "animal" and len(classes) >= COVERED else frozenset()


def _absent(found: Localization, rgb: np.ndarray, noun: str) -> Localization:
    """``found`` (the main subject offered for ``noun``) or a refusal when the classifier
    gives the kinds the noun covers next to nothing of it."""
    lex = _lexicon()
    if lex is None:
        return found
    classes = covered(lex, noun)
    crop = _crop(rgb, found.masks[0].mask)
    if crop is None:
        return found
    if not classes:     # "the piano": ImageNet knows it by a kind or two (``absent``)
        return absent.refuse_guess(found, rgb, crop, noun, lex, SAME_FLOOR)
    probs = imagenet.probabilities(crop)
    same = imagenet.named_share(probs, classes)
    log.debug("second look at the subject offered for %r: its kinds %.2f", noun, same)
    if same >= SAME_FLOOR:
        return found
    others = probs.copy()
    others[sorted(classes)] = 0.0
    top = int(np.argmax(others))
    return Localization([], "unresolved", f"no {noun} found: the photo's main subject is "
                        f"not one (a model that knows 1000 kinds of thing reads it as "
                        f"{lex.imagenet_name(top)}, {others[top]:.0%}; {noun} {same:.0%}), "
                        f"and nothing else here looks for a {noun}; click it if it is "
                        "there, or paint it with the brush", candidates=found.candidates)


def _not_there(found: Localization, noun: str, detector: float, reads: str) -> Localization:
    """The refusal of a weak detection the classifier ``reads`` as something else."""
    return Localization([], "unresolved", f"no {noun} found: the detector is only "
                        f"{detector:.0%} sure, and a second model that knows 1000 kinds of "
                        f"thing reads it as {reads}; click it if it is there, or paint it "
                        "with the brush", candidates=found.candidates)


def beyond(parsed: Phrase) -> str | None:
    """Where another of the named kind would make a weak guess the wrong one: "" (anywhere
    else: "the hen"), the side a place word names ("left" for "the hen on the left": left
    of it), or None when an order, a size, a corner, a centre or two sides chose it (where
    the others lie is not known)."""
    sides = [s for s in (parsed.horizontal, parsed.vertical) if s]
    if parsed.ordinal or parsed.last or parsed.size or parsed.corner or parsed.plural or \
            len(sides) > 1 or "centre" in sides:
        return None
    return sides[0] if sides else ""


def _elsewhere(rgb: np.ndarray, mask: np.ndarray, among: str) -> np.ndarray | None:
    """The photo where another of the kind would be (``beyond``): the strip past the
    guess's box on side ``among``, or the whole photo with the guess's padded crop greyed
    out; None when that strip is too thin to read."""
    box = mask_box(mask)
    if box is None:
        return None
    x0, y0, x1, y1 = box
    strips = {"left": rgb[:, :x0], "right": rgb[:, x1:], "top": rgb[:y0], "bottom": rgb[y1:]}
    if among:
        strip = strips[among][..., :3]
        return strip if min(strip.shape[:2]) >= 8 else None
    rest = np.ascontiguousarray(rgb[..., :3]).copy()
    rest[_padded(mask, PAD)] = 127
    return rest


def _kind_and_extent(rgb: np.ndarray, mask: np.ndarray, same: frozenset[int],
                     probs: _Readings, tops: list[int]) -> bool:
    """Whether a weak guess is a kind under the noun ("dog": a Samoyed) on both crops
    (the likeliest class of each, and ``SAME_WEAK`` or more of them on each) and its
    outline holds all of it: greyed out, the crop around it reads under ``LEFT_OVER``
    of those kinds (``hole.left_over``; module doc)."""
    if not same or not all(t in same for t in tops) or \
            min(imagenet.named_share(probs[i], same) for i in (0, 1)) < SAME_WEAK:
        return False
    rest = hole.left_over(rgb, mask, same)
    log.debug("second look around a weak guess, its outline greyed out: %s", rest)
    return rest is not None and rest < LEFT_OVER


class _Readings:
    """The classifier's probabilities of each crop, read on first use and kept."""

    def __init__(self, crops: list[np.ndarray]) -> None:
        self._crops = crops
        self._read: list[np.ndarray | None] = [None] * len(crops)

    def __getitem__(self, i: int) -> np.ndarray:
        if self._read[i] is None:
            self._read[i] = imagenet.probabilities(self._crops[i])
        return self._read[i]


def _weak(found: Localization, rgb: np.ndarray, noun: str, label: str,
          among: str | None) -> Localization:
    """A question asked because the detector is weak (``weak``, ``weak_part``,
    ``kind_guess``) answered by the classifier on two crops of the guess (module doc): a
    refusal when neither gives the named animal ``SAME_FLOOR``, the guess resolved when
    the likeliest class of both is the thing named, else the question as it was."""
    lex = _lexicon()
    best = found.masks[0]
    ev = best.evidence
    crops = [_crop(rgb, best.mask, pad) for pad in (PAD, TIGHT)]
    if lex is None or any(c is None for c in crops):
        return found
    # each crop is read when a step needs it, and no further once a step has decided:
    # a weak cup is asked still after one pass when the close crop is no cup (the zoom)
    probs = _Readings(crops)
    sense = lex.sense(noun.split()[-1])
    same = _kinds(lex, noun, label)
    if sense is not None and sense.category == "animal" and same and label != "person" \
            and "detector" in ev and among == "":
        # every candidate the detector holds for one as much as ``DETECTOR_ABSENT``
        rivals = [c for c in found.candidates if c is not best
                  and c.evidence.get("detector", 0.0) >= DETECTOR_ABSENT]
        reads = [lambda: probs[1]] + [lambda c=c: imagenet.probabilities(c) for r in rivals
                                      for c in (_crop(rgb, r.mask, pad) for pad in (PAD, TIGHT))
                                      if c is not None]
        shares = [imagenet.named_share(probs[0], same)]
        for read in reads:      # one crop that reads as the kind keeps the guess: no more
            if max(shares) >= SAME_FLOOR:
                break
            shares.append(imagenet.named_share(read(), same))
        log.debug("second look at a weak %r and %d other(s): its kinds %s", noun,
                  len(rivals), np.round(shares, 3))
        if max(shares) < SAME_FLOOR:
            others = probs[0].copy()
            others[sorted(same)] = 0.0
            top = int(np.argmax(others))
            detector = float(ev["detector"])
            return _not_there(found, noun, detector, f"{lex.imagenet_name(top)} "
                              f"({others[top]:.0%}; {noun} {max(shares):.0%})")
    if not (ev.get("weak") or ev.get("kind_guess")) or found.guess != 1 or among is None:
        return found
    # not a person: ImageNet knows people only by what they do (a groom, a diver); the
    # close crop is read only when the padded one's reading leaves the question open
    top = int(np.argmax(probs[0]))
    if not _named(lex, noun, top) and (label == "person" or top not in same):
        return found
    tops = [top, int(np.argmax(probs[1]))]
    named = all(_named(lex, noun, t) for t in tops)
    if not named and (label == "person" or
                      not _kind_and_extent(rgb, best.mask, same, probs, tops)):
        return found
    if best.box is not None and (box_fill(best.mask, best.box) < FILLS_BOX
                                 or stops_short(best.mask, best.box)):
        return found
    rest = _elsewhere(rgb, best.mask, among)
    # what confirmed it, not its detector class ("bird"); a kind under the noun ("dog": a
    # Samoyed) is read among all the noun's kinds: any dog elsewhere may be the one meant
    kin = frozenset(tops) if named else same
    there = imagenet.named_share(imagenet.probabilities(rest), kin) if rest is not None \
        else 0.0
    log.debug("second look at the rest of the photo for another %r: %.2f", noun, there)
    if there >= SAME_FLOOR:         # another one may be there, the detector as weak on it
        return found
    sure = min(float(probs[k][i]) for k, i in enumerate(tops))
    log.debug("second look confirms a weak %r: %s", noun, lex.imagenet_name(tops[0]))
    doubt, _, was = found.reason.partition("; is the first one")
    was = was.partition("(it was: ")[2].removesuffix(")") or doubt
    return Localization([best], "resolved", f"{was}; {doubt}, but a second model that "
                        f"knows 1000 kinds of thing reads it as {lex.imagenet_name(tops[0])} "
                        f"({sure:.0%} or more, close and wide)", plural=found.plural,
                        candidates=found.candidates)


def vet(found: Localization, rgb: np.ndarray, noun: str, label: str,
        parsed: Phrase | None = None) -> Localization:
    """``found`` as it is, or a question (an animal the detector named) or a refusal (the
    main subject taken for a noun no detector class names) when the classifier is sure it
    is not a ``noun`` (module doc).

    Args:
        found: the answer after ``assurance.assure``.
        rgb: the photo (uint8 HWC, full resolution).
        noun: the words that name the target ("cat").
        label: the detector class the words were matched to ("cat"), or the salient
            stand-in's label.
        parsed: the phrase's cues: where another of the kind would make a confirmed weak
            guess the wrong one (``beyond``); without it a weak guess is not confirmed.
    """
    if found.status == "ambiguous" and found.masks and (
            found.masks[0].evidence.get("subject_guess")
            or found.masks[0].evidence.get("lookalikes")):   # "the fish": two bison
        return _absent(found, rgb, noun)
    if found.status == "ambiguous" and found.masks and any(
            found.masks[0].evidence.get(k) for k in ("weak", "weak_part", "kind_guess")):
        return _weak(found, rgb, noun, label, beyond(parsed) if parsed else None)
    if found.status != "resolved" or not found.masks:
        return found
    best = max(found.masks, key=lambda m: m.score)
    if best.evidence.get("user"):
        return found
    if best.evidence.get("kind") and "detector" not in best.evidence and \
            len(found.masks) == 1:      # "the snake": the main subject, a detected animal
        return _absent(found, rgb, noun)
    if "detector" not in best.evidence:
        return found
    lex = wordnet.lexicon()
    sense = lex.sense(noun.split()[-1]) if lex is not None else None
    if sense is None or sense.category != "animal" or label not in wordnet.CLASS_SENSES:
        return found
    seen = reading(rgb, best.mask, noun, label)
    if seen is None:
        return found
    same, other, name = seen
    best.evidence["kin"], best.evidence["kin_other"] = same, other
    log.debug("second look at %r: own kinds %.2f, other animals %.2f (%s)", noun, same,
              other, name)
    detector = float(best.evidence["detector"])
    if same < SAME_FLOOR and other >= OTHER_SURE and detector < DETECTOR_UNSURE:
        return _not_there(found, noun, detector, f"another animal ({name}; other animals "
                          f"{other:.0%}, {noun} {same:.0%})")
    if same < SAME_FLOOR and other >= OTHER_SURE:
        return unsure(found, f"a second model that knows 1000 kinds of thing reads it as "
                      f"another animal ({name}; other animals {other:.0%}, {noun} "
                      f"{same:.0%}): it may not be a {noun}", noun)
    # not a person: ImageNet knows people only by what they do (a groom, a diver)
    if detector < DETECTOR_UNSURE and same < SAME_WEAK and other >= OTHER_RIVAL and \
            label != "person":
        close = reading(rgb, best.mask, noun, label, TIGHT)
        if close is not None and close[0] < SAME_WEAK and close[1] >= OTHER_RIVAL:
            return _not_there(found, noun, detector, f"another animal, close and wide "
                              f"({name}; other animals {other:.0%} and {close[1]:.0%}, "
                              f"{noun} {same:.0%} and {close[0]:.0%})")
        return unsure(found, f"the detector is only {detector:.0%} sure, and a second model "
                      f"that knows 1000 kinds of thing reads it as another animal too "
                      f"({name}; other animals {other:.0%}, {noun} {same:.0%}): it may not "
                      f"be a {noun}", noun)
    return found
