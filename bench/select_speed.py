"""Click-to-select latency at 12 and 20 MP (issue 24: within 1 s of the click at 20 MP).

Usage::

    .venv/bin/python bench/select_speed.py [--repeats 3]

The photo is the held-out two-cup composite of ``tests/critic_pairs.py`` upscaled to each
size; the click is on the left cup's centre and on a plain background point (the
salient/GrabCut fallback). The first click of the process loads the nets and is reported
apart (``first_click_s``). The last line is one JSON object: per size, the median seconds
and the IoU of the selected mask with the pasted cup.
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

from pipelines.localizers.point import select_at  # noqa: E402
from tests.critic_pairs import _two_cups  # noqa: E402

SIZES = {"12MP": (4240, 2827), "20MP": (5472, 3648)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    image, left, _ = _two_cups("chelsea")
    ys, xs = np.nonzero(left)
    cx, cy = float(xs.mean()) / image.shape[1], float(ys.mean()) / image.shape[0]
    t = time.perf_counter()
    select_at(image, cx * image.shape[1], cy * image.shape[0])
    out: dict = {"first_click_s": round(time.perf_counter() - t, 3), "sizes": {}}
    for name, (w, h) in SIZES.items():
        big = cv2.resize(image, (w, h), interpolation=cv2.INTER_CUBIC)
        truth = cv2.resize(left.astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST) > 0
        row: dict = {}
        for where, (px, py) in (("object", (cx * w, cy * h)), ("background", (0.5 * w,
                                                                               0.08 * h))):
            times, found = [], None
            for _ in range(args.repeats):
                t = time.perf_counter()
                found = select_at(big, px, py)
                times.append(time.perf_counter() - t)
            row[f"{where}_median_s"] = round(statistics.median(times), 3)
            row[f"{where}_source"] = found.source
            if where == "object":
                inter = np.logical_and(found.mask, truth).sum()
                row["object_iou"] = round(float(inter / np.logical_or(found.mask, truth).sum()),
                                          3)
        out["sizes"][name] = row
        del big, truth
    out["load_average"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
