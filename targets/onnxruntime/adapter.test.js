// Tests of fusefuzz-ort.js through the protocol (run by ctest: `node --test adapter.test.js`,
// with FUSEFUZZ = the fusefuzz binary and FUSEFUZZ_SOURCE_DIR = the source tree).
'use strict';
const assert = require('assert');
const {execFileSync, spawn} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');
const test = require('node:test');
const pb = require('./tensor-files');

const fusefuzz = process.env.FUSEFUZZ;
const src = process.env.FUSEFUZZ_SOURCE_DIR || path.join(__dirname, '..', '..');

// A request for a seed graph, built from `fusefuzz export` (the same bytes the exec client sends).
// `seed` names a file of corpus/seeds/, or is a path to a graph or reproducer.
function request(seed, id, options) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fusefuzz-ort-test-'));
  const model = path.join(dir, 'model.onnx');
  const file = seed.includes('/') ? seed : path.join(src, 'corpus', 'seeds', seed + '.json');
  execFileSync(fusefuzz, ['export', file, '--onnx', model, '--inputs-pb', dir]);
  const t = pb.decodeTensor(fs.readFileSync(path.join(dir, 'test_data_set_0', 'input_0.pb')));
  const raw = Buffer.alloc(4 * t.data.length);
  t.data.forEach((v, i) => raw.writeFloatLE(v, 4 * i));
  return {
    id,
    graph: {},
    inputs: {[t.name]: {shape: t.dims, b64: raw.toString('base64')}},
    options: Object.assign({optimize: true, pipeline: [], disable: [], only: [], inject: [],
      bisect_limit: -1, threads: 1}, options),
    onnx: {model: fs.readFileSync(model).toString('base64'), opset: 17, inputs: [t.name]},
  };
}

// Starts the adapter; returns {hello, ask(request) -> response, close()}.
async function start(args) {
  const child = spawn(process.execPath, [path.join(__dirname, 'fusefuzz-ort.js'), ...args],
      {stdio: ['pipe', 'pipe', 'inherit']});
  const lines = readline.createInterface({input: child.stdout})[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value);
  const hello = await next();
  return {
    hello,
    ask: async (req) => {
      child.stdin.write(JSON.stringify(req) + '\n');
      return next();
    },
    close: () => new Promise((resolve) => {
      child.on('exit', resolve);
      child.stdin.end();
    }),
  };
}

test('hello declares every op and the onnx capability; --skip-ops leaves ops out', async () => {
  const t = await start(['--skip-ops', 'Elu,Gelu']);
  assert.strictEqual(t.hello.protocol, 'fusefuzz-target');
  assert.strictEqual(t.hello.version, 1);
  assert.ok(t.hello.capabilities.includes('onnx'));
  assert.ok(t.hello.capabilities.includes('onnx_only'));
  assert.ok(t.hello.ops.includes('FusedConv'));
  assert.ok(!t.hello.ops.includes('Elu') && !t.hello.ops.includes('Gelu'));
  await t.close();
});

test('the op list matches the protocol schema (kept in sync with ir/ops.def)', async () => {
  const schema = JSON.parse(fs.readFileSync(
      path.join(src, 'docs', 'target-protocol.schema.json'), 'utf8'));
  const t = await start([]);
  try {
    assert.deepStrictEqual(t.hello.ops, schema.$defs.op.enum);
  } finally {
    await t.close();
  }
});

test('the classifier head (GlobalAvgPool, Flatten, Gemm) runs at levels disabled and all', async () => {
  const t = await start(['--level', 'all']);
  try {
    const plain = await t.ask(request('op-classifier-head', 1, {optimize: false}));
    const fused = await t.ask(request('op-classifier-head', 2, {}));
    for (const r of [plain, fused]) assert.ok(r.outputs, JSON.stringify(r).slice(0, 300));
    for (const name of Object.keys(plain.outputs)) {
      assert.deepStrictEqual(fused.outputs[name].shape, plain.outputs[name].shape);
    }
  } finally {
    await t.close();
  }
});

