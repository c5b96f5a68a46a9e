"""TF.js graph models as torch callables: the converter behind the embedded perception.

A TF.js *graph model* is a JSON file (``modelTopology.node``: TensorFlow ops with their
inputs and attributes; ``weightsManifest``: the constants, stored one after another in
binary shards, some quantised to float16 or uint8) plus those shards. ``load_graph``
reads both, checks every op is one this module implements, folds the nodes that depend
only on constants, and returns a ``TfjsGraph`` that runs the rest with torch ops, keeping
TensorFlow's semantics (NHWC tensors, ``SAME`` padding split with the extra pixel after,
half-pixel bilinear resize). ``OPS`` holds exactly the ops the shipped graphs (NanoDet,
BlazeFace, MediaPipe Selfie) use, each checked against a reference in the tests. Nothing
is executed from the file: it is data, and an op outside ``OPS`` is refused with its name.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: the largest graph JSON and weight total accepted (the shipped models are < 10 MB)
MAX_JSON_BYTES = 32 << 20
MAX_WEIGHT_BYTES = 256 << 20
_DTYPES = {"float32": np.float32, "int32": np.int32, "bool": np.bool_}
_QUANT = {"float16": np.float16, "uint8": np.uint8, "uint16": np.uint16}


class GraphError(ValueError):
    """A graph file that is malformed, too large, or uses an op this module lacks."""


@dataclass
class Node:
    """One op of the graph: its name, op type, inputs (``name`` or ``name:k``), attributes."""

    name: str
    op: str
    inputs: list[str]
    attr: dict[str, Any] = field(default_factory=dict)


@dataclass
class GraphSpec:
    """A parsed graph: nodes in execution order, constants, declared inputs and outputs."""

    nodes: list[Node]
    consts: dict[str, np.ndarray]
    inputs: list[str]
    outputs: list[str]


# ------------------------------------------------------------------------------ parsing


def attr_value(attr: dict[str, Any], key: str, default: Any = None) -> Any:
    """Decode one TF.js attribute (``{"i": "2"}``, ``{"s": base64}``, ``{"list": …}``)."""
    raw = attr.get(key)
    if raw is None:
        return default
    if "list" in raw:
        lst = raw["list"]
        if "i" in lst:
            return [int(v) for v in lst["i"]]
        if "f" in lst:
            return [float(v) for v in lst["f"]]
        if "s" in lst:
            return [base64.b64decode(v).decode() for v in lst["s"]]
        return []
    if "i" in raw:
        return int(raw["i"])
    if "f" in raw:
        return float(raw["f"])
    if "b" in raw:
        return bool(raw["b"])
    if "s" in raw:
        return base64.b64decode(raw["s"]).decode()
    if "type" in raw:
        return raw["type"]
    return default


def _read_weights(manifest: list[dict[str, Any]], folder: Path) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for group in manifest:
        data = b"".join(_shard(folder, p) for p in group["paths"])
        if len(data) > MAX_WEIGHT_BYTES:
            raise GraphError(f"weights of {group['paths']} exceed {MAX_WEIGHT_BYTES} bytes")
        offset = 0
        for spec in group["weights"]:
            shape = [int(s) for s in spec.get("shape", [])]
            count = int(np.prod(shape)) if shape else 1
            quant = spec.get("quantization")
            stored = _QUANT[quant["dtype"]] if quant else _DTYPES.get(spec["dtype"])
            if stored is None:
                raise GraphError(f"weight {spec['name']!r} has unsupported dtype "
                                 f"{spec['dtype']!r}")
            size = count * np.dtype(stored).itemsize
            if offset + size > len(data):
                raise GraphError(f"weight shards end before {spec['name']!r}")
            values = np.frombuffer(data, stored, count, offset).reshape(shape)
            offset += size
            if quant and quant["dtype"] in ("uint8", "uint16"):
                values = values.astype(np.float32) * float(quant["scale"]) + float(quant["min"])
            out[spec["name"]] = values.astype(_DTYPES.get(spec["dtype"], np.float32))
    return out


def _shard(folder: Path, name: str) -> bytes:
    path = (folder / name).resolve()
    if path.parent != folder.resolve():
        raise GraphError(f"weight shard {name!r} lies outside the model's folder")
    return path.read_bytes()


def parse_graph(json_path: Path | str) -> GraphSpec:
    """Read a TF.js graph model (JSON + weight shards beside it) into a ``GraphSpec``.

    Args:
        json_path: the ``model.json`` file; its shards are looked up in the same folder.

    Returns:
        The nodes in execution order with the constants decoded to numpy.

    Raises:
        GraphError: malformed or oversized file, unknown op, or a cycle.
    """
    path = Path(json_path)
    if path.stat().st_size > MAX_JSON_BYTES:
        raise GraphError(f"{path.name} is larger than {MAX_JSON_BYTES} bytes")
    try:
        doc = json.loads(path.read_text())
        raw_nodes = doc["modelTopology"]["node"]
        manifest = doc["weightsManifest"]
    except (ValueError, KeyError, TypeError) as exc:
        raise GraphError(f"{path.name} is not a TF.js graph model: {exc}") from None
    consts = _read_weights(manifest, path.parent)
    nodes = [Node(str(n["name"]), str(n["op"]), [str(i) for i in n.get("input", [])],
                  dict(n.get("attr", {}))) for n in raw_nodes]
    unknown = sorted({n.op for n in nodes} - set(OPS) - {"Const", "Placeholder"})
    if unknown:
        raise GraphError(f"{path.name} uses ops this converter lacks: {', '.join(unknown)}")
    missing = [n.name for n in nodes if n.op == "Const" and n.name not in consts]
    if missing:
        raise GraphError(f"{path.name}: constants without weights: {missing[:5]}")
    signature = doc.get("signature") or doc.get("userDefinedMetadata", {}).get("signature", {})
    inputs = [n.name for n in nodes if n.op == "Placeholder"]
    outputs = [k.split(":")[0] if k.endswith(":0") else k
               for k in signature.get("outputs", {})]
    return GraphSpec(_topological(nodes), consts, inputs, outputs)


def _topological(nodes: list[Node]) -> list[Node]:
    by_name = {n.name: n for n in nodes}
    order: list[Node] = []
    state: dict[str, int] = {}
    for root in nodes:
        stack = [(root.name, False)]
        while stack:
            name, done = stack.pop()
            if done:
                state[name] = 2
                order.append(by_name[name])
                continue
            if state.get(name) == 2:
                continue
            if state.get(name) == 1:
                raise GraphError(f"the graph has a cycle through {name!r}")
            state[name] = 1
            stack.append((name, True))
            for inp in by_name[name].inputs:
                src = _source(inp)[0]
                if src not in by_name:
                    raise GraphError(f"{name!r} reads {src!r}, which is not in the graph")
                if state.get(src) != 2:
                    stack.append((src, False))
    return order


def _source(ref: str) -> tuple[str, int]:
    ref = ref.lstrip("^")
    name, _, index = ref.partition(":")
    return name, int(index) if index.isdigit() else 0


# ------------------------------------------------------------------------------- ops

Tensor = Any
OpFn = Callable[[Node, list[Tensor]], Any]
OPS: dict[str, OpFn] = {}


def _op(*names: str) -> Callable[[OpFn], OpFn]:
    def register(fn: OpFn) -> OpFn:
        for name in names:
            OPS[name] = fn
        return fn
    return register


def _torch() -> Any:
    import torch  # heavy: only once a graph runs

    return torch


def _ints(t: Tensor) -> list[int]:
    return [int(v) for v in t.reshape(-1).tolist()]


def _nhwc(node: Node) -> bool:
    fmt = attr_value(node.attr, "data_format", "NHWC")
    if fmt not in ("NHWC", "NCHW"):
        raise GraphError(f"{node.name}: data_format {fmt!r} is not supported")
    return fmt == "NHWC"


def _same_pads(size: int, k: int, stride: int, dilation: int) -> tuple[int, int]:
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _spatial_pad(node: Node, x: Tensor, kernel: Sequence[int], strides: Sequence[int],
                 dilations: Sequence[int], value: float = 0.0) -> Tensor:
    """Pad an NCHW tensor as the node's ``padding`` says (SAME/VALID/EXPLICIT)."""
    torch = _torch()
    mode = attr_value(node.attr, "padding", "VALID")
    if mode == "VALID":
        return x
    if mode == "SAME":
        top, bottom = _same_pads(int(x.shape[2]), int(kernel[0]), strides[0], dilations[0])
        left, right = _same_pads(int(x.shape[3]), int(kernel[1]), strides[1], dilations[1])
    elif mode == "EXPLICIT":
        p = attr_value(node.attr, "explicit_paddings", [])
        p = p[2:6] if _nhwc(node) else p[4:8]
        top, bottom, left, right = p
    else:
        raise GraphError(f"{node.name}: padding {mode!r} is not supported")
    if top == bottom == left == right == 0:
        return x
    return torch.nn.functional.pad(x, (left, right, top, bottom), value=value)


