"""Calibrate the Autopilot's do-no-harm margins on untouched training photos, held out by photo.

Usage: ``python scripts/calibrate_harm.py --leave-one-out DIR [--size 512]``

``DIR`` holds one evaluator per training photo fitted without it
(``scripts/train_naturalness.py --leave-one-out DIR``). For every training photo, judged by
the evaluator that never saw it, the untouched photo and three close-up crops of it (the
centre half, the top-left and bottom-right 60 %) are the *untouched* cases; the six
benchmark degradations of the whole photo are the *degraded* ones. For each case the
perceiver's proposals are applied; among those that would move the photo by more than
``agent.search.reward.HARM_BOUND`` grey levels, the largest predicted gain
(``agent.search.reward.predicted_gain``) is what a margin must stop (untouched) or let
through (degraded). Cases are grouped by scene context (``agent.brain.context``: no flag =
``ordinary``, any flag = ``natural``).

The margin of a group is the largest untouched gain plus a slack for photos not seen: left
one photo out, by how much that photo's largest untouched gain exceeded the largest of the
other photos of its group — the largest such excess over all photos and groups (pooled:
each group holds five or six photos), at least ``HARM_SLACK``. ``--slack fixed`` uses
``HARM_SLACK`` alone. The share of the group's degraded cases whose gain clears the margin
is reported (those get their correction in
full; the others are scaled down to the bound, which still brings them closer when the
full correction would have). The last line is one JSON object with the margins and the
figures behind them, and the black points (``agent.search.reward.black_point``) of the
untouched cases (largest) and the faded ones (smallest) behind ``FADED_BLACK``. Nothing here
looks at the held-out photos.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.brain.context import scene_context  # noqa: E402
from agent.brain.perceiver import perceive, propose  # noqa: E402
from agent.search.mcts import apply_candidate  # noqa: E402
from agent.search.reward import (  # noqa: E402
    HARM_BOUND,
    HARM_SLACK,
    TONAL_OPS,
    black_point,
    deviation,
    natural_term,
    predicted_gain,
    predictions,
)
from eval import naturalness  # noqa: E402
from eval.photos import BENCH_DEGRADATIONS, TRAIN_PHOTOS, load_photo  # noqa: E402


def crops(img: np.ndarray) -> dict[str, np.ndarray]:
    """Close-ups of a photo: the centre half, the top-left and bottom-right 60 %."""
    h, w = img.shape[:2]
    return {"centre": img[h // 4: 3 * h // 4, w // 4: 3 * w // 4],
            "top_left": img[: int(h * 0.6), : int(w * 0.6)],
            "bottom_right": img[int(h * 0.4):, int(w * 0.4):]}


def largest_gain(img: np.ndarray) -> tuple[float, str]:
    """The largest predicted gain among proposals that move ``img`` past the bound."""
    perception = perceive(img)
    before = predictions(img)
    best, name = -math.inf, ""
    for cand in propose(perception=perception, k=24, polish=False):
        if cand.action.operation not in TONAL_OPS:
            continue
        result = apply_candidate(img, cand)
        if deviation(result, img) <= HARM_BOUND:
            continue
        gain = predicted_gain(before, natural_term(result, before, cand, img))
        if gain > best:
            best, name = gain, cand.key
    return best, name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leave-one-out", required=True, metavar="DIR")
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--slack", choices=("loo", "fixed"), default="loo")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    rows = []
    for photo in TRAIN_PHOTOS:
        naturalness.use_model(Path(args.leave_one_out) / f"{photo}.json")
        if (naturalness.load_model() or None) is None or \
                naturalness.load_model().info.get("left_out") != photo:
            raise SystemExit(f"no model fitted without {photo} in {args.leave_one_out}")
        clean = load_photo(photo, args.size)
        cases = [("untouched", "whole", clean)] + \
            [("untouched", k, np.ascontiguousarray(v)) for k, v in crops(clean).items()] + \
            [("degraded", k, f(clean)) for k, f in BENCH_DEGRADATIONS.items()]
        for kind, label, img in cases:
            flags = scene_context(img).flags
            gain, name = largest_gain(img)
            group = "natural" if flags else "ordinary"
            black = black_point(img)
            rows.append({"photo": photo, "case": label, "kind": kind, "group": group,
                         "flags": list(flags), "gain": None if gain == -math.inf else
                         round(gain, 3), "correction": name, "black_point": round(black, 1)})
            print(f"{photo:13s} {label:16s} {kind:9s} {group:8s} "
                  f"{'-' if gain == -math.inf else f'{gain:5.2f}'} {name} {list(flags)} "
                  f"black point {black:.0f}", flush=True)
    naturalness.use_model(None)
    slack = HARM_SLACK
    if args.slack == "loo":
        for group in ("ordinary", "natural"):
            per_photo: dict[str, float] = {}
            for r in rows:
                if r["group"] == group and r["kind"] == "untouched" and r["gain"] is not None:
                    per_photo[r["photo"]] = max(per_photo.get(r["photo"], -math.inf), r["gain"])
            for photo, top in per_photo.items():
                others = [v for k, v in per_photo.items() if k != photo]
                if others:
                    slack = max(slack, top - max(others))
    margins, figures = {}, {}
    for group in ("ordinary", "natural"):
        untouched = [r["gain"] for r in rows if r["group"] == group and
                     r["kind"] == "untouched" and r["gain"] is not None]
        degraded = [r["gain"] for r in rows if r["group"] == group and r["kind"] == "degraded"
                    and r["gain"] is not None]
        margin = (max(untouched) + slack) if untouched else slack
        passed = float(np.mean([g >= margin for g in degraded])) if degraded else 0.0
        margins[group] = round(margin, 2)
        figures[group] = {"untouched_cases": len(untouched), "degraded_cases": len(degraded),
                          "untouched_max": round(max(untouched), 3) if untouched else None,
                          "degraded_median": round(float(np.median(degraded)), 3)
                          if degraded else None, "degraded_passing": round(passed, 3)}
    blacks = {kind: [r["black_point"] for r in rows if r["kind"] == kind and
                     (kind == "untouched" or r["case"] == "faded")]
              for kind in ("untouched", "degraded")}
    figures["black_point"] = {"untouched_max": max(blacks["untouched"]),
                              "faded_min": min(blacks["degraded"])}
    print(json.dumps({"margins": margins,
                      "bound": HARM_BOUND, "slack": round(slack, 3), "figures": figures}))


if __name__ == "__main__":
    main()
