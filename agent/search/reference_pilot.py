"""Autopilot with a reference photo in place of a mood ("make it better, like this one").

A mood sets the direction Autopilot's reward pulls towards (``reward.MOOD_WEIGHT`` blends
the mood term with the evaluator); a reference does the same with a **look term**: how
much of the way to the reference's look (``eval.look``) a candidate went, 0 where it
started, 1 at the reference. The candidates are the ``match_reference`` operation at
``STRENGTHS`` (and leaving the photo alone), each scored on a ``HARM_SIZE`` copy by

    (evaluator + MOOD_WEIGHT · look term) / (1 + MOOD_WEIGHT)

and the best is applied at full resolution (through the session when there is one, so it
is one undoable state whose record names the reference). The evaluator keeps its say: a
match that makes the photo clearly worse scores below a gentler one or none.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from agent import executor
from agent.actions import Action
from agent.search.mcts import AutopilotResult, AutopilotStep
from agent.search.reward import HARM_SIZE, MOOD_WEIGHT, evaluate
from eval.look import look_distance, look_of
from eval.noref import to_analysis
from pipelines.operations.registry import for_role

log = logging.getLogger(__name__)

#: the strengths of the match Autopilot compares (0: leave the photo as it is)
STRENGTHS = (0.0, 0.5, 0.75, 1.0)


def _action(strength: float, reference: np.ndarray | None, ref_id: str = "") -> Action:
    op = for_role("reference")
    params: dict[str, Any] = {"strength": strength, "reference": ref_id}
    if reference is not None:
        params["image"] = reference
    return Action(kind="adjust", operation=op.name, params=params,
                  instruction="make it better, like the reference")


def autopilot_like(image: np.ndarray, reference: np.ndarray, *, session: Any = None,
                   ref_id: str = "") -> AutopilotResult:
    """Improve ``image`` towards ``reference``'s look (see the module doc).

    Args:
        image: ``uint8`` RGB/RGBA photo at full resolution.
        reference: the reference's pixels (any size; RGB).
        session: an ``EditSession`` holding the reference (``ref_id``); the kept step is
            committed to it.
        ref_id: the reference's id in ``session`` ("" = its latest).

    Returns:
        An ``AutopilotResult``: one step (the strength kept) or none, the scores of every
        strength in ``considered``.
    """
    small = to_analysis(image[..., :3], HARM_SIZE)
    ref_look = look_of(reference)
    start = look_distance(small, ref_look).total
    considered, best = [], (None, -1.0, 0.0)
    for strength in STRENGTHS:
        trial = small if strength == 0 else executor.execute(
            small, _action(strength, reference)).paste(small)
        moved = 0.0 if start < 1e-6 else \
            float(np.clip(1.0 - look_distance(trial, ref_look).total / start, 0.0, 1.0))
        score = (evaluate(trial, small) + MOOD_WEIGHT * moved) / (1 + MOOD_WEIGHT)
        considered.append({"iteration": 1, "strength": strength, "score": round(score, 5),
                           "look_moved": round(moved, 4),
                           "description": "leave the photo as it is" if not strength else
                           f"match the reference's look ({strength:.0%} of the way)"})
        if score > best[1] + 1e-9:
            best = (strength, score, moved)
    strength, score, moved = best
    for row in considered:
        row["decision"] = "kept: the best score" if row["strength"] == strength else \
            "not kept: another strength scored better"
    score0 = considered[0]["score"]
    tree = {"reference": True, "strengths": considered}
    if not strength:
        return AutopilotResult(image, [], tree, score0, score0, reason=(
            "left alone: every match to the reference scored below the photo as it is"),
            considered=considered)
    if session is not None:
        turn = session.run_actions([_action(strength, None, ref_id)],
                                   "make it better, like the reference")
        if not turn.ok:
            return AutopilotResult(image, [], tree, score0, score0, reason=turn.message,
                                   considered=considered)
        result, node = np.array(session.current_image()), turn.head
    else:
        result = executor.execute(image, _action(strength, reference)).paste(image)
        node = None
    step = AutopilotStep(_action(strength, None, ref_id).model_dump(mode="json"),
                         f"match the reference's look ({strength:.0%} of the way)",
                         f"{moved:.0%} of the way to the reference's look; the score "
                         f"{score0:.3f} → {score:.3f}", score0, score, node)
    return AutopilotResult(result, [step], tree, score0, score,
                           reason=f"matched the reference at {strength:.0%}",
                           considered=considered)
