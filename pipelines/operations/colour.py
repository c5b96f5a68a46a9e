"""Colour: saturation, vibrance, temperature, tint, white balance, hue, grey, sepia,
recolour."""

from __future__ import annotations

import math
import re
from typing import Any

import cv2
import numpy as np

from pipelines.color import shade_ramp
from pipelines.editors.objects import coverage, growth_limit, object_core, unmix_core
from pipelines.operations.base import ChecklistWords, Family, ParamSpec, Proposal, amount, asks
from pipelines.operations.colours import parse_color
from pipelines.operations.engines import CurveOp, FloatOp, MatrixOp, StatCurveOp
from pipelines.operations.lexicon import number
from pipelines.operations.measures import (
    Measured,
    Verdict,
    chroma,
    ciede2000,
    erode,
    hue_deg,
    hue_distance,
    lab,
    oklab_hue,
    ratio_verdict,
)
from pipelines.operations.pixels import (
    LUMA,
    histograms,
    linear_to_srgb,
    saturated8,
    srgb_to_linear,
    to_lab,
    to_u8,
)
from pipelines.operations.pixels import saturation_matrix as _saturation_matrix
from pipelines.operations.tone import check_spread

family = Family("colour")

# ------------------------------------------------------------------------------ pixels

def _grayscale_matrix(p: dict[str, Any]) -> np.ndarray:
    grey = np.outer(np.ones(3), LUMA)
    return ((1.0 - p["amount"]) * np.eye(3) + p["amount"] * grey).astype(np.float32)


def _sepia_matrix(p: dict[str, Any]) -> np.ndarray:
    return ((1.0 - p["amount"]) * np.eye(3) + p["amount"] * _SEPIA).astype(np.float32)


def _vibrance8(rgb8: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Saturation weighted towards dull colours (vivid ones change least)."""
    r, g, b = cv2.split(rgb8)
    vivid = cv2.subtract(cv2.max(cv2.max(r, g), b), cv2.min(cv2.min(r, g), b))
    gain_lut = 1.0 + p["amount"] * (1.0 - np.clip(np.arange(256) / 204.0, 0.0, 1.0))
    factor = gain_lut.astype(np.float32)[vivid][..., None]
    rgb = rgb8.astype(np.float32)
    grey = cv2.transform(rgb, LUMA[None, :])[..., None]
    return to_u8((grey + (rgb - grey) * factor) / 255.0)


def _gains(rgb: np.ndarray, gains: np.ndarray) -> np.ndarray:
    return linear_to_srgb(srgb_to_linear(rgb) * gains.astype(np.float32))


def _temperature(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    a = p["amount"]
    return _gains(rgb, np.array([1.0 + 0.35 * a, 1.0, 1.0 - 0.35 * a]))


def _tint(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    a = p["amount"]
    return _gains(rgb, np.array([1.0 + 0.1 * a, 1.0 - 0.3 * a, 1.0 + 0.1 * a]))


def _white_balance_curve(ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
                        p: dict[str, Any]) -> np.ndarray:
    """Grey-world gains from the linear-light channel means over the mask."""
    hist = histograms(rgb8, mask)
    linear = srgb_to_linear(np.arange(256, dtype=np.float32) / 255.0)
    means = (hist * linear).sum(axis=1) / max(hist[0].sum(), 1.0)
    if means.min() < 1e-4:
        return ramp
    gains = means.mean() / means
    return _gains(ramp, 1.0 + p["amount"] * (gains - 1.0))


def _hue(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Rotate every hue (float HSV: exact, no 8-bit round-trip loss)."""
    hsv = cv2.cvtColor(np.ascontiguousarray(rgb, dtype=np.float32), cv2.COLOR_RGB2HSV)
    hsv[..., 0] = np.mod(hsv[..., 0] + p["degrees"], 360.0)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)


_SEPIA = np.array([[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]],
                  dtype=np.float32)


