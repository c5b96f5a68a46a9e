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

4. Issue 23's labelled set (``eval/data/localization``, 12–20 MP, split by photo): mean
   mask IoU of the cases that name something (tune / held-out), the share of right
   targets (IoU ≥ 0.5, or an honest refusal of a thing not in the photo), per failure
   class, with the wall and CPU time of each ``locate`` (the machine is shared: CPU time
   is the steadier figure).

Usage: ``python bench/perception.py [--repeat 5] [--skip-models] [--speed-only]``
(``--speed-only``: part 2 alone, its JSON line with ``locate_ms``, ``locate_cpu_ms``,
``locate_thread_ms`` and the load averages; for paired speed runs on a busy machine).
The last printed line is one JSON
object with ``latency_ms_12mp`` (per model), ``locate_ms`` and ``locate_cpu_ms`` (per
scene), ``mean_iou`` (per split of the old box cases), ``mask_iou`` (per outlined case),
``set_mean_iou``, ``set_right_share`` and ``set_by_kind`` (issue 23's set, per split;
``set_clicked_mean_iou`` and ``set_clicked_right_share`` beside them, once the user
clicks the guess a question offers, and ``set_asked_with_guess``, how many named things
were such a question),
``cases``, ``load_average_start`` and ``load_average`` (at the end). ``locate_cpu_ms`` is
the process's CPU time (user + sys, all threads) over the same runs as ``locate_ms``:
on this shared machine the steadier figure. ``locate_thread_ms`` is the calling thread's
own CPU time: OpenCV's nets and resizes split their work over the cores, so the wall time
on an idle machine is at least this and close to it where the work splits evenly, while
CPU time counts every core.
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
    forget_memos,
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
    return _timed(fn, repeat)[0]


def _timed(fn, repeat: int) -> tuple[float, float, float]:
    """Median wall, CPU (user + sys, all threads) and calling-thread CPU milliseconds of
    ``repeat`` runs after one warm-up."""
    fn()
    walls, cpus, own = [], [], []
    for _ in range(repeat):
        forget_memos()      # each repeat runs the nets, as a new photo does
        start, cpu, mine = time.perf_counter(), time.process_time(), time.thread_time()
        fn()
        walls.append((time.perf_counter() - start) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        own.append((time.thread_time() - mine) * 1000)
    return tuple(round(statistics.median(v), 1) for v in (walls, cpus, own))


def labelled_set() -> dict:
    """Issue 23's set: mean mask IoU, share of right targets, per kind, per split."""
    from eval.localization import evaluate, load_cases

    loc = PerceptionLocalizer()
    out: dict = {"mean_iou": {}, "right_share": {}, "by_kind": {}, "cases": {},
                 "locate_ms_median": {}, "clicked_mean_iou": {}, "clicked_right_share": {},
                 "asked_with_guess": {}}
    for split in ("tune", "held_out"):
        got = evaluate(loc.locate, load_cases(split))
        for o in got:
            print(f"{split} {o.case.kind:10s} {o.case.id:38s} {o.status:10s} "
                  f"IoU {o.iou:.3f} {'right' if o.right else 'WRONG'} {o.ms:.0f} ms",
                  flush=True)
        named = [o.iou for o in got if o.case.expect == "resolved"]
        out["mean_iou"][split] = round(float(np.mean(named)), 3)
        out["right_share"][split] = round(sum(o.right for o in got) / len(got), 3)
        # beside them: once the user clicks the guess a question offers (issue 32)
        out["clicked_mean_iou"][split] = round(float(np.mean(
            [o.clicked_iou for o in got if o.case.expect == "resolved"])), 3)
        out["clicked_right_share"][split] = round(sum(o.clicked_right for o in got)
                                                  / len(got), 3)
        out["asked_with_guess"][split] = sum(o.case.expect == "resolved" and
                                             o.asked_with_guess for o in got)
        kinds: dict[str, list[bool]] = {}
        for o in got:
            kinds.setdefault(o.case.kind, []).append(o.right)
        out["by_kind"][split] = {k: f"{sum(v)}/{len(v)}" for k, v in kinds.items()}
        out["cases"][split] = len(got)
        out["locate_ms_median"][split] = round(float(np.median([o.ms for o in got])), 1)
    return out


def _upscaled(name: str, width: int, height: int) -> np.ndarray:
    return cv2.resize(photo_by_name(name), (width, height), interpolation=cv2.INTER_CUBIC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-models", action="store_true",
                        help="leave out the per-model latencies and the old box cases")
    parser.add_argument("--speed-only", action="store_true",
                        help="only the localisation timings (part 2), as one JSON line")
    args = parser.parse_args()
    load_start = [round(v, 2) for v in os.getloadavg()]
    print("load average at start:", load_start, flush=True)
    big = _upscaled("coffee", 4240, 2828)
    objects, faces, salient = ObjectDetector(), FaceDetector(), SalientSegmenter()
    text = TextDetector()
    latency = {} if args.skip_models or args.speed_only else {
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
    locate_ms, locate_cpu_ms, locate_thread_ms = {}, {}, {}
    for key, (image, phrase) in scenes.items():
        found = loc.locate(image, phrase)
        locate_ms[key], locate_cpu_ms[key], locate_thread_ms[key] = _timed(
            lambda i=image, p=phrase: loc.locate(i, p), max(1, args.repeat // 2))
        print(f"{key}: {found.status} ({found.reason}) {locate_ms[key]} ms wall, "
              f"{locate_cpu_ms[key]} ms CPU ({locate_thread_ms[key]} ms on the calling "
              "thread)", flush=True)
    if args.speed_only:
        print(json.dumps({"locate_ms": locate_ms, "locate_cpu_ms": locate_cpu_ms,
                          "locate_thread_ms": locate_thread_ms, "load_average_start": load_start,
                          "load_average": [round(v, 2) for v in os.getloadavg()]}))
        return
    labelled = labelled_set()

    ious: dict[str, list[float]] = {}
    outline: dict[str, float] = {}
    for case in [] if args.skip_models else cases.values():
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
                      "locate_cpu_ms": locate_cpu_ms, "locate_thread_ms": locate_thread_ms,
                      "mean_iou": mean_iou, "mask_iou": outline,
                      "set_mean_iou": labelled["mean_iou"],
                      "set_right_share": labelled["right_share"],
                      "set_clicked_mean_iou": labelled["clicked_mean_iou"],
                      "set_clicked_right_share": labelled["clicked_right_share"],
                      "set_asked_with_guess": labelled["asked_with_guess"],
                      "set_by_kind": labelled["by_kind"], "set_cases": labelled["cases"],
                      "set_locate_ms_median": labelled["locate_ms_median"],
                      "cases": {k: len(v) for k, v in ious.items()},
                      "load_average_start": load_start,
                      "load_average": [round(v, 2) for v in os.getloadavg()]}))


if __name__ == "__main__":
    main()
