"""The embedded detectors, run by OpenCV's dnn module on the CPU.

* ``ObjectDetector`` — NanoDet-g (COCO-80 boxes, 416×416), with a zoom search over
  native-resolution tiles for objects too small to see on the downscaled frame.
* ``FaceDetector`` — BlazeFace full-range (face boxes, 256×256).
* ``SalientSegmenter`` — U²-Net-p (salient-object probability map, 320×320).
* ``TextDetector`` — PP-OCRv4's text detector (a text probability map → text boxes).

Each loads its file from the weights folder on first use (``WeightsMissing`` when the
install step has not run) and serialises calls with a lock (an OpenCV net is not
re-entrant).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import cv2
import numpy as np

from pipelines.perception import shared_memo
from pipelines.perception.store import model_path

log = logging.getLogger(__name__)

COCO_CLASSES = (
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat",
    "traffic light", "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat",
    "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "backpack",
    "umbrella", "handbag", "tie", "suitcase", "frisbee", "skis", "snowboard", "sports ball",
    "kite", "baseball bat", "baseball glove", "skateboard", "surfboard", "tennis racket",
    "bottle", "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple",
    "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair",
    "couch", "potted plant", "bed", "dining table", "toilet", "tv", "laptop", "mouse",
    "remote", "keyboard", "cell phone", "microwave", "oven", "toaster", "sink",
    "refrigerator", "book", "clock", "vase", "scissors", "teddy bear", "hair drier",
    "toothbrush",
)
Box = tuple[float, float, float, float]


@dataclass
class Detection:
    """One detector box in full-resolution pixels."""

    box: Box
    score: float
    label: str


def tile_grid(height: int, width: int, tile: int,
              overlap: float) -> list[tuple[int, int, int, int]]:
    """Overlapping square-ish tiles ``(x0, y0, x1, y1)`` of side ``tile`` covering the image."""
    step = max(1, int(tile * (1.0 - overlap)))

    def starts(size: int) -> list[int]:
        if size <= tile:
            return [0]
        out = list(range(0, size - tile, step))
        return out + [size - tile]

    return [(x, y, min(width, x + tile), min(height, y + tile))
            for y in starts(height) for x in starts(width)]


NANODET_SIDE = 416
NANODET_STRIDES = (8, 16, 32)
NANODET_MEAN = np.array([103.53, 116.28, 123.675], np.float32)    # BGR, as trained
NANODET_STD = np.array([57.375, 57.12, 58.395], np.float32)


#: the last forwards each net remembers, and the most bytes one may take: the salient
#: map (400 KB, 0.5 s of CPU) and faces are kept; a detector pass (1.8 MB, 0.08 s) or a
#: text map (up to 3.7 MB) is not worth the session's tight memory budget
FORWARD_MEMO = 4
FORWARD_MEMO_BYTES = 512 << 10
#: every net made, for ``forget_memos``
_NETS: weakref.WeakSet = weakref.WeakSet()
#: entries of ``shared_memo.FOLDER`` not to read, the net runs again (``forget_memos``)
_FORGOTTEN: set = set()


def forget_memos() -> None:
    """Empty every net's memo of its last answers (a bench timing repeats of one view: each
    repeat must run the nets, as a new photo does), and read none of them from the shared
    folder either."""
    for net in list(_NETS):
        with net._lock:
            _FORGOTTEN.update(shared_memo.entry(net._model, key) for key in net._memo)
            net._memo.clear()


class _Net:
    """An OpenCV net loaded lazily from the weights folder, one call at a time.

    The net's last few outputs are remembered by the exact bytes of their input tensor:
    the same view is asked about more than once (the critic finds the target again on the
    photo the localiser just looked at; several phrases on one photo), and the same
    tensor gets the same answer. A miss costs only the hash (~1 ms a megabyte)."""

    file = ""

    def __init__(self) -> None:
        self._net: cv2.dnn.Net | None = None
        self._lock = threading.Lock()
        self._memo: OrderedDict[tuple, list[np.ndarray]] = OrderedDict()
        self._memo_off = False
        self._model = ""
        _NETS.add(self)

    def _forward(self, blob: np.ndarray, names: list[str] | None = None) -> list[np.ndarray]:
        import hashlib  # here: at module level bench/session_memory.py (no net) peaked ~6 MB higher

        blob = np.ascontiguousarray(blob)
        key = None if self._memo_off else (
            blob.shape, blob.dtype.str, tuple(names or ()),
            hashlib.blake2b(memoryview(blob).cast("B"), digest_size=16).digest())
        with self._lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return [out.copy() for out in self._memo[key]]
            if self._net is None:
                path = model_path(self.file)
                self._net = cv2.dnn.readNetFromONNX(str(path))
                self._model = f"{path}:{path.stat().st_size}:{path.stat().st_mtime_ns}"
            kept = shared_memo.entry(self._model, key) if key is not None else None
            outs = None if kept in _FORGOTTEN else shared_memo.read(kept)
            if outs is None:
                self._net.setInput(blob)
                outs = list(self._net.forward(names)) if names else [self._net.forward()]
            else:
                kept = None                    # read, not new: nothing to leave there
            if key is None:
                return outs
            if sum(out.nbytes for out in outs) > FORWARD_MEMO_BYTES:
                self._memo_off = True          # this net's answers are too big to keep
                return outs
            shared_memo.write(kept, outs)
            _FORGOTTEN.discard(kept)
            self._memo[key] = [out.copy() for out in outs]
            while len(self._memo) > FORWARD_MEMO:
                self._memo.popitem(last=False)
            return outs


def nms(dets: list[Detection], iou: float = 0.5, *, per_label: bool = True) -> list[Detection]:
    """Greedy non-maximum suppression, best score first: among the boxes of each label, or
    among all boxes when ``per_label`` is off (open-vocabulary labels vary by phrase)."""
    keep: list[Detection] = []
    for label in ({d.label for d in dets} if per_label else ({None} if dets else set())):
        group = [d for d in dets if not per_label or d.label == label]
        boxes = [[d.box[0], d.box[1], d.box[2] - d.box[0], d.box[3] - d.box[1]] for d in group]
        idx = cv2.dnn.NMSBoxes(boxes, [d.score for d in group], 0.0, iou)
        keep += [group[i] for i in np.asarray(idx).reshape(-1)]
    return sorted(keep, key=lambda d: -d.score)


# ------------------------------------------------------------------------- objects


#: places that look like a sure find, looked at after the search stopped early
LOOK_ALIKES = 2
#: the least normalised cross-correlation with the find for a place to be looked at (the
#: detector decides; this keeps the passes few: textured ground reaches ~0.63)
LOOK_ALIKE_NCC = 0.7
#: the find's longest side on the copy it is compared on
LOOK_ALIKE_SIDE = 32


class ObjectDetector(_Net):
    """NanoDet-g: COCO-80 boxes with scores, at the image's full-resolution coordinates."""

    file = "nanodet.onnx"
    outputs = ["Identity", "Identity_1", "Identity_2", "Identity_3", "Identity_4",
               "Identity_5"]

    def detect(self, rgb: np.ndarray, min_score: float = 0.25,
               offset: tuple[int, int] = (0, 0)) -> list[Detection]:
        """Boxes on one view (the whole image, or a tile placed at ``offset``).

        Args:
            rgb: uint8 RGB view; stretched to 416×416.
            min_score: class score a box needs.
            offset: where the view's top-left corner lies in the full image.

        Returns:
            Detections after NMS, best first.
        """
        h, w = rgb.shape[:2]
        small = cv2.resize(rgb, (NANODET_SIDE, NANODET_SIDE), interpolation=cv2.INTER_AREA)
        blob = ((small[..., ::-1].astype(np.float32) - NANODET_MEAN) / NANODET_STD)
        outs = self._forward(blob.transpose(2, 0, 1)[None].copy(), self.outputs)
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
            cx = (cells % side + 0.5) * stride
            cy = (cells // side + 0.5) * stride
            sx, sy = w / NANODET_SIDE, h / NANODET_SIDE
            for k in range(len(cells)):
                box = (max(0.0, (cx[k] - dist[k, 0]) * sx) + offset[0],
                       max(0.0, (cy[k] - dist[k, 1]) * sy) + offset[1],
                       min(w, (cx[k] + dist[k, 2]) * sx) + offset[0],
                       min(h, (cy[k] + dist[k, 3]) * sy) + offset[1])
                dets.append(Detection(box, float(scores[cells[k], classes[k]]),
                                      COCO_CLASSES[classes[k]]))
        return nms(dets)

    def zoom_search(self, rgb: np.ndarray, labels: set[str], min_score: float = 0.25,
                    tile: int = 1024, max_tiles: int = 12, confirm: int = 3,
                    priority: np.ndarray | None = None, enough: float | None = None
                    ) -> list[Detection]:
        """Look for ``labels`` where the frame pass cannot see them, coarse to fine (the
        zoom-in search of DLEBench and the agents' papers):

        1. overlapping native-resolution tiles (the tile grows when the grid would exceed
           ``max_tiles``), keeping even weak boxes of the wanted labels (half ``min_score``);
        2. each of the ``confirm`` best boxes is looked at again on a crop of about three
           times its size, where it fills the detector's view; only boxes that reach
           ``min_score`` there are returned.

        With ``enough``, the tiles are visited most promising first (the highest value of
        ``priority``, a low-resolution map of the frame such as the salient map, inside
        each) and a weak box that reaches ``min_score`` is confirmed at once: the search
        stops as soon as a confirmed box reaches ``enough`` (one sure object is what was
        asked for), then confirms the places that look like it (``_look_alikes``), so that
        a twin elsewhere is not missed. Without it every tile is seen, and the answer does
        not depend on the order.

        Returns:
            Confirmed detections of the wanted labels, in full-image coordinates.
        """
        h, w = rgb.shape[:2]
        if max(h, w) <= tile * 1.2:
            return []
        while len(tile_grid(h, w, tile, 0.2)) > max_tiles:
            tile = int(tile * 1.25)
        tiles = tile_grid(h, w, tile, 0.2)
        if priority is not None and enough is not None:
            tiles = _by_priority(tiles, priority, (h, w))
        weak: list[Detection] = []
        confirmed: dict[Box, list[Detection]] = {}
        for x0, y0, x1, y1 in tiles:
            view = shrink(rgb[y0:y1, x0:x1], 2 * NANODET_SIDE)
            k = (x1 - x0) / view.shape[1]
            for d in self.detect(view, min_score / 2):
                d.box = (d.box[0] * k + x0, d.box[1] * k + y0, d.box[2] * k + x0,
                         d.box[3] * k + y0)
                if d.label in labels and _inside_tile(d, (x0, y0, x1, y1), (w, h)):
                    weak.append(d)
            if enough is None or len(confirmed) >= confirm or not weak:
                continue
            best = nms(weak)[0]
            if best.score >= min_score and best.box not in confirmed:
                confirmed[best.box] = self._confirm(rgb, best, labels, min_score)
                if any(d.score >= enough for d in confirmed[best.box]):
                    log.debug("zoom search: a sure %s after %d of %d tiles", best.label,
                              tiles.index((x0, y0, x1, y1)) + 1, len(tiles))
                    found = nms([d for v in confirmed.values() for d in v])
                    return nms(found + self._look_alikes(rgb, found[0], labels, min_score))
        found = []
        for cand in nms(weak)[:confirm]:
            if cand.box not in confirmed:
                confirmed[cand.box] = self._confirm(rgb, cand, labels, min_score)
            found += confirmed[cand.box]
        return nms(found)

    def _look_alikes(self, rgb: np.ndarray, found: Detection, labels: set[str],
                     min_score: float, most: int = LOOK_ALIKES) -> list[Detection]:
        """Confirmed boxes of ``labels`` at the ``most`` places elsewhere in the frame that
        look most like ``found`` (normalised cross-correlation of its pixels, mirrored
        too, at 0.8-1.25 times its size, on a copy where it is ~32 px tall): the early
        stop of the search must not hide a second such object ("the cup" then asks
        which). A few ms, plus one detector pass per place that looks alike."""
        h, w = rgb.shape[:2]
        bx0, by0, bx1, by1 = found.box
        k = max(1.0, max(bx1 - bx0, by1 - by0) / LOOK_ALIKE_SIDE)
        small = shrink(rgb, int(max(h, w) / k))
        k = w / small.shape[1]
        x0, y0 = int(bx0 / k), int(by0 / k)
        x1, y1 = max(x0 + 1, int(round(bx1 / k))), max(y0 + 1, int(round(by1 / k)))
        patch = small[y0:y1, x0:x1]
        if min(patch.shape[:2]) < 8:
            return []
        best = np.full(small.shape[:2], -1.0, np.float32)    # at each place's centre
        scale_at = np.ones(small.shape[:2], np.float32)
        for scale in (0.8, 1.0, 1.25):
            for view in (patch, patch[:, ::-1]):
                t = cv2.resize(np.ascontiguousarray(view), None, fx=scale, fy=scale,
                               interpolation=cv2.INTER_AREA)
                if min(t.shape[:2]) < 6 or t.shape[0] >= small.shape[0] \
                        or t.shape[1] >= small.shape[1]:
                    continue
                r = cv2.matchTemplate(small, t, cv2.TM_CCOEFF_NORMED)
                cy, cx = t.shape[0] // 2, t.shape[1] // 2
                here = (slice(cy, cy + r.shape[0]), slice(cx, cx + r.shape[1]))
                better = r > best[here]
                best[here][better] = r[better]
                scale_at[here][better] = scale
        ph, pw = patch.shape[:2]
        # not the object itself
        best[max(0, y0 - ph // 2):y1 + ph // 2, max(0, x0 - pw // 2):x1 + pw // 2] = -1
        out: list[Detection] = []
        for _ in range(most):
            cy, cx = np.unravel_index(int(np.argmax(best)), best.shape)
            if best[cy, cx] < LOOK_ALIKE_NCC:
                break
            scale = float(scale_at[cy, cx])
            hh, hw = ph * scale / 2, pw * scale / 2
            cand = Detection(((cx - hw) * k, (cy - hh) * k, (cx + hw) * k, (cy + hh) * k),
                             float(best[cy, cx]), found.label)
            out += self._confirm(rgb, cand, labels, min_score)
            best[max(0, int(cy - 2 * hh)):int(cy + 2 * hh) + 1,
                 max(0, int(cx - 2 * hw)):int(cx + 2 * hw) + 1] = -1
        return out

    def _confirm(self, rgb: np.ndarray, cand: Detection, labels: set[str],
                 min_score: float) -> list[Detection]:
        """The boxes of ``labels`` that match ``cand`` on a crop about three times its
        size, where it fills the detector's view, at ``min_score``."""
        h, w = rgb.shape[:2]
        bx0, by0, bx1, by1 = cand.box
        side = max(3.0 * max(bx1 - bx0, by1 - by0), NANODET_SIDE / 2)
        cx, cy = (bx0 + bx1) / 2, (by0 + by1) / 2
        x0, y0 = int(max(0, cx - side / 2)), int(max(0, cy - side / 2))
        x1, y1 = int(min(w, cx + side / 2)), int(min(h, cy + side / 2))
        view = shrink(rgb[y0:y1, x0:x1], 2 * NANODET_SIDE)
        k = (x1 - x0) / view.shape[1]
        found = []
        for d in self.detect(view, min_score):
            d.box = (d.box[0] * k + x0, d.box[1] * k + y0, d.box[2] * k + x0,
                     d.box[3] * k + y0)
            if d.label in labels and _box_iou(d.box, cand.box) > 0.3:
                found.append(d)
        return found


def _by_priority(tiles: list[tuple[int, int, int, int]], priority: np.ndarray,
                 size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    """``tiles`` sorted by the highest value of ``priority`` (a map of the whole frame at
    any resolution) inside each; among tiles that share their peak, the one it lies most
    centrally in first (the detector sees the object with context all around)."""
    ph, pw = priority.shape[:2]
    sy, sx = ph / size[0], pw / size[1]

    def key(t: tuple[int, int, int, int]) -> tuple[float, float]:
        x0, y0, x1, y1 = t
        top, left = int(y0 * sy), int(x0 * sx)
        part = priority[top:max(top + 1, int(np.ceil(y1 * sy))),
                        left:max(left + 1, int(np.ceil(x1 * sx)))]
        if not part.size:
            return 0.0, 0.0
        py, px = np.unravel_index(int(np.argmax(part)), part.shape)
        off = max(abs((left + px + 0.5) / sx - (x0 + x1) / 2) / max(1, x1 - x0),
                  abs((top + py + 0.5) / sy - (y0 + y1) / 2) / max(1, y1 - y0))
        return -float(part[py, px]), off

    return sorted(tiles, key=key)


def _box_iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - ix * iy
    return ix * iy / union if union > 0 else 0.0


def shrink(image: np.ndarray, max_side: int) -> np.ndarray:
    """A fast downscale for the detectors: a linear resize to twice the target when the
    image is more than twice too large, then an area resize. About 8× faster than one area
    resize from 20 MP; the slight aliasing does not matter to a detector.

    Args:
        image: HWC array.
        max_side: the longest side allowed.

    Returns:
        The image itself when it fits, else a smaller copy.
    """
    h, w = image.shape[:2]
    scale = max_side / max(h, w)
    if scale >= 1:
        return image
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    if scale < 0.5:
        mid = (max(1, size[0] * 2), max(1, size[1] * 2))
        image = cv2.resize(image, mid, interpolation=cv2.INTER_LINEAR)
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def _inside_tile(det: Detection, tile: tuple[int, int, int, int], size: tuple[int, int]
                 ) -> bool:
    """A tile box cut by the tile's inner edge is a fragment: the frame pass or another
    tile sees the whole object."""
    x0, y0, x1, y1 = tile
    bx0, by0, bx1, by1 = det.box
    margin = 2
    cut = (bx0 <= x0 + margin and x0 > 0) or (by0 <= y0 + margin and y0 > 0) or \
        (bx1 >= x1 - margin and x1 < size[0]) or (by1 >= y1 - margin and y1 < size[1])
    return not cut


# --------------------------------------------------------------------------- faces


def _blazeface_anchors() -> np.ndarray:
    """Anchor centres (x, y) in [0, 1] of the 256-px full-range model: 16×16×2 + 8×8×6."""
    out = []
    for grid, per_cell in ((16, 2), (8, 6)):
        ys, xs = np.mgrid[0:grid, 0:grid]
        centres = np.stack([(xs + 0.5) / grid, (ys + 0.5) / grid], -1).reshape(-1, 2)
        out.append(np.repeat(centres, per_cell, axis=0))
    return np.concatenate(out).astype(np.float32)


class FaceDetector(_Net):
    """BlazeFace full-range: face boxes with scores, in full-resolution coordinates."""

    file = "blazeface.onnx"
    outputs = ["Identity", "Identity_1", "Identity_2", "Identity_3"]

    side = 256

    def __init__(self) -> None:
        super().__init__()
        self.anchors = _blazeface_anchors()

    def detect(self, rgb: np.ndarray, min_score: float = 0.5) -> list[Detection]:
        """Faces in ``rgb`` (letterboxed to a square, so faces keep their shape)."""
        h, w = rgb.shape[:2]
        side = max(h, w)
        square = np.zeros((side, side, 3), np.uint8)
        square[:h, :w] = rgb[..., :3]
        size = self.side
        small = cv2.resize(square, (size, size), interpolation=cv2.INTER_AREA)
        blob = small.astype(np.float32)[None] / 127.5 - 1.0
        outs = self._forward(blob, self.outputs)
        scores = np.concatenate([next(o for o in outs if o.shape[1:] == (n, 1))[0, :, 0]
                                 for n in (512, 384)])
        regs = np.concatenate([next(o for o in outs if o.shape[1:] == (n, 16))[0]
                               for n in (512, 384)])
        probs = 1.0 / (1.0 + np.exp(-np.clip(scores, -80, 80)))
        keep = np.nonzero(probs >= min_score)[0]
        anchors = self.anchors
        dets = []
        for k in keep:
            cx = anchors[k, 0] + regs[k, 0] / size
            cy = anchors[k, 1] + regs[k, 1] / size
            bw, bh = regs[k, 2] / size, regs[k, 3] / size
            box = (max(0.0, (cx - bw / 2) * side), max(0.0, (cy - bh / 2) * side),
                   min(float(w), (cx + bw / 2) * side), min(float(h), (cy + bh / 2) * side))
            if box[2] > box[0] + 1 and box[3] > box[1] + 1:
                dets.append(Detection(box, float(probs[k]), "face"))
        return nms(dets, 0.3)


# ------------------------------------------------------------------------ salient


class SalientSegmenter(_Net):
    """U²-Net-p: a salient-object probability map in [0, 1] at the input's size."""

    file = "u2netp.onnx"
    side = 320
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)

    def saliency(self, rgb: np.ndarray, side: int | None = None) -> np.ndarray:
        """The probability map of the most salient object(s), float32 at ``rgb``'s size.

        Args:
            rgb: uint8 RGB image or crop.
            side: working side (default 320, the trained size; smaller is faster).
        """
        side = side or self.side
        h, w = rgb.shape[:2]
        small = cv2.resize(rgb[..., :3], (side, side), interpolation=cv2.INTER_AREA)
        blob = ((small.astype(np.float32) / max(1.0, float(small.max())) - self.mean)
                / self.std).transpose(2, 0, 1)[None].copy()
        prob = self._forward(blob)[0].reshape(side, side)
        lo, hi = float(prob.min()), float(prob.max())
        prob = (prob - lo) / (hi - lo) if hi > lo else np.zeros_like(prob)
        return cv2.resize(prob.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)


# --------------------------------------------------------------------------- text


class TextDetector(_Net):
    """PP-OCRv4 text detection (DB): regions of text as boxes with their mean probability."""

    file = "ppocrv4_det.onnx"
    side = 960
    threshold = 0.3

    def detect(self, rgb: np.ndarray, min_score: float = 0.6) -> list[Detection]:
        """Text boxes in full-resolution coordinates (the view is at most 960 px long,
        each side a multiple of 32 as the network needs)."""
        h, w = rgb.shape[:2]
        scale = min(1.0, self.side / max(h, w))
        tw = max(32, int(round(w * scale / 32)) * 32)
        th = max(32, int(round(h * scale / 32)) * 32)
        view = cv2.resize(shrink(rgb[..., :3], max(tw, th) * 2), (tw, th),
                          interpolation=cv2.INTER_AREA)
        blob = ((view.astype(np.float32) / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)[None]
        prob = self._forward(blob.copy())[0].reshape(th, tw)
        binary = (prob > self.threshold).astype(np.uint8)
        binary = cv2.dilate(binary, np.ones((3, 3), np.uint8))
        count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, 8)
        sx, sy = w / tw, h / th
        dets = []
        for i in range(1, count):
            x, y, bw, bh, area = stats[i]
            if area < 12 or min(bw, bh) < 3:
                continue
            score = float(prob[labels == i].mean())
            if score < min_score:
                continue
            grow = 0.5 * bh     # DB trains on text shrunk by ~0.4 of its height: unclip
            dets.append(Detection((max(0.0, (x - grow) * sx), max(0.0, (y - grow) * sy),
                                   min(float(w), (x + bw + grow) * sx),
                                   min(float(h), (y + bh + grow) * sy)), score, "text"))
        return sorted(dets, key=lambda d: -d.score)


class TextReader(_Net):
    """PP-OCRv4 text recognition (CTC): what one line of text in a box reads.

    The network's characters are the list in the ONNX file's own metadata (``character``),
    with the CTC blank before them and a space after, as PaddleOCR decodes them."""

    file = "ppocrv4_rec.onnx"
    height = 48
    #: the widest line read at once (the trained shape is 48 × 320; longer lines are
    #: squeezed to this width rather than cut)
    max_width = 640
    #: a line read less surely than this is read mirrored too, and the surer reading kept
    mirrored_below = 0.8

    def __init__(self) -> None:
        super().__init__()
        self._chars: list[str] | None = None

    def _characters(self) -> list[str]:
        if self._chars is None:
            import onnx  # here: only a reader that runs needs the protobuf parser

            model = onnx.load(str(model_path(self.file)), load_external_data=False)
            meta = {p.key: p.value for p in model.metadata_props}
            self._chars = ["", *meta.get("character", "").split("\n"), " "]
        return self._chars

    def read(self, rgb: np.ndarray, box: tuple[int, int, int, int]) -> tuple[str, float]:
        """The text in ``box`` (x0, y0, x1, y1, full-resolution pixels) and the mean
        confidence of its characters (0 when it reads nothing)."""
        x0, y0, x1, y1 = box
        crop = rgb[max(0, y0):y1, max(0, x0):x1, :3]
        if crop.shape[0] < 4 or crop.shape[1] < 4:
            return "", 0.0
        if crop.shape[0] > 1.5 * crop.shape[1]:       # a vertical line: read it turned
            crop = np.ascontiguousarray(np.rot90(crop, -1))
        width = int(min(self.max_width, max(self.height, np.ceil(
            self.height * crop.shape[1] / crop.shape[0]))))
        line = cv2.resize(crop[..., ::-1], (width, self.height),     # BGR, as trained
                          interpolation=cv2.INTER_AREA if crop.shape[0] > self.height
                          else cv2.INTER_CUBIC)
        text, conf = self._decode(line)
        if conf < self.mirrored_below:      # writing seen in a mirror, or a mirrored photo
            flipped = self._decode(np.ascontiguousarray(line[:, ::-1]))
            if flipped[1] > conf:
                return flipped
        return text, conf

    def _decode(self, line: np.ndarray) -> tuple[str, float]:
        """Greedy CTC decoding of one 48-px line (BGR)."""
        blob = ((line.astype(np.float32) / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)[None]
        probs = self._forward(blob.copy())[0][0]
        chars = self._characters()
        best, conf = probs.argmax(axis=1), probs.max(axis=1)
        text, kept, last = [], [], -1
        for index, p in zip(best.tolist(), conf.tolist()):
            if index != last and index != 0 and index < len(chars):
                text.append(chars[index])
                kept.append(p)
            last = index
        return "".join(text).strip(), float(np.mean(kept)) if kept else 0.0
