"""Open-vocabulary localisation: GroundingDINO boxes, SAM masks, zoomed tiles for small targets.

``GroundedSAMLocalizer`` turns a phrase into boxes with GroundingDINO (zero-shot
detection through transformers), then each box into a mask with SAM. Detectors miss small
objects in large photos (DLEBench measures exactly that), so when the whole-frame pass
finds nothing confident, or only small boxes, the image is searched again in overlapping
tiles — each tile is upsampled by the processor, i.e. seen at a higher zoom — and the
boxes of all passes are merged by non-maximum suppression.

Available only when both the ``detector`` and ``segmenter`` roles have their weights.
"""

from __future__ import annotations

import logging
import re

import numpy as np

from pipelines.localizers.base import (
    Candidate,
    Hint,
    Localization,
    LocalizationError,
    Localizer,
    as_rgb,
)
from pipelines.models import ModelUnavailable, get_manager
from pipelines.perception.detectors import Detection, tile_grid

log = logging.getLogger(__name__)

PLURAL = re.compile(r"\b(all|every|each|both|several|two|three|four)\b")


def detector_prompt(phrase: str) -> str:
    """GroundingDINO's text format: lower case, each query ending with a period."""
    text = " ".join(phrase.lower().replace("\n", " ").split())[:200].strip(" .")
    return f"{text}." if text else ""


def nms(dets: list[Detection], iou: float = 0.5) -> list[Detection]:
    """Greedy non-maximum suppression, best score first."""
    import torch
    from torchvision.ops import nms as tv_nms

    if not dets:
        return []
    boxes = torch.tensor([d.box for d in dets], dtype=torch.float32)
    scores = torch.tensor([d.score for d in dets], dtype=torch.float32)
    keep = tv_nms(boxes, scores, iou)
    return [dets[i] for i in keep.tolist()]


