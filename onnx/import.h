// ONNX import (docs/onnx.md, "Import"): an ONNX model made of ops of fusefuzz's vocabulary
// becomes a fusefuzz graph. Initializers and Constant nodes become params; auto_pad becomes
// explicit pads; fusefuzz's own Relu6 export (Clip 0..6 recorded in metadata_props) comes back
// as Relu6. Any other op is one clear InputError naming the node and its op type.
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"
#include "ir/limits.h"

namespace fusefuzz {

// `source` names the model in errors ("model.onnx: node 'c1' (op type Gemm): ...").
// The returned graph is verified.
Graph ImportOnnx(std::string_view model_bytes, const std::string& source,
                 const Limits& limits = {});

// Reads the file (at most 2 GiB) and imports it.
Graph ImportOnnxFile(const std::string& path, const Limits& limits = {});

}  // namespace fusefuzz
