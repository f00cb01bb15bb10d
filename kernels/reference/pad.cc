// Reference Pad on H and W (ONNX modes): constant fill; reflect (the edge row/column is not
// repeated); edge (the edge row/column is repeated); wrap (the opposite side continues).
#include <cmath>

#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

enum class Mode { kConstant, kReflect, kEdge, kWrap };

// Source index of padded position i (already shifted by the begin pad) along a dim of size n,
// or -1 for a constant pad. Reflect pads are < n and wrap pads <= n (verifier), so one
// reflection or wrap suffices.
int64_t SourceIndex(int64_t i, int64_t n, Mode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case Mode::kConstant:
      return -1;
    case Mode::kReflect:
      return i < 0 ? -i : 2 * (n - 1) - i;
    case Mode::kEdge:
      return i < 0 ? 0 : n - 1;
    case Mode::kWrap:
      return i < 0 ? i + n : i - n;
  }
  return -1;
}

Mode ModeOf(const Node& n) {
  const std::string m = AttrString(n, "mode");
  if (m == "reflect") return Mode::kReflect;
  if (m == "edge") return Mode::kEdge;
  if (m == "wrap") return Mode::kWrap;
  return Mode::kConstant;
}

}  // namespace

RefTensor RunPad(const Node& n, const Inputs& in) {
  const RefTensor& x = *in[0];
  const std::vector<int64_t> p = AttrInts(n, "pads");  // top, left, bottom, right
  const Mode mode = ModeOf(n);
  const double fill = AttrFloat(n, "value");
  const int64_t h = x.shape[2], w = x.shape[3];
  RefTensor y = Zeros({x.shape[0], x.shape[1], h + p[0] + p[2], w + p[1] + p[3]});
  y.grid_scale = x.grid_scale;  // a padded DQ output: its conv may still fuse (bias rounding)
  for (int64_t nb = 0; nb < y.shape[0]; ++nb) {
    for (int64_t c = 0; c < y.shape[1]; ++c) {
      for (int64_t oh = 0; oh < y.shape[2]; ++oh) {
        for (int64_t ow = 0; ow < y.shape[3]; ++ow) {
          const size_t yi = At4(y.shape, nb, c, oh, ow);
          const int64_t ih = SourceIndex(oh - p[0], h, mode);
          const int64_t iw = SourceIndex(ow - p[1], w, mode);
          if (ih < 0 || iw < 0) {
            y.value[yi] = fill;
            y.mag[yi] = std::fabs(fill);
            y.peak[yi] = std::fabs(fill);
          } else {
            const size_t xi = At4(x.shape, nb, c, ih, iw);
            y.value[yi] = x.value[xi];
            y.mag[yi] = x.mag[xi];
            y.sigma[yi] = x.sigma[xi];
            y.peak[yi] = x.peak[xi];
          }
        }
      }
    }
  }
  return y;
}

}  // namespace fusefuzz::ref