class GroundedSAMLocalizer(Localizer):
    """GroundingDINO + SAM: phrase → boxes → masks with scores."""

    name = "grounded-sam"
    requires_weights = True

    def __init__(self, box_threshold: float = 0.3, text_threshold: float = 0.25,
                 max_candidates: int = 5, tiles: bool = True, tile_side: int = 1024,
                 small_fraction: float = 0.02, ambiguity_margin: float = 0.1) -> None:
        """Args:
            box_threshold: detector score a box needs.
            text_threshold: score a token needs to name the box's label.
            max_candidates: masks returned at most.
            tiles: search zoomed tiles when the frame pass finds nothing or only small boxes.
            tile_side: tile side in full-resolution pixels (tiles only on larger images).
            small_fraction: a box smaller than this fraction of the image area is "small".
            ambiguity_margin: two candidates closer than this in score are ambiguous.
        """
        self.box_threshold = box_threshold
        self.text_threshold = text_threshold
        self.max_candidates = max_candidates
        self.tiles = tiles
        self.tile_side = tile_side
        self.small_fraction = small_fraction
        self.ambiguity_margin = ambiguity_margin

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        """Available when both the detector and the segmenter weights are here."""
        manager = get_manager()
        for role in ("detector", "segmenter"):
            status = manager.role_status(role)
            if not status.available:
                return False, f"{role}: {status.reason}"
        return True, ""

    # -- protocol -----------------------------------------------------------------------
    def locate(self, image: np.ndarray, phrase: str, hint: Hint | None = None) -> Localization:
        """Find ``phrase`` in ``image``; masks come back at the image's size, best first.

        Args:
            image: ``uint8`` RGB/RGBA image.
            phrase: what to find ("the red car").
            hint: a user box is segmented directly; a user point (x, y) gives SAM's best
                mask around it.

        Returns:
            ``resolved``, ``ambiguous`` (several close candidates for a singular phrase) or
            ``unresolved`` with the reason.
        """
        rgb = as_rgb(image)
        try:
            if hint is not None and hint.box is None and hint.point is not None:
                return self._decide(self.segment_point(rgb, hint.point, phrase or "point"),
                                    phrase or "point")
            if hint is not None and hint.box is not None:
                dets = [Detection(tuple(float(v) for v in hint.box), 1.0, phrase or "box")]
            else:
                prompt = detector_prompt(phrase or "")
                if not prompt:
                    return Localization([], "unresolved", "no phrase to look for")
                dets = self.detect(rgb, prompt)
            if not dets:
                return Localization([], "unresolved", f"the detector found no {phrase!r} "
                                    f"scoring above {self.box_threshold:g}")
            masks = self.segment(rgb, dets[: self.max_candidates])
        except ModelUnavailable as exc:
            return Localization([], "unresolved", str(exc))
        masks = [m for m in masks if m.mask.any()]
        if not masks:
            return Localization([], "unresolved", "the segmenter returned empty masks")
        return self._decide(masks, phrase)

    def _decide(self, masks: list[Candidate], phrase: str) -> Localization:
        masks.sort(key=lambda m: m.score, reverse=True)
        plural = bool(PLURAL.search(phrase.lower().strip()))
        if len(masks) == 1 or plural:
            return Localization(masks, "resolved", f"{len(masks)} match(es) for {phrase!r}",
                                plural=plural)
        if masks[0].score - masks[1].score >= self.ambiguity_margin:
            return Localization(masks, "resolved", f"best of {len(masks)} for {phrase!r}")
        return Localization(masks, "ambiguous", f"{len(masks)} candidates for {phrase!r} "
                            "with close scores")

    # -- detection ----------------------------------------------------------------------
    def detect(self, rgb: np.ndarray, prompt: str) -> list[Detection]:
        """Boxes for ``prompt`` over the frame, plus zoomed tiles when needed, merged by NMS."""
        height, width = rgb.shape[:2]
        dets = self._detect_view(rgb, prompt, (0, 0))
        area = float(height * width)
        small = all((d.box[2] - d.box[0]) * (d.box[3] - d.box[1]) < self.small_fraction * area
                    for d in dets)
        if self.tiles and small and max(height, width) > self.tile_side:
            for x0, y0, x1, y1 in tile_grid(height, width, self.tile_side, 0.25):
                dets += self._detect_view(rgb[y0:y1, x0:x1], prompt, (x0, y0))
            log.info("tiled search for %r: %d boxes before NMS", prompt, len(dets))
        return nms(dets)

    def _detect_view(self, rgb: np.ndarray, prompt: str,
                     offset: tuple[int, int]) -> list[Detection]:
        import torch
        from PIL import Image

        loaded = get_manager().load("detector")
        batch = loaded.processor(images=Image.fromarray(rgb), text=prompt, return_tensors="pt")
        with torch.inference_mode():
            outputs = loaded.model(**loaded.inputs(batch))
        result = loaded.processor.post_process_grounded_object_detection(
            outputs, batch["input_ids"], threshold=self.box_threshold,
            text_threshold=self.text_threshold, target_sizes=[rgb.shape[:2]])[0]
        labels = result.get("text_labels") or result.get("labels") or []
        ox, oy = offset
        out = []
        for box, score, label in zip(result["boxes"].float().tolist(),
                                     result["scores"].float().tolist(), labels, strict=False):
            x0, y0, x1, y1 = box
            if x1 - x0 < 1 or y1 - y0 < 1:
                continue
            out.append(Detection((x0 + ox, y0 + oy, x1 + ox, y1 + oy), float(score),
                                 str(label).replace("[SEP]", "").strip(" .") or prompt))
        return out

    # -- segmentation -------------------------------------------------------------------
    def segment(self, rgb: np.ndarray, dets: list[Detection]) -> list[Candidate]:
        """One SAM mask per box, at the image's size; score = detector score × SAM IoU."""
        import torch
        from PIL import Image

        loaded = get_manager().load("segmenter")
        height, width = rgb.shape[:2]
        boxes = [[max(0.0, d.box[0]), max(0.0, d.box[1]), min(float(width), d.box[2]),
                  min(float(height), d.box[3])] for d in dets]
        batch = loaded.processor(images=Image.fromarray(rgb), input_boxes=[boxes],
                                 return_tensors="pt")
        with torch.inference_mode():
            out = loaded.model(**loaded.inputs(batch), multimask_output=False)
        masks = loaded.processor.image_processor.post_process_masks(
            out.pred_masks.float().cpu(), batch["original_sizes"].cpu(),
            batch["reshaped_input_sizes"].cpu())[0]
        ious = out.iou_scores.float().cpu().reshape(len(dets), -1)[:, 0]
        result = []
        for det, mask, iou in zip(dets, masks, ious.tolist(), strict=True):
            binary = np.asarray(mask[0].numpy(), dtype=bool)
            score = float(np.clip(det.score * max(0.0, min(1.0, iou)), 0.0, 1.0))
            result.append(Candidate(binary, score, det.label, self.name,
                                    {"detector": float(det.score),
                                     "segmenter": float(max(0.0, min(1.0, iou)))},
                                    box=tuple(int(round(v)) for v in det.box)))
        return result

    def segment_point(self, rgb: np.ndarray, point: tuple[int, int], label: str) -> list[Candidate]:
        """SAM's best of its three masks around a clicked point ``(x, y)``."""
        import torch
        from PIL import Image

        height, width = rgb.shape[:2]
        x, y = (float(v) for v in point)
        if not (0 <= x < width and 0 <= y < height):
            raise LocalizationError(f"point {point} is outside the {width}x{height} image")
        loaded = get_manager().load("segmenter")
        batch = loaded.processor(images=Image.fromarray(rgb), input_points=[[[x, y]]],
                                 return_tensors="pt")
        with torch.inference_mode():
            out = loaded.model(**loaded.inputs(batch), multimask_output=True)
        masks = loaded.processor.image_processor.post_process_masks(
            out.pred_masks.float().cpu(), batch["original_sizes"].cpu(),
            batch["reshaped_input_sizes"].cpu())[0][0]
        ious = out.iou_scores.float().cpu().reshape(-1)
        order = [i for i in ious.argsort(descending=True).tolist() if masks[i].any()]
        if not order:
            return []
        best = order[0]
        score = float(np.clip(ious[best].item(), 0.0, 1.0))
        return [Candidate(np.asarray(masks[best].numpy(), dtype=bool), score, label, self.name,
                          {"segmenter": score, "user": 1.0})]
