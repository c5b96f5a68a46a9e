"""Issue 32, "better eyes": the candidate segmenters against today's U²-Net-p, on real photos.

Each model sees what the localiser gives today's one: the crop of a box around the named
thing (the hand-drawn mask's box, 15 % margin each side, as a detector's box would be), at
the model's working size; its map (min-max normalised, as ``SalientSegmenter``) is
thresholded at 0.5 at the crop's size (long side at most 2048 px) and compared with the
mask: IoU, boundary F (2 px, ``eval.realset.boundary_f``), wall and CPU milliseconds of
the forward pass alone. Cases: the real-photo set's **tune** resolved cases (never the
held-out ones) and labelme's human polygons of tune photos.

Models: ``u2netp`` (kept, ``weights/``), and the candidates of
``pipelines/perception/candidates.json`` fetched by ``python -m pipelines.perception fetch
--candidates`` (``--dir`` says where they are): full U²-Net at 320, IS-Net (fp16 weights
run as float32) at 1024 and, re-sized in memory, at 512.

Usage: ``python bench/segmenters.py [--dir weights/candidates] [--models a,b]``; the last
line is one JSON object: per model the mean IoU, mean boundary F, median ms and CPU ms, the
case count, and ``load_average``.

``--people`` instead measures the whole box cut the localiser makes of a person
(``segment.refine_box`` at native resolution, as ``PerceptionLocalizer._refine`` runs it):
U²-Net-p + GrabCut (``u2netp``) against MediaPipe Selfie (``selfie``,
``pipelines.perception.people``), the box being the true outline's box grown by
``--box-margin`` (5 %) on each side as a detector's would be. Crops: the tune cases naming
a whole person (``PERSON``) and labelme's person polygons of tune photos. Per crop and in
the JSON line: cut IoU, leak (pixels found beyond the true outline, at native size), CPU ms
of the whole cut.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval import realphotos, realset  # noqa: E402
from eval.localization import mask_iou  # noqa: E402
from pipelines.perception import store  # noqa: E402

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
#: name → (file, folder key, side, normalisation)
MODELS = {
    "u2netp@224": ("u2netp.onnx", "kept", 224, "imagenet"),
    "u2netp@320": ("u2netp.onnx", "kept", 320, "imagenet"),
    "u2net@320": ("u2net.onnx", "candidates", 320, "imagenet"),
    "isnet@1024": ("isnet.onnx", "candidates", 1024, "half"),
    "isnet@512": ("isnet.onnx", "candidates", 512, "half"),
}


def at_side(path: Path, side: int) -> bytes:
    """IS-Net's graph for another input side: its upsampling targets are constants for
    1024 px, scaled here (``side`` a multiple of 64 keeps every stage exact)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    made = {o: n for n in graph.node for o in n.output}
    for node in graph.node:
        if node.op_type != "Resize":
            continue
        const = made[made[node.input[3]].input[1]]
        for attr in const.attribute:
            value = numpy_helper.to_array(attr.t)
            attr.t.CopyFrom(numpy_helper.from_array(
                np.round(value * side / 1024).astype(value.dtype), attr.t.name))
    for value in list(graph.input) + list(graph.output):
        for dim in value.type.tensor_type.shape.dim[2:]:
            dim.dim_value = side
    return model.SerializeToString()


class Model:
    """One segmenter on OpenCV's dnn, timed per forward pass."""

    def __init__(self, name: str, folders: dict[str, Path]) -> None:
        file, key, self.side, self.norm = MODELS[name]
        path = folders[key] / file
        if name.startswith("isnet") and self.side != 1024:
            self.net = cv2.dnn.readNetFromONNX(np.frombuffer(at_side(path, self.side),
                                                             np.uint8))
        else:
            self.net = cv2.dnn.readNetFromONNX(str(path))

    def __call__(self, crop: np.ndarray) -> tuple[np.ndarray, float, float]:
        side = self.side
        small = cv2.resize(crop, (side, side), interpolation=cv2.INTER_AREA).astype(np.float32)
        if self.norm == "imagenet":
            blob = (small / max(1.0, float(small.max())) - MEAN) / STD
        else:                               # IS-Net: (x - 128) / 256, as IMG.LY feeds it
            blob = (small - 128.0) / 256.0
        blob = blob.transpose(2, 0, 1)[None].copy()
        wall, cpu = time.perf_counter(), time.process_time()
        self.net.setInput(blob)
        prob = self.net.forward()[0].reshape(side, side)
        ms = (time.perf_counter() - wall) * 1e3
        cpu_ms = (time.process_time() - cpu) * 1e3
        lo, hi = float(prob.min()), float(prob.max())
        prob = (prob - lo) / (hi - lo) if hi > lo else np.zeros_like(prob)
        return cv2.resize(prob, (crop.shape[1], crop.shape[0])), ms, cpu_ms


def cases() -> list[tuple[str, str, str, np.ndarray]]:
    """(id, class, photo, truth) for the tune cases with a mask and tune labelme polygons."""
    out = []
    for case in realset.load_cases("tune"):
        if case.expect == "resolved":
            out.append((case.id, case.cls, case.photo, case.truth()))
    for pid in sorted(realphotos.catalogue()):
        if pid in realset.HELD_OUT:
            continue
        for k, (label, points) in enumerate(realphotos.polygons(pid)):
            if label.startswith("__"):
                continue
            truth = np.zeros(realset.photo(pid).shape[:2], np.uint8)
            cv2.fillPoly(truth, [np.round(np.array(points)).astype(np.int32)], 1)
            out.append((f"{pid}#{k}:{label}", "labelme", pid, truth > 0))
    return out


