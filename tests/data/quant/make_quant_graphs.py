#!/usr/bin/env python3
"""Writes the hand-built quantized graphs of tests/data/quant/ (deterministic: a fixed LCG).

The ONNX Runtime check (tests/onnx_quant_ort.sh) exports them as QDQ models. Weights are
declared on per-channel int8 grids and biases on the int32 grid s_x * s_w, as QDQ models carry
them: every value is float32(s * q). Run from anywhere: python3 make_quant_graphs.py
"""
import json
import os
import struct

STATE = [12345]


def rnd(lo, hi):
    """An integer in [lo, hi] from a 31-bit LCG (no library randomness: same files everywhere)."""
    STATE[0] = (STATE[0] * 1103515245 + 12345) % (1 << 31)
    return lo + STATE[0] % (hi - lo + 1)


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def qparams(t, scale, zp, axis=None):
    q = {"type": t, "scale": scale if isinstance(scale, list) else [scale],
         "zero_point": zp if isinstance(zp, list) else [zp]}
    if axis is not None:
        q["axis"] = axis
    return q


def conv_params(m, c, k, s_x, name):
    s_w = [f32(0.004 * (1 + (i % 5) / 4)) for i in range(m)]
    w = [f32(s_w[o] * rnd(-127, 127)) for o in range(m) for _ in range(c * k * k)]
    s_b = [f32(f32(s_x) * s) for s in s_w]
    b = [f32(s_b[o] * rnd(-2000, 2000)) for o in range(m)]
    return ({"W": {"shape": [m, c, k, k], "data": w}, "B": {"shape": [m], "data": b}},
            {"W": qparams("int8", s_w, [0] * m, 0), "B": qparams("int32", s_b, [0] * m, 0)})


def q(name, x, y, p):
    return {"name": name, "op": "QuantizeLinear", "inputs": [x], "outputs": [y], "quant": {"y": p}}


def dq(name, x, y, p):
    return {"name": name, "op": "DequantizeLinear", "inputs": [x], "outputs": [y],
            "quant": {"x": p}}


def graph(shape, nodes, outputs, doc):
    return {"format": "fusefuzz-graph", "version": 2, "doc": doc,
            "inputs": [{"name": "x", "shape": shape}], "nodes": nodes, "outputs": outputs}


def main():
    out = os.path.dirname(os.path.abspath(__file__))
    graphs = {}
    px = qparams("uint8", f32(0.03125), 128)
    params, quant = conv_params(8, 4, 3, 0.03125, "c")
    py = qparams("uint8", f32(0.05), 0)
    graphs["qdq-conv-relu"] = graph([1, 4, 8, 8], [
        q("q1", "x", "xq", px), dq("d1", "xq", "xd", px),
        {"name": "c", "op": "Conv", "inputs": ["xd"], "outputs": ["c"],
         "attrs": {"pads": [1, 1, 1, 1]}, "params": params, "quant": quant},
        {"name": "r", "op": "Relu", "inputs": ["c"], "outputs": ["r"]},
        q("q2", "r", "rq", py), dq("d2", "rq", "y", py)], ["y"],
        "QDQ Conv 3x3 (per-channel int8 W, int32 B) -> Relu -> Q uint8 z=0")
    pi = qparams("int8", f32(0.03), -5)
    params, quant = conv_params(4, 4, 1, 0.03, "c")
    po = qparams("int8", f32(0.04), 10)
    graphs["qdq-conv-residual-i8"] = graph([1, 4, 6, 6], [
        q("q1", "x", "xq", pi), dq("d1", "xq", "xd", pi),
        {"name": "c", "op": "Conv", "inputs": ["xd"], "outputs": ["c"], "params": params,
         "quant": quant},
        {"name": "a", "op": "Add", "inputs": ["c", "xd"], "outputs": ["a"]},
        q("q2", "a", "aq", po), dq("d2", "aq", "y", po)], ["y"],
        "QDQ Conv 1x1 int8 + residual Add -> Q int8 z=10")
    params, quant = conv_params(4, 4, 3, 0.03125, "qc")
    w = [round(v / quant["W"]["scale"][i // 36]) for i, v in enumerate(params["W"]["data"])]
    b = [round(v / quant["B"]["scale"][i]) for i, v in enumerate(params["B"]["data"])]
    pr = qparams("uint8", f32(0.0625), 100)
    graphs["qlinear-conv-add"] = graph([1, 4, 5, 5], [
        q("q1", "x", "xq", px), q("q2", "x", "xr", pr),
        {"name": "qc", "op": "QLinearConv", "inputs": ["xq", "xr"], "outputs": ["qc"],
         "attrs": {"pads": [1, 1, 1, 1]},
         "params": {"W": {"shape": [4, 4, 3, 3], "data": w}, "B": {"shape": [4], "data": b}},
         "epilogue": [{"kind": "add", "input": 1}, {"kind": "activation", "op": "Relu"}],
         "quant": {"x": px, "w": quant["W"], "r": pr, "y": qparams("uint8", f32(0.05), 3)}},
        {"name": "qa", "op": "QLinearAdd", "inputs": ["qc", "xq"], "outputs": ["y"],
         "attrs": {"activation": "relu"},
         "quant": {"a": qparams("uint8", f32(0.05), 3), "b": px,
                   "y": qparams("int8", f32(0.07), -20)}}], ["y"],
        "QLinearConv (residual, Relu) -> QLinearAdd(relu), an integer output")
    pm = qparams("int8", f32(0.02), 0)
    graphs["qdq-maxpool-add"] = graph([1, 3, 6, 6], [
        q("q1", "x", "xq", pm),
        {"name": "p", "op": "MaxPool", "inputs": ["xq"], "outputs": ["p"],
         "attrs": {"kernel_shape": [2, 2], "strides": [2, 2]}},
        dq("d1", "p", "pd", pm),
        {"name": "r", "op": "Relu", "inputs": ["pd"], "outputs": ["r"]},
        q("q2", "r", "y", qparams("uint8", f32(0.01), 0))], ["y", "xq"],
        "Q -> integer MaxPool -> DQ -> Relu -> Q: integer outputs y and xq")
    for name, g in graphs.items():
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(g, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