test('decomposed LayerNorm and GELU: same outputs at levels disabled and all, fused at all', async () => {
  const t = await start(['--level', 'all']);
  try {
    const seed = 'op-layer-norm-gelu-decomposed';
    const plain = await t.ask(request(seed, 1, {optimize: false}));
    const fused = await t.ask(request(seed, 2, {}));
    for (const r of [plain, fused]) assert.ok(r.outputs && r.outputs.y, JSON.stringify(r).slice(0, 300));
    assert.deepStrictEqual(fused.outputs.y.shape, [1, 2, 3, 8]);
    const rules = fused.rewrites.map((r) => r.rule);
    assert.ok(rules.some((r) => r.startsWith('LayerNormFusion')), rules.join(','));
    assert.ok(rules.some((r) => r.startsWith('GeluFusion')), rules.join(','));
    // Every building block runs unfused too (the seed with Exp, Log, Pow 3/0.5, Reciprocal).
    const math = await t.ask(request('op-math', 3, {optimize: false}));
    assert.ok(math.outputs && math.outputs.y && math.outputs.m, JSON.stringify(math).slice(0, 300));
    assert.deepStrictEqual(math.outputs.m.shape, [1, 3, 4]);
  } finally {
    await t.close();
  }
});

test('level all fuses Conv+Relu and says so; disable switches the transformer off', async () => {
  const t = await start(['--level', 'all']);
  const fused = await t.ask(request('glow-conv-relu-bn', 1, {}));
  assert.ok(fused.outputs && fused.outputs.y, JSON.stringify(fused).slice(0, 300));
  assert.deepStrictEqual(fused.outputs.y.shape, [1, 3, 5, 5]);
  const rules = fused.rewrites.map((r) => r.rule);
  assert.ok(rules.includes('ConvActivationFusion'), rules.join(','));
  const off = await t.ask(request('glow-conv-relu-bn', 2, {disable: ['ConvActivationFusion']}));
  assert.ok(!off.rewrites.map((r) => r.rule).includes('ConvActivationFusion'));
  // Two names at once: ORT splits the list at ';' and reads "A,B" as one unknown name, which
  // disabled nothing (blame by disabling every rule after a prefix relies on this).
  const others = rules.filter((r) => r !== 'ConvActivationFusion');
  assert.ok(others.length > 0, rules.join(','));
  const both = await t.ask(request('glow-conv-relu-bn', 4,
      {disable: ['ConvActivationFusion', others[0]]}));
  const left = both.rewrites.map((r) => r.rule);
  assert.ok(!left.includes('ConvActivationFusion') && !left.includes(others[0]), left.join(','));
  const plain = await t.ask(request('glow-conv-relu-bn', 3, {optimize: false}));
  assert.deepStrictEqual(plain.rewrites, []);
  await t.close();
});

test('hello rules: the names disable takes, as ORT spells them; every logged transformer', async () => {
  const t = await start([]);
  await t.close();
  assert.ok(t.hello.rules.includes('Pad_Fusion') && !t.hello.rules.includes('PadFusion'));
  assert.ok(t.hello.rules.includes('Level1_RuleBasedTransformer'));
  // Session creation at level all logs every transformer it runs ("modified: 0" included):
  // each must be a name the hello lists, or fusefuzz would refuse a real one.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fusefuzz-ort-names-'));
  const model = path.join(dir, 'model.onnx');
  execFileSync(fusefuzz, ['export', path.join(src, 'corpus', 'seeds', 'glow-conv-relu-bn.json'),
    '--onnx', model]);
  const code = `const ort = require(${JSON.stringify(require.resolve('onnxruntime-node'))});
    ort.InferenceSession.create(require('fs').readFileSync(process.argv[1]),
      {graphOptimizationLevel: 'all', logSeverityLevel: 1}).then((s) => s.release());`;
  const r = require('child_process').spawnSync(process.execPath, ['-e', code, model],
      {encoding: 'utf8'});
  const logged = [...r.stderr.matchAll(/GraphTransformer (\S+) modified: [01]/g)].map((m) => m[1]);
  assert.ok(logged.length > 10, r.stderr.slice(0, 500));
  const missing = logged.filter((n) => !t.hello.rules.includes(n));
  assert.deepStrictEqual(missing, []);
});

