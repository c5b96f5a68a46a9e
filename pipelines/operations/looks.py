"""Looks: named recipes of classical operations, applied as one edit (one undo step).

Each look is a short list of steps run in order on 8-bit RGB, then blended with the
input by ``strength`` (1 = the full look). A step is either a catalogue operation (run by
the classical editor with its validated parameters) or one of three small tools of our
own: a tone ``curve`` through control points, a ``split_tone`` (one colour pushed into the
shadows, another into the highlights) and a ``mono_mix`` (black and white through a
coloured filter: a channel mix).

| look | what it does |
|---|---|
| ``sepia`` | warm brown monochrome print: sepia toning, softly lifted blacks, light vignette |
| ``vintage`` | faded film: lifted blacks and dimmed whites, less colour, warmer, vignette |
| ``matte`` | matte finish: blacks lifted to dark grey, soft highlights, less colour |
| ``golden_hour`` | late-sun light: warmer, slightly brighter, a touch more colour |
| ``evening`` | dusk: darker, warmer, a little less colour |
| ``moody`` | dark and moody: darker, more contrast, less colour, teal shadows, vignette |
| ``high_key`` | bright and airy: brighter, open shadows, softer contrast |
| ``low_key`` | dark and dramatic: darker, deeper shadows, more contrast, vignette |
| ``teal_orange`` | the cinema grade: teal shadows, orange highlights and skin, a little punch |
| ``bw_red`` … ``bw_blue`` | black and white through a red/orange/yellow/green/blue filter |

A red filter darkens blue skies, a green one lightens foliage (a channel mix).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from pipelines.operations.base import REGISTRY, Family, Operation, ParamSpec, asks

family = Family("looks")

#: run one catalogue operation: (rgb8, mask, operation, params) -> rgb8
RunOp = Callable[[np.ndarray, np.ndarray, str, dict[str, Any]], np.ndarray]


@dataclass(frozen=True)
class Look:
    """A named look: a one-line description and its steps ``(name, params)``."""

    name: str
    description: str
    steps: tuple[tuple[str, dict[str, Any]], ...]


_LIFT = {"points": ((0, 22), (128, 130), (255, 242))}
_MONO = {"red": (0.80, 0.20, 0.00), "orange": (0.65, 0.35, 0.00),
         "yellow": (0.50, 0.42, 0.08), "green": (0.20, 0.70, 0.10),
         "blue": (0.10, 0.25, 0.65)}

LOOKS: dict[str, Look] = {look.name: look for look in [
    Look("sepia", "warm brown monochrome print",
         (("sepia", {"amount": 0.9}), ("curve", _LIFT), ("vignette", {"amount": 0.15}))),
    Look("vintage", "faded film: lifted blacks, less colour, warmer, vignette",
         (("curve", {"points": ((0, 34), (128, 132), (255, 232))}),
          ("saturation", {"amount": -0.3}), ("temperature", {"amount": 0.15}),
          ("vignette", {"amount": 0.25}))),
    Look("matte", "matte finish: blacks lifted to dark grey, soft highlights",
         (("curve", {"points": ((0, 40), (64, 74), (192, 194), (255, 240))}),
          ("saturation", {"amount": -0.1}))),
    Look("golden_hour", "late-sun light: warmer, a little brighter and more colourful",
         (("temperature", {"amount": 0.35}), ("exposure", {"stops": 0.15}),
          ("saturation", {"amount": 0.12}))),
    Look("evening", "dusk: darker, warmer, a little less colour",
         (("exposure", {"stops": -0.5}), ("temperature", {"amount": 0.3}),
          ("saturation", {"amount": -0.1}))),
    Look("moody", "dark and moody: darker, more contrast, less colour, teal shadows",
         (("exposure", {"stops": -0.3}), ("contrast", {"amount": 0.25}),
          ("saturation", {"amount": -0.25}),
          ("split_tone", {"shadows": (0, 70, 80), "highlights": (0, 0, 0), "amount": 0.1}),
          ("vignette", {"amount": 0.3}))),
    Look("high_key", "bright and airy: brighter, open shadows, softer contrast",
         (("exposure", {"stops": 0.6}), ("shadows", {"amount": 0.4}),
          ("contrast", {"amount": -0.2}), ("saturation", {"amount": -0.1}))),
    Look("low_key", "dark and dramatic: deep shadows, more contrast, vignette",
         (("exposure", {"stops": -0.6}), ("contrast", {"amount": 0.3}),
          ("shadows", {"amount": -0.3}), ("vignette", {"amount": 0.4}))),
    Look("teal_orange", "cinema grade: teal shadows, orange highlights",
         (("split_tone", {"shadows": (0, 80, 90), "highlights": (255, 140, 40),
                          "amount": 0.14}),
          ("saturation", {"amount": 0.1}), ("contrast", {"amount": 0.1}))),
    *[Look(f"bw_{colour}", f"black and white through a {colour} filter",
           (("mono_mix", {"weights": weights}), ("contrast", {"amount": 0.1})))
      for colour, weights in _MONO.items()],
]}


# --------------------------------------------------------------------------- tools


def _curve(rgb8: np.ndarray, points: tuple[tuple[int, int], ...]) -> np.ndarray:
    xs, ys = zip(*points)
    lut = np.clip(np.interp(np.arange(256), xs, ys), 0, 255).round().astype(np.uint8)
    return cv2.LUT(rgb8, lut)


def _split_tone(rgb8: np.ndarray, shadows: tuple[int, int, int],
                highlights: tuple[int, int, int], amount: float) -> np.ndarray:
    """Push ``shadows``' hue into the dark tones and ``highlights``' into the light ones,
    keeping each pixel's lightness (a colour's offset from its own grey is added)."""
    rgb = rgb8.astype(np.float32) / 255.0
    light = cv2.cvtColor(rgb8, cv2.COLOR_RGB2GRAY).astype(np.float32)[..., None] / 255.0
    high_w = light * light * (3 - 2 * light)            # smoothstep: 0 in shadows, 1 up high
    out = rgb
    for colour, weight in ((shadows, 1.0 - high_w), (highlights, high_w)):
        c = np.asarray(colour, np.float32) / 255.0
        if not c.any():
            continue
        out = out + amount * weight * (c - c.mean())
    return np.clip(out * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _mono_mix(rgb8: np.ndarray, weights: tuple[float, float, float]) -> np.ndarray:
    w = np.asarray(weights, np.float32)
    grey = cv2.transform(rgb8, (w / w.sum()).reshape(1, 3))
    return np.dstack([grey, grey, grey])


def apply_look(rgb8: np.ndarray, mask: np.ndarray, style: str, strength: float,
               run_op: RunOp) -> np.ndarray:
    """Apply the look ``style`` to 8-bit RGB.

    Args:
        rgb8: uint8 (H, W, 3).
        mask: bool (H, W); passed to catalogue steps for their statistics.
        style: a key of ``LOOKS``.
        strength: 0 (none) … 1 (the full look), a linear blend with the input.
        run_op: runs one catalogue operation on validated parameters.

    Returns:
        uint8 (H, W, 3).

    Raises:
        KeyError: an unknown look.
    """
    look = LOOKS[style]
    out = rgb8
    for name, params in look.steps:
        if name == "curve":
            out = _curve(out, params["points"])
        elif name == "split_tone":
            out = _split_tone(out, params["shadows"], params["highlights"], params["amount"])
        elif name == "mono_mix":
            out = _mono_mix(out, params["weights"])
        else:
            out = run_op(out, mask, name, params)
    if strength >= 1.0:
        return out
    return cv2.addWeighted(out, float(strength), rgb8, 1.0 - float(strength), 0.0)


def _run_step(rgb8: np.ndarray, mask: np.ndarray, operation: str,
              params: dict[str, Any]) -> np.ndarray:
    """One catalogue step of a look, its parameters validated first."""
    op = REGISTRY[operation]
    return op.apply(rgb8, mask, op.validate(params))


_BW = ("red", "orange", "yellow", "green", "blue")


@family
class LookOp(Operation):
    name = "look"
    description = ("A named look (a recipe of the adjustments above, one undo step): "
                   + ", ".join(LOOKS) + ".")
    params = (ParamSpec("style", "choice", "vintage", "the look", choices=tuple(LOOKS)),
              ParamSpec("strength", "float", 1.0, "0 none … 1 the full look", 0.0, 1.0))
    main = "style"
    size = "strength"
    flags = frozenset({"frame_filter"})
    role = "named_look"
    words = ("look", "matte", "vintage", "retro", "golden hour", "evening", "dusk",
             "high key", "low key", "teal and orange", "cinematic", "moody", "sepia look",
             "old photo")
    #: (pattern, style) in reading order; a style ending in "_" takes the matched colour
    styles: tuple[tuple[str, str], ...] = (
        (r"\b(?:black and white|grayscale)\b.*\b(red|orange|yellow|green|blue)\b(?: colou?r)? "
         r"filter\b|\b(red|orange|yellow|green|blue) filter\b", "bw_"),
        (r"\bmatte\b|\b(?:lifted|faded) blacks\b", "matte"),
        (r"\b(?:vintage\w*|retro|old[- ]school|old photo|old film|(?:faded|old|analog(?:ue)?) "
         r"film|film look|nostalgic|seventies|70s|aged|old-fashioned|faded)\b", "vintage"),
        (r"\b(?:golden hour|golden light|magic hour|late afternoon sun|(?:sunset|sunrise) "
         r"(?:look|light|glow|tones|colou?rs|vibe))\b|\blike (?:a )?(?:sunset|sunrise)\b",
         "golden_hour"),
        (r"\b(?:evening|dusk|twilight)\b", "evening"),
        (r"\b(?:high[- ]?key|bright and airy|light and airy|airy|ethereal)\b", "high_key"),
        (r"\b(?:low[- ]?key|chiaroscuro)\b", "low_key"),
        (r"\bteal\b.*\borange\b|\borange\b.*\bteal\b|\bblockbuster\b|\bhollywood\b|"
         r"\bcinematic\b|\bmovie (?:look|colou?rs?|grade)\b", "teal_orange"),
        (r"\b(?:moody|brooding|gloomy|dramatic)\b", "moody"),
        # the look's own name said alone ("sepia", "sepia tone") is the look, as its button
        (r"\bsepia (?:look|style|print|photo|vibe)\b|\bold brown photo\b|^sepia(?: tone)?$",
         "sepia"),
    )
    #: a style that means new light, not a grade, when content is being added
    content_style = "golden_hour"
    #: words left over around a look's name that are part of the look, not a target
    look_words = (r"\b(?:dark|bright|light|soft|subtle|strong|heavy|nice|warm|cool|cold|deep|"
                  r"classic|old|film|dramatic|faded|retro|vintage|moody|matte|cinematic|"
                  r"looking|kind of|sort of|type|feel|tone|toned|glow|light|sun|vibe|tones|"
                  r"colou?rs?|grade|grading|edit)\b")
    #: "enhance": not a named look but a classical recipe of (operation, params) steps
    enhance = (r"^(?:enhance|improve|polish|auto[- ]?fix|auto[- ]?enhance)\b|\b(?:look|make "
               r"it) (?:better|nicer|nice|good|great|pretty|prettier|professional|amazing)\b")
    enhance_steps: tuple[tuple[str, dict[str, Any]], ...] = (
        ("auto_levels", {"clip": 0.5}), ("vibrance", {"amount": 0.2}))
    asks = (
        asks("look_sepia", {"style": "sepia", "strength": 1.0}, "Sepia",
             "sepia|sepia tone|old brown photo|antique brown print", "looks", "sepia look"),
        asks("look_vintage", {"style": "vintage", "strength": 1.0}, "Vintage",
             "vintage look|retro|old faded film|faded film look|analog film|nostalgic|old "
             "photo look|seventies look|aged photo|film look", "looks", "vintage look"),
        asks("look_matte", {"style": "matte", "strength": 1.0}, "Matte",
             "matte look|matte finish|faded blacks|lifted blacks|soft matte film|flat faded "
             "look", "looks", "matte look"),
        asks("look_golden_hour", {"style": "golden_hour", "strength": 1.0},
             "Golden hour", "golden hour|sunset light|warm evening sun|sunset glow|golden "
             "light|magic hour|late afternoon sun", "looks", "golden hour look"),
        asks("look_evening", {"style": "evening", "strength": 1.0}, "Evening",
             "evening|dusk|make it look like evening|twilight mood|end of the day",
             "looks", "evening look"),
        asks("look_moody", {"style": "moody", "strength": 1.0}, "Moody",
             "moody|dark and moody|brooding atmosphere|dramatic mood|gloomy cinematic",
             "looks", "moody look"),
        asks("look_high_key", {"style": "high_key", "strength": 1.0}, "High key",
             "high key|bright and airy|light and airy|airy pastel look|ethereal bright look",
             "looks", "high key look"),
        asks("look_low_key", {"style": "low_key", "strength": 1.0}, "Low key",
             "low key|dark dramatic lighting|chiaroscuro|deep black background look",
             "looks", "low key look"),
        asks("look_teal_orange", {"style": "teal_orange", "strength": 1.0},
             "Teal and orange", "teal and orange|orange and teal|cinematic colour grade|"
             "hollywood blockbuster grade|movie look", "looks", "teal and orange look"),
        *(asks(f"look_bw_{c}", {"style": f"bw_{c}", "strength": 1.0},
               f"B&W, {c} filter", f"black and white with a {c} filter|monochrome {c} filter|"
               f"b&w through a {c} filter", "looks", f"black and white with a {c} filter")
          for c in _BW),
    )

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return apply_look(rgb8, mask, params["style"], params["strength"], _run_step)

    def describe(self, params: dict[str, Any], where: str, instruction: str = "") -> str:
        style = str(params.get("style") or "").replace("_", " ")
        return f"give {where} the {style} look" if style else f"give {where} a new look"
