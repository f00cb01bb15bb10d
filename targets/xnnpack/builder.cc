// The float translation of fusefuzz-xnnpack-target (targets/xnnpack/README.md): one XNNPACK
// subgraph node per fusefuzz node, NCHW values and constants laid out in NHWC.
#include "targets/xnnpack/builder.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "targets/xnnpack/nhwc.h"

namespace fusefuzz::xnnpack {
namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

std::string StatusName(xnn_status s) {
  switch (s) {
    case xnn_status_success:
      return "xnn_status_success";
    case xnn_status_uninitialized:
      return "xnn_status_uninitialized";
    case xnn_status_invalid_parameter:
      return "xnn_status_invalid_parameter";
    case xnn_status_invalid_state:
      return "xnn_status_invalid_state";
    case xnn_status_unsupported_parameter:
      return "xnn_status_unsupported_parameter";
    case xnn_status_unsupported_hardware:
      return "xnn_status_unsupported_hardware";
    case xnn_status_out_of_memory:
      return "xnn_status_out_of_memory";
  }
  return "xnn_status " + std::to_string(static_cast<int>(s));
}

// A refusal of a parameter when a node is defined or its operator created is XNNPACK saying it
// cannot express the case (unsupported); any other failure is an error answer.
void Check(xnn_status s, const std::string& what) {
  if (s == xnn_status_success) return;
  const std::string msg = "XNNPACK " + what + ": " + StatusName(s);
  if (s == xnn_status_invalid_parameter || s == xnn_status_unsupported_parameter) {
    throw Unsupported(msg);
  }
  throw std::runtime_error(msg);
}

Builder::Builder(const NativeRequest& r, bool int8) : r_(r), int8_(int8) {
  for (const ValueInfo& in : r.graph.inputs) Id(in.name);
  for (const Node& n : r.graph.nodes) Id(n.output);
  if (int8_) PlanQuantized();
}

uint32_t Builder::Id(const std::string& v) {
  auto [it, added] = ids_.emplace(v, static_cast<uint32_t>(names_.size()));
  if (added) names_.push_back(v);
  return it->second;
}

const QuantValue* Builder::Quantized(const std::string& v) const {
  auto it = quant_.find(v);
  return it == quant_.end() ? nullptr : &it->second;
}

void Builder::Define(xnn_subgraph_t sg, const std::vector<bool>& external,
                     const std::vector<bool>& fuse) {
  sg_ = sg;
  fuse_ = fuse;
  std::set<std::string> inputs;
  for (const ValueInfo& in : r_.graph.inputs) inputs.insert(in.name);
  for (uint32_t id = 0; id < num_values(); ++id) {
    const std::string& v = names_[id];
    if (inputs.count(v) && r_.graph.IsGraphOutput(v)) {
      throw Unsupported("graph output '" + v + "' is a graph input");
    }
    uint32_t flags = inputs.count(v) ? XNN_VALUE_FLAG_EXTERNAL_INPUT : 0;
    if (external[id]) flags |= XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
    const std::vector<size_t> dims = Physical(r_.shapes.at(v));
    uint32_t out_id = 0;
    if (const QuantValue* q = Quantized(v)) {
      Check(xnn_define_quantized_tensor_value(
                sg, q->type == QuantType::kInt8 ? xnn_datatype_qint8 : xnn_datatype_quint8,
                q->zero_point, q->scale, dims.size(), dims.data(), nullptr, id, flags, &out_id),
            "define quantized value '" + v + "'");
    } else {
      Check(xnn_define_tensor_value(sg, xnn_datatype_fp32, dims.size(), dims.data(), nullptr, id,
                                    flags, &out_id),
            "define value '" + v + "'");
    }
  }
  nodes_.clear();
  for (const Node& n : r_.graph.nodes) {
    auto c = chain_of_.find(&n);
    if (c == chain_of_.end() || !fuse_[c->second]) {
      DefineNode(n);
    } else if (&n == chains_[c->second].conv) {
      Chain(chains_[c->second]);  // the chain's other nodes are left out
    } else if (&n == chains_[c->second].dq && FloatValueRead(n)) {
      DefineNode(n);  // a graph output, or another node still reads the float value
    }
  }
}

bool Builder::FloatValueRead(const Node& dq) const {
  if (r_.graph.IsGraphOutput(dq.output)) return true;
  for (int i : r_.graph.Consumers(dq.output)) {
    const Node* reader = &r_.graph.nodes[static_cast<size_t>(i)];
    auto c = chain_of_.find(reader);
    if (c == chain_of_.end() || !fuse_[c->second] || chains_[c->second].conv != reader) return true;
  }
  return false;
}

uint32_t Builder::Static(const Shape& dims, std::vector<float> data) {
  statics_.push_back(std::make_unique<std::vector<float>>(std::move(data)));
  std::vector<size_t> d(dims.begin(), dims.end());
  uint32_t id = 0;
  Check(xnn_define_tensor_value(sg_, xnn_datatype_fp32, d.size(), d.data(), statics_.back()->data(),
                                XNN_INVALID_VALUE_ID, 0, &id),
        "define a static value");
  return id;
}
void Builder::Add(Kind kind, const Node& n, std::vector<std::string> graph_inputs, bool zero_pad,
                  const std::string& output) {
  XNode x{kind, n.name, {}, Id(output.empty() ? n.output : output), zero_pad};
  for (const std::string& v : graph_inputs) x.in.push_back(Id(v));
  nodes_.push_back(std::move(x));
}

void Builder::Clamp(const Node& n, float lo, float hi) {
  if (!(lo < hi)) {
    throw Unsupported("Clip with min >= max or NaN bounds: XNNPACK's clamp needs min < max" +
                      Where(n));
  }
  Check(xnn_define_clamp(sg_, lo, hi, Id(n.inputs[0]), Id(n.output), 0), "clamp" + Where(n));
  Add(Kind::kClamp, n, {n.inputs[0]});
}

void Builder::DefineNode(const Node& n) {
  const uint32_t in = n.inputs.empty() ? 0 : Id(n.inputs[0]);
  const uint32_t out = Id(n.output);
  const std::string where = Where(n);
  switch (n.op) {
    case Op::Conv:
      return Conv(n);
    case Op::Relu:
      return Clamp(n, 0.0f, kInf);
    case Op::Relu6:
      return Clamp(n, 0.0f, 6.0f);
    case Op::Clip:
      return Clamp(n, static_cast<float>(AttrFloat(n, "min")),
                   static_cast<float>(AttrFloat(n, "max")));
    case Op::LeakyRelu:
      Check(xnn_define_leaky_relu(sg_, static_cast<float>(AttrFloat(n, "alpha")), in, out, 0),
            "leaky_relu" + where);
      return Add(Kind::kOther, n, {n.inputs[0]});
    case Op::Elu: {
      const float alpha = static_cast<float>(AttrFloat(n, "alpha"));
      if (!(alpha > 0) || !std::isnormal(alpha)) {
        throw Unsupported("Elu alpha must be a normal number > 0 for XNNPACK" + where);
      }
      Check(xnn_define_elu(sg_, alpha, in, out, 0), "elu" + where);
      return Add(Kind::kOther, n, {n.inputs[0]});
    }
    case Op::Sigmoid:
      Check(xnn_define_sigmoid(sg_, in, out, 0), "sigmoid" + where);
      return Add(Kind::kOther, n, {n.inputs[0]});
    case Op::HardSwish:
      Check(xnn_define_hardswish(sg_, in, out, 0), "hardswish" + where);
      return Add(Kind::kOther, n, {n.inputs[0]});
    case Op::PRelu:
      return PRelu(n);
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
      return Binary(n);
    case Op::Pad:
      return Pad(n);
    case Op::MaxPool:
    case Op::AvgPool:
      return Pool(n);
    case Op::GlobalAvgPool:
      if (!Rank4(ShapeOf(n.inputs[0]))) throw Unsupported("GlobalAvgPool of a non-4-D value");
      Check(xnn_define_global_average_pooling_2d(sg_, -kInf, kInf, in, out, 0),
            "global_average_pooling_2d" + where);
      return Add(Kind::kOther, n, {n.inputs[0]});
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape: {
      // A copy when the shape stays; else only where NCHW and NHWC orders agree.
      if (n.op != Op::Identity &&
          (!SameOrder(ShapeOf(n.inputs[0])) || !SameOrder(ShapeOf(n.output)))) {
        throw Unsupported("reshape of a 4-D value whose NCHW and NHWC orders differ" + where);
      }
      const std::vector<size_t> dims = Physical(ShapeOf(n.output));
      Check(xnn_define_static_reshape(sg_, dims.size(), dims.data(), in, out, 0),
            "static_reshape" + where);
      return Add(Kind::kOther, n, {n.inputs[0]});
    }
    case Op::Gemm:
    case Op::MatMul:
      return FullyConnected(n);
    case Op::FusedConv:
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::HardSigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::Gelu:
    case Op::Concat:
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
      throw Unsupported("op " + std::string(OpName(n.op)) + " has no XNNPACK subgraph node" +
                        where);
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
      return Convert(n);
    case Op::QLinearConv:
      return QLinearConv(n);
    case Op::QLinearAdd:
      return QLinearAdd(n);
  }
}

void Builder::Conv(const Node& n) {
  const Shape& x = ShapeOf(n.inputs[0]);
  const Tensor& w = n.params.at("W");
  const ConvAttrs a = GetConvAttrs(n);
  const int64_t m = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3], c = x[1];
  const bool depthwise = a.group > 1 && a.group == c;
  std::vector<float> f(w.data.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < cg; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t z = 0; z < kw; ++z) {
          const float v = w.data[((o * cg + i) * kh + y) * kw + z];
          // Depthwise filters are [1, kH, kW, C*multiplier]; others [M, kH, kW, C/group].
          f[depthwise ? (y * kw + z) * m + o : ((o * kh + y) * kw + z) * cg + i] = v;
        }
  const uint32_t filter = Static(depthwise ? Shape{1, kh, kw, m} : Shape{m, kh, kw, cg}, f);
  uint32_t bias = XNN_INVALID_VALUE_ID;
  if (auto b = n.params.find("B"); b != n.params.end()) bias = Static({m}, b->second.data);
  const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  if (depthwise) {
    Check(xnn_define_depthwise_convolution_2d(
              sg_, u(a.pad_top), u(a.pad_right), u(a.pad_bottom), u(a.pad_left), u(kh), u(kw),
              u(a.stride_h), u(a.stride_w), u(a.dilation_h), u(a.dilation_w), u(m / c), size_t(c),
              -kInf, kInf, Id(n.inputs[0]), filter, bias, Id(n.output), 0),
          "depthwise_convolution_2d" + Where(n));
  } else {
    Check(
        xnn_define_convolution_2d(sg_, u(a.pad_top), u(a.pad_right), u(a.pad_bottom), u(a.pad_left),
                                  u(kh), u(kw), u(a.stride_h), u(a.stride_w), u(a.dilation_h),
                                  u(a.dilation_w), u(a.group), size_t(cg), size_t(m / a.group),
                                  -kInf, kInf, Id(n.inputs[0]), filter, bias, Id(n.output), 0),
        "convolution_2d" + Where(n));
  }
  Add(depthwise ? Kind::kDepthwise : Kind::kConv, n, {n.inputs[0]});
}

