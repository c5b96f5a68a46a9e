"""Autopilot against one-click auto-enhance on photos it has never seen (issue 15).

Usage: ``python bench/autopilot_quality.py [--split heldout] [--size 512]
[--iterations 3 --simulations 20 --depth 3 | --budget batch]
[--methods autopilot,accepted,autocontrast,greyworld] [--leave-one-out DIR]``

``--split real_heldout`` runs the real photographs held out for issue 33
(``eval.photos.REAL_HELDOUT``, from Debian packages through ``eval.realphotos``);
``real_validation`` and ``real_train`` the other two parts of that split. ``--budget
batch`` uses the batch's default budget (2 iterations × 8 simulations × depth 2,
``agent.batch.job_settings``) instead of the three numbers.

Photos: ``eval.photos.HELDOUT_PHOTOS`` by default (colour photos shipped inside Gradio,
Matplotlib and scikit-learn that no training or tuning has seen), long side at most
``--size``; ``--split train`` runs the photos the evaluator was fitted on instead.
Each photo is degraded in the six ordinary ways of ``eval.photos.BENCH_DEGRADATIONS`` and
every method runs on the degraded copy; a case counts as "closer" when the result's PSNR
against the undegraded photo beats the degraded copy's. Each method also runs on the
untouched photo (PSNR of its output against its input: 100 = unchanged).

``--leave-one-out DIR`` runs the training split with each photo judged by an evaluator
fitted without it (``scripts/train_naturalness.py --leave-one-out DIR``): the validation
figure the Autopilot's knobs are chosen on, so that the held-out split is only reported.

``--validation`` runs only the untouched validation photos of issue 28
(``eval.photos.VALIDATION_UNTOUCHED``: strong natural colour, one-hue frames, twilight, low
key, water, close-ups) through every method and reports each one's PSNR against its input,
the minimum, the median and how many stay at 35 dB or more.

Methods: ``autopilot`` (``agent.search.mcts.autopilot``, one persisted memory shared by the
whole run, as in the app), ``accepted`` (the same run with the change its do-no-harm guard
held back accepted: ``suggestions``' ``full_strength`` entry, one click in the app; its
seconds are those of the replay only when ``autopilot`` is also chosen), ``autocontrast``
(PIL's ``ImageOps.autocontrast``) and ``greyworld`` (grey-world channel gains, then
``autocontrast``). The last line is one JSON object with, per method, the share of cases
brought closer, the mean PSNR gain and the mean/min/median PSNR on the untouched photos
(and each one's, ``untouched_psnr``); the load average is printed before and after
(timings taken on a shared machine).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.search.autopilot_memory import AutopilotMemory  # noqa: E402
from agent.search.mcts import autopilot  # noqa: E402
from agent.search.suggestions import FULL_STRENGTH, accept_full_strength  # noqa: E402
from eval import naturalness  # noqa: E402
from eval.photos import (  # noqa: E402
    BENCH_DEGRADATIONS,
    HELDOUT_PHOTOS,
    REAL_HELDOUT,
    REAL_TRAIN,
    REAL_VALIDATION,
    TRAIN_PHOTOS,
    VALIDATION_UNTOUCHED,
    load_photo,
    load_validation,
    psnr,
)

SPLITS = {"heldout": HELDOUT_PHOTOS, "train": TRAIN_PHOTOS, "real_heldout": REAL_HELDOUT,
          "real_validation": REAL_VALIDATION, "real_train": REAL_TRAIN}
#: The batch's default Autopilot budget (``agent.batch.job_settings``).
BATCH_BUDGET = {"iterations": 2, "simulations": 8, "depth": 2}


def autocontrast(img: np.ndarray) -> np.ndarray:
    """PIL's one-line auto-enhance (per-channel stretch of the histogram's ends)."""
    return np.asarray(ImageOps.autocontrast(Image.fromarray(img)), dtype=np.uint8)


def greyworld_autocontrast(img: np.ndarray) -> np.ndarray:
    """Grey-world balance (channel means made equal) followed by ``autocontrast``."""
    x = img.astype(np.float32)
    means = x.reshape(-1, 3).mean(axis=0)
    balanced = np.clip(x * (means.mean() / np.maximum(means, 1e-3)) + 0.5, 0, 255)
    return autocontrast(balanced.astype(np.uint8))


def _autopilot_methods(budget: dict, memory_path: Path
                       ) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """``autopilot`` (its result as it comes back) and ``accepted`` (the same run with its
    held-back suggestion accepted, one click in the app; the run's result when the guard
    held nothing back). One run serves both for the same photo."""
    last: dict = {}

    def result(img: np.ndarray):
        key = hashlib.sha1(img.tobytes()).hexdigest()
        if last.get("key") != key:
            memory = AutopilotMemory.load(memory_path)
            last.update(key=key, result=autopilot(img, memory=memory, **budget))
        return last["result"]

    def run(img: np.ndarray) -> np.ndarray:
        return result(img).image

    def accepted(img: np.ndarray) -> np.ndarray:
        r = result(img)
        held = [s for s in r.suggestions if s["operation"] == FULL_STRENGTH]
        return accept_full_strength(img, held[0])[-1][0] if held else r.image

    return {"autopilot": run, "accepted": accepted}


def _evaluator_without(photo: str, folder: Path) -> None:
    """Point the Autopilot at the evaluator fitted without ``photo``."""
    naturalness.use_model(folder / f"{photo}.json")
    model = naturalness.load_model()
    if model is None or model.info.get("left_out") != photo:
        raise SystemExit(f"{folder / (photo + '.json')} is not a model fitted without {photo}")


def _untouched(values: dict[str, float]) -> dict:
    v = list(values.values())
    return {"untouched_psnr_mean": round(float(np.mean(v)), 2),
            "untouched_psnr_min": round(float(np.min(v)), 2),
            "untouched_psnr_median": round(float(np.median(v)), 2),
            "untouched_at_35db": int(sum(x >= 35.0 for x in v)),
            "untouched_psnr": {k: round(x, 2) for k, x in values.items()}}


def _validation(methods: dict[str, Callable[[np.ndarray], np.ndarray]], chosen: list[str],
                size: int, budget: dict) -> None:
    values: dict[str, dict[str, float]] = {m: {} for m in chosen}
    seconds = {m: 0.0 for m in chosen}
    for label, (_, _, kind) in VALIDATION_UNTOUCHED.items():
        img = load_validation(label, size)
        line = [f"{label:16s} {kind[:30]:30s}"]
        for m in chosen:
            start = time.perf_counter()
            out = methods[m](img)
            seconds[m] += time.perf_counter() - start
            values[m][label] = psnr(out, img)
            line.append(f"{m} {values[m][label]:6.2f}")
        print("  ".join(line), flush=True)
    result = {m: {**_untouched(values[m]), "seconds": round(seconds[m], 1)} for m in chosen}
    for m in chosen:
        r = result[m]
        print(f"{m:13s} untouched min {r['untouched_psnr_min']:.2f} dB, median "
              f"{r['untouched_psnr_median']:.2f} dB, {r['untouched_at_35db']}/"
              f"{len(VALIDATION_UNTOUCHED)} at ≥ 35 dB")
    print(json.dumps({"split": "untouched validation", "photos": list(VALIDATION_UNTOUCHED),
                      "size": size, "budget": budget,
                      "load_average": [round(x, 2) for x in os.getloadavg()],
                      "methods": result}))


def _summary(rows: list[dict], untouched: dict[str, float]) -> dict:
    gains = [r["after"] - r["before"] for r in rows]
    return {"closer_rate": round(float(np.mean([g > 0 for g in gains])), 3),
            "mean_psnr_gain": round(float(np.mean(gains)), 2),
            "worse_cases": int(sum(g < 0 for g in gains)),
            **_untouched(untouched),
            "per_degradation": {k: {"closer": int(sum(r["after"] > r["before"] for r in rows
                                                      if r["degradation"] == k)),
                                    "mean_gain": round(float(np.mean(
                                        [r["after"] - r["before"] for r in rows
                                         if r["degradation"] == k])), 2)}
                                for k in BENCH_DEGRADATIONS}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=tuple(SPLITS), default="heldout")
    parser.add_argument("--budget", choices=("", "batch"), default="",
                        help="'batch': the batch's default budget (2 x 8 x 2)")
    parser.add_argument("--photos", default="", help="comma-separated names (overrides --split)")
    parser.add_argument("--size", type=int, default=512, help="long side of the photos")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--simulations", type=int, default=20)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--methods", default="autopilot,accepted,autocontrast,greyworld")
    parser.add_argument("--leave-one-out", default="", metavar="DIR",
                        help="training split, each photo judged by the evaluator fitted "
                             "without it (DIR/<photo>.json from scripts/train_naturalness.py "
                             "--leave-one-out DIR): how the Autopilot fares on photos its "
                             "evaluator has not seen, without touching the held-out split")
    parser.add_argument("--validation", action="store_true",
                        help="only the untouched validation photos of issue 28 "
                             "(eval.photos.VALIDATION_UNTOUCHED)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    if args.leave_one_out:
        args.split = "train"
    photos = [p for p in args.photos.split(",") if p] or list(SPLITS[args.split])
    budget = dict(iterations=args.iterations, simulations=args.simulations, depth=args.depth)
    if args.budget == "batch":
        budget = dict(BATCH_BUDGET)
    memory_path = Path(tempfile.mkdtemp(prefix="autopilot-bench-")) / "memory.json"
    methods: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        **_autopilot_methods(budget, memory_path),
        "autocontrast": autocontrast, "greyworld": greyworld_autocontrast}
    chosen = [m for m in args.methods.split(",") if m]
    if args.validation:
        _validation(methods, chosen, args.size, budget)
        return
    rows: dict[str, list[dict]] = {m: [] for m in chosen}
    untouched: dict[str, dict[str, float]] = {m: {} for m in chosen}
    seconds: dict[str, float] = {m: 0.0 for m in chosen}
    for name in photos:
        if args.leave_one_out:
            _evaluator_without(name, Path(args.leave_one_out))
        clean = load_photo(name, args.size)
        cases = [("untouched", clean)] + [(k, f(clean)) for k, f in BENCH_DEGRADATIONS.items()]
        for kind, img in cases:
            line = [f"{name:13s} {kind:16s}"]
            for m in chosen:
                start = time.perf_counter()
                out = methods[m](img)
                seconds[m] += time.perf_counter() - start
                if kind == "untouched":
                    untouched[m][name] = psnr(out, clean)
                    line.append(f"{m} {untouched[m][name]:6.2f}")
                else:
                    row = {"photo": name, "degradation": kind, "before": psnr(img, clean),
                           "after": psnr(out, clean)}
                    rows[m].append(row)
                    line.append(f"{m} {row['before']:5.2f}->{row['after']:5.2f}")
            print("  ".join(line), flush=True)
    result = {m: {**_summary(rows[m], untouched[m]), "seconds": round(seconds[m], 1)}
              for m in chosen}
    for m in chosen:
        r = result[m]
        print(f"{m:13s} closer {r['closer_rate']:.0%}  mean gain {r['mean_psnr_gain']:+.2f} dB"
              f"  untouched {r['untouched_psnr_mean']:.1f} dB (min {r['untouched_psnr_min']:.1f},"
              f" median {r['untouched_psnr_median']:.1f})")
    split = "train, leave one photo out" if args.leave_one_out else args.split
    print(json.dumps({"split": split if not args.photos else "custom", "photos": photos,
                      "cases": len(photos) * len(BENCH_DEGRADATIONS), "size": args.size,
                      "budget": budget, "load_average": [round(x, 2) for x in os.getloadavg()],
                      "methods": result}))


if __name__ == "__main__":
    main()
