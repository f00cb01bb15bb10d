// The int8 mode of fusefuzz-xnnpack-target (targets/xnnpack/README.md, "xnnpack:int8"): which
// values XNNPACK holds as 8-bit integers, QuantizeLinear / DequantizeLinear as converts,
// QLinearConv and QLinearAdd as XNNPACK's qs8 / qc8 / qu8 operators, and DQ -> Conv [-> act] -> Q
// chains as one quantized convolution. What XNNPACK (git 2022-02-16) cannot express is declined
// with the reason.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "targets/xnnpack/builder.h"
#include "targets/xnnpack/nhwc.h"

namespace fusefuzz::xnnpack {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::string Text(const QuantValue& q) {
  return std::string(QuantTypeName(q.type)) + " s=" + std::to_string(q.scale) +
         " z=" + std::to_string(q.zero_point);
}

bool Same(const QuantValue& a, const QuantValue& b) {
  return a.type == b.type && a.scale == b.scale && a.zero_point == b.zero_point;
}

// An activation value's params: XNNPACK's values have one scale and zero point, and no int32
// activations.
QuantValue PerTensorValue(const QuantParams& q, const std::string& where) {
  if (q.type == QuantType::kInt32) {
    throw Unsupported("int32 activations: XNNPACK converts only 8-bit values" + where);
  }
  if (q.PerAxis()) {
    throw Unsupported("per-axis quantization of a value: XNNPACK's quantized values have one " +
                      std::string("scale and zero point") + where);
  }
  return {q.type, static_cast<float>(q.scale[0]), static_cast<int32_t>(q.zero_point[0])};
}

// The activation of a QLinearConv epilogue or of a chain's activation node, in real units.
void ActivationBounds(Op act, const AttrMap& attrs, const std::string& where, float* lo,
                      float* hi) {
  *lo = -kInf;
  *hi = kInf;
  if (act == Op::Relu) *lo = 0;
  if (act == Op::Relu6) *lo = 0, *hi = 6;
  if (act == Op::Clip) {
    *lo = static_cast<float>(AttrFloat(act, attrs, "min", where));
    *hi = static_cast<float>(AttrFloat(act, attrs, "max", where));
    if (!(*lo < *hi)) {
      throw Unsupported("Clip with min >= max: XNNPACK's output_min must be below output_max" +
                        where);
    }
  }
}

bool IsClampAct(Op op) { return op == Op::Relu || op == Op::Relu6 || op == Op::Clip; }

}  // namespace

void Builder::PlanQuantized() {
  // Producers first: Q, QLinearConv and QLinearAdd write integers with their "y" params.
  for (const Node& n : r_.graph.nodes) {
    if (ProducesQuantized(n.op)) quant_[n.output] = PerTensorValue(n.quant.at("y"), Where(n));
  }
  // Readers: DQ ("x"), QLinearConv ("x", "r"), QLinearAdd ("a", "b") read with their own params;
  // XNNPACK reads a value with the params it carries, so they must agree.
  auto read = [&](const Node& n, const std::string& v, const char* role) {
    const QuantValue want = PerTensorValue(n.quant.at(role), Where(n));
    auto [it, added] = quant_.emplace(v, want);
    if (!added && !Same(it->second, want)) {
      throw Unsupported("value '" + v + "' holds " + Text(it->second) + " but is read as " +
                        Text(want) + ": an XNNPACK value carries one scale and zero point" +
                        Where(n));
    }
  };
  for (const Node& n : r_.graph.nodes) {
    if (n.op == Op::DequantizeLinear) read(n, n.inputs[0], "x");
    if (n.op == Op::QLinearConv) {
      read(n, n.inputs[0], "x");
      if (n.inputs.size() > 1) read(n, n.inputs[1], "r");
    }
    if (n.op == Op::QLinearAdd) read(n, n.inputs[0], "a"), read(n, n.inputs[1], "b");
  }
  // An integer value read by a float op would be computed on as floats: not expressible.
  for (const Node& n : r_.graph.nodes) {
    const bool reads_int =
        n.op == Op::DequantizeLinear || n.op == Op::QLinearConv || n.op == Op::QLinearAdd;
    for (const std::string& v : n.inputs) {
      if (!reads_int && quant_.count(v)) {
        throw Unsupported("float op " + std::string(OpName(n.op)) + " reads the integer value '" +
                          v + "': XNNPACK's quantized values feed quantized nodes" + Where(n));
      }
    }
  }
  FindChains();
}