void Builder::PRelu(const Node& n) {
  const Shape& x = ShapeOf(n.inputs[0]);
  const Tensor& s = n.params.at("slope");
  if (!Rank4(x)) throw Unsupported("XNNPACK's prelu takes a 4-D [N, H, W, C] input" + Where(n));
  // Only slopes constant over N, H and W: one per channel, the last NHWC dim.
  Shape full(4 - std::min<size_t>(4, s.shape.size()), 1);
  full.insert(full.end(), s.shape.begin(), s.shape.end());
  if (full.size() != 4 || full[0] != 1 || full[2] != 1 || full[3] != 1) {
    throw Unsupported("PRelu slope " + ShapeToString(s.shape) +
                      " varies along H or W; XNNPACK's slopes are per channel" + Where(n));
  }
  std::vector<float> per_channel(static_cast<size_t>(x[1]));
  for (int64_t c = 0; c < x[1]; ++c) per_channel[c] = s.data[full[1] == 1 ? 0 : c];
  const uint32_t slope = Static({x[1]}, per_channel);
  Check(xnn_define_prelu(sg_, Id(n.inputs[0]), slope, Id(n.output), 0), "prelu" + Where(n));
  Add(Kind::kOther, n, {n.inputs[0]});
}

// A binary operand: the value's id, or a static value with the constant laid out as the
// value it broadcasts against (extended to the output's rank, NHWC when that is 4-D).
uint32_t Builder::Operand(const Node& n, const Tensor* c, int input, const Shape& out) {
  if (!c) {
    const Shape& s = ShapeOf(n.inputs[input]);
    if (Rank4(out) && s.size() != 4) {
      throw Unsupported("binary operand of rank " + std::to_string(s.size()) +
                        " against a 4-D value" + Where(n));
    }
    return Id(n.inputs[input]);
  }
  if (c->shape.size() > out.size()) throw Unsupported("constant of higher rank" + Where(n));
  Tensor t(Shape(out.size() - c->shape.size(), 1), c->data);
  t.shape.insert(t.shape.end(), c->shape.begin(), c->shape.end());
  const std::vector<size_t> p = Physical(t.shape);
  return Static(Shape(p.begin(), p.end()), ToNhwc(t));
}

