// The translation of a request's NCHW graph into an xnn_subgraph in NHWC (targets/xnnpack/
// README.md): float ops in builder.cc, the int8 mode's quantized values and ops in
// builder_int8.cc. Used only by fusefuzz-xnnpack-target.
#pragma once

#include <xnnpack.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/quant.h"
#include "targets/native_server.h"
#include "targets/xnnpack/fusion_rule.h"

namespace fusefuzz::xnnpack {

// A refusal of a parameter when a node is defined or its operator created is XNNPACK saying it
// cannot express the case (Unsupported); any other failure is an error answer.
std::string StatusName(xnn_status s);
void Check(xnn_status s, const std::string& what);

// The adapter's own rewrite in int8 mode: DequantizeLinear -> Conv [-> Relu/Relu6/Clip] ->
// QuantizeLinear becomes one quantized convolution, as TensorFlow Lite's XNNPACK delegate runs a
// QDQ model (builder_int8.cc). Withheld, the chain runs as its float ops with converts.
inline constexpr char kQdqConvRule[] = "quantized-convolution-from-qdq";

// A value XNNPACK holds as 8-bit integers: one scale and zero point (XNNPACK has no per-channel
// activations).
struct QuantValue {
  QuantType type = QuantType::kUint8;
  float scale = 1;
  int32_t zero_point = 0;
};

// A DQ -> Conv [-> act] -> Q chain that runs as one quantized convolution.
struct QdqConv {
  const Node* dq = nullptr;
  const Node* conv = nullptr;
  const Node* act = nullptr;  // Relu, Relu6, Clip or null
  const Node* q = nullptr;
};

class Builder {
 public:
  // `int8`: the int8 mode (quantized values and ops); fp32 mode declines them.
  Builder(const NativeRequest& r, bool int8);
  uint32_t num_values() const { return static_cast<uint32_t>(names_.size()); }
  const std::vector<XNode>& nodes() const { return nodes_; }
  uint32_t Id(const std::string& v);
  // The integer value behind `v`, or null for a float value.
  const QuantValue* Quantized(const std::string& v) const;
  // The QDQ chains that may run as quantized convolutions (int8 mode), in graph order.
  const std::vector<QdqConv>& chains() const { return chains_; }

  // Defines the subgraph; values in `external` (by id) get XNN_VALUE_FLAG_EXTERNAL_OUTPUT, and
  // the chains with `fuse[i]` run as one quantized convolution.
  void Define(xnn_subgraph_t sg, const std::vector<bool>& external, const std::vector<bool>& fuse);

 private:
  uint32_t Static(const Shape& dims, std::vector<float> data);
  uint32_t StaticBytes(xnn_datatype type, const Shape& dims, const void* data, size_t bytes,
                       int32_t zero_point, float scale);
  uint32_t StaticChannelwise(xnn_datatype type, const Shape& dims, const void* data, size_t bytes,
                             size_t channel_dim, std::vector<float> scales);
  void Add(Kind kind, const Node& n, std::vector<std::string> graph_inputs, bool zero_pad = false,
           const std::string& output = "");
  const Shape& ShapeOf(const std::string& v) const { return r_.shapes.at(v); }
  std::string Where(const Node& n) const { return " (node '" + n.name + "')"; }

  void DefineNode(const Node& n);
  // A fused chain's DequantizeLinear still runs when its float value is a graph output or is
  // read by anything but the convolution of a fused chain. One DQ may feed several chains: when
  // all of them fuse, nothing reads its value, xnn_subgraph_optimize clears it, and setting up
  // its convert fails the assert `output_data != NULL` (src/subgraph/convert.c).
  bool FloatValueRead(const Node& dq) const;
  void Clamp(const Node& n, float lo, float hi);
  void Conv(const Node& n);
  void PRelu(const Node& n);
  uint32_t Operand(const Node& n, const Tensor* c, int input, const Shape& out);
  void Binary(const Node& n);
  void Pad(const Node& n);
  void Pool(const Node& n);
  void FullyConnected(const Node& n);

  // builder_int8.cc
  void PlanQuantized();  // quant_ and chains_; throws Unsupported
  void FindChains();
  bool ChainExpressible(const QdqConv& c, const QuantValue& qx, const QuantValue& qy) const;
  void Convert(const Node& n);
  // A quantized convolution: input value `x` read with `qx`, weights `w` (int8 integers, per
  // tensor or per output channel scales `sw`), a float bias rounded to int32 at s_x * s_w or
  // int32 integers (`int_bias`), output `y` with `qy`, clamped to [lo, hi] (real units).
  void QuantizedConv(const Node& n, const std::string& x, const QuantValue& qx,
                     const std::vector<float>& w, const std::vector<double>& sw, const Tensor* bias,
                     bool int_bias, const std::string& y, const QuantValue& qy, float lo, float hi);
  void QLinearConv(const Node& n);
  void QLinearAdd(const Node& n);
  void Chain(const QdqConv& c);

  const NativeRequest& r_;
  const bool int8_;
  xnn_subgraph_t sg_ = nullptr;
  std::map<std::string, uint32_t> ids_;
  std::vector<std::string> names_;
  std::vector<XNode> nodes_;
  std::map<std::string, QuantValue> quant_;
  std::vector<QdqConv> chains_;
  std::map<const Node*, size_t> chain_of_;  // a chain's nodes -> its index
  std::vector<bool> fuse_;
  std::vector<std::unique_ptr<std::vector<float>>> statics_;  // outlive the runtime
  std::vector<std::unique_ptr<std::vector<char>>> bytes_;     // quantized statics
};

}  // namespace fusefuzz::xnnpack
