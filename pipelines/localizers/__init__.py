"""Localisation: turn a phrase (and an optional hint) into scored target masks.

* ``base`` — the ``Localizer`` protocol and the one result type, ``Localization``: scored
  ``Candidate`` regions (id, label, score, box, mask, evidence), the chosen one(s), a
  confidence and an honest status (resolved / ambiguous / unresolved);
* ``phrases`` — colour, ordinal, size, position and plural cues, and choosing among
  candidates by them;
* ``segment`` — pixel work: masks resized and split, GrabCut, box → mask refinement;
* ``embedded`` — brush, box, point, colour and place words, sky, subject (no weights);
* ``perception`` — the embedded localiser with eyes (NanoDet, BlazeFace, U²-Net-p, text);
* ``grounded_sam`` — GroundingDINO boxes and SAM masks;
* ``registry`` — every localiser by name and ``get_localizer()``, the best available.
"""

from pipelines.localizers.base import (
    Candidate,
    Evidence,
    Hint,
    Localization,
    LocalizationError,
    Localizer,
    Mask,
)
from pipelines.localizers.embedded import EmbeddedLocalizer
from pipelines.localizers.grounded_sam import GroundedSAMLocalizer
from pipelines.localizers.perception import PerceptionLocalizer
from pipelines.localizers.phrases import parse_phrase
from pipelines.localizers.registry import LOCALIZERS, get_localizer, register_localizer

__all__ = [
    "LOCALIZERS", "Candidate", "EmbeddedLocalizer", "Evidence", "GroundedSAMLocalizer",
    "Hint", "Localization", "LocalizationError", "Localizer", "Mask", "PerceptionLocalizer",
    "get_localizer", "parse_phrase", "register_localizer",
]
