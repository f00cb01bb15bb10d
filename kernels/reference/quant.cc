// Reference QuantizeLinear, DequantizeLinear and QLinearAdd (ONNX semantics, fp64), with the
// integer-grid facts of every quantized output: the unrounded grid position t and the admitted
// extra half-width E in steps (docs/quantization.md, docs/oracle.md "The integer-grid oracle").
#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "kernels/reference/quant_ref.h"
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

// ONNX's rounding of a grid position: round half to even of x / s, plus z, saturated.
double OnnxRound(double x_over_s, int64_t z, int64_t qmin, int64_t qmax) {
  const double v = std::nearbyint(x_over_s) + static_cast<double>(z);
  return std::clamp(v, static_cast<double>(qmin), static_cast<double>(qmax));
}

// The relative error of a target's float32 quotient against the exact x / s, besides the float
// path's own error (docs/oracle.md, "Declared quantize rounding"): ONNX's division rounds once
// (2u kept as before: a division may be computed as a product with the reciprocal); a declared
// reciprocal multiply rounds 1 / s and the product, (1 + u)^2 - 1 <= 2u (1 + u).
double QuotientError(QuantizeRounding rounding) {
  switch (rounding) {
    case QuantizeRounding::kHalfEven:
    case QuantizeRounding::kHalfAway:
      return 2 * kU;
    case QuantizeRounding::kReciprocalMultiply:
      return 2 * kU * (1 + kU);
  }
  return 2 * kU;
}

RefTensor Quantize(const Node& n, const RefTensor& x, QuantizeRounding rounding) {
  const QuantParams& q = n.quant.at("y");
  RefTensor y = Zeros(x.shape);
  y.grid_t.resize(x.value.size());
  y.grid_e.resize(x.value.size());
  y.grid_es.resize(x.value.size());
  y.grid_qmin = q.qmin();
  y.grid_qmax = q.qmax();
  // Half away from zero agrees with ONNX but at an exact float32 tie, where it takes the other
  // neighbour: both are admitted there, and carried forward.
  y.grid_ties_either = rounding == QuantizeRounding::kHalfAway;
  ForEachQuantElement(q, x.shape, [&](size_t i, double s, int64_t z) {
    const double r = x.value[i];
    // x / s, or x * (1/s): quotient and reciprocal before the saturation.
    y.peak[i] = Peak(Peak(x.peak[i], r / s, 1.0 / s), y.grid_qmin, y.grid_qmax);
    if (std::isnan(r)) {
      // ONNX leaves NaN undefined; both engines give the zero point, and the oracle does not
      // judge the element (its t is NaN).
      y.value[i] = static_cast<double>(z);
      y.grid_t[i] = r;
      y.grid_e[i] = 0;
      y.grid_es[i] = 0;
      return;
    }
    const bool exact = x.mag[i] == std::fabs(r) && x.sigma[i] == 0 &&
                       static_cast<double>(static_cast<float>(r)) == r;
    if (exact) {
      // A given float (a graph input): ONNX defines the integer exactly, x / s in float32 and
      // ties to even, so E = 0 and t is the float32 quotient (a tie admits both neighbours for
      // this output, but the rounding is defined, so no spread is carried forward).
      const float quotient = static_cast<float>(r) / static_cast<float>(s);
      y.value[i] = OnnxRound(quotient, z, q.qmin(), q.qmax());
      y.grid_t[i] = static_cast<double>(quotient) + static_cast<double>(z);
      // fl(x * fl(1/s)) lies within (3u + u^2) |x/s| <= 3u (1 + 2u) |quotient| of the float32
      // quotient (docs/oracle.md): near a tie the other neighbour is admitted, and carried.
      y.grid_e[i] = rounding == QuantizeRounding::kReciprocalMultiply
                        ? 3 * kU * (1 + 2 * kU) * std::fabs(static_cast<double>(quotient))
                        : 0;
      y.grid_es[i] = y.grid_e[i];
    } else {
      y.value[i] = OnnxRound(r / s, z, q.qmin(), q.qmax());
      y.grid_t[i] = r / s + static_cast<double>(z);
      // The float path's own error before the rounding (its bound and its sigma; the spread of
      // an earlier quantized tensor is in both), and the float32 division x / s.
      // The division rounds the value the engine holds, up to that deviation away from r: at
      // r = 0 with a carried step of 6 and s = 0.047, fl(6 / s) is an exact tie (armnn:int8).
      const double dev = FloatDeviation(x, i);
      y.grid_e[i] =
          dev / std::fabs(s) + QuotientError(rounding) * (std::fabs(r) + dev) / std::fabs(s);
      // Under the sigma machinery (docs/oracle.md, "Carried spread in quadrature"): the float
      // path's 8 sigmas alone, whose carried part adds earlier spreads in quadrature. A declared
      // half-away rule flips every exact tie the same way (systematic, not independent): the
      // L1 half-width stays.
      const double dev_s = kSigmaProbe * x.sigma[i];
      y.grid_es[i] = rounding == QuantizeRounding::kHalfAway
                         ? y.grid_e[i]
                         : std::min(y.grid_e[i], dev_s / std::fabs(s) + QuotientError(rounding) *
                                                                            (std::fabs(r) + dev_s) /
                                                                            std::fabs(s));
    }
    if (!std::isfinite(y.grid_t[i])) y.grid_t[i] = y.grid_t[i] > 0 ? 1e300 : -1e300;
    if (!std::isfinite(y.grid_e[i])) y.grid_e[i] = 0;  // t is infinite: saturated either way
    if (!std::isfinite(y.grid_es[i])) y.grid_es[i] = 0;
  });
  SetGridMagnitudes(&y);
  return y;
}

