// ONNX TensorProto files (`.pb`), as in ONNX's backend-test layout:
//   DIR/model.onnx, DIR/test_data_set_0/input_0.pb, ..., output_0.pb, ...
// Only float32 tensors are written and read (fusefuzz's one element type).
#pragma once

#include <string>
#include <string_view>

#include "ir/limits.h"
#include "ir/tensor.h"

namespace fusefuzz {

// A TensorProto: name, dims, data_type FLOAT, raw_data (little-endian float32, exact).
std::string EncodeTensorProto(const std::string& name, const Tensor& t);

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Reads a float32 TensorProto (raw_data or float_data). Throws InputError("<source>", problem)
// for anything else: malformed bytes, another data type, external data, a rank outside 1..4 or
// a size over `limits` (checked before allocating), a data size that does not match the dims.
NamedTensor DecodeTensorProto(std::string_view bytes, const std::string& source,
                              const Limits& limits = {});

// Reads a whole .pb file (at most 1 GiB + 1 MiB), then DecodeTensorProto.
NamedTensor ReadTensorProtoFile(const std::string& path, const Limits& limits = {});

}  // namespace fusefuzz
