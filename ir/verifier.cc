#include "ir/verifier.h"

#include <cmath>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "ir/broadcast.h"
#include "ir/error.h"
#include "ir/spelling.h"
#include "ir/verifier_internal.h"

namespace fusefuzz {
namespace {

std::string NodeWhere(const Node& n) {
  return "node '" + n.name + "' (" + std::string(OpName(n.op)) + ")";
}

[[noreturn]] void Fail(const Node& n, const std::string& what) {
  throw InputError(NodeWhere(n), what);
}

void ExpectRank4(const Node& n, size_t index, const Shape& s) {
  if (s.size() != 4) {
    Fail(n, "input " + std::to_string(index) + ": expected rank 4 (NCHW), got " + ShapeToString(s));
  }
}

void ExpectParamShape(const Node& n, const std::string& param, const Shape& got,
                      const Shape& want) {
  if (got != want) {
    Fail(n, "param '" + param + "': expected shape " + ShapeToString(want) + ", got " +
                ShapeToString(got));
  }
}

const Tensor& Param(const Node& n, const ParamMap& params, const std::string& name) {
  auto it = params.find(name);
  if (it == params.end()) Fail(n, "missing param '" + name + "'");
  return it->second;
}

void CheckAllFinite(const Node& n, const std::string& name, const Tensor& t) {
  for (float v : t.data) {
    if (!std::isfinite(v)) Fail(n, "param '" + name + "' must be finite");
  }
}

// An activation applied to a value of shape `x`: as a node (`epilogue` false) a PRelu slope
// broadcasts unidirectionally to x (ONNX); as an epilogue step it must be per channel
// (PerChannelSlopeShape: [M, 1, 1] after a conv, [N] after a Gemm) or [1].
void CheckActivation(const Node& n, Op act, const AttrMap& attrs, const ParamMap& params,
                     const Shape& x, bool epilogue, const std::string& ctx) {
  const std::string where = NodeWhere(n) + ctx;
  for (const auto& [name, value] : attrs) {
    if (!FindAttrSpec(act, name)) {
      throw InputError(where, "unknown attribute '" + name + "' for " + std::string(OpName(act)));
    }
  }
  for (const auto& spec : SchemaOf(act).attrs) {
    if (spec.type == AttrType::kFloat) AttrFloat(act, attrs, spec.name, where);
    if (spec.type == AttrType::kString) AttrString(act, attrs, spec.name, where);
  }
  for (const auto& [name, value] : params) {
    if (!FindParamSpec(act, name)) {
      throw InputError(where, "unknown param '" + name + "' for " + std::string(OpName(act)));
    }
  }
  // Clip with min > max is valid: ONNX defines it as min(max(x, min), max), i.e. max.
  if (act == Op::Gelu) {
    auto approx = AttrString(act, attrs, "approximate", where);
    if (approx != "none" && approx != "tanh") {
      throw InputError(where,
                       "Gelu approximate must be \"none\" or \"tanh\", got \"" + approx + "\"");
    }
  }
  if (act == Op::PRelu) {
    auto it = params.find("slope");
    if (it == params.end()) throw InputError(where, "missing param 'slope'");
    const Shape& s = it->second.shape;
    if (epilogue) {
      const Shape per_channel = PerChannelSlopeShape(x);
      if (s != per_channel && s != Shape{1}) {
        throw InputError(where, "param 'slope': expected shape " + ShapeToString(per_channel) +
                                    " (per channel) or [1], got " + ShapeToString(s));
      }
    } else if (!BroadcastsTo(s, x)) {
      throw InputError(where, "param 'slope': shape " + ShapeToString(s) +
                                  " does not broadcast to the input " + ShapeToString(x) +
                                  " (aligned from the right; per channel is [C, 1, 1])");
    }
  }
}

Shape ConvShape(const Node& n, const std::vector<Shape>& in) {
  ExpectRank4(n, 0, in[0]);
  const Shape& x = in[0];
  ConvAttrs a = GetConvAttrs(n);
  if (a.stride_h < 1 || a.stride_w < 1) Fail(n, "strides must be >= 1");
  if (a.dilation_h < 1 || a.dilation_w < 1) Fail(n, "dilations must be >= 1");
  if (a.pad_top < 0 || a.pad_left < 0 || a.pad_bottom < 0 || a.pad_right < 0) {
    Fail(n, "pads must be >= 0");
  }
  if (a.group < 1) Fail(n, "group must be >= 1, got " + std::to_string(a.group));
  const Tensor& w = Param(n, n.params, "W");
  if (w.shape.size() != 4) Fail(n, "param 'W': expected rank 4, got " + ShapeToString(w.shape));
  int64_t m = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  if (m < 1 || kh < 1 || kw < 1) Fail(n, "param 'W': dims must be >= 1");
  if (x[1] % a.group != 0) {
    Fail(n, "input channels " + std::to_string(x[1]) + " not divisible by group " +
                std::to_string(a.group));
  }
  if (m % a.group != 0) {
    Fail(n, "output channels " + std::to_string(m) + " not divisible by group " +
                std::to_string(a.group));
  }
  if (cg != x[1] / a.group) {
    Fail(n, "param 'W': expected dim 1 = C/group = " + std::to_string(x[1] / a.group) + ", got " +
                std::to_string(cg));
  }
  CheckAllFinite(n, "W", w);
  if (auto it = n.params.find("B"); it != n.params.end()) {
    ExpectParamShape(n, "B", it->second.shape, {m});
    CheckAllFinite(n, "B", it->second);
  }
  std::optional<int64_t> ch =
      CheckedConvOutputSize(x[2], kh, a.stride_h, a.dilation_h, a.pad_top, a.pad_bottom);
  std::optional<int64_t> cw =
      CheckedConvOutputSize(x[3], kw, a.stride_w, a.dilation_w, a.pad_left, a.pad_right);
  if (!ch || !cw) {
    Fail(n, std::string(!ch ? "height" : "width") +
                ": the dilated kernel or the padded input does not fit in a 64-bit integer "
                "(dilations " +
                std::to_string(!ch ? a.dilation_h : a.dilation_w) + ", kernel " +
                std::to_string(!ch ? kh : kw) + ", pads " +
                std::to_string(!ch ? a.pad_top : a.pad_left) + "+" +
                std::to_string(!ch ? a.pad_bottom : a.pad_right) + ")");
  }
  int64_t oh = *ch, ow = *cw;
  if (oh < 1 || ow < 1) {
    Fail(n, "kernel " + std::to_string(kh) + "x" + std::to_string(kw) +
                " (with dilation and pads) does not fit input " + ShapeToString(x));
  }
  Shape out = {x[0], m, oh, ow};
  if (n.op == Op::FusedConv) {
    for (size_t i = 0; i < n.epilogue.size(); ++i) {
      const EpilogueStep& s = n.epilogue[i];
      std::string ctx = " epilogue step " + std::to_string(i);
      switch (s.kind) {
        case EpilogueKind::kScaleShift:
          ExpectParamShape(n, "epilogue " + std::to_string(i) + " scale",
                           Param(n, s.params, "scale").shape, {m});
          ExpectParamShape(n, "epilogue " + std::to_string(i) + " shift",
                           Param(n, s.params, "shift").shape, {m});
          break;
        case EpilogueKind::kAdd: {
          if (s.input < 1 || static_cast<size_t>(s.input) >= in.size()) {
            Fail(n, ctx + ": add refers to input " + std::to_string(s.input) +
                        " but the node has " + std::to_string(in.size()) + " inputs");
          }
          Shape b;
          if (!BroadcastShapes(out, in[static_cast<size_t>(s.input)], &b) || b != out) {
            Fail(n, ctx + ": add operand " + ShapeToString(in[static_cast<size_t>(s.input)]) +
                        " does not broadcast to the conv output " + ShapeToString(out));
          }
          break;
        }
        case EpilogueKind::kActivation:
          if (!IsActivation(s.act)) {
            Fail(n, ctx + ": " + std::string(OpName(s.act)) + " is not an activation");
          }
          CheckActivation(n, s.act, s.attrs, s.params, out, true, ctx);
          break;
        case EpilogueKind::kClamp:  // min > max allowed, as for Clip
          AttrFloat(Op::Clip, s.attrs, "min", NodeWhere(n) + ctx);
          AttrFloat(Op::Clip, s.attrs, "max", NodeWhere(n) + ctx);
          break;
      }
    }
    for (size_t i = 1; i < in.size(); ++i) {
      bool used = false;
      for (const auto& s : n.epilogue) used |= s.kind == EpilogueKind::kAdd && s.input == int(i);
      if (!used) Fail(n, "input " + std::to_string(i) + " is not used by any epilogue step");
    }
  } else if (n.op == Op::QLinearConv) {
    CheckQLinearConvEpilogue(n, in, out);
  } else if (!n.epilogue.empty()) {
    Fail(n, "only FusedConv, QLinearConv and Gemm have an epilogue");
  }
  return out;
}

void CheckChannelParams(const Node& n, const Shape& x, std::initializer_list<const char*> names) {
  for (const char* p : names) {
    ExpectParamShape(n, p, Param(n, n.params, p).shape, {x[1]});
    CheckAllFinite(n, p, Param(n, n.params, p));
  }
}

Shape NormShape(const Node& n, const std::vector<Shape>& in) {
  const Shape& x = in[0];
  double eps = AttrFloat(n, "epsilon");
  if (!(eps >= 0) || !std::isfinite(eps)) Fail(n, "epsilon must be finite and >= 0");
  switch (n.op) {
    case Op::BatchNorm: {
      if (x.size() < 2) Fail(n, "input 0: expected rank >= 2, got " + ShapeToString(x));
      CheckChannelParams(n, x, {"scale", "bias", "mean", "var"});
      for (float v : Param(n, n.params, "var").data) {
        if (!(v >= 0)) Fail(n, "param 'var' must be >= 0");
      }
      break;
    }
    case Op::LayerNorm: {
      int64_t axis = AttrInt(n, "axis");
      int64_t rank = static_cast<int64_t>(x.size());
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) {
        Fail(n, "axis " + std::to_string(AttrInt(n, "axis")) + " out of range for rank " +
                    std::to_string(rank));
      }
      Shape norm(x.begin() + axis, x.end());
      ExpectParamShape(n, "scale", Param(n, n.params, "scale").shape, norm);
      ExpectParamShape(n, "bias", Param(n, n.params, "bias").shape, norm);
      break;
    }
    case Op::GroupNorm: {
      ExpectRank4(n, 0, x);
      int64_t g = AttrInt(n, "num_groups");
      if (g < 1 || x[1] % g != 0) {
        Fail(n, "num_groups " + std::to_string(g) +
                    " must be >= 1 and divide C = " + std::to_string(x[1]));
      }
      CheckChannelParams(n, x, {"scale", "bias"});
      break;
    }
    case Op::InstanceNorm:
      ExpectRank4(n, 0, x);
      CheckChannelParams(n, x, {"scale", "bias"});
      break;
    case Op::Conv:
    case Op::FusedConv:
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
      throw std::logic_error("NormShape: not a norm op: " + std::string(OpName(n.op)));
  }
  return x;
}

Shape BinaryShape(const Node& n, const std::vector<Shape>& in) {
  BinaryOperands ops = GetBinaryOperands(n);
  size_t values = (ops.const_a ? 0 : 1) + (ops.const_b ? 0 : 1);
  if (in.size() != values) {
    Fail(n, "expected " + std::to_string(values) + " input(s) besides constant params, got " +
                std::to_string(in.size()));
  }
  Shape a = ops.const_a ? ops.const_a->shape : in[static_cast<size_t>(ops.input_a)];
  Shape b = ops.const_b ? ops.const_b->shape : in[static_cast<size_t>(ops.input_b)];
  if (ops.const_a) CheckAllFinite(n, "A", *ops.const_a);
  if (ops.const_b) CheckAllFinite(n, "B", *ops.const_b);
  Shape out;
  if (!BroadcastShapes(a, b, &out)) {
    Fail(n, "operands " + ShapeToString(a) + " and " + ShapeToString(b) + " do not broadcast");
  }
  return out;
}

Shape PadShape(const Node& n, const std::vector<Shape>& in) {
  ExpectRank4(n, 0, in[0]);
  Shape x = in[0];
  auto p = AttrInts(n, "pads");
  if (p.size() != 4)
    Fail(n, "attribute 'pads' must have 4 entries, got " + std::to_string(p.size()));
  for (int64_t v : p) {
    if (v < 0 || v > (int64_t{1} << 24))
      Fail(n, "pads must be in [0, 2^24], got " + std::to_string(v));
  }
  std::string mode = AttrString(n, "mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    Fail(n, "mode must be \"constant\", \"reflect\", \"edge\" or \"wrap\", got \"" + mode + "\"");
  }
  if (!std::isfinite(AttrFloat(n, "value"))) Fail(n, "value must be finite");
  if (mode == "reflect" && (p[0] >= x[2] || p[2] >= x[2] || p[1] >= x[3] || p[3] >= x[3])) {
    Fail(n, "reflect pads must be smaller than the padded dim, input " + ShapeToString(x));
  }
  // One wrap-around: a pad longer than the dim would repeat the input more than once.
  if (mode == "wrap" && (p[0] > x[2] || p[2] > x[2] || p[1] > x[3] || p[3] > x[3])) {
    Fail(n, "wrap pads must be at most the padded dim, input " + ShapeToString(x));
  }
  return {x[0], x[1], x[2] + p[0] + p[2], x[3] + p[1] + p[3]};
}

