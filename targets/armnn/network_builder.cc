// The graph-to-INetwork translation of fusefuzz-armnn-target (network_builder.h).
#include "targets/armnn/network_builder.h"

#include <algorithm>
#include <cmath>

#include "targets/armnn/conv_layout.h"

namespace fusefuzz::armnn_net {

armnn::TensorInfo Info(const Shape& s) {
  std::vector<unsigned int> d(s.begin(), s.end());
  return armnn::TensorInfo(armnn::TensorShape(static_cast<unsigned int>(d.size()), d.data()),
                           armnn::DataType::Float32);
}

Builder::Builder(const NativeRequest& r, armnn::INetwork* net, bool int8) : r_(r), net_(net) {
  if (int8) plan_ = armnn_int8::PlanQuantized(r.graph);
}
const armnn_int8::QuantPlan& Builder::plan() const { return plan_; }
// A value's tensor info: float32, or its quantized type with its one scale and offset.
armnn::TensorInfo Builder::InfoOf(const std::string& v) const {
  auto q = plan_.find(v);
  return q == plan_.end() ? Info(r_.shapes.at(v))
                          : armnn_int8::QuantInfo(r_.shapes.at(v), q->second);
}

// Pads whose fold into the following Convolution2d is withheld get a Reshape barrier.
std::vector<std::pair<std::string, std::string>> Builder::PadConvPairs() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Node& n : r_.graph.nodes) {
    if (n.op != Op::Conv || GetConvAttrs(n).group != 1) continue;
    const Node* p = r_.graph.Producer(n.inputs[0]);
    if (p && p->op == Op::Pad) out.push_back({p->name, n.name});
  }
  return out;
}

void Builder::Build(const std::set<std::string>& barrier_convs) {
  barriers_ = barrier_convs;
  armnn::LayerBindingId id = 0;
  for (const ValueInfo& in : r_.graph.inputs) {
    armnn::IConnectableLayer* l = net_->AddInputLayer(id++, in.name.c_str());
    l->GetOutputSlot(0).SetTensorInfo(InfoOf(in.name));
    out_[in.name] = &l->GetOutputSlot(0);
  }
  for (const Node& n : r_.graph.nodes) {
    armnn::IConnectableLayer* l = Layer(n);
    l->GetOutputSlot(0).SetTensorInfo(InfoOf(n.output));
    out_[n.output] = &l->GetOutputSlot(0);
  }
  id = 0;
  for (const std::string& o : r_.graph.outputs) {
    armnn::IConnectableLayer* l = net_->AddOutputLayer(id++, ("out:" + o).c_str());
    Slot(o).Connect(l->GetInputSlot(0));
  }
  // Dead values (no consumer, not an output) get an output layer too: Arm NN removes
  // unconnected layers, and with them a graph input only they read (then unbindable).
  for (const std::string& v : DeadValues()) {
    armnn::IConnectableLayer* l = net_->AddOutputLayer(id++, ("dead:" + v).c_str());
    Slot(v).Connect(l->GetInputSlot(0));
  }
}

std::vector<std::string> Builder::DeadValues() const {
  std::vector<std::string> out;
  for (const Node& n : r_.graph.nodes) {
    if (!r_.graph.IsGraphOutput(n.output) && r_.graph.Consumers(n.output).empty()) {
      out.push_back(n.output);
    }
  }
  return out;
}

armnn::IOutputSlot& Builder::Slot(const std::string& v) { return *out_.at(v); }
std::string Builder::Where(const Node& n) const { return " (node '" + n.name + "')"; }
armnn::ConstTensor Builder::Const(const Shape& s, const std::vector<float>& d) {
  data_.push_back(std::make_unique<std::vector<float>>(d));
  return armnn::ConstTensor(Info(s), data_.back()->data());
}
// A constant operand as a layer, extended to `rank` (Arm NN broadcasts equal ranks only).
armnn::IOutputSlot& Builder::ConstLayer(const Tensor& t, size_t rank, const std::string& name) {
  Shape s(rank - std::min(rank, t.shape.size()), 1);
  s.insert(s.end(), t.shape.begin(), t.shape.end());
  armnn::IConnectableLayer* l = net_->AddConstantLayer(Const(s, t.data), name.c_str());
  l->GetOutputSlot(0).SetTensorInfo(Info(s));
  return l->GetOutputSlot(0);
}
armnn::IConnectableLayer* Builder::Unary(armnn::IConnectableLayer* l, const Node& n) {
  Slot(n.inputs[0]).Connect(l->GetInputSlot(0));
  return l;
}
armnn::IConnectableLayer* Builder::Act(const Node& n, armnn::ActivationFunction f, float a,
                                       float b) {
  armnn::ActivationDescriptor d;
  d.m_Function = f;
  d.m_A = a;
  d.m_B = b;
  return Unary(net_->AddActivationLayer(d, n.name.c_str()), n);
}

