#include "ir/tensor.h"

#include <cstdint>
#include <cstring>

namespace fusefuzz {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    // Shapes from files are checked against the limits first; should an unchecked one get here,
    // it saturates (and then fails every size comparison) instead of overflowing.
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  }
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor::Tensor(Shape s, float fill)
    : shape(std::move(s)), data(static_cast<size_t>(NumElements(shape)), fill) {}

Tensor::Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {}

bool Tensor::BitwiseEquals(const Tensor& other) const {
  return shape == other.shape && data.size() == other.data.size() &&
         (data.empty() || std::memcmp(data.data(), other.data.data(), data.size() * 4) == 0);
}

}  // namespace fusefuzz