// True when every one of the `out` windows has a tap in [0, in). O(1) per window: the first tap
// at or after 0 is the only candidate that can also be < in.
bool PoolWindowsSeeInput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                         int64_t pad_begin, int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad_begin;
    const int64_t j = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    if (j >= kernel || start + j * dilation >= in) return false;
  }
  return true;
}

Shape PoolShape(const Node& n, const std::vector<Shape>& in) {
  ExpectRank4(n, 0, in[0]);
  const Shape& x = in[0];
  if (n.op == Op::GlobalAvgPool) return {x[0], x[1], 1, 1};
  PoolAttrs a = GetPoolAttrs(n);
  if (a.kernel_h < 1 || a.kernel_w < 1) Fail(n, "kernel_shape must be >= 1");
  if (a.stride_h < 1 || a.stride_w < 1) Fail(n, "strides must be >= 1");
  if (a.dilation_h < 1 || a.dilation_w < 1) Fail(n, "dilations must be >= 1");
  if (a.pad_top < 0 || a.pad_left < 0 || a.pad_bottom < 0 || a.pad_right < 0) {
    Fail(n, "pads must be >= 0");
  }
  if (a.pad_top >= a.kernel_h || a.pad_bottom >= a.kernel_h || a.pad_left >= a.kernel_w ||
      a.pad_right >= a.kernel_w) {
    Fail(n, "pads must be smaller than the kernel (a window of padding only is undefined)");
  }
  // Booleans: any other integer would be read as "true" by some code and "false" by none, and
  // written back unchanged, so a file could say 2 and mean 1.
  for (const char* flag : {"ceil_mode", "count_include_pad"}) {
    if (!FindAttrSpec(n.op, flag)) continue;
    int64_t v = AttrInt(n, flag);
    if (v != 0 && v != 1) Fail(n, std::string(flag) + " must be 0 or 1, got " + std::to_string(v));
  }
  std::optional<int64_t> ch = CheckedPoolOutputSize(x[2], a.kernel_h, a.stride_h, a.pad_top,
                                                    a.pad_bottom, a.ceil_mode, a.dilation_h);
  std::optional<int64_t> cw = CheckedPoolOutputSize(x[3], a.kernel_w, a.stride_w, a.pad_left,
                                                    a.pad_right, a.ceil_mode, a.dilation_w);
  if (!ch || !cw) {
    Fail(n, std::string(!ch ? "height" : "width") +
                ": the dilated window or the padded input does not fit in a 64-bit integer (pads " +
                std::to_string(!ch ? a.pad_top : a.pad_left) + "+" +
                std::to_string(!ch ? a.pad_bottom : a.pad_right) + ")");
  }
  int64_t oh = *ch, ow = *cw;
  if (oh < 1 || ow < 1) {
    Fail(n, "kernel " + std::to_string(a.kernel_h) + "x" + std::to_string(a.kernel_w) +
                " does not fit input " + ShapeToString(x));
  }
  // Dilated taps can step over a small input: a window of padding taps only is undefined.
  if (!PoolWindowsSeeInput(x[2], a.kernel_h, a.stride_h, a.dilation_h, a.pad_top, oh) ||
      !PoolWindowsSeeInput(x[3], a.kernel_w, a.stride_w, a.dilation_w, a.pad_left, ow)) {
    Fail(n, "a dilated window has no tap inside input " + ShapeToString(x) +
                " (all its taps fall in the padding)");
  }
  return {x[0], x[1], oh, ow};
}

