#!/usr/bin/python3
"""Writes a torchvision ResNet-18 as a quantized fusefuzz graph, for `fusefuzz check` on the
PyTorch quantization modes (targets/pytorch/README.md, "Whole models").

Usage: make_quant_model.py OUT.json [--size S] [--calibration N]

The model is tests/models/make_model.py's (random weights, non-identity BN statistics, eval
mode), written node by node in the order of BasicBlock.forward (conv1, bn1, relu, conv2, bn2,
the downsample's conv and bn, add, relu): the graph order is the module declaration order the
PyTorch adapter builds its float model in, so `ptq_eager`'s declaration-order lists are the
founding report's. Quantization as a static post-training tool puts it: every conv weight and the
fc weight per output channel on an int8 grid (symmetric, zero point 0), uint8 activations per
tensor with min/max ranges from N seeded calibration inputs, at the points PyTorch's flows
quantize: the input, each Conv-BN(-ReLU) chain's output, each residual Add+ReLU's output, the
pools' outputs (on their input's grid) and the fc output, which is the graph's integer output.
Nothing here is committed: the test generates it each run.
"""
import argparse
import base64
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_model  # noqa: E402


def f32(v):
    return float(np.float32(v))


def pack(t):
    a = np.asarray(t, dtype=np.float32)
    return {"shape": list(a.shape), "b64": base64.b64encode(a.astype("<f4").tobytes()).decode()}


class Writer:
    def __init__(self):
        self.nodes = []
        self.ranges = {}  # value -> (min, max) over calibration
        self.params = {}  # value -> (scale, zero point) once decided

    def node(self, name, op, inputs, attrs=None, params=None, quant=None):
        n = {"name": name, "op": op, "inputs": inputs, "outputs": [name]}
        if attrs:
            n["attrs"] = attrs
        if params:
            n["params"] = params
        if quant:
            n["quant"] = quant
        self.nodes.append(n)
        return name

    def qdq(self, value, params):
        """value -> QuantizeLinear -> DequantizeLinear; returns the dequantized value."""
        s, z = params
        q = {"type": "uint8", "scale": [s], "zero_point": [z]}
        self.node(value + "_q", "QuantizeLinear", [value], quant={"y": q})
        return self.node(value + "_dq", "DequantizeLinear", [value + "_q"], quant={"x": q})


