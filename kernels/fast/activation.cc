// Elementwise activations in float32. Each op is its own loop (the switch sits outside the
// loop) so the cheap ones vectorize. Comparisons are written so that NaN propagates, as ONNX
// runtimes do, and the formulas avoid cancellation where a naive form would lose digits
// (expm1 for Elu, erfc for Gelu, a sigmoid form for 1 + tanh).
#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

template <typename F>
void Map(float* y, int64_t count, F f) {
  for (int64_t i = 0; i < count; ++i) y[i] = f(y[i]);
}

float Sigmoid(float x) {
  // exp of a non-positive argument never overflows; both branches are accurate to a few ulp.
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  float e = std::exp(x);
  return e / (1.0f + e);
}

}  // namespace

Activation MakeActivation(Op op, const AttrMap& attrs, const ParamMap& params,
                          const std::string& where) {
  if (!IsActivation(op)) throw InputError(where, std::string(OpName(op)) + " is not an activation");
  Activation a;
  a.op = op;
  switch (op) {
    case Op::Clip:
      a.lo = static_cast<float>(AttrFloat(op, attrs, "min", where));
      a.hi = static_cast<float>(AttrFloat(op, attrs, "max", where));
      break;
    case Op::LeakyRelu:
    case Op::Elu:
      a.alpha = static_cast<float>(AttrFloat(op, attrs, "alpha", where));
      break;
    case Op::HardSigmoid:
      a.alpha = static_cast<float>(AttrFloat(op, attrs, "alpha", where));
      a.beta = static_cast<float>(AttrFloat(op, attrs, "beta", where));
      break;
    case Op::Gelu:
      a.gelu_tanh = AttrString(op, attrs, "approximate", where) == "tanh";
      break;
    case Op::PRelu: {
      auto it = params.find("slope");
      if (it == params.end() || it->second.data.empty()) {
        throw InputError(where, "PRelu needs param 'slope'");
      }
      a.slope = it->second.data;
      break;
    }
    default:
      break;
  }
  return a;
}

// PRelu here is an epilogue step's, whose slope is per channel ([M, 1, 1], [N]) or [1]: `channel`
// indexes it. A PRelu node broadcasts its slope in PReluOp instead.
void ApplyActivation(const Activation& a, float* y, int64_t count, int64_t channel) {
  switch (a.op) {
    case Op::Relu:
      return Map(y, count, [](float x) { return x < 0.0f ? 0.0f : x; });
    case Op::Relu6:
      return Map(y, count, [](float x) { return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x); });
    case Op::Clip: {
      const float lo = a.lo, hi = a.hi;
      // min(max(x, lo), hi) as ONNX: hi everywhere when lo > hi; NaN propagates.
      return Map(y, count, [lo, hi](float x) {
        const float t = x < lo ? lo : x;
        return t > hi ? hi : t;
      });
    }
    case Op::LeakyRelu: {
      const float alpha = a.alpha;
      return Map(y, count, [alpha](float x) { return x >= 0.0f ? x : alpha * x; });
    }
    case Op::PRelu: {
      const float s = a.slope.size() == 1 ? a.slope[0] : a.slope[static_cast<size_t>(channel)];
      return Map(y, count, [s](float x) { return x >= 0.0f ? x : s * x; });
    }
    case Op::Elu: {
      const float alpha = a.alpha;
      return Map(y, count, [alpha](float x) { return x >= 0.0f ? x : alpha * std::expm1(x); });
    }
    case Op::Sigmoid:
      return Map(y, count, Sigmoid);
    case Op::HardSigmoid: {
      const float alpha = a.alpha, beta = a.beta;
      return Map(y, count, [alpha, beta](float x) {
        float v = alpha * x + beta;
        return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
      });
    }
    case Op::Tanh:
      return Map(y, count, [](float x) { return std::tanh(x); });
    case Op::Silu:
      return Map(y, count, [](float x) { return x * Sigmoid(x); });
    case Op::HardSwish:
      return Map(y, count, [](float x) {
        float v = x / 6.0f + 0.5f;
        return x * (v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
      });
    case Op::Gelu:
      if (a.gelu_tanh) {
        // 0.5x(1 + tanh(z)) == x * sigmoid(2z): no cancellation for negative x.
        return Map(y, count, [](float x) {
          const float k = 0.7978845608028654f;  // sqrt(2/pi)
          float z = k * (x + 0.044715f * x * x * x);
          return x * Sigmoid(2.0f * z);
        });
      }
      // 0.5x(1 + erf(x/sqrt2)) == 0.5x * erfc(-x/sqrt2): no cancellation for negative x.
      return Map(y, count, [](float x) { return 0.5f * x * std::erfc(-x * 0.7071067811865476f); });
    default:
      throw InputError("", std::string(OpName(a.op)) + " is not an activation");
  }
}