test('rules inside the rule-based containers are reported one by one, after the container',
    async () => {
      const t = await start(['--level', 'all']);
      try {
        // conv-bn-bn: Conv -> BN -> BN; ConvBNFusion folds the first BN (Level1 rules).
        const r = await t.ask(request('conv-bn-bn', 1, {}));
        const rules = r.rewrites.map((w) => w.rule);
        const at = rules.indexOf('Level1_RuleBasedTransformer');
        assert.ok(at >= 0 && rules[at + 1] === 'ConvBNFusion', rules.join(','));
        // Disabling the one rule (ORT takes rule names too) leaves the BN in place.
        const off = await t.ask(request('conv-bn-bn', 2, {disable: ['ConvBNFusion']}));
        assert.ok(!off.rewrites.map((w) => w.rule).includes('ConvBNFusion'),
            JSON.stringify(off.rewrites));
        // --no-rule-attribution: the containers only, as ORT logs them.
      } finally {
        await t.close();
      }
      const plain = await start(['--level', 'all', '--no-rule-attribution']);
      try {
        const r = await plain.ask(request('conv-bn-bn', 1, {}));
        assert.ok(!r.rewrites.map((w) => w.rule).includes('ConvBNFusion'),
            JSON.stringify(r.rewrites));
      } finally {
        await plain.close();
      }
    });

test('hello fusions: every rule and transformer but the containers; unreachable ones say why',
    async () => {
      const t = await start([]);
      await t.close();
      assert.ok(t.hello.fusions.includes('ConvBNFusion') && t.hello.fusions.includes('Pad_Fusion'));
      assert.ok(!t.hello.fusions.includes('Level1_RuleBasedTransformer'));
      for (const name of Object.keys(t.hello.unreachable_fusions)) {
        assert.ok(t.hello.fusions.includes(name), name);
        assert.ok(t.hello.unreachable_fusions[name].length > 10, name);
      }
    });

test('diffRules names the rule behind each node a container removed', () => {
  const {ruleOf} = require('./rule-attribution');
  const g = (nodes, inits = []) => ({
    nodes, initializers: new Map(inits.map((t) => [t.name, t])),
    producer: new Map(nodes.flatMap((n) => n.output.map((o) => [o, n]))),
    consumers: new Map(), key: (n) => n.name,
  });
  const node = (name, opType, input, output) => ({name, opType, input, output});
  const conv = node('c', 'Conv', ['x', 'w'], ['y']);
  const add = node('a', 'Add', ['y', 'k'], ['z']);
  const float = (name, v) => ({name, dataType: 1, floatData: [v, v], rawData: null});
  assert.strictEqual(ruleOf(g([conv, add], [float('k', 0.5)]), add), 'ConvAddFusion');
  assert.strictEqual(ruleOf(g([conv, add], [float('k', 0)]), add), 'NoopElimination');
  const bn = node('b', 'BatchNormalization', ['y', 's', 'b', 'm', 'v'], ['z']);
  assert.strictEqual(ruleOf(g([conv, bn]), bn), 'ConvBNFusion');
  // Through an Identity that EliminateIdentity removes first.
  const id = node('i', 'Identity', ['y'], ['yi']);
  const bn2 = node('b2', 'BatchNormalization', ['yi', 's', 'b', 'm', 'v'], ['z']);
  assert.strictEqual(ruleOf(g([conv, id, bn2]), bn2), 'ConvBNFusion');
  assert.strictEqual(ruleOf(g([node('p', 'Pad', ['x'], ['q'])]), node('p', 'Pad', ['x'], ['q'])),
      'Pad_Fusion');
});

