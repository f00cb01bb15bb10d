"""Timing requests (capability bench) of the PyTorch target: every mode answers with its own
timings and the same outputs as an ordinary request, and `fusefuzz bench --target` tabulates
eager vs fx with a PASS verdict. Run: /usr/bin/python3 -m unittest discover -s targets/pytorch
(FUSEFUZZ = the fusefuzz binary for the end-to-end test; ctest sets it)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import fusefuzz_torch  # noqa: E402
from test_translate import rand, tj  # noqa: E402


def seed(name):
    with open(os.path.join(ROOT, "corpus", "seeds", name + ".json")) as f:
        return json.load(f)


class Bench(unittest.TestCase):
    def test_every_mode_times_its_runs_and_answers_the_same_outputs(self):
        g = seed("glow-conv-relu-bn")
        x = tj(rand(g["inputs"][0]["shape"], 3))
        for mode in fusefuzz_torch.FLOAT_MODES:  # the quantization modes: test_quant.py
            self.assertIn("bench", fusefuzz_torch.capabilities(mode))
            for optimize in (False, True):
                req = {"id": 1, "graph": g, "inputs": {g["inputs"][0]["name"]: x},
                       "options": {"optimize": optimize, "bisect_limit": -1}}
                plain = fusefuzz_torch.handle(req, mode)
                timed = fusefuzz_torch.handle(dict(req, bench={"warmup": 1, "runs": 5}), mode)
                self.assertNotIn("timings", plain)
                t = timed["timings"]
                self.assertEqual(t["runs"], 5, mode)
                self.assertGreater(t["min_ns"], 0)
                self.assertLessEqual(t["min_ns"], t["median_ns"])
                self.assertEqual(timed["outputs"], plain["outputs"], mode)

    def test_median_of_an_even_number_of_runs_is_the_middle_pair(self):
        calls = []

        def module(*_):
            calls.append(1)
            return ("y",)

        out, t = fusefuzz_torch.time_runs(module, [], 2, 4)
        self.assertEqual(out, ("y",))
        self.assertEqual(len(calls), 6)
        self.assertEqual(t["runs"], 4)
        self.assertLessEqual(t["min_ns"], t["median_ns"])

    def test_malformed_bench_is_refused(self):
        for b in ({"warmup": 1}, {"warmup": -1, "runs": 2}, {"warmup": 0, "runs": 0},
                  {"warmup": True, "runs": 2}, [1, 2]):
            with self.assertRaises(ValueError):
                fusefuzz_torch.bench_counts({"bench": b})
        self.assertIsNone(fusefuzz_torch.bench_counts({}))

    @unittest.skipUnless(os.environ.get("FUSEFUZZ"), "FUSEFUZZ (the fusefuzz binary) not set")
    def test_fusefuzz_bench_tabulates_eager_and_fx(self):
        adapter = "exec:/usr/bin/python3 %s --mode " % os.path.join(HERE, "fusefuzz_torch.py")
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([os.environ["FUSEFUZZ"], "bench", "--target", adapter + "eager",
                            "--target", adapter + "fx", "--filter",
                            "conv_bn_relu/resnet18_conv5_x/N1_", "--tiny", "--repetitions", "2",
                            "--runs", "2", "--warmup", "1", "--timeout", "300", "--out", out],
                           check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(out, "benchmarks.json")) as f:
                doc = json.load(f)
            self.assertEqual([e["label"] for e in doc["context"]["fusefuzz_engines"]],
                             ["pytorch-eager", "pytorch-fx"])
            self.assertEqual(list(doc["context"]["fusefuzz_verdicts"].values()), ["PASS", "PASS"])
            iters = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
            self.assertEqual(len(iters), 2 * 2 * 2)
            self.assertTrue(all(b["real_time"] > 0 for b in iters))
            self.assertTrue(np.isfinite([b["real_time"] for b in iters]).all())


if __name__ == "__main__":
    unittest.main()