armnn::IConnectableLayer* Builder::Layer(const Node& n) {
  using F = armnn::ActivationFunction;
  const std::string where = Where(n);
  switch (n.op) {
    case Op::Conv:
      return Conv(n);
    case Op::BatchNorm: {
      armnn::BatchNormalizationDescriptor d;
      d.m_Eps = static_cast<float>(AttrFloat(n, "epsilon"));
      d.m_DataLayout = armnn::DataLayout::NCHW;
      if (r_.shapes.at(n.inputs[0]).size() != 4) throw Unsupported("BatchNorm of a non-4-D value");
      const auto p = [&](const char* k) {
        const Tensor& t = n.params.at(k);
        return Const({t.size()}, t.data);
      };
      return Unary(net_->AddBatchNormalizationLayer(d, p("mean"), p("var"), p("bias"), p("scale"),
                                                    n.name.c_str()),
                   n);
    }
    case Op::Relu:
      return Act(n, F::ReLu);
    case Op::Relu6:
      return Act(n, F::BoundedReLu, 6.0f, 0.0f);
    case Op::Clip: {
      // min(a, max(b, x)): with min > max every output is max, as in ONNX.
      const float lo = static_cast<float>(AttrFloat(n, "min"));
      const float hi = static_cast<float>(AttrFloat(n, "max"));
      if (std::isnan(lo) || std::isnan(hi)) throw Unsupported("Clip with a NaN bound" + where);
      return Act(n, F::BoundedReLu, hi, lo);
    }
    case Op::LeakyRelu:
      return Act(n, F::LeakyReLu, static_cast<float>(AttrFloat(n, "alpha")));
    case Op::Elu:
      return Act(n, F::Elu, static_cast<float>(AttrFloat(n, "alpha")));
    case Op::Sigmoid:
      return Act(n, F::Sigmoid);
    case Op::Tanh:
      return Act(n, F::TanH, 1.0f, 1.0f);  // a * tanh(b * x)
    case Op::HardSwish:
      return Act(n, F::HardSwish);
    case Op::PRelu: {
      armnn::IConnectableLayer* l = net_->AddPreluLayer(n.name.c_str());
      Slot(n.inputs[0]).Connect(l->GetInputSlot(0));
      ConstLayer(n.params.at("slope"), r_.shapes.at(n.inputs[0]).size(), n.name + ":slope")
          .Connect(l->GetInputSlot(1));
      return l;
    }
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
      return Binary(n);
    case Op::Pad: {
      if (AttrString(n, "mode") != "constant") {
        throw Unsupported("Pad mode '" + AttrString(n, "mode") + "': Arm NN pads with a constant" +
                          where);
      }
      const std::vector<int64_t> p = AttrInts(n, "pads");  // t, l, b, r
      armnn::PadDescriptor d(
          {{0, 0}, {0, 0}, {unsigned(p[0]), unsigned(p[2])}, {unsigned(p[1]), unsigned(p[3])}},
          static_cast<float>(AttrFloat(n, "value")));
      if (r_.shapes.at(n.inputs[0]).size() != 4) throw Unsupported("Pad of a non-4-D value");
      return Unary(net_->AddPadLayer(d, n.name.c_str()), n);
    }
    case Op::MaxPool:
    case Op::AvgPool:
    case Op::GlobalAvgPool:
      return Pool(n);
    case Op::Concat: {
      std::vector<armnn::TensorShape> shapes;
      for (const std::string& v : n.inputs) shapes.push_back(Info(r_.shapes.at(v)).GetShape());
      int64_t axis = AttrInt(n, "axis");
      if (axis < 0) axis += static_cast<int64_t>(r_.shapes.at(n.inputs[0]).size());
      const armnn::OriginsDescriptor d = armnn::CreateDescriptorForConcatenation(
          shapes.begin(), shapes.end(), static_cast<unsigned int>(axis));
      armnn::IConnectableLayer* l = net_->AddConcatLayer(d, n.name.c_str());
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        Slot(n.inputs[i]).Connect(l->GetInputSlot(static_cast<unsigned int>(i)));
      }
      return l;
    }
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape: {
      armnn::ReshapeDescriptor d(Info(r_.shapes.at(n.output)).GetShape());
      return Unary(net_->AddReshapeLayer(d, n.name.c_str()), n);
    }
    case Op::Gemm:
    case Op::MatMul:
      return FullyConnected(n);
    case Op::FusedConv:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::HardSigmoid:
    case Op::Silu:
    case Op::Gelu:
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
      // Not in the hello: fusefuzz never sends them.
      throw Unsupported(std::string(OpName(n.op)) + " is not translated" + where);
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
    case Op::QLinearConv:
    case Op::QLinearAdd:
      return Quantized(n);
  }
  throw Unsupported("unknown op" + where);
}

