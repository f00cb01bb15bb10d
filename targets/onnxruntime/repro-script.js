// The ORT pack's reproducer writer (capability repro, docs/target-protocol.md "Reproducers"):
// reproduce.js, the case's inputs and the reference's failing output written into the script,
// so that it needs only model.onnx beside it (fusefuzz writes that file into every finding
// folder) and onnxruntime-node; it runs the model at the adapter's level and with optimizations
// disabled, prints the failing output next to the reference and exits 1 while the bug is there
// (the level's result at the worst element is outside the oracle's bound, the disabled run's
// is not). The text is the one fusefuzz's report/ort_script.cc wrote before the pack wrote it.
'use strict';

// Inputs plus the failing output: more values than this make no script (a whole model's
// tensors written as JavaScript arrays would not be read by anyone).
const MAX_ELEMENTS = 4096;

// C's printf("%.9g"): the number format fusefuzz's scripts have always used, so the script's
// numbers read the same as report.md's. The 9 digits come from toExponential (correctly
// rounded, as glibc's printf is); %g's choice between fixed and exponential follows.
function jsNumber(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mantissa, expText] = v.toExponential(8).split('e');
  const exp = Number(expText);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');  // 9 significant digits
  const strip = (s) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  let text;
  if (exp < -4 || exp >= 9) {
    const m = strip(digits[0] + '.' + digits.slice(1));
    const e = Math.abs(exp) < 10 ? '0' + Math.abs(exp) : String(Math.abs(exp));
    text = m + 'e' + (exp < 0 ? '-' : '+') + e;
  } else if (exp < 0) {
    text = strip('0.' + '0'.repeat(-exp - 1) + digits);
  } else {
    text = strip(digits.slice(0, exp + 1) + '.' + digits.slice(exp + 1));
  }
  return (negative ? '-' : '') + text;
}

function jsArray(values) {
  return '[' + Array.from(values, jsNumber).join(',') + ']';
}

function jsDims(shape) {
  return '[' + shape.join(', ') + ']';
}

// A JS string literal of an identifier-like name (graph names are checked by fusefuzz's
// verifier; any other byte is escaped as \u00XX, byte by byte as before).
function jsString(s) {
  let out = "'";
  for (const c of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(c);
    if (/[A-Za-z0-9_.\-:/]/.test(ch)) {
      out += ch;
    } else {
      out += '\\u' + c.toString(16).padStart(4, '0');
    }
  }
  return out + "'";
}

// {shape, b64} or {shape, data} (the protocol's tensor forms) -> {shape, data: Float32Array}.
function decodeTensor(t, where) {
  if (!t || !Array.isArray(t.shape)) throw new Error(`${where}: not a tensor`);
  if (typeof t.b64 === 'string') {
    const buf = Buffer.from(t.b64, 'base64');
    const data = new Float32Array(buf.length / 4);
    for (let i = 0; i < data.length; i++) data[i] = buf.readFloatLE(4 * i);
    return {shape: t.shape, data};
  }
  if (Array.isArray(t.data)) {
    const special = {nan: NaN, inf: Infinity, '-inf': -Infinity};
    return {shape: t.shape, data: Float32Array.from(t.data, (v) =>
      typeof v === 'string' ? special[v] : v)};
  }
  throw new Error(`${where}: neither b64 nor data`);
}

