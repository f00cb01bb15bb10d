// What an onnxruntime-node release other than the pinned one cannot do, found by trying it
// (docs/onnx.md, "Testing another release"): the worker runs these probes once at start-up when
// the adapter is given --ort-module, and the adapter's hello says what they found ("limits").
// Each probe builds a tiny model with onnx-proto and creates sessions; nothing is read from a
// table of releases.
'use strict';
const {onnx} = require('onnx-proto');

const F32 = onnx.TensorProto.DataType.FLOAT;

// x [1,4] -> Relu -> Sigmoid -> y at `opset` (IR version 7: every release reads it).
function opsetModel(opset) {
  const vi = (name) => onnx.ValueInfoProto.create({name, type: {tensorType: {
    elemType: F32, shape: {dim: [{dimValue: 1}, {dimValue: 4}]}}}});
  return Buffer.from(onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 7, producerName: 'fusefuzz-probe', opsetImport: [{domain: '', version: opset}],
    graph: {name: 'probe', input: [vi('x')], output: [vi('y')], node: [
      {opType: 'Relu', input: ['x'], output: ['a'], name: 'relu'},
      {opType: 'Sigmoid', input: ['a'], output: ['y'], name: 'sigmoid'}]}})).finish());
}

// A 1x1 Conv (weight W, bias B) then Mul by C, on the scalar X: ORT's ConvMulFusion (a rule of
// Level1_RuleBasedTransformer, level basic) folds C into the weight and bias, which rounds
// differently: unfused 39.78015899658203, fused 39.780155181884766 (measured on 1.10 to 1.31).
// Which of the two a session answers tells whether it optimized, so the probe needs neither a
// log nor a saved model (releases up to 1.20 save none).
const W = 1.2572964429855347;
const B = 75.22235107421875;
const C = 0.5199330449104309;
const X = 1.024263620376587;
const f = Math.fround;
const UNFUSED = f(f(f(X * W) + B) * C);

function foldModel(opset) {
  const dims = [1, 1, 1, 1];
  const vi = (name) => onnx.ValueInfoProto.create({name, type: {tensorType: {
    elemType: F32, shape: {dim: dims.map((d) => ({dimValue: d}))}}}});
  const init = (name, shape, v) => onnx.TensorProto.create(
      {name, dims: shape, dataType: F32, floatData: [v]});
  return Buffer.from(onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 7, producerName: 'fusefuzz-probe', opsetImport: [{domain: '', version: opset}],
    graph: {name: 'fold', input: [vi('x')], output: [vi('y')],
      initializer: [init('w', dims, W), init('b', [1], B), init('c', [1, 1, 1], C)],
      node: [{opType: 'Conv', input: ['x', 'w', 'b'], output: ['a'], name: 'conv'},
        {opType: 'Mul', input: ['a', 'c'], output: ['y'], name: 'mul'}]}})).finish());
}

async function foldValue(ort, model, options) {
  const s = await ort.InferenceSession.create(model, Object.assign({logSeverityLevel: 3}, options));
  const r = await s.run({x: new ort.Tensor('float32', Float32Array.from([X]), [1, 1, 1, 1])});
  if (typeof s.release === 'function') await s.release();
  return r.y.data[0];
}

