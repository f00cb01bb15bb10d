// Normalizations in float32: BatchNorm (inference), LayerNorm, GroupNorm, InstanceNorm.
// Statistics are two-pass (mean, then the mean of squared deviations: biased variance) with a
// blocked pairwise sum, so the float error grows with log(n) rather than n.
#include <cmath>

#include "ir/error.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

// Pairwise sum of f(x[i]); 8 independent lanes at the leaves so the compiler can vectorize.
template <typename F>
float PairwiseSum(const float* x, int64_t n, F f) {
  if (n <= 128) {
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int k = 0; k < 8; ++k) lane[k] += f(x[i + k]);
    }
    for (int k = 0; i < n; ++i, ++k) lane[k] += f(x[i]);
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
           ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  }
  const int64_t half = n / 2;
  return PairwiseSum(x, half, f) + PairwiseSum(x + half, n - half, f);
}

struct Moments {
  float mean, inv_std;
};
Moments ComputeMoments(const float* x, int64_t n, float eps) {
  const float count = static_cast<float>(n);
  const float mean = PairwiseSum(x, n, [](float v) { return v; }) / count;
  const float var = PairwiseSum(x, n, [mean](float v) { return (v - mean) * (v - mean); }) / count;
  return {mean, 1.0f / std::sqrt(var + eps)};
}

const std::vector<float>& ParamValues(const Node& n, const char* name) {
  auto it = n.params.find(name);
  if (it == n.params.end())
    throw InputError("node '" + n.name + "'", std::string("missing param ") + name);
  return it->second.data;
}

int64_t InnerSize(const Shape& s, size_t from) {
  int64_t v = 1;
  for (size_t d = from; d < s.size(); ++d) v *= s[d];
  return v;
}

}  // namespace

void NormOp(const Node& n, const Tensor& x, int threads, Tensor& y) {
  const float eps = static_cast<float>(AttrFloat(n, "epsilon"));
  const float* in = x.data.data();
  float* out = y.data.data();
  const auto& scale = ParamValues(n, "scale");
  const auto& bias = ParamValues(n, "bias");
  switch (n.op) {
    case Op::BatchNorm: {
      const auto& mean = ParamValues(n, "mean");
      const auto& var = ParamValues(n, "var");
      const int64_t c = x.shape[1], inner = InnerSize(x.shape, 2);
      ParallelFor(threads, x.shape[0] * c, [&](int64_t plane) {
        const size_t ch = static_cast<size_t>(plane % c);
        const float a = scale[ch] / std::sqrt(var[ch] + eps), m = mean[ch], b = bias[ch];
        const float* xp = in + plane * inner;
        float* yp = out + plane * inner;
        for (int64_t i = 0; i < inner; ++i) yp[i] = (xp[i] - m) * a + b;
      });
      break;
    }
    case Op::LayerNorm: {
      int64_t axis = AttrInt(n, "axis");
      if (axis < 0) axis += static_cast<int64_t>(x.shape.size());
      const int64_t inner = InnerSize(x.shape, static_cast<size_t>(axis));
      ParallelFor(threads, x.size() / inner, [&](int64_t row) {
        const float* xp = in + row * inner;
        float* yp = out + row * inner;
        const Moments mo = ComputeMoments(xp, inner, eps);
        for (int64_t i = 0; i < inner; ++i) {
          yp[i] = (xp[i] - mo.mean) * mo.inv_std * scale[static_cast<size_t>(i)] +
                  bias[static_cast<size_t>(i)];
        }
      });
      break;
    }
    case Op::GroupNorm:
    case Op::InstanceNorm: {
      const int64_t c = x.shape[1], plane = InnerSize(x.shape, 2);
      const int64_t groups = n.op == Op::GroupNorm ? AttrInt(n, "num_groups") : c;
      const int64_t per_group = c / groups;  // channels per group
      ParallelFor(threads, x.shape[0] * groups, [&](int64_t task) {
        const int64_t first = task * per_group;  // first plane (n * C + channel) of the group
        const Moments mo = ComputeMoments(in + first * plane, per_group * plane, eps);
        for (int64_t k = 0; k < per_group; ++k) {
          const size_t ch = static_cast<size_t>((first + k) % c);
          const float a = mo.inv_std * scale[ch], b = bias[ch];
          const float* xp = in + (first + k) * plane;
          float* yp = out + (first + k) * plane;
          for (int64_t i = 0; i < plane; ++i) yp[i] = (xp[i] - mo.mean) * a + b;
        }
      });
      break;
    }
    default:
      throw InputError("node '" + n.name + "'", "not a normalization");
  }
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