Shape ConcatShape(const Node& n, const std::vector<Shape>& in) {
  Shape out = in[0];
  const int64_t rank = static_cast<int64_t>(out.size());
  int64_t axis = AttrInt(n, "axis");
  if (axis < -rank || axis >= rank) {
    Fail(n, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  const size_t ax = static_cast<size_t>(axis);
  for (size_t i = 1; i < in.size(); ++i) {
    const Shape& s = in[i];
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = d == ax || s[d] == out[d];
    if (!ok) {
      Fail(n, "input " + std::to_string(i) + ": expected shape " + ShapeToString(out) +
                  " except dim " + std::to_string(axis) + ", got " + ShapeToString(s));
    }
    // Many inputs of 2^24 each: the sum is checked (the element limit comes later).
    if (__builtin_add_overflow(out[ax], s[ax], &out[ax])) {
      Fail(n, "dim " + std::to_string(axis) +
                  " of the concatenation does not fit in a 64-bit integer");
    }
  }
  return out;
}

Shape ReshapeShape(const Node& n, const std::vector<Shape>& in) {
  const Shape& x = in[0];
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t count = NumElements(x);
  if (n.op == Op::Flatten) {
    int64_t axis = AttrInt(n, "axis");
    if (axis < -rank || axis > rank) {
      Fail(n, "axis " + std::to_string(axis) + " out of range [-" + std::to_string(rank) + ", " +
                  std::to_string(rank) + "] for input " + ShapeToString(x));
    }
    if (axis < 0) axis += rank;
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x[static_cast<size_t>(d)];
    return {outer, count / outer};
  }
  const std::vector<int64_t> want = AttrInts(n, "shape");
  if (want.empty()) Fail(n, "attribute 'shape' must not be empty");
  Shape out(want.size());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    int64_t d = want[i];
    if (d == 0) {
      if (static_cast<int64_t>(i) >= rank) {
        Fail(n, "shape entry " + std::to_string(i) + " is 0 (copy the input dim) but input " +
                    ShapeToString(x) + " has no dim " + std::to_string(i));
      }
      d = x[i];
    } else if (d == -1) {
      if (infer >= 0) Fail(n, "attribute 'shape' has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    } else if (d < -1) {
      Fail(n, "shape entry " + std::to_string(i) + " must be >= -1, got " + std::to_string(d));
    }
    out[i] = d;
    if (__builtin_mul_overflow(known, d, &known) || known > count) {
      Fail(n, "shape " + ShapeToString(want) + " has more elements than input " + ShapeToString(x));
    }
  }
  if (infer >= 0) {
    if (count % known != 0) {
      Fail(n, "cannot infer the -1 of shape " + ShapeToString(want) + " from input " +
                  ShapeToString(x));
    }
    out[static_cast<size_t>(infer)] = count / known;
  } else if (known != count) {
    Fail(n, "shape " + ShapeToString(want) + " has " + std::to_string(known) + " elements, input " +
                ShapeToString(x) + " has " + std::to_string(count));
  }
  return out;
}

// Activation and clamp steps of a Gemm epilogue (channel = dim 1 of the [M, N] output).
void CheckGemmEpilogue(const Node& n, const Shape& out) {
  for (size_t i = 0; i < n.epilogue.size(); ++i) {
    const EpilogueStep& s = n.epilogue[i];
    const std::string ctx = " epilogue step " + std::to_string(i);
    switch (s.kind) {
      case EpilogueKind::kActivation:
        if (!IsActivation(s.act)) {
          Fail(n, ctx + ": " + std::string(OpName(s.act)) + " is not an activation");
        }
        CheckActivation(n, s.act, s.attrs, s.params, out, true, ctx);
        break;
      case EpilogueKind::kClamp: {
        double lo = AttrFloat(Op::Clip, s.attrs, "min", NodeWhere(n) + ctx);
        double hi = AttrFloat(Op::Clip, s.attrs, "max", NodeWhere(n) + ctx);
        if (!(lo <= hi)) Fail(n, ctx + ": clamp needs min <= max");
        break;
      }
      case EpilogueKind::kScaleShift:
      case EpilogueKind::kAdd:
        Fail(n, ctx + ": a Gemm epilogue holds only activation and clamp steps, got " +
                    std::string(EpilogueKindName(s.kind)));
    }
  }
}

Shape GemmShape(const Node& n, const std::vector<Shape>& in) {
  const Shape& a = in[0];
  const Tensor& b = Param(n, n.params, "B");
  if (b.shape.size() != 2) Fail(n, "param 'B': expected rank 2, got " + ShapeToString(b.shape));
  CheckAllFinite(n, "B", b);
  if (n.op == Op::MatMul) {
    if (a.size() < 2) Fail(n, "input 0: expected rank >= 2, got " + ShapeToString(a));
    if (a.back() != b.shape[0]) {
      Fail(n, "param 'B': expected dim 0 = K = " + std::to_string(a.back()) + " (last dim of " +
                  ShapeToString(a) + "), got " + ShapeToString(b.shape));
    }
    Shape out = a;
    out.back() = b.shape[1];
    return out;
  }
  if (a.size() != 2) Fail(n, "input 0: expected rank 2 ([M, K]), got " + ShapeToString(a));
  for (const char* flag : {"transA", "transB"}) {
    int64_t v = AttrInt(n, flag);
    if (v != 0 && v != 1) Fail(n, std::string(flag) + " must be 0 or 1, got " + std::to_string(v));
  }
  for (const char* f : {"alpha", "beta"}) {
    if (!std::isfinite(AttrFloat(n, f))) Fail(n, std::string(f) + " must be finite");
  }
  const GemmDims d = GetGemmDims(n, a);
  const int64_t bk = d.trans_b ? b.shape[1] : b.shape[0];
  if (bk != d.k) {
    Fail(n, "param 'B' " + ShapeToString(b.shape) + (d.trans_b ? " (transB)" : "") +
                ": K = " + std::to_string(bk) + " does not match K = " + std::to_string(d.k) +
                " of input " + ShapeToString(a) + (d.trans_a ? " (transA)" : ""));
  }
  const Shape out = {d.m, d.n};
  if (auto it = n.params.find("C"); it != n.params.end()) {
    Shape bc;
    if (it->second.shape.size() > 2 || !BroadcastShapes(out, it->second.shape, &bc) || bc != out) {
      Fail(n, "param 'C' " + ShapeToString(it->second.shape) +
                  " does not broadcast to the output " + ShapeToString(out));
    }
    CheckAllFinite(n, "C", it->second);
  }
  CheckGemmEpilogue(n, out);
  return out;
}

// Graph names end up in JSON files (reproducers, summaries), which hold UTF-8 only; an ONNX
// model's names are unchecked bytes.
bool IsUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t more = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c >> 5) == 0x6) {
      more = 1, cp = c & 0x1Fu;
    } else if ((c >> 4) == 0xE) {
      more = 2, cp = c & 0x0Fu;
    } else if ((c >> 3) == 0x1E) {
      more = 3, cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + more >= s.size()) return false;
    for (size_t k = 1; k <= more; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3Fu);
    }
    // Overlong forms, surrogates and code points beyond U+10FFFF are not UTF-8 either.
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[more] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += more + 1;
  }
  return true;
}

