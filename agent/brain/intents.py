"""The intent library: what Loupe can do to a whole photo, each said several ways.

Each ``Intent`` is one operation with a direction (``brightness`` up, ``contrast`` down,
the ``vintage`` look, a quarter turn clockwise…), a short label for buttons and help, the
canonical instruction a button sends back, and a handful of phrasings in our own words;
each operation declares its own (``Operation.asks`` in ``pipelines/operations/``).
``IntentMatcher`` embeds every phrasing once with the offline MiniLM sentence model
(``pipelines.embeddings.sentence_encoder``) and scores a request by its closest phrasing
per intent (cosine). ``decide`` turns the scores into one of three answers:

* ``plan``: one intent clearly fits;
* ``ask``: two intents of different operations are close (within ``ASK_MARGIN``, or
  within ``UNSURE_MARGIN`` when even the best is below ``UNSURE_SCORE``): the user picks
  with a button;
* ``none``: nothing reaches ``MIN_COSINE`` (the reply says what Loupe can do).

The same library feeds the LLM planner's prompt (``library_text``), so both planners
read requests against one vocabulary.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from pipelines.embeddings import sentence_encoder
from pipelines.operations import operations

log = logging.getLogger(__name__)

#: Cosine below which no intent fits (a similarity, not a critic's 0–10 score).
MIN_COSINE = 0.55
#: Below this the best intent is a guess: ask when another operation is within
#: ``UNSURE_MARGIN``.
UNSURE_SCORE = 0.70
UNSURE_MARGIN = 0.12
#: Above ``UNSURE_SCORE``, two different operations this close still make the planner ask.
ASK_MARGIN = 0.03
#: A confident match: no question even if another operation is close.
SURE_SCORE = 0.86


@dataclass(frozen=True)
class Intent:
    """One thing the app can do to the whole photo, and ways people ask for it.

    Attributes:
        name: unique key (``brightness_up``).
        operation: the catalogue operation.
        params: its parameters at the default strength (signs included).
        label: a short button label ("Brighter").
        instruction: what a button sends back as the next request.
        phrasings: ways to ask, in our own words.
        group: for the help text (light, colour, detail, looks, frame).
    """

    name: str
    operation: str
    params: dict[str, Any]
    label: str
    instruction: str
    phrasings: tuple[str, ...]
    group: str = "light"
    scalable: tuple[str, ...] = field(default=())


#: The help text's groups, in order (an ``Ask``'s ``group``).
_GROUP_ORDER = ("light", "colour", "detail", "looks", "frame")


def _library() -> tuple[Intent, ...]:
    """Every operation's asks (``Operation.asks``), grouped as the help text reads."""
    out = []
    for op in operations():
        for ask in op.asks:
            scalable = tuple(k for k, v in ask.params.items() if isinstance(v, float))
            out.append(Intent(ask.name, op.name, dict(ask.params), ask.label,
                              ask.instruction or ask.label.lower(), ask.phrasings, ask.group,
                              scalable))
    rank = {group: n for n, group in enumerate(_GROUP_ORDER)}
    return tuple(sorted(out, key=lambda i: rank.get(i.group, len(rank))))


LIBRARY: tuple[Intent, ...] = _library()
INTENTS: dict[str, Intent] = {intent.name: intent for intent in LIBRARY}

_GROUPS = {"light": "light", "colour": "colour", "detail": "detail",
           "looks": "looks", "frame": "the frame"}


def capabilities() -> str:
    """What the app can do, in one paragraph (for 'help' replies)."""
    parts = []
    for group, words in _GROUPS.items():
        labels = [i.label.lower() for i in LIBRARY if i.group == group][:6]
        parts.append(f"{words} ({', '.join(labels)})")
    return ("I can change " + "; ".join(parts) + "; and edit things you name, e.g. "
            "'remove the cup', 'make the car red', 'make the dog bigger'.")


def library_text(limit: int = 3) -> str:
    """The library as compact lines for an LLM prompt: phrasings → operation(params)."""
    lines = []
    for intent in LIBRARY:
        args = ", ".join(f"{k}={v}" for k, v in intent.params.items())
        lines.append(f"- {' / '.join(intent.phrasings[:limit])} → {intent.operation}({args})")
    return "\n".join(lines)


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class Decision:
    """What the matcher makes of one request.

    Attributes:
        kind: ``plan``, ``ask`` or ``none``.
        intents: the chosen intent (plan), the two to choose from (ask), or [] (none).
        scores: the matching cosines, best first.
    """

    kind: str
    intents: tuple[Intent, ...] = ()
    scores: tuple[float, ...] = ()


class IntentMatcher:
    """Scores requests against the library with a sentence encoder.

    Args:
        encode: texts → unit-length row vectors; default the offline MiniLM model.
        library: the intents.
    """

    def __init__(self, encode: Any = None, library: tuple[Intent, ...] = LIBRARY) -> None:
        self.library = library
        self._encode = encode
        self._vectors: np.ndarray | None = None
        self._owner: np.ndarray | None = None

    @property
    def encode(self) -> Any:
        if self._encode is None:
            self._encode = sentence_encoder()
        return self._encode

    def warm(self) -> None:
        """Load the model and embed the library (done once, on first use)."""
        if self._vectors is None:
            texts, owner = [], []
            for n, intent in enumerate(self.library):
                texts.extend(intent.phrasings)
                owner.extend([n] * len(intent.phrasings))
            self._vectors = np.asarray(self.encode(texts), np.float32)
            self._owner = np.asarray(owner)

    def scores(self, text: str) -> list[tuple[Intent, float]]:
        """Every intent with its best phrasing's cosine to ``text``, best first."""
        self.warm()
        query = np.asarray(self.encode([text[:300]]), np.float32)[0]
        sims = self._vectors @ query
        best = np.full(len(self.library), -1.0, np.float32)
        np.maximum.at(best, self._owner, sims)
        order = np.argsort(-best)
        return [(self.library[i], float(best[i])) for i in order]

    def decide(self, text: str) -> Decision:
        """``plan``, ``ask`` or ``none`` for one request (see the module doc)."""
        ranked = self.scores(text)
        top, score = ranked[0]
        if score < MIN_COSINE:
            return Decision("none", (), (score,))
        rival = next(((i, s) for i, s in ranked[1:] if i.operation != top.operation), None)
        margin = UNSURE_MARGIN if score < UNSURE_SCORE else ASK_MARGIN
        if rival is not None and score < SURE_SCORE and score - rival[1] < margin:
            return Decision("ask", (top, rival[0]), (score, rival[1]))
        return Decision("plan", (top,), (score,))


@lru_cache(maxsize=1)
def default_matcher() -> IntentMatcher:
    """The shared matcher over the offline MiniLM model (loaded lazily, once)."""
    return IntentMatcher()
