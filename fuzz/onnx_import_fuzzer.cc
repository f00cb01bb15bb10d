// libFuzzer target: bytes -> ImportOnnx (tight Limits), the path every `.onnx` a user or a target
// hands fusefuzz takes: protobuf parsing, initializers, attributes, shapes and fusefuzz's own
// decomposition records in metadata_props (onnx/node_record.h). InputError is the expected answer
// to bad input; anything else (another exception, a crash, a leak, an allocation beyond the
// limits) is a bug. An imported graph must also be a fixpoint: export -> import gives the same
// graph JSON, and its records, written by the export, must be taken back (never "not used").
// The same bytes also go through `import --cut` (without ONNX Runtime: the cut graph and the
// prefix model an engine would get, which must hold no external data) and through the
// TensorProto reader (`compare --inputs-pb`, `--outputs DIR`), whose result must round-trip.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_check.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/model_guard.h"
#include "onnx/proto_io.h"
#include "onnx/tensor_proto.h"

namespace fusefuzz::fuzz {
namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  FailInvariant("onnx_import_fuzzer", what, detail);
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

// A TensorProto file: decoded within the limits, or refused; decoded, it encodes and decodes
// to the same name, shape and bits.
void TensorProtoInput(const std::string& bytes, const Limits& limits) {
  NamedTensor t;
  try {
    CheckMessageStart(bytes, onnx::TensorProto::descriptor(), "fuzz", "a TensorProto");
  } catch (const InputError&) {
    // Refused by the file reader before parsing: the decoder must not crash on it either.
  }
  try {
    t = DecodeTensorProto(bytes, "fuzz", limits);
  } catch (const InputError&) {
    return;
  }
  if (t.tensor.size() > limits.max_elements_per_tensor) {
    Fail("a decoded TensorProto exceeds the element limit", std::to_string(t.tensor.size()));
  }
  NamedTensor back;
  try {
    back = DecodeTensorProto(EncodeTensorProto(t.name, t.tensor), "re-encoded", limits);
  } catch (const InputError& e) {
    Fail("a decoded TensorProto, encoded, does not decode", e.what());
  }
  if (back.name != t.name || !back.tensor.BitwiseEquals(t.tensor)) {
    Fail("TensorProto decode -> encode -> decode is not identical", t.name);
  }
}

void OneInput(const std::string& bytes) {
  const Limits limits = FuzzLimits();
  TensorProtoInput(bytes, limits);
  CutInput(bytes, limits);
  try {
    CheckMessageStart(bytes, onnx::ModelProto::descriptor(), "fuzz", "an ONNX model");
  } catch (const InputError&) {
    // What ReadModelFile refuses on its first bytes; ImportOnnx itself must still cope.
  }
  Graph g;
  try {
    g = ImportOnnx(bytes, "fuzz", limits);
  } catch (const InputError&) {
    return;  // bad input, reported with a location: the expected outcome
  }
  const std::string first = WriteGraph(g);
  try {
    ParseGraph(first, "imported", limits);  // import refuses what the graph format refuses
  } catch (const InputError& e) {
    Fail("an imported graph is not read back by the graph reader", e.what());
  }
  std::string exported;
  try {
    exported = ExportOnnx(g).bytes;
  } catch (const InputError& e) {
    Fail("an imported graph does not export", e.what() + std::string("\n") + first);
  }
  OnnxImportInfo info;
  std::string second;
  try {
    second = WriteGraph(ImportOnnx(exported, "re-exported", limits, &info));
  } catch (const InputError& e) {
    Fail("an imported graph, exported, does not import", e.what() + std::string("\n") + first);
  }
  if (!info.not_refused.empty()) Fail("the export's own records were not used", info.not_refused);
  if (first != second)
    Fail("import -> export -> import is not identical", first + "\n--\n" + second);
}

}  // namespace
}  // namespace fusefuzz::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fusefuzz::fuzz::OneInput(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
