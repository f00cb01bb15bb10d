// mlir:int8's QLinearConv on TOSA integers (tosa_emitter.h): an i8 conv2d / depthwise_conv2d
// with the input zero point as its `input_zp` operand, an i32 accumulator and bias, then a
// RESCALE to the output's 8 bits with a 31-bit multiplier and shift per output channel, and the
// activation as an i8 CLAMP. Nothing TOSA leaves undefined is sent: each rule below names its
// section of the TOSA 1.0 specification (targets/mlir/README.md, "UB rules").
#include <algorithm>
#include <cmath>
#include <stdexcept>

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

// y = saturate(round(s_x s_w[m] / s_y * acc) + z_y), acc = sum (x - z_x) w + B, clamped by the
// activation's bounds quantized as the reference quantizes them (kernels/reference/
// qlinear_conv.cc): round(clamp(v, lo, hi) / s_y) = clamp(round(v / s_y), round(lo / s_y),
// round(hi / s_y)) for s_y > 0.
Val Emitter::QLinearConv(const fusefuzz::Node& n, const Val& x) {
  const std::string where = Where(n);
  if (n.inputs.size() != 1) {
    throw Unsupported("QLinearConv with a residual input (no integer residual add yet)" + where);
  }
  const QuantParams &qx = n.quant.at("x"), &qw = n.quant.at("w"), &qy = n.quant.at("y");
  const double sx = qx.scale[0], sy = qy.scale[0];
  if (!(sx > 0) || !(sy > 0)) throw Unsupported("QLinearConv with a negative scale" + where);
  const Tensor& w = n.params.at("W");
  const int64_t m = w.shape[0], per = w.size() / m;
  std::vector<float> bias(size_t(m), 0.0f);
  if (auto it = n.params.find("B"); it != n.params.end()) bias = it->second.data;
  // The i32 accumulator must not overflow (spec 1.0, CONV2D: apply_add_s / apply_mul_s on i32
  // REQUIRE the result in range): |B| + max|x - z_x| * sum |w| per output channel, a bound of
  // every partial sum.
  const double zx = double(qx.zero_point[0]);
  const double x_dev =
      std::max(std::fabs(double(qx.qmin()) - zx), std::fabs(double(qx.qmax()) - zx));
  double max_acc = 0;
  std::vector<double> factors;
  for (int64_t c = 0; c < m; ++c) {
    double sum = std::fabs(double(bias[size_t(c)]));
    for (int64_t i = 0; i < per; ++i) sum += x_dev * std::fabs(double(w.data[size_t(c * per + i)]));
    if (!(sum < kTwo31)) {
      throw Unsupported("QLinearConv whose int32 accumulator can overflow (bound " +
                        std::to_string(sum) + ", channel " + std::to_string(c) + ")" + where);
    }
    max_acc = std::max(max_acc, sum);
    factors.push_back(sx * qw.Scale(c) / sy);
  }
  if (!qw.PerAxis()) factors.resize(1);
  int32_t zx8 = 0;
  const Val x8 = SignedInt8(x, qx, &zx8);
  const Val acc = ConvNhwc(n, x8, bias, zx8);
  // uint8 outputs in the signed domain too: y - 128, so that RESCALE's i8 saturation is the
  // type's [0, 255].
  const int32_t offset = qy.type == QuantType::kUint8 ? 128 : 0;
  const int32_t zy = static_cast<int32_t>(qy.zero_point[0]);
  Val y = Rescale(acc, factors, 0, zy - offset, "i8", max_acc, where);
  double lo = -INFINITY, hi = INFINITY;
  for (const EpilogueStep& s : n.epilogue) {
    if (s.kind != EpilogueKind::kActivation) continue;
    // The verifier allows only these three here (ir/verifier_quant.cc).
    if (s.act == Op::Relu) {
      lo = 0;
    } else if (s.act == Op::Relu6) {
      lo = 0, hi = 6;
    } else if (s.act == Op::Clip) {
      lo = AttrFloat(Op::Clip, s.attrs, "min", where);
      hi = AttrFloat(Op::Clip, s.attrs, "max", where);
      if (lo > hi) lo = hi;  // ONNX Clip with min > max: max everywhere
    } else {
      throw Unsupported("QLinearConv activation " + std::string(OpName(s.act)) + where);
    }
  }
  auto bound = [&](double v) {
    return std::clamp(std::nearbyint(v / sy) + zy, double(qy.qmin()), double(qy.qmax()));
  };
  const double lo_q = std::isfinite(lo) ? bound(lo) : double(qy.qmin());
  const double hi_q = std::isfinite(hi) ? bound(hi) : double(qy.qmax());
  if (lo_q > double(qy.qmin()) || hi_q < double(qy.qmax())) {
    // CLAMP on i8, min <= max (spec 1.0, CLAMP: ERROR_IF(max_val < min_val)).
    y = Emit("clamp", {y},
             "min_val = " + std::to_string(int64_t(lo_q) - offset) +
                 " : i8, max_val = " + std::to_string(int64_t(hi_q) - offset) + " : i8",
             y.shape, "i8");
  }
  y = ToNchw(y);
  // uint8 back to its i32 holder: (y - 128) - (-128).
  if (offset) y = Rescale(y, {1.0}, -offset, 0, "i32", 255, where);
  return y;
}

}  // namespace fusefuzz::mlir
