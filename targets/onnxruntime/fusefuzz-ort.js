#!/usr/bin/env node
// ONNX Runtime behind fusefuzz's exec protocol (docs/target-protocol.md, docs/onnx.md):
//   fusefuzz fuzz --target "exec:node targets/onnxruntime/fusefuzz-ort.js --level all"
// fusefuzz sends each graph as the ONNX model it exports itself (capability "onnx"); this
// program runs it with ORT's graphOptimizationLevel --level (disabled | basic | extended | all;
// a request with optimize false runs at "disabled") and reports, as rewrites, the ORT graph
// transformers whose log says they modified the model. options.disable takes ORT transformer
// names (session option optimization.disable_specified_optimizers). Timing requests (capability
// bench): one session per request (level "disabled" for optimize false, --level otherwise),
// intra-op threads options.threads (1 by default), then warmup + timed session.run calls.
// Flags: --level L (default all), --skip-ops A,B (leave ops out of the hello), --name N,
// --config KEY=VALUE (a session config entry for both runs, repeatable), --ort-module DIR (the
// onnxruntime-node folder of another release, installed by install-release.sh: the target
// onnxruntime@VERSION:LEVEL; what that release cannot do is probed at start and declared in the
// hello's "limits", docs/onnx.md "Testing another release").
'use strict';
const {fork} = require('child_process');
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const {CONTAINERS} = require('./rule-attribution');
const {limitsOf, opsetOf} = require('./release-probe');
const {reproAnswer} = require('./repro-script');

const LEVELS = ['disabled', 'basic', 'extended', 'all'];
const OPS = ['Conv', 'FusedConv', 'BatchNorm', 'LayerNorm', 'GroupNorm', 'InstanceNorm', 'Relu',
  'Relu6', 'Clip', 'LeakyRelu', 'PRelu', 'Elu', 'Sigmoid', 'HardSigmoid', 'Tanh', 'Silu',
  'HardSwish', 'Gelu', 'Add', 'Sub', 'Mul', 'Div', 'Pad', 'MaxPool', 'AvgPool', 'GlobalAvgPool',
  'Concat', 'Identity', 'Flatten', 'Reshape', 'Gemm', 'MatMul',
  // Quantized graphs reach ORT as standard QDQ models (docs/onnx.md, "Quantization").
  'QuantizeLinear', 'DequantizeLinear', 'QLinearConv', 'QLinearAdd',
  // The building blocks of the decomposed norms and activations (exported as the ONNX ops).
  'ReduceMean', 'Pow', 'Sqrt', 'Reciprocal', 'Exp', 'Log', 'Erf',
  // Softmax (decomposed too), the attention vocabulary (Transpose -> MatMul at rank 4), Min/Max.
  'Min', 'Max', 'ReduceSum', 'ReduceMax', 'Softmax', 'Transpose'];

// The names options.disable takes (hello "rules"), as ORT 1.30 spells them. TRANSFORMERS: every
// graph transformer that session creation at level all logs as "GraphTransformer <name>
// modified: 0|1" on this build (not always the class name: GeluFusionL1, Pad_Fusion below);
// adapter.test.js fails when ORT logs one that is not listed. REWRITE_RULES: the rules inside
// the LevelN_RuleBasedTransformer containers, which ORT does not log (from ORT's
// graph_transformer_utils.cc and each rule's constructor). ORT ignores a name it does not know,
// so fusefuzz refuses any other name up front (`--disable PadFusion`: did you mean
// 'Pad_Fusion'?).
const TRANSFORMERS = ['AttentionFusion', 'BiasDropoutFusion', 'BiasGeluFusion',
  'BiasSkipLayerNormFusion', 'BiasSoftmaxFusion', 'CastFloat16Transformer',
  'CommonSubexpressionElimination', 'ConstantFolding', 'ConstantSharing', 'ConvActivationFusion',
  'ConvAddActivationFusion', 'DoubleQDQPairsRemover', 'DynamicQuantizeMatMulFusion',
  'EmbedLayerNormFusion', 'EnsureUniqueDQForNodeUnit', 'FastGeluFusion',
  'FreeDimensionOverrideTransformer', 'FuseFp16InitializerToFp32NodeTransformer',
  'GatherSliceToSplitFusion', 'GatherToSliceFusion', 'GeluFusionL1', 'GeluFusionL2',
  'GemmActivationFusion', 'GroupQueryAttentionFusion', 'GroupQueryAttentionPreNormFusion',
  'LayerNormFusionL1', 'LayerNormFusionL2', 'Level1_RuleBasedTransformer',
  'Level2_RuleBasedTransformer', 'MatMulActivationFusion', 'MatMulAddFusion',
  'MatMulIntegerToFloatFusion', 'MatMulNBitsFusion', 'MatMulScaleFusion',
  'MatmulTransposeFusion', 'MemcpyTransformer', 'NchwcTransformer', 'NhwcTransformer',
  'QDQFinalCleanupTransformer', 'QDQPropagationTransformer', 'QDQS8ToU8Transformer',
  'QDQSelectorActionTransformer', 'QuickGeluFusion', 'RemoveDuplicateCastTransformer',
  'ReshapeFusion', 'SimplifiedLayerNormFusion', 'SkipLayerNormFusion',
  'SliceConcatToSpaceToDepthFusion', 'TransposeOptimizer',
  'TransposeOptimizer_CPUExecutionProvider', 'WeightBiasQuantization', 'WhereDummyDq'];

