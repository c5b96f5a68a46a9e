"""TF.js graph (and float16 ONNX) → ONNX, so that OpenCV's dnn module runs the embedded
detectors.

The graph is run by ``tfjs.TfjsGraph`` (torch ops with TensorFlow's semantics) and
traced by ``torch.onnx.export``; the exported file is then loaded back in OpenCV and its
outputs compared with the torch run on a fixed random input before it is kept. Done once
by the install step (``store.convert_graphs``), never on a request.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pipelines.files import atomic_write
from pipelines.perception.tfjs import TfjsGraph, parse_graph

log = logging.getLogger(__name__)

#: largest difference allowed between the torch run and the ONNX file in OpenCV
TOLERANCE = 1e-3


def input_shape(spec: Any) -> list[int]:
    """The fixed input shape the graph's placeholder declares (unknown sizes → 1)."""
    node = next(n for n in spec.nodes if n.op == "Placeholder")
    dims = node.attr.get("shape", {}).get("shape", {}).get("dim", [])
    shape = [max(1, int(d.get("size", 1))) for d in dims]
    if len(shape) != 4:
        raise ValueError(f"{node.name}: expected a 4-D image input, got {shape}")
    return shape


def graph_to_onnx(json_path: Path, onnx_path: Path, seed: int = 0) -> Path:
    """Convert one TF.js graph model to ONNX and check it against the torch run.

    Args:
        json_path: the TF.js ``model.json`` (weight shards beside it).
        onnx_path: where to write the ``.onnx`` file.
        seed: seed of the random check input.

    Returns:
        ``onnx_path``.

    Raises:
        ValueError: the exported model disagrees with the graph beyond ``TOLERANCE``.
    """
    import tempfile

    import torch  # heavy: only the install step converts

    spec = parse_graph(json_path)
    graph = TfjsGraph(spec)
    shape = input_shape(spec)

    class _Module(torch.nn.Module):
        def forward(self, x: Any) -> tuple[Any, ...]:
            return tuple(graph.run_torch({graph.inputs[0]: x}))

    sample = np.random.default_rng(seed).random(shape, dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        # tracing turns the graph's fixed shapes into constants, as intended
        warnings.simplefilter("ignore")
        out = Path(tmp) / "model.onnx"
        torch.onnx.export(_Module(), (torch.from_numpy(sample),), str(out), dynamo=False,
                          opset_version=13, input_names=["input"],
                          output_names=list(graph.outputs))
        data = fold_constants(out.read_bytes())
    expected = graph(sample)
    net = cv2.dnn.readNetFromONNX(np.frombuffer(data, np.uint8))
    net.setInput(sample)
    got = net.forward(list(graph.outputs))
    for name, value in zip(graph.outputs, got, strict=True):
        diff = float(np.abs(value.reshape(expected[name].shape) - expected[name]).max())
        if diff > TOLERANCE:
            raise ValueError(f"{json_path.name}: ONNX output {name} differs from the graph "
                             f"by {diff:.2g}")
    atomic_write(onnx_path, data)
    log.info("converted %s to %s", json_path.name, onnx_path.name)
    return onnx_path


def fold_constants(data: bytes) -> bytes:
    """Evaluate every ONNX node whose inputs are all constants and store its result as an
    initializer (the tracer leaves shape arithmetic, e.g. ``Pad``'s pads, as small
    sub-graphs that OpenCV's importer cannot run)."""
    import onnx  # heavy: only the install step converts
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    model = onnx.load_from_string(data)
    graph = model.graph
    known = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    kept = []
    for node in graph.node:
        inputs = [i for i in node.input if i]
        if all(i in known for i in inputs) and not node.op_type.startswith("Random"):
            results = ReferenceEvaluator(node).run(None, {i: known[i] for i in inputs})
            known.update(zip(node.output, results, strict=True))
        else:
            kept.append(node)
    used = {i for node in kept for i in node.input} | {o.name for o in graph.output}
    del graph.node[:]
    graph.node.extend(kept)
    del graph.initializer[:]
    graph.initializer.extend(numpy_helper.from_array(np.asarray(value), name)
                             for name, value in known.items() if name in used)
    return model.SerializeToString()


def half_to_float(src: Path, dst: Path) -> Path:
    """A float16 ONNX file as float32, which OpenCV's dnn runs (it refuses float16 convs).

    Every float16 initializer and ``Constant`` becomes float32, the casts to and from
    float16 are dropped (their consumers read the cast's input), and only the first graph
    output is kept (the others are side outputs nobody reads). The result is loaded in
    OpenCV and run once on a fixed input before it is kept.

    Raises:
        ValueError: the converted file does not run or gives values outside [0, 1].
    """
    import onnx  # heavy: only the install step converts
    from onnx import TensorProto, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph

    def as_float(tensor: Any) -> Any:
        return numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float32),
                                       tensor.name)

    for init in graph.initializer:
        if init.data_type == TensorProto.FLOAT16:
            init.CopyFrom(as_float(init))
    bypass: dict[str, str] = {}
    for node in list(graph.node):
        for attr in node.attribute:
            if node.op_type == "Constant" and attr.name == "value" and \
                    attr.t.data_type == TensorProto.FLOAT16:
                attr.t.CopyFrom(as_float(attr.t))
        to = next((a.i for a in node.attribute if a.name == "to"), None)
        if node.op_type == "Cast" and to in (TensorProto.FLOAT16, TensorProto.FLOAT):
            bypass[node.output[0]] = node.input[0]
            graph.node.remove(node)

    def source(name: str) -> str:
        while name in bypass:
            name = bypass[name]
        return name

    del graph.output[1:]
    kept = graph.output[0].name
    for node in graph.node:
        node.input[:] = [source(i) for i in node.input]
        node.output[:] = [kept if o == source(kept) else o for o in node.output]
        node.input[:] = [kept if i == source(kept) else i for i in node.input]
    del graph.value_info[:]
    for value in list(graph.input) + list(graph.output):
        value.type.tensor_type.elem_type = TensorProto.FLOAT
    data = model.SerializeToString()
    net = cv2.dnn.readNetFromONNX(np.frombuffer(data, np.uint8))
    dims = [max(1, d.dim_value) for d in graph.input[0].type.tensor_type.shape.dim]
    net.setInput(np.random.default_rng(0).random(dims, dtype=np.float32) - 0.5)
    out = net.forward()
    if not np.isfinite(out).all() or out.min() < 0 or out.max() > 1:
        raise ValueError(f"{src.name}: the float32 copy gives values outside [0, 1]")
    atomic_write(dst, data)
    log.info("converted %s to %s", src.name, dst.name)
    return dst
