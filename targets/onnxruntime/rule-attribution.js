// The rules inside ONNX Runtime's rule-based containers (Level1_RuleBasedTransformer,
// Level2_RuleBasedTransformer), which ORT's log does not name: it logs only that a container
// modified the graph. Measured on onnxruntime-node 1.30 (README.md, "Rules inside the
// rule-based containers"): verbose logging (severity 0) names no rule either, so the rules are
// found by replaying the containers alone and diffing the models ORT saves
// (optimizedModelFilePath): level basic with every other transformer disabled gives the model
// after the Level1 rules, level extended the one after Level1 + Level2 rules. Each node a
// container removed names the rule that removes such a node from such a neighbourhood.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {onnx} = require('onnx-proto');

const CONTAINERS = ['Level1_RuleBasedTransformer', 'Level2_RuleBasedTransformer'];

function decodeGraph(buf) {
  const g = onnx.ModelProto.decode(buf).graph;
  const initializers = new Map(g.initializer.map((t) => [t.name, t]));
  const producer = new Map();
  const consumers = new Map();
  const key = (n) => n.name || n.opType + ':' + n.output.join(',');
  for (const n of g.node) {
    for (const o of n.output) producer.set(o, n);
    for (const i of n.input) {
      if (!consumers.has(i)) consumers.set(i, []);
      consumers.get(i).push(n);
    }
  }
  return {nodes: g.node, initializers, producer, consumers, key};
}

// Whether float initializer t holds only v (false for anything else, or no initializer).
function allEqual(t, v) {
  if (!t || t.dataType !== onnx.TensorProto.DataType.FLOAT) return false;
  let values = t.floatData;
  if (t.rawData && t.rawData.length) {
    const bytes = Uint8Array.from(t.rawData);
    values = new Float32Array(bytes.buffer);
  }
  return values.length > 0 && Array.from(values).every((x) => x === v);
}

// The rule that removes node n (of graph g) where it stands; '' when no rule explains it.
function ruleOf(g, n) {
  // The producer past Identity nodes: EliminateIdentity removes them first, in the same replay.
  const prod = (i) => {
    let p = (n.input[i] !== undefined && g.producer.get(n.input[i])) || null;
    for (let hops = 0; p && p.opType === 'Identity' && hops < 100; hops++) {
      p = g.producer.get(p.input[0]) || null;
    }
    return p;
  };
  const prodType = (i) => (prod(i) ? prod(i).opType : '');
  const users = [].concat(...n.output.map((o) => g.consumers.get(o) || []));
  const userTypes = new Set(users.map((u) => u.opType));
  const constOther = n.input.slice(1).every((i) => g.initializers.has(i));
  // NoopElimination runs before the conv folds on the same node: x + 0, x - 0, x * 1, x / 1.
  const neutral = (v) => n.input.length === 2 && allEqual(g.initializers.get(n.input[1]), v);
  if (users.length && users.every((u) => u.opType === 'Shape')) return 'PreShapeNodeElimination';
  switch (n.opType) {
    case 'Identity': return 'EliminateIdentity';
    case 'Slice': return 'EliminateSlice';
    case 'Unsqueeze': return 'UnsqueezeElimination';
    case 'Dropout': return 'EliminateDropout';
    case 'Expand': return 'ExpandElimination';
    case 'Cast': return prodType(0) === 'Cast' || userTypes.has('Cast') ?
      'CastChainElimination' : 'CastElimination';
    case 'Not': return 'NotWhereFusion';
    case 'Sum': return 'GemmSumFusion';
    case 'Transpose': return userTypes.has('Gemm') || prodType(0) === 'Gemm' ?
      'GemmTransposeFusion' : '';
    case 'BatchNormalization': return prodType(0) === 'Conv' ? 'ConvBNFusion' : 'MatmulBNFusion';
    case 'Pad': return 'Pad_Fusion';
    case 'LabelEncoder': return 'LabelEncoderFusion';
    case 'Relu':
      if (userTypes.has('Clip')) return 'FuseReluClip';
      return userTypes.has('QuantizeLinear') ? 'ReluQuantFusion' : '';
    case 'Clip':
      if (prodType(0) === 'Relu') return 'FuseReluClip';
      return userTypes.has('QuantizeLinear') ? 'ClipQuantFusion' : '';
    case 'Add':
      return prodType(0) === 'Conv' && constOther && !neutral(0) ? 'ConvAddFusion' :
        'NoopElimination';
    case 'Mul':
      if (prodType(0) === 'Conv' && constOther && !neutral(1)) return 'ConvMulFusion';
      return prodType(0) === 'Div' || prodType(1) === 'Div' ? 'DivMulFusion' : 'NoopElimination';
    case 'Div': return userTypes.has('Mul') ? 'DivMulFusion' : 'NoopElimination';
    case 'Sub': return 'NoopElimination';
    default: return '';
  }
}

// Rules whose rewrites turned `before` into `after` (serialized models), one entry per removed
// node, in the order of before's nodes.
function diffRules(before, after) {
  const b = decodeGraph(before);
  const a = decodeGraph(after);
  const kept = new Set(a.nodes.map(a.key));
  const rules = [];
  for (const n of b.nodes) {
    if (kept.has(b.key(n))) continue;
    const rule = ruleOf(b, n);
    if (rule) rules.push(rule);
  }
  return rules;
}

// The model after only the rule-based containers up to `level`, serialized.
async function replayContainers(ort, model, level, msg, transformers) {
  const keep = level === 'basic' ? CONTAINERS.slice(0, 1) : CONTAINERS;
  const disable = transformers.filter((t) => !keep.includes(t)).concat(msg.disable || []);
  const file = path.join(os.tmpdir(),
      `fusefuzz-ort-rules-${process.pid}-${msg.id}-${level}.onnx`);
  const extra = {optimization: {disable_specified_optimizers: disable.join(';')}};
  for (const [key, value] of Object.entries(msg.config || {})) {
    const parts = key.split('.');
    let node = extra;
    for (const p of parts.slice(0, -1)) node = node[p] = node[p] || {};
    node[parts[parts.length - 1]] = value;
  }
  try {
    const session = await ort.InferenceSession.create(model, {
      graphOptimizationLevel: level, logSeverityLevel: 3, optimizedModelFilePath: file,
      intraOpNumThreads: 1, interOpNumThreads: 1, extra});
    if (typeof session.release === 'function') await session.release();
    return fs.readFileSync(file);
  } finally {
    fs.rmSync(file, {force: true});
  }
}

// {Level1_RuleBasedTransformer: [rule...], Level2_RuleBasedTransformer: [...]} for the
// containers `msg.containers` that modified the model in the real run.
async function attributeRules(ort, msg, transformers) {
  const model = Buffer.from(msg.model, 'base64');
  const out = {};
  const l1 = await replayContainers(ort, model, 'basic', msg, transformers);
  if (msg.containers.includes(CONTAINERS[0])) out[CONTAINERS[0]] = diffRules(model, l1);
  if (msg.containers.includes(CONTAINERS[1])) {
    const l2 = await replayContainers(ort, model, 'extended', msg, transformers);
    out[CONTAINERS[1]] = diffRules(l1, l2);
  }
  return out;
}

module.exports = {CONTAINERS, attributeRules, diffRules, ruleOf};