void Builder::Binary(const Node& n) {
  const BinaryOperands ops = GetBinaryOperands(n);
  const Shape& out = ShapeOf(n.output);
  const uint32_t a = Operand(n, ops.const_a, ops.input_a, out);
  const uint32_t b = Operand(n, ops.const_b, ops.input_b, out);
  std::vector<std::string> values;
  if (ops.input_a >= 0) values.push_back(n.inputs[ops.input_a]);
  if (ops.input_b >= 0) values.push_back(n.inputs[ops.input_b]);
  const uint32_t y = Id(n.output);
  const std::string where = Where(n);
  if (n.op == Op::Add) {
    Check(xnn_define_add2(sg_, -kInf, kInf, a, b, y, 0), "add2" + where);
  } else if (n.op == Op::Sub) {
    Check(xnn_define_subtract(sg_, -kInf, kInf, a, b, y, 0), "subtract" + where);
  } else if (n.op == Op::Mul) {
    Check(xnn_define_multiply2(sg_, -kInf, kInf, a, b, y, 0), "multiply2" + where);
  } else {
    Check(xnn_define_divide(sg_, -kInf, kInf, a, b, y, 0), "divide" + where);
  }
  Add(Kind::kBinary, n, values);
}

void Builder::Pad(const Node& n) {
  if (AttrString(n, "mode") != "constant") {
    throw Unsupported("Pad mode '" + AttrString(n, "mode") + "': XNNPACK pads with a constant" +
                      Where(n));
  }
  if (!Rank4(ShapeOf(n.inputs[0]))) throw Unsupported("Pad of a non-4-D value" + Where(n));
  const std::vector<int64_t> p = AttrInts(n, "pads");  // t, l, b, r
  const size_t pre[4] = {0, size_t(p[0]), size_t(p[1]), 0};
  const size_t post[4] = {0, size_t(p[2]), size_t(p[3]), 0};
  const float value = static_cast<float>(AttrFloat(n, "value"));
  Check(xnn_define_static_constant_pad(sg_, pre, post, value, Id(n.inputs[0]), Id(n.output), 0),
        "static_constant_pad" + Where(n));
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  Add(Kind::kPad, n, {n.inputs[0]}, bits == 0);
}

