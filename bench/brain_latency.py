"""Latency of the agent's brain on the embedded backends: rule planning and measured critique.

Critique is timed on a whole-frame edit of a 12-MP image (4240x2832) and on a ~1-MP layer
patch, with real ClassicalEditor edits. Run: ``.venv/bin/python bench/brain_latency.py``.
The last line is one JSON object.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.actions import Action  # noqa: E402
from agent.brain.critic import MeasuredCritic  # noqa: E402
from agent.brain.planner import RulePlanner  # noqa: E402
from pipelines.editors.classical import ClassicalEditor  # noqa: E402

INSTRUCTIONS = ["make the car red, brighten the sky a bit and remove the bird",
                "increase the contrast slightly then blur the background a lot",
                "undo the last two", "add the text 'hello' at the top in red",
                "what's the weather?"]


def _timed(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    from skimage import data

    planner = RulePlanner()
    per = {s: 1000 * _timed(lambda s=s: planner.plan(s), 50) for s in INSTRUCTIONS}
    photo = data.astronaut()
    big = cv2.resize(photo, (4240, 2832), interpolation=cv2.INTER_CUBIC)
    editor, critic = ClassicalEditor(), MeasuredCritic()
    results = {"plan_ms_mean": round(statistics.mean(per.values()), 3),
               "plan_ms_three_actions": round(per[INSTRUCTIONS[0]], 3)}
    whole = np.ones(big.shape[:2], bool)
    for op, params in [("brightness", {"amount": 0.3}), ("sharpen", {})]:
        action = Action(kind="adjust", operation=op, params=params)
        after = editor.edit(big, whole, action.to_request())
        results[f"critique_12mp_{op}_s"] = round(_timed(
            lambda a=after, ac=action: critic.critique(big, a, ac, whole), 3), 3)
    patch = np.ascontiguousarray(big[:1000, :1000])
    mask = np.zeros(patch.shape[:2], bool)
    cv2.circle(mask.view(np.uint8), (500, 500), 350, 1, -1)
    for op, kind, params in [("recolor", "replace", {"color": "blue"}),
                             ("inpaint", "remove", {}), ("brightness", "adjust", {"amount": 0.3})]:
        action = Action(kind=kind, operation=op, params=params, target="x",
                        region={"type": "phrase", "phrase": "x"})
        after = editor.edit(patch, mask, action.to_request())
        results[f"critique_1mp_patch_{op}_s"] = round(_timed(
            lambda a=after, ac=action: critic.critique(patch, a, ac, mask), 3), 3)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