def act_params(lo, hi):
    """uint8 per-tensor min/max parameters (the range widened to include 0)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = f32(max(hi - lo, 1e-6) / 255.0)
    z = int(min(255, max(0, round(-lo / s))))
    return s, z


def weight_grid(w):
    """Per output channel int8 symmetric: (weights on the grid, scales)."""
    m = w.shape[0]
    flat = w.reshape(m, -1).astype(np.float64)
    s = np.maximum(np.abs(flat).max(axis=1), 1e-8) / 127.0
    s = s.astype(np.float32)
    q = np.clip(np.rint(flat / s.reshape(-1, 1).astype(np.float64)), -127, 127)
    snapped = (q.astype(np.float32) * s.reshape(-1, 1)).astype(np.float32).reshape(w.shape)
    return snapped, [float(v) for v in s]


def conv_node(wr, name, conv, x):
    w, s = weight_grid(conv.weight.detach().numpy())
    with torch.no_grad():
        conv.weight.copy_(torch.from_numpy(w))  # the calibration runs the snapped weights
    p, st = conv.padding, conv.stride
    attrs = {"strides": [st[0], st[1]], "pads": [p[0], p[1], p[0], p[1]]}
    quant = {"W": {"type": "int8", "scale": s, "zero_point": [0] * len(s), "axis": 0}}
    return wr.node(name, "Conv", [x], attrs=attrs, params={"W": pack(w)}, quant=quant)


def bn_node(wr, name, bn, x):
    params = {"scale": pack(bn.weight.detach()), "bias": pack(bn.bias.detach()),
              "mean": pack(bn.running_mean), "var": pack(bn.running_var)}
    return wr.node(name, "BatchNorm", [x], attrs={"epsilon": bn.eps}, params=params)


def build_graph(model, size, ranges):
    """The graph; `ranges` (value -> (lo, hi)) gives each quantization point's parameters, or is
    None for the first (structure-only) pass, whose points record the values to calibrate."""
    wr = Writer()
    points = []

    def point(value, like=None):
        """A quantization point at value (on `like`'s grid when given)."""
        points.append(value)
        if ranges is None:
            return value
        p = wr.params[like] if like else act_params(*ranges[value])
        wr.params[value] = p
        return wr.qdq(value, p)

    x = point("input")
    x = conv_node(wr, "conv1", model.conv1, x)
    x = bn_node(wr, "bn1", model.bn1, x)
    x = point(wr.node("relu", "Relu", [x]))
    relu_point = "relu"
    x = wr.node("maxpool", "MaxPool", [x], attrs={"kernel_shape": [3, 3], "strides": [2, 2],
                                                   "pads": [1, 1, 1, 1]})
    x = point(x, like=relu_point)
    for li in range(1, 5):
        layer = getattr(model, "layer%d" % li)
        for bi, blk in enumerate(layer):
            pre = "layer%d.%d." % (li, bi)
            identity = x
            y = conv_node(wr, pre + "conv1", blk.conv1, x)
            y = bn_node(wr, pre + "bn1", blk.bn1, y)
            y = point(wr.node(pre + "relu1", "Relu", [y]))
            y = conv_node(wr, pre + "conv2", blk.conv2, y)
            y = point(bn_node(wr, pre + "bn2", blk.bn2, y))
            if blk.downsample is not None:
                d = conv_node(wr, pre + "downsample.0", blk.downsample[0], x)
                identity = point(bn_node(wr, pre + "downsample.1", blk.downsample[1], d))
            s = wr.node(pre + "add", "Add", [y, identity])
            x = point(wr.node(pre + "relu2", "Relu", [s]))
            last = pre + "relu2"
    x = wr.node("avgpool", "GlobalAvgPool", [x])
    points.append(x)
    if ranges is not None:
        # Flatten on the integers (PyTorch reshapes the quantized tensor), then dequantized.
        p = wr.params[x] = wr.params[last]
        q = {"type": "uint8", "scale": [p[0]], "zero_point": [p[1]]}
        x = wr.node("avgpool_q", "QuantizeLinear", [x], quant={"y": q})
        x = wr.node("flatten", "Flatten", [x], attrs={"axis": 1})
        x = wr.node("flatten_dq", "DequantizeLinear", [x], quant={"x": q})
    else:
        x = wr.node("flatten", "Flatten", [x], attrs={"axis": 1})
    w, s = weight_grid(model.fc.weight.detach().numpy())
    with torch.no_grad():
        model.fc.weight.copy_(torch.from_numpy(w))
    quant = {"B": {"type": "int8", "scale": s, "zero_point": [0] * len(s), "axis": 0}}
    fc = wr.node("fc", "Gemm", [x], attrs={"transB": 1},
                 params={"B": pack(w), "C": pack(model.fc.bias.detach())}, quant=quant)
    outputs = [fc]
    if ranges is not None:
        p = act_params(*ranges[fc])
        q = {"type": "uint8", "scale": [p[0]], "zero_point": [p[1]]}
        outputs = [wr.node("output", "QuantizeLinear", [fc], quant={"y": q})]
    points.append(fc)
    g = {"format": "fusefuzz-graph", "version": 2,
         "doc": "torchvision ResNet-18 (random weights, non-identity BN statistics), int8: "
                "per-channel weights, uint8 min/max activations (tests/models/make_quant_model.py)",
         "inputs": [{"name": "input", "shape": [1, 3, size, size]}],
         "nodes": wr.nodes, "outputs": outputs}
    return g, points


def calibrate(model, n, size):
    """value -> (min, max) over n seeded inputs, read off the float model (snapped weights)."""
    seen = {}

    def note(name, t):
        lo, hi = float(t.min()), float(t.max())
        a, b = seen.get(name, (lo, hi))
        seen[name] = (min(a, lo), max(b, hi))

    gen = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(n):
            x = torch.randn(1, 3, size, size, generator=gen)
            note("input", x)
            y = model.maxpool(model.relu(model.bn1(model.conv1(x))))
            note("relu", y)
            for li in range(1, 5):
                for bi, blk in enumerate(getattr(model, "layer%d" % li)):
                    pre = "layer%d.%d." % (li, bi)
                    a = blk.relu(blk.bn1(blk.conv1(y)))
                    note(pre + "relu1", a)
                    b = blk.bn2(blk.conv2(a))
                    note(pre + "bn2", b)
                    idn = y
                    if blk.downsample is not None:
                        idn = blk.downsample(y)
                        note(pre + "downsample.1", idn)
                    y = torch.relu(b + idn)
                    note(pre + "relu2", y)
            z = model.fc(torch.flatten(model.avgpool(y), 1))
            note("fc", z)
    return seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=32, help="input height and width")
    ap.add_argument("--calibration", type=int, default=8, help="calibration inputs")
    ap.add_argument("--block-outputs", action="store_true",
                    help="also answer each residual block's quantized output (integers): the "
                         "grid oracle's admitted spread grows with depth until the fc output "
                         "cannot be judged; a block's output near the input can")
    args = ap.parse_args()
    torch.manual_seed(0)
    model = make_model.build("resnet18")
    build_graph(model, args.size, None)  # snaps the weights onto their grids
    ranges = calibrate(model, args.calibration, args.size)
    g, _ = build_graph(model, args.size, ranges)
    if args.block_outputs:
        g["outputs"] += [n["outputs"][0] for n in g["nodes"]
                         if n["op"] == "QuantizeLinear" and n["name"].endswith("relu2_q")]
    with open(args.out, "w") as f:
        json.dump(g, f)


if __name__ == "__main__":
    main()