def _hw(node: Node, key: str, default: int = 1) -> list[int]:
    vals = attr_value(node.attr, key, [default] * 4)
    return vals[1:3] if _nhwc(node) else vals[2:4]


def _to_nchw(node: Node, x: Tensor) -> Tensor:
    return x.permute(0, 3, 1, 2) if _nhwc(node) else x


def _from_nchw(node: Node, y: Tensor) -> Tensor:
    return y.permute(0, 2, 3, 1) if _nhwc(node) else y


def _conv(node: Node, x: Tensor, weight: Tensor, groups: int) -> Tensor:
    torch = _torch()
    strides, dilations = _hw(node, "strides"), _hw(node, "dilations")
    x = _to_nchw(node, x)
    x = _spatial_pad(node, x, weight.shape[2:], strides, dilations)
    y = torch.nn.functional.conv2d(x, weight, None, strides, 0, dilations, groups)
    return _from_nchw(node, y)


def _fused(node: Node, y: Tensor, extra: list[Tensor]) -> Tensor:
    """Apply a fused op's tail (``BiasAdd``, then an activation) to an NHWC/NCHW result."""
    ops = attr_value(node.attr, "fused_ops", [])
    channel = -1 if _nhwc(node) else 1
    for name in ops:
        if name == "BiasAdd":
            bias = extra.pop(0)
            shape = [1] * y.ndim
            shape[channel] = -1
            y = y + bias.reshape(shape)
        else:
            y = _activation(node, name, y)
    return y


