// Reference normalizations: inference BatchNorm (per-channel affine from running statistics) and
// LayerNorm / GroupNorm / InstanceNorm (statistics of the input: two-pass mean and biased
// variance in double).
#include <cmath>

#include "kernels/reference/quant_ref.h"
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

RefTensor BatchNorm(const Node& n, const RefTensor& x) {
  const double eps = AttrFloat(n, "epsilon");
  const RefTensor scale = FromFloat(n.params.at("scale"));
  const RefTensor bias = FromFloat(n.params.at("bias"));
  const RefTensor mean = FromFloat(n.params.at("mean"));
  const RefTensor var = FromFloat(n.params.at("var"));
  const int64_t channels = x.shape[1], inner = InnerSize(x.shape, 2);
  RefTensor y = Zeros(x.shape);
  y.open_sum = x.open_sum;  // conv-bn-fold puts the shift into the conv's bias
  for (size_t i = 0; i < x.value.size(); ++i) {
    const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
    const double sigma = std::sqrt(var.value[c] + eps);
    y.value[i] = (x.value[i] - mean.value[c]) / sigma * scale.value[c] + bias.value[c];
    // A folded conv computes w*s and b*s + (bias - s*mean): |s|*m_x + |s*mean| + |bias| bounds
    // the terms of both the folded and the unfolded order.
    const double s = scale.value[c] / sigma;
    y.mag[i] = std::fabs(s) * x.mag[i] + std::fabs(s * mean.value[c]) + bias.mag[c];
    // Leaves and the intermediates of both orders: x - mean and its quotient by sigma, 1/sigma,
    // and the folded scale s and shift s*mean.
    const double centred = x.value[i] - mean.value[c];
    y.peak[i] =
        Peak(Peak(Peak(x.peak[i], scale.value[c], bias.value[c]), mean.value[c], var.value[c]),
             Peak(Peak(centred, centred / sigma, 1.0 / sigma), s, s * mean.value[c]),
             Peak(s * x.value[i], y.value[i]));
    // The input's error scaled by |s|; the rounding of s (sqrt, division: 2u relative) and of
    // the affine in either order, at most 2u times each of its terms.
    y.sigma[i] =
        Quadrature(std::fabs(s) * x.sigma[i],
                   2 * kU *
                           (std::fabs(s * x.value[i]) + std::fabs(s * mean.value[c]) + bias.mag[c] +
                            std::fabs(y.value[i])) +
                       FoldedAddendSigma(x.open_sum, std::fabs(bias.value[c] - s * mean.value[c])));
  }
  if (!x.bias_grid.empty()) {
    // Folded into a conv on a weight grid (qdq-conv-bn-fold, a QAT convert), the shift
    // b * s + t may be re-rounded onto the folded int32 grid fl(s_x * fl(s_w * |s|)): half of
    // that step, (1 + u)^2 above the exact product (docs/oracle.md).
    y.bias_grid.resize(x.bias_grid.size());
    for (size_t c = 0; c < x.bias_grid.size(); ++c) {
      y.bias_grid[c] = x.bias_grid[c] * std::fabs(scale.value[c] / std::sqrt(var.value[c] + eps));
    }
    for (size_t i = 0; i < x.value.size(); ++i) {
      const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
      AddDeviation(&y, i, 0.5 * y.bias_grid[c] * (1 + 4 * kU));
    }
  }
  return y;
}

