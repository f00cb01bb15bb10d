// Single-op emitters: parameters are chosen so that the result is valid for any rank-4 input.
#include <algorithm>
#include <cmath>

#include "generators/gen_builder.h"
#include "ir/broadcast.h"
#include "ir/error.h"
#include "ir/verifier.h"

namespace fusefuzz::gen {
namespace {

// Float attributes hold float32-exact values so that float and double executions agree on them.
double F(double v) { return static_cast<double>(static_cast<float>(v)); }

double PickEpsilon(ChoiceSource& src, const GenProbabilities& p, bool* set) {
  static const double kEps[] = {1e-5, 1e-3, 1e-6, 1e-2, 0.1};
  static const double kW[] = {3, 1, 1, 1, 0.5};
  size_t i = src.Pick(kW);
  *set = i != 0 || src.Bool(p.explicit_default_eps);  // the default is sometimes spelled out
  return F(kEps[i]);
}

}  // namespace

int64_t Builder::ChooseGroup(int64_t c) {
  const GenProbabilities& p = cfg_.probabilities;
  if (c > 1 && src_.Bool(p.depthwise)) return c;
  if (src_.Bool(p.grouped)) {
    std::vector<int64_t> opts;
    for (int64_t g : {2, 4})
      if (g < c && c % g == 0) opts.push_back(g);
    if (!opts.empty()) return opts[static_cast<size_t>(src_.Int(0, int64_t(opts.size()) - 1))];
  }
  return 1;
}

namespace {
struct ConvSpec {
  AttrMap attrs;
  ParamMap params;
  Shape out;
};

int64_t PickKernel(ChoiceSource& src, int64_t max_kernel, bool odd_only) {
  std::vector<int64_t> ks;
  std::vector<double> w;
  const double kW[] = {0, 3, 0.5, 4, 0.3, 1, 0.1, 0.2};
  for (int64_t k = 1; k <= max_kernel && k <= 7; ++k) {
    if (odd_only && k % 2 == 0) continue;
    ks.push_back(k);
    w.push_back(kW[k]);
  }
  return ks[src.Pick(w)];
}
}  // namespace

// Shared by Conv and FusedConv.
static ConvSpec MakeConv(Builder& b, const std::string& x, const ConvOpts& o, int64_t group) {
  ChoiceSource& src = b.src();
  const GenConfig& cfg = b.cfg();
  const GenProbabilities& p = cfg.probabilities;
  const Shape& s = b.ShapeOf(x);
  int64_t c = s[1], h = s[2], w = s[3];
  int64_t maxc = cfg.limits.max_channels;
  int64_t m;
  if (o.same_shape) {
    m = c;
  } else if (o.out_channels > 0) {
    m = o.out_channels;
    if (m % group != 0) group = 1;
  } else if (group == c && group > 1) {
    m = c * src.Int(1, std::max<int64_t>(1, std::min<int64_t>(3, maxc / c)));  // multiplier
  } else if (group == 1 && src.Bool(p.single_out_channel)) {
    m = 1;  // a per-channel constant after it is also a scalar one
  } else {
    m = group * src.Int(1, std::max<int64_t>(1, maxc / group));
  }
  int64_t kh, kw, dh = 1, dw = 1, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  if (o.same_shape) {
    kh = o.kernel > 0 ? o.kernel : PickKernel(src, cfg.limits.max_kernel, true);
    kw = src.Bool(p.non_square_kernel) ? PickKernel(src, cfg.limits.max_kernel, true) : kh;
    if (src.Bool(p.dilation)) dh = dw = 2;
    pt = pb = dh * (kh - 1) / 2;
    pl = pr = dw * (kw - 1) / 2;
  } else {
    kh = o.kernel > 0 ? o.kernel : PickKernel(src, cfg.limits.max_kernel, false);
    kw = o.kernel > 0
             ? o.kernel
             : (src.Bool(p.non_square_kernel) ? PickKernel(src, cfg.limits.max_kernel, false) : kh);
    if (src.Bool(p.dilation)) dh = dw = src.Int(2, 3);
    if (src.Bool(p.stride)) {
      sh = src.Int(2, 3);
      sw = src.Bool(p.equal_strides) ? sh : src.Int(1, 3);
    }
    // Fit the kernel to the input: give up dilation first, then shrink the kernel.
    auto fit = [](int64_t in, int64_t& k, int64_t& d) {
      if (d * (k - 1) + 1 > in) d = 1;
      if (k > in) k = in;
    };
    fit(h, kh, dh);
    fit(w, kw, dw);
    if (!o.no_pads) {
      int64_t span_h = dh * (kh - 1) + 1, span_w = dw * (kw - 1) + 1;
      if (src.Bool(p.wide_pads)) {
        // Pads up to the kernel extent: output pixels that see only padding, and padded 1x1
        // convs (a fold must still add the bias there, and pad-conv-fold must add, not set).
        pt = src.Int(0, span_h);
        pb = src.Int(0, span_h);
        pl = src.Int(0, span_w);
        pr = src.Int(0, span_w);
        switch (src.Int(0, 3)) {  // the side that reaches the extent
          case 0:
            pt = span_h;
            break;
          case 1:
            pb = span_h;
            break;
          case 2:
            pl = span_w;
            break;
          default:
            pr = span_w;
        }
      } else if (src.Bool(p.asymmetric_pads)) {
        pt = src.Int(0, span_h - 1);
        pb = src.Int(0, span_h - 1);
        pl = src.Int(0, span_w - 1);
        pr = src.Int(0, span_w - 1);
      } else if (src.Bool(p.symmetric_pads)) {  // "same"-style symmetric padding
        pt = pb = (span_h - 1) / 2;
        pl = pr = (span_w - 1) / 2;
      }
      // Keep spatial sizes bounded: past the limit, pads may not grow the output.
      if (h >= cfg.limits.max_spatial) pt = std::min(pt, span_h - 1);
      if (w >= cfg.limits.max_spatial) pl = std::min(pl, span_w - 1);
      if (h >= cfg.limits.max_spatial) pb = std::min(pb, std::max<int64_t>(0, span_h - 1 - pt));
      if (w >= cfg.limits.max_spatial) pr = std::min(pr, std::max<int64_t>(0, span_w - 1 - pl));
    }
  }
  ConvSpec spec;
  if (sh != 1 || sw != 1) spec.attrs["strides"] = std::vector<int64_t>{sh, sw};
  if (dh != 1 || dw != 1) spec.attrs["dilations"] = std::vector<int64_t>{dh, dw};
  if (pt || pl || pb || pr) spec.attrs["pads"] = std::vector<int64_t>{pt, pl, pb, pr};
  if (group != 1) spec.attrs["group"] = group;
  int64_t cg = c / group;
  spec.params["W"] = b.ConvWeights({m, cg, kh, kw}, cg * kh * kw);
  if (src.Bool(p.conv_bias)) spec.params["B"] = b.Bias(m);
  spec.out = {s[0], m, ConvOutputSize(h, kh, sh, dh, pt, pb),
              ConvOutputSize(w, kw, sw, dw, pl, pr)};
  return spec;
}

std::string Builder::EmitConv(const std::string& x, const ConvOpts& o) {
  int64_t group = ChooseGroup(ShapeOf(x)[1]);
  ConvSpec spec = MakeConv(*this, x, o, group);
  return AddNode(Op::Conv, {x}, std::move(spec.attrs), std::move(spec.params));
}

std::string Builder::EmitFusedConv(const std::string& x, const ConvOpts& o) {
  int64_t group = ChooseGroup(ShapeOf(x)[1]);
  ConvSpec spec = MakeConv(*this, x, o, group);
  const int64_t m = spec.out[1];
  std::vector<std::string> ins = {x};
  std::vector<EpilogueStep> epi;
  int64_t steps = src_.Int(0, 3);
  for (int64_t i = 0; i < steps; ++i) {
    const double kW[] = {1, ins.size() == 1 ? 1.0 : 0.0, AnyActivation() ? 2.0 : 0.0, 0.7};
    EpilogueStep st;
    switch (src_.Pick(kW)) {
      case 0:
        st.kind = EpilogueKind::kScaleShift;
        st.params["scale"] = UniformTensor({m}, -2, 2);
        st.params["shift"] = UniformTensor({m}, -1, 1);
        break;
      case 1: {
        st.kind = EpilogueKind::kAdd;
        st.input = 1;
        auto same = ValuesWithShape(spec.out);
        if (!same.empty() && src_.Bool(cfg_.probabilities.reuse_operand)) {
          ins.push_back(same[static_cast<size_t>(src_.Int(0, int64_t(same.size()) - 1))]);
        } else {
          ins.push_back(AddInput(src_.Bool(cfg_.probabilities.epilogue_add_full_shape)
                                     ? spec.out
                                     : Shape{1, m, 1, 1}));
        }
        break;
      }
      case 2:
        st.kind = EpilogueKind::kActivation;
        st.act = *PickActivation();
        ActivationParams(st.act, spec.out, true, &st.attrs, &st.params);
        break;
      default: {
        st.kind = EpilogueKind::kClamp;
        const auto& k = KinkValues();
        float a = k[static_cast<size_t>(src_.Int(0, int64_t(k.size()) - 1))];
        float c = k[static_cast<size_t>(src_.Int(0, int64_t(k.size()) - 1))];
        st.attrs["min"] = double(std::min(a, c));
        st.attrs["max"] = double(std::max(a, c));
      }
    }
    epi.push_back(std::move(st));
  }
  return AddNode(Op::FusedConv, std::move(ins), std::move(spec.attrs), std::move(spec.params),
                 std::move(epi));
}

std::string Builder::EmitBatchNorm(const std::string& x) {
  const GenProbabilities& p = cfg_.probabilities;
  int64_t c = ShapeOf(x)[1];
  bool special_gamma = src_.Bool(p.bn_special_gamma);
  bool tiny_var = src_.Bool(p.tiny_var);
  SeededSource sub(static_cast<uint64_t>(src_.Int(0, std::numeric_limits<int64_t>::max())));
  Tensor gamma({c}), var({c});
  for (int64_t i = 0; i < c; ++i) {
    double g = sub.Uniform(0.5, 1.5) * (sub.Bool(p.bn_negative_gamma) ? -1 : 1);
    if (special_gamma && sub.Bool(p.bn_special_gamma_channel)) {
      switch (sub.Int(0, 2)) {
        case 0:
          g = -sub.Uniform(0.5, 2);
          break;
        case 1:
          g = 0;
          break;
        default:
          g = sub.Uniform(1e-6, 1e-5) * (sub.Bool(0.5) ? -1 : 1);
      }
    }
    gamma.data[static_cast<size_t>(i)] = static_cast<float>(g);
    double v =
        tiny_var && sub.Bool(p.tiny_var_channel) ? sub.Uniform(1e-6, 1e-3) : sub.Uniform(0.25, 2);
    var.data[static_cast<size_t>(i)] = static_cast<float>(v);
  }
  ParamMap params;
  params["scale"] = std::move(gamma);
  params["bias"] = UniformTensor({c}, -1, 1);
  params["mean"] = UniformTensor({c}, -1, 1);
  params["var"] = std::move(var);
  AttrMap attrs;
  bool set = false;
  double eps = PickEpsilon(src_, cfg_.probabilities, &set);
  if (set) attrs["epsilon"] = eps;
  return AddNode(Op::BatchNorm, {x}, std::move(attrs), std::move(params));
}

std::string Builder::EmitNorm(Op op, const std::string& x) {
  const Shape& s = ShapeOf(x);
  AttrMap attrs;
  ParamMap params;
  Shape pshape = {s[1]};
  if (op == Op::LayerNorm) {
    const int64_t kAxes[] = {1, 2, 3, -1};
    const double kW[] = {2, 1, 1, 0.5};
    int64_t axis = kAxes[src_.Pick(kW)];
    if (axis != 1) attrs["axis"] = axis;
    int64_t a = axis < 0 ? axis + 4 : axis;
    pshape = Shape(s.begin() + a, s.end());
  } else if (op == Op::GroupNorm) {
    std::vector<int64_t> divs;
    for (int64_t g = 1; g <= s[1]; ++g)
      if (s[1] % g == 0) divs.push_back(g);
    attrs["num_groups"] = divs[static_cast<size_t>(src_.Int(0, int64_t(divs.size()) - 1))];
  }
  Tensor scale = UniformTensor(pshape, 0.5, 1.5);
  if (src_.Bool(cfg_.probabilities.norm_negative_scale)) {
    for (float& v : scale.data) v = -v;  // negative gamma flips the normalized sign
  }
  params["scale"] = std::move(scale);
  params["bias"] = UniformTensor(pshape, -1, 1);
  bool set = false;
  double eps = PickEpsilon(src_, cfg_.probabilities, &set);
  if (set) attrs["epsilon"] = eps;
  return AddNode(op, {x}, std::move(attrs), std::move(params));
}

Shape Builder::PReluSlopeShape(const Shape& x, bool epilogue) {
  const GenProbabilities& p = cfg_.probabilities;
  if (src_.Bool(p.prelu_scalar_slope)) return {1};
  if (epilogue || !src_.Bool(p.prelu_broadcast_slope)) return PerChannelSlopeShape(x);
  // A slope that varies along other dims than C: a mask of the dims where x > 1 (bit 0 = last
  // dim) other than the channel alone, e.g. [W] (which a per-channel reading would confuse with
  // [C] when C == W), [H, W], [C, H, W] or [N, 1, 1, 1]. Leading 1s are dropped.
  const int64_t r = static_cast<int64_t>(x.size());
  const int channel = r >= 2 ? 1 << (r - 2) : 0;
  std::vector<int> masks;
  int valid = 0;
  for (int64_t i = 0; i < r; ++i) {
    if (x[size_t(i)] > 1) valid |= 1 << (r - 1 - i);
  }
  for (int m = 1; m < (1 << r); ++m) {
    if ((m & ~valid) == 0 && m != channel) masks.push_back(m);
  }
  if (masks.empty()) return PerChannelSlopeShape(x);
  const int mask = masks[static_cast<size_t>(src_.Int(0, int64_t(masks.size()) - 1))];
  Shape s;
  for (int64_t i = 0; i < r; ++i) {
    const bool on = mask & (1 << (r - 1 - i));
    if (s.empty() && !on) continue;
    s.push_back(on ? x[size_t(i)] : 1);
  }
  return s;
}

void Builder::ActivationParams(Op act, const Shape& x, bool epilogue, AttrMap* attrs,
                               ParamMap* params) {
  bool nd = src_.Bool(cfg_.probabilities.nondefault_act_params);
  switch (act) {
    case Op::Clip: {
      static const double kBounds[][2] = {{0, 6}, {-1, 1}, {0, 1}, {-0.5, 3}, {-6, 6}, {-2.5, 2.5}};
      double lo, hi;
      if (src_.Bool(cfg_.probabilities.clip_table_bounds)) {
        auto i = static_cast<size_t>(src_.Int(0, 5));
        lo = kBounds[i][0];
        hi = kBounds[i][1];
      } else {
        lo = F(src_.Uniform(-2, 0.5));
        hi = src_.Bool(cfg_.probabilities.clip_point)
                 ? lo                           // min == max: a constant output
                 : F(lo + src_.Uniform(0, 3));  // rounding is monotonic: hi >= lo
        // min > max: ONNX's Clip then outputs max everywhere (min(max(x, min), max)).
        if (lo < hi && src_.Bool(cfg_.probabilities.clip_inverted)) std::swap(lo, hi);
      }
      (*attrs)["min"] = lo;
      (*attrs)["max"] = hi;
      break;
    }
    case Op::LeakyRelu:
      if (nd) {
        const double kA[] = {0.1, 0.2, 0.3, 1.5, 0.0, -0.2};
        (*attrs)["alpha"] = F(kA[src_.Int(0, 5)]);
      }
      break;
    case Op::PRelu:
      (*params)["slope"] = UniformTensor(PReluSlopeShape(x, epilogue), -0.5, 1.5);
      break;
    case Op::Elu:
      if (nd) (*attrs)["alpha"] = src_.Bool(cfg_.probabilities.elu_small_alpha) ? 0.5 : 2.0;
      break;
    case Op::HardSigmoid:
      if (nd) {
        const double kAB[][2] = {{1.0 / 6, 0.5}, {0.5, 0.25}, {0.2, 0.5}};
        auto i = static_cast<size_t>(src_.Int(0, 2));
        (*attrs)["alpha"] = F(kAB[i][0]);
        (*attrs)["beta"] = F(kAB[i][1]);
      }
      break;
    case Op::Gelu:
      if (nd && src_.Bool(cfg_.probabilities.gelu_tanh))
        (*attrs)["approximate"] = std::string("tanh");
      break;
    case Op::Conv:
    case Op::FusedConv:
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::Relu:
    case Op::Relu6:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::HardSwish:
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
      break;  // not activations
  }
}

std::string Builder::EmitActivation(Op op, const std::string& x) {
  AttrMap attrs;
  ParamMap params;
  ActivationParams(op, ShapeOf(x), false, &attrs, &params);
  return AddNode(op, {x}, std::move(attrs), std::move(params));
}

std::string Builder::EmitBinaryWith(Op op, const std::string& x, const std::string& y) {
  return AddNode(op, {x, y});
}

std::string Builder::EmitBinary(Op op, const std::string& x, int64_t budget) {
  const GenProbabilities& p = cfg_.probabilities;
  const Shape s = ShapeOf(x);
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  auto operand_shape = [&]() -> Shape {
    const double kW[] = {3, 1, 1, 0.5};
    switch (src_.Pick(kW)) {
      case 0:
        return s;
      case 1:
        return {n, c, 1, 1};
      case 2:
        return {1, c, 1, 1};
      default:
        return {1, 1, h, w};
    }
  };
  if (op == Op::Div) {
    // Divisors are never computed values: a divisor near zero would make the case
    // ill-conditioned, and the oracle could not tell fusion errors from conditioning.
    Op combine = Allowed(Op::Mul) ? Op::Mul : Op::Add;
    if (budget >= 2 && src_.Bool(p.const_on_left) && Allowed(combine)) {
      // c / d with a fresh divisor input d, then combined with x.
      std::string d = AddInput(operand_shape(), InputKind::kAwayFromZero);
      ParamMap params;
      params["A"] = ConstOperand(Op::Div, ConstShape(ShapeOf(d)), false);
      std::string q = AddNode(Op::Div, {d}, {}, std::move(params));
      return src_.Bool(p.swap_operands) ? AddNode(combine, {x, q}) : AddNode(combine, {q, x});
    }
    if (src_.Bool(p.binary_with_value)) {
      return AddNode(Op::Div, {x, AddInput(operand_shape(), InputKind::kAwayFromZero)});
    }
    return EmitBinaryConst(Op::Div, x);
  }
  if (src_.Bool(p.binary_with_value)) {
    std::string y;
    auto same = ValuesWithShape(s);
    same.erase(std::remove(same.begin(), same.end(), x), same.end());
    if (!same.empty() && src_.Bool(p.reuse_operand)) {
      y = same[static_cast<size_t>(src_.Int(0, int64_t(same.size()) - 1))];
    } else {
      y = AddInput(operand_shape());
    }
    return src_.Bool(p.swap_operands) ? AddNode(op, {x, y}) : AddNode(op, {y, x});
  }
  return EmitBinaryConst(op, x);
}

std::string Builder::EmitBinaryConst(Op op, const std::string& x) {
  // Div keeps the constant as divisor (c / x would divide by a computed value).
  const bool left = op != Op::Div && src_.Bool(cfg_.probabilities.const_on_left);
  ParamMap params;
  params[left ? "A" : "B"] = ConstOperand(op, ConstShape(ShapeOf(x)), op == Op::Div);
  return AddNode(op, {x}, {}, std::move(params));
}

Shape Builder::ConstShape(const Shape& other) {
  // Broadcast classes are the masks of axes (N, C, H, W) where the constant is > 1; a mask is
  // valid when `other` is > 1 on each of its axes, so the result keeps other's shape.
  // Scalar and per-channel constants are the ones rules fold into a conv; every other mask
  // (batch, spatial, full, ...) is where a fold must refuse.
  const int64_t r = static_cast<int64_t>(other.size());
  int valid = 0;
  for (int64_t i = 0; i < r; ++i) {
    if (other[size_t(i)] > 1) valid |= 1 << (r - 1 - i);  // bit 0 = last axis
  }
  const int channel = r >= 3 ? 1 << (r - 2) : 0;  // the C axis of [.., C, H, W]
  int mask = 0;
  if (src_.Bool(cfg_.probabilities.const_foldable)) {
    if ((valid & channel) && src_.Bool(cfg_.probabilities.const_per_channel)) mask = channel;
  } else {
    std::vector<int> others;
    for (int m = 1; m < (1 << r); ++m) {
      if ((m & ~valid) == 0 && m != channel) others.push_back(m);
    }
    if (!others.empty())
      mask = others[static_cast<size_t>(src_.Int(0, int64_t(others.size()) - 1))];
  }
  Shape full(size_t(r), 1);
  int64_t lowest_rank = 1;  // leading 1s may be dropped (right-aligned broadcasting)
  for (int64_t i = 0; i < r; ++i) {
    if (mask & (1 << (r - 1 - i))) {
      full[size_t(i)] = other[size_t(i)];
      lowest_rank = std::max(lowest_rank, r - i);
    }
  }
  int64_t rank = src_.Bool(cfg_.probabilities.const_full_rank) ? r : src_.Int(lowest_rank, r);
  return Shape(full.end() - rank, full.end());
}

Tensor Builder::ConstOperand(Op op, const Shape& s, bool divisor) {
  const GenProbabilities& p = cfg_.probabilities;
  const bool zeros = !divisor && src_.Bool(p.const_zeros);
  const bool positive = !zeros && src_.Bool(p.const_positive);
  const bool negative = !zeros && !positive && src_.Bool(p.const_negative);
  SeededSource sub(static_cast<uint64_t>(src_.Int(0, std::numeric_limits<int64_t>::max())));
  const double lo = divisor ? 0.5 : 0.0, hi = divisor ? 2.0 : op == Op::Mul ? 2.0 : 3.0;
  Tensor t(s);
  for (size_t i = 0; i < t.data.size(); ++i) {
    double v = sub.Uniform(lo, hi);
    if (negative || (!positive && sub.Bool(0.5))) v = -v;  // mixed: a fair sign per entry
    if (zeros && (i == 0 || sub.Bool(0.3))) v = 0;         // an exact 0 (the first always)
    t.data[i] = static_cast<float>(v);
  }
  return t;
}

std::string Builder::EmitPad(const std::string& x, bool zero_constant_only) {
  const Shape& s = ShapeOf(x);
  int64_t h = s[2], w = s[3];
  const double kW[] = {3, zero_constant_only ? 0.0 : 1.0,
                       (!zero_constant_only && h >= 2 && w >= 2) ? 1.0 : 0.0};
  size_t mode = src_.Pick(kW);
  int64_t cap_h = 2, cap_w = 2;
  if (mode == 2) {
    cap_h = std::min<int64_t>(2, h - 1);
    cap_w = std::min<int64_t>(2, w - 1);
  }
  if (h >= cfg_.limits.max_spatial + 4) cap_h = 0;
  if (w >= cfg_.limits.max_spatial + 4) cap_w = 0;
  std::vector<int64_t> pads = {src_.Int(0, cap_h), src_.Int(0, cap_w), src_.Int(0, cap_h),
                               src_.Int(0, cap_w)};
  if (pads == std::vector<int64_t>{0, 0, 0, 0} && cap_h > 0) pads[0] = 1;
  AttrMap attrs;
  attrs["pads"] = pads;
  // -0 is a zero fill that conv pads (+0) do not reproduce bit for bit: pad-conv-fold refuses it.
  if (mode == 0 && !zero_constant_only && src_.Bool(cfg_.probabilities.pad_negative_zero))
    attrs["value"] = -0.0;
  if (mode == 1) attrs["value"] = double(KinkValues()[static_cast<size_t>(src_.Int(1, 10))]);
  if (mode == 2) {
    // Edge needs no more than reflect's pads: the same shapes. Wrap is not generated: the
    // opset-17 ONNX export cannot write it (Pad-19), and every generated graph must export.
    const char* kind = "reflect";
    if (src_.Bool(cfg_.probabilities.pad_edge_wrap)) kind = "edge";
    attrs["mode"] = std::string(kind);
  }
  return AddNode(Op::Pad, {x}, std::move(attrs));
}

std::string Builder::EmitPool(Op op, const std::string& x) {
  if (op == Op::GlobalAvgPool) return AddNode(op, {x});
  const GenProbabilities& p = cfg_.probabilities;
  const Shape& s = ShapeOf(x);
  auto pick_k = [&](int64_t in) {
    const double kW[] = {0.5, 3, 2, 0.5};
    int64_t k = static_cast<int64_t>(src_.Pick(kW)) + 1;
    return std::min(k, in);  // a window no larger than the input always fits
  };
  int64_t kh = pick_k(s[2]);
  int64_t kw = src_.Bool(p.square_pool_window) ? std::min(kh, s[3]) : pick_k(s[3]);
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  if (src_.Bool(p.pool_pads)) {
    pt = src_.Int(0, kh - 1);
    pb = src_.Bool(p.symmetric_pool_pads) ? pt : src_.Int(0, kh - 1);
    pl = src_.Int(0, kw - 1);
    pr = src_.Bool(p.symmetric_pool_pads) ? pl : src_.Int(0, kw - 1);
  }
  const double kSW[] = {1, 2, 1};
  size_t si = src_.Pick(kSW);
  int64_t sh = si == 0 ? 1 : si == 1 ? kh : 2;
  int64_t sw = si == 0 ? 1 : si == 1 ? kw : 2;
  AttrMap attrs;
  attrs["kernel_shape"] = std::vector<int64_t>{kh, kw};
  if (sh != 1 || sw != 1) attrs["strides"] = std::vector<int64_t>{sh, sw};
  if (pt || pl || pb || pr) attrs["pads"] = std::vector<int64_t>{pt, pl, pb, pr};
  if (src_.Bool(p.ceil_mode)) attrs["ceil_mode"] = int64_t{1};
  // Dilation 2 on an unpadded window whose dilated extent fits: every window then holds input
  // taps only, so no window is all padding.
  // MaxPool only: AveragePool dilations need ONNX opset 19, and every graph must export.
  if (op == Op::MaxPool && (kh > 1 || kw > 1) && pt + pl + pb + pr == 0 && 2 * kh - 1 <= s[2] &&
      2 * kw - 1 <= s[3] && src_.Bool(p.pool_dilation)) {
    attrs["dilations"] = std::vector<int64_t>{kh > 1 ? 2 : 1, kw > 1 ? 2 : 1};
  }
  if (op == Op::AvgPool && src_.Bool(p.count_include_pad)) {
    attrs["count_include_pad"] = int64_t{1};
  }
  return AddNode(op, {x}, std::move(attrs));
}

std::string Builder::EmitConcat(const std::string& x, const std::string& y) {
  const Shape& s = ShapeOf(x);
  std::vector<std::string> ins = {x};
  AttrMap attrs;
  if (!y.empty()) {
    ins.push_back(y);
  } else {
    // Channels, or (real nets' feature-map stitching) height or width.
    size_t axis = 1;
    if (src_.Bool(cfg_.probabilities.concat_spatial)) {
      axis = src_.Bool(0.5) ? 2 : 3;
      attrs["axis"] = static_cast<int64_t>(axis);
    }
    const int64_t cap = axis == 1 ? 2 * cfg_.limits.max_channels : 2 * cfg_.limits.max_spatial;
    std::vector<std::string> cands;
    for (const auto& v : values_) {
      const Shape& t = ShapeOf(v);
      bool ok = t.size() == 4 && t[axis] + s[axis] <= cap;
      for (size_t d = 0; ok && d < 4; ++d) ok = d == axis || t[d] == s[d];
      if (ok) cands.push_back(v);
    }
    if (!cands.empty() && src_.Bool(cfg_.probabilities.concat_two_inputs)) {
      ins.push_back(cands[static_cast<size_t>(src_.Int(0, int64_t(cands.size()) - 1))]);
    }
    if (src_.Bool(cfg_.probabilities.swap_operands)) std::swap(ins.front(), ins.back());
  }
  return AddNode(Op::Concat, std::move(ins), std::move(attrs));
}

std::string Builder::EmitOp(Op op, const std::string& x, int64_t budget) {
  switch (FamilyOf(op)) {
    case OpFamily::kConv:
      if (op == Op::QLinearConv) break;
      return op == Op::Conv ? EmitConv(x) : EmitFusedConv(x);
    case OpFamily::kNorm:
      return op == Op::BatchNorm ? EmitBatchNorm(x) : EmitNorm(op, x);
    case OpFamily::kActivation:
      return EmitActivation(op, x);
    case OpFamily::kBinary:
      return EmitBinary(op, x, budget);
    case OpFamily::kPad:
      return EmitPad(x);
    case OpFamily::kPool:
      return EmitPool(op, x);
    case OpFamily::kConcat:
      return EmitConcat(x);
    case OpFamily::kIdentity:
      return AddNode(Op::Identity, {x});
    case OpFamily::kReshape:
    case OpFamily::kGemm:
      return EmitHead(op, x, std::max<int64_t>(budget, 2));
    case OpFamily::kReduce:
    case OpFamily::kMath:
    case OpFamily::kLayout:
      return EmitMath(op, x, budget);
    case OpFamily::kQuant:
      break;
  }
  // Quantized ops (issue 24) come with the quantized generator.
  throw InputError("generator", std::string(OpName(op)) + " is not supported by the generator yet");
}

}  // namespace fusefuzz::gen
