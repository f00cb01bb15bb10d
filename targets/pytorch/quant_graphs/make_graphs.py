#!/usr/bin/env python3
"""Writes the hand-built quantized graphs of the PyTorch quantization modes (deterministic: a
fixed LCG, no library randomness). uint8 activations (the onednn and qnnpack quantized ops take
quint8), int8 weights with zero point 0 on per-channel or per-tensor grids, int32 biases on the
grid s_x * s_w, as QDQ models carry them: every value is float32(s * q). The weights' integers
are on [-64, 64] (ONNX Runtime's and PyTorch's reduce_range): a uint8 x int8 kernel without
VNNI (oneDNN's and MLAS's vpmaddubsw) saturates a pair of products beyond 32767, and 2 * 255 * 64
fits, so these graphs judge the flows the same on every x86 CPU; the saturation has a test of
its own (corpus/pytorch/onednn-u8s8-conv-saturation.py).

    /usr/bin/python3 targets/pytorch/quant_graphs/make_graphs.py
"""
import json
import os
import struct

STATE = [2026]


def rnd(lo, hi):
    STATE[0] = (STATE[0] * 1103515245 + 12345) % (1 << 31)
    return lo + (STATE[0] >> 8) % (hi - lo + 1)


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def qp(t, scale, zp, axis=None):
    q = {"type": t, "scale": scale if isinstance(scale, list) else [scale],
         "zero_point": zp if isinstance(zp, list) else [zp]}
    if axis is not None:
        q["axis"] = axis
    return q


def conv(name, x, y, m, c, k, s_x, per_channel=True, pads=None, bias=True):
    s_w = [f32(0.004 * (1 + (i % 5) / 4)) for i in range(m)] if per_channel else [f32(0.005)]
    sw = lambda o: s_w[o] if per_channel else s_w[0]
    w = [f32(sw(o) * rnd(-64, 64)) for o in range(m) for _ in range(c * k * k)]
    params = {"W": {"shape": [m, c, k, k], "data": w}}
    quant = {"W": qp("int8", s_w, [0] * len(s_w), 0 if per_channel else None)}
    if bias:
        s_b = [f32(f32(s_x) * sw(o)) for o in range(m)]
        params["B"] = {"shape": [m], "data": [f32(s_b[o] * rnd(-3000, 3000)) for o in range(m)]}
        quant["B"] = qp("int32", s_b, [0] * m, 0)
    node = {"name": name, "op": "Conv", "inputs": [x], "outputs": [y], "params": params,
            "quant": quant}
    if pads:
        node["attrs"] = {"pads": pads}
    return node


def bn(name, x, y, c, negative=False):
    scale = [f32((rnd(50, 150) / 100) * (-1 if negative and i == 1 else 1)) for i in range(c)]
    return {"name": name, "op": "BatchNorm", "inputs": [x], "outputs": [y],
            "params": {"scale": {"shape": [c], "data": scale},
                       "bias": {"shape": [c], "data": [f32(rnd(-40, 40) / 100) for _ in range(c)]},
                       "mean": {"shape": [c], "data": [f32(rnd(-30, 30) / 100) for _ in range(c)]},
                       "var": {"shape": [c], "data": [f32(rnd(30, 200) / 100) for _ in range(c)]}},
            "attrs": {"epsilon": 1e-5}}