test('an error of the optimized run carries the transformers applied before it', async () => {
  const t = await start(['--level', 'all']);
  try {
    const repro = path.join(src, 'corpus', 'onnxruntime', 'padfusion-pads-exceed-kernel.repro.json');
    const r = await t.ask(request(repro, 1, {}));
    assert.ok(typeof r.error === 'string', JSON.stringify(r).slice(0, 300));
    assert.ok(r.rewrites.map((w) => w.rule).includes('Level1_RuleBasedTransformer'),
        JSON.stringify(r.rewrites));
    const plain = await t.ask(request(repro, 2, {optimize: false}));
    assert.ok(plain.outputs, JSON.stringify(plain).slice(0, 300));
  } finally {
    await t.close();
  }
});

test('--config gives a session config entry to both runs; a malformed one is refused', async () => {
  // MLAS's u8s8 conv saturates a pair sum on x86 without VNNI (corpus/onnxruntime/
  // mlas-qlinearconv-u8s8-saturation.js): 255 * 127 * 2 / 256 = 253, saturated 128.
  // session.x64quantprecision=1 makes the fused kernel exact on every CPU.
  const model = path.join(src, 'corpus', 'onnxruntime', 'mlas-qlinearconv-u8s8-saturation.onnx');
  const raw = Buffer.alloc(8);
  raw.writeFloatLE(255, 0);
  raw.writeFloatLE(255, 4);
  const req = (id, optimize) => ({
    id, graph: {}, inputs: {x: {shape: [1, 2, 1, 1], b64: raw.toString('base64')}},
    options: {optimize, pipeline: [], disable: [], only: [], inject: [], bisect_limit: -1,
      threads: 1},
    onnx: {model: fs.readFileSync(model).toString('base64'), opset: 17, inputs: ['x']},
  });
  const value = (r) => {
    assert.ok(r.outputs, JSON.stringify(r).slice(0, 300));
    return Buffer.from(Object.values(r.outputs)[0].b64, 'base64').readFloatLE(0);
  };
  const t = await start(['--level', 'all', '--config', 'session.x64quantprecision=1']);
  try {
    assert.strictEqual(value(await t.ask(req(1, true))), 253);
    assert.strictEqual(value(await t.ask(req(2, false))), 253);
  } finally {
    await t.close();
  }
  for (const bad of ['session.x64quantprecision', 'a.__proto__.b=1', 'x=1', 'a.b=$(id)']) {
    const r = require('child_process').spawnSync(process.execPath,
        [path.join(__dirname, 'fusefuzz-ort.js'), '--config', bad], {encoding: 'utf8'});
    assert.strictEqual(r.status, 2, bad);
    assert.ok(r.stderr.includes('session config entry KEY=VALUE'), r.stderr);
  }
});

test('--ort-module takes the absolute path of an onnxruntime-node folder only', async () => {
  const here = path.join(__dirname, 'node_modules', 'onnxruntime-node');
  // The pinned release through the probes (release-probe.js): it can do everything.
  const t = await start(['--ort-module', here]);
  try {
    assert.strictEqual(t.hello.limits, undefined, JSON.stringify(t.hello.limits));
    assert.deepStrictEqual(t.hello.capabilities,
        ['onnx', 'onnx_only', 'rewrites', 'disable', 'bench', 'batch', 'repro']);
  } finally {
    await t.close();
  }
  for (const bad of ['node_modules/onnxruntime-node', path.join(here, 'missing'), '']) {
    const r = require('child_process').spawnSync(process.execPath,
        [path.join(__dirname, 'fusefuzz-ort.js'), '--ort-module', bad], {encoding: 'utf8'});
    assert.strictEqual(r.status, 2, bad);
    assert.ok(r.stderr.includes('an onnxruntime-node folder holding its package.json'), r.stderr);
  }
});

