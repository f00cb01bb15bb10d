"""Unit tests of the quantization modes (quant_*.py): the graph split, the observers that honour
the graph's parameters, the flows' outputs and node forms, and the protocol.
Run: /usr/bin/python3 -m unittest discover -s targets/pytorch"""

import base64
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
import quant_graph  # noqa: E402
import quant_observers  # noqa: E402
import translate  # noqa: E402

torch.set_num_threads(1)


def load(name):
    with open(os.path.join(HERE, "quant_graphs", name + ".json")) as f:
        return json.load(f)


def tj(arr):
    arr = np.asarray(arr, dtype="<f4")
    return {"shape": list(arr.shape), "b64": base64.b64encode(arr.tobytes()).decode()}


def fj(t):
    return np.frombuffer(base64.b64decode(t["b64"]), dtype="<f4").reshape(t["shape"])


def request(graph, seed=3, optimize=True):
    rng = np.random.default_rng(seed)
    inputs = {i["name"]: tj(rng.uniform(-3, 3, i["shape"])) for i in graph["inputs"]}
    return {"id": 1, "graph": graph, "inputs": inputs,
            "options": {"optimize": optimize, "bisect_limit": -1}}


def run(graph, mode, optimize=True, seed=3):
    resp = fusefuzz_torch.handle(request(graph, seed, optimize), mode, {})
    return {k: fj(v) for k, v in resp["outputs"].items()}, resp


def onnx_q(x, s, z, lo=0, hi=255):
    """ONNX QuantizeLinear in float64 after the float32 quotient."""
    t = (np.asarray(x, np.float32) / np.float32(s)).astype(np.float64)
    return np.clip(np.rint(t) + z, lo, hi)


class Split(unittest.TestCase):
    def test_qlinear_conv_expands_to_conv_relu_with_dequantized_weights(self):
        sp = quant_graph.split(load("qlinear-conv-add-relu-z255"))
        ops = [(n["op"], n["name"]) for n in sp.nodes]
        self.assertEqual(ops, [("Conv", "qc"), ("Relu", "qc__relu"), ("Add", "qa"),
                               ("Relu", "qa__relu")])
        self.assertEqual({sp.origin[n["name"]] for n in sp.nodes}, {"qc", "qa"})
        conv = sp.nodes[0]
        w = translate.tensor_from_json(conv["params"]["W"]).numpy()
        grid = sp.weights["qc"]
        # DequantizeLinear's float32 product, and back onto the same integers.
        np.testing.assert_array_equal(
            w, grid.ints * grid.scales.astype(np.float32).reshape(-1, 1, 1, 1))
        self.assertIn("y", sp.int_outputs)

    def test_dq_consumers_read_the_quantization_point(self):
        sp = quant_graph.split(load("conv-bn-relu"))
        self.assertEqual(sp.nodes[0]["inputs"], ["x"])  # the conv reads DQ(Q(x)): point x
        self.assertEqual(sorted(sp.points), ["r", "x"])
        self.assertEqual(sp.points["r"].zero_point, 0)

    def test_refusals_name_what(self):
        g = load("conv-bn-relu")
        g["nodes"][0]["quant"]["y"]["scale"] = [0.1, 0.2]
        g["nodes"][0]["quant"]["y"]["zero_point"] = [0, 0]
        g["nodes"][0]["quant"]["y"]["axis"] = 1
        with self.assertRaisesRegex(translate.Unsupported, "q1.*per-axis"):
            quant_graph.split(g)
        g = load("conv-bn-relu")
        g["nodes"][1]["quant"]["x"]["zero_point"] = [121]  # DQ under other params than its Q
        with self.assertRaisesRegex(translate.Unsupported, "d1 reads xq"):
            quant_graph.split(g)
        with self.assertRaisesRegex(translate.Unsupported, "float graph"):
            quant_graph.split({"inputs": [{"name": "x", "shape": [1]}], "outputs": ["x"],
                               "nodes": []})