def op(name, kind, inputs, y, **attrs):
    n = {"name": name, "op": kind, "inputs": inputs, "outputs": [y]}
    if attrs:
        n["attrs"] = attrs
    return n


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
    px = qp("uint8", f32(0.025), 120)
    g = {}
    g["conv-bn-relu"] = graph([1, 3, 8, 8], [
        q("q1", "x", "xq", px), dq("d1", "xq", "xd", px),
        conv("c", "xd", "c", 6, 3, 3, px["scale"][0], pads=[1, 1, 1, 1]),
        bn("bn", "c", "b", 6, negative=True),
        op("r", "Relu", ["b"], "r"),
        q("q2", "r", "y", qp("uint8", f32(0.04), 0))], ["y"],
        "Q -> DQ -> Conv 3x3 (per-channel W) -> BN (one negative gamma) -> Relu -> Q: integers")
    g["conv-bn-per-tensor"] = graph([1, 4, 6, 6], [
        q("q1", "x", "xq", px), dq("d1", "xq", "xd", px),
        conv("c", "xd", "c", 4, 4, 1, px["scale"][0], per_channel=False),
        bn("bn", "c", "b", 4),
        q("q2", "b", "bq", qp("uint8", f32(0.03), 128)), dq("d2", "bq", "y",
                                                          qp("uint8", f32(0.03), 128))],
        ["y"], "Conv 1x1 (per-tensor W) -> BN -> Q -> DQ: the fold re-snaps per channel")
    pa = qp("uint8", f32(0.05), 110)
    g["conv-add-relu"] = graph([1, 4, 6, 6], [
        q("q1", "x", "xq", px), dq("d1", "xq", "xd", px),
        conv("c", "xd", "c", 4, 4, 3, px["scale"][0], pads=[1, 1, 1, 1]),
        q("q2", "c", "cq", pa), dq("d2", "cq", "cd", pa),
        op("a", "Add", ["cd", "xd"], "a"), op("r", "Relu", ["a"], "r"),
        q("q3", "r", "y", qp("uint8", f32(0.05), 0))], ["y"],
        "Conv -> Q/DQ, + the input (residual) -> Relu -> Q: add_relu")
    g["conv-relu-maxpool"] = graph([1, 3, 8, 8], [
        q("q1", "x", "xq", px), dq("d1", "xq", "xd", px),
        conv("c", "xd", "c", 5, 3, 3, px["scale"][0]),
        op("r", "Relu", ["c"], "r"),
        q("q2", "r", "rq", qp("uint8", f32(0.035), 0)),
        op("p", "MaxPool", ["rq"], "y", kernel_shape=[2, 2], strides=[2, 2])], ["y"],
        "Conv -> Relu -> Q -> integer MaxPool: integers")
    g["conv-bn-bn"] = graph([1, 3, 6, 6], [
        q("q1", "x", "xq", px), dq("d1", "xq", "xd", px),
        conv("c", "xd", "c", 4, 3, 3, px["scale"][0], pads=[1, 1, 1, 1]),
        bn("bn1", "c", "b1", 4), bn("bn2", "b1", "b2", 4),
        q("q2", "b2", "y", qp("uint8", f32(0.04), 100))], ["y"],
        "Conv -> BN -> BN -> Q (the prepare_fx report): convert_fx leaves a reference conv and "
        "a float BN (node_forms)")
    w_int = [rnd(-64, 64) for _ in range(4 * 4 * 9)]
    s_w = [f32(0.004 * (1 + i / 4)) for i in range(4)]
    py = qp("uint8", f32(0.06), 255)
    g["qlinear-conv-add-relu-z255"] = graph([1, 4, 5, 5], [
        q("q1", "x", "xq", px),
        {"name": "qc", "op": "QLinearConv", "inputs": ["xq"], "outputs": ["qc"],
         "attrs": {"pads": [1, 1, 1, 1]},
         "params": {"W": {"shape": [4, 4, 3, 3], "data": [float(v) for v in w_int]},
                    "B": {"shape": [4], "data": [float(rnd(-2000, 2000)) for _ in range(4)]}},
         "epilogue": [{"kind": "activation", "op": "Relu"}],
         "quant": {"x": px, "w": qp("int8", s_w, [0] * 4, 0),
                   "y": qp("uint8", f32(0.05), 0)}},
        {"name": "qa", "op": "QLinearAdd", "inputs": ["qc", "xq"], "outputs": ["y"],
         "attrs": {"activation": "relu"},
         "quant": {"a": qp("uint8", f32(0.05), 0), "b": px, "y": py}}], ["y"],
        "QLinearConv(Relu) -> QLinearAdd(relu) with output zero point 255 (qnnpack's add_relu "
        "asserts: docs/upstream-bugs.md)")
    g["conv-relu6"] = graph([1, 3, 6, 6], [
        q("q1", "x", "xq", px), dq("d1", "xq", "xd", px),
        conv("c", "xd", "c", 4, 3, 1, px["scale"][0]),
        op("h", "Relu6", ["c"], "h"),
        q("q2", "h", "y", qp("uint8", f32(6 / 255), 0))], ["y"],
        "Conv 1x1 -> Relu6 -> Q: qnnpack's quantized clamp scrambles the conv's channels_last "
        "output (docs/upstream-bugs.md)")
    pa = qp("uint8", f32(0.04), 0)
    g["blocks-relu-maxpool-relu6"] = graph([1, 3, 6, 6], [
        q("q1", "x", "xq", px), dq("d1", "xq", "xd", px),
        conv("c", "xd", "c", 4, 3, 3, px["scale"][0], pads=[1, 1, 1, 1]),
        op("r", "Relu", ["c"], "r"), q("q2", "r", "rq", pa), dq("d2", "rq", "rd", pa),
        op("p", "MaxPool", ["rd"], "p", kernel_shape=[2, 2], strides=[2, 2]),
        q("q3", "p", "pq", pa), dq("d3", "pq", "pd", pa),
        op("a", "Relu6", ["pd"], "a"), q("q4", "a", "y", pa)], ["y"],
        "the generator's maxpool and act blocks: DQ -> MaxPool / Relu6 -> Q on the input's "
        "grid (PyTorch runs them on the int8 tensor, no observer)")
    for name, gr in g.items():
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(gr, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
