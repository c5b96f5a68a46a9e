"""The catalogue of edit operations: names, kinds and bounded parameters.

One source of truth for every editor, the planners (rule-based and LLM prompts), the
action schema and the UI controls. Editors declare which of these they implement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pipelines.editors.frame import ASPECTS
from pipelines.editors.looks import LOOKS

KINDS = ("adjust", "remove", "replace", "add", "undo")


class OperationError(ValueError):
    """An unknown operation or a parameter out of its bounds."""


@dataclass(frozen=True)
class ParamSpec:
    """One named, bounded parameter of an operation.

    ``type`` is one of ``float``, ``int``, ``bool``, ``str``, ``color`` (a colour name
    from ``NAMED_COLORS`` or ``#rrggbb``), ``choice`` (one of ``choices``) or ``image``
    (an RGB/RGBA uint8 array passed in by the caller, never by a model).
    """

    name: str
    type: str
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    required: bool = False

    def check(self, value: Any, op: str) -> Any:
        """Return ``value`` converted to this parameter's type, or raise ``OperationError``."""
        where = f"{op}.{self.name}"
        if self.type in ("float", "int"):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise OperationError(f"{where} must be a number, got {value!r}")
            try:
                number = float(value)
            except ValueError:
                raise OperationError(f"{where} must be a number, got {value!r}") from None
            if number != number:  # NaN
                raise OperationError(f"{where} must be a number, got NaN")
            if self.minimum is not None and number < self.minimum or \
                    self.maximum is not None and number > self.maximum:
                raise OperationError(
                    f"{where}={number:g} is out of range [{self.minimum:g}, {self.maximum:g}]")
            return int(round(number)) if self.type == "int" else number
        if self.type == "bool":
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
                return value.lower() in ("true", "1")
            if not isinstance(value, (bool, int)):
                raise OperationError(f"{where} must be true or false, got {value!r}")
            return bool(value)
        if self.type == "color":
            parse_color(value, where=where)
            return str(value).strip().lower()
        if self.type == "choice":
            if value not in self.choices:
                raise OperationError(f"{where} must be one of {', '.join(self.choices)}; "
                                     f"got {value!r}")
            return value
        if self.type == "str":
            if not isinstance(value, str):
                raise OperationError(f"{where} must be text, got {value!r}")
            if len(value) > 500:
                raise OperationError(f"{where} is too long ({len(value)} characters, max 500)")
            return value
        if self.type == "image":
            return value
        raise OperationError(f"{where}: unknown parameter type {self.type}")


#: What an operation may declare about itself (``OperationSpec.flags``):
FLAGS: dict[str, str] = {
    "pointwise": "a pixel's result depends only on that pixel (and statistics of the "
                 "masked pixels): the patch needs no surrounding context",
    "curve": "a per-channel tone curve: on large frames it runs as a 1-D look-up table",
    "low_frequency": "a smooth gain field: on large frames it is computed on a small copy "
                     "and carried over",
    "colour_balance": "changes the colour balance (white point, temperature, tint)",
    "strong": "changes texture or colour strongly: toned down on people by Autopilot",
    "frame_filter": "a whole-frame look when the instruction's target is a pronoun",
    "moves_target": "moves or resizes the target: it changes the pixels where the target "
                    "was and where it lands (the caller gives the frame geometry)",
    "object_edge": "works on a whole object: its mask is first grown over the object's "
                   "anti-aliased edge and cast shadow, measured on the edge",
    "frame": "changes the frame itself (size or orientation): the state graph stores a "
             "frame change, later edits live in the new frame",
}


@dataclass(frozen=True)
class OperationSpec:
    """An operation: its name, the action kinds it serves, its parameters and its flags."""

    name: str
    kinds: tuple[str, ...]
    description: str
    params: tuple[ParamSpec, ...] = ()
    #: False for operations that make sense on the whole frame (exposure, vignette…).
    needs_target: bool = False
    #: Needs a generative model (the embedded editor cannot do it).
    generative: bool = False
    #: Keys of ``FLAGS`` that hold for this operation.
    flags: frozenset[str] = frozenset()
    param_names: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "param_names", tuple(p.name for p in self.params))
        object.__setattr__(self, "flags", frozenset(self.flags))
        unknown = self.flags - set(FLAGS)
        if unknown:
            raise OperationError(f"{self.name}: unknown flag(s) {', '.join(sorted(unknown))}")

    def clamp(self, name: str, value: float, digits: int = 4) -> float:
        """``value`` brought inside parameter ``name``'s bounds (rounded to ``digits``)."""
        spec = next(p for p in self.params if p.name == name)
        lo = spec.minimum if spec.minimum is not None else value
        hi = spec.maximum if spec.maximum is not None else value
        return round(float(min(hi, max(lo, value))), digits)

    def has(self, flag: str) -> bool:
        """Whether the operation declares ``flag`` (a key of ``FLAGS``)."""
        return flag in self.flags

    def validate(self, params: dict[str, Any] | None) -> dict[str, Any]:
        """Fill defaults and check bounds; unknown names are errors, not ignored."""
        params = dict(params or {})
        unknown = sorted(set(params) - set(self.param_names))
        if unknown:
            raise OperationError(
                f"{self.name} has no parameter {', '.join(unknown)}; "
                f"it takes {', '.join(self.param_names) or 'no parameters'}")
        clean: dict[str, Any] = {}
        for spec in self.params:
            if spec.name in params:
                clean[spec.name] = spec.check(params[spec.name], self.name)
            elif spec.required:
                raise OperationError(f"{self.name} needs the parameter {spec.name}")
            else:
                clean[spec.name] = spec.default
        return clean