def _activation(node: Node, name: str, x: Tensor) -> Tensor:
    torch = _torch()
    if name == "Relu":
        return torch.relu(x)
    if name == "Relu6":
        return torch.clamp(x, 0.0, 6.0)
    if name == "LeakyRelu":
        alpha = attr_value(node.attr, "leakyrelu_alpha", attr_value(node.attr, "alpha", 0.2))
        return torch.nn.functional.leaky_relu(x, alpha)
    if name == "Sigmoid":
        return torch.sigmoid(x)
    raise GraphError(f"{node.name}: activation {name!r} is not supported")


@_op("Identity")
def _identity(node: Node, xs: list[Tensor]) -> Tensor:
    return xs[0]


@_op("Conv2D", "_FusedConv2D")
def _conv2d(node: Node, xs: list[Tensor]) -> Tensor:
    filt = xs[1].permute(3, 2, 0, 1)              # HWIO → OIHW
    groups = int(xs[0].shape[-1 if _nhwc(node) else 1]) // int(filt.shape[1])
    y = _conv(node, xs[0], filt, groups)
    return _fused(node, y, list(xs[2:])) if node.op.startswith("_Fused") else y


@_op("DepthwiseConv2dNative")
def _depthwise(node: Node, xs: list[Tensor]) -> Tensor:
    kh, kw, cin, mult = (int(v) for v in xs[1].shape)
    filt = xs[1].permute(2, 3, 0, 1).reshape(cin * mult, 1, kh, kw)
    return _conv(node, xs[0], filt, cin)


@_op("MaxPool")
def _pool(node: Node, xs: list[Tensor]) -> Tensor:
    torch = _torch()
    kernel, strides = _hw(node, "ksize"), _hw(node, "strides")
    x = _to_nchw(node, xs[0])
    x = _spatial_pad(node, x, kernel, strides, [1, 1], value=float("-inf"))
    return _from_nchw(node, torch.nn.functional.max_pool2d(x, kernel, strides))


