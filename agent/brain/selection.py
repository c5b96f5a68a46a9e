"""Which words mean "the selection" (issue 24).

While a clicked selection exists, "this", "that", "the selection", "the selected …" and a
bare "it" bind to it; "the whole photo", "everything" and the like override it, and a
request that names something else ("make the cup blue") is localised as usual.
"""

from __future__ import annotations

import re

from pipelines.localizers.phrases import WHOLE

_SELECTION = re.compile(r"\b(this|that|these|those|(the )?selection|selected|selected "
                        r"(area|part|object|one))\b")
_IT = re.compile(r"\b(it|its)\b")
#: "it" with a noun phrase of its own nearby is not bare ("it" is then the other thing)
_NAMED = re.compile(r"\bthe (?!selection\b|selected\b|whole\b|entire\b)[a-z]+")


def refers_to_selection(instruction: str) -> bool:
    """Whether ``instruction`` points at the selection (see the module doc)."""
    text = " ".join(str(instruction or "").lower().split())
    if not text or WHOLE.search(text):
        return False
    if _SELECTION.search(text):
        return True
    return bool(_IT.search(text)) and not _NAMED.search(text)
