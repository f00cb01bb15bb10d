// Reference MaxPool / AvgPool (ONNX, incl. asymmetric pads, ceil_mode, count_include_pad) and
// GlobalAvgPool. Padding never contributes a value: MaxPool pads act as -inf and AvgPool pads
// only change the divisor when count_include_pad = 1.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ir/verifier.h"
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

// Another element can win a float32 max only if it lies within its (and the winner's) rounding
// error of the maximum; 2^-10 is far above any k*u the oracle accepts (u = 2^-24).
constexpr double kNearTie = 1.0 / 1024;

// Error scale of an average of `taps` values divided by `count`: the inputs' errors added as if
// fully correlated (neighbouring elements share their upstream errors, and a positive average
// does not cancel them), the rounding of the sum, and the division's.
double AverageSigma(double sigma_sum, double sum, double sq_sum, double taps, double count) {
  const double r = sum / count;
  return Quadrature(
      sigma_sum / count,
      SumRoundingSigma(taps, std::fabs(sum), std::sqrt(sq_sum)) / count + 2 * kU * std::fabs(r));
}

// The taps of a window along one dim: input indices start + j * dilation, j in [0, kernel).
struct Taps {
  std::vector<int64_t> in;  // taps inside the input
  int64_t padded = 0;       // taps inside the padded extent (count_include_pad divisor)
};

Taps TapsAt(int64_t start, int64_t kernel, int64_t dilation, int64_t in, int64_t pad_end) {
  Taps t;
  for (int64_t j = 0; j < kernel; ++j) {
    const int64_t i = start + j * dilation;
    // In ceil mode the last window may overhang the end padding; ONNX/PyTorch count the
    // include-pad divisor only up to the padded border.
    if (i < in + pad_end) ++t.padded;
    if (i >= 0 && i < in) t.in.push_back(i);
  }
  return t;
}

RefTensor Pool(const Node& n, const RefTensor& x) {
  const PoolAttrs a = GetPoolAttrs(n);
  const int64_t in_h = x.shape[2], in_w = x.shape[3];
  const int64_t out_h = PoolOutputSize(in_h, a.kernel_h, a.stride_h, a.pad_top, a.pad_bottom,
                                       a.ceil_mode, a.dilation_h);
  const int64_t out_w = PoolOutputSize(in_w, a.kernel_w, a.stride_w, a.pad_left, a.pad_right,
                                       a.ceil_mode, a.dilation_w);
  RefTensor y = Zeros({x.shape[0], x.shape[1], out_h, out_w});
  for (int64_t nb = 0; nb < x.shape[0]; ++nb) {
    for (int64_t c = 0; c < x.shape[1]; ++c) {
      for (int64_t oh = 0; oh < out_h; ++oh) {
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const Taps th =
              TapsAt(oh * a.stride_h - a.pad_top, a.kernel_h, a.dilation_h, in_h, a.pad_bottom);
          const Taps tw =
              TapsAt(ow * a.stride_w - a.pad_left, a.kernel_w, a.dilation_w, in_w, a.pad_right);
          double r = 0, m = 0, e = 0, peak = 0;
          for (int64_t ih : th.in) {
            for (int64_t iw : tw.in) peak = std::fmax(peak, x.peak[At4(x.shape, nb, c, ih, iw)]);
          }
          if (n.op == Op::MaxPool) {
            // Pads are -inf: only input elements compete. A NaN anywhere makes the result NaN
            // (once best is NaN, no comparison replaces it).
            size_t best = At4(x.shape, nb, c, th.in[0], tw.in[0]);
            for (int64_t ih : th.in) {
              for (int64_t iw : tw.in) {
                const size_t xi = At4(x.shape, nb, c, ih, iw);
                if (std::isnan(x.value[xi]) || x.value[xi] > x.value[best]) best = xi;
              }
            }
            r = x.value[best];
            m = x.mag[best];
            e = x.sigma[best];
            // A near-tied element may legitimately be selected instead: take the largest
            // magnitude among the elements that could win. Likewise the float32 max is
            // max_j (x_j + e_j): off by at most the largest error among the elements within
            // reach of r (kSigmaProbe sigmas).
            for (int64_t ih : th.in) {
              for (int64_t iw : tw.in) {
                const size_t xi = At4(x.shape, nb, c, ih, iw);
                const double below = r - x.value[xi];
                if (below <= kNearTie * (x.mag[xi] + x.mag[best])) m = std::max(m, x.mag[xi]);
                if (below <= kSigmaProbe * (x.sigma[xi] + x.sigma[best])) {
                  e = std::max(e, x.sigma[xi]);
                }
              }
            }
            m += std::fabs(r);
          } else {
            double sum = 0, abs_sum = 0, mag_sum = 0, sigma_sum = 0, sq_sum = 0;
            for (int64_t ih : th.in) {
              for (int64_t iw : tw.in) {
                const size_t xi = At4(x.shape, nb, c, ih, iw);
                sum += x.value[xi];
                abs_sum += std::fabs(x.value[xi]);
                mag_sum += x.mag[xi];
                sigma_sum += x.sigma[xi];
                sq_sum += x.value[xi] * x.value[xi];
              }
            }
            const double count = static_cast<double>(
                a.count_include_pad ? th.padded * tw.padded
                                    : static_cast<int64_t>(th.in.size() * tw.in.size()));
            r = sum / count;
            m = mag_sum / count;
            peak = Peak(peak, abs_sum);  // the partial sums before the division
            e = AverageSigma(sigma_sum, sum, sq_sum,
                             static_cast<double>(th.in.size() * tw.in.size()), count);
          }
          const size_t yi = At4(y.shape, nb, c, oh, ow);
          y.value[yi] = r;
          y.mag[yi] = m;
          y.sigma[yi] = e;
          y.peak[yi] = Peak(peak, r);
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
    double sum = 0, abs_sum = 0, mag_sum = 0, sigma_sum = 0, sq_sum = 0, peak = 0;
    for (int64_t k = 0; k < hw; ++k) {
      const size_t xi = o * static_cast<size_t>(hw) + static_cast<size_t>(k);
      peak = std::fmax(peak, x.peak[xi]);
      sum += x.value[xi];
      abs_sum += std::fabs(x.value[xi]);
      mag_sum += x.mag[xi];
      sigma_sum += x.sigma[xi];
      sq_sum += x.value[xi] * x.value[xi];
    }
    y.value[o] = sum / static_cast<double>(hw);
    y.mag[o] = mag_sum / static_cast<double>(hw);
    y.peak[o] = Peak(peak, abs_sum);  // the partial sums before the division
    const double count = static_cast<double>(hw);
    y.sigma[o] = AverageSigma(sigma_sum, sum, sq_sum, count, count);
  }
  return y;
}

}  // namespace

RefTensor RunPool(const Node& n, const Inputs& in) {
  return n.op == Op::GlobalAvgPool ? GlobalAvgPool(*in[0]) : Pool(n, *in[0]);
}

}  // namespace fusefuzz::ref