// {version, hasRelease, levelHonoured, configPassed, maxOpset}; true/false, or null when the
// probe cannot tell. The last session logs at info level, so that the caller can look for
// "GraphTransformer ... modified" lines in the worker's stderr.
async function probeRelease(ort, version) {
  const out = {version, hasRelease: false, levelHonoured: null, configPassed: null, maxOpset: 0};
  // Newest opset first: the exporter writes 17 (19 for a few ops).
  for (const opset of [19, 17, 16, 15, 14, 13]) {
    try {
      const s = await ort.InferenceSession.create(opsetModel(opset), {logSeverityLevel: 3});
      out.hasRelease = typeof s.release === 'function';
      if (out.hasRelease) await s.release();
      out.maxOpset = opset;
      break;
    } catch (e) {
      out.opsetError = out.opsetError || String(e && e.message ? e.message : e).slice(0, 300);
    }
  }
  if (!out.maxOpset) return out;
  const model = foldModel(Math.min(out.maxOpset, 13));
  const fused = await foldValue(ort, model, {graphOptimizationLevel: 'basic'});
  if (fused !== UNFUSED) {
    // The fold changes the value here: each of the other two sessions shows whether it ran.
    out.levelHonoured = (await foldValue(ort, model, {graphOptimizationLevel: 'disabled'})) ===
        UNFUSED;
    out.configPassed = (await foldValue(ort, model, {graphOptimizationLevel: 'basic',
      extra: {optimization: {disable_specified_optimizers:
        'ConvMulFusion;Level1_RuleBasedTransformer'}}})) === UNFUSED;
  }
  const logged = await ort.InferenceSession.create(opsetModel(out.maxOpset),
      {graphOptimizationLevel: 'all', logSeverityLevel: 1});
  if (typeof logged.release === 'function') await logged.release();
  return out;
}

// The hello's "limits" (name -> why) from a probe and the log lines of its last session.
function limitsOf(p, logLines) {
  const v = `onnxruntime-node ${p.version}`;
  const limits = {};
  if (!p.hasRelease) {
    limits.release = `${v}'s binding has no InferenceSession.release(): sessions are freed ` +
        'by the garbage collector';
  }
  if (p.levelHonoured !== true) {
    limits.unoptimized_run = `${v}'s binding ` + (p.levelHonoured === false ?
      'ignores graphOptimizationLevel: every session, "disabled" included, is optimized ' +
      '(level all), so there is no unoptimized run; the optimized run is judged against the ' +
      'reference alone, and every level of this release is level all' :
      'gives the same value with and without ConvMulFusion, so whether it honours ' +
      'graphOptimizationLevel cannot be checked; the optimized run is judged against the ' +
      'reference alone');
  }
  if (p.configPassed !== true) {
    limits.disable = `${v}'s binding does not pass session config entries (the options' ` +
        '"extra"), so optimization.disable_specified_optimizers is ignored: blame by disabling ' +
        `is impossible on ORT ${p.version}, and --config has no effect`;
  }
  if (!logLines.some((l) => /GraphTransformer \S+ modified: [01]\b/.test(l))) {
    limits.rewrites = `${v} logs no "GraphTransformer <name> modified" lines at info level: ` +
        'it cannot say which transformers rewrote the graph';
  }
  // The last probe session (Relu -> Sigmoid at level all) has nothing to fuse.
  const spurious = [...new Set(logLines.map((l) => (/GraphTransformer (\S+) modified: 1\b/.exec(l) ||
    [])[1]).filter((n) => n))];
  if (spurious.length) {
    limits.spurious_rewrites = `${v} logs "${spurious.join(', ')} modified: 1" for a Relu -> ` +
        'Sigmoid model that no transformer changes: a rewrite it reports may have changed nothing';
  }
  if (p.maxOpset < 17) {
    limits.opset = p.maxOpset ? `${v} refuses models of opset > ${p.maxOpset}; fusefuzz ` +
        `exports at opset 17 (19 for a few ops), so every case is unsupported (${p.opsetError})` :
      `${v} loads no model of opset 13 to 19 (${p.opsetError})`;
  } else if (p.maxOpset < 19) {
    limits.opset = `${v} refuses models of opset > ${p.maxOpset}: cases that fusefuzz ` +
        'exports at opset 19 (Pad mode wrap, AvgPool dilations, ...) are unsupported';
  }
  return limits;
}

// The default-domain opset of a serialized model.
function opsetOf(modelB64) {
  const m = onnx.ModelProto.decode(Buffer.from(modelB64, 'base64'));
  const d = m.opsetImport.find((o) => !o.domain);
  return d ? Number(d.version) : 0;
}

module.exports = {probeRelease, limitsOf, opsetOf};
