"""The zoom search's speed-up (wave 33) keeps every answer: NanoDet's boxes decoded and
suppressed on arrays, only the wanted classes for the zoom's tiles and crops, and the
look-alike comparisons on two threads give the very boxes and scores of the one-by-one
computation they replace (bit for bit, in the same order), on a real photo.

Real NanoDet and U²-Net-p runs (weights from the install step; a missing file fails)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from eval.realset import case_at
from pipelines.perception import zoom
from pipelines.perception.detectors import (
    COCO_CLASSES,
    NANODET_MEAN,
    NANODET_SIDE,
    NANODET_STD,
    NANODET_STRIDES,
    Detection,
    ObjectDetector,
    SalientSegmenter,
    shrink,
)
from tests.perception_cases import load_cases, photo_by_name, render_zoom_case


def _reference_nms(dets: list[Detection], iou: float = 0.5) -> list[Detection]:
    """Greedy per-class NMS as it was written before wave 33."""
    keep: list[Detection] = []
    for label in {d.label for d in dets}:
        group = [d for d in dets if d.label == label]
        boxes = [[d.box[0], d.box[1], d.box[2] - d.box[0], d.box[3] - d.box[1]] for d in group]
        idx = cv2.dnn.NMSBoxes(boxes, [d.score for d in group], 0.0, iou)
        keep += [group[i] for i in np.asarray(idx).reshape(-1)]
    return sorted(keep, key=lambda d: -d.score)


def _reference_detect(detector: ObjectDetector, rgb: np.ndarray, min_score: float,
                      offset: tuple[int, int] = (0, 0)) -> list[Detection]:
    """NanoDet's boxes decoded one cell at a time, as before wave 33."""
    h, w = rgb.shape[:2]
    small = cv2.resize(rgb, (NANODET_SIDE, NANODET_SIDE), interpolation=cv2.INTER_AREA)
    blob = ((small[..., ::-1].astype(np.float32) - NANODET_MEAN) / NANODET_STD)
    outs = detector._forward(blob.transpose(2, 0, 1)[None].copy(), detector.outputs)
    dets = []
    for stride in NANODET_STRIDES:
        side = NANODET_SIDE // stride
        scores = next(o for o in outs if o.shape[1] == side * side and o.shape[2] == 80)[0]
        regs = next(o for o in outs if o.shape[1] == side * side and o.shape[2] != 80)[0]
        cells, classes = np.nonzero(scores >= min_score)
        if not len(cells):
            continue
        bins = regs[cells].reshape(len(cells), 4, -1)
        prob = np.exp(bins - bins.max(axis=2, keepdims=True))
        prob /= prob.sum(axis=2, keepdims=True)
        dist = (prob * np.arange(bins.shape[2])).sum(axis=2) * stride
        cx, cy = (cells % side + 0.5) * stride, (cells // side + 0.5) * stride
        sx, sy = w / NANODET_SIDE, h / NANODET_SIDE
        for k in range(len(cells)):
            box = (max(0.0, (cx[k] - dist[k, 0]) * sx) + offset[0],
                   max(0.0, (cy[k] - dist[k, 1]) * sy) + offset[1],
                   min(w, (cx[k] + dist[k, 2]) * sx) + offset[0],
                   min(h, (cy[k] + dist[k, 3]) * sy) + offset[1])
            dets.append(Detection(box, float(scores[cells[k], classes[k]]),
                                  COCO_CLASSES[classes[k]]))
    return _reference_nms(dets)


def _exact(dets: list[Detection]) -> list[tuple]:
    """Boxes (with their number types), scores and labels, in order."""
    return [(tuple((type(v).__name__, float(v)) for v in d.box), d.score, d.label)
            for d in dets]


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    image, _ = case_at("globe_phone__cup", 1600)    # a cup, a phone and a laptop on a desk
    return np.ascontiguousarray(image)


def test_detect_gives_the_boxes_of_the_one_by_one_decoding(photo) -> None:
    detector = ObjectDetector()
    frame = shrink(photo, 1024)
    for floor in (0.06, 0.1, 0.25):     # the frame pass's floor, a zoom tile's, the default
        got = detector.detect(frame, floor)
        want = _reference_detect(detector, frame, floor)
        assert len(want) >= 2 and _exact(got) == _exact(want), floor
    crop = photo[200:1000, 300:1100]   # a tile placed in a larger photo
    got = detector.detect(crop, 0.1, offset=(300, 200))
    assert _exact(got) == _exact(_reference_detect(detector, crop, 0.1, (300, 200)))


def test_detect_for_some_classes_keeps_exactly_their_boxes(photo) -> None:
    detector = ObjectDetector()
    frame = shrink(photo, 1024)
    every = detector.detect(frame, 0.06)
    for labels in ({"cup"}, {"cell phone", "laptop"}, {"giraffe"}):
        assert _exact(detector.detect(frame, 0.06, labels=labels)) == \
            _exact([d for d in every if d.label in labels]), labels


def test_the_zoom_search_and_its_look_alikes_match_the_one_by_one_search() -> None:
    """Two small cups far apart at 20 MP (the second mirrored and 15 % smaller): the zoom
    stops at the first and finds the second among its look-alikes, with the same
    confirmed boxes as with every class decoded and the comparisons made in turn."""
    case = next(c for c in load_cases() if c.split == "zoom" and c.image_name == "coffee")
    spec = {**case.render, "canvas": [5472, 3648]}
    image = render_zoom_case(photo_by_name("coffee"), {**spec, "at": [700, 500]})
    other = render_zoom_case(photo_by_name("coffee"), {**spec, "at": [4300, 2800],
                                                       "scale": 0.85})
    x0, y0, x1, y1 = spec["crop"]
    pw, ph = round((x1 - x0) * 0.85), round((y1 - y0) * 0.85)
    image[2800:2800 + ph, 4300:4300 + pw] = other[2800:2800 + ph, 4300:4300 + pw][:, ::-1]
    salient = SalientSegmenter().saliency(shrink(image, 512))
    found = zoom.search(ObjectDetector(), image, {"cup"}, 0.2, priority=salient, enough=0.35)

    class OneByOne(ObjectDetector):
        def detect(self, rgb, min_score=0.25, offset=(0, 0), labels=None):  # noqa: ANN001, ANN201
            return [d for d in _reference_detect(self, rgb, min_score, offset)
                    if labels is None or d.label in labels]

    def in_turn(small: np.ndarray, views: list) -> list:
        out = []
        for scale, view in views:
            t = cv2.resize(np.ascontiguousarray(view), None, fx=scale, fy=scale,
                           interpolation=cv2.INTER_AREA)
            fits = min(t.shape[:2]) >= 6 and t.shape[0] < small.shape[0] and \
                t.shape[1] < small.shape[1]
            out.append((t, cv2.matchTemplate(small, t, cv2.TM_CCOEFF_NORMED) if fits else None))
        return out

    threaded, zoom._matches = zoom._matches, in_turn
    try:
        want = zoom.search(OneByOne(), image, {"cup"}, 0.2, priority=salient, enough=0.35)
    finally:
        zoom._matches = threaded
    assert len(found) >= 2 and _exact(found) == _exact(want)   # the look-alike too