class Observers(unittest.TestCase):
    def grid(self, per_channel):
        ints = np.array([[[[-128.0]], [[5.0]]], [[[3.0]], [[127.0]]]], dtype=np.float32)
        scales = np.array([0.01, 0.02] if per_channel else [0.01, 0.01], dtype=np.float64)
        return quant_graph.WeightGrid(ints, scales.astype(np.float32).astype(np.float64),
                                      per_channel)

    def quantized(self, obs, w):
        obs(w)
        s, z = obs.calculate_qparams()
        if obs.qscheme == torch.per_tensor_symmetric:
            return torch.quantize_per_tensor(w, float(s), int(z), torch.qint8), s
        return torch.quantize_per_channel(w, s, z, 0, torch.qint8), s

    def test_unchanged_weight_gets_the_graph_scales_exactly(self):
        for per_channel in (False, True):
            g = self.grid(per_channel)
            w = torch.from_numpy(g.ints * g.scales.astype(np.float32).reshape(-1, 1, 1, 1))
            q, s = self.quantized(quant_observers.GraphWeightObserver(grid=g), w)
            np.testing.assert_array_equal(q.int_repr().numpy(), g.ints)
            self.assertEqual(float(s.reshape(-1)[0]), g.scales[0])

    def test_folded_weight_is_resnapped_onto_the_graph_integers(self):
        g = self.grid(False)
        factor = np.array([0.73, -1.31], dtype=np.float32).reshape(-1, 1, 1, 1)  # BN gamma/std
        w = torch.from_numpy(g.ints * np.float32(0.01) * factor)
        q, s = self.quantized(quant_observers.GraphWeightObserver(grid=g), w)
        np.testing.assert_array_equal(q.int_repr().numpy()[0], g.ints[0])  # -128 kept
        np.testing.assert_array_equal(q.int_repr().numpy()[1], -g.ints[1])  # negated channel
        self.assertAlmostEqual(float(s[1]), 0.01 * 1.31, places=7)

    def test_a_fold_that_negates_minus_128_is_refused(self):
        # -128 in channel 0 times a negative BN scale needs +128: int8 cannot hold it.
        g = self.grid(False)
        factor = np.array([-0.73, 1.31], dtype=np.float32).reshape(-1, 1, 1, 1)
        w = torch.from_numpy(g.ints * np.float32(0.01) * factor)
        obs = quant_observers.GraphWeightObserver(grid=g)
        with self.assertRaisesRegex(translate.Unsupported, "channel 0 to \\+128"):
            obs(w)

    def test_an_unassigned_activation_observer_refuses_to_answer(self):
        with self.assertRaisesRegex(RuntimeError, "no parameters"):
            quant_observers.GraphActObserver().calculate_qparams()