test('cases it cannot run are unsupported, bad models are errors', async () => {
  const t = await start(['--level', 'basic']);
  const req = request('op-conv', 1, {});
  assert.ok((await t.ask(Object.assign({}, req, {id: 1, onnx: undefined}))).unsupported);
  const limited = Object.assign({}, req, {id: 2});
  limited.options = Object.assign({}, req.options, {bisect_limit: 3});
  assert.ok((await t.ask(limited)).unsupported);
  const bad = Object.assign({}, req, {id: 3, onnx: {model: 'AAAA', inputs: []}});
  const r = await t.ask(bad);
  assert.strictEqual(r.id, 3);
  assert.ok(typeof r.error === 'string' && r.error.length > 0);
  await t.close();
});

test('timing requests (capability bench): own timings, same outputs as an ordinary run', async () => {
  const t = await start(['--level', 'all']);
  assert.ok(t.hello.capabilities.includes('bench'));
  for (const optimize of [false, true]) {
    const plain = await t.ask(request('glow-conv-relu-bn', optimize ? 1 : 3, {optimize}));
    const timed = await t.ask(Object.assign(request('glow-conv-relu-bn', optimize ? 2 : 4,
        {optimize}), {bench: {warmup: 1, runs: 5}}));
    assert.ok(timed.timings, JSON.stringify(timed).slice(0, 300));
    assert.strictEqual(timed.timings.runs, 5);
    assert.ok(timed.timings.min_ns > 0 && timed.timings.min_ns <= timed.timings.median_ns);
    assert.deepStrictEqual(timed.outputs, plain.outputs);
    assert.deepStrictEqual(timed.rewrites, plain.rewrites);
    assert.strictEqual(plain.timings, undefined);
  }
  const bad = await t.ask(Object.assign(request('op-conv', 5, {}), {bench: {warmup: 1}}));
  assert.match(bad.error, /"bench" needs integers/);
  await t.close();
});

test('fusefuzz bench --target: ORT at levels disabled and all in one table, verdicts PASS', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'fusefuzz-ort-bench-'));
  const ort = (level) => `exec:${process.execPath} ${path.join(__dirname, 'fusefuzz-ort.js')} ` +
      `--level ${level} --name ort-${level}`;
  execFileSync(fusefuzz, ['bench', '--target', ort('disabled'), '--target', ort('all'),
    '--filter', 'conv_bn_relu/resnet18_conv5_x/N1_', '--tiny', '--repetitions', '2', '--runs', '2',
    '--warmup', '1', '--out', out], {stdio: ['ignore', 'pipe', 'pipe']});
  const doc = JSON.parse(fs.readFileSync(path.join(out, 'benchmarks.json'), 'utf8'));
  assert.deepStrictEqual(doc.context.fusefuzz_engines.map((e) => e.label),
      ['ort-disabled', 'ort-all']);
  assert.deepStrictEqual(Object.values(doc.context.fusefuzz_verdicts), ['PASS', 'PASS']);
  const iters = doc.benchmarks.filter((b) => b.run_type === 'iteration');
  assert.strictEqual(iters.length, 2 * 2 * 2);
  assert.ok(iters.every((b) => b.real_time > 0 && b.iterations === 2));
  // One line per case and engine (docs/benchmarks.md): ORT at level all has its own row.
  const md = fs.readFileSync(path.join(out, 'benchmarks.md'), 'utf8');
  assert.match(md, /\| engine \|.*\| speedup \|/);
  assert.match(md, /\| ort-all \|/);
});

