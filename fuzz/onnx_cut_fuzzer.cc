// libFuzzer target: bytes -> `import --cut` without ONNX Runtime (ImportOnnxCut, tight Limits):
// the part fusefuzz keeps of a model with ops it does not model, and the prefix model up to the
// cut that an engine would run. InputError is the expected answer to bad input; anything else
// (another exception, a crash, a leak, an allocation beyond the limits) is a bug, and so is a
// kept part that the graph reader refuses or a prefix model that fails the model guard (which
// refuses external data anywhere, docs/security.md).
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "onnx/import.h"
#include "onnx/model_guard.h"
#include "onnx/proto_io.h"

namespace fusefuzz::fuzz {
namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  FailInvariant("onnx_cut_fuzzer", what, detail);
}

// import --cut: a kept part must be a graph fusefuzz reads back, and the model's prefix up to
// its cut inputs (what ONNX Runtime would run) must pass the same guard as the model.
void CutInput(const std::string& bytes, const Limits& limits) {
  CutImport cut;
  try {
    cut = ImportOnnxCut(bytes, "fuzz", limits);
  } catch (const InputError&) {
    return;
  }
  const std::string text = WriteGraph(cut.graph);
  try {
    ParseGraph(text, "cut", limits);
  } catch (const InputError& e) {
    Fail("a cut graph is not read back", e.what() + std::string("\n") + text);
  }
  std::vector<ValueInfo> at_cut;
  for (const ValueInfo& v : cut.graph.inputs) {
    for (const std::string& c : cut.cut_inputs) {
      if (c == v.name) at_cut.push_back(v);
    }
  }
  if (at_cut.empty()) return;
  std::string prefix;
  try {
    prefix = OnnxModelWithOutputs(bytes, "fuzz", at_cut);
  } catch (const InputError& e) {
    Fail("the prefix model of a cut cannot be made", e.what());
  }
  onnx::ModelProto m;
  if (!m.ParseFromString(prefix)) Fail("the prefix model does not parse", "");
  try {
    CheckModelProto(m, "prefix");
  } catch (const InputError& e) {
    Fail("the prefix model an engine would get fails the model guard", e.what());
  }
}

}  // namespace
}  // namespace fusefuzz::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fusefuzz::fuzz::CutInput(std::string(reinterpret_cast<const char*>(data), size),
                           fusefuzz::fuzz::FuzzLimits());
  return 0;
}