// A path as one shell word.
function shellWord(s) {
  return /^[A-Za-z0-9_.\/@+-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
}

// The request's repro object and inputs -> {files, build}, or {unsupported: why}. `level` is
// the adapter's --level; `modules` the node_modules folder that holds its onnxruntime-node
// (the build line's NODE_PATH, so that it runs from the finding folder as written).
function reproAnswer(req, level, modules) {
  const r = req.repro;
  if (level === 'disabled') return {unsupported: 'level disabled optimizes nothing to compare'};
  if (typeof r.output !== 'string' || !Number.isInteger(r.index) || r.index < 0) {
    return {unsupported: 'the finding is not a wrong number (no failing output to compare)'};
  }
  const inputs = [];
  let total = 0;
  for (const [name, t] of Object.entries(req.inputs || {})) {
    const tensor = decodeTensor(t, `/inputs/${name}`);
    inputs.push([name, tensor]);
    total += tensor.data.length;
  }
  if (total > MAX_ELEMENTS) return {unsupported: `the inputs have more than ${MAX_ELEMENTS} values`};
  const expected = (r.expected || {})[r.output];
  if (!expected) return {unsupported: `no reference for output ${r.output}`};
  const reference = decodeTensor(expected, `/repro/expected/${r.output}`);
  total += reference.data.length;
  if (total > MAX_ELEMENTS || r.index >= reference.data.length) {
    return {unsupported: `inputs and output ${r.output} have more than ${MAX_ELEMENTS} values`};
  }
  const bound = jsNumber(r.bound);
  const oracle = typeof r.oracle === 'string' ? r.oracle : 'the';
  const lines = [
    '// ONNX Runtime, no fusefuzz needed (written by fusefuzz for this finding):',
    '//   NODE_PATH=<fusefuzz>/targets/onnxruntime/node_modules node reproduce.js',
    `// Runs model.onnx (beside this script) at graphOptimizationLevel '${level}' and ` +
        "'disabled' on the",
    `// case's inputs and compares output ${r.output} with the double-precision reference.`,
    `// Exit 1 while the bug is there: at element ${r.index} the '${level}' run is off by more ` +
        "than the oracle's",
    `// bound ${bound} (${oracle} oracle) and the disabled run is not.`,
    "'use strict';",
    "const ort = require('onnxruntime-node');",
    "const path = require('path');",
    '',
    'const inputs = {',
    ...inputs.map(([name, t]) => `  ${jsString(name)}: [${jsDims(t.shape)}, ${jsArray(t.data)}],`),
    '};',
    `const output = ${jsString(r.output)};`,
    `const reference = ${jsArray(reference.data)};`,
    `const dims = ${jsDims(reference.shape)};`,
    `const worst = ${r.index}, bound = ${bound};`,
    '',
    'async function run(level) {',
    "  const s = await ort.InferenceSession.create(path.join(__dirname, 'model.onnx'),",
    '      {graphOptimizationLevel: level, intraOpNumThreads: 1, logSeverityLevel: 3});',
    '  const feeds = {};',
    '  for (const [name, [shape, data]] of Object.entries(inputs)) {',
    "    feeds[name] = new ort.Tensor('float32', Float32Array.from(data), shape);",
    '  }',
    '  return Array.from((await s.run(feeds))[output].data);',
    '}',
    '',
    '(async () => {',
    `  const got = await run('${level}');`,
    "  const plain = await run('disabled');",
    `  console.log(\`output \${output} \${JSON.stringify(dims)}: element, reference, '${level}', ` +
        'disabled`);',
    '  for (let i = 0; i < reference.length; ++i) {',
    "    const mark = Math.abs(got[i] - reference[i]) > bound ? '  <- off' : '';",
    '    if (reference.length <= 64 || mark || i === worst) {',
    '      console.log(`  [${i}] ${reference[i]} ${got[i]} ${plain[i]}${mark}`);',
    '    }',
    '  }',
    '  const off = Math.abs(got[worst] - reference[worst]);',
    '  const plainOff = Math.abs(plain[worst] - reference[worst]);',
    `  console.log(\`element \${worst}: |${level} - reference| = \${off}, |disabled - ` +
        'reference| = ${plainOff}, bound ${bound}`);',
    '  if (off > bound && !(plainOff > bound)) {',
    "    console.log('the optimized model is wrong and the unoptimized one is not: the bug is " +
        "there');",
    '    process.exitCode = 1;',
    '  } else {',
    "    console.log('no difference beyond the bound: the bug is fixed (or not this one)');",
    '  }',
    "})().catch((e) => { console.error(e.message); process.exitCode = 2; });",
    '',
  ];
  return {
    files: [{path: 'reproduce.js', text: lines.join('\n')}],
    build: `NODE_PATH=${shellWord(modules)} node reproduce.js`,
  };
}

module.exports = {reproAnswer, jsNumber};
