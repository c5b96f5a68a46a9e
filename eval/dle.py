"""Small-object rubric evaluation (after DLEBench §3–4 and its appendix).

A sample names a source image, an instruction, one of seven instruction types, the
target boxes and optionally a reference (ground-truth edited) image. Two criteria are
scored on 4-level rubrics and normalised to 100 (``score × 25``):

* Instruction Following: Localization Failure (1) / Wrong Action (2) /
  Over Modification (3) / Flawless Execution (4);
* Visual Consistency: Scene Collapse (1) / Multiple Anomalies (2) / Single Anomaly (3) /
  Perfect Consistency (4).

Oracle-guided mode crops source, edited and reference around the targets (context
λ(s) from ``pipelines.layers.context_lambda``) for IF, and paints the targets white for
VC. Tool-driven mode lets a VLM call ``zoom_in``, ``localize_differences`` and
``detect_object``. The judge is a configured VLM, or — where ground truth exists, e.g.
rendered scenes — a measured judge that reads the same labels off pixel differences.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from eval.metrics import ssim
from pipelines.layers import context_lambda, expand_box, mask_bbox
from pipelines.localizers import get_localizer

Box = tuple[int, int, int, int]

DLE_TYPES = ("color", "material", "shape", "text", "count", "replace", "remove")
IF_LABELS = {1: "Localization Failure", 2: "Wrong Action", 3: "Over Modification",
             4: "Flawless Execution"}
VC_LABELS = {1: "Scene Collapse", 2: "Multiple Anomalies", 3: "Single Anomaly",
             4: "Perfect Consistency"}
TOOLS = ("zoom_in", "localize_differences", "detect_object")
#: a pixel counts as changed when a channel moves by more than this (uint8 levels)
CHANGE_LEVEL = 24


class DLEError(ValueError):
    """A malformed DLE sample or judge answer."""


@dataclass(frozen=True)
class DLESample:
    """One small-object editing sample (paths relative to the dataset folder).

    Attributes:
        id: unique id.
        source: source image path.
        instruction: the edit request.
        type: one of ``DLE_TYPES``.
        boxes: target boxes ``(x0, y0, x1, y1)`` in source pixels.
        reference: ground-truth edited image path, if any.
    """

    id: str
    source: str
    instruction: str
    type: str
    boxes: tuple[Box, ...]
    reference: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any], key: str = "") -> DLESample:
        """Validate one JSON record (``boxes`` or a single ``bbox``)."""
        where = f"DLE sample {data.get('id', key)!r}"
        kind = str(data.get("type", "")).lower()
        if kind not in DLE_TYPES:
            raise DLEError(f"{where}: type must be one of {', '.join(DLE_TYPES)}, got {kind!r}")
        raw = data.get("boxes") or ([data["bbox"]] if data.get("bbox") else [])
        boxes = tuple(_box(b, where) for b in raw)
        if not boxes:
            raise DLEError(f"{where}: needs at least one target box")
        instruction = data.get("instruction")
        if not isinstance(instruction, str) or not instruction.strip():
            raise DLEError(f"{where}: empty instruction")
        source = data.get("source") or data.get("image")
        if not isinstance(source, str) or not source:
            raise DLEError(f"{where}: no source image")
        reference = data.get("reference")
        return cls(str(data.get("id", key)), source, instruction.strip(), kind, boxes,
                   str(reference) if reference else None)


def _box(value: Any, where: str) -> Box:
    try:
        x0, y0, x1, y1 = (int(round(float(v))) for v in value)
    except (TypeError, ValueError):
        raise DLEError(f"{where}: a box must be four numbers, got {value!r}") from None
    if x1 <= x0 or y1 <= y0 or min(x0, y0) < 0:
        raise DLEError(f"{where}: empty or negative box {value!r}")
    return x0, y0, x1, y1


def normalise(score: int) -> float:
    """Rubric level 1–4 → 0–100 scale (``score × 25``)."""
    if score not in (1, 2, 3, 4):
        raise DLEError(f"rubric score must be 1–4, got {score!r}")
    return 25.0 * score


def union_box(boxes: Sequence[Box]) -> Box:
    """The smallest box holding every box."""
    return (min(b[0] for b in boxes), min(b[1] for b in boxes),
            max(b[2] for b in boxes), max(b[3] for b in boxes))


def context_box(boxes: Sequence[Box], size: tuple[int, int]) -> Box:
    """The targets' union grown by λ(s) (DLEBench eq. 1), clamped to ``size`` = (w, h)."""
    box = union_box(boxes)
    return expand_box(box, size, context=context_lambda(min(box[2] - box[0], box[3] - box[1])))


# --- tools -----------------------------------------------------------------------------


