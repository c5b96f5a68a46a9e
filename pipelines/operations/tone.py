"""Tone: exposure, brightness, contrast, gamma, shadows, highlights, vignette, levels."""

from __future__ import annotations

import math
import re
from typing import Any

import cv2
import numpy as np

from pipelines.operations.base import (
    ChecklistWords,
    Family,
    Operation,
    ParamSpec,
    Proposal,
    amount,
    asks,
)
from pipelines.operations.engines import CurveOp, FloatOp, StatCurveOp
from pipelines.operations.lexicon import number
from pipelines.operations.measures import Measured, Verdict, ratio_verdict
from pipelines.operations.pixels import (
    LINEAR8,
    LUMA,
    STEPS,
    histograms,
    index16,
    linear_to_srgb,
    srgb_to_linear,
    to_u8,
    wide_blur,
)

family = Family("tone")

# ------------------------------------------------------------------------------ pixels

def _exposure(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return linear_to_srgb(srgb_to_linear(rgb) * 2.0 ** p["stops"])


def _brightness(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    a = p["amount"]
    return rgb + a * (1.0 - rgb) if a >= 0 else rgb * (1.0 + a)


def _contrast(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return (rgb - 0.5) * (1.0 + p["amount"]) + 0.5


def _gamma(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return np.power(np.clip(rgb, 0, 1), 1.0 / p["gamma"])



def _tone_weight(lightness: np.ndarray, shadows: bool) -> np.ndarray:
    """How much a pixel belongs to the shadows (or highlights), from a softened lightness."""
    sigma = max(1.0, min(lightness.shape) / 60.0)
    level = 0.5 * lightness + 0.5 * wide_blur(lightness, sigma)
    w = 1.0 - level / 0.5 if shadows else (level - 0.5) / 0.5
    return np.clip(w, 0.0, 1.0) ** 1.5


def _luminance_to_lightness(y: np.ndarray) -> np.ndarray:
    """Relative luminance Y (0–1) → CIE L* (0–100)."""
    return np.where(y > 0.008856, 116.0 * np.cbrt(y) - 16.0, 903.3 * y).astype(np.float32)


def _lightness_to_luminance(light: np.ndarray) -> np.ndarray:
    """CIE L* (0–100) → relative luminance Y (0–1)."""
    f = (light + 16.0) / 116.0
    return np.where(light > 8.0, f ** 3, light / 903.3).astype(np.float32)


_GRID = np.linspace(0.0, 1.0, STEPS + 1, dtype=np.float32)
_Y_TO_L = _luminance_to_lightness(_GRID) / 100.0          # both in [0, 1]
_L_TO_Y = _lightness_to_luminance(_GRID * 100.0)


def _shadows_highlights(rgb8: np.ndarray, amount: float, shadows: bool) -> np.ndarray:
    """Move the lightness of the shadows (or highlights) and keep every pixel's hue.

    The new lightness becomes a luminance ratio applied to linear RGB, so colours keep
    their chromaticity instead of drifting out of gamut as a fixed a*/b* would.
    """
    linear = LINEAR8[rgb8]
    y_old = cv2.transform(linear, LUMA[None, :])
    light = _Y_TO_L[index16(y_old)]
    w = _tone_weight(light, shadows) * (0.5 * abs(amount))
    new = light + w * (1.0 - light) if amount >= 0 else light - w * light
    y_new = _L_TO_Y[index16(new)]
    ratio = np.minimum(y_new / np.maximum(y_old, 1e-5), 50.0)
    # what the capped ratio cannot lift (near-black pixels) is added in the pixel's own
    # colour direction, so deep shadows brighten without turning grey:
    # out = linear * ratio + rest * (linear + eps) / (y_old + eps)
    rest = np.maximum(y_new - y_old * ratio, 0.0) / (y_old + 1e-3)
    gain, offset = (ratio + rest)[..., None], (1e-3 * rest)[..., None]
    return linear_to_srgb(linear * gain + offset)


def _shadows8(rgb8: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return to_u8(_shadows_highlights(rgb8, p["amount"], shadows=True))


def _highlights8(rgb8: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    return to_u8(_shadows_highlights(rgb8, p["amount"], shadows=False))



def _levels_curve(ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
                  p: dict[str, Any]) -> np.ndarray:
    cdf = np.cumsum(histograms(rgb8, mask).sum(axis=0)) / 1.0
    cdf /= cdf[-1]
    lo = np.searchsorted(cdf, p["clip"] / 100.0) / 255.0
    hi = np.searchsorted(cdf, 1.0 - p["clip"] / 100.0) / 255.0
    if hi - lo < 1e-3:
        return ramp
    return (ramp - lo) / (hi - lo)



def _vignette(rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    h, w = rgb.shape[:2]
    dx = ((np.arange(w, dtype=np.float32) + 0.5) / w - 0.5)[None, :] ** 2
    dy = ((np.arange(h, dtype=np.float32) + 0.5) / h - 0.5)[:, None] ** 2
    r = np.sqrt(dx + dy) / math.hypot(0.5, 0.5)
    t = np.clip((r - 0.25) / 0.75, 0.0, 1.0)
    falloff = (t * t * (3 - 2 * t))[..., None] * 0.8 * abs(p["amount"])
    return rgb * (1.0 - falloff) if p["amount"] >= 0 else rgb + falloff * (1.0 - rgb)


# ------------------------------------------------------------------------------ checks


def _check_tone(op: Operation, p: dict[str, Any], m: Measured) -> Verdict:
    lb, la, inside = m.lb, m.la, m.inside
    light_b, light_a = lb[..., 0][inside], la[..., 0][inside]
    mean_b = float(light_b.mean())
    delta = float((light_a - light_b).mean())
    if op.name == "brightness":
        a = p["amount"]
        expected = a * (100.0 - mean_b) * 0.6 if a >= 0 else a * mean_b * 0.6
        return ratio_verdict(op, "amount", a, delta, expected, "brightness", " L")
    if op.name == "exposure":
        s = p["stops"]
        expected = min(10.0 * s, 0.6 * (100 - mean_b)) if s >= 0 else max(10.0 * s,
                                                                          -0.6 * mean_b)
        return ratio_verdict(op, "stops", s, delta, expected, "exposure", " L")
    if op.name == "gamma":
        g = p["gamma"]
        expected = 25.0 * math.log(g) * min(1.0, (100 - mean_b) / 50 if g > 1 else mean_b / 50)
        return ratio_verdict(op, "gamma", g, delta, expected, "mid-tone lightness", " L")
    # shadows / highlights: only the pixels of that tone range count
    a = p["amount"]
    tone = light_b < 40 if op.name == "shadows" else light_b > 60
    if tone.sum() < max(20, 0.02 * tone.size):
        return Verdict(0.8, keep=[f"there are few {op.name} in the target to change"])
    delta = float((light_a - light_b)[tone].mean())
    room = float((100 - light_b[tone]).mean()) if a >= 0 else float(light_b[tone].mean())
    expected = (1 if a >= 0 else -1) * abs(a) * room * 0.12
    return ratio_verdict(op, "amount", a, delta, expected, op.name, " L")


class _Tonal(CurveOp):
    """A tone curve checked by the mean lightness change."""

    def check(self, m: Measured) -> Verdict:
        return _check_tone(self, m.params, m)


# ------------------------------------------------------------------------- operations


@family
class Brightness(_Tonal):
    name = "brightness"
    description = "Lighten (+) or darken (-)."
    params = (amount("-1 black … +1 white", default=0.2),)
    flags = frozenset({"pointwise", "curve", "tonal"})
    words = ("brightness", "brighten", "brighter", "lighten", "lighter", "darken", "darker",
             "dim", "illuminate", "light up", "dull")
    grammar = "adjuster"
    reading_order = 11
    positive = (r"bright|lighter|lighten|lift|increase|raise|more light|light up|"
                r"illuminate")
    negative = r"darker|darken|dim|dimmer"
    base = 0.2
    pattern = (r"\bbright(?:en|er|ness)?\b|\blight(?:en|er)\b|\blight up\b|"
               r"\bdark(?:en|er|ness)?\b|\bdim(?:mer)?\b|\billuminate\b|\bdull\b")
    light_level = True
    wording = ("brighten {where}", "darken {where}")
    asks = (
        asks("brightness_up", {"amount": 0.2}, "Brighter",
             "make it brighter|brighten the photo|lighten the image|more light|it is too dark|"
             "the photo is dark|lift the brightness|increase brightness|light it up|"
             "not so dark|it looks dim|less dark", "light"),
        asks("brightness_down", {"amount": -0.2}, "Darker",
             "make it darker|darken the photo|less bright|it is too bright|tone down the "
             "brightness|dim the image|reduce brightness|the picture is too light", "light"),
    )

    def curve(self, ramp: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _brightness(ramp, mask, p)

    def reads_negative(self, clause: str, keyword: str, negative: bool) -> bool:
        return True if re.match(r"dark|dim|dull", keyword) else negative


@family
class Exposure(_Tonal):
    name = "exposure"
    description = "Exposure change in photographic stops."
    params = (ParamSpec("stops", "float", 0.5, "stops; +1 doubles the light", -3, 3),)
    flags = frozenset({"pointwise", "curve", "tonal"})
    words = ("exposure", "underexposed", "overexposed", "expose")
    grammar = "adjuster"
    reading_order = 1
    positive = r"underexposed|increase|raise|more|up|boost|brighter|brighten|\+"
    negative = r"overexposed|underexposed"
    base = 0.5
    pattern = r"\b(?:under|over)?exposed\b|\bexpos(?:ur)?e\b|\b(?<=\d )stops?\b|\b(?<=\d)\s?ev\b"
    light_level = True
    wording = ("brighten {where}", "darken {where}")
    proposals = (Proposal("need:exposure", {}), Proposal("airy", {"stops": 0.4}, "", 1))
    checklist = (ChecklistWords(r"\b(brighter|lighten|brighten)\b", "lightness", 1,
                                {"stops": 0.6}, 1),
                 ChecklistWords(r"\b(darker|darken)\b", "lightness", -1, {"stops": -0.6}, 2))
    asks = (
        asks("exposure_up", {"stops": 0.5}, "More exposure",
             "increase the exposure|the photo is underexposed|expose it brighter|raise the "
             "exposure|push the exposure up|add a stop of light", "light"),
        asks("exposure_down", {"stops": -0.5}, "Less exposure",
             "reduce the exposure|the photo is overexposed|lower the exposure|pull the "
             "exposure down|expose it darker", "light"),
    )

    def curve(self, ramp: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _exposure(ramp, mask, p)

    def reads_negative(self, clause: str, keyword: str, negative: bool) -> bool:
        if "overexposed" in keyword:
            return True
        if "underexposed" in keyword:
            return False
        return negative

    def explicit_value(self, clause: str) -> float | None:
        return number(clause, r"stops?|ev\b")

    def bare_value(self, value: float) -> float:
        return value


@family
class Contrast(CurveOp):
    name = "contrast"
    description = "More (+) or less (-) contrast around mid-grey."
    params = (amount("-1 flat … +1 double", default=0.2),)
    flags = frozenset({"pointwise", "curve", "strong", "tonal"})
    words = ("contrast", "contrasty", "punchier", "flatter", "crisper tones")
    grammar = "adjuster"
    reading_order = 6
    positive = r"more|increase|boost|add|raise|higher|punchier|stronger|crisper"
    negative = r"flatter|soften"
    base = 0.2
    pattern = r"\bcontrast(?:y)?\b|\bpunchier\b|\bflatter\b|\bcrisp(?:er)? tones\b"
    wording = ("add contrast to {where}", "soften the contrast of {where}")
    proposals = (Proposal("need:low_contrast", {}), Proposal("need:harsh", {"amount": -0.2}),
                 Proposal("polish", {"amount": 0.1}, "a little more punch", 4),
                 Proposal("warm", {"amount": -0.1}, "", 4),
                 Proposal("cinematic", {"amount": 0.25}, "", 1),
                 Proposal("airy", {"amount": -0.15}, "", 3),
                 Proposal("pop", {"amount": 0.15}, "", 3),
                 Proposal("vintage", {"amount": -0.2}, "", 1))
    checklist = (ChecklistWords(r"\b(more contrast|punchier|increase (?:the )?contrast)\b",
                                "contrast", 1, {"amount": 0.35}, 7),)
    asks = (
        asks("contrast_up", {"amount": 0.2}, "More contrast",
             "more contrast|increase the contrast|add punch|it looks flat|it is washed out|"
             "make it punchier|boost contrast|the photo looks dull and flat|crisper tones",
             "light"),
        asks("contrast_down", {"amount": -0.2}, "Less contrast",
             "less contrast|reduce the contrast|too much contrast|soften the contrast|flatter "
             "tones|it is too harsh|make it less contrasty", "light"),
    )

    def curve(self, ramp: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _contrast(ramp, mask, p)

    def check(self, m: Measured) -> Verdict:
        return check_spread(self, m, "contrast", 0.6)


def check_spread(op: Operation, m: Measured, what: str, factor: float) -> Verdict:
    """Contrast (lightness spread) or colourfulness (mean chroma) against ``amount``."""
    from pipelines.operations.measures import chroma  # noqa: PLC0415

    a, lb, la, inside = m.params["amount"], m.lb, m.la, m.inside
    if what == "contrast":
        sb, sa = float(lb[..., 0][inside].std()), float(la[..., 0][inside].std())
    else:
        sb, sa = float(chroma(lb)[inside].mean()), float(chroma(la)[inside].mean())
    if sb < 1.0:
        if a > 0:
            return Verdict(0.7, keep=[f"the target has almost no {what} to increase"])
        return Verdict(1.0, keep=[f"the target has almost no {what} left"])
    measured = math.log(max(sa, 1e-3) / sb)
    expected = math.log(max(1.0 + a, 0.05)) * factor
    return ratio_verdict(op, "amount", a, measured, expected, what, "")


@family
class Gamma(_Tonal):
    name = "gamma"
    description = "Gamma curve; above 1 brightens mid-tones."
    params = (ParamSpec("gamma", "float", 1.2, "gamma", 0.2, 5.0),)
    main = "gamma"
    flags = frozenset({"pointwise", "curve", "tonal"})
    words = ("gamma", "midtones", "mid-tones")
    grammar = "adjuster"
    reading_order = 9
    positive = r"increase|raise|more|brighter|up"
    base = 1.2
    pattern = r"\bgamma\b|\bmid-?tones\b"

    def curve(self, ramp: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _gamma(ramp, mask, p)

    def explicit_value(self, clause: str) -> float | None:
        return number(clause, r"(?=\s|$)") if re.search(r"\bgamma\b.*\d", clause) else None

    def bare_value(self, value: float) -> float | None:  # type: ignore[override]
        return None

    def planned_value(self, factor: float, negative: bool, explicit: float | None) -> float:
        if explicit is not None:
            return explicit
        return 1.0 / (1 + 0.2 * factor) if negative else 1 + 0.2 * factor

    def stronger(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def describe(self, params: dict[str, Any], where: str, instruction: str = "") -> str:
        value = params.get("gamma")
        up = not isinstance(value, (int, float)) or isinstance(value, bool) or value >= 1
        return (f"lift the mid-tones of {where}" if up else f"deepen the mid-tones of {where}")


class _ToneRange(_Tonal):
    """Shadows or highlights: 8-bit in, luminance ratios in linear light."""

    flags = frozenset({"pointwise", "low_frequency", "tonal"})
    grammar = "adjuster"
    #: "make the shadows warmer": the tone range is the target, not the adjustment
    can_be_target = True
    light_level = True


@family
class Shadows(_ToneRange):
    name = "shadows"
    description = "Lift (+) or deepen (-) the shadows only."
    params = (amount("-1 … +1", default=0.3),)
    words = ("shadows", "shadow", "dark areas")
    reading_order = 3
    positive = (r"lift|brighten|brighter|open|recover|raise|more detail|increase|"
                r"lighten|boost|reveal")
    negative = r"deepen|deeper|crush"
    base = 0.3
    pattern = r"\bshadows?\b|\bdark areas\b"
    wording = ("lift the shadows in {where}", "deepen the shadows in {where}")
    asks = (
        asks("shadows_up", {"amount": 0.3}, "Lift the shadows",
             "lift the shadows|brighten the dark areas|open up the shadows|the shadows are too "
             "dark|show detail in the dark parts|recover the shadows|lighten the shadows",
             "light"),
        asks("shadows_down", {"amount": -0.3}, "Deeper shadows",
             "deeper shadows|darken the shadows|crush the blacks|richer blacks|make the dark "
             "areas darker", "light"),
    )
    proposals = (Proposal("need:crushed", {"amount": 0.4}),
                 Proposal("correction", {"amount": 0.3}, "open the shadows", 9),
                 Proposal("polish", {"amount": 0.15}, "open the shadows a little", 5),
                 Proposal("warm", {"amount": 0.25}, "", 2),
                 Proposal("airy", {"amount": 0.35}, "", 2))

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return _shadows8(rgb8, mask, params)

    def reads_negative(self, clause: str, keyword: str, negative: bool) -> bool:
        return bool(re.search(r"\b(?:deepen|darken|darker|crush|deeper|richer)\b", clause))


@family
class Highlights(_ToneRange):
    name = "highlights"
    description = "Recover (-) or boost (+) the highlights only."
    params = (amount("-1 … +1", default=-0.3),)
    words = ("highlights", "highlight", "blown out areas", "blown-out sky")
    reading_order = 2
    positive = r"boost|increase|brighten|brighter|more|raise|lift"
    negative = r"recover|tame"
    base = 0.3
    pattern = r"\bhighlights?\b|\bblown(?:[- ]out)? (?:areas|sky|parts)\b"
    wording = ("boost the highlights in {where}", "recover the highlights in {where}")
    asks = (
        asks("highlights_down", {"amount": -0.3}, "Recover the highlights",
             "recover the highlights|the highlights are blown out|tone down the highlights|"
             "the bright areas are too bright|reduce the glare|bring back the blown sky|"
             "tame the highlights|the whites are clipped", "light"),
        asks("highlights_up", {"amount": 0.3}, "Brighter highlights",
             "brighter highlights|boost the highlights|make the bright areas brighter|lift the "
             "whites", "light"),
    )
    proposals = (Proposal("need:blown", {"amount": -0.4}),
                 Proposal("correction", {"amount": -0.4}, "recover the highlights", 8),
                 Proposal("polish", {"amount": -0.15}, "tame the highlights a little", 6),
                 Proposal("cinematic", {"amount": -0.3}, "", 4))

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        return _highlights8(rgb8, mask, params)

    def reads_negative(self, clause: str, keyword: str, negative: bool) -> bool:
        # "recover/tone down the highlights" is the common ask
        return not re.search(rf"\b(?:{self.positive})\b", clause)


@family
class Vignette(FloatOp):
    name = "vignette"
    description = "Darken (+) or lighten (-) towards the corners."
    params = (amount("-1 … +1", default=0.3),)
    flags = frozenset({"low_frequency", "frame_filter", "tonal"})
    words = ("vignette", "vignetting")
    grammar = "filter"
    reading_order = 3
    base = 0.3
    pattern = r"\bvignett(?:e|ing)\b"
    wording = ("darken the corners of {where}", "lighten the corners of {where}")
    asks = (
        asks("vignette_add", {"amount": 0.3}, "Darken the corners",
             "add a vignette|darken the corners|darker edges|darken the edges of the photo|"
             "vignette", "light"),
        asks("vignette_remove", {"amount": -0.3}, "Lighten the corners",
             "remove the vignette|lighten the corners|brighten the edges|the corners are too "
             "dark|less vignette", "light"),
    )
    proposals = (Proposal("cinematic", {"amount": 0.4}, "", 2),
                 Proposal("vintage", {"amount": 0.3}, "", 3))

    def pixels(self, rgb: np.ndarray, mask: np.ndarray, p: dict[str, Any]) -> np.ndarray:
        return _vignette(rgb, mask, p)

    def filter_sign(self, clause: str) -> float:
        """-1 when the clause asks to lighten or remove the vignette."""
        return -1.0 if re.search(r"\b(?:lighten|remove|reduce|less|lighter)\b", clause) \
            else 1.0

    def check(self, m: Measured) -> Verdict:
        inside, lb, la, p = m.inside, m.lb, m.la, m.params
        h, w = inside.shape
        yy, xx = np.mgrid[0:h, 0:w]
        r = np.hypot((xx + 0.5) / w - 0.5, (yy + 0.5) / h - 0.5)[inside]
        delta = (la[..., 0] - lb[..., 0])[inside]
        lo, hi = np.quantile(r, [0.25, 0.75])
        if hi - lo < 1e-3:
            return Verdict(0.8, keep=["the target is too small to show a vignette"])
        measured = float(delta[r <= lo].mean() - delta[r >= hi].mean())
        return ratio_verdict(self, "amount", p["amount"], measured, p["amount"] * 8.0,
                             "corner darkening", " L")


@family
class AutoLevels(StatCurveOp):
    name = "auto_levels"
    description = "Stretch levels to the full range."
    params = (ParamSpec("clip", "float", 0.5, "percent clipped at each end", 0.0, 5.0),)
    flags = frozenset({"pointwise", "curve", "frame_filter", "tonal"})
    words = ("auto levels", "auto-levels", "fix the levels", "stretch the levels",
             "auto enhance", "auto correct")
    grammar = "filter"
    reading_order = 5
    base = 0.5
    pattern = (r"\bauto[- ]?levels?\b|\bfix the levels\b|\bstretch the levels\b|"
               r"\bauto[- ]?enhance\b|\bauto[- ]?correct\b")
    wording = "balance the light and dark of {where}"
    asks = (asks("auto_levels", {"clip": 0.5}, "Auto levels",
                 "auto levels|auto fix|auto enhance|fix the levels|stretch the levels|auto "
                 "correct the tones", "light"),)
    proposals = (Proposal("need:flat", {"clip": 0.5}),
                 Proposal("correction", {"clip": 0.5}, "stretch the tones to the full range",
                          3))

    def curve(self, ramp: np.ndarray, rgb8: np.ndarray, mask: np.ndarray,
              p: dict[str, Any]) -> np.ndarray:
        return _levels_curve(ramp, rgb8, mask, p)

    def check(self, m: Measured) -> Verdict:
        lb, la, inside = m.lb, m.la, m.inside
        rb = np.percentile(lb[..., 0][inside], [1, 99])
        ra = np.percentile(la[..., 0][inside], [1, 99])
        ok = (ra[1] - ra[0]) >= (rb[1] - rb[0]) - 0.5
        return Verdict(1.0 if ok else 0.3, keep=["tonal range stretched"] if ok else [],
                       fix=[] if ok else ["the tonal range shrank"],
                       measures={"range_before": float(rb[1] - rb[0]),
                                 "range_after": float(ra[1] - ra[0])})
