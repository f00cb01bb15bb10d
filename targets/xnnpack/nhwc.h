// NCHW <-> NHWC for the XNNPACK target: fusefuzz's graphs are NCHW, XNNPACK's subgraph NHWC.
// Permutations move values, they round nothing. Used only by xnnpack_target_main.cc.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/tensor.h"

namespace fusefuzz::xnnpack {

inline bool Rank4(const Shape& s) { return s.size() == 4; }
// NCHW and NHWC hold the elements of this shape in the same order (or the value is not 4-D).
inline bool SameOrder(const Shape& s) { return !Rank4(s) || s[1] == 1 || s[2] * s[3] == 1; }
inline std::vector<size_t> Physical(const Shape& s) {
  if (Rank4(s)) return {size_t(s[0]), size_t(s[2]), size_t(s[3]), size_t(s[1])};
  return std::vector<size_t>(s.begin(), s.end());
}
inline std::vector<float> ToNhwc(const Tensor& t) {
  if (!Rank4(t.shape)) return t.data;
  const int64_t n = t.shape[0], c = t.shape[1], h = t.shape[2], w = t.shape[3];
  std::vector<float> out(t.data.size());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < c; ++b)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          out[((a * h + y) * w + x) * c + b] = t.data[((a * c + b) * h + y) * w + x];
  return out;
}
inline Tensor FromNhwc(const Shape& s, const std::vector<float>& d) {
  Tensor t(s);
  if (!Rank4(s)) {
    t.data = d;
    return t;
  }
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < c; ++b)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          t.data[((a * c + b) * h + y) * w + x] = d[((a * h + y) * w + x) * c + b];
  return t;
}

}  // namespace fusefuzz::xnnpack