@_op("Pad", "PadV2")
def _pad(node: Node, xs: list[Tensor]) -> Tensor:
    torch = _torch()
    pads = _ints(xs[1])
    flat: list[int] = []
    for i in reversed(range(len(pads) // 2)):
        flat += [pads[2 * i], pads[2 * i + 1]]
    value = float(xs[2].reshape(-1)[0]) if len(xs) > 2 else 0.0
    return torch.nn.functional.pad(xs[0], flat, value=value)


@_op("AvgPool")
def _avg_pool(node: Node, xs: list[Tensor]) -> Tensor:
    """TensorFlow's mean over each window; with ``SAME`` padding the padded cells are not
    counted (each mean divides by the real pixels under the window)."""
    torch = _torch()
    kernel, strides = _hw(node, "ksize"), _hw(node, "strides")
    x = _to_nchw(node, xs[0])
    padded = _spatial_pad(node, x, kernel, strides, [1, 1])
    total = torch.nn.functional.avg_pool2d(padded, kernel, strides) * (kernel[0] * kernel[1])
    if padded.shape == x.shape:
        return _from_nchw(node, total / (kernel[0] * kernel[1]))
    ones = _spatial_pad(node, torch.ones_like(x[:1, :1]), kernel, strides, [1, 1])
    count = torch.nn.functional.avg_pool2d(ones, kernel, strides) * (kernel[0] * kernel[1])
    return _from_nchw(node, total / count)


@_op("Conv2DBackpropInput")
def _conv_transpose(node: Node, xs: list[Tensor]) -> Tensor:
    """The transpose of a convolution (``input_sizes``, HWIO ``filter``, ``out_backprop``):
    the output has ``input_sizes``' shape and is the full transposed result cropped by the
    padding the forward convolution from that shape would have used."""
    torch = _torch()
    sizes, filt, x = _ints(xs[0]), xs[1], xs[2]
    if attr_value(node.attr, "dilations", [1, 1, 1, 1]) != [1, 1, 1, 1]:
        raise GraphError(f"{node.name}: a dilated transposed convolution is not supported")
    strides = _hw(node, "strides")
    out_hw = sizes[1:3] if _nhwc(node) else sizes[2:4]
    x = _to_nchw(node, x)
    weight = filt.permute(3, 2, 0, 1)             # HWIO → (in of x, out, kh, kw)
    y = torch.nn.functional.conv_transpose2d(x, weight, None, strides)
    mode = attr_value(node.attr, "padding", "VALID")
    crops = []
    for axis in (0, 1):
        k, s, n = int(filt.shape[axis]), strides[axis], int(x.shape[2 + axis])
        if mode == "SAME":
            total = max((n - 1) * s + k - out_hw[axis], 0)
            crops.append(total // 2)
        elif mode == "VALID":
            crops.append(0)
        else:
            raise GraphError(f"{node.name}: padding {mode!r} is not supported")
    short = [max(0, crops[a] + out_hw[a] - int(y.shape[2 + a])) for a in (0, 1)]
    if any(short):          # output_padding: the rows past the full result are zeros
        y = torch.nn.functional.pad(y, (0, short[1], 0, short[0]))
    y = y[:, :, crops[0]:crops[0] + out_hw[0], crops[1]:crops[1] + out_hw[1]]
    return _from_nchw(node, y)


def _binary(fn: Callable[[Tensor, Tensor], Tensor]) -> OpFn:
    return lambda node, xs: fn(xs[0], xs[1])


OPS.update({"Add": _binary(lambda a, b: a + b), "AddV2": _binary(lambda a, b: a + b),
            "Mul": _binary(lambda a, b: a * b)})
for _name in ("Relu", "Relu6", "LeakyRelu", "Sigmoid"):
    OPS[_name] = lambda node, xs, _n=_name: _activation(node, _n, xs[0])


@_op("AddN")
def _add_n(node: Node, xs: list[Tensor]) -> Tensor:
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


@_op("ConcatV2")
def _concat(node: Node, xs: list[Tensor]) -> Tensor:
    axis = _ints(xs[-1])[0]
    return _torch().cat(list(xs[:-1]), dim=axis)


@_op("Transpose")
def _transpose(node: Node, xs: list[Tensor]) -> Tensor:
    return xs[0].permute(*_ints(xs[1]))


@_op("Reshape")
def _reshape(node: Node, xs: list[Tensor]) -> Tensor:
    return xs[0].reshape(_ints(xs[1]))


@_op("SplitV")
def _split_v(node: Node, xs: list[Tensor]) -> list[Tensor]:
    sizes, axis = _ints(xs[1]), _ints(xs[2])[0]
    if -1 in sizes:
        sizes[sizes.index(-1)] = int(xs[0].shape[axis]) - (sum(sizes) + 1)
    return list(_torch().split(xs[0], sizes, dim=axis))


@_op("ResizeBilinear")
def _resize(node: Node, xs: list[Tensor]) -> Tensor:
    """Bilinear resize with half-pixel centres (the only form the shipped graphs use; it
    is exactly torch's ``align_corners=False``)."""
    if attr_value(node.attr, "align_corners", False) or \
            not attr_value(node.attr, "half_pixel_centers", False):
        raise GraphError(f"{node.name}: only half-pixel-centre bilinear resize is supported")
    height, width = _ints(xs[1])
    y = _torch().nn.functional.interpolate(xs[0].permute(0, 3, 1, 2), (height, width),
                                           mode="bilinear", align_corners=False)
    return y.permute(0, 2, 3, 1)


@_op("SparseToDense")
def _sparse_to_dense(node: Node, xs: list[Tensor]) -> Tensor:
    torch = _torch()
    indices, shape, values, default = xs
    out = torch.full(_ints(shape), default.reshape(-1)[0].item(), dtype=values.dtype)
    idx = indices.long().reshape(-1, max(1, len(_ints(shape))))
    vals = values.reshape(-1).expand(idx.shape[0]) if values.numel() == 1 else values
    out[tuple(idx.t())] = vals
    return out


# ------------------------------------------------------------------------------ runtime


class TfjsGraph:
    """A converted graph: call it with numpy inputs, get numpy outputs by name.

    Constant sub-graphs are folded once at load; the rest runs under
    ``torch.inference_mode`` on the CPU.
    """

    def __init__(self, spec: GraphSpec) -> None:
        torch = _torch()
        self.inputs, self.outputs = spec.inputs, spec.outputs
        values: dict[str, Any] = {n: torch.from_numpy(np.array(v)) for n, v in
                                  spec.consts.items()}
        self._steps: list[Node] = []
        with torch.inference_mode():
            for node in spec.nodes:
                if node.op == "Const" or node.op == "Placeholder":
                    continue
                refs = [_source(i) for i in node.inputs if not i.startswith("^")]
                if all(_is_const(values, name) for name, _ in refs):
                    values[node.name] = OPS[node.op](node, [_get(values, r) for r in refs])
                else:
                    self._steps.append(node)
        self._consts = values

    def __call__(self, feeds: dict[str, np.ndarray] | np.ndarray,
                 outputs: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Run the graph.

        Args:
            feeds: input name → array, or one array for a single-input graph.
            outputs: node names to return (default: the graph's declared outputs).

        Returns:
            Output name → float32/int numpy array.
        """
        torch = _torch()
        if isinstance(feeds, np.ndarray):
            feeds = {self.inputs[0]: feeds}
        tensors = {name: torch.from_numpy(np.ascontiguousarray(arr, np.float32))
                   for name, arr in feeds.items()}
        wanted = list(outputs or self.outputs)
        with torch.inference_mode():
            values = self.run_torch(tensors, wanted)
        return {name: v.numpy() for name, v in zip(wanted, values, strict=True)}

    def run_torch(self, feeds: dict[str, Tensor],
                  outputs: Sequence[str] | None = None) -> list[Tensor]:
        """Run the graph on torch tensors (traceable by ``torch.onnx.export``).

        Args:
            feeds: input name → tensor.
            outputs: node names to return (default: the declared outputs).

        Returns:
            The output tensors, in the order asked.
        """
        values = dict(self._consts)
        values.update(feeds)
        for node in self._steps:
            refs = [_source(i) for i in node.inputs if not i.startswith("^")]
            values[node.name] = OPS[node.op](node, [_get(values, r) for r in refs])
        return [_get(values, _source(name)) for name in (outputs or self.outputs)]


def _is_const(values: dict[str, Any], name: str) -> bool:
    return name in values


def _get(values: dict[str, Any], ref: tuple[str, int]) -> Tensor:
    value = values[ref[0]]
    return value[ref[1]] if isinstance(value, list) else value


def load_graph(json_path: Path | str) -> TfjsGraph:
    """Parse and convert a TF.js graph model (see ``parse_graph``) into a runnable graph."""
    return TfjsGraph(parse_graph(json_path))
