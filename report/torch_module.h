// A fusefuzz float graph as the source of a plain PyTorch `nn.Module` (for reproduce.py,
// report/torch_script.h): modules declared in graph order and called as a hand-written model
// calls them, with the ONNX decompositions of targets/pytorch/translate.py, so that the script
// builds the model the PyTorch adapter builds. Graph names never become Python identifiers:
// modules are `m0, m1, ...`, buffers `c0, ...`, values `x0, ...` (inputs) and `t0, ...`; names
// appear only as string literals (PyStr).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fusefuzz {

struct TorchModuleInfo {
  std::string attr;        // m0, m1, ...
  std::string cls;         // "Conv2d", "BatchNorm2d", "ReLU", ... or a script class
  std::string graph_node;  // the graph node it computes
};

struct TorchModule {
  std::string source;                    // `class Graph(nn.Module)` and the helper classes it uses
  std::vector<TorchModuleInfo> modules;  // declaration order (what fuse_modules lists see)
  // One entry per call of forward in order (each line of forward is one torch.fx call node):
  // the graph value that call computes, "" for an intermediate (an explicit pad).
  std::vector<std::string> calls;
  std::vector<std::string> input_vars, output_vars;
  std::map<std::string, std::string> var_of;  // graph value -> Python variable
  bool uses_helpers = false;  // a decomposition class (translate.py's Onnx* classes) is used
};

// Throws InputError naming the node for what the emitter does not translate (dilated pools,
// unknown Pad modes); the caller then writes no script.
TorchModule EmitTorchModule(const Graph& g);

}  // namespace fusefuzz