def _centred_lightness(light: np.ndarray, mask: np.ndarray, mean: float, target: float,
                       at: np.ndarray | None = None) -> np.ndarray:
    """Lightness centred on ``target`` with the source's shading (``light`` over ``mask``,
    the object's core), squeezed only if needed; at the pixels ``at`` alone when given."""
    values = light[mask] if mask.any() else light.ravel()
    lo, hi = np.percentile(values - mean, [2.0, 98.0])
    room = [1.0]
    if hi > 1e-3:
        room.append((100.0 - target) / hi)
    if lo < -1e-3:
        room.append(target / -lo)
    k = float(np.clip(min(room), 0.5, 1.0))
    centre = float(np.clip(target, -k * lo, 100.0 - k * hi))
    return np.clip(centre + k * ((light if at is None else light[at]) - mean), 0.0, 100.0)


def _ramp_at(light: np.ndarray, ramp: np.ndarray) -> np.ndarray:
    """``ramp``'s colours at lightness ``light`` (any shape), linear between its steps."""
    pos = np.clip(light * 10.0, 0.0, 1000.0)
    i0 = np.floor(pos).astype(np.int32)
    t = (pos - i0)[..., None].astype(np.float32)
    return ramp[i0] * (1.0 - t) + ramp[np.minimum(i0 + 1, 1000)] * t


#: a core under this share of the mask does not stand for the object's lightness
THIN_CORE = 0.1