class Flows(unittest.TestCase):
    def test_unoptimized_run_is_onnx_quantization(self):
        g = load("conv-relu-maxpool")
        req = request(g, optimize=False)
        out = {k: fj(v) for k, v in fusefuzz_torch.handle(req, "ptq_fx", {})["outputs"].items()}
        y = out["y"]
        self.assertTrue(np.all(y == np.rint(y)) and y.min() >= 0 and y.max() <= 255)
        # The input's quantization alone: the quantize of the float input, ONNX-rounded.
        x = fj(req["inputs"]["x"])
        sp = quant_graph.split(g)
        xq = torch.quantize_per_tensor(torch.from_numpy(x.copy()), sp.points["x"].scale,
                                       sp.points["x"].zero_point, torch.quint8).int_repr()
        self.assertLessEqual(np.abs(xq.numpy() - onnx_q(x, 0.025, 120)).max(), 1)

    def test_every_mode_fuses_conv_bn_relu_into_one_quantized_kernel(self):
        g = load("conv-bn-relu")
        ref, _ = run(g, "ptq_fx", optimize=False)
        for mode in fusefuzz_torch.QUANT_MODES:
            out, resp = run(g, mode)
            self.assertEqual(set(resp["node_forms"].values()), {"quantized"}, mode)
            self.assertEqual(len(resp["rewrites"]), 1, mode)
            self.assertIn("Conv2d-BatchNorm2d-ReLU", resp["rewrites"][0]["rule"])
            self.assertEqual(resp["rewrites"][0]["nodes"], ["c", "bn", "r"])
            # Integers on the graph's grid, at most one step from the simulation (near ties).
            self.assertLessEqual(np.abs(out["y"] - ref["y"]).max(), 1, mode)

    def test_conv_bn_bn_leaves_a_reference_conv_and_a_float_bn(self):
        # The prepare_fx report (issue 26): convert_fx does not quantize Conv -> BN -> BN.
        _, resp = run(load("conv-bn-bn"), "ptq_fx")
        self.assertEqual(resp["node_forms"], {"c": "reference", "bn1": "reference",
                                              "bn2": "float"})

    def test_declaration_order_fuses_the_relu_after_the_residual_add(self):
        g = load("conv-add-relu")
        ref, _ = run(g, "ptq_fx", optimize=False)
        fx, _ = run(g, "ptq_fx")
        eager, resp = run(g, "ptq_eager")
        self.assertEqual([r["rule"] for r in resp["rewrites"]], ["ptq_eager:Conv2d-ReLU"])
        self.assertEqual(resp["rewrites"][0]["nodes"], ["c", "r"])
        self.assertLessEqual(np.abs(fx["y"] - ref["y"]).max(), 1)
        self.assertGreater(np.abs(eager["y"] - ref["y"]).max(), 10)

    def test_qat_steps_keep_the_graph_weights_and_statistics(self):
        g = load("conv-bn-relu")
        ref, _ = run(g, "ptq_fx", optimize=False)
        out, _ = run(g, "qat_fx")
        self.assertLessEqual(np.abs(out["y"] - ref["y"]).max(), 1)

    def test_qat_steps_keep_a_lone_batchnorms_statistics(self):
        # DQ -> BN -> Q: no conv, so freeze_bn_stats does not reach the BN; in train mode it
        # would normalize by the batch and move its running statistics (the qat_fx campaign's
        # adapter bug: 768 came back as 0).
        g = {"format": "fusefuzz-graph", "version": 2,
             "inputs": [{"name": "v0", "shape": [1, 1, 1, 2]}],
             "nodes": [
                 {"name": "n1", "op": "DequantizeLinear", "inputs": ["v0"], "outputs": ["v1"],
                  "quant": {"x": {"scale": [4.0], "type": "uint8", "zero_point": [0]}}},
                 {"name": "n3", "op": "BatchNorm", "inputs": ["v1"], "outputs": ["v3"],
                  "attrs": {"epsilon": 0.0},
                  "params": {"scale": tj([1.0]), "bias": tj([0.0]), "mean": tj([0.0]),
                             "var": tj([1.0])}},
                 {"name": "n6", "op": "QuantizeLinear", "inputs": ["v3"], "outputs": ["v6"],
                  "quant": {"y": {"scale": [16.0], "type": "uint8", "zero_point": [0]}}}],
             "outputs": ["v6"]}
        req = {"id": 1, "graph": g, "inputs": {"v0": tj([[[[0.0, 192.0]]]])},
               "options": {"optimize": True, "bisect_limit": -1}}
        resp = fusefuzz_torch.handle(req, "qat_fx", {})
        self.assertEqual(fj(resp["outputs"]["v6"]).flatten().tolist(), [0.0, 48.0], resp)

    def test_ops_on_the_int8_tensor_need_no_observer(self):
        # DQ -> MaxPool / Relu6 -> Q on the input's grid: no observer there, none needed.
        g = load("blocks-relu-maxpool-relu6")
        ref, _ = run(g, "ptq_fx", optimize=False)
        for mode in ("ptq_fx", "ptq_eager", "qat_fx"):
            out, resp = run(g, mode)
            self.assertEqual(set(resp["node_forms"].values()), {"quantized"}, mode)
            self.assertLessEqual(np.abs(out["y"] - ref["y"]).max(), 1, mode)
        for n in g["nodes"]:  # a requantization at the MaxPool, which PyTorch cannot do
            if n["name"] in ("q3", "d3"):
                next(iter(n["quant"].values()))["zero_point"] = [1]
        with self.assertRaisesRegex(translate.Unsupported, "shares one observer between r"):
            run(g, "ptq_fx")
        with self.assertRaisesRegex(translate.Unsupported, "the graph quantizes a, p, which"):
            run(g, "ptq_eager")

    def test_flows_refuse_int8_activations(self):
        g = load("conv-bn-relu")
        for n in g["nodes"]:
            if n["op"] == "QuantizeLinear" and n["name"] == "q2":
                n["quant"]["y"] = {"type": "int8", "scale": [0.04], "zero_point": [-128]}
        with self.assertRaisesRegex(translate.Unsupported, "uint8 activations"):
            run(g, "ptq_fx")
        run(g, "ptq_fx", optimize=False)  # the simulation runs it

    def test_a_quantization_point_inside_a_fused_pattern_is_unsupported(self):
        g = load("conv-relu-maxpool")
        nodes = g["nodes"]
        k = [n["name"] for n in nodes].index("r")
        p = {"type": "uint8", "scale": [0.035], "zero_point": [3]}
        nodes[k]["inputs"] = ["cd"]
        nodes[k:k] = [{"name": "qm", "op": "QuantizeLinear", "inputs": ["c"], "outputs": ["cq"],
                       "quant": {"y": p}},
                      {"name": "dm", "op": "DequantizeLinear", "inputs": ["cq"],
                       "outputs": ["cd"], "quant": {"x": p}}]
        with self.assertRaisesRegex(translate.Unsupported, "keeps in float"):
            run(g, "ptq_fx")

    def test_qnnpack_add_relu_zero_point_255_fails_upstream(self):
        with self.assertRaisesRegex(RuntimeError, "INTERNAL ASSERT"):
            run(load("qlinear-conv-add-relu-z255"), "ptq_fx_qnnpack")
        out, _ = run(load("qlinear-conv-add-relu-z255"), "ptq_fx")
        self.assertTrue(np.all(out["y"] == 255))  # relu on the grid z = 255: every element


    def test_qnnpack_clamp_scrambles_the_convs_channels_last_output_upstream(self):
        g = load("conv-relu6")
        ref, _ = run(g, "ptq_fx", optimize=False)
        onednn, _ = run(g, "ptq_fx")
        qnnpack, resp = run(g, "ptq_fx_qnnpack")
        self.assertLessEqual(np.abs(onednn["y"] - ref["y"]).max(), 1)
        self.assertGreater(np.abs(qnnpack["y"] - ref["y"]).max(), 10)
        # The same integers (up to a near-tie step) at other positions: a permutation.
        self.assertLessEqual(np.abs(np.sort(qnnpack["y"], axis=None) -
                                    np.sort(ref["y"], axis=None)).max(), 1)
        self.assertEqual(resp["node_forms"], {"c": "quantized", "h": "quantized"})