armnn::IConnectableLayer* Builder::Quantized(const Node& n) {
  if (plan_.empty()) throw Unsupported("quantized ops run in armnn:int8" + Where(n));
  if (n.op == Op::QuantizeLinear) return Unary(net_->AddQuantizeLayer(n.name.c_str()), n);
  if (n.op == Op::DequantizeLinear) return Unary(net_->AddDequantizeLayer(n.name.c_str()), n);
  const Shape& y = r_.shapes.at(n.output);
  const auto [first, last] =
      n.op == Op::QLinearConv
          ? armnn_int8::AddQLinearConv(net_, n, r_.shapes.at(n.inputs[0]), y, plan_, &keep_)
          : armnn_int8::AddQLinearAdd(net_, n, y, plan_);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    Slot(n.inputs[i]).Connect(first->GetInputSlot(static_cast<unsigned>(i)));
  }
  return last;
}

armnn::IConnectableLayer* Builder::Conv(const Node& n) {
  const ConvAttrs a = GetConvAttrs(n);
  const Tensor& w = n.params.at("W");
  const int64_t m = w.shape[0], kh = w.shape[2], kw = w.shape[3];
  const int64_t c = r_.shapes.at(n.inputs[0])[1];
  armnn::Optional<armnn::ConstTensor> bias;
  if (auto b = n.params.find("B"); b != n.params.end()) bias = Const({m}, b->second.data);
  armnn::IConnectableLayer* l = nullptr;
  if (a.group == 1) {
    l = net_->AddConvolution2dLayer(
        armnn_conv::ConvDescriptor<armnn::Convolution2dDescriptor>(a, bias.has_value()),
        Const(w.shape, w.data), bias, n.name.c_str());
  } else if (a.group == c) {
    const int64_t mult = m / c;
    l = net_->AddDepthwiseConvolution2dLayer(
        armnn_conv::ConvDescriptor<armnn::DepthwiseConvolution2dDescriptor>(a, bias.has_value()),
        Const({mult, c, kh, kw}, armnn_conv::DepthwiseWeights<float>(w.data, c, mult, kh * kw)),
        bias, n.name.c_str());
  } else {
    throw Unsupported("grouped convolution with " + std::to_string(a.group) +
                      " groups: Arm NN has no groups" + Where(n));
  }
  armnn::IOutputSlot& in = Slot(n.inputs[0]);
  if (barriers_.count(n.name)) {
    // Withholds FoldPadIntoConvolution2d: the Pad no longer feeds the convolution directly.
    const Shape& s = r_.shapes.at(n.inputs[0]);
    armnn::IConnectableLayer* keep = net_->AddReshapeLayer(
        armnn::ReshapeDescriptor(Info(s).GetShape()), (n.name + ":unfused").c_str());
    keep->GetOutputSlot(0).SetTensorInfo(Info(s));
    in.Connect(keep->GetInputSlot(0));
    keep->GetOutputSlot(0).Connect(l->GetInputSlot(0));
  } else {
    in.Connect(l->GetInputSlot(0));
  }
  return l;
}

armnn::IConnectableLayer* Builder::Binary(const Node& n) {
  const BinaryOperands ops = GetBinaryOperands(n);
  const size_t rank = r_.shapes.at(n.output).size();
  armnn::IConnectableLayer* l = nullptr;
  if (n.op == Op::Add) l = net_->AddAdditionLayer(n.name.c_str());
  if (n.op == Op::Sub) l = net_->AddSubtractionLayer(n.name.c_str());
  if (n.op == Op::Mul) l = net_->AddMultiplicationLayer(n.name.c_str());
  if (n.op == Op::Div) l = net_->AddDivisionLayer(n.name.c_str());
  const auto operand = [&](const Tensor* c, int input, unsigned slot) {
    if (c) {
      ConstLayer(*c, rank, n.name + (slot ? ":B" : ":A")).Connect(l->GetInputSlot(slot));
      return;
    }
    if (r_.shapes.at(n.inputs[input]).size() != rank) {
      throw Unsupported("binary operands of different ranks: Arm NN 20.08 broadcasts equal ranks" +
                        Where(n));
    }
    Slot(n.inputs[input]).Connect(l->GetInputSlot(slot));
  };
  operand(ops.const_a, ops.input_a, 0);
  operand(ops.const_b, ops.input_b, 1);
  return l;
}

