"""Tests of the PyTorch adapter's spellings (spellings.py, issue 51): each spelling is written
the way it says (the module's code or its modules show it) and computes what the plain
translation computes; the registry (ir/spellings.def) and the adapter agree.
Run: /usr/bin/python3 -m unittest discover -s targets/pytorch"""

import base64
import os
import re
import sys
import unittest

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import fusefuzz_torch  # noqa: E402
import spellings  # noqa: E402
import translate  # noqa: E402

torch.set_num_threads(1)


def tj(arr):
    arr = np.asarray(arr, dtype="<f4")
    return {"shape": list(arr.shape), "b64": base64.b64encode(arr.tobytes()).decode()}


def rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def conv(name, x, out, pads=(0, 0, 0, 0), w_shape=(3, 2, 3, 3), bias=True, spelling=None):
    n = {"name": name, "op": "Conv", "inputs": [x], "outputs": [out],
         "attrs": {"pads": list(pads)}, "params": {"W": tj(rand(w_shape, 1))}}
    if bias:
        n["params"]["B"] = tj(rand([w_shape[0]], 2))
    if spelling:
        n["spelling"] = spelling
    return n


def node(name, op, inputs, out, spelling, attrs=None, params=None):
    n = {"name": name, "op": op, "inputs": inputs, "outputs": [out], "attrs": attrs or {},
         "params": {k: tj(v) for k, v in (params or {}).items()}}
    if spelling:
        n["spelling"] = spelling
    return n


def graph(shape, nodes, outputs):
    return {"format": "fusefuzz-graph", "version": 2, "inputs": [{"name": "x", "shape": shape}],
            "nodes": nodes, "outputs": outputs}


def after_conv(op, spelling, attrs=None, params=None):
    """x [1,2,5,5] -> Conv -> op (spelled)."""
    return graph([1, 2, 5, 5], [conv("c", "x", "y"), node("n", op, ["y"], "z", spelling, attrs,
                                                          params)], ["z"])


def gemm(spelling, attrs=None, c=True):
    params = {"B": rand([3, 4], 3)}
    if c:
        params["C"] = rand([3], 4)
    return graph([2, 4], [node("n", "Gemm", ["x"], "z", spelling, dict(attrs or {"transB": 1}),
                               params)], ["z"])


# spelling -> (graph with that spelling, a regex the module's code or module list must show)
CASES = {
    "torch.F.relu": (after_conv("Relu", "torch.F.relu"), r"torch\.nn\.functional\.relu"),
    "torch.relu_": (after_conv("Relu", "torch.relu_"), r"torch\.relu_\("),
    "torch.ReLU-inplace": (after_conv("Relu", "torch.ReLU-inplace"), r"ReLU\(inplace=True\)"),
    "torch.Tensor.relu_": (after_conv("Relu", "torch.Tensor.relu_"), r"\.relu_\(\)"),
    "torch.clamp-min": (after_conv("Relu", "torch.clamp-min"), r"torch\.clamp\(.*min = 0\.0"),
    "torch.F.relu6": (after_conv("Relu6", "torch.F.relu6"), r"functional\.relu6"),
    "torch.Hardtanh": (after_conv("Relu6", "torch.Hardtanh"), r"Hardtanh\(min_val=0\.0"),
    "torch.functional": (after_conv("Sigmoid", "torch.functional"), r"torch\.sigmoid\("),
    "torch.conv-padding-same": (graph([1, 2, 5, 5], [conv("c", "x", "z", (1, 1, 1, 1),
                                                          spelling="torch.conv-padding-same")],
                                      ["z"]), r"padding=same"),
    "torch.conv-padding-valid": (graph([1, 2, 5, 5], [conv("c", "x", "z",
                                                           spelling="torch.conv-padding-valid")],
                                       ["z"]), r"padding=valid"),
    "torch.F.conv2d": (graph([1, 2, 5, 5], [conv("c", "x", "z", (1, 0, 2, 1),
                                                 spelling="torch.F.conv2d")], ["z"]),
                       r"torch\.conv2d\(pad, p_c_w"),
    "torch.conv-bias-add": (graph([1, 2, 5, 5], [conv("c", "x", "z",
                                                      spelling="torch.conv-bias-add")], ["z"]),
                            r"bias=False[\s\S]*|add"),
    "torch.Conv1d": (graph([1, 2, 5, 1], [conv("c", "x", "z", (1, 0, 1, 0), (3, 2, 3, 1),
                                               spelling="torch.Conv1d")], ["z"]), r"Conv1d\("),
    "torch.BatchNorm-affine-false": (
        after_conv("BatchNorm", "torch.BatchNorm-affine-false", None,
                   {"scale": rand([3], 5), "bias": rand([3], 6), "mean": rand([3], 7),
                    "var": rand([3], 8) ** 2 + 0.1}), r"affine=False"),
    "torch.F.batch_norm": (
        after_conv("BatchNorm", "torch.F.batch_norm", None,
                   {"scale": rand([3], 5), "bias": rand([3], 6), "mean": rand([3], 7),
                    "var": rand([3], 8) ** 2 + 0.1}), r"functional\.batch_norm"),
    "torch.Identity": (after_conv("Identity", "torch.Identity"), r"Identity\(\)"),
    "torch.Dropout-eval": (after_conv("Identity", "torch.Dropout-eval"), r"Dropout\(p=0\.5"),
    "torch.F.linear": (gemm("torch.F.linear"), r"_nn\.linear\(in_x, p_n_w"),
    "torch.addmm": (gemm("torch.addmm", {"transB": 1, "alpha": 0.5, "beta": 2.0}),
                    r"torch\.addmm\(.*beta = 2\.0, alpha = 0\.5"),
    "torch.matmul-add": (gemm("torch.matmul-add"), r"torch\.matmul[\s\S]*add"),
    "torch.Linear-bias-add": (gemm("torch.Linear-bias-add"), r"bias=False"),
    "torch.shared-module": (
        graph([1, 2, 5, 5], [conv("c", "x", "y"),
                             node("r1", "Relu", ["y"], "y1", "torch.shared-module"),
                             node("r2", "Relu", ["y1"], "z", "torch.shared-module")], ["z"]),
        r"self\.m_r1\(m_c\)[\s\S]*self\.m_r1\(m_r1\)"),
    "torch.forward-hook": (graph([1, 2, 5, 5], [conv("c", "x", "z",
                                                     spelling="torch.forward-hook")], ["z"]),
                           "forward_hooks"),
    "torch.forward-pre-hook": (graph([1, 2, 5, 5], [conv("c", "x", "z",
                                                         spelling="torch.forward-pre-hook")],
                                     ["z"]), "forward_pre_hooks"),
    "torch.python-scalar": (after_conv("Mul", "torch.python-scalar", None, {"B": [0.5]}),
                            r"m_c \* 0\.5"),
    "torch.inplace-binary": (after_conv("Add", "torch.inplace-binary", None,
                                        {"B": rand([1, 3, 1, 1], 9)}), r"iadd"),
    "torch.view": (after_conv("Reshape", "torch.view", {"shape": [1, -1]}), r"\.view\(1, 27\)"),
    "torch.flatten": (after_conv("Flatten", "torch.flatten"), r"torch\.flatten\("),
    "torch.F.max_pool2d": (after_conv("MaxPool", "torch.F.max_pool2d",
                                      {"kernel_shape": [2, 2], "strides": [2, 2]}),
                           r"functional\.max_pool2d"),
    "torch.mean-keepdim": (after_conv("GlobalAvgPool", "torch.mean-keepdim"),
                           r"\.mean\(\(2, 3\), keepdim = True\)"),
}


