"""Unit tests of the PyTorch target: the translation of fusefuzz ops (against brute-force
double-precision definitions of the ONNX semantics), the declaration-order module groups, and
the protocol loop. Run: /usr/bin/python3 -m unittest discover -s targets/pytorch"""

import base64
import itertools
import math
import json
import os
import subprocess
import sys
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import fusefuzz_torch  # noqa: E402
import translate  # noqa: E402

torch.set_num_threads(1)


def tj(arr):
    arr = np.asarray(arr, dtype="<f4")
    return {"shape": list(arr.shape), "b64": base64.b64encode(arr.tobytes()).decode()}


def one_node(op, shape, attrs=None, params=None, inputs=1):
    ins = [{"name": "x%d" % i, "shape": shape} for i in range(inputs)]
    node = {"name": "n", "op": op, "inputs": [i["name"] for i in ins], "outputs": ["y"],
            "attrs": attrs or {}, "params": {k: tj(v) for k, v in (params or {}).items()}}
    return {"format": "fusefuzz-graph", "version": 2, "inputs": ins, "nodes": [node],
            "outputs": ["y"]}


def run(graph, *xs, mode="eager"):
    tr = translate.translate(graph)
    module, _ = fusefuzz_torch.optimize(tr, mode, -1)
    with torch.no_grad():
        out = module(*[torch.from_numpy(np.asarray(x, dtype=np.float32)) for x in xs])
    return [o.numpy() for o in out]


def rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(-3, 3, shape).astype(np.float32)


