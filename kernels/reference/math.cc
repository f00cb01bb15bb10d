// Reference ReduceMean and the unary math ops (Pow with a constant exponent, Sqrt, Reciprocal,
// Exp, Log, Erf). Magnitudes are local Lipschitz bounds valid over the whole interval an input
// error of up to half the input's value (2^-10 of its magnitude for the powers) can move x
// across, not first-order slopes alone (derivations: docs/oracle.md, "Building-block ops").
#include <cmath>

#include "ir/verifier.h"
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

// max |erf'| = erf'(0) = 2/sqrt(pi).
constexpr double kErfLipschitz = 1.1283791670955126;
// The relative input error the powers' higher-order terms are sized for (the MaxPool rule's
// "far above any accepted k*u").
constexpr double kHigherOrder = 0x1.0p-10;

// e^x of a finite x beyond float32's range: everything computed from it is beyond the range
// too (its peak), so the oracle never judges it; kept finite, so that the double evaluation
// makes no inf - inf or inf * 0 of its own where a float32 engine overflows elsewhere first
// (docs/oracle.md, "Building-block ops").
constexpr double kExpCeiling = 0x1.0p256;

struct Step {
  double r, m, slope;  // value, magnitude, |f'(x)| for the sigma propagation
  double own;          // the op's own rounding in units of u|r|
};

// x with magnitude mx: f(x), its magnitude, and the error-propagation slope.
Step Apply(Op op, double exponent, double x, double mx) {
  const double ax = std::fabs(x);
  switch (op) {
    case Op::Pow:
      if (exponent == 1.0) return {x, mx, 1.0, 0};
      if (exponent == 2.0) {
        // (x + d)^2 - x^2 = 2xd + d^2, |d| <= k*u*mx.
        return {x * x, 2 * ax * mx + kHigherOrder * mx * mx, 2 * ax, 1};
      }
      if (exponent == 3.0) {
        // (x + d)^3 - x^3 = 3x^2 d + 3x d^2 + d^3; x*x*x rounds twice.
        return {x * x * x, 3 * ax * ax * mx + kHigherOrder * mx * mx * (3 * ax + kHigherOrder * mx),
                3 * ax * ax, 2};
      }
      return Apply(Op::Sqrt, 0, x, mx);  // 0.5 (the verifier admits no other)
    case Op::Sqrt: {
      // |sqrt(x + d) - sqrt(x)| = |d| / (sqrt(x + d) + sqrt(x)) <= |d| / sqrt(x) for every
      // -x <= d: twice the slope, but no first-order approximation. An exact 0 stays exact.
      const double r = std::sqrt(x);
      if (mx == 0) return {r, 0, 0, 1};
      return {r, mx / r + std::fabs(r), 0.5 / r, 1};
    }
    case Op::Reciprocal: {
      // |1/(x + d) - 1/x| = |d| / (|x| |x + d|) <= 2|d| / x^2 for |d| <= |x|/2.
      const double r = 1.0 / x;
      if (mx == 0) return {r, std::fabs(r), 0, 1};
      return {r, 2 * mx / (x * x) + std::fabs(r), 1 / (x * x), 1};
    }
    case Op::Exp: {
      // |e^(x + d) - e^x| = e^x |e^d - 1| <= 2 e^x |d| for d <= 1.25; a few ulps of e^x.
      // A finite x gives at most 2^256 (kExpCeiling), not the double overflow to inf.
      const double r = std::isfinite(x) ? std::fmin(std::exp(x), kExpCeiling) : std::exp(x);
      return {r, 2 * r * mx + r, r, 2};
    }
    case Op::Log: {
      // |ln(x + d) - ln x| <= |d| / (x - |d|) <= 2|d| / x for |d| <= x/2.
      const double r = std::log(x);
      if (mx == 0) return {r, std::fabs(r), 0, 2};
      return {r, 2 * mx / x + std::fabs(r), 1 / ax, 2};
    }
    case Op::Erf: {
      const double r = std::erf(x);
      return {r, kErfLipschitz * mx + std::fabs(r), kErfLipschitz * std::exp(-x * x), 2};
    }
    case Op::Conv:
    case Op::FusedConv:
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::Relu:
    case Op::Relu6:
    case Op::Clip:
    case Op::LeakyRelu:
    case Op::PRelu:
    case Op::Elu:
    case Op::Sigmoid:
    case Op::HardSigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::HardSwish:
    case Op::Gelu:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Pad:
    case Op::MaxPool:
    case Op::AvgPool:
    case Op::GlobalAvgPool:
    case Op::Concat:
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape:
    case Op::Gemm:
    case Op::MatMul:
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
    case Op::QLinearConv:
    case Op::QLinearAdd:
    case Op::ReduceMean:
      break;
  }
  throw std::logic_error("RunMath: not a math op: " + std::string(OpName(op)));
}

}  // namespace