def plain(g):
    g = {**g, "nodes": [{k: v for k, v in n.items() if k != "spelling"} for n in g["nodes"]]}
    return g


def evidence(tr):
    """The module's code, its modules and whether any carries hooks."""
    text = tr.module.code + "\n" + "\n".join(repr(m) for _, _, m in tr.modules)
    for m in tr.module.modules():
        if m._forward_hooks:
            text += "\nforward_hooks"
        if m._forward_pre_hooks:
            text += "\nforward_pre_hooks"
    return text


def run(g, x, mode="eager"):
    tr = translate.translate(g)
    module, _ = fusefuzz_torch.optimize(tr, mode, -1)
    with torch.no_grad():
        return [o.numpy() for o in module(torch.from_numpy(x))]


class SpellingsTest(unittest.TestCase):
    def test_registry_and_adapter_agree(self):
        with open(os.path.join(ROOT, "ir", "spellings.def")) as f:
            torch_names = re.findall(r'FF_SPELLING\(\w+, "([^"]+)",[^)]*?kTorch', f.read())
        self.assertEqual(sorted(torch_names), spellings.SPELLINGS)
        self.assertEqual(sorted(CASES), spellings.SPELLINGS)  # a test per spelling

    def test_each_spelling_is_written_and_computes_the_plain_graph(self):
        for name, (g, pattern) in CASES.items():
            with self.subTest(spelling=name):
                tr = translate.translate(g)
                self.assertRegex(evidence(tr), pattern)
                self.assertNotRegex(evidence(translate.translate(plain(g))), pattern)
                x = rand(g["inputs"][0]["shape"], 11)
                for got, want in zip(run(g, x, "fx"), run(plain(g), x)):
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    def test_inplace_spelling_leaves_other_values_alone(self):
        # relu_ on the conv output, which is also a graph output, would change that output:
        # fusefuzz never spells it so (ir/spelling.cc); the adapter writes what it is told.
        g, _ = CASES["torch.relu_"]
        x = rand([1, 2, 5, 5], 12)
        (z,) = run(g, x)
        self.assertTrue((z >= 0).all())

    def test_hello_declares_the_spellings(self):
        self.assertEqual(fusefuzz_torch.spellings_of("fx"), spellings.SPELLINGS)
        self.assertEqual(fusefuzz_torch.spellings_of("ptq_fx"), [])


if __name__ == "__main__":
    unittest.main()