def onnx_pool(x, op, k, s, pads, ceil, include_pad):
    """The ONNX definition (docs/graph-format.md), in float64 loops."""
    t, l, b, r = pads
    n, c, h, w = x.shape
    oh = translate.pool_output_size(h, k[0], s[0], t, b, ceil)
    ow = translate.pool_output_size(w, k[1], s[1], l, r, ceil)
    y = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        h0, w0 = i * s[0] - t, j * s[1] - l
        rows = [a for a in range(h0, h0 + k[0]) if 0 <= a < h]
        cols = [a for a in range(w0, w0 + k[1]) if 0 <= a < w]
        win = x[:, :, rows][:, :, :, cols].astype(np.float64)
        if op == "MaxPool":
            y[:, :, i, j] = win.max(axis=(2, 3))
        else:
            if include_pad:
                cnt = (min(h0 + k[0], h + b) - max(h0, -t)) * (min(w0 + k[1], w + r) - max(w0, -l))
            else:
                cnt = len(rows) * len(cols)
            y[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return y


class Translation(unittest.TestCase):
    def test_hello_declares_every_op_of_ops_def_and_translates_them(self):
        with open(os.path.join(ROOT, "ir", "ops.def")) as f:
            ops = [line.split('"')[1] for line in f if line.startswith("FF_OP(")]
        # Every op is either declared and translated, or left out with a stated reason.
        self.assertEqual(sorted(fusefuzz_torch.OPS + list(fusefuzz_torch.NOT_TRANSLATED)),
                         sorted(ops))
        self.assertFalse(set(fusefuzz_torch.OPS) & set(fusefuzz_torch.NOT_TRANSLATED))
        self.assertEqual(sorted(translate.SUPPORTED_OPS), sorted(fusefuzz_torch.OPS))

    def test_building_blocks_follow_onnx(self):
        x = rand((2, 3, 4, 5))
        pos = np.abs(x) + 0.25
        for axes, keep in [([-1], 1), ([2, 3], 1), ([1], 0), ([0, 1, 2, 3], 1)]:
            got = run(one_node("ReduceMean", [2, 3, 4, 5], {"axes": axes, "keepdims": keep}), x)[0]
            want = x.astype(np.float64).mean(axis=tuple(axes), keepdims=bool(keep))
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=str(axes))
        for e in [0.5, 1.0, 2.0, 3.0]:
            got = run(one_node("Pow", [2, 3, 4, 5], {"exponent": e}), pos)[0]
            np.testing.assert_allclose(got, pos.astype(np.float64) ** e, rtol=1e-6, err_msg=str(e))
        want = {"Sqrt": np.sqrt, "Reciprocal": lambda v: 1 / v, "Exp": np.exp, "Log": np.log,
                "Erf": lambda v: np.vectorize(math.erf)(v)}
        for op, f in want.items():
            got = run(one_node(op, [2, 3, 4, 5]), pos)[0]
            np.testing.assert_allclose(got, f(pos.astype(np.float64)), rtol=1e-6, err_msg=op)

    def test_softmax_transpose_reductions_min_max_follow_onnx(self):
        x = rand((2, 3, 4, 5))
        x64 = x.astype(np.float64)
        for axis in [-1, 1, 0]:
            got = run(one_node("Softmax", [2, 3, 4, 5], {"axis": axis}), x)[0]
            e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
            np.testing.assert_allclose(got, e / e.sum(axis=axis, keepdims=True), rtol=1e-5,
                                       err_msg=str(axis))
        for perm in [[0, 1, 3, 2], [3, 2, 1, 0], [0, 2, 3, 1]]:
            got = run(one_node("Transpose", [2, 3, 4, 5], {"perm": perm}), x)[0]
            np.testing.assert_array_equal(got, np.transpose(x, perm))
        for op, f in [("ReduceSum", np.sum), ("ReduceMax", np.max)]:
            for axes, keep in [([-1], 1), ([1, 2], 0)]:
                got = run(one_node(op, [2, 3, 4, 5], {"axes": axes, "keepdims": keep}), x)[0]
                want = f(x64, axis=tuple(axes), keepdims=bool(keep))
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=op)
        c = np.array([0.5], dtype=np.float32)
        for op, f in [("Min", np.minimum), ("Max", np.maximum)]:
            got = run(one_node(op, [2, 3, 4, 5], params={"B": c}), x)[0]
            np.testing.assert_array_equal(got, f(x, c))
            y = rand((2, 3, 4, 5), seed=1)
            got = run(one_node(op, [2, 3, 4, 5], inputs=2), x, y)[0]
            np.testing.assert_array_equal(got, f(x, y))

    def test_pools_follow_onnx_pads_ceil_mode_and_count_include_pad(self):
        x = rand((1, 2, 7, 6))
        cases = 0
        for op, k, s, pads, ceil, cip in itertools.product(
                ["MaxPool", "AvgPool"], [(3, 3), (2, 3), (4, 4)], [(1, 1), (2, 2), (3, 2)],
                [(0, 0, 0, 0), (1, 1, 1, 1), (2, 0, 1, 2), (0, 2, 2, 1), (3, 3, 3, 3)],
                [0, 1], [0, 1]):
            if any(p >= kk for p, kk in zip(pads, k + k)) or (op == "MaxPool" and cip):
                continue
            attrs = {"kernel_shape": list(k), "strides": list(s), "pads": list(pads),
                     "ceil_mode": ceil}
            if op == "AvgPool":
                attrs["count_include_pad"] = cip
            want = onnx_pool(x, op, k, s, pads, ceil, cip)
            got = run(one_node(op, [1, 2, 7, 6], attrs), x)[0]
            self.assertEqual(got.shape, want.shape, attrs)
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=str(attrs))
            cases += 1
        self.assertGreater(cases, 150)

    def test_conv_with_asymmetric_pads(self):
        x, w, b = rand((1, 4, 6, 5)), rand((6, 2, 3, 2), 1), rand((6,), 2)
        attrs = {"pads": [2, 0, 1, 1], "strides": [2, 1], "dilations": [1, 2], "group": 2}
        got = run(one_node("Conv", [1, 4, 6, 5], attrs, {"W": w, "B": b}), x)[0]
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (2, 1), (0, 1)))
        want = torch.nn.functional.conv2d(torch.from_numpy(xp), torch.from_numpy(w).double(),
                                          torch.from_numpy(b).double(), stride=(2, 1),
                                          dilation=(1, 2), groups=2).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    def test_norms_over_single_elements_give_the_bias(self):
        x = rand((2, 3, 1, 1))
        scale, bias = np.array([1.5, -2, 0.5]), np.array([0.25, 1, -3])
        want = np.broadcast_to(bias.reshape(1, 3, 1, 1), x.shape)
        for op, attrs in [("InstanceNorm", {}), ("GroupNorm", {"num_groups": 3})]:
            got = run(one_node(op, [2, 3, 1, 1], attrs, {"scale": scale, "bias": bias}), x)[0]
            np.testing.assert_array_equal(got, want)

    def test_group_norm_is_per_channel_affine_over_groups(self):
        x = rand((1, 4, 2, 3))
        scale, bias = np.array([1, 2, 3, 4.0]), np.array([0, 1, 0, -1.0])
        got = run(one_node("GroupNorm", [1, 4, 2, 3], {"num_groups": 2, "epsilon": 1e-3},
                           {"scale": scale, "bias": bias}), x)[0]
        g = x.astype(np.float64).reshape(1, 2, 12)
        norm = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-3)
        want = norm.reshape(1, 4, 2, 3) * scale.reshape(1, 4, 1, 1) + bias.reshape(1, 4, 1, 1)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    def test_prelu_slope_broadcasts_from_the_right_as_onnx(self):
        # C == W == 3: a [3] slope runs along W (ONNX, graph format 2), not along the channels.
        x = rand((2, 3, 2, 3))
        for shape in ([3], [2, 3], [3, 2, 3], [2, 1, 1, 1], [1]):
            slope = np.linspace(-1.5, 2, int(np.prod(shape))).reshape(shape)
            got = run(one_node("PRelu", [2, 3, 2, 3], {}, {"slope": slope}), x)[0]
            want = np.where(x < 0, slope * x, x)
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str(shape))
        # Graph format 1 read the same [3] slope per channel; the adapter keeps that meaning.
        slope = np.array([0.5, -1, 2.0])
        g = one_node("PRelu", [2, 3, 2, 3], {}, {"slope": slope})
        g["version"] = 1
        want = np.where(x < 0, slope.reshape(1, 3, 1, 1) * x, x)
        np.testing.assert_allclose(run(g, x)[0], want, rtol=1e-6)

    def test_hardsigmoid_prelu_clip_and_constant_on_the_left(self):
        x = rand((1, 3, 2, 2))
        got = run(one_node("HardSigmoid", [1, 3, 2, 2], {"alpha": 0.2, "beta": 0.5}), x)[0]
        np.testing.assert_allclose(got, np.clip(0.2 * x + 0.5, 0, 1), rtol=1e-6)
        slope = np.array([0.5, -1, 2.0]).reshape(3, 1, 1)  # per channel: nn.PReLU
        got = run(one_node("PRelu", [1, 3, 2, 2], {}, {"slope": slope}), x)[0]
        want = np.where(x < 0, slope.reshape(1, 3, 1, 1) * x, x)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        got = run(one_node("Clip", [1, 3, 2, 2], {"min": -0.5, "max": 1.25}), x)[0]
        np.testing.assert_array_equal(got, np.clip(x, -0.5, 1.25))
        a = np.array([10.0])
        got = run(one_node("Sub", [1, 3, 2, 2], {}, {"A": a}), x)[0]
        np.testing.assert_array_equal(got, (10 - x).astype(np.float32))

    def test_pad_modes(self):
        x = rand((1, 1, 3, 4))
        got = run(one_node("Pad", [1, 1, 3, 4], {"pads": [1, 2, 0, 3], "mode": "reflect"}), x)[0]
        np.testing.assert_array_equal(got, np.pad(x, ((0, 0), (0, 0), (1, 0), (2, 3)), "reflect"))
        got = run(one_node("Pad", [1, 1, 3, 4], {"pads": [1, 2, 0, 3], "value": -1.5}), x)[0]
        np.testing.assert_array_equal(
            got, np.pad(x, ((0, 0), (0, 0), (1, 0), (2, 3)), constant_values=-1.5))
        # ONNX edge and wrap are numpy's edge and wrap (torch: replicate, circular).
        for mode in ("edge", "wrap"):
            got = run(one_node("Pad", [1, 1, 3, 4], {"pads": [1, 2, 2, 3], "mode": mode}), x)[0]
            np.testing.assert_array_equal(got, np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 3)), mode))

    def test_concat_on_any_axis(self):
        a, b = rand([2, 3, 4, 5], 1), rand([2, 3, 4, 2], 2)
        for axis in (3, -1):
            g = one_node("Concat", [2, 3, 4, 5], {"axis": axis}, inputs=2)
            g["inputs"][1]["shape"] = [2, 3, 4, 2]
            np.testing.assert_array_equal(run(g, a, b)[0], np.concatenate([a, b], axis=3))

    def test_fused_conv_is_conv_then_its_epilogue(self):
        with open(os.path.join(ROOT, "corpus", "seeds", "op-fusedconv.json")) as f:
            g = json.load(f)
        shapes = [i["shape"] for i in g["inputs"]]
        xs = [rand(s, k) for k, s in enumerate(shapes)]
        outs = run(g, *xs)
        self.assertEqual(len(outs), len(g["outputs"]))


