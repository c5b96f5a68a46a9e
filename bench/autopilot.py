"""Autopilot speed on a 12-MP photo, and the sim-to-real check of 1/4-resolution rewards.

Usage: ``python bench/autopilot.py [--iterations 3 --simulations 20 --depth 3 --top-k 3]``

Builds a 4000×3000 photo by upscaling scikit-image's ``astronaut`` after a known
degradation (darker, warm cast, flatter) so that there is something to fix, runs
``agent.search.mcts.autopilot`` and times it. Then, for every candidate the perceiver proposes on
that photo, it executes the edit at 1/4 resolution and at full resolution, scores both with
the evaluator, and reports the Spearman rank correlation of the two reward lists
(PhotoAgent's Table 3 reports 0.79 at 1/4). The last line is one JSON object; besides the
wall-clock ``seconds`` it reports the process's CPU seconds and the load average at the
start, since a shared machine inflates wall-clock time.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

import cv2
import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.brain.perceiver import _POLISH, perceive, propose  # noqa: E402
from agent.search.autopilot_memory import AutopilotMemory  # noqa: E402
from agent.search.mcts import apply_candidate, autopilot, evaluate  # noqa: E402


def make_photo(width: int = 4000, height: int = 3000) -> np.ndarray:
    """A 12-MP photo: astronaut, degraded (dark, warm cast, flat), upscaled bicubically."""
    from skimage import data

    img = data.astronaut().astype(np.float32)
    img = (img * np.array([1.2, 1.0, 0.7]) * 0.45 + 25).clip(0, 255).astype(np.uint8)
    return cv2.resize(img, (width, height), interpolation=cv2.INTER_CUBIC)


def spearman_quarter(photo: np.ndarray) -> tuple[float, int]:
    """Spearman of rewards at 1/4 vs full resolution over the proposed candidates."""
    perception = perceive(photo)
    cands = propose(perception=perception, k=12)
    # the polish actions widen the candidate set beyond the measured needs
    from agent.actions import Action
    from agent.brain.perceiver import Candidate
    known = {c.key for c in cands}
    for op, params, reason in _POLISH:
        cand = Candidate(Action(kind="adjust", operation=op, params=params), op, reason, 0.1)
        if cand.key not in known:
            cands.append(cand)
    h, w = photo.shape[:2]
    quarter = cv2.resize(photo, (w // 4, h // 4), interpolation=cv2.INTER_AREA)
    low, full = [], []
    for cand in cands:
        low.append(evaluate(apply_candidate(quarter, cand, full_size=(w, h)), quarter))
        full.append(evaluate(apply_candidate(photo, cand), photo))
    rho = spearmanr(low, full).statistic
    return float(rho), len(cands)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--simulations", type=int, default=20)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    photo = make_photo()
    load_before = os.getloadavg()[0]
    cpu0 = time.process_time()
    start = time.perf_counter()
    result = autopilot(photo, iterations=args.iterations, simulations=args.simulations,
                       depth=args.depth, top_k=args.top_k, seed=args.seed,
                       memory=AutopilotMemory())
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu0
    for step in result.steps:
        print(f"  {step.description}: {step.score_before:.4f} -> {step.score_after:.4f}")
    start = time.perf_counter()
    rho, n = spearman_quarter(photo)
    print(json.dumps({"seconds": round(seconds, 2), "spearman_quarter": round(rho, 3),
                      "cpu_seconds": round(cpu_seconds, 2), "cores": os.cpu_count(),
                      "load_average_at_start": round(load_before, 1),
                      "candidates": n, "megapixels": round(photo.size / 3e6, 1),
                      "score_before": round(result.score_before, 4),
                      "score_after": round(result.score_after, 4),
                      "steps": len(result.steps), "iterations": args.iterations,
                      "iterations_searched": len(result.tree["iterations"]),
                      "simulations": args.simulations, "depth": args.depth,
                      "spearman_seconds": round(time.perf_counter() - start, 1)}))


if __name__ == "__main__":
    main()
