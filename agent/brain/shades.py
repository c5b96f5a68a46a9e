"""Relative colour and drama words said of a region (issues 32 and 34).

"A deeper blue", "a richer blue", "bluer sky", "a lighter blue": the region's own colour,
adjusted (saturation and brightness), never a recolour to a flat named colour, which is
only for "make X <colour>". "A more dramatic sky": the region's contrast, not a frame
look. Sizes follow the request's degree words and stay far from the limits (the default
saturation step is +0.25, so "a deeper blue" never drives saturation to its end).
"""

from __future__ import annotations

from typing import Any

from agent.brain.words import clamp
from pipelines.operations import get as get_operation

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
#: a region's own colour asked for by a comparative ("bluer sky", "greener grass"): a cast
#: toward it, in the operation's default steps, beside the saturation step, which alone
#: leaves the grey of an overcast sky or a pale haze as it was (a hazy sea sky made "bluer"
#: kept a quarter of itself grey)
TOWARD = {"blue": ("temperature", -0.5), "green": ("tint", -1.0)}
#: the shade words that ask for more of the colour they name ("a deeper blue sky")
MORE_OF_IT = ("deeper", "richer", "more vivid", "more intense", "stronger", "more saturated")
#: frame looks that, said of a region ("a more dramatic sky"), mean its contrast
REGION_DRAMA = {"moody", "low_key"}


def _step(name: str, steps: float) -> tuple[str, dict[str, Any]]:
    op = get_operation(name)
    return name, {op.main_param: round(clamp(op.base * steps, name, op.main_param), 3)}


def shade(word: str, factor: float) -> list[tuple[str, dict[str, Any]]]:
    """(operation, params) for a relative shade word at degree ``factor``."""
    saturation, brightness = SHADE_STEPS[word]
    return [_step(name, steps * factor) for name, steps in
            (("saturation", saturation), ("brightness", brightness)) if steps]


def toward(colour: str, factor: float) -> list[tuple[str, dict[str, Any]]]:
    """(operation, params) of the cast toward ``colour`` ("bluer sky"), at degree
    ``factor``; none for a colour no cast moves toward."""
    if colour not in TOWARD:
        return []
    name, steps = TOWARD[colour]
    return [_step(name, steps * factor)]


def drama(factor: float) -> list[tuple[str, dict[str, Any]]]:
    """(operation, params) for "more dramatic" said of a region."""
    return [_step("contrast", factor)]
