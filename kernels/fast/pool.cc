// MaxPool (padding counts as -inf, NaN propagates), AvgPool (count_include_pad; in ceil mode the
// part of a window beyond the end padding is never counted, as in PyTorch) and GlobalAvgPool.
// Dilated windows take every d-th element. One task per (image, channel) plane.
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

float PlaneSum(const float* x, int64_t n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) lane[k] += x[i + k];
  }
  for (int k = 0; i < n; ++i, ++k) lane[k] += x[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace

void PoolOp(const Node& n, const Tensor& x, int threads, Tensor& y) {
  const Shape& out_shape = y.shape;
  const int64_t h = x.shape[2], w = x.shape[3], oh = out_shape[2], ow = out_shape[3];
  const int64_t planes = x.shape[0] * x.shape[1];
  const float* in = x.data.data();
  float* out = y.data.data();
  if (n.op == Op::GlobalAvgPool) {
    ParallelFor(threads, planes, [&](int64_t p) {
      out[p] = PlaneSum(in + p * h * w, h * w) / static_cast<float>(h * w);
    });
    return;
  }
  if (n.op != Op::MaxPool && n.op != Op::AvgPool) {
    throw InputError("node '" + n.name + "'", "not a pool op");
  }
  const PoolAttrs a = GetPoolAttrs(n);
  const bool is_max = n.op == Op::MaxPool;
  const int64_t dh = a.dilation_h, dw = a.dilation_w;
  // First tap index >= lo of a window starting at `start` with taps every `d`, and one past the
  // last tap < hi (both as tap counts j): taps j in [FirstTap, EndTap) lie inside [lo, hi).
  auto first_tap = [](int64_t start, int64_t d, int64_t lo) {
    return start >= lo ? 0 : (lo - start + d - 1) / d;
  };
  auto end_tap = [](int64_t start, int64_t d, int64_t k, int64_t hi) {
    return start >= hi ? 0 : std::min(k, (hi - start + d - 1) / d);
  };
  ParallelFor(threads, planes, [&](int64_t p) {
    const float* xp = in + p * h * w;
    float* yp = out + p * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int64_t y0 = oy * a.stride_h - a.pad_top;
      const int64_t jy0 = first_tap(y0, dh, 0), jy1 = end_tap(y0, dh, a.kernel_h, h);
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t x0 = ox * a.stride_w - a.pad_left;
        const int64_t jx0 = first_tap(x0, dw, 0), jx1 = end_tap(x0, dw, a.kernel_w, w);
        float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
        for (int64_t jy = jy0; jy < jy1; ++jy) {
          const float* row = xp + (y0 + jy * dh) * w;
          if (is_max) {
            for (int64_t jx = jx0; jx < jx1; ++jx) {
              const float v = row[x0 + jx * dw];
              if (v > acc || std::isnan(v)) acc = v;
              if (std::isnan(acc)) break;
            }
          } else {
            for (int64_t jx = jx0; jx < jx1; ++jx) acc += row[x0 + jx * dw];
          }
        }
        if (!is_max) {
          int64_t count = std::max<int64_t>(jy1 - jy0, 0) * std::max<int64_t>(jx1 - jx0, 0);
          if (a.count_include_pad) {
            count = end_tap(y0, dh, a.kernel_h, h + a.pad_bottom) *
                    end_tap(x0, dw, a.kernel_w, w + a.pad_right);
          }
          acc /= static_cast<float>(count);
        }
        yp[oy * ow + ox] = acc;
      }
    }
  });
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
