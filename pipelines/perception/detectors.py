"""The embedded detectors, run by OpenCV's dnn module on the CPU.

* ``ObjectDetector`` — NanoDet-g (COCO-80 boxes, 416×416); its zoom search over
  native-resolution tiles, for objects too small to see on the downscaled frame, is
  ``pipelines.perception.zoom``.
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


@dataclass
class FaceDetection(Detection):
    """A face box, with how far apart its eyes are: the horizontal distance between
    BlazeFace's two eye points as a share of the box's width (about 0.4 for a face seen
    from the front, near 0 for one seen from the side)."""

    eye_gap: float = 0.4


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
    keep = _kept([d.label for d in dets], [[d.box[0], d.box[1], d.box[2] - d.box[0],
                                            d.box[3] - d.box[1]] for d in dets],
                 [d.score for d in dets], iou, per_label)
    return sorted((dets[i] for i in keep), key=lambda d: -d.score)


def _kept(labels: list[str], boxes: list[list[float]], scores: list[float], iou: float,
          per_label: bool = True, wanted: set[str] | None = None) -> list[int]:
    """``nms``'s work on plain lists (boxes as x, y, w, h): the indices kept, label by label
    in the order of the set of ``labels`` (only those in ``wanted`` when given), each
    label's in ``cv2.dnn.NMSBoxes``'s order; not yet sorted by score."""
    groups: dict = {}
    for i, label in enumerate(labels):
        groups.setdefault(label if per_label else None, []).append(i)
    keep: list[int] = []
    for label in ({label for label in labels} if per_label else ({None} if labels else set())):
        if wanted is not None and label not in wanted:
            continue
        group = groups[label]
        idx = cv2.dnn.NMSBoxes([boxes[i] for i in group], [scores[i] for i in group], 0.0, iou)
        keep += [group[i] for i in np.asarray(idx).reshape(-1)]
    return keep


# ------------------------------------------------------------------------- objects


class ObjectDetector(_Net):
    """NanoDet-g: COCO-80 boxes with scores, at the image's full-resolution coordinates."""

    file = "nanodet.onnx"
    outputs = ["Identity", "Identity_1", "Identity_2", "Identity_3", "Identity_4",
               "Identity_5"]

    def detect(self, rgb: np.ndarray, min_score: float = 0.25,
               offset: tuple[int, int] = (0, 0), labels: set[str] | None = None
               ) -> list[Detection]:
        """Boxes on one view (the whole image, or a tile placed at ``offset``).

        Args:
            rgb: uint8 RGB view; stretched to 416×416.
            min_score: class score a box needs.
            offset: where the view's top-left corner lies in the full image.
            labels: only these classes' boxes (the same boxes all classes' NMS keeps of
                them: NMS runs per class); every class when None.

        Returns:
            Detections after NMS, best first.
        """
        h, w = rgb.shape[:2]
        small = cv2.resize(rgb, (NANODET_SIDE, NANODET_SIDE), interpolation=cv2.INTER_AREA)
        blob = ((small[..., ::-1].astype(np.float32) - NANODET_MEAN) / NANODET_STD)
        outs = self._forward(blob.transpose(2, 0, 1)[None].copy(), self.outputs)
        found = []      # per stride: the boxes' sides before clipping, scores, classes
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
            found.append(((cx - dist[:, 0]) * sx, (cy - dist[:, 1]) * sy,
                          (cx + dist[:, 2]) * sx, (cy + dist[:, 3]) * sy,
                          scores[cells, classes], classes))
        if not found:
            return []
        # NMS on arrays; a Detection only for the boxes kept (most are weak duplicates)
        x0, y0, x1, y1, score, cls = (np.concatenate(v) for v in zip(*found))
        bx0, by0 = np.where(x0 > 0.0, x0, 0.0) + offset[0], np.where(y0 > 0.0, y0, 0.0) + offset[1]
        bx1, by1 = np.where(x1 < w, x1, w) + offset[0], np.where(y1 < h, y1, h) + offset[1]
        names = [COCO_CLASSES[c] for c in cls.tolist()]
        scores = score.tolist()
        keep = _kept(names, np.stack([bx0, by0, bx1 - bx0, by1 - by0], 1).tolist(), scores,
                     0.5, wanted=labels)
        return sorted((Detection((max(0.0, x0[k]) + offset[0], max(0.0, y0[k]) + offset[1],
                                  min(w, x1[k]) + offset[0], min(h, y1[k]) + offset[1]),
                                 scores[k], names[k]) for k in keep), key=lambda d: -d.score)


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
    sh, sw = shrunk_size((h, w), max_side)
    if scale < 0.5:
        image = cv2.resize(image, (sw * 2, sh * 2), interpolation=cv2.INTER_LINEAR)
    return cv2.resize(image, (sw, sh), interpolation=cv2.INTER_AREA)


def shrunk_size(shape: tuple[int, ...], max_side: int) -> tuple[int, int]:
    """The (height, width) ``shrink`` gives an image of ``shape`` (its own when it fits),
    without resizing anything: a caller that may not need the pixels knows their size."""
    h, w = shape[:2]
    scale = max_side / max(h, w)
    if scale >= 1:
        return h, w
    return max(1, round(h * scale)), max(1, round(w * scale))


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

    def detect(self, rgb: np.ndarray, min_score: float = 0.5) -> list[FaceDetection]:
        """Faces in ``rgb`` (letterboxed to a square, so faces keep their shape), with the
        distance between their eye points (``FaceDetection.eye_gap``)."""
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
                # points 0 and 1 are the eyes (x, y offsets from the anchor, as the box's)
                gap = abs(float(regs[k, 4] - regs[k, 6])) / max(float(regs[k, 2]), 1e-6)
                dets.append(FaceDetection(box, float(probs[k]), "face", round(gap, 3)))
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