// What the graph format refuses (ir/json_io.cc, ReadName), refused for graphs made elsewhere
// too (an imported ONNX model), so that every verified graph can be written and read back.
void CheckName(const std::string& name, const std::string& where) {
  if (name.size() > 256) {
    throw InputError(where, "name of " + std::to_string(name.size()) +
                                " bytes, longer than 256 characters (the graph format's limit)");
  }
  if (!IsUtf8(name)) throw InputError(where, "name is not valid UTF-8");
}

}  // namespace

bool BroadcastsTo(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t shift = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != to[d + shift]) return false;
  }
  return true;
}

Shape PerChannelSlopeShape(const Shape& x) {
  if (x.size() < 2) return {1};
  Shape s(x.size() - 1, 1);
  s[0] = x[1];
  return s;
}

std::optional<Shape> AsPerChannelSlope(const Shape& slope, const Shape& x) {
  if (!BroadcastsTo(slope, x)) return std::nullopt;
  const size_t shift = x.size() - slope.size();
  bool scalar = true;
  for (size_t d = 0; d < slope.size(); ++d) {
    if (slope[d] == 1) continue;
    scalar = false;
    if (d + shift != 1) return std::nullopt;  // varies along a dim other than the channel
  }
  if (scalar) return Shape{1};
  return PerChannelSlopeShape(x);
}

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out) {
  size_t rank = std::max(a.size(), b.size());
  Shape r(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    r[i] = da == 1 ? db : da;
  }
  *out = std::move(r);
  return true;
}

