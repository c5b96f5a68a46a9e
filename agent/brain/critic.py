"""Critics: did an edit do what was asked, leave the rest alone, and leave no artefacts?

``critique(before, after, action, mask) -> Critique``: ``before``/``after`` are the layer
patches (same size, uint8), ``mask`` the target mask at that size.

``MeasuredCritic`` (embedded, no model) measures, per operation, whether the target
changed as asked (hue distance to the named colour with the lightness structure kept;
direction and size of tonal/colour changes against the requested amount; a removed region
that now matches its surroundings with no trace of the object's colour; text present;
detail up or down for sharpen/denoise/blur), that nothing outside the feather band moved,
that the feather band has no seam, and that no highlights or shadows were newly clipped.
It returns a 0–10 score, plain-words keep/fix lists and concrete ``retry_params``.

``PanelCritic`` asks several VLM critics (instruction, preservation, artefacts) and an
aggregator through the LLM protocol, with the measured critique as evidence; it falls
back to the measured critique when the model fails.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import cv2
import numpy as np

from agent.brain.llm import get_llm
from agent.brain.prompts import AGGREGATOR, aggregator_user, critic_system, critic_user
from pipelines.config import Settings, get_settings
from pipelines.editors.objects import growth_limit, object_core
from pipelines.editors.operations import OPERATIONS, OperationError, get_operation, parse_color
from pipelines.layers import feather_for
from pipelines.llm import LLMError, describe, llm_configured
from pipelines.localizers import get_localizer

log = logging.getLogger(__name__)

#: The widest feather the turn loop composes with (``agent.session`` retries with 24).
MAX_FEATHER = 24


@dataclass
class Critique:
    """A verdict on one attempt.

    Attributes:
        score: 0 (failed) … 10 (perfect).
        keep: what worked, in plain words.
        fix: what to fix, in plain words.
        retry_params: parameter values to try next (names of the action's operation).
        measures: the numbers behind the verdict (for logs and the UI).
    """

    score: float
    keep: list[str] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    retry_params: dict[str, Any] = field(default_factory=dict)
    measures: dict[str, float] = field(default_factory=dict)
    #: measured checks by name → passed (a failing one caps the score below the bar)
    checks: dict[str, bool] = field(default_factory=dict)
    #: pixels to grow the target's mask by on the next attempt (a rim was left)
    grow: int = 0

    @property
    def passed(self) -> bool:
        """At or above the acceptance bar, with every measured check passed."""
        return self.score >= PASS_SCORE and all(self.checks.values())

    def to_dict(self) -> dict[str, Any]:
        """``{"score", "passed", "reasons", "keep", "checks", "measures"}`` (JSON-able)."""
        return {"score": round(float(self.score), 2), "passed": self.passed,
                "reasons": list(self.fix), "keep": list(self.keep),
                "checks": dict(self.checks),
                "measures": {k: float(v) for k, v in self.measures.items()}}


#: The acceptance bar (the turn loop's ``ACCEPT_SCORE``); a failed check caps below it.
PASS_SCORE = 7.0
FAILED_CHECK_CAP = 6.0


@runtime_checkable
class Critic(Protocol):
    """Judges one attempt: the turn loop calls every critic this way."""

    name: str

    def critique(self, before: np.ndarray, after: np.ndarray, action: Any,
                 mask: np.ndarray | None = None, *, feather: int | None = None,
                 params: dict[str, Any] | None = None) -> Critique:
        """Score ``after`` (the composed patch) against ``before`` for ``action``.

        Args:
            before: the layer's patch before the edit (uint8 HxWx3/4).
            after: the composed patch after the edit, same size.
            action: the ``agent.actions.Action`` attempted.
            mask: the target mask at the patch's size (None: the whole patch).
            feather: the feather width the attempt was composed with.
            params: the parameters the attempt used (default: the action's).

        Returns:
            The ``Critique``.
        """
        ...


#: The JSON a VLM critic (and the aggregator) must answer.
CRITIQUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 10},
        "keep": {"type": "array", "items": {"type": "string", "maxLength": 200},
                 "maxItems": 8},
        "fix": {"type": "array", "items": {"type": "string", "maxLength": 200},
                "maxItems": 8},
        "retry_params": {"type": "object"},
    },
    "required": ["score", "keep", "fix"],
}


# --- measurement helpers ----------------------------------------------------------------

def _lab(image: np.ndarray) -> np.ndarray:
    rgb = np.ascontiguousarray(image[..., :3], dtype=np.float32) / 255.0
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2Lab)


def _dilate(mask: np.ndarray, radius: int) -> np.ndarray:
    if radius <= 0:
        return mask.copy()
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    return cv2.dilate(mask.astype(np.uint8), kernel).astype(bool)


def _erode(mask: np.ndarray, radius: int) -> np.ndarray:
    if radius <= 0:
        return mask.copy()
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    return cv2.erode(mask.astype(np.uint8), kernel, borderType=cv2.BORDER_REPLICATE
                     ).astype(bool)


def _chroma(lab: np.ndarray) -> np.ndarray:
    return np.hypot(lab[..., 1], lab[..., 2])


def _hue_deg(a: float, b: float) -> float:
    return math.degrees(math.atan2(b, a)) % 360.0


def _hue_distance(h1: float, h2: float) -> float:
    d = abs(h1 - h2) % 360.0
    return min(d, 360.0 - d)


def _detail(grey: np.ndarray, where: np.ndarray) -> float:
    """High-frequency energy: mean |Laplacian| over ``where``."""
    lap = np.abs(cv2.Laplacian(grey, cv2.CV_32F, ksize=3))
    return float(lap[where].mean()) if where.any() else 0.0


def _noise_sigma(grey: np.ndarray, where: np.ndarray) -> float:
    """Noise level (grey levels): robust spread of the fine residual in flat areas."""
    g = grey.astype(np.float32)
    residual = g - cv2.medianBlur(grey, 3).astype(np.float32)
    edges = _grad(cv2.GaussianBlur(g, (0, 0), 1.5)) > 8.0
    flat = where & ~edges
    if flat.sum() < 50:
        flat = where
    return float(1.4826 * np.median(np.abs(residual[flat])) * 1.5)


def _changed(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """True where any colour channel differs (fast: OpenCV absdiff, channel ORs)."""
    d = cv2.absdiff(np.ascontiguousarray(before[..., :3]), np.ascontiguousarray(after[..., :3]))
    return (d[..., 0] | d[..., 1] | d[..., 2]) > 0


def _cmin(rgb: np.ndarray) -> np.ndarray:
    return np.minimum(np.minimum(rgb[..., 0], rgb[..., 1]), rgb[..., 2])


def _cmax(rgb: np.ndarray) -> np.ndarray:
    return np.maximum(np.maximum(rgb[..., 0], rgb[..., 1]), rgb[..., 2])


def _grad(light: np.ndarray) -> np.ndarray:
    gx = cv2.Sobel(light, cv2.CV_32F, 1, 0, ksize=3) / 8.0
    gy = cv2.Sobel(light, cv2.CV_32F, 0, 1, ksize=3) / 8.0
    return np.hypot(gx, gy)


@dataclass
class _Verdict:
    """One check's contribution: achieved 0..1, words, suggestions."""

    achieved: float
    keep: list[str] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    retry: dict[str, Any] = field(default_factory=dict)
    measures: dict[str, float] = field(default_factory=dict)
    checks: dict[str, bool] = field(default_factory=dict)
    grow: int = 0


def _bounded(op: str, name: str, value: float) -> float:
    return get_operation(op).clamp(name, value, digits=3)


def _ratio_verdict(op: str, name: str, value: float, measured: float, expected: float,
                   what: str, unit: str) -> _Verdict:
    """Compare a signed measured change with the signed expected one."""
    m = {f"{what}_change": round(measured, 3), f"{what}_expected": round(expected, 3)}
    if abs(expected) < 1e-6:
        return _Verdict(1.0, [f"{what} left as asked"], measures=m)
    ratio = measured / expected
    m["achieved_ratio"] = round(ratio, 3)
    direction = "up" if expected > 0 else "down"
    if ratio <= 0.05:
        wrong = ratio < -0.05
        words = (f"the {what} went the wrong way" if wrong
                 else f"the {what} barely changed ({measured:+.1f}{unit})")
        retry = {name: _bounded(op, name, value * (2.0 if not wrong else 1.0))}
        return _Verdict(0.1 if wrong else 0.15, fix=[f"{words}; it should go {direction}"],
                        retry=retry, measures=m)
    if ratio < 0.6:
        scale = min(3.0, 1.0 / max(ratio, 0.2))
        return _Verdict(0.35 + 0.6 * ratio,
                        keep=[f"the {what} moved {direction}"],
                        fix=[f"the {what} changed only {ratio:.0%} of what was asked; "
                             "make it stronger"],
                        retry={name: _bounded(op, name, value * scale)}, measures=m)
    if ratio > 3.0:
        return _Verdict(0.7, keep=[f"the {what} moved {direction}"],
                        fix=[f"the {what} changed much more than asked; tone it down"],
                        retry={name: _bounded(op, name, value * 0.5)}, measures=m)
    return _Verdict(1.0, keep=[f"the {what} moved {direction} about as asked"], measures=m)


# --- per-operation checks ---------------------------------------------------------------

def _check_tone(op: str, p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
                inside: np.ndarray) -> _Verdict:
    light_b, light_a = lb[..., 0][inside], la[..., 0][inside]
    mean_b = float(light_b.mean())
    delta = float((light_a - light_b).mean())
    if op == "brightness":
        a = p["amount"]
        expected = a * (100.0 - mean_b) * 0.6 if a >= 0 else a * mean_b * 0.6
        return _ratio_verdict(op, "amount", a, delta, expected, "brightness", " L")
    if op == "exposure":
        s = p["stops"]
        expected = min(10.0 * s, 0.6 * (100 - mean_b)) if s >= 0 else max(10.0 * s,
                                                                          -0.6 * mean_b)
        return _ratio_verdict(op, "stops", s, delta, expected, "exposure", " L")
    if op == "gamma":
        g = p["gamma"]
        expected = 25.0 * math.log(g) * min(1.0, (100 - mean_b) / 50 if g > 1 else mean_b / 50)
        return _ratio_verdict(op, "gamma", g, delta, expected, "mid-tone lightness", " L")
    # shadows / highlights: only the pixels of that tone range count
    a = p["amount"]
    tone = light_b < 40 if op == "shadows" else light_b > 60
    if tone.sum() < max(20, 0.02 * tone.size):
        return _Verdict(0.8, keep=[f"there are few {op} in the target to change"])
    delta = float((light_a - light_b)[tone].mean())
    room = float((100 - light_b[tone]).mean()) if a >= 0 else float(light_b[tone].mean())
    expected = (1 if a >= 0 else -1) * abs(a) * room * 0.12
    return _ratio_verdict(op, "amount", a, delta, expected, op, " L")


def _check_spread(op: str, p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
                  inside: np.ndarray) -> _Verdict:
    a = p["amount"]
    if op == "contrast":
        sb, sa = float(lb[..., 0][inside].std()), float(la[..., 0][inside].std())
        what = "contrast"
    else:
        sb, sa = float(_chroma(lb)[inside].mean()), float(_chroma(la)[inside].mean())
        what = "saturation" if op == "saturation" else "vibrance"
    if sb < 1.0:
        if a > 0:
            return _Verdict(0.7, keep=[f"the target has almost no {what} to increase"])
        return _Verdict(1.0, keep=[f"the target has almost no {what} left"])
    measured = math.log(max(sa, 1e-3) / sb)
    factor = 0.3 if op == "vibrance" else 0.6
    expected = math.log(max(1.0 + a, 0.05)) * factor
    return _ratio_verdict(op, "amount", a, measured, expected, what, "")


def _check_cast(op: str, p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
                inside: np.ndarray) -> _Verdict:
    a = p["amount"]
    channel = 2 if op == "temperature" else 1   # b: yellow-blue, a: magenta-green
    delta = float((la[..., channel] - lb[..., channel])[inside].mean())
    expected = a * (12.0 if op == "temperature" else 6.0)
    return _ratio_verdict(op, "amount", a, delta, expected,
                          "warmth" if op == "temperature" else "tint", "")


def _check_hue(p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
               inside: np.ndarray) -> _Verdict:
    deg = p["degrees"]
    coloured = inside & (_chroma(lb) > 10)
    if coloured.sum() < 20:
        return _Verdict(0.7, keep=["the target has too little colour to rotate"])
    hb = np.degrees(np.arctan2(lb[..., 2], lb[..., 1]))[coloured]
    ha = np.degrees(np.arctan2(la[..., 2], la[..., 1]))[coloured]
    shift = (ha - hb + 180.0) % 360.0 - 180.0
    measured = float(np.median(np.abs(shift)))
    return _ratio_verdict("hue", "degrees", deg, measured * (1 if deg >= 0 else -1),
                          deg * 0.5, "hue", "°")


def _check_recolor(p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
                   inside: np.ndarray) -> _Verdict:
    strength = p.get("strength", 1.0)
    rgb = np.array([[parse_color(p["color"])]], dtype=np.uint8)
    target = _lab(rgb)[0, 0]
    t_chroma = math.hypot(target[1], target[2])
    a_mean, b_mean = float(la[..., 1][inside].mean()), float(la[..., 2][inside].mean())
    chroma_after = float(_chroma(la)[inside].mean())
    m: dict[str, float] = {"chroma_after": round(chroma_after, 2)}
    verdict = _Verdict(1.0, measures=m)
    # shading is judged on the object's core (as the editor defines it): the grown edge
    # band mixes in the background, whose contrast with the object a new lightness flips
    core = object_core(inside, growth_limit(inside))
    core = core if core.sum() >= 20 else inside
    light_b, light_a = lb[..., 0][core], la[..., 0][core]
    if light_b.std() > 3 and light_a.std() > 0.5:
        corr = float(np.corrcoef(light_b, light_a)[0, 1])
        m["lightness_correlation"] = round(corr, 3)
        if corr < 0.5:
            verdict.achieved *= 0.6
            verdict.fix.append("the shading and texture of the target were lost")
        else:
            verdict.keep.append("the target's shading and texture are kept")
    if t_chroma < 12:  # white, black, grey, silver: check the colour went away
        ok = chroma_after <= max(8.0, 0.5 * float(_chroma(lb)[inside].mean()))
        if ok:
            verdict.keep.append(f"the target is now {p['color']}")
        else:
            verdict.achieved *= 0.4
            verdict.fix.append(f"the target still looks coloured, not {p['color']}")
            verdict.retry["strength"] = _bounded("recolor", "strength", strength + 0.3)
        return verdict
    mean = la[core].mean(axis=0)
    de = _ciede2000(mean, np.array([mean[0], target[1], target[2]], np.float32))
    m["dE2000_at_equal_L"] = round(de, 2)
    verdict.checks["colour_hit"] = de <= RECOLOR_DE * (2.0 - strength)
    if not verdict.checks["colour_hit"]:
        verdict.achieved *= 0.5
        verdict.fix.append(f"the colour is ΔE2000 {de:.0f} from {p['color']} at the same "
                           "lightness")
        verdict.retry["strength"] = 1.0
    if p.get("lightness", 1.0) >= 0.99 and strength >= 0.99:
        gap = abs(float(mean[0]) - float(target[0]))
        m["lightness_gap"] = round(gap, 2)
        verdict.checks["lightness_hit"] = gap <= 15.0
        if gap > 15.0:
            verdict.achieved *= 0.6
            verdict.fix.append(f"the lightness is {gap:.0f} L* away from {p['color']}'s")
    distance = _hue_distance(_hue_deg(a_mean, b_mean), _hue_deg(target[1], target[2]))
    m["hue_distance_deg"] = round(distance, 1)
    weak = chroma_after < 0.3 * t_chroma * strength
    if distance <= 25 and not weak:
        verdict.keep.append(f"the target now reads as {p['color']}")
    elif distance <= 60 and not weak:
        verdict.achieved *= 0.6
        verdict.fix.append(f"the colour is {distance:.0f}° away from {p['color']}; push it "
                           "closer")
        verdict.retry["strength"] = _bounded("recolor", "strength", strength + 0.3)
    else:
        verdict.achieved *= 0.15
        verdict.fix.append(f"the target does not look {p['color']} "
                           f"({'too little colour' if weak else f'hue off by {distance:.0f}°'})")
        verdict.retry["strength"] = 1.0
    return verdict


_METHODS = ("auto", "patch", "telea", "ns")
#: a recolour hits its colour within this CIEDE2000 (at equal lightness)
RECOLOR_DE = 10.0


def _ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> float:
    """CIEDE2000 colour difference of two Lab colours."""
    from skimage.color import deltaE_ciede2000  # noqa: PLC0415 — scikit-image is slow to import

    return float(deltaE_ciede2000(np.asarray(lab1, np.float64), np.asarray(lab2, np.float64)))
_ACHROMATIC = {"white", "black", "gray", "grey", "silver", "#ffffff", "#000000", "#fff", "#000"}


#: a removal leaves a rim when more than this share of the ring ±RIM_PX around the old
#: edge still has the object's colour
RIM_PX = 8
RIM_SHARE = 0.005


def _check_inpaint(p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
                   inside: np.ndarray) -> _Verdict:
    """The fill matches a ring around it (colour, lightness spread, fine-detail energy) and
    no pixel of the object's colour is left within ``RIM_PX`` of the old edge."""
    area = int(inside.sum())
    reach = int(max(6, min(40, 0.3 * math.sqrt(area))))
    ring = _dilate(inside, reach + RIM_PX) & ~_dilate(inside, RIM_PX)
    if ring.sum() < 10:
        return _Verdict(0.5, fix=["the target fills the whole patch; nothing to match it to"])
    ring_lab, in_lab = la[ring], la[inside]
    core = _erode(inside, RIM_PX)
    obj_mean = (lb[core] if core.any() else lb[inside]).mean(axis=0)
    ring_mean, in_mean = ring_lab.mean(axis=0), in_lab.mean(axis=0)
    ring_noise = float(np.percentile(np.linalg.norm(ring_lab - ring_mean, axis=1), 90))
    ring_std = float(ring_lab[:, 0].std()) + 2.0
    de_mean = float(np.linalg.norm(in_mean - ring_mean))
    texture = (float(in_lab[:, 0].std()) + 2.0) / ring_std
    gb = _grad(la[..., 0])
    detail = (float(gb[_erode(inside, 2)].mean()) + 0.3) / (float(gb[ring].mean()) + 0.3) \
        if _erode(inside, 2).any() else 1.0
    # the rim: pixels near the old edge (either side) that look like the object
    edge = _dilate(inside, RIM_PX) & ~_erode(inside, RIM_PX)
    obj_vs_ring = float(np.linalg.norm(obj_mean - ring_mean))
    rim = 0.0
    if obj_vs_ring > max(12.0, 2.0 * ring_noise):
        px = la[edge]
        d_obj = np.linalg.norm(px - obj_mean, axis=1)
        d_ring = np.linalg.norm(px - ring_mean, axis=1)
        rim = float(((d_obj < d_ring) & (d_ring > max(8.0, 1.5 * ring_noise))).mean())
    m = {"fill_vs_surround_dE": round(de_mean, 2), "texture_ratio": round(texture, 3),
         "detail_ratio": round(detail, 3), "rim_share": round(rim, 4)}
    retry = {"method": _METHODS[(_METHODS.index(p.get("method", "auto")) + 1) % 4],
             "radius": int(_bounded("inpaint", "radius", p.get("radius", 5) * 2))}
    verdict = _Verdict(1.0, measures=m)
    verdict.checks["no_rim"] = rim <= RIM_SHARE
    if not verdict.checks["no_rim"]:
        verdict.achieved *= 0.3
        verdict.fix.append(f"traces of the removed object's colour remain near its old edge "
                           f"({rim:.1%} of the pixels within {RIM_PX} px, a rim); grow the "
                           "area")
        verdict.grow = RIM_PX
    verdict.checks["fill_matches_colour"] = de_mean <= max(10.0, 1.5 * ring_std)
    if not verdict.checks["fill_matches_colour"]:
        verdict.achieved *= 0.5
        verdict.fix.append("the filled area does not match its surroundings in colour")
        verdict.retry = retry
    verdict.checks["fill_matches_texture"] = 0.35 <= texture <= 3.0 and 0.3 <= detail <= 3.0
    if not verdict.checks["fill_matches_texture"]:
        verdict.achieved *= 0.6
        verdict.fix.append("the filled area looks " + ("smeared" if min(texture, detail) < 0.35
                                                       else "busier than its surroundings"))
        verdict.retry = verdict.retry or retry
    if not verdict.fix:
        verdict.keep.append("the removed area blends with its surroundings, no rim is left")
    return verdict


def _check_transform(p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
                     inside: np.ndarray) -> _Verdict:
    """The object's colour covers about ``scale²`` of its old area after the move."""
    ring = _dilate(inside, 12) & ~_dilate(inside, 4)
    if ring.sum() < 10:
        return _Verdict(0.6, keep=["the object moved"])
    bg = la[ring].mean(axis=0)
    far = np.linalg.norm(lb - bg, axis=2) > 20
    obj = inside & far
    if obj.sum() < 20:
        return _Verdict(0.3, fix=["no object stands out of the background to move"])
    colour = lb[obj].mean(axis=0)
    before = float((np.linalg.norm(lb - colour, axis=2)[inside] < 15).sum())
    after = float((np.linalg.norm(la - colour, axis=2)[inside] < 15).sum())
    ratio = after / max(before, 1.0) / max(p.get("scale", 1.0) ** 2, 1e-3)
    verdict = _Verdict(1.0, measures={"area_vs_expected": round(ratio, 3)})
    verdict.checks["size_as_asked"] = 0.6 <= ratio <= 1.6
    if verdict.checks["size_as_asked"]:
        verdict.keep.append("the object has the size and place asked for")
    else:
        verdict.achieved *= 0.4
        verdict.fix.append(f"the object covers {ratio:.0%} of the area asked for")
    return verdict


def _check_text(p: dict[str, Any], lb: np.ndarray, la: np.ndarray, inside: np.ndarray,
                after: np.ndarray, before: np.ndarray) -> _Verdict:
    def edges(img: np.ndarray) -> float:
        grey = cv2.cvtColor(np.ascontiguousarray(img[..., :3]), cv2.COLOR_RGB2GRAY)
        return float((cv2.Canny(grey, 60, 160) > 0)[inside].mean())

    gain = edges(after) - edges(before)
    colour = _lab(np.array([[parse_color(p.get("color") or "white")]], dtype=np.uint8))[0, 0]
    near = float((np.linalg.norm(la[inside] - colour, axis=1) < 25).mean())
    bg_light = float(lb[..., 0][inside].mean())
    m = {"edge_gain": round(gain, 4), "text_colour_fraction": round(near, 4)}
    if gain > 0.01 and 0.005 < near < 0.7:
        return _Verdict(1.0, keep=["text is visible in the region"], measures=m)
    retry: dict[str, Any] = {"scale": _bounded("text", "scale", p.get("scale", 1.0) * 1.2)}
    if abs(float(colour[0]) - bg_light) < 30:
        retry["color"] = "black" if bg_light > 50 else "white"
    return _Verdict(0.2, fix=["no legible text appeared in the region"], retry=retry,
                    measures=m)


def _check_detail(op: str, p: dict[str, Any], before: np.ndarray, after: np.ndarray,
                  inside: np.ndarray) -> _Verdict:
    gb = cv2.cvtColor(np.ascontiguousarray(before[..., :3]), cv2.COLOR_RGB2GRAY)
    ga = cv2.cvtColor(np.ascontiguousarray(after[..., :3]), cv2.COLOR_RGB2GRAY)
    if op == "denoise":
        nb, na = _noise_sigma(gb, inside), _noise_sigma(ga, inside)
        m = {"noise_before": round(nb, 3), "noise_after": round(na, 3)}
        if nb < 1.5:
            return _Verdict(0.9, keep=["there was little noise to remove"], measures=m)
        if na < 0.85 * nb:
            return _Verdict(1.0, keep=[f"noise reduced by {1 - na / nb:.0%}"], measures=m)
        return _Verdict(0.2, fix=["the noise is not visibly reduced"],
                        retry={"strength": _bounded(op, "strength", p["strength"] + 0.3)},
                        measures=m)
    db, da = _detail(gb.astype(np.float32), inside), _detail(ga.astype(np.float32), inside)
    if db < 0.5:
        return _Verdict(0.8, keep=["the target has almost no detail to change"])
    ratio = da / db
    m = {"detail_ratio": round(ratio, 3)}
    if op == "sharpen":
        ok, name, more = ratio > 1.05, "amount", p["amount"] * 1.8
        words = ("the target is crisper", "the target is not visibly sharper")
    else:
        ok, name, more = ratio < 0.8, "radius", p["radius"] * 2
        words = ("the target is softer", "the target is not visibly blurred")
    if ok:
        return _Verdict(1.0, keep=[words[0]], measures=m)
    return _Verdict(0.2, fix=[words[1]], retry={name: _bounded(op, name, more)}, measures=m)


def _check_global(op: str, p: dict[str, Any], lb: np.ndarray, la: np.ndarray,
                  inside: np.ndarray) -> _Verdict:
    if op == "grayscale":
        cb, ca = float(_chroma(lb)[inside].mean()), float(_chroma(la)[inside].mean())
        ok = ca <= (1 - 0.8 * p["amount"]) * cb + 1.5
        return _Verdict(1.0 if ok else 0.2, keep=["colour removed"] if ok else [],
                        fix=[] if ok else ["colour is still visible"],
                        retry={} if ok else {"amount": 1.0},
                        measures={"chroma_before": cb, "chroma_after": ca})
    if op == "sepia":
        a_m, b_m = float(la[..., 1][inside].mean()), float(la[..., 2][inside].mean())
        hue = _hue_deg(a_m, b_m)
        ok = math.hypot(a_m, b_m) > 3 and 30 <= hue <= 110
        return _Verdict(1.0 if ok else 0.3, keep=["warm brown tone"] if ok else [],
                        fix=[] if ok else ["the sepia tone is not visible"],
                        retry={} if ok else {"amount": 1.0}, measures={"hue": hue})
    if op == "auto_white_balance":
        cast_b = math.hypot(float(lb[..., 1][inside].mean()), float(lb[..., 2][inside].mean()))
        cast_a = math.hypot(float(la[..., 1][inside].mean()), float(la[..., 2][inside].mean()))
        ok = cast_a <= cast_b + 0.5 or cast_a < 3
        return _Verdict(1.0 if ok else 0.3, keep=["colour cast reduced"] if ok else [],
                        fix=[] if ok else ["the colour cast got stronger"],
                        measures={"cast_before": cast_b, "cast_after": cast_a})
    if op == "auto_levels":
        rb = np.percentile(lb[..., 0][inside], [1, 99])
        ra = np.percentile(la[..., 0][inside], [1, 99])
        ok = (ra[1] - ra[0]) >= (rb[1] - rb[0]) - 0.5
        return _Verdict(1.0 if ok else 0.3, keep=["tonal range stretched"] if ok else [],
                        fix=[] if ok else ["the tonal range shrank"],
                        measures={"range_before": float(rb[1] - rb[0]),
                                  "range_after": float(ra[1] - ra[0])})
    if op == "clahe":
        def local(light: np.ndarray) -> float:
            mean = cv2.blur(light, (15, 15))
            sq = cv2.blur(light * light, (15, 15))
            return float(np.sqrt(np.maximum(sq - mean * mean, 0))[inside].mean())
        sb, sa = local(lb[..., 0]), local(la[..., 0])
        ok = sa > sb * 1.02
        return _Verdict(1.0 if ok else 0.3, keep=["local contrast increased"] if ok else [],
                        fix=[] if ok else ["local contrast did not increase"],
                        retry={} if ok else {"clip_limit": _bounded("clahe", "clip_limit",
                                                                    p["clip_limit"] * 2)},
                        measures={"local_std_before": sb, "local_std_after": sa})
    if op == "vignette":
        h, w = inside.shape
        yy, xx = np.mgrid[0:h, 0:w]
        r = np.hypot((xx + 0.5) / w - 0.5, (yy + 0.5) / h - 0.5)[inside]
        delta = (la[..., 0] - lb[..., 0])[inside]
        lo, hi = np.quantile(r, [0.25, 0.75])
        if hi - lo < 1e-3:
            return _Verdict(0.8, keep=["the target is too small to show a vignette"])
        measured = float(delta[r <= lo].mean() - delta[r >= hi].mean())
        return _ratio_verdict("vignette", "amount", p["amount"], measured,
                              p["amount"] * 8.0, "corner darkening", " L")
    # straighten and anything else: it must have changed (checked by the caller)
    return _Verdict(0.9, keep=[f"{op} applied"])


# --- the measured critic ----------------------------------------------------------------

#: Pixels the statistics are computed on; larger patches are reduced (INTER_AREA) first.
WORK_PIXELS = 600_000


@dataclass
class _WorkCopy:
    before: np.ndarray
    after: np.ndarray
    inside: np.ndarray
    changed: np.ndarray  # True where any full-resolution pixel of the cell changed
    scale: float

    @classmethod
    def make(cls, before: np.ndarray, after: np.ndarray, inside: np.ndarray,
             changed: np.ndarray, whole: bool) -> _WorkCopy:
        h, w = inside.shape
        if h * w <= WORK_PIXELS:
            return cls(before, after, inside, changed, 1.0)
        scale = math.sqrt(WORK_PIXELS / (h * w))
        size = (max(1, round(w * scale)), max(1, round(h * scale)))

        def shrink(img: np.ndarray) -> np.ndarray:
            return cv2.resize(np.ascontiguousarray(img[..., :3]), size,
                              interpolation=cv2.INTER_AREA)

        def share(m: np.ndarray) -> np.ndarray:
            return cv2.resize(m.astype(np.float32), size, interpolation=cv2.INTER_AREA)

        if whole:  # nothing outside: no need to shrink the masks
            ones = np.ones((size[1], size[0]), bool)
            return cls(shrink(before), shrink(after), ones, ones, scale)
        shared = share(inside)
        small_inside = shared >= 0.5 if (shared >= 0.5).any() else shared > 0
        return cls(shrink(before), shrink(after), small_inside, share(changed) > 0, scale)


def _detail_crop(before: np.ndarray, after: np.ndarray, inside: np.ndarray,
                 side: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A full-resolution window (≤ side×side) centred on the target, for detail checks."""
    h, w = inside.shape
    if h <= side and w <= side:
        return before, after, inside
    ys, xs = np.nonzero(inside[::8, ::8])
    cy, cx = (int(np.median(ys)) * 8, int(np.median(xs)) * 8) if ys.size else (h // 2, w // 2)
    y0 = min(max(0, cy - side // 2), max(0, h - side))
    x0 = min(max(0, cx - side // 2), max(0, w - side))
    window = (slice(y0, y0 + side), slice(x0, x0 + side))
    return before[window], after[window], inside[window]


#: frame operations (#18) change the frame size: not judged pixel by pixel
FRAME_OPS = frozenset({"crop", "rotate", "flip", "straighten"})
#: share of pixels outside the target that may change (rounding of a feather) before
#: "outside unchanged" fails
SPILL_SHARE = 0.002


class MeasuredCritic:
    """The embedded critic: measurements only, no model (see the module doc).

    Args:
        localizer: re-run after a removal to check the target is gone (default: the
            configured localiser, loaded on first use; ``False`` turns the check off).
    """

    name = "measured"

    def __init__(self, localizer: Any = None) -> None:
        self._localizer = localizer

    @property
    def localizer(self) -> Any:
        """The localiser of the "target gone" check (None when off or unavailable)."""
        if self._localizer is None:
            try:
                self._localizer = get_localizer()
            except Exception as err:  # noqa: BLE001 — the check is skipped, not the critique
                log.warning("no localiser for the critic: %s", err)
                self._localizer = False
        return self._localizer or None

    def critique(self, before: np.ndarray, after: np.ndarray, action: Any,
                 mask: np.ndarray | None = None, *, feather: int | None = None,
                 params: dict[str, Any] | None = None) -> Critique:
        """Score one attempt.

        Args:
            before: the patch before the edit (uint8 HxWx3/4).
            after: the composed patch after the edit, same size.
            action: the ``agent.actions.Action`` that was attempted.
            mask: the target mask (bool HxW); None means the whole patch.
            feather: the feather width used to compose; None allows the widest the
                session uses (24 px), so a retry with a wider feather is not penalised.
            params: the parameters this attempt actually used, when a retry changed them;
                the result is still judged against the action's (the user's) values, but
                suggested values scale from these, so a second shortfall pushes further.

        Returns:
            A ``Critique`` with score 0–10, keep/fix lists and retry parameters.
        """
        op = getattr(action, "operation", "") or ""
        if op in FRAME_OPS and getattr(before, "shape", None) != getattr(after, "shape", 0):
            return Critique(8.0, keep=[f"{op} changed the frame as asked (a new frame is not "
                                       "compared pixel by pixel)"])
        problem = _check_inputs(before, after, mask)
        if problem:
            return Critique(0.0, fix=[problem], checks={"valid_input": False})
        full_inside = np.ones(before.shape[:2], bool) if mask is None else mask.astype(bool)
        if not full_inside.any():
            return Critique(0.0, fix=["the target mask is empty; locate the target again"])
        tried = dict(params or {})
        params = dict(getattr(action, "params", {}) or {})
        # 0. statistics on at most WORK_PIXELS; what changed is found at full resolution
        whole = bool(full_inside.all())
        changed_full = np.ones(1, bool) if whole else _changed(before, after)
        work = _WorkCopy.make(before, after, full_inside, changed_full, whole)
        lb, la, inside = _lab(work.before), _lab(work.after), work.inside
        diff = np.abs(work.after[..., :3].astype(np.int16) - work.before[..., :3])
        changed_inside = float(diff[inside].mean())
        measures: dict[str, float] = {"mean_change_inside": round(changed_inside, 3)}
        keep: list[str] = []
        fix: list[str] = []
        retry: dict[str, Any] = {}
        checks: dict[str, bool] = {}
        # 1. the target changed as asked
        checks["changed"] = not (changed_inside < 0.3 and (whole or
                                                           not changed_full[full_inside].any()))
        if not checks["changed"]:
            verdict = _Verdict(0.0, fix=["nothing visibly changed in the target"],
                               retry=_stronger(op, params))
        elif op in ("sharpen", "denoise", "blur"):  # fine detail: a full-resolution crop
            verdict = _check_detail(op, params, *_detail_crop(before, after, full_inside))
        else:
            verdict = _check_operation(op, params, work.before, work.after, lb, la, inside)
        score = 10.0 * verdict.achieved
        checks.update(verdict.checks)
        if op == "inpaint" and checks["changed"]:
            checks["target_gone"] = self._gone(before, after, full_inside, action, fix)
            if not checks["target_gone"]:
                score *= 0.4
        keep += verdict.keep
        fix += verdict.fix
        retry.update(verdict.retry)
        measures.update({k: round(float(v), 4) for k, v in verdict.measures.items()})
        # 2. the outside is untouched
        if not whole:
            reach = (MAX_FEATHER if feather is None else int(feather)) + 2
            band = _dilate(inside, int(math.ceil(reach * work.scale)) + (work.scale < 1))
            outside = ~band
            if outside.any():
                moved = float(work.changed[outside].mean())
                measures["outside_changed_fraction"] = round(moved, 5)
                checks["outside_unchanged"] = moved <= SPILL_SHARE
                if moved > 0:
                    score -= min(6.0, 2.0 + 40.0 * moved)
                    fix.append(f"{moved:.1%} of the pixels outside the target changed; keep "
                               "the rest of the image untouched")
                else:
                    keep.append("everything outside the target is untouched")
            band_for_seams = band
        else:
            band_for_seams = inside
        before, after = work.before, work.after
        band = band_for_seams
        # 3. seams along the feather band, 4. new clipping
        score -= self._seams(lb, la, inside, band, measures, keep, fix)
        score -= self._clipping(before, after, inside, op, params, measures, fix, retry)
        score = float(min(10.0, max(0.0, score)))
        if op in ("generate", "paste"):
            keep.append("the content itself was not judged (no vision model configured)")
            score = min(score, 7.0)
        if not all(checks.values()):
            score = min(score, FAILED_CHECK_CAP)
        return Critique(round(score, 2), _unique(keep), _unique(fix),
                        _valid_retry(op, _from_tried(retry, params, tried)), measures,
                        checks, verdict.grow)

    def _gone(self, before: np.ndarray, after: np.ndarray, inside: np.ndarray, action: Any,
              fix: list[str]) -> bool:
        """Re-run the localiser: a removed target found again where it was has not gone."""
        phrase = str(getattr(action, "target", "") or "").strip()
        localizer = self.localizer
        if not phrase or localizer is None:
            return True
        try:
            was = localizer.locate(before, phrase)
            now = localizer.locate(after, phrase)
        except Exception as err:  # noqa: BLE001 — a failing localiser is no verdict
            log.warning("re-localising %r failed: %s", phrase, err)
            return True
        if was.status == "unresolved" or not was.masks:
            return True   # the localiser cannot see it at all: no evidence either way
        near = _dilate(inside, 4)
        for found in now.masks:
            m = np.asarray(found.mask, bool)
            if m.shape == inside.shape and m.any() and (m & near).sum() >= 0.3 * m.sum() \
                    and (m & inside).sum() >= 0.1 * inside.sum():
                fix.append(f"the localiser still finds '{phrase}' where it was removed")
                return False
        return True

    @staticmethod
    def _seams(lb: np.ndarray, la: np.ndarray, inside: np.ndarray, band: np.ndarray,
               measures: dict[str, float], keep: list[str], fix: list[str]) -> float:
        """A seam is a new lightness step along the mask edge: the gradient there grows by
        much more than the image's own gradient level (a feathered edge spreads it out)."""
        if inside.all():
            return 0.0
        width = feather_for(inside)
        band = _dilate(inside, width + 2)
        edge = band & ~_erode(inside, width + 1)
        if edge.sum() < 10:
            return 0.0
        gb, ga = _grad(lb[..., 0]), _grad(la[..., 0])
        jump = float(np.percentile((ga - gb)[edge], 95))
        own = float(np.median(gb[band]))
        rim = inside & ~_erode(inside, feather_for(inside) + 2)
        step = float(np.abs(la[..., 0] - lb[..., 0])[rim].mean()) if rim.any() else 0.0
        measures["edge_gradient_jump_p95"] = round(jump, 3)
        measures["own_gradient_median"] = round(own, 3)
        measures["edge_step"] = round(step, 3)
        # a hard edge turns a lightness step s into a gradient of about s/2; a feather of
        # f pixels into s/f: only steep, large jumps above the image's own texture count
        if jump > max(4.0, 2.0 * own) and jump > 0.3 * step:
            fix.append("a visible seam runs along the edge of the edited area; feather "
                       "the edge more")
            return 2.0
        keep.append("no seam along the edge of the edited area")
        return 0.0

    @staticmethod
    def _clipping(before: np.ndarray, after: np.ndarray, inside: np.ndarray, op: str,
                  params: dict[str, Any], measures: dict[str, float], fix: list[str],
                  retry: dict[str, Any]) -> float:
        if op == "recolor" and str(params.get("color", "")).lower() in _ACHROMATIC:
            return 0.0  # white or black is what was asked for
        # blown to white / crushed to black (a saturated pure colour is not clipping)
        n = max(1, int(inside.sum()))
        high = float(((_cmin(after) >= 254) & inside).sum() -
                     ((_cmin(before) >= 254) & inside).sum()) / n
        low = float(((_cmax(after) <= 1) & inside).sum() -
                    ((_cmax(before) <= 1) & inside).sum()) / n
        measures["new_clipped_highlights"] = round(high, 4)
        measures["new_clipped_shadows"] = round(low, 4)
        penalty = 0.0
        if high > 0.02 or low > 0.02:
            where = "highlights" if high >= low else "shadows"
            fix.append(f"{max(high, low):.0%} of the target's {where} are newly clipped")
            penalty = min(3.0, 30.0 * max(high, low))
            softer = _softer(op, params)
            for k, v in softer.items():
                retry.setdefault(k, v)
        return penalty


def _check_inputs(before: Any, after: Any, mask: Any) -> str:
    for name, img in (("before", before), ("after", after)):
        if not isinstance(img, np.ndarray) or img.dtype != np.uint8 or img.ndim != 3 or \
                img.shape[2] not in (3, 4):
            return f"the {name} patch is not an RGB/RGBA uint8 image"
    if before.shape[:2] != after.shape[:2]:
        return (f"the edit changed the patch size ({before.shape[1]}x{before.shape[0]} → "
                f"{after.shape[1]}x{after.shape[0]})")
    if mask is not None and (not isinstance(mask, np.ndarray) or mask.shape != before.shape[:2]):
        return "the target mask does not match the patch size"
    return ""


def _check_operation(op: str, params: dict[str, Any], before: np.ndarray, after: np.ndarray,
                     lb: np.ndarray, la: np.ndarray, inside: np.ndarray) -> _Verdict:
    if op in ("brightness", "exposure", "gamma", "shadows", "highlights"):
        return _check_tone(op, params, lb, la, inside)
    if op in ("contrast", "saturation", "vibrance"):
        return _check_spread(op, params, lb, la, inside)
    if op in ("temperature", "tint"):
        return _check_cast(op, params, lb, la, inside)
    if op == "hue":
        return _check_hue(params, lb, la, inside)
    if op == "recolor":
        return _check_recolor(params, lb, la, inside)
    if op == "inpaint":
        return _check_inpaint(params, lb, la, inside)
    if op == "transform":
        return _check_transform(params, lb, la, inside)
    if op == "text":
        return _check_text(params, lb, la, inside, after, before)
    if op in ("sharpen", "denoise", "blur"):
        return _check_detail(op, params, before, after, inside)
    if op in ("generate", "paste"):
        return _Verdict(0.9, keep=["the target changed"])
    return _check_global(op, params, lb, la, inside)


def _stronger(op: str, params: dict[str, Any]) -> dict[str, Any]:
    """Parameters that push an operation harder (for 'nothing changed')."""
    if op not in OPERATIONS:
        return {}
    out: dict[str, Any] = {}
    for spec in get_operation(op).params:
        value = params.get(spec.name)
        if spec.type == "float" and isinstance(value, (int, float)) and spec.name != "gamma":
            out[spec.name] = _bounded(op, spec.name, value * 2 if value else 0.3)
    if op == "recolor":
        out = {"strength": 1.0}
    if op == "inpaint":
        out = {"method": "patch"}
    return out


def _softer(op: str, params: dict[str, Any]) -> dict[str, Any]:
    """Parameters that pull an operation back (for clipping)."""
    for name in ("amount", "stops"):
        value = params.get(name)
        if isinstance(value, (int, float)) and value:
            return {name: _bounded(op, name, value * 0.6)}
    return {}


def _from_tried(retry: dict[str, Any], asked: dict[str, Any], tried: dict[str, Any]
                ) -> dict[str, Any]:
    """Rescale numeric suggestions made relative to the asked values onto the tried ones."""
    out = dict(retry)
    for k, v in retry.items():
        a, t = asked.get(k), tried.get(k)
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (v, a, t)) \
                and a and t and (a > 0) == (t > 0):
            out[k] = t * (v / a)
    return out


def _valid_retry(op: str, retry: dict[str, Any]) -> dict[str, Any]:
    """Only parameters the operation takes, inside their bounds."""
    if op not in OPERATIONS or not retry:
        return {}
    spec = get_operation(op)
    clean = {}
    for k, v in retry.items():
        p = next((s for s in spec.params if s.name == k and s.type != "image"), None)
        if p is None:
            continue
        if p.type in ("float", "int") and isinstance(v, (int, float)) and \
                not isinstance(v, bool) and p.minimum is not None and p.maximum is not None:
            v = round(min(p.maximum, max(p.minimum, float(v))), 3)
        try:
            clean[k] = p.check(v, op)
        except OperationError:
            continue
    return clean


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


# --- the VLM panel ----------------------------------------------------------------------

def _mask_image(mask: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    m = np.ones(shape[:2], bool) if mask is None else mask.astype(bool)
    return np.repeat((m.astype(np.uint8) * 255)[..., None], 3, axis=-1)


class PanelCritic:
    """Several VLM critics with different focus plus an aggregator (see the module doc).

    Args:
        llm: an ``pipelines.llm`` backend that can see images.
        focuses: which reviewers to ask (keys of ``agent.brain.prompts.CRITIC_FOCUS``).
        fallback: the measured critic, used as evidence and when the model fails.
    """

    @property
    def name(self) -> str:
        """'panel: <backend and model>' for the status line."""
        return f"panel: {describe(self.llm)}"

    def __init__(self, llm: Any, *, focuses: tuple[str, ...] = ("instruction", "preservation",
                                                               "artefacts"),
                 fallback: MeasuredCritic | None = None) -> None:
        self.llm, self.focuses = llm, focuses
        self.fallback = fallback or MeasuredCritic()

    def critique(self, before: np.ndarray, after: np.ndarray, action: Any,
                 mask: np.ndarray | None = None, *, feather: int | None = None,
                 params: dict[str, Any] | None = None) -> Critique:
        """Ask each reviewer, then the aggregator; fall back to measurements on failure.

        Args:
            before: the patch before the edit.
            after: the composed patch after the edit.
            action: the attempted ``Action``.
            mask: the target mask (bool HxW).
            feather: passed to the measured critic (see ``MeasuredCritic.critique``).
            params: the parameters the attempt used (see ``MeasuredCritic.critique``).

        Returns:
            The aggregated ``Critique`` (its ``measures`` are the measured critic's).
        """
        measured = self.fallback.critique(before, after, action, mask, feather=feather,
                                          params=params)
        problem = _check_inputs(before, after, mask)
        if problem:
            return measured
        evidence = (f"\nMeasurements (from pixels): score {measured.score:.1f}/10; worked: "
                    f"{'; '.join(measured.keep) or '-'}; problems: "
                    f"{'; '.join(measured.fix) or '-'}")
        images = [before[..., :3], after[..., :3], _mask_image(mask, before.shape)]
        reviews: dict[str, dict[str, Any]] = {}
        for focus in self.focuses:
            try:
                reviews[focus] = self.llm.complete_json(
                    critic_system(focus), [{"role": "user", "content": critic_user(action)
                                            + evidence}], images, CRITIQUE_SCHEMA)
            except LLMError as err:  # an open circuit was reported once, when it opened
                (log.debug if err.quiet else log.warning)(
                    "critic %s failed: %s", focus, err)
        if not reviews:
            measured.fix.append("(the vision critics gave no valid answer; measured only)")
            return measured
        try:
            final = self.llm.complete_json(
                AGGREGATOR, [{"role": "user", "content": aggregator_user(action, reviews)
                              + evidence}], None, CRITIQUE_SCHEMA)
        except LLMError as err:
            (log.debug if err.quiet else log.warning)(
                "critic aggregator failed: %s", err)
            final = _mean_review(reviews)
        op = getattr(action, "operation", "") or ""
        retry = _valid_retry(op, dict(final.get("retry_params") or {})) or measured.retry_params
        score = combine_scores([float(r["score"]) for r in reviews.values()],
                               float(final["score"]), measured)
        fix = _unique([*measured.fix, *[str(f) for f in final.get("fix", [])]]) \
            if not all(measured.checks.values()) else _unique([str(f) for f in
                                                              final.get("fix", [])])
        return Critique(round(score, 2), _unique([str(k) for k in final.get("keep", [])]),
                        fix, retry, dict(measured.measures, panel_reviews=float(len(reviews))),
                        dict(measured.checks), measured.grow)


#: how far the aggregator may move the experts' mean
AGGREGATOR_REACH = 2.0


def combine_scores(experts: list[float], aggregated: float, measured: Critique) -> float:
    """The panel's final score: the experts' mean, moved by the aggregator by at most
    ``AGGREGATOR_REACH`` (it adjusts, it does not overwrite), averaged with the measured
    score; a failed measured check caps it at the measured score.

    Args:
        experts: each expert's 0–10 score.
        aggregated: the aggregator's 0–10 score.
        measured: the measured critique of the same attempt.

    Returns:
        The final 0–10 score.
    """
    mean = sum(experts) / len(experts) if experts else aggregated
    adjusted = mean + max(-AGGREGATOR_REACH, min(AGGREGATOR_REACH, aggregated - mean))
    score = 0.5 * (adjusted + measured.score)
    if not all(measured.checks.values()):
        score = min(score, measured.score)
    return float(min(10.0, max(0.0, score)))


def _mean_review(reviews: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A plain merge when the aggregator fails: the lowest score, all keep/fix lines."""
    return {"score": min(float(r["score"]) for r in reviews.values()),
            "keep": [k for r in reviews.values() for k in r.get("keep", [])],
            "fix": [f for r in reviews.values() for f in r.get("fix", [])],
            "retry_params": next((r["retry_params"] for r in reviews.values()
                                  if r.get("retry_params")), {})}


#: name → a factory taking the settings.
CRITICS: dict[str, Callable[[Settings], Critic]] = {
    "measured": lambda settings: MeasuredCritic(),
    "panel": lambda settings: PanelCritic(get_llm(settings)),
}


def get_critic(settings: Settings | None = None, name: str | None = None) -> Critic:
    """The critic registered under ``name``; by default ``panel`` when a VLM or endpoint
    is configured, else ``measured``.

    Args:
        settings: defaults to ``get_settings()``.
        name: a key of ``CRITICS``.
    """
    settings = settings or get_settings()
    name = name or ("panel" if llm_configured(settings) else "measured")
    if name not in CRITICS:
        raise ValueError(f"unknown critic {name!r}; known: {', '.join(CRITICS)}")
    return CRITICS[name](settings)