def _amount(description: str, lo: float = -1.0, hi: float = 1.0, default: float = 0.3) -> ParamSpec:
    return ParamSpec("amount", "float", default, description, lo, hi)


OPERATIONS: dict[str, OperationSpec] = {spec.name: spec for spec in [
    # --- tonal and colour adjustments ---------------------------------------------
    OperationSpec("exposure", ("adjust",), "Exposure change in photographic stops.",
                  (ParamSpec("stops", "float", 0.5, "stops; +1 doubles the light", -3, 3),),
                  flags={"pointwise", "curve"}),
    OperationSpec("brightness", ("adjust",), "Lighten (+) or darken (-).",
                  (_amount("-1 black … +1 white", default=0.2),),
                  flags={"pointwise", "curve"}),
    OperationSpec("contrast", ("adjust",), "More (+) or less (-) contrast around mid-grey.",
                  (_amount("-1 flat … +1 double", default=0.2),),
                  flags={"pointwise", "curve", "strong"}),
    OperationSpec("saturation", ("adjust",), "More (+) or less (-) colour.",
                  (_amount("-1 grey … +1 double", default=0.25),),
                  flags={"pointwise", "strong"}),
    OperationSpec("vibrance", ("adjust",), "Saturation that spares already vivid colours.",
                  (_amount("-1 … +1", default=0.3),),
                  flags={"pointwise", "strong"}),
    OperationSpec("temperature", ("adjust",), "Warmer (+, amber) or cooler (-, blue).",
                  (_amount("-1 … +1", default=0.2),),
                  flags={"pointwise", "curve", "colour_balance", "strong"}),
    OperationSpec("tint", ("adjust",), "Magenta (+) or green (-).",
                  (_amount("-1 … +1", default=0.1),),
                  flags={"pointwise", "curve", "colour_balance"}),
    OperationSpec("gamma", ("adjust",), "Gamma curve; above 1 brightens mid-tones.",
                  (ParamSpec("gamma", "float", 1.2, "gamma", 0.2, 5.0),),
                  flags={"pointwise", "curve"}),
    OperationSpec("shadows", ("adjust",), "Lift (+) or deepen (-) the shadows only.",
                  (_amount("-1 … +1", default=0.3),),
                  flags={"pointwise", "low_frequency"}),
    OperationSpec("highlights", ("adjust",), "Recover (-) or boost (+) the highlights only.",
                  (_amount("-1 … +1", default=-0.3),),
                  flags={"pointwise", "low_frequency"}),
    OperationSpec("hue", ("adjust",), "Rotate every hue by some degrees.",
                  (ParamSpec("degrees", "float", 15.0, "hue rotation in degrees", -180, 180),),
                  flags={"pointwise"}),
    OperationSpec("sharpen", ("adjust",), "Unsharp mask.",
                  (ParamSpec("amount", "float", 0.6, "strength", 0.0, 3.0),
                   ParamSpec("radius", "float", 1.5, "radius in pixels", 0.3, 10.0)),
                  flags={"strong"}),
    OperationSpec("denoise", ("adjust",), "Edge-preserving noise reduction.",
                  (ParamSpec("strength", "float", 0.5, "0 none … 1 strong", 0.0, 1.0),),
                  flags={"strong"}),
    OperationSpec("blur", ("adjust",), "Gaussian blur (background blur, softening).",
                  (ParamSpec("radius", "float", 4.0, "radius in pixels", 0.0, 50.0),)),
    OperationSpec("grayscale", ("adjust",), "Remove colour.",
                  (ParamSpec("amount", "float", 1.0, "0 none … 1 fully grey", 0.0, 1.0),),
                  flags={"pointwise", "frame_filter"}),
    OperationSpec("sepia", ("adjust",), "Warm brown monochrome.",
                  (ParamSpec("amount", "float", 1.0, "0 none … 1 full sepia", 0.0, 1.0),),
                  flags={"pointwise", "frame_filter"}),
    OperationSpec("vignette", ("adjust",), "Darken (+) or lighten (-) towards the corners.",
                  (_amount("-1 … +1", default=0.3),),
                  flags={"low_frequency", "frame_filter"}),
    OperationSpec("auto_levels", ("adjust",), "Stretch levels to the full range.",
                  (ParamSpec("clip", "float", 0.5, "percent clipped at each end", 0.0, 5.0),),
                  flags={"pointwise", "curve", "frame_filter"}),
    OperationSpec("auto_white_balance", ("adjust",), "Neutralise a colour cast (grey world).",
                  (ParamSpec("amount", "float", 1.0, "0 none … 1 full correction", 0.0, 1.0),),
                  flags={"pointwise", "curve", "colour_balance", "frame_filter"}),
    OperationSpec("clahe", ("adjust",), "Local contrast (CLAHE on lightness).",
                  (ParamSpec("clip_limit", "float", 2.0, "contrast limit", 0.5, 10.0),
                   ParamSpec("tile", "int", 8, "tiles per side", 2, 32)),
                  flags={"strong", "frame_filter"}),
    OperationSpec("straighten", ("adjust",), "Rotate to level the horizon or the dominant "
                  "lines; the empty corners are cropped away.",
                  (ParamSpec("angle", "float", 0.0, "degrees, counter-clockwise +", -45, 45),
                   ParamSpec("auto", "bool", False, "find the tilt from the horizon or the "
                             "dominant lines (angle ignored)")),
                  flags={"frame_filter", "frame"}),
    OperationSpec("look", ("adjust",), "A named look (a recipe of the adjustments above, "
                  "one undo step): " + ", ".join(LOOKS) + ".",
                  (ParamSpec("style", "choice", "vintage", "the look", choices=tuple(LOOKS)),
                   ParamSpec("strength", "float", 1.0, "0 none … 1 the full look", 0.0, 1.0)),
                  flags={"frame_filter"}),
    # --- photographic corrections from the photo's statistics (corrections.py) -------
    OperationSpec("channel_levels", ("adjust",), "Auto levels per channel: each channel's "
                  "darkest and brightest pixels stretched to black and white (balances "
                  "colour too).",
                  (ParamSpec("low", "float", 0.5, "percent of each channel clipped to black",
                             0.0, 5.0),
                   ParamSpec("high", "float", 0.5, "percent of each channel clipped to white",
                             0.0, 5.0),
                   ParamSpec("linear", "bool", False, "stretch in linear light (white-point "
                             "gains, like a camera's exposure and white balance)"),
                   ParamSpec("amount", "float", 1.0, "0 none … 1 full", 0.0, 1.0)),
                  flags={"pointwise", "curve", "colour_balance", "frame_filter"}),
    OperationSpec("white_patch", ("adjust",), "White balance from the brightest pixels "
                  "(white patch).",
                  (ParamSpec("percentile", "float", 1.0, "percent of brightest pixels per "
                             "channel taken as white", 0.1, 10.0),
                   ParamSpec("amount", "float", 1.0, "0 none … 1 full correction", 0.0, 1.0)),
                  flags={"pointwise", "curve", "colour_balance", "frame_filter"}),
    OperationSpec("auto_exposure", ("adjust",), "Exposure set from the histogram's median.",
                  (ParamSpec("target", "float", 48.0, "median lightness to reach (L*)",
                             20.0, 80.0),
                   ParamSpec("amount", "float", 1.0, "0 none … 1 full correction", 0.0, 1.0)),
                  flags={"pointwise", "curve", "frame_filter"}),
    # --- frame edits: the frame's size or orientation changes ------------------------
    OperationSpec("crop", ("adjust",), "Crop the frame: an aspect ratio, trims, or around "
                  "the target / a box (a negative margin keeps room around a target).",
                  (ParamSpec("aspect", "choice", "free", "width:height, 'original' or 'free'",
                             choices=ASPECTS),
                   ParamSpec("margin", "float", 0.0, "fraction trimmed from every side",
                             -1.0, 0.45),
                   *(ParamSpec(side, "float", 0.0, f"fraction trimmed from the {side}",
                               0.0, 0.9) for side in ("left", "top", "right", "bottom"))),
                  flags={"frame"}),
    OperationSpec("rotate", ("adjust",), "Turn the frame by quarter turns.",
                  (ParamSpec("degrees", "int", 90, "clockwise, a multiple of 90 (negative: "
                             "anticlockwise)", -270, 270),),
                  flags={"frame"}),
    OperationSpec("flip", ("adjust",), "Mirror the frame.",
                  (ParamSpec("axis", "choice", "horizontal", "horizontal: left-right mirror; "
                             "vertical: upside down", choices=("horizontal", "vertical")),),
                  flags={"frame"}),
    OperationSpec("resize", ("adjust",), "Make the frame smaller (for sharing): a width, a "
                  "height, a long side in pixels, or a scale.",
                  (ParamSpec("scale", "float", 0.5, "size factor when no pixels are given",
                             0.01, 1.0),
                   ParamSpec("long_side", "int", 0, "long side in pixels (0: unset)", 0, 65535),
                   ParamSpec("width", "int", 0, "width in pixels (0: unset)", 0, 65535),
                   ParamSpec("height", "int", 0, "height in pixels (0: unset)", 0, 65535)),
                  flags={"frame"}),
    # --- object edits ----------------------------------------------------------------
    OperationSpec("recolor", ("adjust", "replace"), "Give the target a new colour, "
                  "keeping its shading and texture.",
                  (ParamSpec("color", "color", None, "colour name or #rrggbb", required=True),
                   ParamSpec("strength", "float", 1.0, "0 none … 1 full", 0.0, 1.0),
                   ParamSpec("lightness", "float", 1.0, "0 keeps the target's mean "
                             "lightness … 1 takes the named colour's (shading kept either "
                             "way)", 0.0, 1.0)),
                  needs_target=True,
                  flags={"pointwise", "object_edge"}),
    OperationSpec("inpaint", ("remove",), "Remove the target and fill from its surroundings.",
                  (ParamSpec("method", "choice", "auto", "fill method",
                             choices=("auto", "telea", "ns", "patch")),
                   ParamSpec("radius", "int", 5, "inpainting radius in pixels", 1, 50)),
                  needs_target=True, flags={"object_edge"}),
    OperationSpec("transform", ("adjust",), "Move and/or resize the target object; the "
                  "place it leaves is filled from its surroundings.",
                  (ParamSpec("scale", "float", 1.0, "size factor (1 keeps the size)", 0.2, 5.0),
                   ParamSpec("dx", "float", 0.0, "shift right (+) or left (-), as a fraction "
                             "of the image width", -1.0, 1.0),
                   ParamSpec("dy", "float", 0.0, "shift down (+) or up (-), as a fraction of "
                             "the image height", -1.0, 1.0)),
                  needs_target=True, flags={"object_edge", "moves_target"}),
    OperationSpec("paste", ("add", "replace"), "Paste a reference image into the region "
                  "with seamless cloning.",
                  (ParamSpec("image", "image", None, "reference image (RGB/RGBA)", required=True),
                   ParamSpec("mode", "choice", "seamless", "blend mode",
                             choices=("seamless", "mixed", "normal"))),
                  needs_target=True),
    OperationSpec("text", ("add",), "Render text in the region.",
                  (ParamSpec("text", "str", None, "the words to write", required=True),
                   ParamSpec("color", "color", "white", "text colour"),
                   ParamSpec("scale", "float", 1.0, "size relative to fitting the region",
                             0.1, 1.0)),
                  needs_target=True),
    OperationSpec("generate", ("add", "replace", "remove", "adjust"),
                  "Free-form generative edit described by the instruction.",
                  (ParamSpec("prompt", "str", "", "what the region should show"),),
                  generative=True),
]}


