"""What kind of scene a photo is, as context for the Autopilot's do-no-harm rule.

The learned evaluator (``eval.naturalness``) reads colour and tone statistics only, so a
photo whose colours or tones are unusual by nature looks to it like a cast or an exposure
error: an orange flower on dark leaves, a frame filled by one hue (a cheetah in dry grass, a
cup of coffee), a twilight sky, a deliberately dark scene. ``scene_context(image)`` names
those situations from what the embedded perception sees — the salient subject (U²-Net-p,
``pipelines.perception.detectors.SalientSegmenter``; a centre-weighted stand-in when its
weights are not installed), faces (the perceiver's detector) — and from simple colour cues
(hue concentration, lightness, the sky band at the top). The Autopilot asks a larger
predicted gain of a change that moves such a photo far (``agent.search.reward.harm_margin``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from pipelines.images import downscale
from pipelines.perception.detectors import SalientSegmenter
from pipelines.perception.store import model_path

log = logging.getLogger(__name__)

#: Long side (px) the cues are read at.
CONTEXT_SIZE = 256
#: Chroma (CIELAB) above which a pixel counts as coloured.
COLOURED = 15.0


@dataclass(frozen=True)
class SceneContext:
    """Scene cues that explain unusual colour or tone (each a reason, not a defect)."""

    flags: tuple[str, ...] = ()          # "one_hue", "strong_subject", "low_key", "twilight"
    reasons: tuple[str, ...] = ()        # one line per flag, for people
    measures: dict[str, float] = field(default_factory=dict)
    saliency: str = "none"               # "u2netp" or "centre" (what found the subject)

    def has(self, flag: str) -> bool:
        """Whether ``flag`` was seen."""
        return flag in self.flags

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"flags": list(self.flags), "reasons": list(self.reasons),
                "measures": {k: round(v, 3) for k, v in self.measures.items()},
                "saliency": self.saliency}


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    model_path(SalientSegmenter.file)     # raises when the weights are not installed
    return SalientSegmenter()


def salient_map(rgb: np.ndarray) -> tuple[np.ndarray, str]:
    """A 0–1 map of the salient subject at ``rgb``'s size, and what made it.

    U²-Net-p when its weights are installed; otherwise a centred Gaussian (the subject of
    most photos sits near the middle), so the rule still runs without the weights.
    """
    try:
        return _segmenter().saliency(rgb, 160), "u2netp"
    except Exception as err:  # noqa: BLE001 - missing weights or a failing net: fall back
        log.info("salient-object net unavailable (%s); centre-weighted subject", err)
    h, w = rgb.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w]
    r2 = ((xs - w / 2) / (0.3 * w)) ** 2 + ((ys - h / 2) / (0.3 * h)) ** 2
    return np.exp(-r2).astype(np.float32), "centre"


def scene_context(image: np.ndarray, faces: int = 0) -> SceneContext:
    """Name the scene cues that make unusual colour or tone natural.

    Args:
        image: ``uint8`` RGB/RGBA photo of any size.
        faces: how many faces the perceiver found (skin is a strong natural colour).

    Returns:
        A ``SceneContext``: ``one_hue`` (most of the frame is coloured, and in one hue),
        ``strong_subject`` (a salient subject far more colourful than its surroundings, or
        faces), ``low_key`` (dark on purpose: a low mean with highlights still near white),
        ``twilight`` (a dim blue band of sky over a dark scene).
    """
    rgb = np.ascontiguousarray(downscale(np.ascontiguousarray(image[..., :3]), CONTEXT_SIZE))
    lab = cv2.cvtColor(rgb, cv2.COLOR_RGB2LAB).astype(np.float32)
    light = lab[..., 0] * (100.0 / 255.0)
    a, b = lab[..., 1] - 128.0, lab[..., 2] - 128.0
    chroma = np.hypot(a, b)
    weight = np.clip(chroma - 8.0, 0, None)
    coloured = float(np.mean(chroma > COLOURED))
    if weight.sum() > 0:
        z = complex((weight * a).sum(), (weight * b).sum()) / float(
            (weight * chroma + 1e-6).sum())
        concentration = abs(z)
    else:
        concentration = 0.0
    sal, source = salient_map(rgb)
    fg = sal > 0.5
    share = float(fg.mean())
    sub_c = float(np.percentile(chroma[fg], 90)) if fg.sum() > 30 else 0.0
    bg_c = float(np.percentile(chroma[~fg], 90)) if (~fg).sum() > 30 else 0.0
    mean_l = float(light.mean())
    p99 = float(np.percentile(light, 99))
    top = slice(0, max(1, light.shape[0] // 4))
    top_l, top_b = float(light[top].mean()), float(b[top].mean())
    measures = {"coloured_share": coloured, "hue_concentration": concentration,
                "subject_share": share, "subject_chroma": sub_c, "background_chroma": bg_c,
                "mean_lightness": mean_l, "light_p99": p99, "top_lightness": top_l,
                "top_b": top_b}
    flags: list[tuple[str, str]] = []
    if coloured >= 0.6 and concentration >= 0.9:
        flags.append(("one_hue", f"{coloured:.0%} of the frame is coloured, nearly all in "
                                 "one hue"))
    if faces:
        flags.append(("strong_subject", f"{faces} face{'s' if faces > 1 else ''} (skin "
                                        "tones are kept as they are)"))
    elif 0.03 <= share <= 0.9 and sub_c >= 45 and sub_c >= 2.0 * max(bg_c, 1.0):
        flags.append(("strong_subject", f"the subject is strongly coloured (chroma "
                                        f"{sub_c:.0f} against {bg_c:.0f} around it)"))
    if mean_l < 35 and p99 >= 75:
        flags.append(("low_key", f"dark on purpose: mean lightness {mean_l:.0f} with "
                                 f"highlights at {p99:.0f}"))
    if mean_l < 40 and top_b < -8 and top_l < 50:
        flags.append(("twilight", "a dim blue sky: twilight or night"))
    return SceneContext(tuple(f for f, _ in flags), tuple(r for _, r in flags), measures,
                        source)


def describe(context: SceneContext) -> str:
    """One line naming the cues ("" when none)."""
    return "; ".join(context.reasons)
