"""Judge an edit from files: the same planner, localiser and critic the agent uses.

``critique_images(before, after, instruction, mask=None)`` plans the instruction, finds
each step's target in ``before`` (or takes ``mask``), runs the configured critic on each
step and combines the verdicts: the score is the lowest step's, ``passed`` needs every
step to pass. ``python -m agent critique`` prints it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agent.actions import ActionKind, RegionType
from agent.brain.critic import Critic, Scene, get_critic
from agent.brain.planner import Planner, get_planner
from pipelines.editors.objects import grow_object_mask
from pipelines.editors.operations import get_operation
from pipelines.images import load_image
from pipelines.localizers import Localizer, get_localizer
from pipelines.masks import load_mask


def critique_images(before: np.ndarray, after: np.ndarray, instruction: str,
                    mask: np.ndarray | None = None, *, planner: Planner | None = None,
                    critic: Critic | None = None, localizer: Localizer | None = None
                    ) -> dict[str, Any]:
    """Score ``after`` against ``before`` for ``instruction``.

    Args:
        before: uint8 RGB(A) image before the edit.
        after: uint8 RGB(A) image after the edit (same size).
        instruction: what was asked.
        mask: bool target mask (None: each step's target is localised in ``before``).
        planner: default the configured planner.
        critic: default the configured critic.
        localizer: default the configured localiser.

    Returns:
        ``{"score": 0–10, "passed": bool, "decided": bool, "reasons": [...],
        "steps": [...]}``; ``decided`` is False when a target could not be found (the
        score then says nothing about the edit).
    """
    planner = planner or get_planner()
    critic = critic or get_critic()
    plan = planner.plan(instruction, has_mask=mask is not None,
                        image_size=(before.shape[1], before.shape[0]))
    actions = [a for a in plan.actions if a.kind is not ActionKind.undo]
    if not plan.is_edit or not actions:
        return {"score": 0.0, "passed": False, "steps": [], "decided": False,
                "reasons": [plan.message or "the instruction asks for no edit"]}
    steps, reasons = [], []
    for action in actions:
        target = _target(before, action, mask, localizer or get_localizer())
        if target is None:
            reasons.append(f"cannot decide: could not find '{action.target}' in the before "
                           "image")
            steps.append({"step": action.describe(), "score": 0.0, "passed": False,
                          "decided": False})
            continue
        verdict = critic.critique(before, after, action, target,
                                  scene=Scene(before)).to_dict()
        steps.append({"step": action.describe(), **verdict})
        reasons += [f"{action.describe()}: {r}" for r in verdict["reasons"]]
    score = min(float(s["score"]) for s in steps)
    return {"score": round(score, 2), "passed": all(s["passed"] for s in steps),
            "decided": all(s.get("decided", True) for s in steps),
            "reasons": reasons, "steps": steps}


def _target(image: np.ndarray, action: Any, mask: np.ndarray | None,
            localizer: Localizer) -> np.ndarray | None:
    if action.region.type is RegionType.image:
        return np.ones(image.shape[:2], bool)
    if mask is not None:
        found = mask
    else:
        phrase = action.region.phrase or action.target
        hit = localizer.locate(image, phrase, None)
        masks = [np.asarray(m.mask, bool) for m in hit.masks if np.asarray(m.mask).any()]
        if not masks:
            return None
        found = masks[0]
    if get_operation(action.operation).has("object_edge"):   # the most an edit may grow
        found, _ = grow_object_mask(image, found, fade=False)
    return found


def critique_files(before: str, after: str, instruction: str,
                   mask: str | np.ndarray | None = None) -> dict[str, Any]:
    """``critique_images`` on two image files (the names the user gave).

    ``mask`` may be a mask image's path: it is checked and fitted to the before image
    (``pipelines.masks.load_mask``: same aspect ratio, not empty).
    """
    first = load_image(before).pixels
    if isinstance(mask, str):
        mask = load_mask(mask, first.shape[:2], label=Path(mask).name)
    return critique_images(first, load_image(after).pixels, instruction, mask)


__all__ = ["critique_images", "critique_files"]
