"""What Autopilot offers instead of doing: a straighten the evidence supports only weakly,
the whole change its do-no-harm guard held back, and the one line saying why it left a
photo alone; and carrying out a suggestion the user accepted."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agent.actions import Action
from agent.brain.context import SceneContext, describe
from agent.brain.perceiver import Candidate
from agent.search.candidates import apply_candidate
from agent.search.reward import HARM_BOUND, HARM_SIZE, deviation
from eval.level import APPLY_CONFIDENCE
from eval.noref import to_analysis

#: The ``operation`` of the suggestion that offers, whole, the changes the guard held back.
FULL_STRENGTH = "full_strength"
#: The most steps a full-strength suggestion may carry.
MAX_FULL_STEPS = 8


def held_back(run: Any) -> list[dict[str, Any]]:
    """When the do-no-harm guard scaled a change down (or skipped it), the whole change is
    offered as a suggestion, so nothing useful is hidden."""
    cands, image = run.full_strength()
    if not cands or image.shape != run.current.shape or \
            deviation(to_analysis(image, HARM_SIZE), to_analysis(run.current, HARM_SIZE)) < 1.0:
        return []
    first = run.held[0]
    gains = [r["predicted_gain"] for r in run.held if "predicted_gain" in r]
    description = "; ".join(c.action.describe() for c in cands)
    return [{"operation": FULL_STRENGTH,
             "params": {"steps": [{"action": c.action.model_dump(mode="json"),
                                   "protect": [list(map(int, b)) for b in c.protect],
                                   "protect_strength": float(c.protect_strength)}
                                  for c in cands]},
             "description": f"apply at full strength: {description}",
             "confidence": round(max(gains), 3) if gains else 0.0, "cue": "do_no_harm",
             "reason": f"held back: the evaluator's predicted gain for "
                       f"{first['description']} ({first.get('predicted_gain', 0.0):.2f}) is "
                       f"below the margin {first.get('margin', 0.0):.2f} this scene needs, so "
                       f"Autopilot moved the photo at most {HARM_BOUND:g} grey levels — a "
                       f"stronger fix is available"}]


def accept_full_strength(original: np.ndarray, suggestion: dict[str, Any]
                         ) -> list[tuple[np.ndarray, Action]]:
    """Carry out a held-back (``FULL_STRENGTH``) suggestion the user accepted: its steps,
    whole, on the photo the run started from (they replace the run's own steps).

    Args:
        original: the photo the run started from.
        suggestion: the ``FULL_STRENGTH`` entry of ``AutopilotResult.suggestions``.

    Returns:
        ``[(image after the step, its Action), ...]`` in order.

    Raises:
        ValueError: not such a suggestion, or a step that is not a valid edit.
    """
    if not isinstance(suggestion, dict) or suggestion.get("operation") != FULL_STRENGTH:
        raise ValueError("not a held-back suggestion")
    params = suggestion.get("params")
    steps = params.get("steps") if isinstance(params, dict) else None
    if not isinstance(steps, list) or not 0 < len(steps) <= MAX_FULL_STEPS:
        raise ValueError(f"a held-back suggestion needs 1 to {MAX_FULL_STEPS} steps")
    out, image = [], original
    h, w = original.shape[:2]
    for step in steps:
        if not isinstance(step, dict):
            raise ValueError("each step of a held-back suggestion must be an object")
        try:
            action = Action.model_validate(step.get("action"))
        except Exception as exc:   # pydantic's ValidationError: the message names the field
            raise ValueError(f"a held-back step is not a valid edit: {exc}") from None
        if action.kind.value != "adjust" or action.operation == "straighten":
            raise ValueError("a held-back suggestion holds tone and colour steps only")
        boxes, strength = step.get("protect") or [], step.get("protect_strength", 0.35)
        if not isinstance(boxes, list) or len(boxes) > 32 or not all(
                isinstance(b, list) and len(b) == 4 and all(
                    isinstance(v, int) and not isinstance(v, bool) and abs(v) <= 4 * max(w, h)
                    for v in b) for b in boxes):
            raise ValueError("a held-back step's protected boxes are not valid")
        if not isinstance(strength, (int, float)) or not 0.0 <= float(strength) <= 1.0:
            raise ValueError("a held-back step's protect strength must be within 0-1")
        cand = Candidate(action, action.operation, action.instruction, 1.0,
                         [tuple(b) for b in boxes], float(strength))
        image = apply_candidate(image, cand)
        out.append((image, action))
    return out


def accept_suggestion(image: np.ndarray, suggestion: dict[str, Any]
                      ) -> tuple[np.ndarray, Any]:
    """Carry out a suggestion of ``AutopilotResult.suggestions`` the user accepted.

    Args:
        image: the photo the suggestion was made for (or the run's result).
        suggestion: one entry of ``suggestions`` (from this run or read back from JSON).

    Returns:
        ``(edited image, the Action)``.

    Raises:
        ValueError: not a suggestion this module makes, or parameters out of range.
    """
    if not isinstance(suggestion, dict) or suggestion.get("operation") != "straighten":
        raise ValueError("only a straighten suggestion can be accepted")
    params = suggestion.get("params") or {}
    angle = params.get("angle") if isinstance(params, dict) else None
    if not isinstance(angle, (int, float)) or isinstance(angle, bool) or \
            not math.isfinite(angle) or abs(angle) > 45:
        raise ValueError("a straighten suggestion needs an angle within ±45°")
    action = Action(kind="adjust", operation="straighten", params={"angle": float(angle)},
                    instruction=str(suggestion.get("reason", ""))[:300],
                    target="the whole image")
    cand = Candidate(action, "straighten", action.instruction, 1.0)
    return apply_candidate(image, cand), action


def straighten_suggestions(level: Any) -> list[dict[str, Any]]:
    """A straighten the evidence supports only weakly: offered, never applied."""
    if not level.suggest:
        return []
    angle = round(float(np.clip(level.correction, -45, 45)), 2)
    return [{"operation": "straighten", "params": {"angle": angle},
             "description": f"straighten by {angle:+.1f}°", "confidence":
             round(level.confidence, 3), "cue": level.cue,
             "reason": f"{level.detail}; confidence {level.confidence:.2f} is below "
                       f"{APPLY_CONFIDENCE:g}, so it is offered, not applied"}]


def reason(run: Any, context: SceneContext) -> str:
    """One line saying what the run did, or why it left the photo alone."""
    natural = describe(context)
    if run.steps:
        scaled = [c for c in run.considered if str(c.get("decision", "")).startswith(
            "kept at")]
        text = "changed: " + "; ".join(s.description for s in run.steps)
        sure = [c for c in run.considered if str(c.get("decision", "")).startswith(
            "kept in full") and "probability" in c]
        part = [c for c in run.considered if str(c.get("decision", "")).startswith(
            "kept in part") and "probability" in c]
        if sure:
            what = "the tone part of its estimated inverse" if str(sure[0]["decision"]).startswith(
                "kept in full, tone only") else "its estimated inverse"
            text += (f" ({sure[0]['probability']:.0%} sure the photo was {sure[0]['fault']}: "
                     f"{what} applied in full)")
        elif part:
            text += (f" (only {part[0]['probability']:.0%} sure the photo was "
                     f"{part[0]['fault']}: {part[0]['share']:.0%} of its estimated inverse "
                     f"applied, within the do-no-harm bound; the whole fix is offered)")
        if scaled:
            text += " (held within the do-no-harm bound: the evaluator was not confident)"
        return text
    skipped = [c for c in run.considered if str(c.get("decision", "")).startswith("skipped")]
    if skipped:
        text = ("left alone: the changes considered would move it far and the evaluator is "
                "not confident they help")
    else:
        text = "left alone: already well exposed and balanced"
    return text + (f" ({natural})" if natural else "")