RefTensor Dequantize(const Node& n, const RefTensor& x) {
  const QuantParams& q = n.quant.at("x");
  CheckIntegers(n, 0, x, q.type);
  RefTensor y = Zeros(x.shape);
  y.spread.assign(y.value.size(), 0.0);
  y.spread_key.assign(y.value.size(), 0.0);
  ForEachQuantElement(q, x.shape, [&](size_t i, double s, int64_t z) {
    y.value[i] = (x.value[i] - static_cast<double>(z)) * s;
    // The integers a correct engine may hold here, as a value deviation: the L1 spread into
    // the magnitude, the quadrature one into sigma.
    y.mag[i] = std::fabs(y.value[i]);
    y.sigma[i] = kU * std::fabs(y.value[i]) / std::sqrt(3.0);  // the float32 product
    y.peak[i] = Peak(Peak(x.peak[i], s, y.value[i]), z);
    AddSpread(&y, i, IntegerSpread(x, i) * std::fabs(s), IntegerSpreadSigma(x, i) * std::fabs(s));
    y.spread[i] = IntegerSpreadSigma(x, i) * std::fabs(s) / kSigmaProbe;
    y.spread_key[i] = SpreadKey(x, i);
  });
  if (!q.PerAxis()) y.grid_scale = q.scale[0];
  return y;
}

