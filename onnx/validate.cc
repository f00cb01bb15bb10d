#include "onnx/validate.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>

namespace fusefuzz {

std::string CheckOnnxModel(const std::string& model_bytes, bool shape_inference) {
  onnx::ModelProto model;
  if (!model.ParseFromString(model_bytes)) return "libonnx cannot parse the ModelProto";
  try {
    onnx::checker::check_model(model);
    if (!shape_inference) return "";
    // check_type, strict (node errors throw), data propagation for Reshape's shape input.
    onnx::ShapeInferenceOptions options(true, 1, true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace fusefuzz
