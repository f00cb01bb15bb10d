// libFuzzer target: bytes -> ParseJson -> ReadRepro (for "format": "fusefuzz-repro"), ReadTensors
// (an object without "format": a tensors file) or ReadGraph (which verifies), with tight Limits.
// The mode follows from the document, so every seed (graph, reproducer, tensors file) keeps its
// meaning under mutation. InputError is the expected answer to bad input; anything else — another
// exception, a crash, a leak, an allocation beyond the limits (run with -malloc_limit_mb) — is a
// bug. An accepted graph or tensors file must also survive write -> read -> write bit-identically,
// and an accepted reproducer must read back after writing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz/fuzz_check.h"
#include "harness/repro.h"
#include "ir/error.h"
#include "ir/json_io.h"

namespace fusefuzz::fuzz {
namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  FailInvariant("graph_json_fuzzer", what, detail);
}

void CheckGraphRoundTrip(const Graph& g) {
  std::string first = WriteGraph(g);
  std::string second;
  try {
    second = WriteGraph(ParseGraph(first, "rewritten"));
  } catch (const InputError& e) {
    Fail("a graph that was read cannot be read back after writing", e.what());
  }
  if (first != second) Fail("write -> read -> write is not identical", first + "\n--\n" + second);
}

void CheckTensorsRoundTrip(const TensorMap& t, const Limits& limits) {
  std::string first = WriteTensors(t);
  std::string second;
  try {
    second = WriteTensors(ReadTensors(ParseJson(first, "rewritten", limits), "rewritten", limits));
  } catch (const InputError& e) {
    Fail("a tensors file that was read cannot be read back after writing", e.what());
  }
  if (first != second) Fail("tensors: write -> read -> write is not identical", first);
}

void OneInput(const std::string& text) {
  const Limits limits = FuzzLimits();
  try {
    nlohmann::json j = ParseJson(text, "fuzz", limits);
    auto format = j.is_object() ? j.find("format") : j.end();
    if (j.is_object() && format == j.end()) {
      CheckTensorsRoundTrip(ReadTensors(j, "fuzz", limits), limits);
    } else if (j.is_object() && format->is_string() &&
               format->get<std::string>() == "fusefuzz-repro") {
      Repro r = ReadRepro(j, "fuzz", limits);
      CheckGraphRoundTrip(r.graph);
      try {
        ReadRepro(ReproToJson(r), "rewritten", limits);
      } catch (const InputError& e) {
        Fail("a reproducer that was read cannot be read back after writing", e.what());
      }
    } else {
      CheckGraphRoundTrip(ReadGraph(j, "fuzz", limits));
    }
  } catch (const InputError&) {
    // Bad input, reported with a location: the expected outcome.
  }
}

}  // namespace
}  // namespace fusefuzz::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fusefuzz::fuzz::OneInput(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
