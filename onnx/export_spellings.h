// The ONNX export's spellings (ir/spellings.def, family onnx; docs/onnx.md "Spellings"): how a
// node carrying one is written. The node's math is unchanged; the export records the node
// (fusefuzz:node:<name>) so that the import reads it back with its spelling.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/spelling.h"

namespace fusefuzz {

// What the writer needs from the exporter (onnx/export.cc).
struct SpellingExportHooks {
  std::function<void(const Node&)> emit_plain;  // the node the plain way (its own output name)
  std::function<std::string(const Node&, const std::string&)> value;      // a fresh value name
  std::function<std::string(const Node&, const std::string&)> node_name;  // a fresh node name
  std::function<std::string(const std::string&, const Shape&, const std::vector<float>&)> floats;
  std::function<std::string(const std::string&, const std::vector<int64_t>&)> int64s;
  std::function<void(const onnx::NodeProto&)> add;
};

// True when `n` carries a spelling the ONNX export writes.
bool HasOnnxSpelling(const Node& n);

// Writes `n` (verified; `in` and `out` the shapes of its first input and its output) with its
// ONNX spelling. onnx.constant-nodes is the exporter's own (its initializers become Constant
// nodes) and is written here as the plain node.
void EmitOnnxSpelling(const Node& n, const Shape& in, const Shape& out,
                      const SpellingExportHooks& h);

}  // namespace fusefuzz
