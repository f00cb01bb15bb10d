// mlir:int8's QuantizeLinear and DequantizeLinear on TOSA integers (tosa_emitter.h): a quantized
// value is an i8 tensor (uint8 values too, read through int32), and every integer step stays
// inside the ranges TOSA defines (targets/mlir/README.md, "UB rules").
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "targets/mlir/tosa_emitter.h"

namespace fusefuzz::mlir {
namespace {

std::string Where(const fusefuzz::Node& n) { return " (node '" + n.name + "')"; }

}  // namespace

// The shape that broadcasts a quantization parameter over `x`: all ones, or the channel count
// along the per-axis dimension.
Shape Emitter::ChannelShape(const QuantParams& q, const Shape& x) const {
  Shape s(x.size(), 1);
  if (q.PerAxis()) s[size_t(q.axis)] = x[size_t(q.axis)];
  return s;
}

Val Emitter::ToFloat(const Val& v) {
  if (v.type == TensorType(v.shape)) return v;
  return Emit("cast", {v}, "", v.shape);  // integers of at most 32 bits below 2^24: exact
}

// y = saturate(round_half_even(x * fl(1/s)) + z): the hello's quantize_rounding
// "reciprocal_multiply" (TOSA has no float division). CAST rounds half to even and saturates;
// the product is clamped first so that the int32 sum with z cannot overflow.
Val Emitter::Quantize(const fusefuzz::Node& n, const Val& x) {
  const QuantParams& q = n.quant.at("y");
  if (x.type != TensorType(x.shape)) throw Unsupported("QuantizeLinear of integers" + Where(n));
  const Shape cs = ChannelShape(q, x.shape);
  std::vector<float> inv;
  std::vector<int32_t> zp;
  for (size_t c = 0; c < q.scale.size(); ++c) {
    inv.push_back(1.0f / static_cast<float>(q.scale[c]));
    zp.push_back(static_cast<int32_t>(q.zero_point[c]));
  }
  // NaN would reach CAST, which LLVM's fptosi leaves undefined: 0 instead (ONNX leaves a NaN's
  // quantization unspecified too).
  const Val number = Emit("equal", {x, x}, "", x.shape, "i1");
  const Val finite = Select(number, x, Scalar(0.0f, x.shape.size()));
  const Val scaled = Clamp(Binary("mul", finite, Const(cs, inv)), -65536.0f, 65536.0f);
  const Val rounded = Emit("cast", {scaled}, "", x.shape, "i32");
  const Val sum = Emit("add", {rounded, IntConst(cs, zp)}, "", x.shape, "i32");
  // Saturation by RESCALE to i8 (CLAMP is defined on i8 and i16, not i32: spec 1.0, CLAMP):
  // uint8 moved down by 128 so that i8's saturation is [0, 255], then back to its i32 holder.
  const int32_t offset = q.type == QuantType::kUint8 ? 128 : 0;
  const Val sat = Rescale(sum, {1.0}, 0, -offset, "i8", 65536 + 256, Where(n));
  if (offset) return Rescale(sat, {1.0}, -offset, 0, "i32", 255, Where(n));
  return sat;
}

// y = (x - z) * s in float32, as ONNX: the difference is an exact integer.
Val Emitter::Dequantize(const fusefuzz::Node& n, const Val& x) {
  const QuantParams& q = n.quant.at("x");
  const Shape cs = ChannelShape(q, x.shape);
  std::vector<float> scale;
  std::vector<int32_t> zp;
  for (size_t c = 0; c < q.scale.size(); ++c) {
    scale.push_back(static_cast<float>(q.scale[c]));
    zp.push_back(static_cast<int32_t>(q.zero_point[c]));
  }
  Val wide = x;
  if (x.type == TensorType(x.shape)) {
    // A graph input holding the integers (checked below by the reference's grid): exact cast.
    wide = Emit("cast", {x}, "", x.shape, "i32");
  } else if (x.type != TensorType(x.shape, "i32")) {
    wide = Emit("cast", {x}, "", x.shape, "i32");
  }
  const Val diff = Emit("sub", {wide, IntConst(cs, zp)}, "", x.shape, "i32");
  return Binary("mul", ToFloat(diff), Const(cs, scale));
}

// QLinearAdd: y = saturate(round(fl(fl((a - z_a) * fl(s_a / s_y)) + fl((b - z_b) *
// fl(s_b / s_y)))) + z_y), relu before the rounding: the float32 requantization of an integer
// kernel, whose three roundings the reference admits (docs/oracle.md, integer-grid term 2). An
// i32 common scale cannot be exact within that bound (README, "QLinearAdd").
Val Emitter::QLinearAdd(const fusefuzz::Node& n) {
  const QuantParams &qa = n.quant.at("a"), &qb = n.quant.at("b"), &qy = n.quant.at("y");
  const double sy = qy.scale[0];
  if (!(qa.scale[0] > 0) || !(qb.scale[0] > 0) || !(sy > 0)) {
    throw Unsupported("QLinearAdd with a negative scale" + Where(n));
  }
  auto term = [&](const Val& v, const QuantParams& q) {
    const Val wide = ElementType(v) == "i32" ? v : Emit("cast", {v}, "", v.shape, "i32");
    const Shape ones(v.shape.size(), 1);
    const Val diff = Emit("sub", {wide, IntConst(ones, {static_cast<int32_t>(q.zero_point[0])})},
                          "", v.shape, "i32");
    const Val real = ToFloat(diff);  // one statement each: the same module text with any compiler
    return Binary("mul", real, Scalar(static_cast<float>(q.scale[0] / sy), ones.size()));
  };
  const Val a = term(In(n, 0), qa);
  const Val b = term(In(n, 1), qb);
  Val sum = Binary("add", a, b);
  if (AttrString(n, "activation") == "relu") sum = Clamp(sum, 0.0f, INFINITY);
  // CAST rounds half to even; clamped first so that it and the i32 add stay in range.
  const Val rounded = Emit("cast", {Clamp(sum, -65536.0f, 65536.0f)}, "", sum.shape, "i32");
  const Shape ones(sum.shape.size(), 1);
  const Val shifted =
      Emit("add", {rounded, IntConst(ones, {static_cast<int32_t>(qy.zero_point[0])})}, "",
           sum.shape, "i32");
  const int32_t offset = qy.type == QuantType::kUint8 ? 128 : 0;
  const Val sat = Rescale(shifted, {1.0}, 0, -offset, "i8", 65536 + 256, Where(n));
  if (offset) return Rescale(sat, {1.0}, -offset, 0, "i32", 255, Where(n));
  return sat;
}

// A constant Pad on a quantized value (the integers before a DequantizeLinear): TOSA PAD on the
// integer tensor, its fill an integer of the tensor's type.
Val Emitter::PadIntegers(const fusefuzz::Node& n, const Val& x) {
  const double value = AttrFloat(n, "value");
  const bool i8 = x.type == TensorType(x.shape, "i8");
  if (AttrString(n, "mode") != "constant" || value != std::nearbyint(value) ||
      value < (i8 ? -128 : INT32_MIN) || value > (i8 ? 127 : INT32_MAX)) {
    throw Unsupported("Pad on quantized integers other than a constant integer fill" + Where(n));
  }
  const std::vector<int64_t> p = AttrInts(n, "pads");  // t, l, b, r
  const std::string element = i8 ? "i8" : "i32";
  Val fill{Fresh(), {1}, TensorType({1}, element)};
  body_ += "    " + fill.ssa + " = \"tosa.const\"() <{values = dense<" +
           std::to_string(static_cast<int64_t>(value)) + "> : " + fill.type + "}> : () -> " +
           fill.type + "\n";
  Shape out = x.shape;
  out[2] += p[0] + p[2];
  out[3] += p[1] + p[3];
  return Emit("pad", {x, ShapeValue({0, 0, 0, 0, p[0], p[2], p[1], p[3]}), fill}, "", out, element);
}

}  // namespace fusefuzz::mlir