namespace {

// A PRelu node: the slope broadcasts to x from the right (ONNX). Both shapes are padded to rank
// 4 with leading 1s; planes (dims 0, 1) run in parallel, and each row (dim 3) reads the slope
// with stride 1 along W or one value for the whole row.
void PReluOp(const Activation& a, const Shape& slope_shape, const Tensor& x, int threads,
             Tensor& y) {
  int64_t xs[4] = {1, 1, 1, 1}, ss[4] = {1, 1, 1, 1}, stride[4] = {0, 0, 0, 0};
  const size_t xr = x.shape.size(), sr = slope_shape.size();
  for (size_t d = 0; d < xr; ++d) xs[4 - xr + d] = x.shape[d];
  for (size_t d = 0; d < sr; ++d) ss[4 - sr + d] = slope_shape[d];
  int64_t step = 1;
  for (int d = 3; d >= 0; --d) {
    if (ss[d] != 1) stride[d] = step;
    step *= ss[d];
  }
  const float* s = a.slope.data();
  ParallelFor(threads, xs[0] * xs[1], [&](int64_t p) {
    const int64_t n = p / xs[1], c = p % xs[1];
    for (int64_t h = 0; h < xs[2]; ++h) {
      const int64_t row = (p * xs[2] + h) * xs[3];
      const float* in = x.data.data() + row;
      float* out = y.data.data() + row;
      const float* sr_row = s + n * stride[0] + c * stride[1] + h * stride[2];
      if (stride[3] == 0) {
        const float v = *sr_row;
        for (int64_t w = 0; w < xs[3]; ++w) out[w] = in[w] >= 0.0f ? in[w] : v * in[w];
      } else {
        for (int64_t w = 0; w < xs[3]; ++w) out[w] = in[w] >= 0.0f ? in[w] : sr_row[w] * in[w];
      }
    }
  });
}

}  // namespace

void ActivationOp(const Node& n, const Tensor& x, int threads, Tensor& y) {
  Activation a = MakeActivation(n.op, n.attrs, n.params, "node '" + n.name + "'");
  if (n.op == Op::PRelu) return PReluOp(a, n.params.at("slope").shape, x, threads, y);
  std::copy(x.data.begin(), x.data.end(), y.data.begin());
  // Planes of one channel; rank 1 is one plane. (The channel argument is unused here: a PRelu
  // node broadcasts its slope in PReluOp; only epilogue steps apply a slope per channel.)
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t channels = rank >= 2 ? x.shape[1] : 1;
  int64_t inner = 1;
  for (int64_t d = 2; d < rank; ++d) inner *= x.shape[static_cast<size_t>(d)];
  const int64_t planes = rank >= 2 ? x.shape[0] * channels : 1;
  if (rank < 2) inner = x.size();
  ParallelFor(threads, planes, [&](int64_t p) {
    ApplyActivation(a, y.data.data() + p * inner, inner, p % channels);
  });
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
