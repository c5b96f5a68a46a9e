"""A second thing given the same edit by "too", "as well" or "also" (wave 27).

"make the sky darker, and the trees as well" darkened the sky only and said done (the
clause "the trees as well" read as nothing); "make the trees darker, the sky too" read "the
sky too" with the verb alone ("make the sky too") as a highlights edit of the whole photo.
``also_clauses`` gives such a clause the clause before it with the new thing in place of
its target: "make the trees darker" + "the sky too" → "make the sky darker".
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.brain.exclusions import is_thing

_DET = r"(?:the|its|his|her|their|my|your|our|this|that|these|those)"
_NP = rf"{_DET} (?:[a-z'-]+ ){{0,4}}?[a-z'-]+"
#: "and the trees as well", "the sky too", "also the trees", "and also the grass, too"
_ALSO = re.compile(rf"^(?:(?:and|plus|but)\s+)?(?P<pre>also\s+)?(?P<y>{_NP}?)\s*,?\s*"
                   r"(?P<post>too|as well|also)?[.!]?$")


def also_clauses(clauses: list[str], target_of: Callable[[str], str]) -> list[str]:
    """``clauses`` with each "Y too" / "Y as well" / "also Y" said after a clause that
    names its target replaced by that clause with Y in place of the target (module doc).

    Args:
        clauses: the request's clauses, in order.
        target_of: the target words a clause names ("" for none or the whole photo).
    """
    out: list[str] = []
    for clause in clauses:
        said = _ALSO.match(clause.strip())
        if said and out and (said.group("pre") or said.group("post")) and \
                is_thing(said.group("y")):
            before = out[-1]
            target = target_of(before)
            at = re.search(rf"\b(?:{_DET} )?{re.escape(target)}\b", before) if target else None
            if at:
                out.append(f"{before[:at.start()]}{said.group('y')}{before[at.end():]}")
                continue
        out.append(clause)
    return out
