"""Reference family: match the look of a reference photo (issue 35).

``MatchReference`` fits, on small copies, the change that brings the target's look
(``pipelines.look``: lightness distribution, chroma, white point) to the reference's, and
applies it at native resolution as two cheap, exact steps:

1. a smooth, monotone tone curve (a 256-entry look-up table, the same for R, G and B):
   the lightness quantiles mapped onto the reference's, smoothed, slopes bounded
   (``MIN_SLOPE``…``MAX_SLOPE``: no banding, no flattened tones), highlights and shadows
   that were not clipped kept off the ends;
2. an affine colour transform (one 3×4 matrix through ``cv2.transform``) in an opponent
   space (BT.601 Y, Cb, Cr): lightness kept, chroma scaled to the reference's, the mean
   tint moved to the reference's, and the tint's drift from shadows to highlights
   matched (so the white point and a split tone follow).

``strength`` blends both steps with the identity ("halfway" = 0.5). The colour step is
pulled back when it would clip more than ``CLIP_SHARE`` of the pixels, or move a detected
face's skin hue out of ``SKIN_HUES``. The reference's pixels come in the ``image``
parameter (the session resolves the ``reference`` id to them; records keep only the id);
``ref_region="sky"`` fits on the reference's sky only (``find_sky``), and a reference
with no sky is an error, never a guess.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from pipelines.color import rgb_to_lab
from pipelines.look import (
    LookError,
    distance,
    gradient_correlation,
    hue_distance,
    hue_histogram,
    lab_pixels,
    look_of_lab,
    small_copy,
)
from pipelines.operations.base import Family, Operation, ParamSpec, asks
from pipelines.operations.errors import OperationError
from pipelines.operations.measures import Measured, Verdict

log = logging.getLogger(__name__)
family = Family("reference")

#: long side of the copies the fit is made on
FIT_SIDE = 384
#: bounds on the tone curve's slope (levels out per level in)
MIN_SLOPE, MAX_SLOPE = 0.2, 2.5
#: the colour step may clip at most this share of pixels more than the input had
CLIP_SHARE = 0.005
#: plausible skin hues (Lab hue angle, degrees): reds through yellows
SKIN_HUES = (15.0, 80.0)
#: the reference regions a match can be fitted on
REF_REGIONS = ("whole", "sky")
#: BT.601 RGB → (Y, Cb, Cr), on 8-bit values
_YCC = np.array([[0.299, 0.587, 0.114],
                 [-0.168736, -0.331264, 0.5],
                 [0.5, -0.418688, -0.081312]], np.float64)
_RGB = np.linalg.inv(_YCC)


class ReferenceError(OperationError):
    """The reference cannot be matched as asked (no such region in it, too small)."""


@dataclass(frozen=True)
class Match:
    """A fitted match at full strength, as look-up tables over 256 levels.

    In BT.601 (Y, Cb, Cr) of the 8-bit pixels: ``tone`` maps Y; ``src_tint``/``ref_tint``
    are the mean (Cb, Cr) by Y level of the source and (by the new Y) of the reference;
    ``gain`` scales the chroma about the source's tint, by chroma level. A pixel becomes
    ``Y' = tone(Y)``, ``C' = tint_ref(Y') + gain(|C − tint_src(Y)|)·(C − tint_src(Y))``.
    ``colour`` (0…1) is how much of the colour change the guards let through.
    """

    tone: np.ndarray          # (256,) float
    src_tint: np.ndarray      # (256, 2) float
    ref_tint: np.ndarray      # (256, 2) float
    gain: np.ndarray          # (256,) float
    colour: float = 1.0

    def tables(self, strength: float) -> dict[str, np.ndarray]:
        """The float32 look-up tables at ``strength`` (0 = identity)."""
        s = float(strength)
        c = s * self.colour
        ramp = np.arange(256, dtype=np.float64)
        return {"tone": (ramp + s * (self.tone - ramp)).astype(np.float32),
                "shift": (s * (self.tone - ramp)).astype(np.float32),
                "src": ((1.0 - c) * self.src_tint).astype(np.float32),
                "ref": (c * self.ref_tint).astype(np.float32),
                "gain": (1.0 + c * (self.gain - 1.0)).astype(np.float32)}

    def apply(self, rgb8: np.ndarray, strength: float) -> np.ndarray:
        """``rgb8`` (RGB or RGBA uint8) with the match at ``strength``; alpha kept.

        Runs in strips of about ``STRIP_PIXELS`` so the float work stays in cache."""
        if strength <= 0:
            return rgb8.copy()
        t = self.tables(strength)
        t["src_full"] = self.src_tint.astype(np.float32)
        out = np.empty(rgb8.shape[:2] + (3,), np.uint8)
        rows = max(1, STRIP_PIXELS // max(1, rgb8.shape[1]))
        for y0 in range(0, rgb8.shape[0], rows):
            strip = np.ascontiguousarray(rgb8[y0:y0 + rows, ..., :3])
            out[y0:y0 + rows] = _apply_tables(strip, t)
        if rgb8.ndim == 3 and rgb8.shape[2] == 4:
            out = np.dstack([out, rgb8[..., 3]])
        return out


#: pixels per strip of ``Match.apply``
STRIP_PIXELS = 1 << 18
_YCC32, _RGB32 = _YCC.astype(np.float32), _RGB.astype(np.float32)


def _apply_tables(rgb: np.ndarray, t: dict[str, np.ndarray]) -> np.ndarray:
    ycc = cv2.transform(rgb.astype(np.float32), _YCC32)
    y, cb, cr = cv2.split(ycc)
    yi = _u8(y)
    full = t["src_full"]
    cb0 = cb - cv2.LUT(yi, np.ascontiguousarray(full[:, 0]))
    cr0 = cr - cv2.LUT(yi, np.ascontiguousarray(full[:, 1]))
    g = cv2.LUT(cv2.convertScaleAbs(cv2.magnitude(cb0, cr0)), t["gain"])
    y2 = y + cv2.LUT(yi, t["shift"])   # the fraction of Y kept: 0 is the identity
    y2i = _u8(y2)
    planes = [y2]
    for k, chan in ((0, cb0), (1, cr0)):
        base = cv2.LUT(yi, np.ascontiguousarray(t["src"][:, k])) + \
            cv2.LUT(y2i, np.ascontiguousarray(t["ref"][:, k]))
        planes.append(cv2.multiply(chan, g) + base)
    back = cv2.transform(cv2.merge(planes), _RGB32)
    return _u8(back)


def _u8(x: np.ndarray) -> np.ndarray:
    """Float → uint8, rounded and saturated (negatives to 0, not their absolute value)."""
    return cv2.convertScaleAbs(cv2.max(x, 0.0))


# ------------------------------------------------------------------------- the fit


def _quantile_curve(src: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """A monotone curve (256 levels) taking ``src``'s level distribution onto ``ref``'s,
    smooth and with bounded slopes."""
    q = np.linspace(0.005, 0.995, 81)
    xs, ys = np.quantile(src, q), np.quantile(ref, q)
    xs, index = np.unique(np.round(xs, 3), return_index=True)
    ys = np.maximum.accumulate(ys[index])
    if xs[0] > 0:      # below the measured range: slope 1 towards black
        xs, ys = np.concatenate([[0.0], xs]), np.concatenate([[max(0.0, ys[0] - xs[0])], ys])
    if xs[-1] < 255:   # above it: slope 1 towards white
        xs = np.concatenate([xs, [255.0]])
        ys = np.concatenate([ys, [min(255.0, ys[-1] + 255.0 - xs[-2])]])
    if len(xs) < 2:
        return np.arange(256, dtype=np.float64)
    curve = np.interp(np.arange(256.0), xs, ys)
    curve = cv2.GaussianBlur(curve.reshape(1, -1), (0, 0), 6.0,
                             borderType=cv2.BORDER_REPLICATE).ravel().astype(np.float64)
    return _bounded(curve)


def _bounded(curve: np.ndarray) -> np.ndarray:
    """``curve`` with its slopes inside [MIN_SLOPE, MAX_SLOPE], re-anchored at its middle."""
    slopes = np.clip(np.diff(curve), MIN_SLOPE, MAX_SLOPE)
    out = np.concatenate([[0.0], np.cumsum(slopes)])
    out += curve[128] - out[128]
    return out   # not clipped here: a flat top would band; the end guards pull it in


def _guard_ends(curve: np.ndarray, src: np.ndarray, high: float = 250.0) -> np.ndarray:
    """Keep unclipped highlights (shadows) of the source off 255 (0): compress the curve
    above (below) the median so the source's 99.5 % (0.5 %) level lands at 250 (5)."""
    mid = float(np.median(src))
    m = int(round(mid))
    top, bottom = np.quantile(src, [0.995, 0.005])
    out = curve.copy()
    t = int(round(top))
    if out[t] > high and out[t] > out[m] and high > out[m]:
        k = (high - out[m]) / (out[t] - out[m])
        out[m:] = out[m] + (out[m:] - out[m]) * max(0.0, k)
    b = int(round(bottom))
    if bottom > 5 and out[b] < 5 and out[b] < out[m]:
        k = (out[m] - 5.0) / (out[m] - out[b])
        out[:m] = out[m] - (out[m] - out[:m]) * max(0.0, k)
    return np.maximum.accumulate(out)


def _ycc(rgb: np.ndarray) -> np.ndarray:
    return rgb.reshape(-1, 3).astype(np.float64) @ _YCC.T


def _tint(ycc: np.ndarray) -> np.ndarray:
    """The mean (Cb, Cr) by Y level (256, 2): means in 16 bins, smoothed, interpolated."""
    bins = np.clip((ycc[:, 0] / 16).astype(int), 0, 15)
    counts = np.bincount(bins, minlength=16)
    centres, means = [], []
    for b in np.nonzero(counts >= 8)[0]:
        centres.append(b * 16 + 8)
        means.append(ycc[bins == b, 1:].mean(axis=0))
    if not centres:
        return np.tile(ycc[:, 1:].mean(axis=0), (256, 1))
    means_arr = np.array(means)
    levels = np.arange(256.0)
    out = np.stack([np.interp(levels, centres, means_arr[:, k]) for k in (0, 1)], axis=1)
    return cv2.GaussianBlur(out.astype(np.float64), (1, 0), sigmaX=0, sigmaY=12,
                            borderType=cv2.BORDER_REPLICATE) if len(centres) > 1 else out


def _chroma_gain(src: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Gain by chroma level (256,) taking ``src``'s chroma distribution onto ``ref``'s."""
    q = np.linspace(0.02, 0.98, 49)
    xs, ys = np.quantile(src, q), np.quantile(ref, q)
    xs, index = np.unique(np.round(xs, 2), return_index=True)
    ys = np.maximum.accumulate(ys[index])
    levels = np.arange(256.0)
    if len(xs) < 2:
        return np.ones(256)
    mapped = np.interp(levels, xs, ys, right=np.nan)
    top = np.isnan(mapped)
    mapped[top] = ys[-1] + (levels[top] - xs[-1])   # beyond the measured: slope 1
    gain = mapped / np.maximum(levels, max(2.0, float(xs[0])))
    gain = cv2.GaussianBlur(gain.reshape(1, -1), (0, 0), 4.0,
                            borderType=cv2.BORDER_REPLICATE).ravel()
    return np.clip(gain, 0.0, 4.0)


def _fit_tables(src_px: np.ndarray, ref_px: np.ndarray) -> Match:
    s, r = _ycc(src_px), _ycc(ref_px)
    tone = _quantile_curve(s[:, 0], r[:, 0])
    src_tint, ref_tint = _tint(s), _tint(r)
    yi = np.clip(s[:, 0] + 0.5, 0, 255).astype(int)
    rfi = np.clip(r[:, 0] + 0.5, 0, 255).astype(int)
    cs = np.hypot(*(s[:, 1:] - src_tint[yi]).T)
    cr = np.hypot(*(r[:, 1:] - ref_tint[rfi]).T)
    return Match(tone, src_tint, ref_tint, _chroma_gain(cs, cr))


def _clipped(rgb: np.ndarray) -> float:
    """The share of pixels with a channel at 255 (clipped highlights)."""
    return float((rgb.reshape(-1, 3) >= 255).any(axis=1).mean())


def _skin_ok(rgb: np.ndarray, faces: list[tuple[int, int, int, int]]) -> bool:
    """Whether every face box's middle has a plausible skin hue (``SKIN_HUES``)."""
    for x0, y0, x1, y1 in faces:
        w, h = x1 - x0, y1 - y0
        core = rgb[y0 + h // 4: y1 - h // 4, x0 + w // 4: x1 - w // 4]
        if core.size == 0:
            continue
        lab = rgb_to_lab(core).reshape(-1, 3)
        hue = float(np.degrees(np.arctan2(lab[:, 2].mean(), lab[:, 1].mean())) % 360)
        if not SKIN_HUES[0] <= hue <= SKIN_HUES[1]:
            return False
    return True


def skin_hues(rgb: np.ndarray, faces: list[tuple[int, int, int, int]]) -> list[float]:
    """The mean Lab hue angle of each face box's middle (for reports and tests)."""
    out = []
    for x0, y0, x1, y1 in faces:
        w, h = x1 - x0, y1 - y0
        lab = rgb_to_lab(rgb[y0 + h // 4: y1 - h // 4, x0 + w // 4: x1 - w // 4]).reshape(-1, 3)
        out.append(float(np.degrees(np.arctan2(lab[:, 2].mean(), lab[:, 1].mean())) % 360))
    return out


def find_faces(rgb: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Face boxes in ``rgb`` by the embedded face detector ([] when its weights are
    missing: the skin guard then has nothing to protect)."""
    try:
        from pipelines.perception.detectors import FaceDetector  # loads weights: on use
        detector = _DETECTOR.setdefault("face", FaceDetector())
        found = detector.detect(rgb, 0.6)
    except Exception as err:  # noqa: BLE001 — weights absent: no faces to protect
        log.debug("no face detector for the skin guard: %s", err)
        return []
    return [tuple(int(round(v)) for v in d.box) for d in found]   # type: ignore[misc]


_DETECTOR: dict[str, Any] = {}


def reference_region(reference: np.ndarray, region: str) -> np.ndarray | None:
    """The mask of ``region`` in ``reference`` (None for the whole photo).

    Raises:
        ReferenceError: the reference has no such region (say so; never guess).
    """
    if region in ("whole", "", None):
        return None
    if region != "sky":
        raise ReferenceError(f"unknown reference region {region!r}; use "
                             f"{' or '.join(REF_REGIONS)}")
    from pipelines.localizers.sky import find_sky  # the sky localiser: only for a sky match
    found = find_sky(np.ascontiguousarray(reference[..., :3]))
    if found.status != "resolved" or not found.candidates:
        raise ReferenceError("the reference photo has no sky I can find. Should I match "
                             "the sky to the whole reference instead? Nothing was changed.")
    return found.candidates[0].mask


def fit_match(rgb8: np.ndarray, mask: np.ndarray | None, reference: np.ndarray,
              reference_mask: np.ndarray | None = None, *, guard_faces: bool = True) -> Match:
    """Fit the match of ``rgb8`` (inside ``mask``) to ``reference`` (inside
    ``reference_mask``) on small copies (see the module doc).

    Raises:
        ReferenceError: too few pixels in the target or the reference region.
    """
    src, src_mask = small_copy(rgb8, mask, FIT_SIDE)
    ref, ref_mask = small_copy(reference, reference_mask, FIT_SIDE)
    src_px = src.reshape(-1, 3) if src_mask is None else src[src_mask]
    ref_px = ref.reshape(-1, 3) if ref_mask is None else ref[ref_mask]
    if len(src_px) < 64 or len(ref_px) < 64:
        raise ReferenceError("the area to match (or the reference's) is too small to "
                             "measure its look")
    match = _fit_tables(src_px, ref_px)
    src_row = src_px.reshape(-1, 1, 3)
    before_clip = _clipped(src_row)
    src_y = _ycc(src_px)[:, 0]
    for high in (250.0, 240.0, 228.0, 215.0):   # tone first: unclipped highlights stay so
        tone = _guard_ends(match.tone, src_y, high)
        trial = Match(tone, match.src_tint, match.ref_tint, match.gain, 0.0)
        if _clipped(trial.apply(src_row, 1.0)) <= before_clip + CLIP_SHARE:
            break
    toned_clip = _clipped(trial.apply(src_row, 1.0))
    faces = find_faces(src) if guard_faces else []
    skin_before = bool(faces) and _skin_ok(src, faces)
    for pull in (1.0, 0.75, 0.5, 0.3, 0.15, 0.0):
        trial = Match(tone, match.src_tint, match.ref_tint, match.gain, pull)
        if pull and _clipped(trial.apply(src_row, 1.0)) > toned_clip + CLIP_SHARE:
            continue
        if pull and skin_before and not _skin_ok(trial.apply(src, 1.0), faces):
            continue
        return trial
    return trial


# --------------------------------------------------------------------- the operation


def _reference_pixels(params: dict[str, Any]) -> np.ndarray:
    image = params.get("image")
    if image is None or not hasattr(image, "shape"):
        raise ReferenceError("there is no reference photo to match: add one (the "
                             "Reference photo box, --reference) and ask again")
    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in (3, 4):
        raise ReferenceError("the reference must be an RGB image")
    return image


@family
class MatchReference(Operation):
    name = "match_reference"
    description = ("Match the look (tone curve, chroma, white point) of a reference photo "
                   "the user added; strength 0.5 goes halfway.")
    params = (ParamSpec("strength", "float", 1.0, "0 none … 1 the reference's look", 0.0, 1.0),
              ParamSpec("reference", "str", "", "the reference's id in the session "
                        "(\"\" = the latest one added)"),
              ParamSpec("ref_region", "choice", "whole", "the part of the reference to "
                        "match: the whole photo or its sky", choices=REF_REGIONS),
              ParamSpec("image", "image", None, "the reference's pixels (the session "
                        "supplies them from its id)", required=True))
    main = "strength"
    flags = frozenset({"pointwise", "frame_filter", "tonal", "colour_balance"})
    words = ("reference", "reference photo", "like the reference", "photo i added",
             "like this one", "match the look", "match the colours")
    grammar = "filter"
    reading_order = 0.5
    base = 1.0
    capped = True
    role = "reference"
    pattern = (r"\b(?:the |my |this |that )?(?:(?:first|second|third|last) )?reference"
               r"(?:'s|s'|s)?(?: (?:photo|image|picture|shot|pic))?(?:'s)?"
               r"(?: (?:number |no\.? ?|#)?\d+)?(?:'s)?(?: sky)?\b|"
               r"\b(?:the )?(?:photo|picture|image|one) i (?:added|uploaded|attached|gave you)"
               r"(?:'s sky)?\b|\blike (?:this|that) one\b|\bmatch(?:ing)? the (?:look|colou?rs)\b")
    filler = (r"\b(?:make|makes|look|looks|like|match|matching|the same|same|as|of|to|with|"
              r"colou?rs?|tones?|grade|grading|style|feel|more|closer|halfway|half way|"
              r"please|it|use|copy|transfer|apply)\b")
    wording = "match {where} to the reference photo"
    asks = (asks("match_reference", {"strength": 1.0}, "Match the reference",
                 "make it look like the reference|match the look of the reference|"
                 "give it the reference's colours|make it look like the photo i added|"
                 "match the colours of the reference photo|copy the reference's look",
                 "looks", "make it look like the reference"),)

    def explicit_value(self, clause: str) -> float | None:
        if re.search(r"\bhalf ?way\b|\bhalf as much\b|\bby half\b", clause):
            return 0.5
        return super().explicit_value(clause)

    def clause_params(self, clause: str) -> dict[str, Any]:
        """Which reference ("reference 2", "the second reference") and which part of it
        ("the reference's sky") the clause names."""
        out: dict[str, Any] = {}
        number = re.search(r"\breference(?: (?:photo|image|picture))? (?:number |no\.? ?|#)?"
                           r"(\d+)\b", clause)
        ordinal = re.search(r"\b(first|second|third)\s+reference\b", clause)
        if number:
            out["reference"] = f"ref{int(number.group(1))}"
        elif ordinal:
            out["reference"] = f"ref{('first', 'second', 'third').index(ordinal.group(1)) + 1}"
        if re.search(r"(?:reference|added|uploaded|attached|gave you)(?:'s|s'|s)?"
                     r"(?: (?:photo|image|picture))?(?: \d+)?(?:'s)? sky\b", clause):
            out["ref_region"] = "sky"
        return out

    def apply(self, rgb8: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        reference = _reference_pixels(params)
        ref_mask = reference_region(reference, params.get("ref_region", "whole"))
        match = fit_match(rgb8, mask if not mask.all() else None, reference, ref_mask)
        return match.apply(rgb8, float(params.get("strength", 1.0)))

    def describe(self, params: dict[str, Any], where: str, instruction: str = "") -> str:
        which = "the reference photo"
        ref = str(params.get("reference") or "")
        if ref.startswith("ref") and ref[3:].isdigit():
            which = f"reference {ref[3:]}"
        if params.get("ref_region") == "sky":
            which += "'s sky"
        strength = params.get("strength", 1.0)
        part = "" if not isinstance(strength, (int, float)) or strength >= 0.99 else \
            f" ({strength:.0%} of the way)"
        return f"match {where} to {which}{part}"

    def softer(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"strength": self.clamp("strength", float(params.get("strength", 1.0)) * 0.6,
                                       digits=3)}

    def stronger(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"strength": 1.0}

    def check(self, m: Measured) -> Verdict:
        return check_match(m.before, m.after, m.inside, m.params)


def check_match(before: np.ndarray, after: np.ndarray, inside: np.ndarray,
                params: dict[str, Any]) -> Verdict:
    """The measured check of a match (see ``eval.look``): the look distance to the
    reference fell as far as the strength asks, not past the reference; structure kept;
    no new clipped highlights; the hue histogram (which the fit never looks at) did not
    move away from the reference's."""
    try:
        reference = _reference_pixels(params)
        ref_mask = reference_region(reference, params.get("ref_region", "whole"))
        ref_lab = lab_pixels(reference, ref_mask)
        ref_look = look_of_lab(ref_lab)
        lab_b, lab_a = lab_pixels(before, inside), lab_pixels(after, inside)
        look_b, look_a = look_of_lab(lab_b), look_of_lab(lab_a)
    except (ReferenceError, LookError) as err:
        return Verdict(0.3, fix=[str(err)])
    strength = float(params.get("strength", 1.0))
    start, end = distance(look_b, ref_look).total, distance(look_a, ref_look).total
    structure = gradient_correlation(before, after, inside)
    vb, va, vr = look_b.vector(), look_a.vector(), ref_look.vector()
    line = vr - vb
    along = float(np.dot(va - vb, line) / max(np.dot(line, line), 1e-9))
    rgb_b, rgb_a = before[..., :3][inside], after[..., :3][inside]
    new_clip = float((rgb_a >= 255).any(axis=1).mean() - (rgb_b >= 255).any(axis=1).mean())
    hue_ref = hue_histogram(ref_lab)
    hue_from = hue_distance(hue_histogram(lab_b), hue_ref)
    hue_to = hue_distance(hue_histogram(lab_a), hue_ref)
    measures = {"look_start": round(start, 3), "look_end": round(end, 3),
                "structure": round(structure, 4), "along": round(along, 3),
                "new_clipped": round(new_clip, 4), "hue_start": round(hue_from, 3),
                "hue_end": round(hue_to, 3)}
    checks = {"closer": True, "structure": structure >= 0.85, "not_past": along <= 1.35,
              "no_clipping": new_clip <= 0.01, "hues": hue_to <= hue_from + 0.15}
    fix: list[str] = []
    retry: dict[str, Any] = {}
    if start > 2.0:
        wanted = start * (1.0 - 0.4 * strength) + 1.0
        checks["closer"] = end <= wanted
    if not checks["structure"]:
        fix.append(f"the photo's content changed, not just its look (structure "
                   f"{structure:.2f} < 0.85)")
    if not checks["not_past"]:
        fix.append("the match went past the reference's look; tone it down")
        retry = {"strength": round(max(0.1, strength / max(along, 1e-3)), 3)}
    if not checks["no_clipping"]:
        fix.append(f"the match clipped {new_clip:.1%} of the highlights")
        retry = {"strength": round(strength * 0.6, 3)}
    if not checks["hues"]:
        fix.append("the colours moved away from the reference's hues")
    if not checks["closer"]:
        fix.append(f"the look only moved from {start:.1f} to {end:.1f} (distance to the "
                   "reference); it should come closer")
        retry = retry or {"strength": 1.0}
    if fix:
        achieved = 0.1 if not checks["structure"] else 0.3
        return Verdict(achieved, fix=fix, retry=retry, measures=measures, checks=checks)
    keep = [f"the look moved from {start:.1f} to {end:.1f} towards the reference's",
            "structure kept", "no new clipping"]
    return Verdict(1.0, keep=keep, measures=measures, checks=checks)
