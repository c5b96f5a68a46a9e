"""The look distance and the structure measure: how reference matching is judged.

One look distance and one structure measure, defined in ``pipelines.look`` (the
``match_reference`` operation fits and checks with the same statistics, and ``pipelines``
cannot import ``eval``) and named here for measurement:

* ``look_distance(image, reference, mask, reference_mask)``: the lightness distribution
  (mean |ΔL| over the 2–98 % quantiles), the chroma distribution (mean |ΔC| over the same
  quantiles) and the white point (mean |Δ(a, b)| of the shadows, mid-tones and
  highlights), summed in CIE Lab units on a 256-px copy (``LookDistance.total``);
* ``structure(before, after, mask)``: the correlation of the lightness gradients
  (x and y Sobel of L on a 512-px copy); ``STRUCTURE_KEPT`` is the bar a colour/tone
  change passes and a change of content (another photo pasted in, a flat grey) fails;
* ``shoot_spread(images)``: how different a set of photos look (the mean look distance of
  each to their mean look; 1-D quantile means are the distributions' barycentre).

A match "worked" when the distance to the reference fell to at most ``MATCH_RATIO`` of
where it started with the structure kept (issue 35's bar; ``tests/test_reference_match.py``,
``tests/test_reference_realphotos.py``).
"""

from __future__ import annotations

import numpy as np

from pipelines.look import (
    Look,
    LookDistance,
    LookError,
    distance,
    gradient_correlation,
    hue_distance,
    hue_histogram,
    look_distance,
    look_of,
    spread,
)

__all__ = ["Look", "LookDistance", "LookError", "MATCH_RATIO", "STRUCTURE_KEPT", "distance",
           "hue_distance", "hue_histogram", "look_distance", "look_of", "match_report",
           "shoot_spread", "structure"]

#: a colour/tone change keeps the gradients at least this correlated
STRUCTURE_KEPT = 0.85
#: a match must bring the look distance to at most this share of where it started
MATCH_RATIO = 0.5


def structure(before: np.ndarray, after: np.ndarray, mask: np.ndarray | None = None) -> float:
    """The gradient correlation of ``before`` and ``after`` (same size), inside ``mask``."""
    return gradient_correlation(before, after, mask)


def shoot_spread(images: list[np.ndarray]) -> float:
    """How different a shoot looks: mean look distance of each photo to the mean look."""
    return spread([look_of(image) for image in images])


def match_report(before: np.ndarray, after: np.ndarray, reference: np.ndarray,
                 mask: np.ndarray | None = None,
                 reference_mask: np.ndarray | None = None) -> dict[str, float]:
    """Where a match started, where it ended and whether structure was kept.

    Returns:
        ``{"start", "end", "ratio", "structure"}`` (distances in Lab units).
    """
    ref = look_of(reference, reference_mask)
    start = look_distance(before, ref, mask).total
    end = look_distance(after, ref, mask).total
    return {"start": round(start, 3), "end": round(end, 3),
            "ratio": round(end / start, 3) if start > 1e-9 else 0.0,
            "structure": round(structure(before, after, mask), 4)}
