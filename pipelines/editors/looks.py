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