std::optional<int64_t> CheckedConvOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                             int64_t dilation, int64_t pad_begin, int64_t pad_end) {
  if (stride < 1 || kernel < 1 || dilation < 1) return 0;
  // Attributes come from files: every step is checked, as INT64_MAX dilations are a real input.
  int64_t span = 0, padded = 0, avail = 0;
  if (__builtin_mul_overflow(dilation, kernel - 1, &span) ||
      __builtin_add_overflow(span, 1, &span) || __builtin_add_overflow(in, pad_begin, &padded) ||
      __builtin_add_overflow(padded, pad_end, &padded) ||
      __builtin_sub_overflow(padded, span, &avail)) {
    return std::nullopt;
  }
  if (avail < 0) return 0;
  return avail / stride + 1;
}

std::optional<int64_t> CheckedPoolOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                             int64_t pad_begin, int64_t pad_end, bool ceil_mode,
                                             int64_t dilation) {
  if (stride < 1 || kernel < 1 || dilation < 1) return 0;
  int64_t padded = 0, avail = 0, start = 0, span = 0;
  if (__builtin_mul_overflow(dilation, kernel - 1, &span) ||
      __builtin_add_overflow(span, 1, &span) || __builtin_add_overflow(in, pad_begin, &padded) ||
      __builtin_add_overflow(padded, pad_end, &padded) ||
      __builtin_sub_overflow(padded, span, &avail)) {
    return std::nullopt;
  }
  if (avail < 0) return 0;
  // Rounding up as quotient + (remainder != 0): (avail + stride - 1) would overflow.
  int64_t out = avail / stride + (ceil_mode && avail % stride != 0 ? 1 : 0) + 1;
  // ONNX/PyTorch: in ceil mode a last window that starts inside the end padding is dropped. A
  // start beyond int64 is certainly inside it.
  if (ceil_mode && (__builtin_mul_overflow(out - 1, stride, &start) || start >= in + pad_begin)) {
    --out;
  }
  return out;
}