// Normalizes each of `groups` consecutive spans of `span` elements of x. The affine param of
// element j of span g is index_of(g, j): its channel for GroupNorm, j itself for LayerNorm.
template <typename ParamIndex>
RefTensor NormalizeSpans(const RefTensor& x, int64_t groups, int64_t span, double eps,
                         const RefTensor& scale, const RefTensor& bias, ParamIndex index_of) {
  RefTensor y = Zeros(x.shape);
  const double count = static_cast<double>(span);
  for (int64_t g = 0; g < groups; ++g) {
    const size_t begin = static_cast<size_t>(g * span), end = begin + static_cast<size_t>(span);
    double sum = 0, mag_sum = 0, mag_sq_sum = 0, sq_sum = 0, sigma_sq_sum = 0;
    for (size_t i = begin; i < end; ++i) {
      sum += x.value[i];
      mag_sum += x.mag[i];
      mag_sq_sum += x.mag[i] * x.mag[i];
      sq_sum += x.value[i] * x.value[i];
      sigma_sq_sum += x.sigma[i] * x.sigma[i];
    }
    const double mean = sum / count, mag_mean = mag_sum / count;
    // The group's intermediates: the partial sums for the mean (at most sum |x|) and for either
    // variance formula (sum (x - mean)^2 <= sum x^2, each x^2 too).
    double group_peak = sq_sum, abs_sum = 0;
    for (size_t i = begin; i < end; ++i) {
      group_peak = std::fmax(group_peak, x.peak[i]);
      abs_sum += std::fabs(x.value[i]);
    }
    group_peak = Peak(group_peak, abs_sum);
    double sq = 0;
    for (size_t i = begin; i < end; ++i) sq += (x.value[i] - mean) * (x.value[i] - mean);
    const double var = sq / count + eps;
    const double sigma = std::sqrt(var);
    // The variance as E[x^2] - E[x]^2 in float32 (ONNX's own LayerNormalization function body)
    // is off by up to a few u * (E[m^2] + E[m]^2), which cancels down to var; sigma then moves
    // by half that relative error (docs/oracle.md, "Faithful float32 formulas").
    const double var_rel_error = (mag_sq_sum / count + mag_mean * mag_mean) / var;
    // Error scales: the float32 mean is off by its sum's rounding; the variance by its sum's
    // rounding, relative to var, for a one-pass E[x^2] - E[x]^2 (the larger of the two ways);
    // an input error e_i moves y_i by gamma/sigma * (e_i - mean(e) - centred_i * mean(centred*e)),
    // the two means taken at the group's root-mean-square error.
    const double mean_sigma = SumRoundingSigma(count, std::fabs(sum), std::sqrt(sq_sum)) / count;
    const double var_sigma_rel =
        (SumRoundingSigma(count, sq_sum, sq_sum) / count + 2 * std::fabs(mean) * mean_sigma +
         2 * kU * (sq_sum / count + mean * mean)) /
        var;
    const double rms_sigma = std::sqrt(sigma_sq_sum / count);
    for (size_t i = begin; i < end; ++i) {
      const size_t p = index_of(g, static_cast<int64_t>(i - begin));
      const double centred = (x.value[i] - mean) / sigma;
      y.value[i] = centred * scale.value[p] + bias.value[p];
      // x_i - mean moves by up to (m_i + mean of m) * u; dividing by sigma amplifies that, so a
      // sigma tiny against |x| (cancellation) shows up as a large magnitude. |r| covers the
      // relative rounding of sigma and of the division; the last term a one-pass variance.
      y.mag[i] = scale.mag[p] * (x.mag[i] + mag_mean) / sigma + bias.mag[p] +
                 std::fabs(y.value[i]) + scale.mag[p] * std::fabs(centred) * var_rel_error;
      y.peak[i] = Peak(Peak(group_peak, x.value[i] - mean, 1.0 / sigma),
                       Peak(centred, scale.value[p] * centred),
                       Peak(scale.value[p], bias.value[p], y.value[i]));
      const double gain = std::fabs(scale.value[p]) / sigma;
      const double carried = gain * Quadrature(x.sigma[i], rms_sigma * (1 + std::fabs(centred)));
      const double own = gain * mean_sigma +
                         std::fabs(scale.value[p] * centred) * (var_sigma_rel / 2 + 3 * kU) +
                         2 * kU * (bias.mag[p] + std::fabs(y.value[i]));
      y.sigma[i] = Quadrature(carried, own);
    }
  }
  return y;
}

int64_t NormalizedAxis(const Node& n, const Shape& s) {
  int64_t axis = AttrInt(n, "axis");
  return axis < 0 ? axis + static_cast<int64_t>(s.size()) : axis;
}

}  // namespace

RefTensor RunNorm(const Node& n, const Inputs& in) {
  const RefTensor& x = *in[0];
  if (n.op == Op::BatchNorm) return BatchNorm(n, x);
  const double eps = AttrFloat(n, "epsilon");
  const RefTensor scale = FromFloat(n.params.at("scale"));
  const RefTensor bias = FromFloat(n.params.at("bias"));
  if (n.op == Op::LayerNorm) {
    const int64_t span = InnerSize(x.shape, static_cast<size_t>(NormalizedAxis(n, x.shape)));
    return NormalizeSpans(x, NumElements(x.shape) / span, span, eps, scale, bias,
                          [](int64_t, int64_t j) { return static_cast<size_t>(j); });
  }
  // GroupNorm; InstanceNorm is GroupNorm with one channel per group.
  const int64_t channels = x.shape[1], hw = InnerSize(x.shape, 2);
  const int64_t groups = n.op == Op::GroupNorm ? AttrInt(n, "num_groups") : channels;
  const int64_t per_group = channels / groups;
  return NormalizeSpans(
      x, x.shape[0] * groups, per_group * hw, eps, scale, bias,
      [&](int64_t g, int64_t j) { return static_cast<size_t>((g % groups) * per_group + j / hw); });
}

}  // namespace fusefuzz::ref
