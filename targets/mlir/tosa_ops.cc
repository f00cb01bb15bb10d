// The translation of each fusefuzz op into TOSA (tosa_emitter.h). Each translation computes the
// op's ONNX formula in float32 with the same roundings a float32 engine may make; what TOSA cannot
// say that way (a division by a tensor, a square root, normalizations) is refused per node.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "targets/mlir/tosa_emitter.h"

namespace fusefuzz::mlir {
namespace {

std::string Where(const fusefuzz::Node& n) { return " (node '" + n.name + "')"; }

std::string I64s(const std::vector<int64_t>& v) {
  std::string s = "array<i64: ";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ">";
}

// One spatial dim of a window op. TOSA wants exactly (in + pads - window) / stride + 1 outputs
// with the division exact (spec 2.3, ERROR_IF on the output size); ONNX's floor leaves trailing
// rows no window reads: they go from the end pad first, then are sliced off the input (`crop`).
// ONNX's ceil mode needs more end pad instead.
struct Span {
  int64_t before = 0, after = 0, crop = 0;
};
Span Fit(int64_t in, int64_t window, int64_t stride, int64_t before, int64_t after, int64_t out,
         const std::string& where) {
  const int64_t excess = in + before + after - ((out - 1) * stride + window);
  Span s{before, after, 0};
  if (excess < 0) {
    s.after -= excess;
  } else {
    const int64_t cut = std::min(excess, after);
    s.after -= cut;
    s.crop = excess - cut;
  }
  if (s.crop >= in) throw Unsupported("a window reads only padding" + where);
  return s;
}

// The conv weights OIHW as TOSA's OHWI (conv2d) or [KH, KW, C, M/C] (depthwise_conv2d).
std::vector<float> Ohwi(const Tensor& w) {
  const int64_t m = w.shape[0], c = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  std::vector<float> out(w.data.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          out[size_t(((o * kh + y) * kw + x) * c + i)] =
              w.data[size_t(((o * c + i) * kh + y) * kw + x)];
  return out;
}
std::vector<float> Hwcm(const Tensor& w, int64_t c) {
  const int64_t m = w.shape[0], kh = w.shape[2], kw = w.shape[3], mult = m / c;
  std::vector<float> out(w.data.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t y = 0; y < kh; ++y)
      for (int64_t x = 0; x < kw; ++x)
        out[size_t(((y * kw + x) * c + o / mult) * mult + o % mult)] =
            w.data[size_t((o * kh + y) * kw + x)];
  return out;
}

// A power of two (of either sign): its reciprocal is exact, so x * (1/d) is x / d.
bool PowerOfTwo(float d) {
  int e = 0;
  return std::isfinite(d) && d != 0 && std::fabs(std::frexp(d, &e)) == 0.5f;
}

}  // namespace

Val Emitter::In(const fusefuzz::Node& n, size_t i) const { return values_.at(n.inputs.at(i)); }

Val Emitter::Activation(Op op, const AttrMap& attrs, const ParamMap& params, const Val& x,
                        const std::string& where) {
  const size_t rank = x.shape.size();
  auto scalar = [&](double v) { return Scalar(static_cast<float>(v), rank); };
  auto non_negative = [&] { return Emit("greater_equal", {x, scalar(0)}, "", x.shape, "i1"); };
  switch (op) {
    case Op::Relu:
      return Clamp(x, 0.0f, INFINITY);
    case Op::Relu6:
      return Clamp(x, 0.0f, 6.0f);
    case Op::Clip: {
      const double lo = AttrFloat(op, attrs, "min", where), hi = AttrFloat(op, attrs, "max", where);
      // CLAMP's ERROR_IF(max_val < min_val) (TOSA spec, CLAMP).
      if (!(lo <= hi))
        throw Unsupported("Clip with min > max: TOSA CLAMP requires min <= max" + where);
      return Clamp(x, static_cast<float>(lo), static_cast<float>(hi));
    }
    case Op::LeakyRelu:
      return Select(non_negative(), x,
                    Binary("mul", x, scalar(AttrFloat(op, attrs, "alpha", where))));
    case Op::PRelu: {
      const Tensor& s = params.at("slope");
      return Select(non_negative(), x, Binary("mul", x, Const(s.shape, s.data)));
    }
    case Op::Elu: {
      const Val em1 = Binary("sub", Unary("exp", x), scalar(1));
      return Select(non_negative(), x,
                    Binary("mul", em1, scalar(AttrFloat(op, attrs, "alpha", where))));
    }
    case Op::Sigmoid:
      return Unary("sigmoid", x);
    case Op::Tanh:
      return Unary("tanh", x);
    case Op::HardSigmoid: {
      const Val ax = Binary("mul", x, scalar(AttrFloat(op, attrs, "alpha", where)));
      return Clamp(Binary("add", ax, scalar(AttrFloat(op, attrs, "beta", where))), 0.0f, 1.0f);
    }
    case Op::Silu:
      return Binary("mul", x, Unary("sigmoid", x));
    case Op::HardSwish: {
      const Val t = Binary("add", Binary("mul", x, scalar(1.0 / 6.0)), scalar(0.5));
      return Binary("mul", x, Clamp(t, 0.0f, 1.0f));
    }
    case Op::Gelu: {
      Val t;
      if (AttrString(op, attrs, "approximate", where) == "tanh") {
        const Val x3 = Binary("mul", Binary("mul", x, x), x);
        const Val inner = Binary("add", x, Binary("mul", x3, scalar(0.044715)));
        t = Unary("tanh", Binary("mul", inner, scalar(std::sqrt(2.0 / M_PI))));
      } else {
        t = Unary("erf", Binary("mul", x, scalar(1.0 / std::sqrt(2.0))));
      }
      return Binary("mul", Binary("mul", x, Binary("add", t, scalar(1))), scalar(0.5));
    }
    case Op::Conv:
    case Op::FusedConv:
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
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
  throw std::logic_error("not an activation: " + std::string(OpName(op)) + where);
}

Val Emitter::Conv(const fusefuzz::Node& n, const Val& x) {
  std::vector<float> bias(size_t(n.params.at("W").shape[0]), 0.0f);
  if (auto it = n.params.find("B"); it != n.params.end()) bias = it->second.data;
  return ToNchw(ConvNhwc(n, x, bias, std::nullopt));
}

// The convolution in NHWC: float32 (no `integer`), or on i8 with the zero points and weight
// integers of `integer` and an i32 accumulator and bias (tosa_qconv.cc).
Val Emitter::ConvNhwc(const fusefuzz::Node& n, const Val& x, const std::vector<float>& bias,
                      const std::optional<IntegerWeights>& integer_weights) {
  const ConvAttrs a = GetConvAttrs(n);
  Tensor w = n.params.at("W");
  if (integer_weights) w.data = integer_weights->weights;
  const int64_t m = w.shape[0], kh = w.shape[2], kw = w.shape[3], c = x.shape[1];
  const Shape& y = r_.shapes.at(n.output);
  const Span sh = Fit(x.shape[2], (kh - 1) * a.dilation_h + 1, a.stride_h, a.pad_top, a.pad_bottom,
                      y[2], Where(n));
  const Span sw = Fit(x.shape[3], (kw - 1) * a.dilation_w + 1, a.stride_w, a.pad_left, a.pad_right,
                      y[3], Where(n));
  Val in = ToNhwc(x);
  if (sh.crop || sw.crop) {
    in = Slice(in, {0, 0, 0, 0}, {in.shape[0], in.shape[1] - sh.crop, in.shape[2] - sw.crop, c});
  }
  const bool integer = integer_weights.has_value();
  const std::string acc = integer ? "i32" : "f32";
  const std::string props = "acc_type = " + acc +
                            ", dilation = " + I64s({a.dilation_h, a.dilation_w}) +
                            ", pad = " + I64s({sh.before, sh.after, sw.before, sw.after}) +
                            ", stride = " + I64s({a.stride_h, a.stride_w});
  // Weights, bias and zero points in the conv's types: integers held exactly in the floats.
  auto weights = [&](const Shape& s, const std::vector<float>& v) {
    return integer ? IntConst(s, std::vector<int32_t>(v.begin(), v.end()), "i8") : Const(s, v);
  };
  auto biases = [&](const std::vector<float>& v) {
    const Shape s = {int64_t(v.size())};
    return integer ? IntConst(s, std::vector<int32_t>(v.begin(), v.end())) : Const(s, v);
  };
  auto zero_points = [&]() -> std::vector<Val> {
    if (!integer) return {ZeroPoint(), ZeroPoint()};
    return {IntConst({1}, {integer_weights->input_zp}, "i8"),
            IntConst({1}, {integer_weights->weight_zp}, "i8")};
  };
  auto conv = [&](const std::string& op, const Val& input, const Val& wt, const Val& b,
                  const Shape& out) {
    const std::vector<Val> zp = zero_points();
    return Emit(op, {input, wt, b, zp[0], zp[1]}, props, out, acc);
  };
  const Shape out = {y[0], y[2], y[3], m};
  // Constants in a fixed order (one statement each): the module text is the same whatever order a
  // compiler evaluates arguments in.
  if (a.group == 1) {
    const Val wt = weights({m, kh, kw, c}, Ohwi(w));
    return conv("conv2d", in, wt, biases(bias), out);
  }
  if (a.group == c && w.shape[1] == 1 && m % c == 0) {
    const Val wt = weights({kh, kw, c, m / c}, Hwcm(w, c));
    return conv("depthwise_conv2d", in, wt, biases(bias), out);
  }
  // Other groups: one conv2d per group on its slice of the channels, concatenated.
  const int64_t cg = c / a.group, mg = m / a.group;
  const std::vector<float> ohwi = Ohwi(w);
  std::vector<Val> parts;
  for (int64_t g = 0; g < a.group; ++g) {
    const Val part = Slice(in, {0, 0, 0, g * cg}, {in.shape[0], in.shape[1], in.shape[2], cg});
    const size_t per = size_t(mg * kh * kw * cg);
    const std::vector<float> wg(ohwi.begin() + ptrdiff_t(size_t(g) * per),
                                ohwi.begin() + ptrdiff_t(size_t(g + 1) * per));
    const std::vector<float> bg(bias.begin() + g * mg, bias.begin() + (g + 1) * mg);
    const Val wt = weights({mg, kh, kw, cg}, wg);
    parts.push_back(conv("conv2d", part, wt, biases(bg), {y[0], y[2], y[3], mg}));
  }
  return Emit("concat", parts, "axis = 3 : i32", out, acc);
}

Val Emitter::Pool(const fusefuzz::Node& n, const Val& x) {
  const PoolAttrs p = GetPoolAttrs(n);
  if (p.dilation_h != 1 || p.dilation_w != 1) {
    throw Unsupported("dilated pooling: TOSA pools have no dilation" + Where(n));
  }
  const Shape& y = r_.shapes.at(n.output);
  Span sh = Fit(x.shape[2], p.kernel_h, p.stride_h, p.pad_top, p.pad_bottom, y[2], Where(n));
  Span sw = Fit(x.shape[3], p.kernel_w, p.stride_w, p.pad_left, p.pad_right, y[3], Where(n));
  // AVG_POOL2D / MAX_POOL2D: ERROR_IF(pad >= kernel) (TOSA spec).
  if (sh.before >= p.kernel_h || sh.after >= p.kernel_h || sw.before >= p.kernel_w ||
      sw.after >= p.kernel_w) {
    throw Unsupported("pool padding not below the kernel size" + Where(n));
  }
  Val in = ToNhwc(x);
  if (sh.crop || sw.crop) {
    in = Slice(in, {0, 0, 0, 0},
               {in.shape[0], in.shape[1] - sh.crop, in.shape[2] - sw.crop, in.shape[3]});
  }
  const bool avg = n.op == Op::AvgPool;
  if (avg && p.count_include_pad && (sh.before || sh.after || sw.before || sw.after)) {
    // TOSA's average excludes padding: pad with zeros first so that they count.
    if (sh.after > p.pad_bottom || sw.after > p.pad_right) {
      throw Unsupported("count_include_pad with ceil_mode windows beyond the pads" + Where(n));
    }
    in = PadConstant(in, {0, 0, sh.before, sh.after, sw.before, sw.after, 0, 0}, 0.0f);
    sh = Span{};
    sw = Span{};
  }
  const std::string props = "kernel = " + I64s({p.kernel_h, p.kernel_w}) +
                            ", pad = " + I64s({sh.before, sh.after, sw.before, sw.after}) +
                            ", stride = " + I64s({p.stride_h, p.stride_w});
  const Shape out = {y[0], y[2], y[3], y[1]};
  if (avg)
    return ToNchw(
        Emit("avg_pool2d", {in, ZeroPoint(), ZeroPoint()}, "acc_type = f32, " + props, out));
  return ToNchw(Emit("max_pool2d", {in}, props, out));
}

Val Emitter::ReduceMean(const Val& x, std::vector<int64_t> axes, const Shape& out) {
  const int64_t rank = int64_t(x.shape.size());
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  // Reduced dims outermost, then [1, R, 1, M] NHWC: one average pool of an R x 1 window, which
  // divides the sum by R (not a multiplication by a rounded 1/R).
  std::vector<int64_t> perm = axes;
  int64_t reduced = 1, kept = 1;
  for (int64_t a : axes) reduced *= x.shape[size_t(a)];
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(axes.begin(), axes.end(), d) != axes.end()) continue;
    perm.push_back(d);
    kept *= x.shape[size_t(d)];
  }
  std::vector<int64_t> identity(static_cast<size_t>(rank), 0);
  std::iota(identity.begin(), identity.end(), 0);
  const Val t = perm == identity ? x : Transpose(x, perm);
  const Val v = Reshape(t, {1, reduced, 1, kept});
  const Val pooled = Emit("avg_pool2d", {v, ZeroPoint(), ZeroPoint()},
                          "acc_type = f32, kernel = " + I64s({reduced, 1}) +
                              ", pad = " + I64s({0, 0, 0, 0}) + ", stride = " + I64s({1, 1}),
                          {1, 1, 1, kept});
  return Reshape(pooled, out);
}

Val Emitter::BinaryNode(const fusefuzz::Node& n) {
  const BinaryOperands o = GetBinaryOperands(n);
  const Val a = o.const_a ? Const(o.const_a->shape, o.const_a->data) : In(n, size_t(o.input_a));
  if (n.op == Op::Div) {
    // TOSA has no float division: x * (1/d), exact for a power of two d, else two roundings
    // (RECIPROCAL, then MUL), the decomposition an engine without a divide runs.
    if (o.const_b && std::all_of(o.const_b->data.begin(), o.const_b->data.end(), PowerOfTwo)) {
      std::vector<float> inv = o.const_b->data;
      for (float& v : inv) v = 1.0f / v;
      return Binary("mul", a, Const(o.const_b->shape, inv));
    }
    const Val d = o.const_b ? Const(o.const_b->shape, o.const_b->data) : In(n, size_t(o.input_b));
    return Binary("mul", a, Unary("reciprocal", d));
  }
  const Val b = o.const_b ? Const(o.const_b->shape, o.const_b->data) : In(n, size_t(o.input_b));
  return Binary(n.op == Op::Add ? "add" : n.op == Op::Sub ? "sub" : "mul", a, b);
}

Val Emitter::BatchNorm(const fusefuzz::Node& n, const Val& x) {
  // y = x * s + t with s = scale / sqrt(var + eps), t = bias - mean * s, folded in double: what
  // every float32 runtime runs.
  const double eps = AttrFloat(n, "epsilon");
  const std::vector<float>&sc = n.params.at("scale").data, &bi = n.params.at("bias").data,
        &mu = n.params.at("mean").data, &var = n.params.at("var").data;
  std::vector<float> s(sc.size()), t(sc.size());
  for (size_t c = 0; c < sc.size(); ++c) {
    const double k = double(sc[c]) / std::sqrt(double(var[c]) + eps);
    s[c] = static_cast<float>(k);
    t[c] = static_cast<float>(double(bi[c]) - double(mu[c]) * k);
  }
  Shape cs(x.shape.size(), 1);
  cs[1] = int64_t(sc.size());
  return Binary("add", Binary("mul", x, Const(cs, s)), Const(cs, t));
}

}  // namespace fusefuzz::mlir
