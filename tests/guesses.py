"""The user's click on the guess an unsure answer offers first (issue 32).

``assurance.assure`` turns answers nothing here can verify (the salient subject taken as
"the emblem") into questions whose first candidate is the guess. Tests of extents and
edit mechanics on composites play the user who clicks that guess; whether the guess is
asked at all is ``tests/test_assurance.py``'s business.
"""

from __future__ import annotations

from typing import Any

from pipelines.localizers.assurance import CONFIRM
from pipelines.localizers.base import Localization


def confirmed(found: Localization) -> Localization:
    """``found`` as it is, or, when it only asks to confirm its guess, that guess
    resolved (as the user's click on it would)."""
    if found.status == "ambiguous" and CONFIRM in found.reason and found.guess:
        return Localization(found.masks[:found.guess], "resolved", found.reason,
                            plural=found.plural, candidates=found.candidates)
    return found


def turn_confirmed(session: Any, instruction: str) -> Any:
    """``session.turn(instruction)``; when it only asked, the user clicks the first
    candidate offered (the guess) and that turn's result is returned."""
    result = session.turn(instruction)
    if result.candidates and not any(s.status == "applied" for s in result.steps):
        result = session.choose(result.candidates[0]["id"])
    return result
