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

from collections.abc import Callable

from agent.brain.critic.measured import FRAME_OPS, SPILL_SHARE, WORK_PIXELS, MeasuredCritic
from agent.brain.critic.panel import AGGREGATOR_REACH, PanelCritic, combine_scores
from agent.brain.critic.verdict import (
    CRITIQUE_SCHEMA,
    FAILED_CHECK_CAP,
    MAX_FEATHER,
    PASS_SCORE,
    Critic,
    Critique,
)
from agent.brain.llm import get_llm
from pipelines.config import Settings, get_settings
from pipelines.llm import llm_configured

__all__ = ["AGGREGATOR_REACH", "CRITICS", "CRITIQUE_SCHEMA", "FAILED_CHECK_CAP", "FRAME_OPS",
           "MAX_FEATHER", "PASS_SCORE", "SPILL_SHARE", "WORK_PIXELS", "Critic", "Critique",
           "MeasuredCritic", "PanelCritic", "combine_scores", "get_critic"]

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
