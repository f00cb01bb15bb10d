#!/usr/bin/env node
// Runs ONNX models in ONNX's backend-test layout with ONNX Runtime:
//   node run-model.js [--level disabled|basic|extended|all] DIR...
// DIR holds model.onnx and test_data_set_<k>/input_<i>.pb. For every data set the outputs are
// written to test_data_set_<k>/ort_<level>/output_<i>.pb (in the model's output order), for
// `fusefuzz compare GRAPH --inputs-pb DIR/test_data_set_0 --outputs DIR/test_data_set_0/ort_<level>`
// to judge with fusefuzz's oracle. Prints one line per data set with the largest absolute
// difference to the expected output_<i>.pb (information only: fusefuzz's oracle decides).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const pb = require('./tensor-files');

const LEVELS = ['disabled', 'basic', 'extended', 'all'];

function usage(msg) {
  process.stderr.write('run-model.js: ' + msg + '\nusage: node run-model.js [--level ' +
                       LEVELS.join('|') + '] DIR...\n');
  process.exit(2);
}

async function runDir(dir, level) {
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    graphOptimizationLevel: level, intraOpNumThreads: 1, interOpNumThreads: 1,
    executionMode: 'sequential', logSeverityLevel: 3,
  });
  const sets = fs.readdirSync(dir).filter((d) => /^test_data_set_\d+$/.test(d)).sort();
  for (const set of sets) {
    const setDir = path.join(dir, set);
    const feeds = {};
    session.inputNames.forEach((name, i) => {
      const t = pb.decodeTensor(fs.readFileSync(path.join(setDir, `input_${i}.pb`)));
      feeds[name] = new ort.Tensor('float32', t.data, t.dims);
    });
    const results = await session.run(feeds);
    const outDir = path.join(setDir, 'ort_' + level);
    fs.mkdirSync(outDir, {recursive: true});
    let maxDiff = 0;
    session.outputNames.forEach((name, i) => {
      const r = results[name];
      fs.writeFileSync(path.join(outDir, `output_${i}.pb`), pb.encodeTensor(name, r.dims, r.data));
      const expectedFile = path.join(setDir, `output_${i}.pb`);
      if (fs.existsSync(expectedFile)) {
        const e = pb.decodeTensor(fs.readFileSync(expectedFile)).data;
        for (let j = 0; j < e.length; j++) {
          const d = Math.abs(e[j] - r.data[j]);
          if (d > maxDiff || Number.isNaN(d) && !(Number.isNaN(e[j]) && Number.isNaN(r.data[j]))) {
            maxDiff = Number.isNaN(d) ? maxDiff : d;
          }
        }
      }
    });
    process.stdout.write(`${setDir}: ${session.outputNames.length} output(s), max |ort - expected| ${maxDiff}\n`);
  }
  await session.release();
}

async function main() {
  const args = process.argv.slice(2);
  let level = 'disabled';
  const dirs = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--level') {
      level = args[++i];
      if (!LEVELS.includes(level)) usage('unknown level ' + level);
    } else if (args[i].startsWith('--')) {
      usage('unknown option ' + args[i]);
    } else {
      dirs.push(args[i]);
    }
  }
  if (dirs.length === 0) usage('no model folder given');
  let failed = 0;
  for (const dir of dirs) {
    try {
      await runDir(dir, level);
    } catch (e) {
      failed++;
      process.stderr.write(`${dir}: ${e.message}\n`);
    }
  }
  process.exit(failed ? 1 : 0);
}

main();
