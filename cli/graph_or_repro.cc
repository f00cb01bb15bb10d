#include "cli/graph_or_repro.h"

#include <nlohmann/json.hpp>

#include "generators/seeded_inputs.h"
#include "harness/repro.h"
#include "ir/json_io.h"

namespace fusefuzz {

LoadedCase LoadGraphOrRepro(const std::string& path, const std::string& inputs_json,
                            uint64_t seed) {
  nlohmann::json j = ReadJsonFile(path);
  LoadedCase c;
  auto format = j.is_object() ? j.find("format") : j.end();
  if (j.is_object() && format != j.end() && *format == "fusefuzz-repro") {
    Repro r = ReadRepro(j, path);
    c.graph = std::move(r.graph);
    c.inputs = std::move(r.inputs);
    c.from_repro = true;
  } else {
    c.graph = ReadGraph(j, path);
  }
  if (!inputs_json.empty()) {
    c.inputs = ReadTensorsFile(inputs_json);
  } else if (!c.from_repro) {
    c.inputs = InputsFromSeed(c.graph, seed);
  }
  return c;
}

}  // namespace fusefuzz