def zoom_in(image: np.ndarray, bbox: Box, *, min_side: int = 512) -> np.ndarray:
    """Crop ``bbox`` and upsample it (bicubic) so its short side is at least ``min_side``.

    Args:
        image: uint8 image.
        bbox: ``(x0, y0, x1, y1)``; clamped to the image.
        min_side: upsample small crops to this short side (never downsampled).

    Returns:
        The crop. Raises ``DLEError`` for a box outside the image.
    """
    height, width = image.shape[:2]
    x0, y0, x1, y1 = max(0, bbox[0]), max(0, bbox[1]), min(width, bbox[2]), min(height, bbox[3])
    if x1 <= x0 or y1 <= y0:
        raise DLEError(f"zoom box {bbox} is outside the {width}x{height} image")
    crop = image[y0:y1, x0:x1]
    scale = min_side / min(crop.shape[:2])
    if scale > 1:
        crop = cv2.resize(crop, (round(crop.shape[1] * scale), round(crop.shape[0] * scale)),
                          interpolation=cv2.INTER_CUBIC)
    return np.ascontiguousarray(crop)


def change_mask(a: np.ndarray, b: np.ndarray, level: int = CHANGE_LEVEL) -> np.ndarray:
    """Pixels where some channel differs by more than ``level``, speckles removed."""
    if a.shape != b.shape:
        raise DLEError(f"images differ in shape: {a.shape} vs {b.shape}")
    diff = cv2.absdiff(a[..., :3], b[..., :3]).max(axis=2) > level
    kernel = np.ones((3, 3), np.uint8)
    return cv2.morphologyEx(diff.astype(np.uint8), cv2.MORPH_OPEN, kernel).astype(bool)


