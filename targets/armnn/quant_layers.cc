// armnn:int8 (targets/armnn/README.md): quantized tensors and layers on CpuRef.
#include "targets/armnn/quant_layers.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "targets/armnn/conv_layout.h"
#include "targets/native_server.h"

namespace fusefuzz::armnn_int8 {
namespace {

std::string Where(const Node& n) { return " (node '" + n.name + "')"; }

QuantValue PerTensorValue(const QuantParams& q, const std::string& where) {
  if (q.type == QuantType::kInt32) {
    throw Unsupported("int32 activations: Arm NN quantizes to 8 bits here" + where);
  }
  if (q.PerAxis()) {
    throw Unsupported("per-axis quantization of a value: Arm NN's QAsymm8 tensors have one " +
                      std::string("scale and offset") + where);
  }
  return {q.type, static_cast<float>(q.scale[0]), static_cast<int32_t>(q.zero_point[0])};
}

std::string Text(const QuantValue& q) {
  return std::string(QuantTypeName(q.type)) + " s=" + std::to_string(q.scale) +
         " z=" + std::to_string(q.zero_point);
}

armnn::TensorShape ShapeOf(const Shape& s) {
  std::vector<unsigned int> d(s.begin(), s.end());
  return armnn::TensorShape(static_cast<unsigned int>(d.size()), d.data());
}

armnn::ActivationDescriptor ActivationOf(Op act, const AttrMap& attrs, const std::string& where) {
  armnn::ActivationDescriptor d;
  if (act == Op::Relu) {
    d.m_Function = armnn::ActivationFunction::ReLu;
  } else {
    // BoundedReLu: min(a, max(b, x)).
    d.m_Function = armnn::ActivationFunction::BoundedReLu;
    d.m_A = act == Op::Relu6 ? 6.0f : static_cast<float>(AttrFloat(act, attrs, "max", where));
    d.m_B = act == Op::Relu6 ? 0.0f : static_cast<float>(AttrFloat(act, attrs, "min", where));
    if (!(d.m_B < d.m_A)) throw Unsupported("Clip with min >= max for Arm NN" + where);
  }
  return d;
}

}  // namespace

QuantPlan PlanQuantized(const Graph& g) {
  QuantPlan plan;
  for (const Node& n : g.nodes) {
    if (ProducesQuantized(n.op)) plan[n.output] = PerTensorValue(n.quant.at("y"), Where(n));
  }
  auto read = [&](const Node& n, const std::string& v, const char* role) {
    const QuantValue want = PerTensorValue(n.quant.at(role), Where(n));
    auto [it, added] = plan.emplace(v, want);
    const QuantValue& have = it->second;
    if (!added && (have.type != want.type || have.scale != want.scale ||
                   have.zero_point != want.zero_point)) {
      throw Unsupported("value '" + v + "' holds " + Text(have) + " but is read as " + Text(want) +
                        ": an Arm NN tensor carries one scale and offset" + Where(n));
    }
  };
  for (const Node& n : g.nodes) {
    if (n.op == Op::DequantizeLinear) read(n, n.inputs[0], "x");
    if (n.op == Op::QLinearConv) {
      read(n, n.inputs[0], "x");
      if (n.inputs.size() > 1) read(n, n.inputs[1], "r");
    }
    if (n.op == Op::QLinearAdd) read(n, n.inputs[0], "a"), read(n, n.inputs[1], "b");
  }
  for (const Node& n : g.nodes) {
    const bool reads_int =
        n.op == Op::DequantizeLinear || n.op == Op::QLinearConv || n.op == Op::QLinearAdd;
    for (const std::string& v : n.inputs) {
      if (!reads_int && plan.count(v)) {
        throw Unsupported("float op " + std::string(OpName(n.op)) + " reads the integer value '" +
                          v + "'" + Where(n));
      }
    }
  }
  return plan;
}

armnn::TensorInfo QuantInfo(const Shape& s, const QuantValue& q) {
  return armnn::TensorInfo(
      ShapeOf(s),
      q.type == QuantType::kInt8 ? armnn::DataType::QAsymmS8 : armnn::DataType::QAsymmU8, q.scale,
      q.zero_point);
}

std::pair<armnn::IConnectableLayer*, armnn::IConnectableLayer*> AddQLinearConv(
    armnn::INetwork* net, const Node& n, const Shape& x, const Shape& y, const QuantPlan& plan,
    Storage* keep) {
  const std::string where = Where(n);
  if (n.inputs.size() > 1) {
    throw Unsupported(
        "QLinearConv with a residual: Arm NN's Convolution2d has no residual input, and an "
        "Addition after it would round twice" +
        where);
  }
  const QuantValue& qx = plan.at(n.inputs[0]);
  const QuantParams& qw = n.quant.at("w");
  const ConvAttrs a = GetConvAttrs(n);
  const Tensor& w = n.params.at("W");
  const int64_t m = w.shape[0], kh = w.shape[2], kw = w.shape[3], c = x[1];
  const bool depthwise = a.group > 1 && a.group == c;
  if (a.group != 1 && !depthwise) {
    throw Unsupported("grouped convolution: Arm NN has no groups" + where);
  }
  std::vector<float> sw(static_cast<size_t>(m));
  for (int64_t o = 0; o < m; ++o) sw[static_cast<size_t>(o)] = static_cast<float>(qw.Scale(o));
  const bool per_channel = std::any_of(sw.begin(), sw.end(), [&](float s) { return s != sw[0]; });
  // Weights: ours [M, C/group, kH, kW]; depthwise [multiplier, C, kH, kW] for Arm NN.
  const int64_t mult = depthwise ? m / c : 1;
  keep->i8.push_back(std::make_unique<std::vector<int8_t>>(
      depthwise ? armnn_conv::DepthwiseWeights<int8_t>(w.data, c, mult, kh * kw)
                : std::vector<int8_t>(w.data.begin(), w.data.end())));
  std::vector<int8_t>& wq = *keep->i8.back();
  const Shape wshape = depthwise ? Shape{mult, c, kh, kw} : w.shape;
  // Where Arm NN 20.08 reads a depthwise filter's per-axis scales ([mult, C, kH, kW]) is not
  // established here: not translated rather than guessed.
  if (per_channel && depthwise) {
    throw Unsupported("per-channel depthwise weights: not translated for Arm NN 20.08" + where);
  }
  const armnn::TensorInfo winfo =
      per_channel ? armnn::TensorInfo(ShapeOf(wshape), armnn::DataType::QSymmS8, sw, 0u)
                  : armnn::TensorInfo(ShapeOf(wshape), armnn::DataType::QSymmS8, sw[0], 0);
  armnn::Optional<armnn::ConstTensor> bias;
  if (auto b = n.params.find("B"); b != n.params.end()) {
    keep->i32.push_back(std::make_unique<std::vector<int32_t>>(static_cast<size_t>(m)));
    std::vector<float> sb(static_cast<size_t>(m));
    for (int64_t o = 0; o < m; ++o) {
      (*keep->i32.back())[static_cast<size_t>(o)] =
          static_cast<int32_t>(b->second.data[static_cast<size_t>(o)]);
      sb[static_cast<size_t>(o)] = qx.scale * sw[static_cast<size_t>(o)];
    }
    const armnn::TensorInfo binfo =
        per_channel ? armnn::TensorInfo(ShapeOf({m}), armnn::DataType::Signed32, sb, 0)
                    : armnn::TensorInfo(ShapeOf({m}), armnn::DataType::Signed32, sb[0], 0);
    bias = armnn::ConstTensor(binfo, keep->i32.back()->data());
  }
  const armnn::ConstTensor weights(winfo, wq.data());
  armnn::IConnectableLayer* conv = nullptr;
  if (depthwise) {
    conv = net->AddDepthwiseConvolution2dLayer(
        armnn_conv::ConvDescriptor<armnn::DepthwiseConvolution2dDescriptor>(a, bias.has_value()),
        weights, bias, n.name.c_str());
  } else {
    conv = net->AddConvolution2dLayer(
        armnn_conv::ConvDescriptor<armnn::Convolution2dDescriptor>(a, bias.has_value()), weights,
        bias, n.name.c_str());
  }
  armnn::IConnectableLayer* last = conv;
  for (const EpilogueStep& s : n.epilogue) {
    if (s.kind != EpilogueKind::kActivation) continue;
    armnn::IConnectableLayer* act =
        net->AddActivationLayer(ActivationOf(s.act, s.attrs, where), (n.name + ":act").c_str());
    conv->GetOutputSlot(0).SetTensorInfo(QuantInfo(y, plan.at(n.output)));
    conv->GetOutputSlot(0).Connect(act->GetInputSlot(0));
    last = act;
  }
  return {conv, last};
}

std::pair<armnn::IConnectableLayer*, armnn::IConnectableLayer*> AddQLinearAdd(
    armnn::INetwork* net, const Node& n, const Shape& y, const QuantPlan& plan) {
  armnn::IConnectableLayer* add = net->AddAdditionLayer(n.name.c_str());
  if (AttrString(n, "activation") != "relu") return {add, add};
  add->GetOutputSlot(0).SetTensorInfo(QuantInfo(y, plan.at(n.output)));
  armnn::ActivationDescriptor d;
  d.m_Function = armnn::ActivationFunction::ReLu;
  armnn::IConnectableLayer* relu = net->AddActivationLayer(d, (n.name + ":relu").c_str());
  add->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
  return {add, relu};
}

// The bytes of an 8-bit quantized tensor from floats holding its integers, and back.
std::vector<float> Packed(const Tensor& t, const QuantValue& q, const std::string& v) {
  std::vector<float> out(t.data.size() / 4 + 1);
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  const float lo = q.type == QuantType::kInt8 ? -128 : 0,
              hi = q.type == QuantType::kInt8 ? 127 : 255;
  for (size_t i = 0; i < t.data.size(); ++i) {
    const float x = t.data[i];
    if (!(x == std::nearbyint(x) && x >= lo && x <= hi)) {
      throw std::runtime_error("graph input '" + v + "' feeds a quantized tensor but element " +
                               std::to_string(i) + " is " + std::to_string(x));
    }
    bytes[i] = static_cast<unsigned char>(static_cast<int>(x) & 0xff);
  }
  return out;
}
void Unpack(const std::vector<float>& buf, const QuantValue& q, Tensor* t) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(buf.data());
  for (size_t i = 0; i < t->data.size(); ++i) {
    t->data[i] = q.type == QuantType::kInt8 ? static_cast<float>(static_cast<int8_t>(bytes[i]))
                                            : static_cast<float>(bytes[i]);
  }
}

}  // namespace fusefuzz::armnn_int8
