// The half of the adapter that loads ONNX Runtime (started by fusefuzz-ort.js with a pipe on
// its stderr): ORT's native logger writes to this process's stderr, which is how the adapter
// learns which graph transformers changed the model. One message in, one message out, over the
// IPC channel; after each run a marker line on stderr tells the parent that the log of this run
// is complete (pipes are synchronous in Node on Linux, and ORT writes through unbuffered cerr).
// Its one argument, when given, is the onnxruntime-node folder of another release (the adapter's
// --ort-module); then a first "probe" message asks what that release cannot do
// (release-probe.js).
'use strict';
let ort;
try {
  ort = require(process.argv[2] || 'onnxruntime-node');
} catch (e) {
  // A release without a binary for this platform (onnxruntime-node 1.8 and 1.9 ship none for
  // Linux): said once, plainly, instead of a stack.
  process.stderr.write(`cannot load onnxruntime-node from ${process.argv[2] || 'node_modules'}: ` +
      `${String(e && e.message ? e.message : e).split('\n')[0]}\n`);
  process.exit(1);
}
const {attributeRules} = require('./rule-attribution');
const {probeRelease} = require('./release-probe');

function fromB64(t) {
  const buf = Buffer.from(t.b64, 'base64');
  const data = new Float32Array(buf.length / 4);
  for (let i = 0; i < data.length; i++) data[i] = buf.readFloatLE(4 * i);
  return new ort.Tensor('float32', data, t.shape);
}

function toB64(t) {
  const buf = Buffer.alloc(4 * t.data.length);
  for (let i = 0; i < t.data.length; i++) buf.writeFloatLE(t.data[i], 4 * i);
  return {shape: Array.from(t.dims), b64: buf.toString('base64')};
}

async function run(msg) {
  const options = {
    graphOptimizationLevel: msg.level,
    intraOpNumThreads: msg.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    // Info level: "GraphTransformer <name> modified: 1" lines, nothing per element.
    logSeverityLevel: msg.wantLog ? 1 : 3,
  };
  // Session config entries, nested as the binding flattens them ("a.b" is {a: {b: ...}}).
  const extra = {};
  const entries = Object.entries(msg.config || {});
  if (msg.disable.length) {
    entries.push(['optimization.disable_specified_optimizers', msg.disable.join(';')]);
  }
  for (const [key, value] of entries) {
    const parts = key.split('.');
    let node = extra;
    for (const p of parts.slice(0, -1)) node = node[p] = node[p] || {};
    node[parts[parts.length - 1]] = value;
  }
  if (entries.length) options.extra = extra;
  const session = await ort.InferenceSession.create(Buffer.from(msg.model, 'base64'), options);
  try {
    const feeds = {};
    for (const name of session.inputNames) feeds[name] = fromB64(msg.inputs[name]);
    let results;
    let timings;
    if (msg.bench) {
      // Timing request (capability bench): the session is ready, the feeds are ORT tensors;
      // each timed run is session.run alone, on the monotonic clock. Info-level logging (for
      // the rewrites) is for session creation only: runs log at warning level.
      const quiet = {logSeverityLevel: 2};
      for (let i = 0; i < msg.bench.warmup; i++) results = await session.run(feeds, quiet);
      const ns = [];
      for (let i = 0; i < msg.bench.runs; i++) {
        const t0 = process.hrtime.bigint();
        results = await session.run(feeds, quiet);
        ns.push(Number(process.hrtime.bigint() - t0));
      }
      ns.sort((a, b) => a - b);
      const mid = ns.length >> 1;
      timings = {
        runs: ns.length,
        median_ns: ns.length % 2 ? ns[mid] : (ns[mid - 1] + ns[mid]) / 2,
        min_ns: ns[0],
      };
    } else {
      results = await session.run(feeds);
    }
    const outputs = {};
    for (const name of session.outputNames) outputs[name] = toB64(results[name]);
    return timings ? {outputs, timings} : {outputs};
  } finally {
    // Releases up to 1.15 have no release(): their sessions are freed by the garbage collector.
    if (typeof session.release === 'function') await session.release();
  }
}

process.on('message', async (msg) => {
  let reply;
  try {
    // A second message for the same case: which rules inside the rule-based containers fired
    // (rule-attribution.js); a failure there leaves the containers' names alone.
    if (msg.probe) {
      reply = {probe: await probeRelease(ort, msg.probe)};
    } else {
      reply = msg.attribute ?
        {rules: await attributeRules(ort, msg.attribute, msg.transformers)} : await run(msg);
    }
  } catch (e) {
    reply = {error: String(e && e.message ? e.message : e)};
  }
  process.stderr.write(`@@fusefuzz-ort-end ${msg.id}\n`);
  process.send(Object.assign({id: msg.id}, reply));
});
