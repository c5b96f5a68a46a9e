"""The panel critic: several VLM reviewers and an aggregator, with the measured critique
as evidence; it falls back to the measured critique when the model fails."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from agent.brain.critic.measured import MeasuredCritic, check_inputs
from agent.brain.critic.retry import unique, valid_retry
from agent.brain.critic.verdict import CRITIQUE_SCHEMA, Critique, Scene
from agent.brain.prompts import AGGREGATOR, aggregator_user, critic_system, critic_user
from pipelines.llm import LLMError, describe

log = logging.getLogger(__name__)


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

    def prepare(self, frame: np.ndarray, action: Any) -> None:
        """See ``MeasuredCritic.prepare`` (its measurements are the panel's evidence)."""
        self.fallback.prepare(frame, action)

    def critique(self, before: np.ndarray, after: np.ndarray, action: Any,
                 mask: np.ndarray | None = None, *, feather: int | None = None,
                 params: dict[str, Any] | None = None, scene: Scene | None = None
                 ) -> Critique:
        """Ask each reviewer, then the aggregator; fall back to measurements on failure.

        Args:
            before: the patch before the edit.
            after: the composed patch after the edit.
            action: the attempted ``Action``.
            mask: the target mask (bool HxW).
            feather: passed to the measured critic (see ``MeasuredCritic.critique``).
            params: the parameters the attempt used (see ``MeasuredCritic.critique``).
            scene: the whole frame (see ``MeasuredCritic.critique``).

        Returns:
            The aggregated ``Critique`` (its ``measures`` are the measured critic's).
        """
        measured = self.fallback.critique(before, after, action, mask, feather=feather,
                                          params=params, scene=scene)
        problem = check_inputs(before, after, mask)
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
        retry = valid_retry(op, dict(final.get("retry_params") or {})) or measured.retry_params
        score = combine_scores([float(r["score"]) for r in reviews.values()],
                               float(final["score"]), measured)
        fix = unique([*measured.fix, *[str(f) for f in final.get("fix", [])]]) \
            if not all(measured.checks.values()) else unique([str(f) for f in
                                                              final.get("fix", [])])
        return Critique(round(score, 2), unique([str(k) for k in final.get("keep", [])]),
                        fix, retry, dict(measured.measures, panel_reviews=float(len(reviews))),
                        dict(measured.checks), measured.grow, dict(measured.undecided))


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

