"""Relative colour and drama words said of a region (issues 32 and 34).

"A deeper blue", "a richer blue", "bluer sky", "a lighter blue": the region's own colour,
adjusted (saturation and brightness), never a recolour to a flat named colour, which is
only for "make X <colour>". "A more dramatic sky": the region's contrast, not a frame
look. Sizes follow the request's degree words and stay far from the limits (the default
saturation step is +0.25, so "a deeper blue" never drives saturation to its end).
"""

from __future__ import annotations

import re
from typing import Any

from agent.brain.words import clamp, natural_colour
from pipelines.operations import get as get_operation
from pipelines.operations import with_flag

#: the relative shade words ("a deeper blue")
RELATIVE_SHADE = (r"deeper|darker|lighter|brighter|richer|more vivid|more intense|stronger|"
                  r"paler|softer|more saturated")
#: what each asks of the region: (saturation, brightness), in the operations' default steps
#: ("deeper" darkens, which takes back part of the colour it adds: its saturation step is
#: the larger, so that a pale overcast sky still turns visibly bluer: chroma 19 -> 23)
SHADE_STEPS = {"deeper": (1.5, -0.5), "darker": (0.5, -1.0), "lighter": (-0.5, 1.0),
               "brighter": (0.5, 0.5), "paler": (-1.0, 0.5), "softer": (-1.0, 0.0),
               "richer": (1.0, 0.0), "more vivid": (1.0, 0.0), "more intense": (1.0, 0.0),
               "stronger": (1.0, 0.0), "more saturated": (1.0, 0.0)}
#: a region's own colour asked for by a comparative ("bluer sky", "greener grass") adds a
#: cast toward it beside the saturation step, which alone leaves the grey of an overcast
#: sky or a pale haze as it was (a hazy sea sky made "bluer" kept a quarter of itself
#: grey): the colour -> (the word that asks a colour-balance operation for that cast, its
#: size in the operation's default steps)
TOWARD = {"blue": ("cooler", 0.5), "green": ("green", 1.0)}
#: the shade words that ask for more of the colour they name ("a deeper blue sky")
MORE_OF_IT = ("deeper", "richer", "more vivid", "more intense", "stronger", "more saturated")
#: frame looks that, said of a region ("a more dramatic sky"), mean its contrast
REGION_DRAMA = {"moody", "low_key"}


def _step(name: str, steps: float) -> tuple[str, dict[str, Any]]:
    op = get_operation(name)
    return name, {op.main_param: round(clamp(op.base * steps, name, op.main_param), 3)}


def shade(word: str, factor: float, colour: str = "",
          target: str = "") -> list[tuple[str, dict[str, Any]]]:
    """(operation, params) for a relative shade word at degree ``factor``; when ``colour``
    is the ``target`` region's own ("a deeper blue sky") and the word asks for more of it,
    a cast toward it follows the saturation step."""
    saturation, brightness = SHADE_STEPS[word]
    steps = [_step(name, steps * factor) for name, steps in
             (("saturation", saturation), ("brightness", brightness)) if steps]
    if colour in TOWARD and natural_colour(target) == colour and word in MORE_OF_IT:
        steps += _cast(*TOWARD[colour], factor)
    return steps


def _cast(word: str, size: float, factor: float) -> list[tuple[str, dict[str, Any]]]:
    """The colour-balance operation whose words ask for ``word`` ("cooler"), signed."""
    for name in sorted(with_flag("colour_balance")):
        op = get_operation(name)
        for pattern, sign in ((getattr(op, "negative", ""), -1), (getattr(op, "positive", ""), 1)):
            if pattern and re.fullmatch(pattern, word):
                return [_step(name, sign * size * factor)]
    return []


def drama(factor: float) -> list[tuple[str, dict[str, Any]]]:
    """(operation, params) for "more dramatic" said of a region."""
    return [_step("contrast", factor)]
