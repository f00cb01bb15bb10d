// reproduce.js: the case's inputs and the reference's failing output written into the script,
// so that it needs only model.onnx beside it and onnxruntime-node; it runs the model at the
// finding's level and with optimizations disabled, prints the failing output next to the
// reference and exits 1 while the bug is there (the level's result at the worst element is
// outside the oracle's bound, the disabled run's is not).
#include "report/ort_script.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "kernels/reference/reference.h"

namespace fusefuzz {
namespace {

std::string JsNumber(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string JsArray(const std::vector<float>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + JsNumber(d[i]);
  return s + "]";
}

std::string JsDims(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// A JS string literal of an identifier-like name (graph names are checked by the verifier;
// anything else is escaped as \uXXXX).
std::string JsString(const std::string& s) {
  std::string out = "'";
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
        c == '.' || c == '-' || c == ':' || c == '/') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    }
  }
  return out + "'";
}

}  // namespace

std::string OrtReproScript(const Repro& r, int64_t max_elements) {
  const std::optional<TargetSpec> spec = TargetSpec::Of(r.target);
  // A bare "onnxruntime" (its default level) has never had a script: kept so.
  if (!spec || !spec->builtin("onnxruntime") || spec->text() == spec->engine() ||
      r.worst.output.empty() || r.worst.index < 0) {
    return "";
  }
  const std::string& level = spec->mode();
  if (level != "all" && level != "extended" && level != "basic") return "";
  int64_t total = 0;
  for (const auto& [name, t] : r.inputs) total += t.size();
  if (total > max_elements) return "";  // before running the reference on a whole model
  Tensor reference;
  try {
    RefTensorMap ref = RunReference(r.graph, r.inputs);
    auto it = ref.find(r.worst.output);
    if (it == ref.end()) return "";
    reference = ToFloatTensor(it->second);
  } catch (const std::exception&) {
    return "";
  }
  total += reference.size();
  if (total > max_elements || r.worst.index >= reference.size()) return "";

  std::ostringstream js;
  js << "// ONNX Runtime, no fusefuzz needed (written by fusefuzz for this finding):\n"
     << "//   NODE_PATH=<fusefuzz>/targets/onnxruntime/node_modules node reproduce.js\n"
     << "// Runs model.onnx (beside this script) at graphOptimizationLevel '" << level
     << "' and 'disabled' on the\n// case's inputs and compares output " << r.worst.output
     << " with the double-precision reference.\n// Exit 1 while the bug is there: at element "
     << r.worst.index << " the '" << level << "' run is off by more than the oracle's\n"
     << "// bound " << JsNumber(r.worst.bound) << " (" << OracleKindName(r.oracle.kind)
     << " oracle) and the disabled run is not.\n"
     << "'use strict';\nconst ort = require('onnxruntime-node');\nconst path = require('path');\n\n"
     << "const inputs = {\n";
  for (const auto& [name, t] : r.inputs) {
    js << "  " << JsString(name) << ": [" << JsDims(t.shape) << ", " << JsArray(t.data) << "],\n";
  }
  js << "};\nconst output = " << JsString(r.worst.output) << ";\n"
     << "const reference = " << JsArray(reference.data) << ";\n"
     << "const dims = " << JsDims(reference.shape) << ";\n"
     << "const worst = " << r.worst.index << ", bound = " << JsNumber(r.worst.bound) << ";\n\n"
     << "async function run(level) {\n"
     << "  const s = await ort.InferenceSession.create(path.join(__dirname, 'model.onnx'),\n"
     << "      {graphOptimizationLevel: level, intraOpNumThreads: 1, logSeverityLevel: 3});\n"
     << "  const feeds = {};\n"
     << "  for (const [name, [shape, data]] of Object.entries(inputs)) {\n"
     << "    feeds[name] = new ort.Tensor('float32', Float32Array.from(data), shape);\n"
     << "  }\n"
     << "  return Array.from((await s.run(feeds))[output].data);\n"
     << "}\n\n"
     << "(async () => {\n"
     << "  const got = await run('" << level << "');\n"
     << "  const plain = await run('disabled');\n"
     << "  console.log(`output ${output} ${JSON.stringify(dims)}: element, reference, '" << level
     << "', disabled`);\n"
     << "  for (let i = 0; i < reference.length; ++i) {\n"
     << "    const mark = Math.abs(got[i] - reference[i]) > bound ? '  <- off' : '';\n"
     << "    if (reference.length <= 64 || mark || i === worst) {\n"
     << "      console.log(`  [${i}] ${reference[i]} ${got[i]} ${plain[i]}${mark}`);\n"
     << "    }\n"
     << "  }\n"
     << "  const off = Math.abs(got[worst] - reference[worst]);\n"
     << "  const plainOff = Math.abs(plain[worst] - reference[worst]);\n"
     << "  console.log(`element ${worst}: |" << level
     << " - reference| = ${off}, |disabled - reference| = ${plainOff}, bound ${bound}`);\n"
     << "  if (off > bound && !(plainOff > bound)) {\n"
     << "    console.log('the optimized model is wrong and the unoptimized one is not: the bug "
        "is there');\n"
     << "    process.exitCode = 1;\n"
     << "  } else {\n"
     << "    console.log('no difference beyond the bound: the bug is fixed (or not this "
        "one)');\n"
     << "  }\n"
     << "})().catch((e) => { console.error(e.message); process.exitCode = 2; });\n";
  return js.str();
}

}  // namespace fusefuzz
