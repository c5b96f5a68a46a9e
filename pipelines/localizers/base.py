"""The localiser protocol and the one result type every localiser returns.

A localiser turns a phrase (and an optional user hint) into a ``Localization``:

* ``candidates`` — every region it scored, best first. Each ``Candidate`` has a stable
  ``id`` within the answer (``c0``, ``c1`` …), a ``label``, a ``score`` in [0, 1], a
  ``box`` (x0, y0, x1, y1, derived from the mask when not given), a bool ``mask`` at the
  image's size, the ``source`` that produced it and the ``evidence`` behind the score
  (named factors in [0, 1], see ``Evidence``);
* ``status`` — ``resolved`` (``chosen`` names the target(s)), ``ambiguous`` (several
  candidates or a weak one; the caller decides or asks) or ``unresolved`` (nothing found;
  ``reason`` says why). Never a guess presented as certain;
* ``chosen`` — the ids of the target(s): the best one, or every one of ``masks`` when the
  phrase is ``plural`` ("the cats"); empty unless resolved;
* ``confidence`` — how sure the localiser is, in [0, 1]: the weakest chosen score when
  resolved, the margin of the best candidate over the runner-up when ambiguous, 0 when
  unresolved (a localiser may set it itself).

``masks`` (and ``best``/``union()``) keep the earlier meaning for existing callers:
resolved → the target(s), best first; ambiguous → the candidates shown to the user.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, TypedDict

import numpy as np

from pipelines.arrays import rgb_array

Box = tuple[int, int, int, int]
STATUSES = ("resolved", "ambiguous", "unresolved")


class LocalizationError(ValueError):
    """A malformed image or hint (a caller error, not an unresolved phrase)."""


class Evidence(TypedDict, total=False):
    """What a candidate's score rests on; each factor is in [0, 1], absent when unused.

    ``detector``: a detector's box score; ``segmenter``: the mask model's own quality
    estimate (SAM's IoU); ``colour``: how much of the region is the named colour;
    ``size``: area relative to the largest candidate; ``fill``: how much of its box the
    region fills; ``position``: how well it sits where the phrase says; ``words``: how well
    its label matches the phrase; ``user``: the user pointed at it (brush, box, click);
    ``continues``: how much more of a sky-like region goes on below where the sky was cut,
    as a share of the sky kept (``sky.ends_unsure``); ``rough_edge``: how much of a sky is
    textured under its open top, by rows (``sky.rough_edge``); ``straddles``: how much of the
    frame the sky-coloured regions of the sky's own colour that start above its horizon but
    lie mostly below it fill (``sky.ends_unsure``); ``pockets``, ``fringe``: how much of the
    frame the paler sky-coloured pockets apart from a sky and the blue fringe taken out of
    it as textured fill (``sky_pockets.pockets_unsure``); ``canopy``: how much of the frame
    the sky-like pixels of any sky colour taken out of it as textured fill, ``bank``: the
    cloud banks left apart from it (the same); ``beside``: what is left out under the sky's
    cut once the open sky beside a building is taken, as a share of the sky kept (1 when
    not tried), ``wires``: the share of the sky's lower edge that goes on past a wire
    (``sky_beside``; read only when ``beside`` was tried); ``through``: the pockets of blue
    sky seen through foliage or a lattice taken pixel by pixel, as a share of the sky found
    (``sky_through.seen_through``);
    ``larger``: the score of a
    larger box of the named class around the one taken (``fusion.larger_reading``);
    ``kin``, ``kin_other``: how much of ImageNet's classifier's reading of an animal's crop
    falls on the named kind and on other animals (``second_look.vet``); ``subject_guess``: the
    photo's main subject offered for a noun nothing here recognises (``assurance.assure``);
    ``weak``, ``weak_part``: the detector score of a guess asked about only because it is
    weak, or because it is weak and its outline fills little of its box (the same;
    ``second_look.vet`` settles it with the classifier when it can);
    ``runs_on``: how much a sky grows, as a share of itself, when grown on a few pixels by
    its own colour into smooth pixels (``sky_pockets.runs_on``: its edge is no edge).
    """

    detector: float
    segmenter: float
    colour: float
    size: float
    fill: float
    position: float
    words: float
    user: float
    continues: float
    rough_edge: float
    straddles: float
    pockets: float
    fringe: float
    canopy: float
    bank: float
    beside: float
    wires: float
    larger: float
    kin: float
    kin_other: float
    subject_guess: float
    weak: float
    weak_part: float
    runs_on: float


def mask_box(mask: np.ndarray) -> Box | None:
    """The tight box (x0, y0, x1, y1) around a bool mask's pixels, or None when empty."""
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero(mask.any(axis=0))
    return int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1


@dataclass
class Candidate:
    """One scored region: a bool mask at the image's size, a score in [0, 1]."""

    mask: np.ndarray
    score: float
    label: str
    source: str
    evidence: Evidence = field(default_factory=dict)
    box: Box | None = None
    id: str = ""

    @property
    def area(self) -> int:
        return int(np.count_nonzero(self.mask))

    @property
    def bbox(self) -> Box | None:
        """``box`` when given, else the tight box of the mask (None when empty)."""
        return self.box if self.box is not None else mask_box(np.asarray(self.mask, bool))

    def summary(self) -> dict:
        """A JSON-serialisable view (no pixels): id, label, score, box, source, evidence."""
        box = self.bbox
        return {"id": self.id, "label": self.label, "score": round(float(self.score), 4),
                "box": list(box) if box else None, "source": self.source,
                "evidence": {k: round(float(v), 4) for k, v in self.evidence.items()}}


#: the earlier name of a candidate, kept for callers written against it
Mask = Candidate


@dataclass
class Localization:
    """The answer of a localiser for one phrase (see the module doc).

    ``masks`` is what the localiser hands on: the target(s) when resolved, the candidates
    when ambiguous. ``candidates`` holds every candidate it scored (``masks`` included),
    best first; when not given it is ``masks``. ``guess``: when an answer is only asked to
    be confirmed (``assurance``), how many of the first ``masks`` are the guess.
    """

    masks: list[Candidate] = field(default_factory=list)
    status: str = "unresolved"
    reason: str = ""
    plural: bool = False
    candidates: list[Candidate] = field(default_factory=list)
    confidence: float | None = None
    guess: int = 0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        known = {id(c) for c in self.candidates}
        extra = [m for m in self.masks if id(m) not in known]
        self.candidates = sorted(self.candidates + extra, key=lambda c: -c.score)
        taken = {c.id for c in self.candidates if c.id}
        n = 0
        for cand in self.candidates:
            while not cand.id and f"c{n}" in taken:
                n += 1
            if not cand.id:
                cand.id = f"c{n}"
                taken.add(cand.id)
        if self.confidence is None:
            self.confidence = self._confidence()

    def candidate(self, candidate_id: str) -> Candidate | None:
        """The candidate with this id (``c0``, ``c1`` …), or None."""
        return next((c for c in self.candidates if c.id == candidate_id), None)

    @property
    def best(self) -> Candidate | None:
        """The highest-scoring of ``masks``, or None."""
        return max(self.masks, key=lambda m: m.score) if self.masks else None

    @property
    def chosen(self) -> list[str]:
        """Ids of the target(s): every mask when plural, else the best; empty unless
        resolved."""
        if self.status != "resolved" or not self.masks:
            return []
        return [m.id for m in self.masks] if self.plural else [self.best.id]

    def _confidence(self) -> float:
        """The default confidence (module doc): set once, when the answer is made."""
        if self.status == "resolved" and self.masks:
            picked = self.masks if self.plural else [self.best]
            return float(min(m.score for m in picked))
        if self.status == "ambiguous" and self.candidates:
            scores = sorted((c.score for c in self.candidates), reverse=True)
            return float(scores[0] - (scores[1] if len(scores) > 1 else 0.0))
        return 0.0

    def union(self) -> np.ndarray | None:
        """All of ``masks`` merged (for plural targets), or None."""
        if not self.masks:
            return None
        return np.logical_or.reduce([m.mask for m in self.masks])

    def summary(self) -> dict:
        """A JSON-serialisable view: status, reason, plural, chosen, confidence and the
        candidates without their pixels."""
        return {"status": self.status, "reason": self.reason, "plural": self.plural,
                "chosen": self.chosen, "confidence": round(float(self.confidence or 0.0), 4),
                "candidates": [c.summary() for c in self.candidates]}


class Localizer(ABC):
    """Base class of every localiser: ``locate(image, phrase, hint) -> Localization``."""

    name: ClassVar[str] = ""
    requires_weights: ClassVar[bool] = False
    #: among available model-based localisers the highest wins (ties: registration order)
    priority: ClassVar[int] = 0

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        """Whether this localiser can run here, and why not (override for model-based)."""
        return True, ""

    @abstractmethod
    def locate(self, image: np.ndarray, phrase: str, hint: Hint | None = None) -> Localization:
        """Find the target ``phrase`` names in ``image`` (uint8 HWC RGB/RGBA)."""


@dataclass
class Hint:
    """What the user pointed at: a brush mask (any size), a box or a point (x, y).

    A brush mask is used exactly as painted, unless ``refine`` is set and the phrase
    names a colour: then it narrows to that colour's pixels inside the brush (a loosely
    painted "red car" to recolour). Leave it off for removals, which need the whole
    painted object.
    """

    mask: np.ndarray | None = None
    box: Box | None = None
    point: tuple[int, int] | None = None
    refine: bool = False

    @property
    def given(self) -> bool:
        """Whether the user pointed at anything (a mask, a box or a point)."""
        return self.mask is not None or self.box is not None or self.point is not None


def as_rgb(image: np.ndarray) -> np.ndarray:
    """The caller's image as contiguous uint8 RGB (grey is stacked, alpha dropped).

    Raises:
        LocalizationError: not a uint8 RGB/RGBA/grey array.
    """
    return rgb_array(image, "image", error=LocalizationError, grey=True)


def resolved(chosen: list[Candidate], what: str, candidates: list[Candidate] | None = None,
             plural: bool = False) -> Localization:
    """A resolved answer for ``chosen`` among ``candidates`` (default: just ``chosen``)."""
    return Localization(chosen, "resolved", f"resolved to {what}", plural=plural,
                        candidates=list(candidates or []))
