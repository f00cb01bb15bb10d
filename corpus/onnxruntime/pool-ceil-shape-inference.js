// ONNX Runtime 1.30 (CPU), no fusefuzz needed:
//   NODE_PATH=targets/onnxruntime/node_modules node corpus/onnxruntime/pool-ceil-shape-inference.js
// MaxPool(ceil_mode=1, kernel 3x3, strides 3, pads [2,0,2,2]) on x[1,1,3,1]: the third window
// would start at padded row 6, inside the end padding, so ONNX (and ORT's own MaxPool kernel)
// drop it: y is [1,1,2,1]. ORT's graph shape inference still counts it (3 rows), so the model
// that adds a [1,1,2,1] constant to y is refused: "[ShapeInferenceError] Incompatible dimensions".
'use strict';
const ort = require('onnxruntime-node');
const path = require('path');

(async () => {
  const opts = {graphOptimizationLevel: 'disabled', logSeverityLevel: 3};
  const model = path.join(__dirname, 'pool-ceil-shape-inference.onnx');
  try {
    const s = await ort.InferenceSession.create(model, opts);
    const x = new ort.Tensor('float32', new Float32Array(3), [1, 1, 3, 1]);
    const out = await s.run({[s.inputNames[0]]: x});
    console.log('no error: output dims', out[s.outputNames[0]].dims, '(the bug is fixed)');
  } catch (e) {
    console.log('ONNX Runtime refuses the model:', e.message.split('\n')[0]);
    process.exitCode = 1;
  }
})();
