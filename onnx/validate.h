// Validation of exported models with Debian's libonnx (ONNX 1.12): its checker, then its shape
// inference in strict mode, which also compares the output shapes we declare with the ones ONNX
// infers.
#pragma once

#include <string>

namespace fusefuzz {

// "" when the serialized ModelProto passes, else the checker's message. `shape_inference`
// false runs the checker only (see PoolShapesPredateLibonnx in onnx/export.h).
std::string CheckOnnxModel(const std::string& model_bytes, bool shape_inference = true);

}  // namespace fusefuzz
