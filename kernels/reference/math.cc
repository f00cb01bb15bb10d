// Reference ReduceMean, ReduceSum, ReduceMax, Softmax and the unary math ops (Pow with a constant
// exponent, Sqrt, Reciprocal, Exp, Log, Erf). Magnitudes are local Lipschitz bounds valid over the
// whole interval an input error of up to half the input's value (2^-10 of its magnitude for the
// powers) can move x across, not first-order slopes alone (derivations: docs/oracle.md,
// "Building-block ops").
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
// And at least 2^-256: an exp that underflows double (x < -745) would make 0/0 or 0 * inf of its
// own in the decomposed softmax's e / sum(e) (a row of one element: 1 in exact arithmetic).
// Below 2^-126 float32 holds nothing relative anyway: such values are not judged downstream
// (kExpUnderflow, the Div and Reciprocal rules; docs/oracle.md, "Underflow").
constexpr double kExpFloor = 0x1.0p-256;

// An absolute term of every Exp magnitude: a float32 exp below 2^-126 is subnormal (absolute
// error up to 2^-150) or flushed to 0 by an FTZ engine (error up to 2^-126); the stage cost 4
// admits 4u * 2^-100 = 2^-122 of it (docs/oracle.md, "Underflow"). Negligible for normal values.
constexpr double kExpUnderflow = 0x1.0p-100;

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
      // As Div's divisor: below 2^-126 float32 holds x only absolutely (or flushes it to 0).
      if (ax < 0x1.0p-126) return {r, INFINITY, 1 / (x * x), 1};
      return {r, 2 * mx / (x * x) + std::fabs(r), 1 / (x * x), 1};
    }
    case Op::Exp: {
      // |e^(x + d) - e^x| = e^x |e^d - 1| <= 2 e^x |d| for d <= 1.25; a few ulps of e^x.
      // A finite x gives at most 2^256 (kExpCeiling), not the double overflow to inf.
      const double r = std::isfinite(x) ? std::fmax(std::fmin(std::exp(x), kExpCeiling), kExpFloor)
                                        : std::exp(x);
      return {r, 2 * r * mx + r + kExpUnderflow, r, 2};
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
    case Op::Min:
    case Op::Max:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::Softmax:
    case Op::Transpose:
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

namespace {

// Softmax along one axis, computed as engines do: M = max, e_i = exp(x_i - M), y_i = e_i / sum e.
// Magnitude (docs/oracle.md, "Softmax"): input errors |d_j| <= delta move y_i by at most
// y_i (e^(2 delta) - 1) <= 4 y_i delta (softmax is shift-invariant, and each ratio e^(d_i - d_j)
// is within e^(+-2 delta); e^t - 1 <= 2t for t <= 1.25), so 4 y_i max_j m_j carries them; the
// subtraction's rounding is relative u|x_i - M| in e_i, the exp's a few ulps, the sum's and the
// division's relative: y_i (1 + |x_i - M|) against the stage cost sqrt(n) + 6.
RefTensor Softmax(const Node& n, const RefTensor& x) {
  const size_t axis = static_cast<size_t>(SoftmaxAxis(n, x.shape.size()));
  const int64_t len = x.shape[axis];
  const int64_t inner = InnerSize(x.shape, axis + 1);
  const int64_t outer = static_cast<int64_t>(x.value.size()) / (len * inner);
  RefTensor y = Zeros(x.shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * len + k) * inner + in); };
      double max = -INFINITY, max_mag = 0, max_sigma = 0, peak = 0;
      for (int64_t k = 0; k < len; ++k) {
        max = std::fmax(max, x.value[at(k)]);
        max_mag = std::fmax(max_mag, x.mag[at(k)]);
        max_sigma = std::fmax(max_sigma, x.sigma[at(k)]);
        peak = Peak(peak, x.peak[at(k)]);
      }
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(x.value[at(k)] - max);
      for (int64_t k = 0; k < len; ++k) {
        const size_t i = at(k);
        const double shifted = std::fabs(x.value[i] - max);
        const double r = std::exp(x.value[i] - max) / sum;
        y.value[i] = r;
        y.mag[i] = r * (4 * max_mag + 1 + shifted);
        KeepAtLeastAbs(r, &y.mag[i]);
        // First order: dy_i = y_i (d_i - sum_j y_j d_j).
        y.sigma[i] = Quadrature(r * Quadrature(x.sigma[i], max_sigma),
                                kU * r * (shifted + std::sqrt(static_cast<double>(len)) + 3));
        y.peak[i] = Peak(peak, shifted, static_cast<double>(len));  // x - M and the sum (<= n)
      }
    }
  }
  return y;
}

}  // namespace

RefTensor RunReduce(const Node& n, const Inputs& in) {
  const RefTensor& x = *in.at(0);
  if (n.op == Op::Softmax) return Softmax(n, x);
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
  // ReduceMax: the largest value, and the largest magnitude and error scale of the reduced
  // elements (|max_i (x_i + d_i) - max_i x_i| <= max_i |d_i|: a selection rounds nothing).
  std::vector<double> max(out_count, -INFINITY), max_mag(out_count, 0), max_sigma(out_count, 0);
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
    max[o] = std::fmax(max[o], x.value[i]);
    max_mag[o] = std::fmax(max_mag[o], x.mag[i]);
    max_sigma[o] = std::fmax(max_sigma[o], x.sigma[i]);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < x.shape[d]) break;
      idx[d] = 0;
    }
  }
  RefTensor y = Zeros(InferNodeShape(n, {x.shape}));
  for (size_t o = 0; o < out_count; ++o) {
    if (n.op == Op::ReduceMax) {
      y.value[o] = max[o];
      y.mag[o] = max_mag[o];
      KeepAtLeastAbs(max[o], &y.mag[o]);
      y.sigma[o] = max_sigma[o];
      y.peak[o] = Peak(peak[o], max[o]);
      continue;
    }
    // ReduceSum is ReduceMean without the division (count 1 below).
    const double divisor = n.op == Op::ReduceSum ? 1.0 : count;
    const double own_division = n.op == Op::ReduceSum ? 0.0 : 2 * kU;
    const double r = sum[o] / divisor;
    y.value[o] = r;
    y.mag[o] = mag_sum[o] / divisor;
    KeepAtLeastAbs(r, &y.mag[o]);
    // As AvgPool: carried errors average, the sum rounds as any float32 sum, then the division.
    y.sigma[o] =
        Quadrature(sigma_sum[o] / divisor,
                   SumRoundingSigma(count, std::fabs(sum[o]), std::sqrt(sq_sum[o])) / divisor +
                       own_division * std::fabs(r));
    y.peak[o] = Peak(Peak(peak[o], abs_sum[o]), r);  // the partial sums before the division
  }
  return y;
}

}  // namespace fusefuzz::ref