void Builder::Pool(const Node& n) {
  const PoolAttrs a = GetPoolAttrs(n);
  const Shape& x = ShapeOf(n.inputs[0]);
  const std::string where = Where(n);
  if (!Rank4(x)) throw Unsupported("pool of a non-4-D value" + where);
  if (a.kernel_h * a.kernel_w == 1) throw Unsupported("XNNPACK refuses 1x1 pooling" + where);
  if (a.ceil_mode) {
    // XNNPACK rounds output sizes down: the same only when ceil adds no window.
    const Shape& y = ShapeOf(n.output);
    const auto floor_size = [](int64_t in, int64_t p0, int64_t p1, int64_t k, int64_t d,
                               int64_t s) { return (in + p0 + p1 - (d * (k - 1) + 1)) / s + 1; };
    if (floor_size(x[2], a.pad_top, a.pad_bottom, a.kernel_h, a.dilation_h, a.stride_h) != y[2] ||
        floor_size(x[3], a.pad_left, a.pad_right, a.kernel_w, a.dilation_w, a.stride_w) != y[3]) {
      throw Unsupported("ceil_mode adds a window; XNNPACK's output sizes round down" + where);
    }
  }
  const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  if (n.op == Op::MaxPool) {
    Check(xnn_define_max_pooling_2d(sg_, u(a.pad_top), u(a.pad_right), u(a.pad_bottom),
                                    u(a.pad_left), u(a.kernel_h), u(a.kernel_w), u(a.stride_h),
                                    u(a.stride_w), u(a.dilation_h), u(a.dilation_w), -kInf, kInf,
                                    Id(n.inputs[0]), Id(n.output), 0),
          "max_pooling_2d" + where);
    return Add(Kind::kMaxPool, n, {n.inputs[0]});
  }
  if (a.dilation_h != 1 || a.dilation_w != 1) {
    throw Unsupported("dilated AvgPool: XNNPACK's average pooling has no dilation" + where);
  }
  if (a.count_include_pad && (a.pad_top | a.pad_left | a.pad_bottom | a.pad_right)) {
    throw Unsupported("AvgPool count_include_pad with pads: XNNPACK divides by the pixels inside" +
                      where);
  }
  Check(xnn_define_average_pooling_2d(sg_, u(a.pad_top), u(a.pad_right), u(a.pad_bottom),
                                      u(a.pad_left), u(a.kernel_h), u(a.kernel_w), u(a.stride_h),
                                      u(a.stride_w), -kInf, kInf, Id(n.inputs[0]), Id(n.output), 0),
        "average_pooling_2d" + where);
  Add(Kind::kAvgPool, n, {n.inputs[0]});
}

