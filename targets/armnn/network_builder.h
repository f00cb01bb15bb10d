// The translation of fusefuzz-armnn-target (targets/armnn/README.md, "Translation"): a request's
// graph as an armnn::INetwork in NCHW, one layer per node (quantized layers from
// quant_layers.h), every output's TensorInfo from fusefuzz's shape inference, and a Reshape
// barrier before each convolution whose FoldPadIntoConvolution2d is withheld. What Arm NN 20.08
// cannot express throws Unsupported (native_server.h) with the node. Used by
// armnn_target_main.cc, which optimizes, loads and runs the network.
#pragma once

#include <armnn/ArmNN.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "targets/armnn/quant_layers.h"
#include "targets/native_server.h"

namespace fusefuzz::armnn_net {

// A float32 tensor info of shape `s`.
armnn::TensorInfo Info(const Shape& s);

class Builder {
 public:
  // `int8`: the armnn:int8 mode (quantized values and layers); the float modes decline them.
  Builder(const NativeRequest& r, armnn::INetwork* net, bool int8);
  const armnn_int8::QuantPlan& plan() const;
  // A value's tensor info: float32, or its quantized type with its one scale and offset.
  armnn::TensorInfo InfoOf(const std::string& v) const;
  // The (Pad, Conv) pairs FoldPadIntoConvolution2d may fold, in graph order.
  std::vector<std::pair<std::string, std::string>> PadConvPairs() const;
  // Adds the network's layers; the convolutions in `barrier_convs` get a Reshape barrier.
  void Build(const std::set<std::string>& barrier_convs);
  // Values no node reads that are not graph outputs (bound to scratch output layers).
  std::vector<std::string> DeadValues() const;

 private:
  armnn::IOutputSlot& Slot(const std::string& v);
  std::string Where(const Node& n) const;
  armnn::ConstTensor Const(const Shape& s, const std::vector<float>& d);
  armnn::IOutputSlot& ConstLayer(const Tensor& t, size_t rank, const std::string& name);
  armnn::IConnectableLayer* Unary(armnn::IConnectableLayer* l, const Node& n);
  armnn::IConnectableLayer* Act(const Node& n, armnn::ActivationFunction f, float a = 0,
                                float b = 0);
  armnn::IConnectableLayer* Layer(const Node& n);
  armnn::IConnectableLayer* Quantized(const Node& n);
  armnn::IConnectableLayer* Conv(const Node& n);
  armnn::IConnectableLayer* Binary(const Node& n);
  armnn::IConnectableLayer* Pool(const Node& n);
  armnn::IConnectableLayer* FullyConnected(const Node& n);

  const NativeRequest& r_;
  armnn::INetwork* net_;
  std::set<std::string> barriers_;
  std::map<std::string, armnn::IOutputSlot*> out_;
  std::vector<std::unique_ptr<std::vector<float>>> data_;
  armnn_int8::QuantPlan plan_;
  armnn_int8::Storage keep_;
};

}  // namespace fusefuzz::armnn_net