class Protocol(unittest.TestCase):
    def test_quant_mode_hello_and_response(self):
        g = load("conv-bn-relu")
        proc = subprocess.run(
            ["/usr/bin/python3", os.path.join(HERE, "fusefuzz_torch.py"), "--mode", "ptq_fx"],
            input=json.dumps(request(g)) + "\n", capture_output=True, text=True, timeout=600)
        lines = proc.stdout.splitlines()
        hello, resp = json.loads(lines[0]), json.loads(lines[1])
        self.assertEqual(hello["ops"], fusefuzz_torch.QUANT_OPS)
        self.assertEqual(hello["capabilities"], ["rewrites", "bench"])
        self.assertEqual(hello["quantize_rounding"], "reciprocal_multiply")
        self.assertEqual(set(resp["node_forms"]), {"c", "bn", "r"})
        self.assertEqual(resp["outputs"]["y"]["shape"], [1, 6, 8, 8])
        # Engine coverage: the fusion it reported is one it declares; the constraints keep the
        # generator to uint8 per-tensor activations with positive scales.
        rules = [r["rule"] for r in resp["rewrites"]]
        self.assertTrue(rules, resp["rewrites"])
        self.assertTrue(set(rules) <= set(hello["fusions"]), (rules, hello["fusions"]))
        self.assertEqual(hello["constraints"], fusefuzz_torch.QUANT_CONSTRAINTS)

    def test_quantize_per_tensor_multiplies_by_the_reciprocal(self):
        # What the hello declares: fl(x * fl(1/s)) rounded half to even, not ONNX's fl(x / s).
        # x = -2.5, s = 0.019607844: fl(x / s) = -127.499992 (ONNX: -127 + 128 = 1), but
        # fl(1/s) = 51 and -2.5 * 51 = -127.5, a tie rounded to even: -128 + 128 = 0.
        for engine in ("onednn", "qnnpack"):
            torch.backends.quantized.engine = engine
            q = torch.quantize_per_tensor(torch.full((20,), -2.5), 0.019607844, 128, torch.quint8)
            self.assertEqual(set(q.int_repr().tolist()), {0}, engine)

    def test_quant_modes_time_their_runs_and_answer_the_same_outputs(self):
        g = load("conv-add-relu")
        for mode in fusefuzz_torch.QUANT_MODES:
            self.assertIn("bench", fusefuzz_torch.capabilities(mode))
            for optimize in (False, True):
                req = request(g, optimize=optimize)
                plain = fusefuzz_torch.handle(req, mode)
                timed = fusefuzz_torch.handle(dict(req, bench={"warmup": 1, "runs": 3}), mode)
                self.assertNotIn("timings", plain)
                self.assertEqual(timed["timings"]["runs"], 3, mode)
                self.assertLessEqual(timed["timings"]["min_ns"], timed["timings"]["median_ns"])
                self.assertEqual(timed["outputs"], plain["outputs"], mode)

    def test_quant_ops_are_ops_of_ops_def(self):
        with open(os.path.join(ROOT, "ir", "ops.def")) as f:
            ops = [line.split('"')[1] for line in f if line.startswith("FF_OP(")]
        self.assertTrue(set(fusefuzz_torch.QUANT_OPS) <= set(ops))


if __name__ == "__main__":
    unittest.main()
