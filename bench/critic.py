"""The critic's accuracy on labelled good and bad edits (issue 14).

Usage::

    .venv/bin/python bench/critic.py [--size 640x360] [--scenes 4]

Edits are made here on HDD renders: good removals and recolours by the classical editor,
and deliberately bad ones (a rim left, the wrong colour, nothing changed, a spill outside
the target). Two splits: ``tuned`` (backgrounds the thresholds were set on) and
``held_out`` (backgrounds never looked at while tuning). The last printed line is one JSON
object with precision and recall of "passed" (positive = a good edit) per split.

The real-photo part (issue 24, ``--real``, on by default) judges the labelled pairs of
``tests/critic_pairs.py`` (scikit-image photos and composites, edits made by the agent's
own executor on the right target or a wrong one) twice: as the turn loop does, with the
mask the edit was made with (``with_mask``: only checks that do not trust it can catch a
wrong target), and offline with no mask (``offline_if``: the instruction-following score
of ``python -m agent critique`` / pair scoring, the critic's 0–10 / 10). It also counts
wrong-target edits that passed (the target is 0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent import executor  # noqa: E402
from agent.actions import Action  # noqa: E402
from agent.brain.critic import MeasuredCritic  # noqa: E402
from agent.brain.judge import critique_images  # noqa: E402
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
    parser.add_argument("--no-real", dest="real", action="store_false",
                        help="skip the real-photo pairs (renders only)")
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
    if args.real:
        out["real"] = real_photos()
        out["seconds"] = round(time.perf_counter() - start, 1)
    out["load_average"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(out))


WRONG_TARGET = ("wrong instance", "every text", "touching neighbour")


def real_photos() -> dict:
    """Precision/recall of "passed" on the labelled real-photo pairs, per split and mode."""
    from tests.critic_pairs import pairs

    out: dict = {}
    for split in ("tune", "held_out"):
        rows = {"with_mask": [], "offline_if": []}
        for pair in pairs(split):
            for mode, mask in (("with_mask", pair.used_mask), ("offline_if", None)):
                verdict = critique_images(pair.before, pair.after, pair.instruction, mask)
                rows[mode].append((pair, verdict))
        out[split] = {mode: _rates(found) for mode, found in rows.items()}
    return out


def _rates(found: list) -> dict:
    tp = sum(v["passed"] and p.good for p, v in found)
    fp = sum(v["passed"] and not p.good for p, v in found)
    fn = sum(not v["passed"] and p.good for p, v in found)
    tn = sum(not v["passed"] and not p.good for p, v in found)
    if_right = sum((v["score"] / 10 >= 0.5) == p.good for p, v in found)
    return {"cases": len(found), "good": tp + fn, "bad": fp + tn,
            "precision": round(tp / max(tp + fp, 1), 3), "recall": round(tp / max(tp + fn, 1), 3),
            "accuracy": round((tp + tn) / max(len(found), 1), 3),
            "if_accuracy_at_0.5": round(if_right / max(len(found), 1), 3),
            "wrong_target_passed": sum(v["passed"] and p.kind in WRONG_TARGET
                                       for p, v in found),
            "wrong_target_cases": sum(p.kind in WRONG_TARGET for p, _ in found),
            "misjudged": [f"{p.name}: {p.instruction} ({p.kind}) {v['score']}"
                          for p, v in found if v["passed"] != p.good]}


if __name__ == "__main__":
    main()
