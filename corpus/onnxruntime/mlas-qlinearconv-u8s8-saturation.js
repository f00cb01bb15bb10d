// ONNX Runtime 1.30 (CPU), no fusefuzz needed:
//   NODE_PATH=targets/onnxruntime/node_modules node corpus/onnxruntime/mlas-qlinearconv-u8s8-saturation.js
// MLAS's u8 x s8 convolution on x86 CPUs without VNNI (SSE4.1, AVX2, AVX-512 without VNNI) sums
// two products in a saturating int16 (pmaddubsw), so a QDQ Conv fused into QLinearConv at level
// "all" can come out wrong where level "disabled" (float Conv between DQ and Q) is exact.
// The model: x (float) -> Q(u8, s 1, z 0) -> DQ -> Conv(W = [127, 127] int8 at s 2^-8, 1x1,
// 2 input channels) -> Q(u8, s 1, z 0). For x = [255, 255]: 255 * 127 * 2 = 64770 steps of
// s_x * s_w = 2^-8, i.e. 253.01 -> 253. The pair sum saturates at 32767: 127.996 -> 128.
// ORT's session option "session.x64quantprecision" = "1" (off by default; ORT PR #12088) makes
// the fused kernel exact: the script shows that too.
// docs/upstream-bugs.md, "ONNX Runtime 1.30". Exit 1 while the bug is there, 0 when it is not,
// 77 on a CPU where MLAS does not use this kernel (VNNI, or not x86).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');
const path = require('path');

const model = path.join(__dirname, 'mlas-qlinearconv-u8s8-saturation.onnx');
const input = [255, 255];
const expected = 253;

function cpuFlags() {
  try {
    const line = fs.readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('flags'));
    return new Set(line ? line.split(':')[1].trim().split(/\s+/) : []);
  } catch (e) {
    return new Set();
  }
}

async function run(level, extra) {
  const s = await ort.InferenceSession.create(
      model, {graphOptimizationLevel: level, logSeverityLevel: 4, intraOpNumThreads: 1, extra});
  const x = new ort.Tensor('float32', Float32Array.from(input), [1, 2, 1, 1]);
  const out = await s.run({[s.inputNames[0]]: x});
  return out[s.outputNames[0]].data[0];
}

(async () => {
  const flags = cpuFlags();
  if (process.arch !== 'x64' || !flags.has('sse4_1') || flags.has('avx512_vnni') ||
      flags.has('avx_vnni')) {
    console.log('this CPU does not run MLAS\'s saturating u8s8 kernel (VNNI or not x86): skipped');
    process.exitCode = 77;
    return;
  }
  const plain = await run('disabled', {});
  const fused = await run('all', {});
  const fixed = await run('all', {session: {x64quantprecision: '1'}});
  console.log(`"disabled" ${plain}, "all" ${fused}, "all" with session.x64quantprecision ${fixed}` +
              ` (expected ${expected})`);
  if (plain !== expected) {
    console.log('"disabled" is not the expected value: not this bug');
    process.exitCode = 2;
  } else {
    process.exitCode = fused !== expected ? 1 : 0;
  }
})();
