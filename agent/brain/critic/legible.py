"""Is blurred writing still legible? (issue 32: "blur the number plate" at 16 MP)

A blur of a few pixels hides a number plate on a small photo and leaves it readable on a
large one: on the bus photo enlarged to 16 MP the plate's line is 175 px tall, and after
the default 4-px blur, and after 8 or 16, PP-OCRv4 still reads 'EBY-584' (at a sigma of a
fifth of the line it reads nothing). The fine-detail ratio the blur's own check reads
falls to 0.68, so the edit was "done". Here the target is read before and after with the
same recogniser the localiser reads text with; writing that still reads as it did has not
been blurred, whatever its detail energy says, and the retry's radius is a fifth of the
line's height.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from pipelines.layers import mask_bbox
from pipelines.localizers.text import READ_CHARS, READ_CONF, near_reading, shared_reader

log = logging.getLogger(__name__)

#: the reading before must be at least this sure to be held against the result
SURE = 0.6
#: a blur hides a line of text at a sigma of this share of its height (the bus's plate:
#: read at 0.09 of the line, not at 0.18; as shot, 4 px on a 19-px line, 0.21, hides it)
HIDING_SIGMA = 0.2


@dataclass
class Legible:
    """What the target read before and after, and the radius a retry should try."""

    before: str
    after: str
    still: bool
    radius: float


def legible(before: np.ndarray, after: np.ndarray, inside: np.ndarray,
            reader: object | None = None) -> Legible | None:
    """Read the target's box before and after; None when there was nothing sure to read
    (or no reader installed)."""
    box = mask_bbox(inside)
    if box is None:
        return None
    reader = reader or shared_reader()
    if reader is None:
        return None
    x0, y0, x1, y1 = box
    was, sure = reader.read(before, box)
    if sure < SURE or sum(ch.isalnum() for ch in was) < READ_CHARS:
        return None
    now, conf = reader.read(after, box)
    still = conf >= READ_CONF and near_reading(was, now)
    log.info("blurred text read %r before, %r after (%.2f): %s", was, now, conf,
             "still legible" if still else "hidden")
    return Legible(was, now, still, HIDING_SIGMA * min(y1 - y0, x1 - x0))
