// Conv geometry shared by the GEMM and the depthwise conv kernels (kernels/fast only).
#pragma once

#include <algorithm>
#include <cstdint>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusefuzz::fast {

struct ConvGeometry {
  ConvAttrs a;
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t m = 0, kh = 0, kw = 0;       // weights [M, C/group, kH, kW]
  int64_t oh = 0, ow = 0;              // output plane
  int64_t cg() const { return c / a.group; }
  int64_t mg() const { return m / a.group; }
  int64_t k() const { return cg() * kh * kw; }  // GEMM reduction length per group
  int64_t p() const { return oh * ow; }         // output plane size
};

inline ConvGeometry MakeConvGeometry(const Node& node, const Shape& x, const Shape& wshape,
                                     const Shape& out) {
  ConvGeometry g;
  g.a = GetConvAttrs(node);
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3];
  g.m = wshape[0], g.kh = wshape[2], g.kw = wshape[3];
  g.oh = out[2], g.ow = out[3];
  return g;
}

// Output positions o in [0, out) whose input coordinate o * stride + offset lies in [0, in):
// returns [lo, hi) (empty when lo >= hi). Lets the inner loops run without bounds checks.
struct Range {
  int64_t lo, hi;
};
inline Range ValidRange(int64_t out, int64_t in, int64_t stride, int64_t offset) {
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t last = in - 1 - offset;  // o * stride <= last
  int64_t hi = last < 0 ? 0 : last / stride + 1;
  return {std::min(lo, out), std::max(std::min(hi, out), std::min(lo, out))};
}

}  // namespace fusefuzz::fast