def changed_regions(a: np.ndarray, b: np.ndarray, *, ignore: np.ndarray | None = None,
                    min_area: float = 0.0002, join: int | None = None) -> list[Box]:
    """Boxes of the changed regions between two images, largest first.

    Args:
        a: first image.
        b: second image, same shape.
        ignore: ``bool`` mask of pixels not to consider (e.g. the targets).
        min_area: drop regions smaller than this fraction of the image.
        join: dilation (pixels) that merges nearby changes into one region
            (default ~1% of the short side).

    Returns:
        ``[(x0, y0, x1, y1), …]``.
    """
    changed = change_mask(a, b)
    if ignore is not None:
        changed &= ~ignore
    height, width = changed.shape
    join = max(1, round(0.01 * min(height, width))) if join is None else join
    grown = cv2.dilate(changed.astype(np.uint8), np.ones((2 * join + 1,) * 2, np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(grown)
    boxes = []
    for i in range(1, count):
        x, y, w, h, _ = stats[i]
        real = int(changed[y:y + h, x:x + w].sum())
        if real >= min_area * height * width:
            boxes.append((real, (int(x), int(y), int(x + w), int(y + h))))
    return [b for _, b in sorted(boxes, key=lambda t: -t[0])]


def localize_differences(a: np.ndarray, b: np.ndarray, *, max_regions: int = 6,
                         ignore: np.ndarray | None = None) -> dict[str, Any]:
    """The Difference tool: changed boxes and side-by-side crops (a | b) of each.

    Returns:
        ``{"boxes": [...], "crops": [np.ndarray, ...]}`` (crops upsampled by ``zoom_in``).
    """
    boxes = changed_regions(a, b, ignore=ignore)[:max_regions]
    crops = []
    for box in boxes:
        wide = expand_box(box, (a.shape[1], a.shape[0]), context=0.25)
        left, right = zoom_in(a, wide, min_side=256), zoom_in(b, wide, min_side=256)
        gap = np.full((left.shape[0], 8, left.shape[2]), 255, np.uint8)
        crops.append(np.concatenate([left, gap, right], axis=1))
    return {"boxes": boxes, "crops": crops}


def detect_object(image: np.ndarray, phrase: str) -> dict[str, Any]:
    """The Grounding tool through the configured localiser (``pipelines.localizers``).

    Returns:
        ``{"status", "boxes", "scores", "reason"}``.
    """
    found = get_localizer().locate(image, phrase)
    boxes, scores = [], []
    for candidate in found.masks:
        box = mask_bbox(candidate.mask)
        if box is not None:
            boxes.append(box)
            scores.append(round(float(candidate.score), 3))
    return {"status": found.status, "boxes": boxes, "scores": scores, "reason": found.reason}


# --- oracle-guided inputs --------------------------------------------------------------


def oracle_if_views(source: np.ndarray, edited: np.ndarray, reference: np.ndarray | None,
                    boxes: Sequence[Box]) -> list[np.ndarray]:
    """Crops of source, edited (and reference) around the targets, context λ(s)."""
    box = context_box(boxes, (source.shape[1], source.shape[0]))
    images = [source, edited] + ([reference] if reference is not None else [])
    return [zoom_in(img, box) for img in images]


def paint_targets(image: np.ndarray, boxes: Sequence[Box]) -> np.ndarray:
    """A copy of ``image`` with every target box painted white (VC oracle view)."""
    out = image.copy()
    for x0, y0, x1, y1 in boxes:
        out[max(0, y0):y1, max(0, x0):x1] = 255
    return out


def _target_mask(shape: tuple[int, ...], boxes: Sequence[Box], pad: int = 0) -> np.ndarray:
    mask = np.zeros(shape[:2], bool)
    for x0, y0, x1, y1 in boxes:
        mask[max(0, y0 - pad):y1 + pad, max(0, x0 - pad):x1 + pad] = True
    return mask


# --- measured judge --------------------------------------------------------------------


def measured_if(source: np.ndarray, edited: np.ndarray, reference: np.ndarray,
                boxes: Sequence[Box]) -> int:
    """IF rubric read off pixels when the ground truth is known.

    1 when the targets barely changed; 2 when they changed but not towards the
    reference; 3 when they match the reference but the surrounding context (λ(s)
    ring outside the targets) changed over more than a fifth of the targets' area;
    4 otherwise.
    """
    target = _target_mask(source.shape, boxes)
    src, out, ref = (img[..., :3].astype(np.int16) for img in (source, edited, reference))
    moved = np.abs(out - src).max(axis=2)[target]
    if (moved > CHANGE_LEVEL).mean() < 0.1:
        return 1
    wanted = np.abs(ref - src).max(axis=2)[target] > CHANGE_LEVEL
    wrong = np.abs(out - ref).max(axis=2)[target] > CHANGE_LEVEL
    off_target = wrong[wanted] if wanted.any() else wrong
    if off_target.mean() > 0.25:
        return 2
    x0, y0, x1, y1 = context_box(boxes, (source.shape[1], source.shape[0]))
    ring = np.zeros(target.shape, bool)
    ring[y0:y1, x0:x1] = True
    ring &= ~_target_mask(source.shape, boxes, pad=3)
    if change_mask(source, edited)[ring].sum() > 0.2 * target.sum():
        return 3
    return 4


def measured_vc(source: np.ndarray, edited: np.ndarray, boxes: Sequence[Box]) -> int:
    """VC rubric from changed regions outside the (padded) targets: none 4, one 3,
    several 2; a different scene (more than half the pixels changed, or SSIM of the
    target-painted images below 0.4) 1."""
    ignore = _target_mask(source.shape, boxes, pad=3)
    changed = change_mask(source, edited) & ~ignore
    if changed.sum() > 0.5 * max(1, (~ignore).sum()) or \
            ssim(paint_targets(source, boxes), paint_targets(edited, boxes)) < 0.4:
        return 1
    regions = changed_regions(source, edited, ignore=ignore)
    return 4 if not regions else 3 if len(regions) == 1 else 2


# --- VLM judge -------------------------------------------------------------------------

_RUBRIC = {
    "if": ("Judge whether the requested edit was carried out on the small target. Labels, "
           "worst first: 'Localization Failure' (the target is effectively unchanged or the "
           "wrong part changed), 'Wrong Action' (the target changed, but not in the "
           "requested way), 'Over Modification' (the edit is right but unrequested details "
           "of the target changed too), 'Flawless Execution'.", IF_LABELS),
    "vc": ("Judge whether everything except the target stayed the same (the target is "
           "painted white or should be ignored). Labels, worst first: 'Scene Collapse' "
           "(a different place or style), 'Multiple Anomalies', 'Single Anomaly', "
           "'Perfect Consistency'.", VC_LABELS),
}


def _schema(labels: dict[int, str], tools: bool) -> dict[str, Any]:
    props: dict[str, Any] = {"thought": {"type": "string", "maxLength": 2000},
                             "label": {"type": "string", "enum": list(labels.values())}}
    if tools:
        props["tool"] = {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "enum": list(TOOLS)},
            "bbox": {"type": "array", "items": {"type": "number"}, "minItems": 4,
                     "maxItems": 4},
            "image": {"type": "string", "enum": ["source", "edited"]},
            "phrase": {"type": "string", "maxLength": 200}}}
        return {"type": "object", "properties": props}
    return {"type": "object", "required": ["label"], "properties": props}


def _label_score(answer: dict[str, Any], labels: dict[int, str]) -> int:
    for score, label in labels.items():
        if answer.get("label") == label:
            return score
    raise DLEError(f"the judge gave no valid label: {answer!r}")


