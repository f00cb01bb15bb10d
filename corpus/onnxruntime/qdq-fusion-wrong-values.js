// ONNX Runtime 1.30 (CPU), no fusefuzz needed:
//   NODE_PATH=targets/onnxruntime/node_modules node corpus/onnxruntime/qdq-fusion-wrong-values.js
// Valid QDQ models whose results at graphOptimizationLevel "all" differ from ONNX's definition
// (which level "disabled" computes). Each expected value is worked out by hand from the ONNX
// semantics in the comment beside it (Q: saturate(round_half_even(x / s) + z); DQ: (q - z) * s).
// The inputs are float32 tensors (the models Cast integer inputs to their integer type).
// docs/upstream-bugs.md, "ONNX Runtime 1.30". Exit 1 while any of the bugs is there.
'use strict';
const ort = require('onnxruntime-node');
const path = require('path');

const CASES = [
  {
    // DoubleQDQPairsRemover: Q(s 2^-17, z 127) -> DQ -> Q(s 2^-10, z 254) -> DQ on x = -1:
    // Q1 saturates to 0, DQ1 = -127 * 2^-17 = -0.00096893; Q2 = round(-0.9921875) + 254 = 253;
    // DQ2 = -2^-10. The remover keeps one pair on a new grid and returns DQ1's value.
    name: 'qdq-double-pairs-remover-new-grid', shape: [1, 1, 1, 1], input: [-1],
    expected: [-0.0009765625],
  },
  {
    // DoubleQDQPairsRemover: int8 Q(s 1) -> DQ -> Q(s 2^-8) -> Add(self, self) -> Q(s 2^-7):
    // x = 0.5 rounds to 0 (half to even) on the first grid, so the sum is 0; the remover drops
    // that rounding and 0.5 saturates the 2^-8 grid: 127 instead of 0.
    name: 'qdq-double-pairs-remover-loses-rounding', shape: [1, 1, 2, 2], input: [0, 0, 0, 0.5],
    expected: [0, 0, 0, 0],
  },
  {
    // QDQ Conv -> QLinearConv keeps an int32 bias whose DQ scale (2^-24) is not s_x * s_w
    // (1.52587891e-05 * 0.0045045428 = 6.873e-08, 13% larger): x = 0, so the output is the bias,
    // -8388608 * 2^-24 = -0.5, on the int8 grid 2^-7: -64 -> -0.5. ORT reads the bias at
    // s_x * s_w: -0.5766 -> -74 -> -0.578125.
    name: 'qdq-conv-bias-scale-ignored', shape: [1, 1, 1, 1], input: [0],
    expected: [-0.5],
  },
  {
    // Same, with a bias scale 0.098% off s_x * s_w (inside the 1% tolerance of the check that
    // ORT PR #28229 added): channel 4 has bias -22627 * 4.38946518e-05 = -0.99321;
    // -0.99321 / 0.00749223586 + 141 = 8.4355 -> 8. ORT reads it at s_x * s_w: 8.56 -> 9.
    name: 'qdq-conv-bias-scale-within-tolerance', shape: [1, 1, 1, 1], input: [0],
    expected: [141, 141, 141, 141, 8, 141, 141, 141, 141, 141],
  },
  {
    // MLAS QLinearAdd (x86) folds the zero points into a float32 constant
    // zC - (rA * zA + rB * zB) with rA = rB = 997.484314 / 2^-7 = 127678: for a = b = zA = 126
    // the sum is exactly 0, so the output is zC = 127; the constant's rounding gives 126.
    name: 'mlas-qlinearadd-zero-point-folding', shape: [1, 1, 1, 3], input: [0, 0, 126],
    expected: [-128, -128, 127],
  },
  {
    // DQ with a per-axis scale (axis 1) on the activation -> Conv -> Q is fused into QLinearConv,
    // whose x_scale and x_zero_point must be scalars: run fails in ComputeOffset. x = 0: 0.
    name: 'qdq-conv-per-axis-input-qlinearconv', shape: [1, 5, 1, 1], input: [0, 0, 0, 0, 0],
    expected: [0],
  },
];

async function run(model, level, c) {
  try {
    const s = await ort.InferenceSession.create(
        model, {graphOptimizationLevel: level, logSeverityLevel: 4});
    const feeds = {[s.inputNames[0]]: new ort.Tensor('float32', Float32Array.from(c.input), c.shape)};
    const out = await s.run(feeds);
    return Array.from(out[s.outputNames[0]].data);
  } catch (e) {
    return 'error: ' + e.message.split('\n')[0].replace(/\x1b\[[0-9;]*m/g, '').slice(0, 160);
  }
}

const same = (a, b) => Array.isArray(a) && a.length === b.length && a.every((v, i) => v === b[i]);

(async () => {
  let bugs = 0;
  for (const c of CASES) {
    const model = path.join(__dirname, c.name + '.onnx');
    const plain = await run(model, 'disabled', c);
    const fused = await run(model, 'all', c);
    if (!same(plain, c.expected)) {
      console.log(`${c.name}: "disabled" gives ${plain}, expected ${c.expected}: not this bug`);
    } else if (!same(fused, c.expected)) {
      console.log(`${c.name}: "disabled" ${plain}, "all" ${fused} (expected ${c.expected})`);
      bugs++;
    } else {
      console.log(`${c.name}: both levels give ${c.expected} (the bug is fixed)`);
    }
  }
  process.exitCode = bugs ? 1 : 0;
})();
