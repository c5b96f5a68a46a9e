"""Water read against the sky it reflects (issue 32, "the water" on a photo with none).

Water takes its colour from the sky above it, or it is blue: still water mirrors the sky's
tint (an overcast pool is grey under a grey sky, a lake at dusk is orange under an orange
sky), and rough or deep water is blue. ``scene.water`` finds a smooth region along the
bottom under a level shore that mirrors what stands on it; a symmetric facade of sandstone
or a stupa's orange dirt "mirrors" that way too (0.55-0.64, tune). What has ``NO_BLUE`` or
less of the blue of water and lies ``FAR_TINT`` or more from the sky's tint (Lab a-b of
the means) is stone or earth, not water: "no water found".
"""

from __future__ import annotations

import cv2
import numpy as np

from pipelines.localizers.segment import hsv

#: the hues of blue water (HSV degrees)
BLUE_HUES = (170, 260)
#: at most this share blue and this far (Lab a-b) from the sky's tint is no water (tune:
#: Petra's sandstone facade on a darker print, resolved as "the water", 0.00 blue and 58
#: from its blue sky; the Sanchi stupa's orange dirt 0.00 and 64-66; the water found
#: right, a lake under a red hill, a grey sea, an overcast pool, 0.27-0.47 blue and 9-36
#: from their skies, on every print)
NO_BLUE, FAR_TINT = 0.1, 45.0


def blue_share(small: np.ndarray, region: np.ndarray) -> float:
    """The share of ``region`` (bool) whose hue is the blue of water (``BLUE_HUES``)."""
    if not region.any():
        return 0.0
    hue = hsv(small)[..., 0][region]
    return float(((hue >= BLUE_HUES[0]) & (hue <= BLUE_HUES[1])).mean())


def sky_tint(small: np.ndarray, region: np.ndarray, sky: np.ndarray) -> float:
    """The Lab a-b distance of ``region``'s mean colour from ``sky``'s (both bool,
    ``small``'s size); infinite when either is empty."""
    if not region.any() or not sky.any():
        return float("inf")
    lab = cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_RGB2Lab)
    return float(np.linalg.norm(lab[region].mean(axis=0)[1:] - lab[sky].mean(axis=0)[1:]))


def not_water(small: np.ndarray, region: np.ndarray, sky: np.ndarray) -> bool:
    """Whether ``region`` is neither blue nor of the sky's tint (``NO_BLUE``,
    ``FAR_TINT``): stone or earth that mirrors, not water."""
    return region.any() and blue_share(small, region) <= NO_BLUE and \
        sky_tint(small, region, sky) >= FAR_TINT