def _recolor(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """New hue, chroma and (``lightness`` = 1) lightness of the named colour; the source's
    shading kept as lightness offsets. Edge pixels are unmixed into object and background
    (``objects.coverage``) and only their object share changes, so no halo is left."""
    color = parse_color(p["color"])
    target = to_lab(np.array([[color]], dtype=np.float32) / 255.0)[0, 0]
    partial = bool(mask.any() and not mask.all())
    # the object's own lightness (the mean the colour's replaces) is read past the grown edge
    core = object_core(mask, growth_limit(mask)) if partial else np.ones(mask.shape, bool)
    if core.sum() < THIN_CORE * mask.sum():   # a thin thing's core is a sliver of one side
        core = unmix_core(mask)   # (49 px of a 2359-px train: its shaded flank alone)
    light = to_lab(rgb)[..., 0]
    mean = float(light[core].mean())
    goal = mean + p.get("lightness", 1.0) * (float(target[0]) - mean)
    ramp = shade_ramp(color)   # (1001, 3): L* = 0, 0.1, … 100
    if not partial:
        out = _ramp_at(_centred_lightness(light, core, mean, goal), ramp)
        return rgb + p["strength"] * (out - rgb)
    # only the mask's pixels change, each computed where it is read; the edge unmixed is
    # the grown rim alone (``unmix_core``), not the quarter radius the mean is read beyond
    split = coverage(rgb, mask, unmix_core(mask), band_only=True)
    band = mask & (split.alpha < 1.0)
    inner = mask & ~band
    out = rgb.copy()
    out[inner] = np.clip(_ramp_at(_centred_lightness(light, core, mean, goal, inner), ramp),
                         0.0, 1.0)
    if band.any():   # edges are unmixed: only the object's share takes the new colour
        shade = _centred_lightness(to_lab(split.obj)[..., 0], core, mean, goal, band)
        share = split.alpha[band]
        alpha = np.where(share > 0.85, 1.0, share)[..., None]
        out[band] = np.clip(rgb[band] + alpha * (_ramp_at(shade, ramp) - split.obj[band]),
                            0.0, 1.0)
    return rgb + p["strength"] * (out - rgb)


# ------------------------------------------------------------------------- operations


@family
class Saturation(MatrixOp):
    name = "saturation"
    description = "More (+) or less (-) colour."
    params = (amount("-1 grey … +1 double", default=0.25),)
    flags = frozenset({"pointwise", "strong", "tonal"})
    words = ("saturation", "saturated", "desaturate", "colourful", "colorful", "vivid",
             "muted", "duller", "washed out", "richer colours", "pop", "dull colours")
    grammar = "adjuster"
    reading_order = 5
    positive = (r"more|increase|boost|add|raise|saturate(?!d)|colou?rful|vivid|"
                r"richer|punchier|stronger")
    negative = r"muted|duller|washed|desaturat"
    base = 0.25
    pattern = (r"\b(?:de)?saturat(?:ion|ed?|e)\b|\b(?:more |less )?colou?rful\b|\bvivid\b|"
               r"\bmuted\b|\bduller\b|\bwashed[- ]out\b|\brich(?:er)? colou?rs?\b|"
               r"\bcolou?rs? (?:pop|stronger|weaker|richer)\b|\bpop\b|"
               # a complaint about the colours asks for more of them
               r"\bdull colou?rs?\b|\bcolou?rs? (?:are|is|look|looks|seem|seems) "
               r"(?:(?:a bit|so|very|really|quite|pretty|rather|too) )?dull\b")
    wording = ("make the colours of {where} richer", "mute the colours of {where}")
    asks = (
        asks("saturation_up", {"amount": 0.25}, "More saturation",
             "more saturation|more colourful|make the colours pop|richer colours|more vivid|"
             "increase saturation|boost the colours|the colours are dull", "colour"),
        asks("saturation_down", {"amount": -0.25}, "Less saturation",
             "less saturation|desaturate|mute the colours|tone down the colours|the colours "
             "are too strong|too saturated|less colourful|more muted", "colour"),
    )
    proposals = (Proposal("need:oversaturated", {"amount": -0.2}),
                 Proposal("cinematic", {"amount": -0.15}, "", 3),
                 Proposal("cool", {"amount": -0.1}, "", 2))
    checklist = (ChecklistWords(r"\b(more (?:colou?rful|saturated|vivid))\b", "chroma", 1,
                                {"amount": 0.4}, 5),
                 ChecklistWords(r"\b(less (?:colou?rful|saturated)|muted|desaturate)\b",
                                "chroma", -1, {"amount": -0.4}, 6))
    #: Autopilot makes it bolder on the background when faces are protected
    bolder_off_faces = True

    def matrix(self, p: dict[str, Any]) -> np.ndarray:
        return _saturation_matrix(p)

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return saturated8(rgb8, params)

    def check(self, m: Measured) -> Verdict:
        return check_spread(self, m, "saturation", 0.6)


@family
class Vibrance(Saturation):
    name = "vibrance"
    description = "Saturation that spares already vivid colours."
    params = (amount("-1 … +1", default=0.3),)
    words = ("vibrance", "vibrant")
    checklist = ()
    reading_order = 4
    positive = r"more|increase|boost|add|raise|vibrant|pop"
    negative = ""
    base = 0.3
    pattern = r"\bvibran(?:ce|t)\b"
    wording = ("boost the muted colours of {where}", "calm the colours of {where}")
    asks = (asks("vibrance_up", {"amount": 0.3}, "More vibrance",
                 "more vibrance|increase vibrance|make it more vibrant|subtle colour boost",
                 "colour"),)
    proposals = (Proposal("need:muted", {"amount": 0.35}),
                 Proposal("correction", {"amount": 0.25}, "gentle vibrance", 11),
                 Proposal("polish", {"amount": 0.15}, "a touch more colour", 1),
                 Proposal("warm", {"amount": 0.2}, "", 3),
                 Proposal("pop", {"amount": 0.4}, "", 1))

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return _vibrance8(rgb8, mask, params)

    def check(self, m: Measured) -> Verdict:
        return check_spread(self, m, "vibrance", 0.3)


class _Cast(CurveOp):
    """A white-point shift along one Lab axis, checked by that axis' mean change."""

    flags = frozenset({"pointwise", "curve", "colour_balance", "tonal"})
    grammar = "adjuster"
    channel = 2
    per_unit = 12.0
    what = "warmth"

    def check(self, m: Measured) -> Verdict:
        a = m.params["amount"]
        delta = float((m.la[..., self.channel] - m.lb[..., self.channel])[m.inside].mean())
        return ratio_verdict(self, "amount", a, delta, a * self.per_unit, self.what, "")


#: verbs that take a warm or cold look down ("tone down the warm sky"); "warm it up" and
#: "cool it down" name the direction themselves
_TAKEN_DOWN = (r"\b(?:tone|dial|knock|calm|turn) (?:down|back)\b|\b(?:reduce|lower|tame|"
               r"lessen|less|remove|kill|cut)\b")


@family
class Temperature(_Cast):
    name = "temperature"
    description = "Warmer (+, amber) or cooler (-, blue)."
    params = (amount("-1 … +1", default=0.2),)
    flags = frozenset({"pointwise", "curve", "colour_balance", "strong", "tonal"})
    words = ("temperature", "warm", "warmer", "warmth", "cool", "cooler", "cold", "colder",
             "hotter", "icier")
    reading_order = 7
    positive = r"warm|warmer|warmth|golden|amber|hotter|increase"
    negative = r"cool|cooler|cold|colder|icier"
    base = 0.2
    pattern = (r"\bwarm(?:er|th)?\b|\bcool(?:er)?\b|\bcold(?:er)?\b|\bcolou?r temperature\b|"
               r"\btemperature\b|\bhotter\b|\bicier\b")
    wording = ("warm up {where}", "cool down {where}")
    asks = (
        asks("warmer", {"amount": 0.2}, "Warmer",
             "make it warmer|warm it up|warmer tones|add warmth|more orange light|it is too "
             "cold|it is too blue|remove the blue cast|less blue|cozier colours", "colour"),
        asks("cooler", {"amount": -0.2}, "Cooler",
             "make it cooler|cool it down|cooler tones|bluish|colder|it is too warm|it is too "
             "yellow|less yellow|too orange|icy blue tones", "colour"),
    )
    proposals = (Proposal("warm", {"amount": 0.3}, "", 1),
                 Proposal("cool", {"amount": -0.3}, "", 1),
                 Proposal("cool", {"amount": -0.15}, "", 3))
    checklist = (ChecklistWords(r"\b(warmer|warm it)\b", "warmth", 1, {"amount": 0.4}, 3),
                 ChecklistWords(r"\b(cooler|colder)\b", "warmth", -1, {"amount": -0.4}, 4))

    def curve(self, ramp: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _temperature(ramp, mask, p)

    def reads_negative(self, clause: str, keyword: str, negative: bool) -> bool:
        if keyword == "warmth":         # a noun: "less warmth", "tone down the warmth"
            return negative or bool(re.search(r"\bwarmth out\b", clause))
        cool = keyword.startswith(("cool", "cold", "ic"))
        if keyword in ("warm", "cool", "cold") and re.search(_TAKEN_DOWN, clause):
            return not cool     # "tone down the warm sky", "reduce the cold cast"
        return cool


@family
class Tint(_Cast):
    name = "tint"
    description = "Magenta (+) or green (-)."
    params = (amount("-1 … +1", default=0.1),)
    words = ("tint",)
    reading_order = 8
    positive = r"magenta|pink|increase|more"
    negative = r"green"
    base = 0.1
    pattern = r"\btint\b|\bless (?:green|magenta|pink)\b"
    channel = 1
    per_unit = 6.0
    what = "tint"
    wording = ("add a magenta tint to {where}", "add a green tint to {where}")
    asks = (
        asks("tint_magenta", {"amount": 0.1}, "More magenta",
             "more magenta|it is too green|remove the green tint|less green|pinker tint",
             "colour"),
        asks("tint_green", {"amount": -0.1}, "More green",
             "more green tint|it is too magenta|remove the magenta cast|too pink|less magenta",
             "colour"),
    )

    def curve(self, ramp: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _tint(ramp, mask, p)

    def reads_negative(self, clause: str, keyword: str, negative: bool) -> bool:
        if keyword.startswith("less "):     # "the water less green": towards magenta
            return keyword != "less green"
        return negative


@family
class AutoWhiteBalance(StatCurveOp):
    name = "auto_white_balance"
    description = "Neutralise a colour cast (grey world)."
    params = (ParamSpec("amount", "float", 1.0, "0 none … 1 full correction", 0.0, 1.0),)
    flags = frozenset({"pointwise", "curve", "colour_balance", "frame_filter", "tonal"})
    words = ("white balance", "white-balance", "colour cast", "color cast",
             "neutralise the colours", "fix the colours", "make the whites white")
    grammar = "filter"
    reading_order = 4
    base = 1.0
    capped = True
    pattern = (r"\bwhite[- ]balance\b|\bcolou?r cast\b|\b(?:yellow|blue|green|"
               r"orange|magenta) cast\b|\bneutrali[sz]e the colou?rs?\b|"
               r"\b(?:fix|correct) the colou?rs?\b(?: cast)?|"
               r"\bmake (?:the )?whites (?:look )?(?:white|neutral)\b")
    wording = "remove the colour cast from {where}"
    asks = (asks("white_balance", {"amount": 1.0}, "Fix the white balance",
                 "fix the white balance|neutral colours|remove the colour cast|correct the "
                 "colours|make the whites white|fix the colors", "colour"),)
    proposals = (Proposal("need:cast", {}),
                 Proposal("correction", {"amount": 1.0}, "grey-world white balance", 5))
    #: Autopilot proposes it only when the input itself shows a cast
    gate = "cast"

    def curve(self, ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
              p: dict[str, Any]) -> np.ndarray:
        return _white_balance_curve(ramp, rgb8, mask, p)

    def check(self, m: Measured) -> Verdict:
        lb, la, inside = m.lb, m.la, m.inside
        cast_b = math.hypot(float(lb[..., 1][inside].mean()), float(lb[..., 2][inside].mean()))
        cast_a = math.hypot(float(la[..., 1][inside].mean()), float(la[..., 2][inside].mean()))
        ok = cast_a <= cast_b + 0.5 or cast_a < 3
        return Verdict(1.0 if ok else 0.3, keep=["colour cast reduced"] if ok else [],
                       fix=[] if ok else ["the colour cast got stronger"],
                       measures={"cast_before": cast_b, "cast_after": cast_a})


@family
class Grayscale(MatrixOp):
    name = "grayscale"
    description = "Remove colour."
    params = (ParamSpec("amount", "float", 1.0, "0 none … 1 fully grey", 0.0, 1.0),)
    flags = frozenset({"pointwise", "frame_filter", "tonal"})
    words = ("grayscale", "greyscale", "monochrome", "black and white", "black & white", "b&w",
             "bw", "no colours", "colourless")
    grammar = "filter"
    reading_order = 1
    base = 1.0
    capped = True
    #: "remove the colours (of X)" reads as this operation
    role = "decolour"
    pattern = (r"\b(?:grayscale|greyscale|monochrome|black and white|black & white|b&w|"
               r"bw|desaturate (?:it )?(?:completely|fully)|no colou?rs?|colou?rless)\b")
    wording = "turn {where} black and white"
    checklist = (ChecklistWords(r"\b(black and white|grayscale|greyscale|monochrome)\b", "grey",
                                1, {"amount": 1.0}, 8),)
    asks = (asks("grayscale", {"amount": 1.0}, "Black and white",
                 "black and white|make it monochrome|grayscale|remove all colour|no colour|"
                 "greyscale photo|b&w", "colour"),)

    def matrix(self, p: dict[str, Any]) -> np.ndarray:
        return _grayscale_matrix(p)

    def check(self, m: Measured) -> Verdict:
        lb, la, inside, p = m.lb, m.la, m.inside, m.params
        cb, ca = float(chroma(lb)[inside].mean()), float(chroma(la)[inside].mean())
        ok = ca <= (1 - 0.8 * p["amount"]) * cb + 1.5
        return Verdict(1.0 if ok else 0.2, keep=["colour removed"] if ok else [],
                       fix=[] if ok else ["colour is still visible"],
                       retry={} if ok else {"amount": 1.0},
                       measures={"chroma_before": cb, "chroma_after": ca})


@family
class Sepia(MatrixOp):
    name = "sepia"
    description = "Warm brown monochrome."
    params = (ParamSpec("amount", "float", 1.0, "0 none … 1 full sepia", 0.0, 1.0),)
    flags = frozenset({"pointwise", "frame_filter", "tonal"})
    words = ("sepia",)
    grammar = "filter"
    reading_order = 2
    base = 1.0
    capped = True
    pattern = r"\bsepia\b"
    wording = "give {where} a sepia tone"
    proposals = (Proposal("vintage", {"amount": 0.3}, "", 2),)

    def matrix(self, p: dict[str, Any]) -> np.ndarray:
        return _sepia_matrix(p)

    def check(self, m: Measured) -> Verdict:
        la, inside = m.la, m.inside
        a_m, b_m = float(la[..., 1][inside].mean()), float(la[..., 2][inside].mean())
        hue = hue_deg(a_m, b_m)
        ok = math.hypot(a_m, b_m) > 3 and 30 <= hue <= 110
        return Verdict(1.0 if ok else 0.3, keep=["warm brown tone"] if ok else [],
                       fix=[] if ok else ["the sepia tone is not visible"],
                       retry={} if ok else {"amount": 1.0}, measures={"hue": hue})


@family
class Hue(FloatOp):
    name = "hue"
    description = "Rotate every hue by some degrees."
    params = (ParamSpec("degrees", "float", 15.0, "hue rotation in degrees", -180, 180),)
    main = "degrees"
    flags = frozenset({"pointwise", "tonal"})
    words = ("hue", "hues", "hue shift", "hue rotation")
    grammar = "adjuster"
    reading_order = 10
    positive = r"increase|forward|clockwise|\+"
    base = 15.0
    pattern = r"\bhues?\b(?: (?:shift|rotation))?"
    wording = "shift the colours of {where}"
    asks = (asks("hue_shift", {"degrees": 15.0}, "Shift the hues",
                 "shift the hue|rotate the hues|change the hue", "colour"),)

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _hue(rgb, mask, p)

    def explicit_value(self, clause: str) -> float | None:
        return number(clause, r"degrees?|deg|°")

    def bare_value(self, value: float) -> float:
        return value

    def check(self, m: Measured) -> Verdict:
        lb, la, inside, deg = m.lb, m.la, m.inside, m.params["degrees"]
        coloured = inside & (chroma(lb) > 10)
        if coloured.sum() < 20:
            return Verdict(0.7, keep=["the target has too little colour to rotate"])
        hb = np.degrees(np.arctan2(lb[..., 2], lb[..., 1]))[coloured]
        ha = np.degrees(np.arctan2(la[..., 2], la[..., 1]))[coloured]
        shift = (ha - hb + 180.0) % 360.0 - 180.0
        measured = float(np.median(np.abs(shift)))
        return ratio_verdict(self, "degrees", deg, measured * (1 if deg >= 0 else -1),
                             deg * 0.5, "hue", "°")


#: a recolour hits its colour within this CIEDE2000 (at equal lightness)
RECOLOR_DE = 10.0
#: colours whose new clipping is what was asked for
ACHROMATIC = {"white", "black", "gray", "grey", "silver", "#ffffff", "#000000", "#fff", "#000"}


@family
class Recolor(FloatOp):
    name = "recolor"
    kinds = ("adjust", "replace")
    description = "Give the target a new colour, keeping its shading and texture."
    params = (ParamSpec("color", "color", None, "colour name or #rrggbb", required=True),
              ParamSpec("strength", "float", 1.0, "0 none … 1 full", 0.0, 1.0),
              ParamSpec("lightness", "float", 1.0, "0 keeps the target's mean "
                        "lightness … 1 takes the named colour's (shading kept either "
                        "way)", 0.0, 1.0))
    main = "color"
    needs_target = True
    flags = frozenset({"pointwise", "object_edge"})
    role = "recolour"
    words = ("recolour", "recolor", "paint", "dye")

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _recolor(rgb, mask, p)

    def stronger(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"strength": 1.0}

    def clipping_expected(self, params: dict[str, Any]) -> bool:
        return str(params.get("color", "")).lower() in ACHROMATIC

    def describe(self, params: dict[str, Any], where: str, instruction: str = "") -> str:
        return f"make {where} {params.get('color') or 'a new colour'}"

    def check(self, m: Measured) -> Verdict:
        return _check_recolor(self, m)


def _check_recolor(op: Recolor, m: Measured) -> Verdict:
    p, lb, la, inside = m.params, m.lb, m.la, m.inside
    strength = p.get("strength", 1.0)
    rgb = np.array([[parse_color(p["color"])]], dtype=np.uint8)
    target = lab(rgb)[0, 0]
    t_chroma = math.hypot(target[1], target[2])
    chroma_after = float(chroma(la)[inside].mean())
    measures: dict[str, float] = {"chroma_after": round(chroma_after, 2)}
    verdict = Verdict(1.0, measures=measures)
    # shading is judged on the object's core (as the editor defines it): the grown edge
    # band mixes in the background, whose contrast with the object a new lightness flips
    core = object_core(inside, growth_limit(inside))
    core = core if core.sum() >= 20 else inside
    # shading and lightness are the recoloured pixels', 2 px in from any left unchanged:
    # the core of a grown mask holds what it grew over (sky through a tree, a kitten's fur
    # round its backdrop) and the rims the edit unmixes, whose lightness flips by design
    moved = core & erode(np.abs(la - lb).max(axis=-1) > 2.0, 2)
    shaded = moved if moved.sum() >= 20 else core
    light_b, light_a = lb[..., 0][shaded], la[..., 0][shaded]
    if light_b.std() > 3 and light_a.std() > 0.5:
        corr = float(np.corrcoef(light_b, light_a)[0, 1])
        measures["lightness_correlation"] = round(corr, 3)
        if corr < 0.5:
            verdict.achieved *= 0.6
            verdict.fix.append("the shading and texture of the target were lost")
        else:
            verdict.keep.append("the target's shading and texture are kept")
    if t_chroma < 12:  # white, black, grey, silver: check the colour went away
        ok = chroma_after <= max(8.0, 0.5 * float(chroma(lb)[inside].mean()))
        if ok:
            verdict.keep.append(f"the target is now {p['color']}")
        else:
            verdict.achieved *= 0.4
            verdict.fix.append(f"the target still looks coloured, not {p['color']}")
            verdict.retry["strength"] = op.clamp("strength", strength + 0.3, digits=3)
        return verdict
    mean = la[core].mean(axis=0)
    de = ciede2000(mean, np.array([mean[0], target[1], target[2]], np.float32))
    measures["dE2000_at_equal_L"] = round(de, 2)
    verdict.checks["colour_hit"] = de <= RECOLOR_DE * (2.0 - strength)
    if not verdict.checks["colour_hit"]:
        verdict.achieved *= 0.5
        verdict.fix.append(f"the colour is ΔE2000 {de:.0f} from {p['color']} at the same "
                           "lightness")
        verdict.retry["strength"] = 1.0
    if p.get("lightness", 1.0) >= 0.99 and strength >= 0.99:
        gap = abs(float(la[..., 0][shaded].mean()) - float(target[0]))
        measures["lightness_gap"] = round(gap, 2)
        verdict.checks["lightness_hit"] = gap <= 15.0
        if gap > 15.0:
            verdict.achieved *= 0.6
            verdict.fix.append(f"the lightness is {gap:.0f} L* away from {p['color']}'s")
    # the hue is read in Oklab: a correct light blue is 30-40° of CIE Lab hue from blue;
    # hue and strength are read on the core like the ΔE2000: the grown band holds the
    # surroundings (leaves round a blue lizard read 32° off, a grey dial round thin blue
    # clock hands "too little colour")
    distance = hue_distance(oklab_hue(m.after[core]), oklab_hue(rgb))
    measures["hue_distance_deg"] = round(distance, 1)
    core_chroma = float(chroma(la)[core].mean())
    measures["core_chroma_after"] = round(core_chroma, 2)
    weak = core_chroma < 0.3 * t_chroma * strength
    if distance <= 25 and not weak:
        verdict.keep.append(f"the target now reads as {p['color']}")
    elif distance <= 60 and not weak:
        verdict.achieved *= 0.6
        verdict.fix.append(f"the colour is {distance:.0f}° away from {p['color']}; push it "
                           "closer")
        verdict.retry["strength"] = op.clamp("strength", strength + 0.3, digits=3)
    else:
        verdict.achieved *= 0.15
        verdict.fix.append(f"the target does not look {p['color']} "
                           f"({'too little colour' if weak else f'hue off by {distance:.0f}°'})")
        verdict.retry["strength"] = 1.0
    return verdict