RefTensor QAdd(const Node& n, const RefTensor& a, const RefTensor& b) {
  const QuantParams &qa = n.quant.at("a"), &qb = n.quant.at("b"), &qy = n.quant.at("y");
  CheckIntegers(n, 0, a, qa.type);
  CheckIntegers(n, 1, b, qb.type);
  const bool relu = AttrString(n, "activation") == "relu";
  const double sa = qa.scale[0], sb = qb.scale[0], sy = qy.scale[0];
  const double za = static_cast<double>(qa.zero_point[0]);
  const double zb = static_cast<double>(qb.zero_point[0]);
  const int64_t zy = qy.zero_point[0];
  RefTensor y = Zeros(a.shape);
  y.grid_t.resize(a.value.size());
  y.grid_e.resize(a.value.size());
  y.grid_es.resize(a.value.size());
  y.grid_qmin = qy.qmin();
  y.grid_qmax = qy.qmax();
  for (size_t i = 0; i < a.value.size(); ++i) {
    const double ta = (a.value[i] - za) * sa, tb = (b.value[i] - zb) * sb;
    double v = ta + tb;
    y.peak[i] = Peak(std::fmax(a.peak[i], b.peak[i]), std::fabs(ta) + std::fabs(tb), v / sy);
    if (relu) v = std::max(v, 0.0);
    y.grid_t[i] = v / sy + static_cast<double>(zy);
    y.value[i] = OnnxRound(v / sy, zy, qy.qmin(), qy.qmax());
    // Spread of the inputs, and the integer kernel's float32 requantization: each multiplier
    // s/s_y rounded, each product and the sum rounded (kernels/fast/int8/qconv.h).
    // (each rounding relative to the values the engine holds, the spreads' reach included).
    const double moved = IntegerSpread(a, i) * sa + IntegerSpread(b, i) * sb;
    y.grid_e[i] = moved / sy + 4 * kU * (std::fabs(ta) + std::fabs(tb) + moved) / sy;
    // In quadrature (two independent spreads), unless an operand's spread is a systematic tie.
    const double moved_s =
        a.grid_ties_either || b.grid_ties_either
            ? moved
            : Quadrature(IntegerSpreadSigma(a, i) * sa, IntegerSpreadSigma(b, i) * sb);
    y.grid_es[i] = std::min(y.grid_e[i],
                            moved_s / sy + 4 * kU * (std::fabs(ta) + std::fabs(tb) + moved_s) / sy);
  }
  SetGridMagnitudes(&y);
  return y;
}

}  // namespace

double IntegerSpread(const RefTensor& x, size_t i) {
  if (!x.grid_t.empty()) {
    // E = 0: the integer is defined exactly (ties broken as ONNX breaks them); no spread, unless
    // the target declared a rule that breaks exact ties either way.
    if (!(x.grid_e[i] > 0) && !x.grid_ties_either) return 0;
    const auto [lo, hi] = AdmittedRange(x.grid_t[i], x.grid_e[i], x.grid_qmin, x.grid_qmax);
    return std::max(x.value[i] - lo, hi - x.value[i]);
  }
  // Integers moved by other ops (MaxPool, Pad, Concat of quantized values) carry the spread in
  // their magnitude and sigma (AddDeviation); a given integer has none.
  return std::max(kU * (x.mag[i] - std::fabs(x.value[i])), kSigmaProbe * x.sigma[i]);
}

double IntegerSpreadSigma(const RefTensor& x, size_t i) {
  if (!x.grid_t.empty()) {
    const double e = x.grid_es.empty() ? x.grid_e[i] : x.grid_es[i];
    if (!(e > 0) && !x.grid_ties_either) return 0;
    const auto [lo, hi] = AdmittedRange(x.grid_t[i], e, x.grid_qmin, x.grid_qmax);
    return std::max(x.value[i] - lo, hi - x.value[i]);
  }
  return kSigmaProbe * x.sigma[i];
}

double SpreadKey(const RefTensor& x, size_t i) {
  return x.grid_t.empty() ? x.value[i] : x.grid_t[i];
}

double SpreadSum::Total() {
  std::sort(taps_.begin(), taps_.end());
  double sum2 = 0;
  for (size_t i = 0; i < taps_.size();) {
    double group = 0;
    size_t j = i;
    for (; j < taps_.size() && taps_[j].first == taps_[i].first; ++j) group += taps_[j].second;
    sum2 += group * group;
    i = j;
  }
  return std::sqrt(sum2);
}

double FloatDeviation(const RefTensor& x, size_t i) {
  return std::max(kU * x.mag[i], kSigmaProbe * x.sigma[i]);
}

void AddSpread(RefTensor* y, size_t i, double dev, double dev_sigma) {
  if (dev > 0) y->mag[i] += dev / kU;
  // A whole step, not a Gaussian error: the float32 roundings of the value add to it.
  if (dev_sigma > 0) y->sigma[i] += dev_sigma / kSigmaProbe;
}

