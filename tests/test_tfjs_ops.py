"""The TF.js ops MediaPipe Selfie brought to the converter (``pipelines.perception.tfjs``):
each run through ``OPS`` on small random tensors and compared with a computation written
independently from TensorFlow's definition (numpy, no torch): AvgPool, Conv2DBackpropInput
(also checked as the exact adjoint of the forward convolution), Mul, AddN, Relu6. An op the
converter lacks is refused by name."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
import torch

from pipelines.perception.tfjs import OPS, GraphError, Node, parse_graph
from tests import tfjs_reference


def _node(op: str, padding: str | None = None, **lists: list[int]) -> Node:
    attr: dict = {"data_format": {"s": base64.b64encode(b"NHWC").decode()}}
    if padding:
        attr["padding"] = {"s": base64.b64encode(padding.encode()).decode()}
    for key, values in lists.items():
        attr[key] = {"list": {"i": [str(v) for v in values]}}
    return Node(f"test_{op}", op, [], attr)


def _run(node: Node, *xs: np.ndarray) -> np.ndarray:
    with torch.inference_mode():
        return OPS[node.op](node, [torch.from_numpy(np.asarray(x)) for x in xs]).numpy()


RNG = np.random.default_rng(31)


def test_avg_pool_valid_over_the_whole_map_is_the_channel_mean() -> None:
    x = RNG.standard_normal((1, 64, 64, 5)).astype(np.float32)   # Selfie's squeeze step
    got = _run(_node("AvgPool", "VALID", ksize=[1, 64, 64, 1], strides=[1, 64, 64, 1]), x)
    assert got.shape == (1, 1, 1, 5)
    np.testing.assert_allclose(got[0, 0, 0], x.mean(axis=(0, 1, 2)), atol=1e-5)


@pytest.mark.parametrize("size,k,s", [(7, 3, 2), (8, 3, 2), (9, 2, 2), (6, 3, 1)])
def test_avg_pool_same_does_not_count_the_padding(size, k, s) -> None:
    x = RNG.standard_normal((2, size, size + 1, 3)).astype(np.float32)
    got = _run(_node("AvgPool", "SAME", ksize=[1, k, k, 1], strides=[1, s, s, 1]), x)
    expected = tfjs_reference.avg_pool_nhwc(x, (k, k), (s, s), "SAME")
    assert got.shape == expected.shape == (2, -(-size // s), -(-(size + 1) // s), 3)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    if k == 3 and s == 1:    # the corner: the mean of the 2x2 real pixels, not diluted
        np.testing.assert_allclose(got[0, 0, 0], x[0, :2, :2].mean(axis=(0, 1)), atol=1e-5)


@pytest.mark.parametrize("out,k,s,padding", [(16, 2, 2, "SAME"), (15, 3, 2, "SAME"),
                                              (16, 3, 2, "SAME"), (9, 3, 1, "SAME"),
                                              (17, 3, 2, "VALID")])
def test_conv2d_backprop_input_matches_its_definition(out, k, s, padding) -> None:
    cin = 4
    inner = -(-out // s) if padding == "SAME" else (out - k) // s + 1
    x = RNG.standard_normal((1, inner, inner, cin)).astype(np.float32)
    w = RNG.standard_normal((k, k, 2, cin)).astype(np.float32)
    sizes = np.array([1, out, out, 2], np.int32)
    got = _run(_node("Conv2DBackpropInput", padding, strides=[1, s, s, 1]), sizes, w, x)
    expected = tfjs_reference.conv_transpose_nhwc(x, w, sizes, (s, s), padding)
    assert got.shape == expected.shape == (1, out, out, 2)
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_conv2d_backprop_input_is_the_adjoint_of_the_forward_convolution() -> None:
    """<conv(y), x> == <y, conv_transpose(x)> for the convolution TensorFlow differentiates:
    a transposed convolution with the wrong padding or kernel flip fails this."""
    y = RNG.standard_normal((1, 16, 15, 2)).astype(np.float32)   # odd and even padding
    w = RNG.standard_normal((3, 3, 2, 4)).astype(np.float32)
    node = _node("Conv2D", "SAME", strides=[1, 2, 2, 1])
    forward = tfjs_reference.conv_nhwc(tfjs_reference._pad_hw(y, node, (3, 3), (2, 2)), w,
                                       (2, 2))
    x = RNG.standard_normal(forward.shape).astype(np.float32)
    back = _run(_node("Conv2DBackpropInput", "SAME", strides=[1, 2, 2, 1]),
                np.array(y.shape, np.int32), w, x)
    assert np.isclose(float((forward * x).sum()), float((y * back).sum()), rtol=1e-4)


def test_mul_broadcasts_addn_sums_relu6_clips() -> None:
    a = RNG.standard_normal((1, 4, 4, 3)).astype(np.float32)
    b = RNG.standard_normal((1, 1, 1, 3)).astype(np.float32)
    c = RNG.standard_normal((1, 4, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(_run(Node("m", "Mul", []), a, b), a * b, atol=1e-6)
    np.testing.assert_allclose(_run(Node("n", "AddN", []), a, c, a), a + c + a, atol=1e-6)
    x = np.array([-3.0, 0.0, 2.5, 6.0, 9.0], np.float32)
    assert _run(Node("r", "Relu6", []), x).tolist() == [0.0, 0.0, 2.5, 6.0, 6.0]


def test_an_op_the_converter_lacks_is_refused_by_name(tmp_path) -> None:
    doc = {"modelTopology": {"node": [
        {"name": "x", "op": "Placeholder", "attr": {}},
        {"name": "y", "op": "MatMul", "input": ["x", "x"], "attr": {}}]},
        "weightsManifest": []}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(GraphError, match="MatMul"):
        parse_graph(path)
