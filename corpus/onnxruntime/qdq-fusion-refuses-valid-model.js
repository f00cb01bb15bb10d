// ONNX Runtime 1.30 (CPU), no fusefuzz needed:
//   NODE_PATH=targets/onnxruntime/node_modules node corpus/onnxruntime/qdq-fusion-refuses-valid-model.js
// Two valid QDQ models that ORT loads at level "disabled" and "basic" but refuses at "extended"
// (and "all"), where its QDQ transformers (QDQSelectorActionTransformer) rewrite them:
//   qdq-add-per-axis-qlinearadd.onnx: DQ(x, per-axis scale [0.03125, 0.015625], axis 1) and
//     DQ(x, per-tensor) -> Add -> Q is fused into com.microsoft.QLinearAdd, which takes only
//     scalar scales: "[TypeInferenceError] Scale and Zero-point must be a scalar".
//   qdq-conv-clip-duplicate-node-name.onnx: DQ -> Conv -> Clip(-1.2743, 2.93752) -> Q (u8,
//     s = 0.0165494028, z = 77): "This is an invalid model. Error: two nodes with same node name".
// Exit 1 while either bug is there.
'use strict';
const ort = require('onnxruntime-node');
const path = require('path');

async function loads(model, level) {
  try {
    await ort.InferenceSession.create(model, {graphOptimizationLevel: level, logSeverityLevel: 3});
    return '';
  } catch (e) {
    return e.message.split('\n')[0];
  }
}

(async () => {
  let bugs = 0;
  for (const name of ['qdq-add-per-axis-qlinearadd', 'qdq-conv-clip-duplicate-node-name']) {
    const model = path.join(__dirname, name + '.onnx');
    const plain = await loads(model, 'disabled');
    const fused = await loads(model, 'extended');
    if (plain) {
      console.log(`${name}: refused even at "disabled" (${plain}): not this bug`);
    } else if (fused) {
      console.log(`${name}: loads at "disabled", refused at "extended": ${fused}`);
      bugs++;
    } else {
      console.log(`${name}: loads at both levels (the bug is fixed)`);
    }
  }
  process.exitCode = bugs ? 1 : 0;
})();
