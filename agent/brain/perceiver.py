"""The Autopilot's perceiver: measure a photo, name its scene, propose K atomic edits.

``perceive(image)`` measures exposure and clipping, colour cast, colourfulness, contrast,
noise, sharpness and horizon tilt (``eval.noref.quality_indices``), finds faces (OpenCV's
Haar cascade when the installed OpenCV ships it; OpenCV 5 wheels do not, so the LBP
frontal-face cascade bundled with scikit-image is used instead), estimates the sky share
and infers a scene type. ``propose(...)`` turns the measured deficits into diverse atomic
``Action``s (one per family, parameters sized from the deficit) with a reason each,
ranked by need, by a mood (``"warm and cosy"``, ``"cinematic"``, …) matched through the
offline MiniLM sentence embedder, and by the strategy memory's prior for the scene.

Scene awareness: with people present, strong local-contrast/colour edits protect the
face/person boxes (they get a fraction of the edit there) and may be bolder elsewhere.
"""

from __future__ import annotations

import logging
import math
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import cv2
import numpy as np

from agent.actions import Action
from eval.level import NO_CUE, LevelEvidence, level_evidence
from eval.naturalness import action_key
from eval.noref import FULL_RANGE_P99, quality_indices, to_analysis
from pipelines.editors.operations import operations_with
from pipelines.embeddings import sentence_encoder
from pipelines.operations import REGISTRY, operations

log = logging.getLogger(__name__)

Box = tuple[int, int, int, int]



class Priors(Protocol):
    """What ``propose`` reads from the memory of past runs (``AutopilotMemory``)."""

    def prior(self, scene: str, family: str) -> float:
        """The bonus for ``family`` on photos of ``scene`` (0 when never tried)."""
        ...

@dataclass
class Perception:
    """What the perceiver measured on one image."""

    size: tuple[int, int]                       # (width, height) of the measured image
    indices: dict[str, Any]
    faces: list[Box] = field(default_factory=list)     # full-resolution boxes
    people: list[Box] = field(default_factory=list)    # face boxes grown to a body estimate
    sky_fraction: float = 0.0
    scene: str = "general"
    mood: str | None = None
    style: str | None = None                    # the matched mood style, if any
    level: LevelEvidence = NO_CUE               # the roll, from reliable cues only

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {"size": list(self.size), "scene": self.scene, "faces": [list(b) for b in
                self.faces], "people": [list(b) for b in self.people],
                "sky_fraction": round(self.sky_fraction, 3), "mood": self.mood,
                "style": self.style, "level": self.level.to_dict(),
                "indices": {k: (round(v, 4) if isinstance(v, float) else v)
                            for k, v in self.indices.items()}}