void AddDeviation(RefTensor* y, size_t i, double dev) {
  if (!(dev > 0)) return;
  y->mag[i] += dev / kU;
  y->sigma[i] = Quadrature(y->sigma[i], dev / kSigmaProbe);
}

void SetGridMagnitudes(RefTensor* y) {
  for (size_t i = 0; i < y->value.size(); ++i) {
    y->mag[i] = std::fabs(y->value[i]);
    y->sigma[i] = 0;
    if (!std::isnan(y->grid_t[i])) {
      AddSpread(y, i, IntegerSpread(*y, i), IntegerSpreadSigma(*y, i));
    }
  }
}

void CheckIntegers(const Node& n, size_t input, const RefTensor& x, QuantType type) {
  const double lo = static_cast<double>(type == QuantType::kInt32 ? -kMaxExactInt : QMin(type));
  const double hi = static_cast<double>(type == QuantType::kInt32 ? kMaxExactInt : QMax(type));
  for (size_t i = 0; i < x.value.size(); ++i) {
    const double v = x.value[i];
    if (!(v == std::nearbyint(v) && v >= lo && v <= hi)) {
      throw InputError(NodeWhere(n),
                       "input " + std::to_string(input) + " must hold " +
                           std::string(QuantTypeName(type)) + " integers, but element " +
                           std::to_string(i) + " is " + std::to_string(v) +
                           " (feed it from a QuantizeLinear, or give integer inputs)");
    }
  }
}

RefTensor RunQuant(const Node& n, const Inputs& in, QuantizeRounding rounding) {
  switch (n.op) {
    case Op::QuantizeLinear:
      return Quantize(n, *in[0], rounding);
    case Op::DequantizeLinear:
      return Dequantize(n, *in[0]);
    case Op::QLinearAdd:
      return QAdd(n, *in[0], *in[1]);
    case Op::QLinearConv:
      return RunQLinearConv(n, in);
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
    case Op::ReduceMean:
    case Op::Pow:
    case Op::Sqrt:
    case Op::Reciprocal:
    case Op::Exp:
    case Op::Log:
    case Op::Erf:
    case Op::Min:
    case Op::Max:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::Softmax:
    case Op::Transpose:
      break;
  }
  throw std::logic_error("RunQuant: not a quantized op: " + std::string(OpName(n.op)));
}

void AdmitBiasRounding(const Node& n, const RefTensor& x, RefTensor* y) {
  auto w = n.quant.find("W");
  if (w == n.quant.end() || !(x.grid_scale > 0)) return;
  const int64_t channels = y->shape[1], inner = InnerSize(y->shape, 2);
  const Shape& ws = n.params.at("W").shape;
  y->bias_grid.assign(static_cast<size_t>(channels), 0.0);
  for (int64_t m = 0; m < channels; ++m) {
    y->bias_grid[static_cast<size_t>(m)] =
        x.grid_scale * w->second.Scale(QuantChannel(w->second, ws, m * ws[1] * ws[2] * ws[3]));
  }
  auto b = n.params.find("B");
  if (b == n.params.end()) return;
  // A QDQ Conv fused into an integer conv rounds its bias to int32 at s_x * s_w (onednn), or
  // keeps it in float (qnnpack): the difference is the bias' distance to that grid.
  for (int64_t m = 0; m < channels; ++m) {
    const double sb = y->bias_grid[static_cast<size_t>(m)];
    const double bias = b->second.data[static_cast<size_t>(m)];
    const double dev = std::fabs(bias - sb * std::nearbyint(bias / sb));
    if (!(dev > 0)) continue;
    for (int64_t nb = 0; nb < y->shape[0]; ++nb) {
      const size_t begin = static_cast<size_t>((nb * channels + m) * inner);
      for (size_t i = begin; i < begin + static_cast<size_t>(inner); ++i) AddDeviation(y, i, dev);
    }
  }
}

}  // namespace fusefuzz::ref
