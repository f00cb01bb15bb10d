#!/usr/bin/python3
"""Writes layers-chain.json and layers-chain.inputs.json: an int8 chain of 11 layers
DQ -> Conv 1x1 -> Q (33 nodes, integer input 'x'), every conv fused by the embedded engine's
qdq-conv-fuse, and only the middle one (layer 6) with a bias declared on an int32 grid whose scale
is half of s_x * s_w: the fault bias-scale-unchecked (ONNX Runtime #28229) then moves its output
channel 2 by ~16 steps, so `check --layers --inject bias-scale-unchecked` departs first at
'l6_q' and the minimizer starts from the block around it (ctest
CheckCommand.MinimizerStartsFromTheDepartingLayersBlock). Deterministic (seed 43)."""
import base64
import json
import os

import numpy as np

LAYERS, C = 11, 4
rng = np.random.default_rng(43)


def pack(a):
    a = np.asarray(a, dtype=np.float32)
    return {"shape": list(a.shape), "b64": base64.b64encode(a.astype("<f4").tobytes()).decode()}


def grid(s):
    return {"type": "int8", "scale": [float(np.float32(s))], "zero_point": [0]}


x_int = rng.integers(-100, 101, size=(1, C, 3, 3)).astype(np.float32)
s_x, s_w = 1.0 / 32, 1.0 / 64
nodes, value, act = [], "x", x_int * np.float32(s_x)
for i in range(1, LAYERS + 1):
    w = rng.integers(-40, 41, size=(C, C, 1, 1)).astype(np.float32) * np.float32(s_w)
    y = np.einsum("mc,nchw->nmhw", w[:, :, 0, 0], act)
    conv = {"name": "l%d_conv" % i, "op": "Conv", "inputs": ["l%d_dq" % i],
            "outputs": ["l%d_conv" % i], "params": {"W": pack(w)}, "quant": {"W": grid(s_w)}}
    if i == (LAYERS + 1) // 2:
        bias_scale = np.float32(s_x * s_w / 2)
        b = np.zeros(C, dtype=np.float32)
        b[2] = np.float32(np.rint(0.5 / bias_scale) * bias_scale)
        y = y + b.reshape(1, C, 1, 1)
        conv["params"]["B"] = pack(b)
        conv["quant"]["B"] = {"type": "int32", "axis": 0, "scale": [float(bias_scale)] * C,
                              "zero_point": [0] * C}
    nodes.append({"name": "l%d_dq" % i, "op": "DequantizeLinear", "inputs": [value],
                  "outputs": ["l%d_dq" % i], "quant": {"x": grid(s_x)}})
    nodes.append(conv)
    # The next grid: the output's range over the sample on 100 steps (a power of two).
    s_y = 2.0 ** np.ceil(np.log2(max(np.abs(y).max(), 1e-3) / 100))
    nodes.append({"name": "l%d_q" % i, "op": "QuantizeLinear", "inputs": ["l%d_conv" % i],
                  "outputs": ["l%d_q" % i], "quant": {"y": grid(s_y)}})
    act = np.clip(np.rint(y / s_y), -128, 127) * np.float32(s_y)
    value, s_x = "l%d_q" % i, s_y
graph = {"format": "fusefuzz-graph", "version": 2, "doc": __doc__.split("\n\n")[0].replace("\n", " "),
         "inputs": [{"name": "x", "shape": [1, C, 3, 3]}], "nodes": nodes, "outputs": [value]}
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "layers-chain.json"), "w") as f:
    json.dump(graph, f, indent=1)
    f.write("\n")
with open(os.path.join(here, "layers-chain.inputs.json"), "w") as f:
    json.dump({"x": pack(x_int)}, f, indent=1)
    f.write("\n")
