// Values inside an ONNX model, computed by ONNX Runtime: `fusefuzz import --cut --cut-inputs`
// needs the values at the cut, which come from ops fusefuzz cannot run (docs/onnx.md, "Import
// with --cut").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace fusefuzz {

// Runs the model (its bytes; `source` names it in errors) on `inputs` (every graph input of the
// model that is not an initializer, in the model's order) in ONNX Runtime at optimization level
// "disabled" (its plain kernels, no fusion), with the model's outputs replaced by `values`, and
// returns those values. Uses targets/onnxruntime/run-model.js (node and the npm package
// onnxruntime-node, installed by ci/setup) in a fresh temporary folder, removed afterwards.
// Throws InputError when ONNX Runtime fails, naming the model and ONNX Runtime's message.
TensorMap OnnxRuntimeValues(std::string_view model_bytes, const std::string& source,
                            const std::vector<ValueInfo>& model_inputs, const TensorMap& inputs,
                            const std::vector<ValueInfo>& values, double timeout_seconds = 600);

}  // namespace fusefuzz
