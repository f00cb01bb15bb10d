// ONNX export of a fusefuzz graph (docs/onnx.md): a model that ONNX Runtime runs with the
// semantics of fusefuzz's reference interpreter, at ONNX opset 17 (the newest opset that
// Debian's libonnx 1.12 checker knows, so the model can be validated), or at opset 19 when the
// graph needs it (Pad mode "wrap", a dilated AvgPool; validated by running it in ONNX Runtime,
// tests/onnx_opset19.sh). Ops that opset 17 lacks (Relu6, Silu, GELU, GroupNorm with
// per-channel scale, FusedConv) are written as their exact decompositions, each recorded in
// the model's metadata_props.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusefuzz {

inline constexpr int kOnnxOpset = 17;          // the default
inline constexpr int kOnnxOpsetNewer = 19;     // only for what opset 17 lacks (RequiredOnnxOpset)
inline constexpr int kOnnxIrVersion = 8;       // ONNX 1.12's IR version, the one for opset 17
inline constexpr int kOnnxIrVersionNewer = 9;  // ONNX 1.14's, the one for opset 19

// metadata_props key of a decomposed node's record: kOnnxNodeRecordPrefix + node name, value
// {"node": graph-JSON node with tensors as {"initializer", "shape"}, "onnx_nodes": [names]}.
inline constexpr const char* kOnnxNodeRecordPrefix = "fusefuzz:node:";

// The opset `g` is exported at: 19 when it holds a Pad with mode "wrap" (Pad-19) or an AvgPool
// with dilations (AveragePool-19), else 17.
int RequiredOnnxOpset(const Graph& g);
// True when Debian's libonnx 1.12 checker knows `opset` (<= 17) and can validate the model.
inline bool LibonnxKnowsOpset(int opset) { return opset <= kOnnxOpset; }

struct OnnxExportOptions {
  std::string graph_name = "fusefuzz";
  std::string doc;  // the model's doc_string (e.g. where the graph came from)
  // Record each decomposed node for the import (kOnnxNodeRecordPrefix). Off: the model looks
  // like one another tool wrote (tests of importing foreign models).
  bool record_nodes = true;
};

struct OnnxModel {
  std::string bytes;                      // serialized ModelProto
  int opset = kOnnxOpset;                 // its default-domain opset (RequiredOnnxOpset)
  std::vector<std::string> input_names;   // ONNX graph inputs, in Graph::inputs order
  std::vector<std::string> output_names;  // ONNX graph outputs, in Graph::outputs order
  std::vector<std::pair<std::string, std::string>> metadata;  // also in metadata_props
};

// Exports a graph (verified here; InputError when invalid). Value names are kept, so inputs and
// outputs have the names of the fusefuzz graph; nodes a decomposition adds are named
// "<node>/<step>" and their values get fresh names that collide with nothing.
OnnxModel ExportOnnx(const Graph& g, const OnnxExportOptions& opts = {});

// Standard base64 (RFC 4648, with padding) of bytes, e.g. of OnnxModel::bytes.
std::string Base64Bytes(std::string_view bytes);

// True when a ceil_mode pool of `g` drops a last window that would start in the end padding.
// ONNX Runtime (and ONNX since 1.16, and PyTorch) drop it, as fusefuzz does; the shape inference
// of Debian's libonnx 1.12 still counts it, so it would reject the output shape we declare. Such
// models are validated with the checker only.
bool PoolShapesPredateLibonnx(const Graph& g);

// ONNX's backend-test layout: DIR/test_data_set_<set>/input_<i>.pb in the order of g.inputs and
// output_<i>.pb in the order of g.outputs (TensorProtos named after the values). Creates the
// folders. Throws InputError naming a missing tensor or an unwritable path.
void WriteBackendTestData(const std::string& dir, const Graph& g, const TensorMap& inputs,
                          const TensorMap& outputs, int set = 0);

// Reads the inputs (or outputs) written by WriteBackendTestData back into a TensorMap keyed by
// the names of `names` (position i <- <prefix>_<i>.pb), checking that each file's TensorProto
// name matches. `prefix` is "input" or "output". A further <prefix>_<n>.pb (one more than
// `names`) is refused: it is a value the graph does not have. With `shapes` (one per name),
// each tensor's shape must match; every error names the .pb file.
TensorMap ReadBackendTestData(const std::string& set_dir, const std::vector<std::string>& names,
                              const std::string& prefix,
                              const std::vector<Shape>* shapes = nullptr);

}  // namespace fusefuzz