RefTensor RunMath(const Node& n, const Inputs& in) {
  const RefTensor& x = *in.at(0);
  const double exponent = n.op == Op::Pow ? AttrFloat(n, "exponent") : 0.0;
  RefTensor y = Zeros(x.shape);
  for (size_t i = 0; i < x.value.size(); ++i) {
    const Step s = Apply(n.op, exponent, x.value[i], x.mag[i]);
    y.value[i] = s.r;
    y.mag[i] = s.m;
    KeepAtLeastAbs(s.r, &y.mag[i]);
    // An exact input carries no error, even where the slope is infinite (sqrt at 0).
    const double carried = x.sigma[i] == 0 ? 0.0 : s.slope * x.sigma[i];
    y.sigma[i] = Quadrature(carried, s.own * kU * std::fabs(s.r));
    y.peak[i] = Peak(x.peak[i], s.r);
  }
  return y;
}

RefTensor RunReduce(const Node& n, const Inputs& in) {
  const RefTensor& x = *in.at(0);
  const size_t rank = x.shape.size();
  const std::vector<bool> reduced = ReduceMask(n, rank);
  // Reduce into the keepdims shape; keepdims 0 only drops its 1s (same row-major order).
  Shape kept = x.shape;
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d]) kept[d] = 1;
  const size_t out_count = static_cast<size_t>(NumElements(kept));
  const double count = static_cast<double>(NumElements(x.shape)) / static_cast<double>(out_count);
  std::vector<double> sum(out_count, 0), abs_sum(out_count, 0), mag_sum(out_count, 0),
      sigma_sum(out_count, 0), sq_sum(out_count, 0), peak(out_count, 0);
  std::vector<int64_t> idx(rank, 0);
  for (size_t i = 0; i < x.value.size(); ++i) {
    size_t o = 0;
    for (size_t d = 0; d < rank; ++d)
      o = o * static_cast<size_t>(kept[d]) + (reduced[d] ? 0 : idx[d]);
    sum[o] += x.value[i];
    abs_sum[o] += std::fabs(x.value[i]);
    mag_sum[o] += x.mag[i];
    sigma_sum[o] += x.sigma[i];
    sq_sum[o] += x.value[i] * x.value[i];
    peak[o] = std::fmax(peak[o], x.peak[i]);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < x.shape[d]) break;
      idx[d] = 0;
    }
  }
  RefTensor y = Zeros(InferNodeShape(n, {x.shape}));
  for (size_t o = 0; o < out_count; ++o) {
    const double r = sum[o] / count;
    y.value[o] = r;
    y.mag[o] = mag_sum[o] / count;
    KeepAtLeastAbs(r, &y.mag[o]);
    // As AvgPool: carried errors average, the sum rounds as any float32 sum, then the division.
    y.sigma[o] =
        Quadrature(sigma_sum[o] / count,
                   SumRoundingSigma(count, std::fabs(sum[o]), std::sqrt(sq_sum[o])) / count +
                       2 * kU * std::fabs(r));
    y.peak[o] = Peak(Peak(peak[o], abs_sum[o]), r);  // the partial sums before the division
  }
  return y;
}

}  // namespace fusefuzz::ref
