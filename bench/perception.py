"""Benchmark the embedded perception stack on the CPU.

1. Latency per model on a 12-MP photo (skimage's ``coffee`` upscaled to 4240×2828): the
   frame pass of each net including its resize from 12 MP (NanoDet 416², BlazeFace 256²,
   U²-Net-p 320², PP-OCRv4 text detection at 960 px), medians of ``--repeat`` runs after
   one warm-up.
2. The whole localisation of one target (``PerceptionLocalizer.locate``) at 12 MP and
   20 MP (5472×3648): "the cup" on the upscaled coffee photo (found on the frame) and "the
   cup" pasted small into a 20-MP render (found by the zoom search over tiles).
3. Mean box IoU of the returned masks with the hand-drawn boxes of
   ``tests/data/perception_cases.json``, per split (tune, held-out, zoom), and the mask
   IoU where a case has an outline (the cup's hand-drawn polygon, the horse's exact
   silhouette).

Usage: ``python bench/perception.py [--repeat 5]``. The last printed line is one JSON
object with ``latency_ms_12mp`` (per model), ``locate_ms`` (per scene), ``mean_iou``
(per split), ``mask_iou`` (per outlined case), ``cases`` and ``load_average``.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipelines.localizers import PerceptionLocalizer  # noqa: E402
from pipelines.perception.detectors import (  # noqa: E402
    FaceDetector,
    ObjectDetector,
    SalientSegmenter,
    TextDetector,
)
from tests.perception_cases import (  # noqa: E402
    box_iou,
    load_cases,
    mask_box,
    mask_iou,
    photo_by_name,
    render_zoom_case,
)


def _median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 1)


def _upscaled(name: str, width: int, height: int) -> np.ndarray:
    return cv2.resize(photo_by_name(name), (width, height), interpolation=cv2.INTER_CUBIC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    big = _upscaled("coffee", 4240, 2828)
    objects, faces, salient = ObjectDetector(), FaceDetector(), SalientSegmenter()
    text = TextDetector()
    latency = {
        "nanodet": _median_ms(lambda: objects.detect(big), args.repeat),
        "blazeface": _median_ms(lambda: faces.detect(big), args.repeat),
        "u2netp": _median_ms(lambda: salient.saliency(big), args.repeat),
        "ppocr_det": _median_ms(lambda: text.detect(big), args.repeat),
    }
    print("latency per model at 12 MP (ms):", latency)

    loc = PerceptionLocalizer()
    cases = {c.id: c for c in load_cases()}
    zoom = next(c for c in cases.values() if c.split == "zoom" and c.image_name == "coffee")
    render20 = render_zoom_case(photo_by_name("coffee"), {**zoom.render,
                                                          "canvas": [5472, 3648]})
    scenes = {
        "cup_12mp_frame": (big, "the cup"),
        "cup_20mp_frame": (_upscaled("coffee", 5472, 3648), "the cup"),
        "small_cup_20mp_zoom": (render20, "the cup"),
    }
    locate_ms = {}
    for key, (image, phrase) in scenes.items():
        found = loc.locate(image, phrase)
        locate_ms[key] = _median_ms(lambda i=image, p=phrase: loc.locate(i, p),
                                    max(1, args.repeat // 2))
        print(f"{key}: {found.status} ({found.reason}) {locate_ms[key]} ms")

    ious: dict[str, list[float]] = {}
    outline: dict[str, float] = {}
    for case in cases.values():
        found = loc.locate(case.image(), case.phrase)
        mask = found.union() if found.status == "resolved" else None
        iou = box_iou(mask_box(mask), case.box) if mask is not None and mask.any() else 0.0
        ious.setdefault(case.split, []).append(iou)
        truth = case.truth_mask(case.image().shape[:2])
        if truth is not None:
            outline[case.id] = round(mask_iou(mask, truth), 3) if mask is not None else 0.0
        print(f"{case.id}: {found.status} IoU {iou:.3f}")
    mean_iou = {k: round(float(np.mean(v)), 3) for k, v in ious.items()}
    print(json.dumps({"latency_ms_12mp": latency, "locate_ms": locate_ms,
                      "mean_iou": mean_iou, "mask_iou": outline,
                      "cases": {k: len(v) for k, v in ious.items()},
                      "load_average": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
