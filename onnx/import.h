// ONNX import (docs/onnx.md, "Import"): an ONNX model made of ops of fusefuzz's vocabulary
// becomes a fusefuzz graph. Initializers and Constant nodes become params; auto_pad becomes
// explicit pads; fusefuzz's own Relu6 export (Clip 0..6 recorded in metadata_props) comes back
// as Relu6. Any other op is one clear InputError naming the node and its op type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/limits.h"

namespace fusefuzz {

// What the import did with fusefuzz's own decomposition records (onnx/node_record.h).
struct OnnxImportInfo {
  int64_t refused = 0;      // recorded nodes put back in place of their decompositions
  std::string not_refused;  // non-empty: the model has records, but they did not hold (why)
};

// `source` names the model in errors ("model.onnx: node 'c1' (op type Gemm): ...").
// The returned graph is verified. A model exported by fusefuzz comes back as the graph it was
// exported from, decomposed nodes included, when its records prove true (onnx/node_record.h).
Graph ImportOnnx(std::string_view model_bytes, const std::string& source, const Limits& limits = {},
                 OnnxImportInfo* info = nullptr);

// Reads the file (ReadModelFile) and imports it.
Graph ImportOnnxFile(const std::string& path, const Limits& limits = {},
                     OnnxImportInfo* info = nullptr);

// `import --cut`: instead of failing on the first node outside the vocabulary, keeps the largest
// weakly connected part of the nodes that import (docs/onnx.md, "Import with --cut"). Values it
// reads from cut-off nodes become graph inputs (shapes from libonnx's shape inference); values
// that cut-off nodes read become graph outputs.
struct CutImport {
  Graph graph;                           // verified
  int64_t model_nodes = 0;               // nodes of the model, Constant nodes not counted
  std::vector<ValueInfo> model_inputs;   // the model's graph inputs (not initializers)
  std::vector<std::string> dropped;      // "node 'x' (op type Y): why", in model order
  std::vector<std::string> cut_inputs;   // graph inputs that the model computes
  std::vector<std::string> cut_outputs;  // graph outputs that the model does not output
};
CutImport ImportOnnxCut(std::string_view model_bytes, const std::string& source,
                        const Limits& limits = {});

// The bytes of a model file: a regular file of at most limits.max_file_bytes whose first bytes
// can start a ModelProto (onnx/proto_io.h, ReadProtoFile).
std::string ReadModelFile(const std::string& path, const Limits& limits = {});

// The model with its graph outputs replaced by `outputs` (float32, the given shapes): running it
// computes the model's prefix up to those values, e.g. the cut inputs of a CutImport.
std::string OnnxModelWithOutputs(std::string_view model_bytes, const std::string& source,
                                 const std::vector<ValueInfo>& outputs);

}  // namespace fusefuzz
