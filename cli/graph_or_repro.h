// Loading "a graph or a reproducer" for commands that accept either (export, compare): the
// graph, and the inputs the file carries (a reproducer's) or those the options name.
#pragma once

#include <string>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusefuzz {

struct LoadedCase {
  Graph graph;
  TensorMap inputs;
  bool from_repro = false;
};

// `path` is a graph JSON or a reproducer JSON (told apart by "format"). Inputs: the tensors file
// `inputs_json` when given, else the reproducer's, else InputsFromSeed(graph, seed).
LoadedCase LoadGraphOrRepro(const std::string& path, const std::string& inputs_json, uint64_t seed);

}  // namespace fusefuzz