int64_t ConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                       int64_t pad_begin, int64_t pad_end) {
  return CheckedConvOutputSize(in, kernel, stride, dilation, pad_begin, pad_end).value_or(0);
}

int64_t PoolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                       int64_t pad_end, bool ceil_mode, int64_t dilation) {
  return CheckedPoolOutputSize(in, kernel, stride, pad_begin, pad_end, ceil_mode, dilation)
      .value_or(0);
}

Shape InferNodeShape(const Node& n, const std::vector<Shape>& in) {
  int count = static_cast<int>(in.size());
  if (count < MinInputs(n.op) || count > MaxInputs(n.op)) {
    Fail(n, "expected " + std::to_string(MinInputs(n.op)) +
                (MaxInputs(n.op) != MinInputs(n.op) ? ".." + std::to_string(MaxInputs(n.op)) : "") +
                " inputs, got " + std::to_string(count));
  }
  for (size_t i = 0; i < in.size(); ++i) {
    for (int64_t d : in[i]) {
      if (d < 1) Fail(n, "input " + std::to_string(i) + " has empty shape " + ShapeToString(in[i]));
    }
  }
  if (n.op != Op::FusedConv && n.op != Op::Gemm && n.op != Op::QLinearConv && !n.epilogue.empty()) {
    Fail(n, "only FusedConv, QLinearConv and Gemm have an epilogue");
  }
  switch (FamilyOf(n.op)) {
    case OpFamily::kConv: {
      if (n.op == Op::Conv && in.size() != 1) Fail(n, "Conv takes exactly 1 input");
      return ConvShape(n, in);
    }
    case OpFamily::kNorm:
      return NormShape(n, in);
    case OpFamily::kActivation: {
      CheckActivation(n, n.op, n.attrs, n.params, in[0], false, "");
      return in[0];
    }
    case OpFamily::kBinary:
      return BinaryShape(n, in);
    case OpFamily::kPad:
      return PadShape(n, in);
    case OpFamily::kPool:
      return PoolShape(n, in);
    case OpFamily::kConcat:
      return ConcatShape(n, in);
    case OpFamily::kIdentity:
      return in[0];
    case OpFamily::kReshape:
      return ReshapeShape(n, in);
    case OpFamily::kGemm:
      return GemmShape(n, in);
    case OpFamily::kQuant:
      return QuantShape(n, in);
    case OpFamily::kReduce:
      return ReduceShape(n, in);
    case OpFamily::kMath:
      return MathShape(n, in);
    case OpFamily::kLayout:
      return TransposeShape(n, in);
  }
  Fail(n, "unknown op");
}