void Builder::FindChains() {
  const Graph& g = r_.graph;
  // A value only the next node of the chain reads (so the chain's float values can vanish).
  auto internal = [&](const std::string& v, const Node** next) {
    if (g.IsGraphOutput(v)) return false;
    const std::vector<int> c = g.Consumers(v);
    if (c.size() != 1) return false;
    *next = &g.nodes[static_cast<size_t>(c[0])];
    return true;
  };
  for (const Node& n : g.nodes) {
    if (n.op != Op::Conv || n.inputs.size() != 1) continue;
    QdqConv c;
    c.conv = &n;
    c.dq = g.Producer(n.inputs[0]);
    if (!c.dq || c.dq->op != Op::DequantizeLinear) continue;
    auto w = n.quant.find("W");
    if (w == n.quant.end() || w->second.type != QuantType::kInt8) continue;
    if (std::any_of(w->second.zero_point.begin(), w->second.zero_point.end(),
                    [](int64_t z) { return z != 0; })) {
      continue;
    }
    const Node* next = nullptr;
    if (!internal(n.output, &next)) continue;
    if (IsClampAct(next->op)) {
      c.act = next;
      if (!internal(next->output, &next)) continue;
    }
    if (next->op != Op::QuantizeLinear) continue;
    c.q = next;
    const QuantValue* qx = Quantized(c.dq->inputs[0]);
    const QuantParams& qy = c.q->quant.at("y");
    if (!qx || qy.PerAxis() || qy.type != qx->type) continue;  // runs unfused
    if (!ChainExpressible(c, *qx, PerTensorValue(qy, Where(*c.q)))) continue;
    chain_of_[c.conv] = chain_of_[c.dq] = chain_of_[c.q] = chains_.size();
    if (c.act) chain_of_[c.act] = chains_.size();
    chains_.push_back(c);
  }
}

// XNNPACK's requantization scale s_x s_w / s_y (in float, as XNNPACK computes it) must lie in
// [2^-32, 256): at or above 256 the operator is refused at creation, below 2^-32 the
// requantization parameters' initializer asserts (src/microparams-init.c at ae108ef), which
// aborts the process: the pack declines what the API forbids, and a real crash stays a finding.
namespace {
bool RequantizationScaleOk(float scale) { return scale >= 0x1p-32f && scale < 256.0f; }
}  // namespace

// What XNNPACK's quantized convolution operators refuse at creation (src/operators/
// convolution-nhwc.c at ae108ef) leaves a chain on its float path: no per-channel qu8, a
// requantization scale s_x s_w / s_y below 256, and integer bounds output_min < output_max as
// XNNPACK rounds them (a Relu whose zero point is qmax saturates everything: the float path
// computes that).
bool Builder::ChainExpressible(const QdqConv& c, const QuantValue& qx, const QuantValue& qy) const {
  const QuantParams& qw = c.conv->quant.at("W");
  const bool per_channel =
      std::any_of(qw.scale.begin(), qw.scale.end(), [&](double v) { return v != qw.scale[0]; });
  if (per_channel && qx.type == QuantType::kUint8) return false;
  for (double sw : qw.scale) {
    if (!RequantizationScaleOk(qx.scale * static_cast<float>(sw) / qy.scale)) return false;
  }
  float lo = -kInf, hi = kInf;
  if (c.act) {
    if (c.act->op == Op::Clip && !(AttrFloat(*c.act, "min") < AttrFloat(*c.act, "max"))) {
      return false;
    }
    ActivationBounds(c.act->op, c.act->attrs, Where(*c.act), &lo, &hi);
  }
  const float qmin = static_cast<float>(QMin(qy.type)), qmax = static_cast<float>(QMax(qy.type));
  const auto q = [&](float v) {
    return std::lrintf(
        std::fmin(std::fmax(v / qy.scale + static_cast<float>(qy.zero_point), qmin), qmax));
  };
  return q(lo) < q(hi);
}

void Builder::Convert(const Node& n) {
  if (!int8_) throw Unsupported("quantized ops run in xnnpack:int8" + Where(n));
  Check(xnn_define_convert(sg_, Id(n.inputs[0]), Id(n.output), 0), "convert" + Where(n));
  Add(Kind::kOther, n, {n.inputs[0]});
}

uint32_t Builder::StaticBytes(xnn_datatype type, const Shape& dims, const void* data, size_t bytes,
                              int32_t zero_point, float scale) {
  bytes_.push_back(std::make_unique<std::vector<char>>(bytes + XNN_EXTRA_BYTES));
  std::memcpy(bytes_.back()->data(), data, bytes);
  std::vector<size_t> d(dims.begin(), dims.end());
  uint32_t id = 0;
  Check(xnn_define_quantized_tensor_value(sg_, type, zero_point, scale, d.size(), d.data(),
                                          bytes_.back()->data(), XNN_INVALID_VALUE_ID, 0, &id),
        "define a quantized static value");
  return id;
}

