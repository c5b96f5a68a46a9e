"""How long matching a reference's look takes on a 12-MP photo (issue 35: ≤ 1.5 s).

A real photo (scikit-learn's ``china``, shipped in a dependency; ``eval.photos``) is
upscaled to 12 MP (bicubic: no invented scene) and matched to another real photo
(scikit-image's ``rocket``) with ``match_reference`` exactly as the editor runs it on the
whole frame: fit on small copies, the curve and tables applied at native resolution.
The reference is passed at 1024 px on its long side, as the session passes it.

Run: ``.venv/bin/python bench/reference_match.py`` (``--mp 12``, ``--repeat 5``,
``--region sky`` to match the sky only, through the executor with its feather). The last
printed line is one JSON object: ``{"mp", "width", "height", "region", "seconds_median",
"seconds_min", "seconds_all", "cpu_seconds_median" (all threads), "load_1min", "cores",
"look_start", "look_end", "target_s"}``. On a shared machine read ``seconds_min`` with
the load beside it: other processes' load stretches the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent import executor  # noqa: E402
from eval.look import look_distance  # noqa: E402
from eval.photos import load_photo  # noqa: E402
from pipelines.editors.base import EditRequest  # noqa: E402
from pipelines.operations.reference import reference_region  # noqa: E402
from pipelines.operations.registry import get  # noqa: E402

TARGET_S = 1.5


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mp", type=float, default=12.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--region", choices=("whole", "sky"), default="whole")
    args = parser.parse_args(argv)
    photo = load_photo("china", 4096)
    scale = (args.mp * 1e6 / (photo.shape[0] * photo.shape[1])) ** 0.5
    size = (round(photo.shape[1] * scale), round(photo.shape[0] * scale))
    big = cv2.resize(photo, size, interpolation=cv2.INTER_CUBIC)
    reference = load_photo("rocket", 1024)
    op = get("match_reference")
    params = op.validate({"image": reference})
    mask = np.ones(big.shape[:2], bool)
    if args.region == "sky":
        mask = reference_region(big, "sky")
    request = EditRequest(kind="adjust", operation=op.name, params=params)
    times, cpu, out = [], [], big
    for _ in range(args.repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        if args.region == "whole":
            out = op.apply(big, mask, params)
        else:
            out = executor.execute(big, request, mask).paste(big)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    where = None if args.region == "whole" else mask
    result = {"mp": round(big.shape[0] * big.shape[1] / 1e6, 2), "width": big.shape[1],
              "height": big.shape[0], "region": args.region,
              "seconds_median": round(statistics.median(times), 3),
              "seconds_min": round(min(times), 3),
              "seconds_all": [round(t, 3) for t in times],
              "cpu_seconds_median": round(statistics.median(cpu), 3),
              "load_1min": round(os.getloadavg()[0], 2), "cores": os.cpu_count(),
              "look_start": round(look_distance(big, reference, where).total, 2),
              "look_end": round(look_distance(out, reference, where).total, 2),
              "target_s": TARGET_S}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