// Capability repro (repro-script.js): reproduce.js written for a real finding's request and run
// with node and onnxruntime-node alone, beside the model the request carried.
function runReproducer(answer, req) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fusefuzz-ort-repro-'));
  for (const f of answer.repro.files) fs.writeFileSync(path.join(dir, f.path), f.text);
  fs.writeFileSync(path.join(dir, 'model.onnx'), Buffer.from(req.onnx.model, 'base64'));
  try {
    const out = execFileSync(process.execPath, [path.join(dir, 'reproduce.js')], {cwd: '/',
      env: Object.assign({}, process.env, {NODE_PATH: path.join(__dirname, 'node_modules')})});
    return {status: 0, out: String(out)};
  } catch (e) {
    return {status: e.status, out: String(e.stdout) + String(e.stderr)};
  }
}

// A repro request of `seed` whose reference is what the disabled run answers (exact for these
// small cases) and whose worst element is `index`.
async function reproRequest(t, seed, id, output, index, bound) {
  const plain = await t.ask(request(seed, id, {optimize: false}));
  assert.ok(plain.outputs && plain.outputs[output], JSON.stringify(plain).slice(0, 300));
  const req = request(seed, id + 1, {});
  req.repro = {title: 'fusion Pad_Fusion', output, index, reference: 0, bound, oracle: 'bound',
    expected: plain.outputs};
  return req;
}

test('repro: reproduce.js exits 1 on the real Pad_Fusion bug and 0 on a case without one', async () => {
  const t = await start(['--level', 'all']);
  try {
    assert.ok(t.hello.capabilities.includes('repro'));
    const bug = path.join(src, 'corpus', 'onnxruntime', 'padfusion-zero-pad-into-maxpool.repro.json');
    const req = await reproRequest(t, bug, 1, 'v1', 7, 1.1754943508222875e-38);
    const answer = await t.ask(req);
    assert.ok(answer.repro, JSON.stringify(answer).slice(0, 300));
    assert.deepStrictEqual(answer.repro.files.map((f) => f.path), ['reproduce.js']);
    assert.strictEqual(answer.repro.build,
        `NODE_PATH=${path.join(__dirname, 'node_modules')} node reproduce.js`);
    const text = answer.repro.files[0].text;
    assert.ok(text.includes("graphOptimizationLevel 'all'") && text.includes('(bound oracle)'));
    assert.ok(text.includes('const worst = 7, bound = 1.17549435e-38;'), text);
    const failing = runReproducer(answer, req);
    assert.strictEqual(failing.status, 1, failing.out);
    assert.ok(failing.out.includes('the bug is there') && failing.out.includes('<- off'));
    // Conv + Relu + BatchNorm fused at level all: the same numbers within 1e-4.
    const ok = await reproRequest(t, 'glow-conv-relu-bn', 3, 'y', 0, 1e-4);
    const okAnswer = await t.ask(ok);
    const passing = runReproducer(okAnswer, ok);
    assert.strictEqual(passing.status, 0, passing.out);
    assert.ok(passing.out.includes('no difference beyond the bound'), passing.out);
    // Not a wrong number (the engine failed): no script, said why.
    delete ok.repro.output;
    const none = await t.ask(Object.assign(ok, {id: 5}));
    assert.ok(none.unsupported && none.unsupported.includes('not a wrong number'), JSON.stringify(none));
  } finally {
    await t.close();
  }
});

test('repro: numbers are printf %.9g, as fusefuzz wrote them', () => {
  const {jsNumber} = require('./repro-script');
  const cases = [[0, '0'], [0.4375, '0.4375'], [1.1754943508222875e-38, '1.17549435e-38'],
    [-1, '-1'], [123456789, '123456789'], [1234567890, '1.23456789e+09'], [0.0001, '0.0001'],
    [0.00001, '1e-05'], [1 / 3, '0.333333333'], [NaN, 'NaN'], [-Infinity, '-Infinity'],
    [2.5e-7, '2.5e-07'], [99999.99999, '100000'], [1e100, '1e+100']];
  for (const [v, want] of cases) assert.strictEqual(jsNumber(v), want, String(v));
});
