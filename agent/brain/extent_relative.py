"""Relative words keep their size (issue 32, part 4): "a deeper blue", "bluer", "a bit
brighter" must not drive the changed region's saturation to its limit, and words that ask
for more colour must visibly add some across the area aimed at. Read by
``agent.brain.extent`` on its work copies.
"""

from __future__ import annotations

import re
from typing import Any

import cv2
import numpy as np

from agent.brain.independent import Independent
from pipelines.arrays import channel_max, channel_min
from pipelines.color import delta_e76, rgb_to_lab
from pipelines.operations.measures import chroma

#: relative words: share of the changed region newly driven to the saturation limit
SATURATED_NEW = 0.1
#: relative words: the region's mean chroma (CIE Lab C*) may rise by ``CHROMA_SHARE`` of
#: itself and ``CHROMA_JUMP`` more: "a deeper blue" as an adjustment rose 0-6 on the tune
#: skies, "much more vivid" 17-21 on blue skies of C* 44; blue painted at full strength
#: 44-88 (a grey sky turned saturated blue; a blue sky of C* 44 doubled it)
CHROMA_JUMP, CHROMA_SHARE = 20.0, 0.5
#: relative words that ask for more colour: the region's mean chroma (max - min, grey
#: levels) must rise at least this much, or the change is too small to see (a pale
#: overcast sky "a deeper blue": chroma 19 -> 21)
VISIBLE_CHROMA = 3.0
#: ... and its colour move this much on average (CIE76 ΔE; about one just-noticeable
#: difference): a grey overcast sky made "bluer" by saturation rose 4.4 chroma levels,
#: mostly where it was already tinted, and moved ΔE 1.6: nothing to see, said done
VISIBLE_DE = 2.0
#: relative words that ask for more colour
MORE_COLOUR = re.compile(r"\b(deeper|richer|bluer|greener|redder|more (saturated|vivid|"
                         r"intense|colou?rful))\b")
#: the colour a word of ``MORE_COLOUR`` names, and its channel (RGB)
NAMED_HUE = re.compile(r"\b(blu|green|red)")
HUE_CHANNEL = {"blu": 2, "green": 1, "red": 0}
#: words that ask for a relative change of a region, not a new colour
RELATIVE = re.compile(r"\b(deeper|richer|bluer|greener|redder|warmer|cooler|brighter|"
                      r"darker|more|less|a (?:bit|little|touch)|slightly|somewhat|"
                      r"\w+er (?:blue|green|red|colou?r))\b")
#: the operations whose relative words ``relative_size`` reads
COLOUR_OPS = ("recolor", "saturation", "vibrance", "hue", "tint", "temperature")
#: ... and those that give a region more of the colour it has (``MORE_COLOUR`` words)
MORE_COLOUR_OPS = ("saturation", "vibrance")


def _delta_e(small_b: np.ndarray, small_a: np.ndarray, where: np.ndarray) -> float:
    """Mean CIE76 colour difference of ``where`` between two copies."""
    if not where.any():
        return 0.0
    return float(delta_e76(rgb_to_lab(small_b[where]), rgb_to_lab(small_a[where])).mean())


def _chroma(small: np.ndarray, where: np.ndarray) -> float:
    """Mean chroma (largest minus smallest channel, grey levels) of ``where``."""
    return float((channel_max(small).astype(np.int16) - channel_min(small))[where].mean())


def _lead(small: np.ndarray, where: np.ndarray, channel: int) -> float:
    """Mean lead of ``channel`` over the mean of the three (grey levels) on ``where``."""
    px = small[where].astype(np.float32)
    return float((px[:, channel] - px.mean(axis=1)).mean())


def _lab_chroma(small: np.ndarray, where: np.ndarray) -> float:
    """Mean CIE Lab chroma (C*) of ``where``."""
    return float(chroma(rgb_to_lab(small[where])).mean())


def relative_applies(words: str, action: Any) -> bool:
    """Whether ``_relative`` judges ``action``: relative words on a colour operation."""
    return bool(words) and RELATIVE.search(words) is not None and \
        str(getattr(action, "operation", "") or "") in COLOUR_OPS


def relative_size(out: Independent, small_b: np.ndarray, small_a: np.ndarray,
              changed: np.ndarray, aimed: np.ndarray, words: str, action: Any) -> None:
    """Relative words ("a deeper blue", "bluer") must not push saturation to its limit,
    and words that ask for more colour must visibly add some across the area aimed at."""
    if not relative_applies(words, action):
        return
    op = str(getattr(action, "operation", "") or "")
    said = " ".join(str(getattr(action, "instruction", "") or words).split())  # as asked
    hb = cv2.cvtColor(small_b, cv2.COLOR_RGB2HSV_FULL)
    ha = cv2.cvtColor(small_a, cv2.COLOR_RGB2HSV_FULL)
    lit = ha[..., 2] > 40
    area = changed & lit
    if area.sum() < 20:
        return
    aimed = aimed & lit
    if MORE_COLOUR.search(words) and op in MORE_COLOUR_OPS and aimed.sum() >= 20:
        chroma_b, chroma_a = _chroma(small_b, aimed), _chroma(small_a, aimed)
        moved = _delta_e(small_b, small_a, aimed)
        out.measures["chroma_rise"] = round(chroma_a - chroma_b, 2)
        out.measures["colour_moved"] = round(moved, 2)
        if chroma_a - chroma_b < VISIBLE_CHROMA or moved < VISIBLE_DE:
            out.checks["relative_visible"] = False
            out.fix.append(f"'{said}' asks for more colour, but the region's chroma rose "
                           f"by {chroma_a - chroma_b:.1f} levels and its colour moved "
                           f"ΔE {moved:.1f} on average: too little to see")
        hue = NAMED_HUE.search(words)
        if hue is not None:
            # more saturation deepens the colour the region has: greenish water made
            # "bluer" by it turns greener (the Golden Temple's pool), said done
            ch = HUE_CHANNEL[hue.group(1)]
            rise = _lead(small_a, aimed, ch) - _lead(small_b, aimed, ch)
            out.measures["named_colour_rise"] = round(rise, 2)
            if rise <= 0.0:
                out.checks["relative_visible"] = False
                out.fix.append(f"'{said}' asks for more {hue.group(1).replace('blu', 'blue')}"
                               f", but the region's {hue.group(1).replace('blu', 'blue')} "
                               f"lead fell by {-rise:.1f} levels: more of its own colour "
                               "instead")
    limit_b = float((hb[..., 1][area] >= 242).mean())
    limit_a = float((ha[..., 1][area] >= 242).mean())
    new = max(0.0, limit_a - limit_b)
    out.measures["saturated_new_share"] = round(new, 3)
    strength_b = _lab_chroma(small_b, area)     # C*, not ``_chroma``'s max - min levels
    jump = _lab_chroma(small_a, area) - strength_b
    out.measures["chroma_jump"] = round(jump, 1)
    ok = new <= SATURATED_NEW and jump <= CHROMA_JUMP + CHROMA_SHARE * strength_b
    out.checks["relative_size"] = ok
    if ok:
        out.keep.append("the change keeps the size the words ask for")
    elif new > SATURATED_NEW:
        out.fix.append(f"'{said}' asks for a relative change, but {new:.0%} of the "
                       "region was driven to full saturation")
    else:
        out.fix.append(f"'{said}' asks for a relative change, but the region's colour "
                       f"strength rose by {jump:.0f} (C*): a new colour painted over it")