def operations_with(flag: str) -> frozenset[str]:
    """Names of the operations that declare ``flag`` (a key of ``FLAGS``)."""
    if flag not in FLAGS:
        raise OperationError(f"unknown flag {flag!r}; known: {', '.join(FLAGS)}")
    return frozenset(name for name, spec in OPERATIONS.items() if flag in spec.flags)


def get_operation(name: str) -> OperationSpec:
    """Look up an operation by name, with a readable error listing the known ones."""
    try:
        return OPERATIONS[name]
    except KeyError:
        raise OperationError(f"unknown operation {name!r}; known: "
                             f"{', '.join(sorted(OPERATIONS))}") from None


#: Colour names the localiser, recolour and planners understand (sRGB).
NAMED_COLORS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30), "orange": (245, 130, 20), "yellow": (240, 215, 30),
    "green": (40, 170, 50), "lime": (150, 230, 40), "teal": (20, 140, 140),
    "cyan": (30, 210, 230), "blue": (30, 70, 220), "navy": (20, 30, 110),
    "purple": (130, 40, 170), "violet": (150, 90, 220), "magenta": (220, 40, 200),
    "pink": (245, 130, 180), "brown": (120, 70, 30), "black": (15, 15, 15),
    "white": (245, 245, 245), "gray": (128, 128, 128), "grey": (128, 128, 128),
    "silver": (192, 192, 192), "gold": (212, 175, 55), "beige": (225, 205, 165),
    "maroon": (120, 20, 30), "olive": (120, 120, 30), "turquoise": (60, 210, 200),
}

