// Dense NCHW float32 tensors: the values that flow between fusefuzz's layers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fusefuzz {

using Shape = std::vector<int64_t>;

// Product of the dims; callers validate dims (non-negative, within Limits) first.
int64_t NumElements(const Shape& shape);
std::string ShapeToString(const Shape& shape);  // "[1,3,8,8]"

struct Tensor {
  Shape shape;
  std::vector<float> data;  // row-major, NumElements(shape) entries

  Tensor() = default;
  explicit Tensor(Shape s, float fill = 0.0f);
  Tensor(Shape s, std::vector<float> d);
  int64_t size() const { return static_cast<int64_t>(data.size()); }
  bool operator==(const Tensor&) const = default;
  // Bitwise equality (distinguishes -0/+0 and NaN payloads); what round trips must preserve.
  bool BitwiseEquals(const Tensor& other) const;
};

// Named tensors: graph inputs, graph outputs, a tensors file. Ordered for determinism.
using TensorMap = std::map<std::string, Tensor>;

}  // namespace fusefuzz