uint32_t Builder::StaticChannelwise(xnn_datatype type, const Shape& dims, const void* data,
                                    size_t bytes, size_t channel_dim, std::vector<float> scales) {
  bytes_.push_back(std::make_unique<std::vector<char>>(bytes + XNN_EXTRA_BYTES));
  std::memcpy(bytes_.back()->data(), data, bytes);
  // XNNPACK keeps the pointer to the scales: they live as long as the statics.
  statics_.push_back(std::make_unique<std::vector<float>>(std::move(scales)));
  std::vector<size_t> d(dims.begin(), dims.end());
  uint32_t id = 0;
  Check(xnn_define_channelwise_quantized_tensor_value(sg_, type, statics_.back()->data(), d.size(),
                                                      channel_dim, d.data(), bytes_.back()->data(),
                                                      XNN_INVALID_VALUE_ID, 0, &id),
        "define a channelwise quantized static value");
  return id;
}

void Builder::QuantizedConv(const Node& n, const std::string& x, const QuantValue& qx,
                            const std::vector<float>& w, const std::vector<double>& sw,
                            const Tensor* bias, bool int_bias, const std::string& y,
                            const QuantValue& qy, float lo, float hi) {
  const std::string where = Where(n);
  const Shape& xs = ShapeOf(x);
  const Tensor& W = n.params.at("W");
  const ConvAttrs a = GetConvAttrs(n);
  const int64_t m = W.shape[0], cg = W.shape[1], kh = W.shape[2], kw = W.shape[3], c = xs[1];
  const bool depthwise = a.group > 1 && a.group == c;
  if (qy.type != qx.type) {
    throw Unsupported("a quantized convolution from " + std::string(QuantTypeName(qx.type)) +
                      " to " + std::string(QuantTypeName(qy.type)) +
                      ": XNNPACK's qs8/qu8 operators keep the type" + where);
  }
  const bool per_channel =
      sw.size() > 1 && std::any_of(sw.begin(), sw.end(), [&](double s) { return s != sw[0]; });
  const bool u8 = qx.type == QuantType::kUint8;
  if (u8 && per_channel) {
    throw Unsupported(
        "per-channel weight scales with uint8 activations: XNNPACK (2022-02) has per-channel "
        "convolutions for int8 only (qc8)" +
        where);
  }
  for (double s : sw) {
    const float scale = qx.scale * static_cast<float>(s) / qy.scale;
    if (!RequantizationScaleOk(scale)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", static_cast<double>(scale));
      throw Unsupported(std::string("requantization scale s_x s_w / s_y = ") + buf +
                        ": XNNPACK's quantized convolution takes [2^-32, 256)" + where);
    }
  }
  // Filter in XNNPACK's layout ([1, kH, kW, C*mult] depthwise, else [M, kH, kW, C/group]);
  // uint8 activations take uint8 weights: w + 128 with zero point 128, exact.
  std::vector<int8_t> f8(w.size());
  std::vector<uint8_t> fu(w.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < cg; ++i)
      for (int64_t yy = 0; yy < kh; ++yy)
        for (int64_t z = 0; z < kw; ++z) {
          const float v = w[static_cast<size_t>(((o * cg + i) * kh + yy) * kw + z)];
          const size_t at = static_cast<size_t>(depthwise ? (yy * kw + z) * m + o
                                                          : ((o * kh + yy) * kw + z) * cg + i);
          f8[at] = static_cast<int8_t>(v);
          fu[at] = static_cast<uint8_t>(static_cast<int>(v) + 128);
        }
  const Shape fdims = depthwise ? Shape{1, kh, kw, m} : Shape{m, kh, kw, cg};
  uint32_t filter = 0;
  if (u8) {
    filter = StaticBytes(xnn_datatype_quint8, fdims, fu.data(), fu.size(), 128,
                         static_cast<float>(sw[0]));
  } else if (per_channel) {
    std::vector<float> scales(sw.begin(), sw.end());
    filter = StaticChannelwise(xnn_datatype_qcint8, fdims, f8.data(), f8.size(), depthwise ? 3 : 0,
                               scales);
  } else {
    filter =
        StaticBytes(xnn_datatype_qint8, fdims, f8.data(), f8.size(), 0, static_cast<float>(sw[0]));
  }
  uint32_t bias_id = XNN_INVALID_VALUE_ID;
  if (bias) {
    // int32 at s_x * s_w (per channel): a float bias rounds there, as every int8 engine's does
    // (the grid oracle admits that rounding, docs/oracle.md).
    std::vector<int32_t> b(static_cast<size_t>(m));
    std::vector<float> scales(static_cast<size_t>(m));
    for (int64_t o = 0; o < m; ++o) {
      const double s = static_cast<double>(qx.scale) * sw[per_channel ? static_cast<size_t>(o) : 0];
      scales[static_cast<size_t>(o)] = static_cast<float>(s);
      const double v = bias->data[static_cast<size_t>(o)];
      const double q = int_bias ? v : std::nearbyint(v / s);
      if (!(std::fabs(q) < 2147483647.0)) {
        throw Unsupported("bias beyond int32 at s_x * s_w" + where);
      }
      b[static_cast<size_t>(o)] = static_cast<int32_t>(q);
    }
    if (per_channel) {
      bias_id = StaticChannelwise(xnn_datatype_qcint32, {m}, b.data(), b.size() * 4, 0, scales);
    } else {
      bias_id = StaticBytes(xnn_datatype_qint32, {m}, b.data(), b.size() * 4, 0, scales[0]);
    }
  }
  const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  if (depthwise) {
    Check(xnn_define_depthwise_convolution_2d(
              sg_, u(a.pad_top), u(a.pad_right), u(a.pad_bottom), u(a.pad_left), u(kh), u(kw),
              u(a.stride_h), u(a.stride_w), u(a.dilation_h), u(a.dilation_w), u(m / c), size_t(c),
              lo, hi, Id(x), filter, bias_id, Id(y), 0),
          "quantized depthwise_convolution_2d" + where);
  } else {
    Check(xnn_define_convolution_2d(sg_, u(a.pad_top), u(a.pad_right), u(a.pad_bottom),
                                    u(a.pad_left), u(kh), u(kw), u(a.stride_h), u(a.stride_w),
                                    u(a.dilation_h), u(a.dilation_w), u(a.group), size_t(cg),
                                    size_t(m / a.group), lo, hi, Id(x), filter, bias_id, Id(y), 0),
          "quantized convolution_2d" + where);
  }
  Add(depthwise ? Kind::kDepthwise : Kind::kConv, n, {x}, false, y);
}

