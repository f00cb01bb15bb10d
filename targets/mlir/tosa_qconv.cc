// mlir:int8's QLinearConv on TOSA integers (tosa_emitter.h): an i8 conv2d / depthwise_conv2d
// with the input zero point as its `input_zp` operand, an i32 accumulator and bias, then a
// RESCALE to the output's 8 bits with a 31-bit multiplier and shift per output channel, and the
// activation as an i8 CLAMP. Nothing TOSA leaves undefined is sent: each rule below names its
// section of the TOSA 1.0 specification (targets/mlir/README.md, "UB rules").
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "targets/mlir/tosa_emitter.h"

namespace fusefuzz::mlir {
namespace {

std::string Where(const fusefuzz::Node& n) { return " (node '" + n.name + "')"; }

constexpr double kTwo31 = 2147483648.0;  // 2^31

struct ScaleInt {
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// factor ~ multiplier * 2^-shift with multiplier in [2^30, 2^31): a relative error of at most
// 2^-31 (docs/oracle.md, "The integer-grid oracle", term 2). RESCALE's apply_scale_32 requires
// 0 <= multiplier < 2^31 and 2 <= shift <= 62 (spec 1.0, "Precision scaling").
ScaleInt IntegerScale(double factor, const std::string& where) {
  if (!(factor > 0) || !std::isfinite(factor)) {
    throw Unsupported("a requantization factor " + std::to_string(factor) +
                      " that is not positive (RESCALE's multiplier is non-negative)" + where);
  }
  int e = 0;
  const double fraction = std::frexp(factor, &e);  // in [0.5, 1)
  auto multiplier = static_cast<int64_t>(std::nearbyint(std::ldexp(fraction, 31)));
  if (multiplier == int64_t(1) << 31) {
    multiplier >>= 1;
    ++e;
  }
  const int shift = 31 - e;
  if (shift < 2 || shift > 62) {
    throw Unsupported("a requantization factor " + std::to_string(factor) +
                      " outside what RESCALE's shift in [2, 62] can say" + where);
  }
  return {static_cast<int32_t>(multiplier), shift};
}

}  // namespace

// RESCALE of `v` (its last dimension per channel when `factors` has more than one) to
// `element` (i8 saturates; i32 needs output_zp 0), SINGLE_ROUND: round half up. `max_abs`
// bounds |v - input_zp|: apply_scale_32 requires the value inside +-2^(shift-1), and the
// result plus output_zp must stay an int32 (spec 1.0, RESCALE and apply_scale_32).
Val Emitter::Rescale(const Val& v, const std::vector<double>& factors, int32_t input_zp,
                     int32_t output_zp, const std::string& element, double max_abs,
                     const std::string& where) {
  std::vector<int32_t> multipliers, shifts;
  for (double f : factors) {
    const ScaleInt s = IntegerScale(f, where);
    if (!(max_abs < std::ldexp(1.0, s.shift - 1)) ||
        !(max_abs * f + 1 + std::fabs(double(output_zp)) < kTwo31)) {
      throw Unsupported("a requantized value beyond what RESCALE defines (|value| " +
                        std::to_string(max_abs) + ", shift " + std::to_string(s.shift) + ")" +
                        where);
    }
    multipliers.push_back(s.multiplier);
    shifts.push_back(s.shift);
  }
  const std::string in_element = ElementType(v);
  const Shape cs = {int64_t(factors.size())};
  const Val multiplier = IntConst(cs, multipliers);
  const Val shift = IntConst(cs, shifts, "i8");
  const Val in_zp = IntConst({1}, {input_zp}, in_element);
  const Val out_zp = IntConst({1}, {output_zp}, element);
  const std::string props = std::string("input_unsigned = false, output_unsigned = false, ") +
                            "per_channel = " + (factors.size() > 1 ? "true" : "false") +
                            ", rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = true";
  return Emit("rescale", {v, multiplier, shift, in_zp, out_zp}, props, v.shape, element);
}

// A quantized value as signed i8 and its zero point in that domain: int8 as it is; uint8
// (held as i32, tosa_quant.cc) moved down by 128 (x - z is unchanged); a float graph input that
// holds the integers (the reference checks them) cast first.
Val Emitter::SignedInt8(const Val& x, const QuantParams& q, int32_t* zero_point) {
  const int32_t offset = q.type == QuantType::kUint8 ? 128 : 0;
  *zero_point = static_cast<int32_t>(q.zero_point[0]) - offset;
  Val v = x;
  if (ElementType(v) == "f32") v = Emit("cast", {v}, "", v.shape, "i32");
  if (ElementType(v) == "i8") return v;
  return Rescale(v, {1.0}, 0, -offset, "i8", 255, "");
}

std::pair<double, double> ActivationBounds(Op act, const AttrMap& attrs, const std::string& where) {
  if (act == Op::Relu) return {0, INFINITY};
  if (act == Op::Relu6) return {0, 6};
  if (act == Op::Clip) {
    const double lo = AttrFloat(Op::Clip, attrs, "min", where);
    const double hi = AttrFloat(Op::Clip, attrs, "max", where);
    return {std::min(lo, hi), hi};  // ONNX Clip with min > max: max everywhere
  }
  throw Unsupported("an integer conv's activation " + std::string(OpName(act)) + where);
}

// y = saturate(round(factor[m] * acc) + z_y), acc = sum (x - z_x)(w - z_w) + B in i32, then
// clamped to [lo_q, hi_q] (the activation's bounds on y's grid).
Val Emitter::IntegerConv(const fusefuzz::Node& n, const Val& x, const QuantParams& qx,
                         IntegerWeights w, const std::vector<float>& bias,
                         const std::vector<double>& factors, const QuantParams& qy, double lo_q,
                         double hi_q) {
  const std::string where = Where(n);
  const int64_t m = int64_t(bias.size()), per = int64_t(w.weights.size()) / m;
  // The i32 accumulator must not overflow (spec 1.0, CONV2D: apply_add_s / apply_mul_s on i32
  // REQUIRE the result in range): |B| + max|x - z_x| * sum |w - z_w| per output channel bounds
  // every partial sum.
  const double zx = double(qx.zero_point[0]);
  const double x_dev =
      std::max(std::fabs(double(qx.qmin()) - zx), std::fabs(double(qx.qmax()) - zx));
  double max_acc = 0;
  for (int64_t c = 0; c < m; ++c) {
    double sum = std::fabs(double(bias[size_t(c)]));
    for (int64_t i = 0; i < per; ++i) {
      sum += x_dev * std::fabs(double(w.weights[size_t(c * per + i)]) - w.weight_zp);
    }
    if (!(sum < kTwo31)) {
      throw Unsupported("an integer conv whose int32 accumulator can overflow (bound " +
                        std::to_string(sum) + ", channel " + std::to_string(c) + ")" + where);
    }
    max_acc = std::max(max_acc, sum);
  }
  const Val x8 = SignedInt8(x, qx, &w.input_zp);
  const Val acc = ConvNhwc(n, x8, bias, w);
  // uint8 outputs in the signed domain too: y - 128, so that RESCALE's i8 saturation is the
  // type's [0, 255].
  const int32_t offset = qy.type == QuantType::kUint8 ? 128 : 0;
  const int32_t zy = static_cast<int32_t>(qy.zero_point[0]);
  return FinishInt8(ToNchw(Rescale(acc, factors, 0, zy - offset, "i8", max_acc, where)), qy, lo_q,
                    hi_q, where);
}

// A requantized i8 value `y` (uint8: y - 128) clamped to [lo_q, hi_q] on y's grid, and uint8
// back to its i32 holder.
Val Emitter::FinishInt8(Val y, const QuantParams& qy, double lo_q, double hi_q,
                        const std::string& where) {
  const int32_t offset = qy.type == QuantType::kUint8 ? 128 : 0;
  if (lo_q > double(qy.qmin()) || hi_q < double(qy.qmax())) {
    // CLAMP on i8, min <= max (spec 1.0, CLAMP: ERROR_IF(max_val < min_val)).
    y = Emit("clamp", {y},
             "min_val = " + std::to_string(int64_t(lo_q) - offset) +
                 " : i8, max_val = " + std::to_string(int64_t(hi_q) - offset) + " : i8",
             y.shape, "i8");
  }
  // (y - 128) - (-128).
  if (offset) y = Rescale(y, {1.0}, -offset, 0, "i32", 255, where);
  return y;
}

// QLinearConv (symmetric int8 weights, integer bias): the activation's bounds quantized as the
// reference quantizes them (kernels/reference/qlinear_conv.cc): round(clamp(v, lo, hi) / s_y) =
// clamp(round(v / s_y), round(lo / s_y), round(hi / s_y)) for s_y > 0.
Val Emitter::QLinearConv(const fusefuzz::Node& n, const Val& x) {
  const std::string where = Where(n);
  if (n.inputs.size() != 1) {
    throw Unsupported("QLinearConv with a residual input (no integer residual add yet)" + where);
  }
  const QuantParams &qx = n.quant.at("x"), &qw = n.quant.at("w"), &qy = n.quant.at("y");
  const double sx = qx.scale[0], sy = qy.scale[0];
  if (!(sx > 0) || !(sy > 0)) throw Unsupported("QLinearConv with a negative scale" + where);
  const Tensor& w = n.params.at("W");
  std::vector<float> bias(size_t(w.shape[0]), 0.0f);
  if (auto it = n.params.find("B"); it != n.params.end()) bias = it->second.data;
  std::vector<double> factors;
  for (int64_t c = 0; c < (qw.PerAxis() ? w.shape[0] : 1); ++c) {
    factors.push_back(sx * qw.Scale(c) / sy);
  }
  double lo = -INFINITY, hi = INFINITY;
  for (const EpilogueStep& s : n.epilogue) {
    if (s.kind == EpilogueKind::kActivation)
      std::tie(lo, hi) = ActivationBounds(s.act, s.attrs, where);
  }
  const double zy = double(qy.zero_point[0]), qmin = double(qy.qmin()), qmax = double(qy.qmax());
  auto bound = [&](double v, double none) {
    return std::isfinite(v) ? std::clamp(std::nearbyint(v / sy) + zy, qmin, qmax) : none;
  };
  return IntegerConv(n, x, qx, {w.data, 0, 0}, bias, factors, qy, bound(lo, qmin), bound(hi, qmax));
}

}  // namespace fusefuzz::mlir
