"""A plain numpy interpreter of the TF.js ops NanoDet, BlazeFace and Selfie use, written from
TensorFlow's documented semantics and independent of ``pipelines.perception.tfjs`` (no
torch, no folding): the reference the converted ONNX files are checked against."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pipelines.perception.tfjs import attr_value, parse_graph


def _same(size: int, k: int, s: int) -> tuple[int, int]:
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def _pad_hw(x: np.ndarray, node, k: tuple[int, int], s: tuple[int, int], value=0.0):
    if attr_value(node.attr, "padding") != "SAME":
        return x
    t, b = _same(x.shape[1], k[0], s[0])
    left, r = _same(x.shape[2], k[1], s[1])
    return np.pad(x, ((0, 0), (t, b), (left, r), (0, 0)), constant_values=value)


def conv_nhwc(x, w, strides, depthwise=False):
    """x [N,H,W,C]; w [kh,kw,C,M] (depthwise) or [kh,kw,C,O]."""
    kh, kw = w.shape[:2]
    win = sliding_window_view(x, (kh, kw), axis=(1, 2))[:, ::strides[0], ::strides[1]]
    # win: [N, OH, OW, C, kh, kw]
    if depthwise:
        out = np.einsum("nhwcij,ijcm->nhwcm", win, w)
        return out.reshape(out.shape[0], out.shape[1], out.shape[2], -1)
    return np.tensordot(win, w, axes=([3, 4, 5], [2, 0, 1]))


def avg_pool_nhwc(x, k, s, padding):
    """Mean of each window; SAME pads with NaN so the padded cells are not counted."""
    if padding == "SAME":
        t, b = _same(x.shape[1], k[0], s[0])
        left, r = _same(x.shape[2], k[1], s[1])
        x = np.pad(x.astype(np.float64), ((0, 0), (t, b), (left, r), (0, 0)),
                   constant_values=np.nan)
    win = sliding_window_view(x, tuple(k), axis=(1, 2))[:, ::s[0], ::s[1]]
    return np.nanmean(win, axis=(-1, -2)).astype(np.float32)


def conv_transpose_nhwc(x, w, sizes, s, padding):
    """TensorFlow's Conv2DBackpropInput by its definition: every input pixel scatters its
    kernel-weighted values into the output (w [kh,kw,Cout_of_op,Cin_of_x]), shifted by the
    top/left padding the forward convolution from ``sizes`` would use."""
    n, oh, ow, oc = (int(v) for v in sizes)
    kh, kw = w.shape[:2]
    pt = _same(oh, kh, s[0])[0] if padding == "SAME" else 0
    pl = _same(ow, kw, s[1])[0] if padding == "SAME" else 0
    out = np.zeros((n, oh, ow, oc), np.float64)
    for i in range(x.shape[1]):
        for j in range(x.shape[2]):
            for a in range(kh):
                for b in range(kw):
                    y, z = i * s[0] + a - pt, j * s[1] + b - pl
                    if 0 <= y < oh and 0 <= z < ow:
                        out[:, y, z] += x[:, i, j] @ w[a, b].T
    return out.astype(np.float32)


def run(json_path, x: np.ndarray) -> dict[str, np.ndarray]:
    """Run the graph on ``x`` with numpy, returning the declared outputs."""
    spec = parse_graph(json_path)
    vals = {k: np.asarray(v) for k, v in spec.consts.items()}
    vals[spec.inputs[0]] = x.astype(np.float32)

    def get(ref):
        name, _, idx = ref.partition(":")
        v = vals[name]
        return v[int(idx or 0)] if isinstance(v, list) else v

    for node in spec.nodes:
        if node.op in ("Const", "Placeholder"):
            continue
        xs = [get(i) for i in node.inputs]
        op, a = node.op, node.attr
        if op in ("Conv2D", "_FusedConv2D", "DepthwiseConv2dNative"):
            s = attr_value(a, "strides")[1:3]
            w = xs[1]
            y = conv_nhwc(_pad_hw(xs[0], node, w.shape[:2], s), w, s,
                          op == "DepthwiseConv2dNative")
            for f in attr_value(a, "fused_ops", []) if op == "_FusedConv2D" else []:
                y = y + xs[2] if f == "BiasAdd" else np.maximum(y, 0) if f == "Relu" else y
            vals[node.name] = y
        elif op == "MaxPool":
            k, s = attr_value(a, "ksize")[1:3], attr_value(a, "strides")[1:3]
            p = _pad_hw(xs[0], node, k, s, -np.inf)
            vals[node.name] = sliding_window_view(p, k, axis=(1, 2))[
                :, ::s[0], ::s[1]].max(axis=(-1, -2))
        elif op in ("Pad", "PadV2"):
            pads = xs[1].reshape(-1, 2)
            vals[node.name] = np.pad(xs[0], pads, constant_values=xs[2] if len(xs) > 2 else 0)
        elif op in ("Add", "AddV2"):
            vals[node.name] = xs[0] + xs[1]
        elif op == "Mul":
            vals[node.name] = xs[0] * xs[1]
        elif op == "AddN":
            vals[node.name] = np.sum(xs, axis=0)
        elif op == "Relu6":
            vals[node.name] = np.clip(xs[0], 0, 6)
        elif op == "AvgPool":
            k, s = attr_value(a, "ksize")[1:3], attr_value(a, "strides")[1:3]
            vals[node.name] = avg_pool_nhwc(xs[0], k, s, attr_value(a, "padding"))
        elif op == "Conv2DBackpropInput":
            vals[node.name] = conv_transpose_nhwc(xs[2], xs[1], xs[0],
                                                  attr_value(a, "strides")[1:3],
                                                  attr_value(a, "padding"))
        elif op == "Relu":
            vals[node.name] = np.maximum(xs[0], 0)
        elif op == "LeakyRelu":
            alpha = attr_value(a, "alpha", 0.2)
            vals[node.name] = np.where(xs[0] >= 0, xs[0], alpha * xs[0])
        elif op == "Sigmoid":
            vals[node.name] = 0.5 * (1 + np.tanh(0.5 * xs[0]))    # no overflow for -x large
        elif op == "Transpose":
            vals[node.name] = xs[0].transpose(xs[1])
        elif op == "Reshape":
            vals[node.name] = xs[0].reshape(xs[1])
        elif op == "ConcatV2":
            vals[node.name] = np.concatenate(xs[:-1], axis=int(xs[-1]))
        elif op == "SplitV":
            cuts = np.cumsum(xs[1])[:-1]
            vals[node.name] = np.split(xs[0], cuts, axis=int(xs[2]))
        elif op == "Identity":
            vals[node.name] = xs[0]
        elif op == "SparseToDense":
            out = np.full(xs[1], xs[3], xs[2].dtype)
            out[tuple(xs[0].reshape(-1, len(xs[1])).T)] = xs[2]
            vals[node.name] = out
        elif op == "ResizeBilinear":
            assert attr_value(a, "half_pixel_centers") and not attr_value(a, "align_corners")
            vals[node.name] = _resize_half_pixel(xs[0], *xs[1])
        else:
            raise NotImplementedError(op)
    return {name: get(name) for name in spec.outputs}


def _resize_half_pixel(x, oh, ow):
    def axis(out, size):
        src = np.clip((np.arange(out) + 0.5) * size / out - 0.5, 0, None)
        lo = np.minimum(np.floor(src).astype(int), size - 1)
        hi = np.minimum(lo + 1, size - 1)
        return lo, hi, (src - lo).astype(np.float32)

    y0, y1, wy = axis(oh, x.shape[1])
    x0, x1, wx = axis(ow, x.shape[2])
    top = x[:, y0][:, :, x0] * (1 - wx)[None, None, :, None] + \
        x[:, y0][:, :, x1] * wx[None, None, :, None]
    bot = x[:, y1][:, :, x0] * (1 - wx)[None, None, :, None] + \
        x[:, y1][:, :, x1] * wx[None, None, :, None]
    return top * (1 - wy)[None, :, None, None] + bot * wy[None, :, None, None]
