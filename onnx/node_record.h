// Re-fusing fusefuzz's own decompositions on import (docs/onnx.md, "Decompositions come back
// as the node"). The exporter writes each node that opset 17 lacks (FusedConv, Gemm with an
// epilogue, Silu, GELU, GroupNorm) as ONNX ops and records the node itself in metadata_props
// (kOnnxNodeRecordPrefix). The importer puts the recorded node back in place of those ops, then
// re-exports the result: only when that gives back the very same ONNX graph is the re-fused
// graph kept, so a record that was edited, stale or hostile can never change what the model
// computes; the decomposition is imported as plain ops instead.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/limits.h"

namespace fusefuzz {

struct NodeRecord {
  std::string key;                      // the metadata key, for messages
  nlohmann::json node;                  // graph-JSON node, tensors as {"initializer", "shape"}
  std::vector<std::string> onnx_nodes;  // the ONNX nodes it was written as, in order
};

// The records among `metadata`, in key order. InputError naming the key when one is malformed.
std::vector<NodeRecord> ReadNodeRecords(const std::map<std::string, std::string>& metadata,
                                        const std::string& source, const Limits& limits);

// The recorded node, read and verified as graph JSON. `floats_of(name)` gives the float data
// of an initializer (nullptr: none), `shape_of(value)` the shape of one of the node's inputs.
Node NodeFromRecord(const NodeRecord& r,
                    const std::function<const std::vector<float>*(const std::string&)>& floats_of,
                    const std::function<Shape(const std::string&)>& shape_of,
                    const std::string& source, const Limits& limits);

// Empty when exporting `g` gives the graph of `model_bytes` (nodes, initializers, inputs and
// outputs, byte for byte); else where the first difference is.
std::string ReexportDifference(const Graph& g, std::string_view model_bytes,
                               const std::string& source);

}  // namespace fusefuzz
