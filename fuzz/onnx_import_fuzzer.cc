// libFuzzer target: bytes -> ImportOnnx (tight Limits), the path every `.onnx` a user or a target
// hands fusefuzz takes: protobuf parsing, initializers, attributes, shapes and fusefuzz's own
// decomposition records in metadata_props (onnx/node_record.h). InputError is the expected answer
// to bad input; anything else (another exception, a crash, a leak, an allocation beyond the
// limits) is a bug. An imported graph must also be a fixpoint: export -> import gives the same
// graph JSON, and its records, written by the export, must be taken back (never "not used").
// `import --cut` and the TensorProto reader have targets of their own (onnx_cut_fuzzer.cc,
// tensor_proto_fuzzer.cc): one reader per target keeps each execution short and its coverage
// feedback about one parser.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_check.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/proto_io.h"

namespace fusefuzz::fuzz {
namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  FailInvariant("onnx_import_fuzzer", what, detail);
}

void OneInput(const std::string& bytes) {
  const Limits limits = FuzzLimits();
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
