"""The critic's accuracy on labelled good and bad edits (issue 14).

Usage::

    .venv/bin/python bench/critic.py [--size 640x360] [--scenes 4]

Edits are made here on HDD renders: good removals and recolours by the classical editor,
and deliberately bad ones (a rim left, the wrong colour, nothing changed, a spill outside
the target). Two splits: ``tuned`` (backgrounds the thresholds were set on) and
``held_out`` (backgrounds never looked at while tuning). The last printed line is one JSON
object with precision and recall of "passed" (positive = a good edit) per split.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent import executor  # noqa: E402
from agent.actions import Action  # noqa: E402
from agent.brain.critic import MeasuredCritic  # noqa: E402
from eval import hdd  # noqa: E402

KINDS = {"good removal": True, "good recolour": True, "rim left": False,
         "wrong colour": False, "nothing changed": False, "spill outside": False}
SPLITS = {"tuned": (3, 5, 7, 9, 11, 13), "held_out": (101, 103, 107, 109, 113, 127)}
SHAPES = (("red", "circle", "purple"), ("green", "square", "orange"),
          ("blue", "star", "yellow"), ("yellow", "triangle", "navy"))


def case(kind: str, background: int, n: int, size: tuple[int, int]):
    colour, shape, new = SHAPES[n % len(SHAPES)]
    obj = hdd.SceneObject("o1", colour, "medium", "matte", shape, (0.5, 0.5))
    before = hdd.render(hdd.SceneState((obj,), background, 2), size)
    bg = hdd.render(hdd.SceneState((), background, 2), size)
    area = np.any(np.abs(before.astype(int) - bg.astype(int)) > 2, axis=2)
    mask = cv2.dilate(area.astype(np.uint8), np.ones((7, 7), np.uint8)) > 0
    target = f"{colour} {hdd.NOUNS[shape]}"
    remove = Action(kind="remove", operation="inpaint", target=target)
    recolour = Action(kind="adjust", operation="recolor", target=target, params={"color": new})
    if kind == "good removal":
        return before, executor.execute(before, remove, mask).paste(before), remove, mask
    if kind == "rim left":
        inner = cv2.erode(area.astype(np.uint8), np.ones((13, 13), np.uint8)) > 0
        request = remove.to_request()
        out = executor.run(executor.Layer((0, 0, *size), before, inner), request,
                           executor.pick_editor(request)).patch
        return before, out, remove, mask
    if kind == "nothing changed":
        return before, before.copy(), (remove if n % 2 else recolour), mask
    good = executor.execute(before, recolour, mask).paste(before)
    if kind == "good recolour":
        return before, good, recolour, mask
    if kind == "wrong colour":
        wrong = Action(kind="adjust", operation="recolor", target=target,
                       params={"color": SHAPES[(n + 1) % len(SHAPES)][2]})
        return before, executor.execute(before, wrong, mask).paste(before), recolour, mask
    good[: size[1] // 4] = (good[: size[1] // 4] * 0.7).astype(np.uint8)   # spill
    return before, good, recolour, mask


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="640x360")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    critic = MeasuredCritic()
    out: dict = {"size": args.size, "splits": {}}
    start = time.perf_counter()
    for split, backgrounds in SPLITS.items():
        tp = fp = fn = tn = 0
        wrong = []
        for n, background in enumerate(backgrounds):
            for kind, good in KINDS.items():
                before, after, action, mask = case(kind, background, n, size)
                passed = critic.critique(before, after, action, mask).passed
                tp += passed and good
                fp += passed and not good
                fn += (not passed) and good
                tn += (not passed) and not good
                if passed != good:
                    wrong.append(f"{kind} bg{background}")
        out["splits"][split] = {
            "cases": tp + fp + fn + tn, "good": tp + fn, "bad": fp + tn,
            "precision": round(tp / max(tp + fp, 1), 3), "recall": round(tp / max(tp + fn, 1), 3),
            "accuracy": round((tp + tn) / max(tp + fp + fn + tn, 1), 3), "misjudged": wrong}
    out["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