class Modes(unittest.TestCase):
    def resnet(self):
        seed = "resnet-basicblock-relu-after-add.json"
        with open(os.path.join(ROOT, "corpus", "seeds", seed)) as f:
            return json.load(f)

    def test_head_ops_flatten_reshape_gemm_matmul(self):
        x = rand([2, 3, 4, 5], 3)
        (y,) = run(one_node("Flatten", [2, 3, 4, 5], {"axis": 2}), x)
        np.testing.assert_array_equal(y, x.reshape(6, 20))
        (y,) = run(one_node("Reshape", [2, 3, 4, 5], {"shape": [0, -1, 5]}), x)
        np.testing.assert_array_equal(y, x.reshape(2, 12, 5))
        a, b = rand([3, 4], 4), rand([4, 6], 5)
        c_col, c_row = rand([6], 6), rand([3, 1], 7)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        cases = [({}, {"B": b}, a64 @ b64),
                 ({}, {"B": b, "C": c_col}, a64 @ b64 + c_col),  # nn.Linear
                 ({"alpha": 0.5, "beta": 2.0}, {"B": b, "C": c_row}, 0.5 * (a64 @ b64) + 2 * c_row),
                 ({"transB": 1}, {"B": b.T.copy()}, a64 @ b64)]
        for attrs, params, want in cases:
            (y,) = run(one_node("Gemm", [3, 4], attrs, params), a)
            np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5, err_msg=str(attrs))
        (y,) = run(one_node("Gemm", [4, 3], {"transA": 1}, {"B": b}), a.T.copy())
        np.testing.assert_allclose(y, a64 @ b64, rtol=1e-5, atol=1e-5)
        g = one_node("Gemm", [3, 4], {}, {"B": b, "C": c_col})
        g["nodes"][0]["epilogue"] = [{"kind": "activation", "op": "Relu"}]
        (y,) = run(g, a)
        np.testing.assert_allclose(y, np.maximum(a64 @ b64 + c_col, 0), rtol=1e-5, atol=1e-5)
        m = rand([2, 3, 4], 8)
        (y,) = run(one_node("MatMul", [2, 3, 4], {}, {"B": b}), m)
        np.testing.assert_allclose(y, m.astype(np.float64) @ b64, rtol=1e-5, atol=1e-5)

    def test_declaration_order_groups_ignore_the_data_flow(self):
        tr = translate.translate(self.resnet())
        groups = fusefuzz_torch.declaration_order_groups(tr.modules)
        self.assertEqual([[node for _, node, _ in g] for g in groups],
                         [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"]])

    def test_fuse_modules_reproduces_the_resnet_bug_and_fx_does_not(self):
        g = self.resnet()
        x = rand(g["inputs"][0]["shape"], 5)
        eager = run(g, x)[0]
        np.testing.assert_allclose(run(g, x, mode="fx")[0], eager, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(run(g, x, mode="fuse_fx")[0], eager, rtol=1e-4, atol=1e-4)
        wrong = run(g, x, mode="fuse_modules")[0]
        self.assertGreater(np.abs(wrong - eager).max(), 0.1)

    def test_bisect_limit_cuts_the_module_groups(self):
        tr = translate.translate(self.resnet())
        _, rewrites = fusefuzz_torch.optimize(tr, "fuse_modules", 1)
        self.assertEqual(rewrites, [{"index": 1, "rule": "fuse_modules:Conv2d-BatchNorm2d-ReLU",
                                     "nodes": ["conv1", "bn1", "relu1"]}])


class Protocol(unittest.TestCase):
    def test_hello_request_response(self):
        p = subprocess.Popen([sys.executable, os.path.join(HERE, "fusefuzz_torch.py"), "--mode",
                              "fx"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        hello = json.loads(p.stdout.readline())
        self.assertEqual(hello["protocol"], "fusefuzz-target")
        self.assertEqual(hello["name"], "pytorch-fx")
        self.assertEqual(hello["capabilities"], ["rewrites", "bench", "batch"])
        self.assertEqual(hello["batch"], fusefuzz_torch.BATCH)
        with open(os.path.join(ROOT, "corpus", "seeds", "conv-bn-bn.json")) as f:
            g = json.load(f)
        x = rand(g["inputs"][0]["shape"])
        req = {"id": 5, "graph": g, "inputs": {g["inputs"][0]["name"]: tj(x)},
               "options": {"optimize": True, "bisect_limit": -1}}
        p.stdin.write(json.dumps(req) + "\nnot json\n")
        p.stdin.flush()
        resp = json.loads(p.stdout.readline())
        self.assertEqual(resp["id"], 5)
        self.assertEqual(list(resp["outputs"]), g["outputs"])
        self.assertEqual(resp["rewrites"][0]["nodes"][:2], ["conv", "bn1"])
        bad = json.loads(p.stdout.readline())
        self.assertIsNone(bad["id"])
        self.assertIn("error", bad)
        p.stdin.close()
        self.assertEqual(p.wait(timeout=60), 0)
        p.stdout.close()


if __name__ == "__main__":
    unittest.main()