def vlm_judge(model: Any, criterion: str, instruction: str, images: list[np.ndarray],
              *, tools: dict[str, np.ndarray] | None = None, max_steps: int = 5) -> int:
    """Ask a VLM (``pipelines.llm`` protocol) for one rubric label; returns its 1–4 score.

    Args:
        model: object with ``complete_json(system, messages, images, schema)``.
        criterion: ``"if"`` or ``"vc"``.
        instruction: the edit instruction.
        images: the views shown first (oracle crops, or full source/edited images).
        tools: ``{"source": img, "edited": img}`` enables the tool-driven loop.
        max_steps: tool calls allowed before a label is required.
    """
    rubric, labels = _RUBRIC[criterion]
    system = rubric + (" You may call one tool per reply (zoom_in with a bbox on the "
                       "source or edited image, localize_differences, detect_object with "
                       "a phrase) instead of a label." if tools else "") + " Reply in JSON."
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"Instruction: {instruction}"}]
    shown = list(images)
    for step in range(max_steps + 1):
        allow = bool(tools) and step < max_steps
        answer = model.complete_json(system, messages, shown, _schema(labels, allow))
        if answer.get("label") or not allow or not answer.get("tool"):
            return _label_score(answer, labels)
        text, extra = _run_tool(answer["tool"], tools or {})
        messages += [{"role": "assistant", "content": json.dumps(answer)[:2000]},
                     {"role": "user", "content": text}]
        shown = shown + extra
    raise DLEError("the judge never gave a label")


def _run_tool(call: dict[str, Any], images: dict[str, np.ndarray]) -> tuple[str, list]:
    name = call.get("name")
    try:
        if name == "zoom_in":
            img = images[call.get("image", "edited")]
            crop = zoom_in(img, _box(call.get("bbox"), "zoom_in"))
            return "Zoomed crop attached.", [crop]
        if name == "localize_differences":
            found = localize_differences(images["source"], images["edited"])
            return f"Changed boxes: {found['boxes']}", found["crops"][:3]
        if name == "detect_object":
            found = detect_object(images[call.get("image", "source")], str(call.get("phrase")))
            return f"Detections: {json.dumps(found)}", []
    except (DLEError, KeyError, ValueError) as exc:
        return f"Tool error: {exc}", []
    return f"Unknown tool {name!r}", []


# --- one sample ------------------------------------------------------------------------


def evaluate(source: np.ndarray, edited: np.ndarray, instruction: str, boxes: Sequence[Box],
             *, reference: np.ndarray | None = None, mode: str = "oracle",
             model: Any = None) -> dict[str, Any]:
    """Score one edited image on IF and VC.

    Args:
        source: the source image.
        edited: the editor's output (resampled to the source size if it differs).
        instruction: the edit instruction.
        boxes: target boxes in source pixels.
        reference: ground-truth edited image (enables the measured judge).
        mode: ``"oracle"`` (crops / white targets) or ``"tool"`` (tool-driven; VLM only).
        model: a VLM following ``pipelines.llm.LLM``; None uses the measured judge, which
            needs ``reference``.

    Returns:
        ``{"if_label", "if_score", "vc_label", "vc_score", "judge", "mode"}`` with
        scores on the 100-point scale.
    """
    if mode not in ("oracle", "tool"):
        raise DLEError(f"mode must be 'oracle' or 'tool', got {mode!r}")
    if edited.shape[:2] != source.shape[:2]:
        edited = cv2.resize(edited, (source.shape[1], source.shape[0]),
                            interpolation=cv2.INTER_CUBIC)
    if model is None:
        if reference is None:
            raise DLEError("the measured judge needs a reference image; configure a VLM")
        s_if = measured_if(source, edited, reference, boxes)
        s_vc = measured_vc(source, edited, boxes)
        judge = "measured"
    elif mode == "oracle":
        s_if = vlm_judge(model, "if", instruction,
                         oracle_if_views(source, edited, reference, boxes))
        s_vc = vlm_judge(model, "vc", instruction,
                         [paint_targets(source, boxes), paint_targets(edited, boxes)],
                         tools={"source": paint_targets(source, boxes),
                                "edited": paint_targets(edited, boxes)})
        judge = getattr(model, "name", "vlm")
    else:
        tools = {"source": source, "edited": edited}
        s_if = vlm_judge(model, "if", instruction, [source, edited], tools=tools)
        s_vc = vlm_judge(model, "vc", instruction, [source, edited], tools=tools)
        judge = getattr(model, "name", "vlm")
    return {"if_label": IF_LABELS[s_if], "if_score": normalise(s_if),
            "vc_label": VC_LABELS[s_vc], "vc_score": normalise(s_vc),
            "judge": judge, "mode": mode}