@lru_cache(maxsize=1)
def more_colour_names() -> dict[str, tuple[int, int, int]]:
    """CSS4 and XKCD colour names (``"rebeccapurple"``, ``"dusty rose"``) → sRGB.

    Read from matplotlib's tables on first use (matplotlib is slow to import and only
    needed for names outside ``NAMED_COLORS``).
    """
    try:
        from matplotlib import colors  # noqa: PLC0415 — heavy import, first use only
    except ImportError:
        return {}
    out: dict[str, tuple[int, int, int]] = {}
    for table, prefix in ((colors.XKCD_COLORS, "xkcd:"), (colors.CSS4_COLORS, "")):
        for name, value in table.items():
            rgb = tuple(int(round(c * 255)) for c in colors.to_rgb(value))
            out[name.removeprefix(prefix).lower()] = rgb  # type: ignore[assignment]
    return out


_HEX = re.compile(r"^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{3})$")


def parse_color(value: Any, *, where: str = "color") -> tuple[int, int, int]:
    """``'red'``, ``'#ff0000'``, ``'f00'`` or an RGB triple → ``(r, g, b)``."""
    if isinstance(value, (tuple, list)) and len(value) == 3 and \
            all(isinstance(c, (int, float)) and 0 <= c <= 255 for c in value):
        return int(value[0]), int(value[1]), int(value[2])
    if isinstance(value, str):
        text = value.strip().lower()
        if text in NAMED_COLORS:
            return NAMED_COLORS[text]
        extra = more_colour_names().get(text) or more_colour_names().get(
            text.replace("grey", "gray"))
        if extra is not None:
            return extra
        match = _HEX.match(text)
        if match:
            digits = match.group(1)
            if len(digits) == 3:
                digits = "".join(c * 2 for c in digits)
            return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    raise OperationError(f"{where}: {value!r} is not a colour; use a name "
                         f"({', '.join(list(NAMED_COLORS)[:8])}, …) or #rrggbb")
