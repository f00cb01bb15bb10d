#!/usr/bin/env python3
"""Random quantized graphs through a target, until `fusefuzz fuzz --quant` lands (issue 27).

QDQ conv chains (x -> Q -> DQ -> Conv on an int8 weight grid [-> Relu/Relu6/Clip] -> Q, uint8 or
int8, per-tensor or per-channel weights, depthwise, strides, pads, biases) and QLinearAdd graphs,
each run with `fusefuzz run GRAPH --seed S --target TARGET` (unoptimized and optimized run, each
judged on the integer grid). Fails when a run is a finding (exit 1) or fusefuzz fails (exit 2);
UNSUPPORTED answers are counted, not failures.
  usage: mobile_quant_graphs.py FUSEFUZZ TARGET FIRST_SEED LAST_SEED WORK_DIR
"""
import json
import os
import random
import struct
import subprocess
import sys

def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def qp(t, s, z): return {"type": t, "scale": [f32(s)], "zero_point": [z]}
def zp(r, t): return r.randint(-128, 127) if t == "int8" else r.randint(0, 255)
def conv_graph(r):
    t = r.choice(["uint8", "int8"])
    C = r.randint(1, 4); dw = r.random() < 0.25 and C > 1
    M = C * r.randint(1, 2) if dw else r.randint(1, 4)
    k = r.choice([1, 2, 3]); pad = r.randint(0, k - 1) if k > 1 else 0
    H, W = r.randint(k, 7), r.randint(k, 7)
    per = t == "int8" and r.random() < 0.5 or r.random() < 0.1
    sw = [r.uniform(0.002, 0.05) for _ in range(M)] if per else [r.uniform(0.002, 0.05)]
    sx, sy = r.uniform(0.005, 0.1), r.uniform(0.01, 0.5)
    zx, zy = zp(r, t), zp(r, t)
    cg = 1 if dw else C
    Wd = []
    for o in range(M):
        s = f32(sw[o if per else 0])
        for _ in range(cg * k * k):
            Wd.append(f32(f32(r.randint(-127, 127)) * s))
    wq = {"type": "int8", "scale": [f32(s) for s in sw], "zero_point": [0] * len(sw)}
    if per: wq["axis"] = 0
    conv = {"name": "conv", "op": "Conv", "inputs": ["xd"], "outputs": ["c"],
            "attrs": {"pads": [pad] * 4, "strides": [r.randint(1, 2)] * 2, "group": C if dw else 1},
            "params": {"W": {"shape": [M, cg, k, k], "data": Wd}}, "quant": {"W": wq}}
    if r.random() < 0.8:
        conv["params"]["B"] = {"shape": [M], "data": [f32(r.uniform(-1, 1)) for _ in range(M)]}
    nodes = [{"name": "qx", "op": "QuantizeLinear", "inputs": ["x"], "outputs": ["xq"], "quant": {"y": qp(t, sx, zx)}},
             {"name": "dqx", "op": "DequantizeLinear", "inputs": ["xq"], "outputs": ["xd"], "quant": {"x": qp(t, sx, zx)}},
             conv]
    last = "c"; act = r.choice(["", "", "Relu", "Relu6", "Clip"])
    if act:
        a = {"name": "act", "op": act, "inputs": ["c"], "outputs": ["a"]}
        if act == "Clip":
            lo = r.uniform(-2, 1); a["attrs"] = {"min": lo, "max": lo + r.uniform(0.1, 3)}
        nodes.append(a); last = "a"
    nodes.append({"name": "qy", "op": "QuantizeLinear", "inputs": [last], "outputs": ["y"], "quant": {"y": qp(t, sy, zy)}})
    return {"format": "fusefuzz-graph", "version": 2, "inputs": [{"name": "x", "shape": [1, C, H, W]}],
            "nodes": nodes, "outputs": ["y"]}
def add_graph(r):
    t = r.choice(["uint8", "int8"]); shape = [1, r.randint(1, 4), r.randint(1, 5), r.randint(1, 5)]
    qa, qb, qy = [qp(t, r.uniform(0.01, 0.3), zp(r, t)) for _ in range(3)]
    nodes = [{"name": "qa", "op": "QuantizeLinear", "inputs": ["a"], "outputs": ["aq"], "quant": {"y": qa}},
             {"name": "qb", "op": "QuantizeLinear", "inputs": ["b"], "outputs": ["bq"], "quant": {"y": qb}},
             {"name": "add", "op": "QLinearAdd", "inputs": ["aq", "bq"], "outputs": ["y"],
              "attrs": {"activation": r.choice(["none", "relu"])}, "quant": {"a": qa, "b": qb, "y": qy}}]
    return {"format": "fusefuzz-graph", "version": 2,
            "inputs": [{"name": "a", "shape": shape}, {"name": "b", "shape": shape}], "nodes": nodes, "outputs": ["y"]}


def main():
    fusefuzz, target, first, last, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    os.makedirs(work, exist_ok=True)
    counts, bad = {}, []
    for seed in range(first, last + 1):
        r = random.Random(seed)
        g = add_graph(r) if r.random() < 0.3 else conv_graph(r)
        path = os.path.join(work, "g%d.json" % seed)
        with open(path, "w") as f:
            json.dump(g, f)
        p = subprocess.run([fusefuzz, "run", path, "--seed", str(seed), "--target", target],
                           capture_output=True, text=True)
        lines = [l for l in p.stdout.splitlines() + p.stderr.splitlines()
                 if l.startswith(("unoptimized run:", "optimized run:", "REWRITE"))]
        for l in lines:
            key = l.split(",")[0].split(" (")[0]
            counts[key] = counts.get(key, 0) + 1
        if p.returncode != 0:
            bad.append("%s (exit %d): %s" % (path, p.returncode, "; ".join(lines) or p.stderr.strip()))
    for k in sorted(counts):
        print("%5d  %s" % (counts[k], k))
    if bad:
        print("FAIL:\n  " + "\n  ".join(bad))
        sys.exit(1)
    print("mobile_quant_graphs: %s: seeds %d..%d, no finding" % (target, first, last))


if __name__ == "__main__":
    main()