void Builder::QLinearConv(const Node& n) {
  const std::string where = Where(n);
  if (!int8_) throw Unsupported("quantized ops run in xnnpack:int8" + where);
  if (n.inputs.size() > 1) {
    throw Unsupported(
        "QLinearConv with a residual: XNNPACK's quantized convolution has no residual input, and "
        "an add2 after it would round twice" +
        where);
  }
  float lo = -kInf, hi = kInf;
  for (const EpilogueStep& s : n.epilogue) {
    if (s.kind == EpilogueKind::kActivation) ActivationBounds(s.act, s.attrs, where, &lo, &hi);
  }
  const QuantParams& qw = n.quant.at("w");
  auto b = n.params.find("B");
  QuantizedConv(n, n.inputs[0], *Quantized(n.inputs[0]), n.params.at("W").data, qw.scale,
                b == n.params.end() ? nullptr : &b->second, true, n.output, *Quantized(n.output),
                lo, hi);
}

void Builder::Chain(const QdqConv& c) {
  const Node& n = *c.conv;
  const QuantParams& qw = n.quant.at("W");
  // The weights' integers: W = s_w * q exactly (the verifier checked the grid).
  const Tensor& W = n.params.at("W");
  std::vector<float> q(W.data.size());
  const int64_t per = W.shape[1] * W.shape[2] * W.shape[3];
  for (size_t i = 0; i < q.size(); ++i) {
    int64_t v = 0;
    const int64_t ch = qw.PerAxis() ? static_cast<int64_t>(i) / per : 0;
    if (!OnGrid(W.data[i], qw.Scale(ch), 0, QuantType::kInt8, &v)) {
      throw std::logic_error("weight off its declared grid" + Where(n));
    }
    q[i] = static_cast<float>(v);
  }
  std::vector<double> sw = qw.scale;
  if (qw.PerAxis() && sw.size() == 1) sw.assign(static_cast<size_t>(W.shape[0]), sw[0]);
  float lo = -kInf, hi = kInf;
  if (c.act) ActivationBounds(c.act->op, c.act->attrs, Where(*c.act), &lo, &hi);
  auto b = n.params.find("B");
  QuantizedConv(n, c.dq->inputs[0], *Quantized(c.dq->inputs[0]), q, sw,
                b == n.params.end() ? nullptr : &b->second, false, c.q->output,
                *Quantized(c.q->output), lo, hi);
}

void Builder::QLinearAdd(const Node& n) {
  const std::string where = Where(n);
  if (!int8_) throw Unsupported("quantized ops run in xnnpack:int8" + where);
  const float lo = AttrString(n, "activation") == "relu" ? 0.0f : -kInf;
  Check(xnn_define_add2(sg_, lo, kInf, Id(n.inputs[0]), Id(n.inputs[1]), Id(n.output), 0),
        "quantized add2" + where);
  Add(Kind::kBinary, n, {n.inputs[0], n.inputs[1]});
}

}  // namespace fusefuzz::xnnpack