const REWRITE_RULES = ['EliminateIdentity', 'EliminateSlice', 'UnsqueezeElimination',
  'EliminateUnsqueeze', 'EliminateDropout', 'ExpandElimination', 'CastElimination',
  'CastChainElimination', 'PreShapeNodeElimination', 'NoopElimination', 'DivMulFusion',
  'FuseReluClip', 'GemmSumFusion', 'GemmTransposeFusion', 'NotWhereFusion', 'ConvAddFusion',
  'ConvMulFusion', 'ConvBNFusion', 'Pad_Fusion', 'MatmulBNFusion', 'LabelEncoderFusion',
  'ClipQuantFusion', 'ReluQuantFusion'];

// Declared fusions that no graph this adapter receives can fire (README.md, "Engine
// coverage" lists the ones fusefuzz's vocabulary does not reach yet).
const UNREACHABLE = {
  MemcpyTransformer: 'copies between execution providers; this session has only the CPU EP',
  FreeDimensionOverrideTransformer: 'needs free dimension overrides in the session options; ' +
      'the adapter sets none and fusefuzz models have no symbolic dimensions',
  LabelEncoderFusion: 'fuses ai.onnx.ml LabelEncoder nodes; fusefuzz exports the default ' +
      'domain only',
};

// A session config entry (ORT's AddSessionConfigEntry keys, e.g. session.x64quantprecision=1:
// exact u8s8 kernels on x86 CPUs without VNNI, docs/upstream-bugs.md): given to both runs.
// Every part starts with a letter (no __proto__).
const CONFIG_ENTRY = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+=[A-Za-z0-9_.:-]{1,64}$/;

function parseArgs(argv) {
  const o = {level: 'all', skip: [], name: 'onnxruntime', config: {}, ruleLevel: true};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--level' && LEVELS.includes(argv[i + 1])) {
      o.level = argv[++i];
    } else if (a === '--skip-ops' && i + 1 < argv.length) {
      o.skip.push(...argv[++i].split(',').filter((s) => s));
    } else if (a === '--no-rule-attribution') {
      o.ruleLevel = false;
    } else if (a === '--name' && argv[i + 1]) {
      o.name = argv[++i];
    } else if (a === '--ort-module' && path.isAbsolute(argv[i + 1] || '') &&
        fs.existsSync(path.join(argv[i + 1], 'package.json'))) {
      o.ortModule = argv[++i];
    } else if (a === '--config' && CONFIG_ENTRY.test(argv[i + 1] || '')) {
      const [key, value] = argv[++i].split('=');
      o.config[key] = value;
    } else {
      process.stderr.write(`fusefuzz-ort.js: bad argument ${a}` +
          (a === '--config' ? ` ${argv[i + 1]} (a session config entry KEY=VALUE, e.g. ` +
              'session.x64quantprecision=1)' : '') +
          (a === '--ort-module' ? ` ${argv[i + 1]} (the absolute path of an onnxruntime-node ` +
              'folder holding its package.json)' : '') + '\n' +
          `usage: fusefuzz-ort.js [--level ${LEVELS.join('|')}] [--skip-ops A,B] [--name N]` +
          ' [--config KEY=VALUE]... [--no-rule-attribution] [--ort-module DIR]\n');
      process.exit(2);
    }
  }
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const worker = fork(path.join(__dirname, 'ort-worker.js'), opts.ortModule ? [opts.ortModule] : [],
    {silent: true});
const ortVersion = require(opts.ortModule ? path.join(opts.ortModule, 'package.json') :
  'onnxruntime-node/package.json').version;
// What the release cannot do (release-probe.js), name -> why; {} for the pinned release.
let limits = {};
let maxOpset = Infinity;
let stderrTail = '';
let logLines = [];
let pending = null;  // {id, reply, ended, request}