def crop_of(image: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The truth's box with a 15 % margin, at most 2048 px long."""
    ys, xs = np.nonzero(truth)
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    px, py = int(0.15 * (x1 - x0)) + 2, int(0.15 * (y1 - y0)) + 2
    x0, y0 = max(0, x0 - px), max(0, y0 - py)
    x1, y1 = min(image.shape[1], x1 + px), min(image.shape[0], y1 + py)
    crop, t = image[y0:y1, x0:x1], truth[y0:y1, x0:x1]
    k = min(1.0, 2048 / max(crop.shape[:2]))
    if k < 1:
        crop = cv2.resize(crop, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
        t = cv2.resize(t.astype(np.uint8), (crop.shape[1], crop.shape[0]),
                       interpolation=cv2.INTER_NEAREST) > 0
    return crop, t


#: a tune case's phrase that names a whole person (not a face, legs or a held thing)
PERSON = re.compile(r"^the (man|woman|child|person|boy|girl)\b(?!'s)")


def people_crops() -> list[tuple[str, str, np.ndarray]]:
    """(id, photo, truth at native size) of every whole person in the tune split, each
    person once (two phrases naming one man share a mask; labelme's polygon of a case's
    person is kept only when it differs from the case's mask)."""
    found = [(c.id, c.photo, c.truth()) for c in realset.load_cases("tune")
             if c.expect == "resolved" and c.cls == "people" and PERSON.match(c.phrase)]
    for pid in sorted(realphotos.catalogue()):
        if pid in realset.HELD_OUT:
            continue
        for k, (label, points) in enumerate(realphotos.polygons(pid)):
            if label == "person":
                truth = np.zeros(realset.photo(pid).shape[:2], np.uint8)
                cv2.fillPoly(truth, [np.round(np.array(points)).astype(np.int32)], 1)
                found.append((f"{pid}#{k}:person", pid, truth > 0))
    out: list[tuple[str, str, np.ndarray]] = []
    for cid, pid, truth in found:
        if not any(p == pid and mask_iou(t, truth) > 0.9 for _, p, t in out):
            out.append((cid, pid, truth))
    return out


def people(margin: float) -> None:
    """``--people``: the localiser's person cut, U²-Net-p + GrabCut against Selfie."""
    from pipelines.localizers.perception import CROP_SIDE, SALIENT_CROP_SIDE, _Models
    from pipelines.localizers.segment import refine_box
    from pipelines.perception import people as selfie

    if selfie.segmenter() is None:
        raise SystemExit("selfie.onnx is not installed: python -m pipelines.perception fetch")
    salient = _Models.get().salient
    cuts = {"u2netp": None, "selfie": selfie.cut}
    rows: dict[str, list[tuple[float, int, float]]] = {k: [] for k in cuts}
    for cid, pid, truth in people_crops():
        rgb = realset.photo(pid)
        ys, xs = np.nonzero(truth)
        mx, my = margin * (xs.max() + 1 - xs.min()), margin * (ys.max() + 1 - ys.min())
        box = (xs.min() - mx, ys.min() - my, xs.max() + 1 + mx, ys.max() + 1 + my)
        line = []
        for name, outline in cuts.items():
            cpu = time.process_time()
            found = refine_box(rgb, box, lambda crop: salient.saliency(crop, SALIENT_CROP_SIDE),
                               CROP_SIDE, True, outline)
            cpu_ms = (time.process_time() - cpu) * 1e3
            iou, leak = mask_iou(found, truth), int((found & ~truth).sum())
            rows[name].append((iou, leak, cpu_ms))
            line.append(f"{name} {iou:.3f} leak {leak:6d} {cpu_ms:4.0f} ms")
        print(f"{cid[:40]:40s} " + "  ".join(line), flush=True)
    summary: dict = {n: {"mean_iou": round(float(np.mean([r[0] for r in v])), 3),
                         "mean_leak_px": round(float(np.mean([r[1] for r in v]))),
                         "cpu_ms": round(float(np.median([r[2] for r in v]))),
                         "crops": len(v)} for n, v in rows.items()}
    summary["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(summary))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--people", action="store_true",
                        help="the person box cut: U²-Net-p + GrabCut against Selfie")
    parser.add_argument("--box-margin", type=float, default=0.05,
                        help="--people: the box around the true outline, share per side")
    parser.add_argument("--dir", type=Path, default=store.weights_dir() / "candidates")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--skip-class", default="sky_boundary,sky_water",
                        help="classes no salient-object model is asked about (sky.py's)")
    args = parser.parse_args()
    if args.people:
        people(args.box_margin)
        return
    folders = {"kept": store.weights_dir(), "candidates": args.dir}
    names = args.models.split(",")
    models = {n: Model(n, folders) for n in names}
    skip = set(args.skip_class.split(","))
    rows: dict[str, list[tuple[float, float, float, float]]] = {n: [] for n in names}
    for cid, cls, pid, truth in cases():
        if cls in skip or not truth.any():
            continue
        crop, t = crop_of(realset.photo(pid), truth)
        line = []
        for name, model in models.items():
            prob, ms, cpu_ms = model(crop)
            found = prob >= 0.5
            iou, bf = mask_iou(found, t), realset.boundary_f(found, t)
            rows[name].append((iou, bf, ms, cpu_ms))
            line.append(f"{name} {iou:.3f}/{bf:.3f}")
        print(f"{cls:12s} {cid[:44]:44s} " + "  ".join(line), flush=True)
    summary = {n: {"mean_iou": round(float(np.mean([r[0] for r in v])), 3),
                   "boundary_f": round(float(np.mean([r[1] for r in v])), 3),
                   "ms": round(float(np.median([r[2] for r in v]))),
                   "cpu_ms": round(float(np.median([r[3] for r in v]))),
                   "cases": len(v)} for n, v in rows.items() if v}
    summary["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