ShapeMap VerifyGraph(const Graph& g, const Limits& limits) {
  ShapeMap shapes;
  int64_t total = 0;
  auto check_size = [&](const std::string& where, const Shape& s) {
    if (static_cast<int64_t>(s.size()) > limits.max_rank || s.empty()) {
      throw InputError(where, "rank must be 1.." + std::to_string(limits.max_rank) + ", got " +
                                  ShapeToString(s));
    }
    int64_t n = 1;
    for (int64_t d : s) {
      if (d < 1 || d > limits.max_dim) {
        throw InputError(where, "dims must be in [1, " + std::to_string(limits.max_dim) +
                                    "], got " + ShapeToString(s));
      }
      if (n > limits.max_elements_per_tensor / d) {
        throw InputError(where, ShapeToString(s) + " exceeds the limit of " +
                                    std::to_string(limits.max_elements_per_tensor) +
                                    " elements per tensor");
      }
      n *= d;
    }
    total += n * 4;
    if (total > limits.max_total_bytes) {
      throw InputError(where, "graph values exceed the limit of " +
                                  std::to_string(limits.max_total_bytes) + " bytes in total");
    }
  };
  if (static_cast<int64_t>(g.nodes.size()) > limits.max_nodes) {
    throw InputError("graph", std::to_string(g.nodes.size()) + " nodes exceed the limit of " +
                                  std::to_string(limits.max_nodes));
  }
  if (g.outputs.empty()) throw InputError("graph", "graph has no outputs");
  for (size_t i = 0; i < g.inputs.size(); ++i)
    CheckName(g.inputs[i].name, "graph input " + std::to_string(i));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    CheckName(g.nodes[i].name, "node " + std::to_string(i));
    CheckName(g.nodes[i].output, "node " + std::to_string(i) + " output");
    for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k) {
      CheckName(g.nodes[i].inputs[k], "node " + std::to_string(i) + " input " + std::to_string(k));
    }
  }
  for (size_t i = 0; i < g.outputs.size(); ++i)
    CheckName(g.outputs[i], "graph output " + std::to_string(i));
  for (const auto& in : g.inputs) {
    std::string where = "graph input '" + in.name + "'";
    if (in.name.empty()) throw InputError(where, "empty name");
    if (!shapes.emplace(in.name, in.shape).second) throw InputError(where, "duplicate value name");
    check_size(where, in.shape);
  }
  std::set<std::string> node_names;
  std::map<std::string, size_t> later;  // value -> index of the node that defines it
  for (size_t i = 0; i < g.nodes.size(); ++i) later.emplace(g.nodes[i].output, i);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.name.empty()) throw InputError("node " + std::to_string(i), "empty name");
    if (!node_names.insert(n.name).second) {
      throw InputError(NodeWhere(n), "duplicate node name");
    }
    for (const auto& [name, v] : n.attrs) {
      if (!FindAttrSpec(n.op, name)) Fail(n, "unknown attribute '" + name + "'");
    }
    for (const auto& [name, v] : n.params) {
      if (!FindParamSpec(n.op, name)) Fail(n, "unknown param '" + name + "'");
      if (v.size() != NumElements(v.shape)) {
        Fail(n, "param '" + name + "' has " + std::to_string(v.size()) + " values for shape " +
                    ShapeToString(v.shape));
      }
    }
    std::vector<Shape> in_shapes;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      auto it = shapes.find(n.inputs[k]);
      if (it == shapes.end()) {
        auto l = later.find(n.inputs[k]);
        if (l != later.end()) {
          Fail(n, "input " + std::to_string(k) + " '" + n.inputs[k] + "' is produced by node '" +
                      g.nodes[l->second].name + "', which comes later (cycle, or nodes out of " +
                      "topological order)");
        }
        Fail(n, "input " + std::to_string(k) + " '" + n.inputs[k] +
                    "' is not a graph input or the output of any node (dangling value)");
      }
      in_shapes.push_back(it->second);
    }
    Shape out = InferNodeShape(n, in_shapes);
    VerifyQuant(n, in_shapes, g.options);
    if (n.output.empty()) Fail(n, "empty output name");
    check_size(NodeWhere(n) + " output '" + n.output + "'", out);
    if (!shapes.emplace(n.output, out).second) {
      Fail(n, "output '" + n.output + "' is already defined (values are SSA)");
    }
  }
  CheckQuantTypes(g);
  CheckScaleProducts(g);
  std::set<std::string> outs;
  for (const auto& o : g.outputs) {
    if (!shapes.count(o)) throw InputError("graph output '" + o + "'", "no such value");
    if (!outs.insert(o).second) throw InputError("graph output '" + o + "'", "listed twice");
  }
  VerifySpellings(g, shapes);
  return shapes;
}

}  // namespace fusefuzz
