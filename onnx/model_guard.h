// What a model must not hold, whatever part of it fusefuzz imports (docs/security.md): checked on
// the whole ModelProto before any node is converted, so that neither `import`, `import --cut`,
// `check` nor an engine given a prefix of the model ever sees it.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace fusefuzz {

// Highest versions fusefuzz accepts (ONNX 1.16: IR 10, opset 21); anything above, below 1, or
// an opset listed twice is refused.
constexpr int64_t kMaxOnnxIrVersion = 10;
constexpr int64_t kMaxOnnxOpset = 21;

// Throws InputError(source, ...) when the model
//  - refers to external data anywhere: an initializer, a sparse initializer, a tensor attribute
//    (Constant's value, a node's t/tensors/sparse_tensor), in the main graph, in every subgraph
//    (If/Loop/Scan bodies, graph attributes), in model functions and training info (fusefuzz
//    opens no file a model names, and an engine must not either);
//  - has an ir_version outside [1, kMaxOnnxIrVersion] (absent is accepted), or an opset of the
//    default domain outside [1, kMaxOnnxOpset], or one domain twice.
void CheckModelProto(const onnx::ModelProto& m, const std::string& source);

}  // namespace fusefuzz
