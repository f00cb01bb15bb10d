// The int8 mode of fusefuzz-armnn-target (targets/armnn/README.md, "armnn:int8"): which values
// Arm NN holds as QAsymmU8 / QAsymmS8 tensors, and the quantized layers for QuantizeLinear,
// DequantizeLinear, QLinearConv and QLinearAdd on CpuRef. Used only by armnn_target_main.cc.
#pragma once

#include <armnn/ArmNN.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/quant.h"

namespace fusefuzz::armnn_int8 {

// An integer-valued value: Arm NN's quantized tensors carry one scale and offset.
struct QuantValue {
  QuantType type = QuantType::kUint8;
  float scale = 1;
  int32_t zero_point = 0;
};
using QuantPlan = std::map<std::string, QuantValue>;

// The integer-valued values of `g` with their params; throws Unsupported (native_server.h) for
// what Arm NN cannot express: per-axis or int32 activations, a value read with other params than
// it was written with, a float op reading integers.
QuantPlan PlanQuantized(const Graph& g);

armnn::TensorInfo QuantInfo(const Shape& s, const QuantValue& q);

// Constant buffers the network reads until it is loaded (Arm NN copies constants at Optimize).
struct Storage {
  std::vector<std::unique_ptr<std::vector<int8_t>>> i8;
  std::vector<std::unique_ptr<std::vector<int32_t>>> i32;
};

// A QLinearConv as a quantized Convolution2d / DepthwiseConvolution2d (QSymmS8 weights per tensor
// or per output channel, Signed32 bias at s_x * s_w) followed, for its Relu/Relu6/Clip, by an
// activation layer on the quantized output (exact: Q is monotone and Q(0) is the zero point).
// Returns {first layer (input slot 0 to connect), last layer (its output is the node's)}.
std::pair<armnn::IConnectableLayer*, armnn::IConnectableLayer*> AddQLinearConv(
    armnn::INetwork* net, const Node& n, const Shape& x, const Shape& y, const QuantPlan& plan,
    Storage* keep);

// A QLinearAdd as an Addition of quantized tensors (output at y), then a ReLu for "relu".
std::pair<armnn::IConnectableLayer*, armnn::IConnectableLayer*> AddQLinearAdd(
    armnn::INetwork* net, const Node& n, const Shape& y, const QuantPlan& plan);

// The bytes of an 8-bit quantized tensor (in a float buffer of at least as many bytes) from floats
// holding its integers (a non-integer or out-of-range value: an error naming input `v`), and back.
std::vector<float> Packed(const Tensor& t, const QuantValue& q, const std::string& v);
void Unpack(const std::vector<float>& buf, const QuantValue& q, Tensor* t);

}  // namespace fusefuzz::armnn_int8
