"""Issue 32, class "focus": the sharp flower, not its blurred look-alikes in the bokeh.

A real photo (flowers, lxqt-themes, tune split: anemones, a few sharp, many blurred) and
its hand-drawn mask: "the dark blue flower below it" names the sharp blue anemone; the
blurred blue ones lie lower in the frame, so "nearest the bottom" among every blue region
took a blurred one (IoU 0). Focus leaves the blurred ones out first. A photo sharp
throughout keeps every candidate (``in_focus`` decides nothing there).
"""

from __future__ import annotations

import cv2
import numpy as np

from eval import realset
from eval.localization import mask_iou
from pipelines.localizers import embedded, focus
from pipelines.localizers.base import Candidate
from pipelines.localizers.embedded import EmbeddedLocalizer

SIDE = 1024


def _small(case_id: str) -> tuple[np.ndarray, np.ndarray, str]:
    case = realset.case(case_id)
    image = realset.photo(case.photo)
    k = SIDE / max(image.shape[:2])
    size = (round(image.shape[1] * k), round(image.shape[0] * k))
    truth = cv2.resize(case.truth().astype(np.uint8), size, interpolation=cv2.INTER_NEAREST)
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA), truth > 0, case.phrase


def test_the_sharp_flower_is_taken_not_a_blurred_one_lower_down(monkeypatch) -> None:
    image, truth, phrase = _small("flowers__blue_low")
    found = EmbeddedLocalizer().locate(image, phrase)
    assert found.status == "resolved" and "out-of-focus" in found.reason
    assert mask_iou(found.union(), truth) >= 0.6
    monkeypatch.setattr(embedded, "in_focus", lambda small, cands: (cands, 0))
    blind = EmbeddedLocalizer().locate(image, phrase)
    assert mask_iou(blind.union(), truth) < 0.1


def test_a_photo_sharp_throughout_keeps_every_candidate() -> None:
    rng = np.random.default_rng(0)
    image = rng.integers(0, 255, (200, 300, 3), dtype=np.uint8)       # sharp everywhere
    masks = [np.zeros((200, 300), bool) for _ in range(3)]
    for i, m in enumerate(masks):
        m[40:90, 20 + 90 * i:80 + 90 * i] = True
    cands = [Candidate(m, 0.8, "blue region", "colour") for m in masks]
    kept, dropped = focus.in_focus(image, cands)
    assert dropped == 0 and len(kept) == 3
