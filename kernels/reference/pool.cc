// Reference MaxPool / AvgPool (ONNX, incl. asymmetric pads, ceil_mode, count_include_pad) and
// GlobalAvgPool. Padding never contributes a value: MaxPool pads act as -inf and AvgPool pads
// only change the divisor when count_include_pad = 1.
#include <algorithm>
#include <cmath>

#include "ir/verifier.h"
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

// Another element can win a float32 max only if it lies within its (and the winner's) rounding
// error of the maximum; 2^-10 is far above any k*u the oracle accepts (u = 2^-24).
constexpr double kNearTie = 1.0 / 1024;

struct Window {
  int64_t h0, h1, w0, w1;  // input rows [h0, h1) and columns [w0, w1), clipped to the input
  double padded_area;      // window clipped to the padded extent (count_include_pad divisor)
};

Window WindowAt(const PoolAttrs& a, int64_t in_h, int64_t in_w, int64_t oh, int64_t ow) {
  const int64_t hs = oh * a.stride_h - a.pad_top, ws = ow * a.stride_w - a.pad_left;
  // In ceil mode the last window may overhang the end padding; ONNX/PyTorch count the include-
  // pad divisor only up to the padded border.
  const int64_t he_pad = std::min(hs + a.kernel_h, in_h + a.pad_bottom);
  const int64_t we_pad = std::min(ws + a.kernel_w, in_w + a.pad_right);
  return {std::max<int64_t>(hs, 0), std::min(hs + a.kernel_h, in_h), std::max<int64_t>(ws, 0),
          std::min(ws + a.kernel_w, in_w), static_cast<double>((he_pad - hs) * (we_pad - ws))};
}

RefTensor Pool(const Node& n, const RefTensor& x) {
  const PoolAttrs a = GetPoolAttrs(n);
  const int64_t in_h = x.shape[2], in_w = x.shape[3];
  const int64_t out_h =
      PoolOutputSize(in_h, a.kernel_h, a.stride_h, a.pad_top, a.pad_bottom, a.ceil_mode);
  const int64_t out_w =
      PoolOutputSize(in_w, a.kernel_w, a.stride_w, a.pad_left, a.pad_right, a.ceil_mode);
  RefTensor y = Zeros({x.shape[0], x.shape[1], out_h, out_w});
  for (int64_t nb = 0; nb < x.shape[0]; ++nb) {
    for (int64_t c = 0; c < x.shape[1]; ++c) {
      for (int64_t oh = 0; oh < out_h; ++oh) {
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const Window win = WindowAt(a, in_h, in_w, oh, ow);
          double r = 0, m = 0;
          if (n.op == Op::MaxPool) {
            // Pads are -inf: only input elements compete. A NaN anywhere makes the result NaN
            // (once best is NaN, no comparison replaces it).
            size_t best = At4(x.shape, nb, c, win.h0, win.w0);
            for (int64_t ih = win.h0; ih < win.h1; ++ih) {
              for (int64_t iw = win.w0; iw < win.w1; ++iw) {
                const size_t xi = At4(x.shape, nb, c, ih, iw);
                if (std::isnan(x.value[xi]) || x.value[xi] > x.value[best]) best = xi;
              }
            }
            r = x.value[best];
            m = x.mag[best];
            // A near-tied element may legitimately be selected instead: take the largest
            // magnitude among the elements that could win.
            for (int64_t ih = win.h0; ih < win.h1; ++ih) {
              for (int64_t iw = win.w0; iw < win.w1; ++iw) {
                const size_t xi = At4(x.shape, nb, c, ih, iw);
                if (r - x.value[xi] <= kNearTie * (x.mag[xi] + x.mag[best])) {
                  m = std::max(m, x.mag[xi]);
                }
              }
            }
            m += std::fabs(r);
          } else {
            double sum = 0, mag_sum = 0;
            for (int64_t ih = win.h0; ih < win.h1; ++ih) {
              for (int64_t iw = win.w0; iw < win.w1; ++iw) {
                const size_t xi = At4(x.shape, nb, c, ih, iw);
                sum += x.value[xi];
                mag_sum += x.mag[xi];
              }
            }
            const double count = a.count_include_pad
                                     ? win.padded_area
                                     : static_cast<double>((win.h1 - win.h0) * (win.w1 - win.w0));
            r = sum / count;
            m = mag_sum / count;
          }
          const size_t yi = At4(y.shape, nb, c, oh, ow);
          y.value[yi] = r;
          y.mag[yi] = m;
        }
      }
    }
  }
  return y;
}

RefTensor GlobalAvgPool(const RefTensor& x) {
  RefTensor y = Zeros({x.shape[0], x.shape[1], 1, 1});
  const int64_t hw = x.shape[2] * x.shape[3];
  for (size_t o = 0; o < y.value.size(); ++o) {
    double sum = 0, mag_sum = 0;
    for (int64_t k = 0; k < hw; ++k) {
      sum += x.value[o * static_cast<size_t>(hw) + static_cast<size_t>(k)];
      mag_sum += x.mag[o * static_cast<size_t>(hw) + static_cast<size_t>(k)];
    }
    y.value[o] = sum / static_cast<double>(hw);
    y.mag[o] = mag_sum / static_cast<double>(hw);
  }
  return y;
}

}  // namespace

RefTensor RunPool(const Node& n, const Inputs& in) {
  return n.op == Op::GlobalAvgPool ? GlobalAvgPool(*in[0]) : Pool(n, *in[0]);
}

}  // namespace fusefuzz::ref