armnn::IConnectableLayer* Builder::Pool(const Node& n) {
  const Shape& x = r_.shapes.at(n.inputs[0]);
  if (x.size() != 4) throw Unsupported("pool of a non-4-D value" + Where(n));
  armnn::Pooling2dDescriptor d;
  d.m_DataLayout = armnn::DataLayout::NCHW;
  d.m_PaddingMethod = armnn::PaddingMethod::Exclude;
  if (n.op == Op::GlobalAvgPool) {
    d.m_PoolType = armnn::PoolingAlgorithm::Average;
    d.m_PoolHeight = unsigned(x[2]), d.m_PoolWidth = unsigned(x[3]);
    d.m_StrideX = d.m_StrideY = 1;
    return Unary(net_->AddPooling2dLayer(d, n.name.c_str()), n);
  }
  const PoolAttrs a = GetPoolAttrs(n);
  if (a.dilation_h != 1 || a.dilation_w != 1) {
    throw Unsupported("dilated pooling: Arm NN 20.08's Pooling2d has no dilation" + Where(n));
  }
  const Shape& y = r_.shapes.at(n.output);
  const auto floor_size = [](int64_t in, int64_t p0, int64_t p1, int64_t k, int64_t s) {
    return (in + p0 + p1 - k) / s + 1;
  };
  if (floor_size(x[2], a.pad_top, a.pad_bottom, a.kernel_h, a.stride_h) != y[2] ||
      floor_size(x[3], a.pad_left, a.pad_right, a.kernel_w, a.stride_w) != y[3]) {
    throw Unsupported(
        "ceil_mode adds a window; Arm NN's Ceiling rounding keeps windows ONNX "
        "drops" +
        Where(n));
  }
  d.m_PoolType =
      n.op == Op::MaxPool ? armnn::PoolingAlgorithm::Max : armnn::PoolingAlgorithm::Average;
  if (n.op == Op::AvgPool && a.count_include_pad)
    d.m_PaddingMethod = armnn::PaddingMethod::IgnoreValue;
  d.m_PadLeft = unsigned(a.pad_left), d.m_PadRight = unsigned(a.pad_right);
  d.m_PadTop = unsigned(a.pad_top), d.m_PadBottom = unsigned(a.pad_bottom);
  d.m_PoolHeight = unsigned(a.kernel_h), d.m_PoolWidth = unsigned(a.kernel_w);
  d.m_StrideY = unsigned(a.stride_h), d.m_StrideX = unsigned(a.stride_w);
  return Unary(net_->AddPooling2dLayer(d, n.name.c_str()), n);
}

armnn::IConnectableLayer* Builder::FullyConnected(const Node& n) {
  const Shape& x = r_.shapes.at(n.inputs[0]);
  if (x.size() != 2) throw Unsupported("matrix op on a value of rank != 2" + Where(n));
  if (!n.epilogue.empty()) throw Unsupported("Gemm with an epilogue" + Where(n));
  const GemmDims g = GetGemmDims(n, x);
  if (g.trans_a || g.alpha != 1) throw Unsupported("Gemm with transA or alpha != 1" + Where(n));
  armnn::FullyConnectedDescriptor d;
  d.m_TransposeWeightMatrix = g.trans_b;  // weights [K, N], or [N, K] transposed
  armnn::Optional<armnn::ConstTensor> bias;
  if (auto c = n.params.find("C"); n.op == Op::Gemm && c != n.params.end()) {
    const Tensor& t = c->second;
    const bool per_n = t.size() == g.n && (t.shape.size() == 1 || t.shape[0] == 1);
    if (g.beta != 1 || !(per_n || t.size() == 1)) {
      throw Unsupported("Gemm C must be a [N] or [1] bias with beta 1 for Arm NN" + Where(n));
    }
    bias = Const({g.n}, per_n ? t.data : std::vector<float>(size_t(g.n), t.data[0]));
  }
  d.m_BiasEnabled = bias.has_value();
  const Tensor& b = n.params.at("B");
  return Unary(net_->AddFullyConnectedLayer(d, Const(b.shape, b.data), bias, n.name.c_str()), n);
}

}  // namespace fusefuzz::armnn_net