@dataclass
class Candidate:
    """One proposed atomic edit with its reason and ranking priority."""

    action: Action
    family: str
    reason: str
    priority: float
    protect: list[Box] = field(default_factory=list)   # boxes that get a milder edit
    protect_strength: float = 0.35                     # share of the edit inside them
    diagnosed: bool = True     # answers a measured deficit or the mood (not mere polish)

    @property
    def key(self) -> str:
        """A stable identity: operation and rounded params (``eval.naturalness.action_key``)."""
        return action_key(self.family, self.action.params)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (the action as the schema's dict)."""
        return {"action": self.action.model_dump(mode="json"), "family": self.family,
                "reason": self.reason, "priority": round(self.priority, 4),
                "description": self.action.describe(),
                "protect": [list(b) for b in self.protect]}


# ----------------------------------------------------------------------------- perceive

@lru_cache(maxsize=1)
def _face_detector() -> Any:
    haar = getattr(getattr(cv2, "data", None), "haarcascades", "")
    path = os.path.join(haar, "haarcascade_frontalface_default.xml") if haar else ""
    if path and os.path.exists(path) and hasattr(cv2, "CascadeClassifier"):
        return ("cv2", cv2.CascadeClassifier(path))
    from skimage import data
    from skimage.feature import Cascade

    return ("skimage", Cascade(data.lbp_frontal_face_cascade_filename()))


def detect_faces(rgb: np.ndarray) -> list[Box]:
    """Frontal faces in an RGB image (boxes in its pixels), largest first."""
    kind, detector = _face_detector()
    h, w = rgb.shape[:2]
    min_side = max(24, min(h, w) // 12)
    if kind == "cv2":
        gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        found = [(x, y, x + fw, y + fh) for x, y, fw, fh in
                 detector.detectMultiScale(gray, 1.1, 5, minSize=(min_side, min_side))]
    else:
        found = [(d["c"], d["r"], d["c"] + d["width"], d["r"] + d["height"]) for d in
                 detector.detect_multi_scale(img=rgb, scale_factor=1.2, step_ratio=1,
                                             min_size=(min_side, min_side),
                                             max_size=(min(h, w), min(h, w)))]
    return sorted(found, key=lambda b: -(b[2] - b[0]) * (b[3] - b[1]))[:6]


def _sky_fraction(rgb: np.ndarray) -> float:
    top = rgb[: rgb.shape[0] // 3]
    hsv = cv2.cvtColor(top, cv2.COLOR_RGB2HSV)
    blue = (hsv[..., 0] >= 90) & (hsv[..., 0] <= 130) & (hsv[..., 2] > 110)
    bright_grey = (hsv[..., 1] < 40) & (hsv[..., 2] > 190)
    return float(np.mean(blue | bright_grey)) / 3.0


def _grow_person(face: Box, w: int, h: int) -> Box:
    x0, y0, x1, y1 = face
    fw, fh = x1 - x0, y1 - y0
    return (max(0, x0 - fw), max(0, y0 - fh // 2), min(w, x1 + fw), min(h, y1 + 5 * fh))


def perceive(image: np.ndarray, mood: str | None = None) -> Perception:
    """Measure ``image`` and infer its scene type.

    Args:
        image: ``uint8`` RGB/RGBA photo of any size (analysed at 512 px on its long side).
        mood: optional free-text intent; matched to a style (see ``match_mood``).

    Returns:
        A ``Perception`` with boxes in ``image``'s own pixels.
    """
    small = to_analysis(image)
    h, w = image.shape[:2]
    scale = w / small.shape[1]
    # the tilt comes from reliable cues only (a horizon, agreeing plumb lines): lines
    # leaning in perspective or natural diagonals never make a straighten candidate
    indices = quality_indices(image, tilt=False)
    level = level_evidence(image)
    if level.apply:
        indices.update(tilt_deg=-level.correction,
                       tilt_confidence=6 + int(round(10 * level.confidence)),
                       level_score=float(math.exp(-(max(0.0, abs(level.correction) - 0.5)
                                                    / 2.0) ** 2)),
                       level_detail=level.detail)
    faces = [tuple(int(round(v * scale)) for v in box) for box in detect_faces(small)]
    people = [_grow_person(box, w, h) for box in faces]
    sky = _sky_fraction(small)
    if faces:
        scene = "portrait"
    elif indices["mean_lightness"] < 25:
        scene = "low_light"
    elif sky > 0.12:
        scene = "landscape"
    else:
        scene = "general"
    style = match_mood(mood) if mood else None
    return Perception((w, h), indices, faces, people, sky, scene, mood, style, level)


# ----------------------------------------------------------------------------- moods

#: Mood styles: a description (embedded) and target index deltas (warmth = mean b*,
#: lightness = mean L, contrast = RMS L/100, chroma = colourfulness); the actions a style
#: favours are the operations' proposals for it (``style_actions``).
STYLES: dict[str, dict[str, Any]] = {
    "warm": {"text": "warm, cosy, golden, sunset, autumn, candle light, inviting",
             "target": {"warmth": 8.0, "chroma": 6.0, "contrast": -0.02}},
    "cinematic": {"text": "cinematic, moody, film look, dramatic, dark, teal and orange",
                  "target": {"contrast": 0.04, "lightness": -5.0, "chroma": -5.0}},
    "airy": {"text": "airy, bright, light, soft, pastel, fresh, clean, high key",
             "target": {"lightness": 8.0, "contrast": -0.03}},
    "pop": {"text": "make it pop, vivid, punchy, vibrant, colourful, crisp, bold",
            "target": {"chroma": 15.0, "contrast": 0.03}},
    "cool": {"text": "cool, calm, icy, blue hour, winter, serene, clinical",
             "target": {"warmth": -8.0}},
    "vintage": {"text": "vintage, faded, retro, nostalgic, old photo, matte",
                "target": {"contrast": -0.04, "chroma": -10.0, "warmth": 5.0}},
}


def proposals(role: str) -> list[tuple[str, dict[str, Any], str]]:
    """``(operation, params, reason)`` of every operation's proposals for ``role``
    (``Operation.proposals``: ``correction``, ``polish``, a style's name), in order."""
    found = [((p.order, n, i), op.name, dict(p.params), p.reason)
             for n, op in enumerate(operations()) for i, p in enumerate(op.proposals)
             if p.role == role]
    found.sort(key=lambda item: item[0])
    return [(name, params, reason) for _, name, params, reason in found]


def style_actions(name: str) -> list[tuple[str, dict[str, Any]]]:
    """The actions a mood style favours, in order."""
    return [(op, params) for op, params, _ in proposals(name)]


def _embedder() -> Any:
    """The offline MiniLM sentence encoder (shared: ``pipelines.embeddings``)."""
    return sentence_encoder()


@lru_cache(maxsize=1)
def _style_vectors() -> np.ndarray:
    return _embedder()([STYLES[n]["text"] for n in STYLES])


#: Words that join the parts of a mood ("crisp and cool", "warm, soft").
_MOOD_JOINS = re.compile(r"\s*(?:,|;|&|\+|/|\band\b|\bbut\b|\bwith\b|\bplus\b)\s*", re.I)


@lru_cache(maxsize=64)
def match_mood(mood: str) -> str | None:
    """The style(s) a free-text mood asks for, joined by ``+`` ("crisp and cool" → "pop+cool").

    Each part of the mood (split at commas and "and") is matched on its own
    (``match_style``), so a mood that names two looks gets both; duplicates are dropped
    ("warm and cosy" → "warm").

    Returns:
        ``+``-joined keys of ``STYLES`` in the order named, or ``None`` when no part matches.
    """
    text = (mood or "").strip()[:300]
    if not text:
        return None
    parts = [p for p in _MOOD_JOINS.split(text) if p and p.strip()]
    found: list[str] = []
    for part in parts[:4]:
        style = _named_style(part) or match_style(part)
        if style and style not in found:
            found.append(style)
    if not found and len(parts) > 1:
        whole = match_style(text)
        found = [whole] if whole else []
    return "+".join(found) or None


def _named_style(part: str) -> str | None:
    """The style whose description names a word of ``part`` ("warmer" → warm), if exactly
    one does best. Words beat the embedder here: MiniLM puts antonyms such as "warm" and
    "cool" side by side."""
    words = {w for w in re.findall(r"[a-z]+", part.lower()) if len(w) >= 3}
    hits = {}
    for name, spec in STYLES.items():
        vocab = set(re.findall(r"[a-z]+", spec["text"].lower()))
        hits[name] = sum(any(w == v or (len(v) >= 4 and w.startswith(v)) for v in vocab)
                         for w in words)
    best = max(hits.values())
    winners = [n for n, h in hits.items() if h == best]
    return winners[0] if best and len(winners) == 1 else None


def style_parts(style: str | None) -> list[str]:
    """The ``STYLES`` keys of a (possibly ``+``-joined) style; unknown names are dropped."""
    return [s for s in (style or "").split("+") if s in STYLES]


@lru_cache(maxsize=64)
def match_style(mood: str) -> str | None:
    """The one style closest to a free-text mood (MiniLM cosine; keyword overlap as fallback).

    Returns:
        A key of ``STYLES``, or ``None`` when nothing is close (cosine < 0.25).
    """
    text = (mood or "").strip()[:300]
    if not text:
        return None
    names = list(STYLES)
    try:
        sims = _style_vectors() @ _embedder()([text])[0]
        best = int(np.argmax(sims))
        return names[best] if sims[best] >= 0.25 else None
    except Exception as err:  # noqa: BLE001 - any loading failure falls back to keywords
        log.info("mood embedder unavailable (%s); matching keywords", err)
        words = set(text.lower().replace(",", " ").split())
        overlap = [len(words & set(STYLES[n]["text"].replace(",", "").split()))
                   for n in names]
        return names[int(np.argmax(overlap))] if max(overlap) else None


def _image_stats(image: np.ndarray) -> dict[str, float]:
    lab = cv2.cvtColor(to_analysis(image, 256), cv2.COLOR_RGB2LAB).astype(np.float32)
    light = lab[..., 0] * 100 / 255
    a, b = lab[..., 1] - 128, lab[..., 2] - 128
    return {"warmth": float(b.mean()), "lightness": float(light.mean()),
            "contrast": float(light.std() / 100),
            "chroma": float(np.hypot(a, b).mean())}


def mood_score(image: np.ndarray, original: np.ndarray, style: str) -> float:
    """How far ``image`` moved from ``original`` in the style's direction (0–1).

    1 when every target delta of the style is reached, 0.5 when nothing moved, less when
    the image moved the wrong way; a ``+``-joined style averages its looks.
    """
    names = style_parts(style)
    if not names:
        return 0.5
    now, then = _image_stats(image), _image_stats(original)
    per_style = []
    for name in names:   # each named look counts equally ("crisp and cool": both halves)
        parts = [0.5 + 0.5 * float(np.clip((now[key] - then[key]) / want, -1, 1))
                 for key, want in STYLES[name]["target"].items()]
        per_style.append(float(np.mean(parts)))
    return float(np.mean(per_style))


# ----------------------------------------------------------------------------- propose

def _clamp(x: float, lo: float, hi: float) -> float:
    return float(min(hi, max(lo, x)))


#: Grey-edge cast (percent) above which white balance is proposed.
CAST_GATE = 24.0
#: Tones are "flat" only when the 1–99 % lightness range is narrower than this (a low-key
#: photo can have a low RMS contrast while already spanning black to near-white).
FLAT_RANGE = 65.0
#: Noise sigma (grey levels) above which denoise is proposed and sharpening is not.
NOISE_GATE = 3.0


def _exposure_off(idx: dict[str, Any]) -> bool:
    """Whether the histogram (not just the mean) says the exposure is wrong.

    Too dark: a low mean with highlights that stop short of white and true blacks present
    (a dark low-key photo with its full tonal range is not under-exposed; lifted blacks
    with short highlights are a contrast problem, for levels). Too bright: a high mean with
    highlights at white, or blacks lifted far off black.
    """
    light = float(idx["mean_lightness"])
    p01 = float(idx.get("light_p01", 0.0))
    p99 = float(idx.get("light_p99", 50.0))
    if light < 40:
        return p99 < FULL_RANGE_P99 and p01 < 12
    if light > 62:
        return p99 > 97 or idx["clip_high"] > 0.02 or p01 > 25
    return False


def run_gates(idx: dict[str, Any]) -> frozenset[str]:
    """Families to leave out for a whole Autopilot run, from the diagnosis of its input.

    Later states can measure deficits the input never had (colour denoising flattens
    chroma edges, which then read as a cast); a fix the input did not need moves away
    from the photo. White balance is proposed only when the input itself shows a cast,
    and a noisy input is never sharpened (sharpening re-grows the noise a denoise removed).

    Args:
        idx: ``quality_indices`` of the run's input.

    Returns:
        The operation families to exclude.
    """
    closed = set()
    if float(idx["cast"]) <= CAST_GATE:
        closed.add("cast")
    if float(idx["noise_sigma"]) > NOISE_GATE:
        closed.add("noise")
    return frozenset(op.name for op in operations() if op.gate in closed)


def _deficits(idx: dict[str, Any]) -> list[tuple[str, float | None, float, str]]:
    """(deficit, size of the remedy or None, need 0–1, reason) for each measured deficit."""
    out: list[tuple[str, float | None, float, str]] = []
    light = float(idx["mean_lightness"])
    if _exposure_off(idx):
        stops = _clamp(math.log2(50.0 / max(light, 3.0)) * 1.6, -2.5, 2.5)
        out.append(("exposure", round(stops, 2), min(1, abs(light - 50) / 25),
                    f"mean lightness {light:.0f} is far from mid-grey"))
        out.append(("exposure", round(stops / 2, 2), min(1, abs(light - 50) / 35),
                    "half-strength exposure, in case the full correction overshoots"))
    if idx["clip_low"] > 0.05 or (light < 35 and _exposure_off(idx)):
        out.append(("crushed", None, min(1, idx["clip_low"] * 5 + 0.2),
                    f"{idx['clip_low']:.0%} of pixels are crushed black"))
    if idx["clip_high"] > 0.02 or light > 65:
        out.append(("blown", None, min(1, idx["clip_high"] * 8 + 0.2),
                    f"{idx['clip_high']:.0%} of pixels are blown out"))
    cast = float(idx["cast"])
    if cast > CAST_GATE:   # natural scenes measure 0–15; colour-denoised ones up to ~25
        out.append(("cast", 1.0, min(1, (cast - 10) / 20),
                    f"edges are not grey: a colour cast of {cast:.0f}%"))
        out.append(("cast", 0.6, min(1, (cast - 10) / 30),
                    "a gentler white balance keeps some of the mood"))
    contrast = float(idx["contrast"])
    tonal_range = float(idx.get("light_p99", 100.0)) - float(idx.get("light_p01", 0.0))
    if contrast < 0.17 and tonal_range < FLAT_RANGE:
        out.append(("flat", None, min(1, (0.2 - contrast) / 0.1),
                    f"flat tones (RMS contrast {contrast:.2f}); stretch the levels"))
        out.append(("low_contrast", round(_clamp(0.22 / max(contrast, 0.03) - 1, 0.1, 1.0), 2),
                    min(1, (0.2 - contrast) / 0.12), "low global contrast"))
    elif contrast > 0.32:
        out.append(("harsh", None, min(1, (contrast - 0.3) / 0.1),
                    f"harsh contrast ({contrast:.2f})"))
    noise = float(idx["noise_sigma"])
    if noise > NOISE_GATE:
        out.append(("noise", round(_clamp(noise / 12, 0.3, 1.0), 2),
                    min(1, noise / 8), f"visible noise (sigma ≈ {noise:.1f})"))
    if idx["tilt_confidence"] >= 6 and abs(idx["tilt_deg"]) > 0.4:
        tilt = float(idx["tilt_deg"])
        cue = idx.get("level_detail") or f"the dominant lines lean {tilt:+.1f}°"
        out.append(("tilt", round(_clamp(-tilt, -45, 45), 2),
                    min(1, abs(tilt) / 3), str(cue)))
    colourful = float(idx["colourfulness"])
    if colourful < 25:
        out.append(("muted", None, min(1, (30 - colourful) / 25),
                    f"muted colours (colourfulness {colourful:.0f})"))
    elif colourful > 85:
        out.append(("oversaturated", None, min(1, (colourful - 80) / 40),
                    "over-saturated colours"))
    if idx["sharpness"] < 8 and noise < 3:
        out.append(("soft", None, 0.4, "soft detail"))
    return out


def _needs(idx: dict[str, Any]) -> list[tuple[str, dict[str, Any], float, str]]:
    """(operation, params, need 0–1, reason) for each measured deficit: the operations'
    remedies for it (``Proposal`` role ``need:<deficit>``), sized by the diagnosis."""
    out = []
    for deficit, size, need, reason in _deficits(idx):
        for op in operations():
            for remedy in op.proposals:
                if remedy.role == f"need:{deficit}":
                    params = dict(remedy.params)
                    if size is not None:
                        params[op.main_param] = size
                    out.append((op.name, params, need, reason))
    return out


#: What a photographer reaches for first: corrections sized by the photo's own statistics,
#: proposed on every photo; the evaluator, not a hand-set threshold, decides whether one helps.
CORRECTIONS: list[tuple[str, dict[str, Any], str]] = proposals("correction")

#: Mild polish proposals that fill the list when few deficits were measured.
_POLISH: list[tuple[str, dict[str, Any], str]] = proposals("polish")

#: Families that change texture or colour strongly; on people they are toned down.
_PROTECTED = operations_with("strong")


def propose(image: np.ndarray | None = None, *, perception: Perception | None = None,
            k: int = 6, mood: str | None = None, memory: Priors | None = None,
            exclude: set[str] | frozenset[str] = frozenset(),
            polish: bool = True) -> list[Candidate]:
    """Propose up to ``k`` diverse atomic edits, best first.

    Args:
        image: the photo (ignored when ``perception`` is given).
        perception: a ready ``perceive`` result.
        k: how many candidates.
        mood: free-text intent (overrides the perception's mood).
        memory: strategy memory; its prior for (scene, family) raises or lowers a family.
        exclude: families not to propose (e.g. ones already on the path).
        polish: add the mild undiagnosed polish edits (``_POLISH``) at low priority.

    Returns:
        Candidates with distinct ``key``s, at most two per family, ranked by priority.
    """
    if perception is None:
        if image is None:
            raise ValueError("propose needs an image or a perception")
        perception = perceive(image, mood)
    style = match_mood(mood) if mood else perception.style
    raw = [(op, params, need, reason, True) for op, params, need, reason in
           _needs(perception.indices)]
    for name in style_parts(style):
        raw += [(op, params, 0.9, f"fits the '{name}' mood", True) for op, params in
                style_actions(name)]
    raw += [(op, params, 0.5, reason, True) for op, params, reason in CORRECTIONS]
    if polish:
        raw += [(op, params, 0.1, reason, False) for op, params, reason in _POLISH]
    people = perception.people if perception.scene == "portrait" else []
    seen: set[str] = set()
    per_family: dict[str, int] = {}
    out: list[Candidate] = []
    for op, params, need, reason, diagnosed in raw:
        if op in exclude:
            continue
        prior = memory.prior(perception.scene, op) if memory else 0.0
        protect = people if op in _PROTECTED else []
        if protect and REGISTRY[op].bolder_off_faces and params.get("amount", 1) > 0:
            params = {k2: (round(v * 1.3, 3) if k2 in ("amount", "clip_limit") else v)
                      for k2, v in params.items()}
            reason += "; bolder on the background, faces protected"
        action = Action(kind="adjust", operation=op, params=params, instruction=reason,
                        target="the whole image")
        cand = Candidate(action, op, reason, need + 5 * prior, protect=list(protect),
                         diagnosed=diagnosed)
        if cand.key in seen or per_family.get(op, 0) >= 2:
            continue
        seen.add(cand.key)
        per_family[op] = per_family.get(op, 0) + 1
        out.append(cand)
    out.sort(key=lambda c: (-c.priority, c.key))
    return _diverse(out, k)


def _diverse(cands: list[Candidate], k: int) -> list[Candidate]:
    """Take the best of each family first, then second choices, up to ``k``."""
    firsts, seconds, seen = [], [], set()
    for cand in cands:
        (seconds if cand.family in seen else firsts).append(cand)
        seen.add(cand.family)
    ordered = firsts + seconds
    strong = [c for c in ordered if c.priority >= 0.3]
    return (strong + [c for c in ordered if c.priority < 0.3])[:k]