// A dead worker is our crash: fusefuzz records it as a crash finding and restarts us.
worker.on('exit', (code, signal) => setTimeout(() => {
  // (After its last stderr lines have been read.)
  // Its last line first, on the line fusefuzz quotes (a release that cannot load says why).
  const last = stderrTail.trim().split('\n').pop();
  process.stderr.write(`fusefuzz-ort.js: ORT worker ${signal ? 'killed by ' + signal : 'exited with ' + code}` +
                       `${last ? ': ' + last : ''}; its stderr ends:\n${stderrTail}\n`);
  process.exit(signal ? 134 : (code || 1));
}, 50));

readline.createInterface({input: worker.stderr}).on('line', (line) => {
  const m = /^@@fusefuzz-ort-end (\S+)$/.exec(line);
  if (m) {
    if (pending && String(pending.id) === m[1]) {
      pending.ended = true;
      finish();
    }
    return;
  }
  stderrTail = (stderrTail + line + '\n').slice(-2048);
  logLines.push(line);
});

worker.on('message', (msg) => {
  if (pending && msg.id === pending.id) {
    pending.reply = msg;
    finish();
  }
});

function write(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// "GraphTransformer ConvActivationFusion modified: 1 with status: OK" -> ConvActivationFusion.
// After a rule-based container's first entry come the rules found inside it (`rules`,
// rule-attribution.js), so that blame can disable the one rule, not the whole container.
function rewritesFrom(lines, rules) {
  const rewrites = [];
  const seen = new Set();
  for (const l of lines) {
    const m = /GraphTransformer (\S+) modified: 1\b/.exec(l);
    if (!m) continue;
    rewrites.push({index: rewrites.length + 1, rule: m[1], nodes: []});
    if (rules && rules[m[1]] && !seen.has(m[1])) {
      seen.add(m[1]);
      for (const rule of rules[m[1]]) rewrites.push({index: rewrites.length + 1, rule, nodes: []});
    }
  }
  return rewrites;
}

// The containers whose "modified: 1" the log of a run shows.
function containersModified(lines) {
  return CONTAINERS.filter((c) => lines.some((l) => l.includes(`GraphTransformer ${c} modified: 1`)));
}

function finish() {
  if (!pending || !pending.reply || !pending.ended) return;
  if (pending.probing) {
    const lines = logLines;
    const {probe, error} = pending.reply;
    pending = null;
    logLines = [];
    if (!probe) {
      process.stderr.write(`fusefuzz-ort.js: probing onnxruntime-node ${ortVersion} failed: ` +
          `${error}\n`);
      process.exit(1);
    }
    limits = limitsOf(probe, lines);
    maxOpset = probe.maxOpset;
    // Without config entries no transformer can be disabled, so rules cannot be attributed
    // either (rule-attribution.js disables the other transformers).
    if (limits.disable) opts.ruleLevel = false;
    start();
    return;
  }
  if (pending.attributing) {
    // The rule attribution's answer: its log lines are not the run's.
    const {id, run} = pending;
    const rules = pending.reply.rules || null;
    pending = null;
    logLines = [];
    answer(id, run.reply, run.lines, rules);
    return;
  }
  const {id, reply, request} = pending;
  const lines = logLines;
  logLines = [];
  const containers = opts.ruleLevel && request.wantLog ? containersModified(lines) : [];
  if (containers.length) {
    pending = {id, reply: null, ended: false, attributing: true, run: {reply, lines}};
    worker.send({id, transformers: TRANSFORMERS, attribute: {
      id, model: request.model, containers, disable: request.disable, config: request.config}});
    return;
  }
  pending = null;
  answer(id, reply, lines, null);
}

function answer(id, reply, lines, rules) {
  if (reply.error !== undefined) {
    // The transformers ORT logged before it failed go with the error, so that fusefuzz can
    // blame the rewrite behind an error only the optimized run hits (pads >= kernel).
    write({id, error: reply.error, rewrites: rewritesFrom(lines, rules)});
  } else {
    const resp = {id, outputs: reply.outputs, rewrites: rewritesFrom(lines, rules)};
    if (reply.timings) resp.timings = reply.timings;
    write(resp);
  }
  rl.resume();
}

function handle(req) {
  const o = req.options || {};
  if (!req.onnx || typeof req.onnx.model !== 'string') {
    return {unsupported: 'the request carries no ONNX model (capability "onnx")'};
  }
  if ((o.pipeline && o.pipeline.length) || (o.only && o.only.length)) {
    return {unsupported: 'ONNX Runtime has no rule pipeline to reorder or restrict'};
  }
  if (o.inject && o.inject.length) return {unsupported: 'no faults to inject into ONNX Runtime'};
  if (typeof o.bisect_limit === 'number' && o.bisect_limit >= 0) {
    return {unsupported: 'ONNX Runtime cannot stop after N rewrites'};
  }
  if (limits.opset && opsetOf(req.onnx.model) > maxOpset) return {unsupported: limits.opset};
  // A finding's standalone reproducer (capability repro): written, not run.
  if (req.repro) {
    // reproduce.js tells the bug by the disabled run: a release whose disabled run is optimized
    // too cannot tell it.
    if (limits.unoptimized_run) return {unsupported: limits.unoptimized_run};
    try {
      const a = reproAnswer(req, opts.level, opts.ortModule ? path.dirname(opts.ortModule) :
        path.join(__dirname, 'node_modules'));
      return a.unsupported ? a : {repro: a};
    } catch (e) {
      return {error: 'bad repro request: ' + e.message};
    }
  }
  const optimize = o.optimize !== false;
  const b = req.bench;
  if (b !== undefined && !(b && Number.isInteger(b.warmup) && b.warmup >= 0 &&
      Number.isInteger(b.runs) && b.runs >= 1)) {
    return {error: 'bad request: "bench" needs integers warmup >= 0 and runs >= 1'};
  }
  return {
    run: {
      id: req.id,
      model: req.onnx.model,
      inputs: req.inputs,
      level: optimize ? opts.level : 'disabled',
      disable: optimize && Array.isArray(o.disable) ? o.disable : [],
      config: opts.config,
      threads: Number.isInteger(o.threads) && o.threads > 0 ? o.threads : 1,
      wantLog: optimize && opts.level !== 'disabled' && !limits.rewrites,
      bench: b ? {warmup: b.warmup, runs: b.runs} : null,
    },
  };
}

// The batch size this adapter suggests, and the most nodes of one joined model.
const BATCH_CASES = 16;
const BATCH_MAX_NODES = 600;

function start() {
  const capabilities = ['onnx', 'onnx_only', 'rewrites', 'disable', 'bench', 'batch', 'repro'].filter((c) =>
    !(c === 'disable' && limits.disable) && !(c === 'rewrites' && limits.rewrites));
  const hello = {
    protocol: 'fusefuzz-target', version: 1, name: opts.name,
    engine: 'onnxruntime-node ' + ortVersion,
    ops: OPS.filter((op) => !opts.skip.includes(op)),
    capabilities,
    rules: TRANSFORMERS.concat(REWRITE_RULES),
    // Engine coverage (docs/target-protocol.md): every transformer and rule but the two
    // containers (their rules are reported one by one) and EliminateUnsqueeze (the rule's older
    // name, kept in "rules" for disable only).
    fusions: TRANSFORMERS.concat(REWRITE_RULES).filter((n) => !CONTAINERS.includes(n) &&
        n !== 'EliminateUnsqueeze'),
    unreachable_fusions: UNREACHABLE,
    // Several cases per request (docs/target-protocol.md, "Batches"): one session per call costs
    // milliseconds, a node of a joined model little (docs/campaign.md, "Batches" has the figures).
    batch: {cases: BATCH_CASES, max_nodes: BATCH_MAX_NODES},
  };
  // A release that cannot say what fired (and so cannot disable either) declares no fusions or
  // rules: a campaign would count them all as never fired.
  if (limits.rewrites) {
    delete hello.rules;
    delete hello.fusions;
    delete hello.unreachable_fusions;
  }
  if (Object.keys(limits).length) hello.limits = limits;
  write(hello);
  rl = readline.createInterface({input: process.stdin});
  rl.on('line', onLine);
  rl.on('close', () => {
    worker.removeAllListeners('exit');
    worker.kill();
    process.exit(0);
  });
}

let rl = null;
function onLine(line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    write({id: null, error: 'cannot parse the request: ' + e.message});
    return;
  }
  const h = handle(req);
  if (!h.run) {
    write(Object.assign({id: req.id}, h));
    return;
  }
  // One request at a time (the protocol is sequential): hold further lines until answered.
  rl.pause();
  pending = {id: req.id, reply: null, ended: false, request: h.run};
  logLines = [];
  worker.send(h.run);
}

if (opts.ortModule) {
  // Another release: what it cannot do is found by trying it before the hello.
  pending = {id: 'probe', reply: null, ended: false, probing: true};
  worker.send({id: 'probe', probe: ortVersion});
} else {
  start();
}