void Builder::FullyConnected(const Node& n) {
  const Shape& x = ShapeOf(n.inputs[0]);
  const std::string where = Where(n);
  if (!n.epilogue.empty()) throw Unsupported("Gemm with an epilogue" + where);
  if (Rank4(x)) throw Unsupported("matrix op on a 4-D value (NHWC inside XNNPACK)" + where);
  const GemmDims d = GetGemmDims(n, x);
  if (d.trans_a || d.alpha != 1) throw Unsupported("Gemm with transA or alpha != 1" + where);
  // B is [K, N] (XNN_FLAG_TRANSPOSE_WEIGHTS) or, with transB, [N, K] as XNNPACK stores it.
  const Tensor& b = n.params.at("B");
  const uint32_t filter = Static(b.shape, b.data);
  uint32_t bias = XNN_INVALID_VALUE_ID;
  if (auto c = n.params.find("C"); n.op == Op::Gemm && c != n.params.end()) {
    const Tensor& t = c->second;
    const bool per_n = t.size() == d.n && (t.shape.size() == 1 || t.shape[0] == 1);
    if (d.beta != 1 || !(per_n || t.size() == 1)) {
      throw Unsupported("Gemm C must be a [N] or [1] bias with beta 1 for XNNPACK" + where);
    }
    bias = Static({d.n}, per_n ? t.data : std::vector<float>(size_t(d.n), t.data[0]));
  }
  Check(xnn_define_fully_connected(sg_, -kInf, kInf, Id(n.inputs[0]), filter, bias, Id(n.output),
                                   d.trans_b ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS),
        "fully_connected" + where);
  Add(Kind::kFullyConnected, n, {n.inputs[0]});
}

}  // namespace fusefuzz::xnnpack
