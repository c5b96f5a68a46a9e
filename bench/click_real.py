"""Click-to-select on real photographs: does a click on the named thing select it? (issue 32)

Every honest question ends with "click it" (the app) or ``--point X,Y`` (the CLI), and a
click is the user's answer: the edit then runs on what the click selected and is not
asked again. So a click that selects the wrong extent is a wrong edit the user was led
to. For every case of the real set that names a thing (``eval.realset``, expect
``resolved``) the click lands where a person would put it, on the deepest point of the
true mask (farthest from its edge), and ``pipelines.localizers.point.select_at`` (the
app's, API's, MCP's and CLI's click) selects; the selection is right at IoU ≥
``eval.realset.RIGHT_IOU`` with the true mask.

Usage::

    .venv/bin/python bench/click_real.py [--split tune|held_out] [--upscale 16]
        [--cases a,b] [--overlays DIR]

Per case (tune only; held-out prints its aggregate only): IoU, right/WRONG, the source
(detection, salient component, window, SAM) and seconds. The last printed line is one JSON
object: ``{"splits": {split: {"right_share", "mean_iou", "cases", "by_class",
"by_source"}}, "upscale_mp", "seconds", "load_average"}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval.localization import mask_iou  # noqa: E402
from eval.realset import RIGHT_IOU, SPLITS, load_cases, overlay, photo, upscaled  # noqa: E402
from pipelines.localizers.point import select_at  # noqa: E402


def click_point(truth: np.ndarray) -> tuple[int, int]:
    """Where a person clicks a thing: its deepest point (farthest from the mask's edge)."""
    depth = cv2.distanceTransform(np.pad(truth, 1).astype(np.uint8), cv2.DIST_L2, 5)[1:-1, 1:-1]
    y, x = np.unravel_index(int(np.argmax(depth)), depth.shape)
    return int(x), int(y)


def _rates(rows: list[tuple[str, str, float]]) -> dict:
    ious = [iou for _, _, iou in rows]
    by_class: dict[str, list[bool]] = defaultdict(list)
    by_source: dict[str, list[bool]] = defaultdict(list)
    for cls, source, iou in rows:
        by_class[cls].append(iou >= RIGHT_IOU)
        by_source[source].append(iou >= RIGHT_IOU)
    return {"right_share": round(sum(i >= RIGHT_IOU for i in ious) / len(ious), 3) if ious
            else None, "mean_iou": round(float(np.mean(ious)), 3) if ious else None,
            "cases": len(ious),
            "by_class": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_class.items())},
            "by_source": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_source.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=SPLITS, help="one split (default: both)")
    parser.add_argument("--upscale", type=float, help="run photos < 12 MP upscaled to MP")
    parser.add_argument("--cases", help="comma-separated case ids (default: all)")
    parser.add_argument("--overlays", help="folder for pictures of the wrong tune clicks")
    args = parser.parse_args()
    start = time.perf_counter()
    out: dict = {"splits": {}}
    for split in (args.split,) if args.split else SPLITS:
        rows = []
        for case in load_cases(split):
            if case.expect != "resolved" or (args.cases and case.id not in
                                             args.cases.split(",")):
                continue
            image, truth = photo(case.photo), case.truth()
            if args.upscale:
                image, truth = upscaled(image, truth, args.upscale)
            x, y = click_point(truth)
            chosen = select_at(image, x, y)
            iou = mask_iou(chosen.mask, truth)
            rows.append((case.cls, chosen.source, iou))
            if split == "tune":
                print(f"{case.cls:13s} {case.id:44s} click ({x}, {y}) IoU {iou:.3f} "
                      f"{'right' if iou >= RIGHT_IOU else 'WRONG'} {chosen.source:10s} "
                      f"{chosen.label[:20]:20s} {chosen.seconds:5.2f} s", flush=True)
                if args.overlays and iou < RIGHT_IOU:
                    folder = Path(args.overlays)
                    folder.mkdir(parents=True, exist_ok=True)
                    picture = overlay(image, truth, chosen.mask)   # fitted to 1,200 px
                    k = picture.shape[1] / image.shape[1]
                    cv2.circle(picture, (round(x * k), round(y * k)), 6, (255, 255, 0), -1)
                    Image.fromarray(picture).save(folder / f"{case.id}.png")
        out["splits"][split] = _rates(rows)
    out["upscale_mp"] = args.upscale
    out["seconds"] = round(time.perf_counter() - start, 1)
    out["load_average"] = [round(v, 2) for v in os.getloadavg()]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
